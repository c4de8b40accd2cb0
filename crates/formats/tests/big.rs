//! Scale check (ignored by default): a synthetic csi-cc GraphML of about
//! 700k nodes / 150 MB must parse in about a second in release mode and
//! stay well under 1 GB. Run with
//!
//! ```text
//! cargo test --release -p postmortem-formats --test big -- --ignored --nocapture
//! ```

use postmortem_formats::read_graphml;
use std::fmt::Write;
use std::time::Instant;

/// A csi-cc-like document: `funcs` functions of `per` nodes each, one call
/// per 10 statements, laid out like the artifact's files.
fn synth(funcs: usize, per: usize) -> String {
    let mut s = String::with_capacity(funcs * per * 230);
    s.push_str(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="label"       for="node" attr.name="label"       attr.type="string"/>
  <key id="kind"        for="node" attr.name="kind"        attr.type="string"> <default>declaration</default> </key>
  <key id="basic-block" for="node" attr.name="basic-block" attr.type="string"/>
  <key id="file"        for="node" attr.name="file"        attr.type="string"/>
  <key id="procedure"   for="node" attr.name="procedure"   attr.type="string"/>
  <key id="lines"       for="node" attr.name="lines"       attr.type="string"/>
  <key id="csi-label"   for="node" attr.name="csi-label"   attr.type="string"/>
  <key id="type"        for="edge" attr.name="type"        attr.type="string"> <default>flow</default> </key>
  <key id="scope"       for="edge" attr.name="scope"       attr.type="string"> <default>intraprocedural</default> </key>
  <graph id="CFG" edgedefault="directed">
"#,
    );
    for f in 1..=funcs {
        let name = if f == 1 {
            "main".to_string()
        } else {
            format!("func_{f}")
        };
        let _ = write!(
            s,
            r#"    <!-- cfg -{f} {name} -->
    <node id="n:-{f}:1">
      <data key="label">entry: {name}</data>
      <data key="basic-block">function_entry</data>
      <data key="kind">entry</data>
      <data key="lines">( 0 )</data>
      <data key="file">/src/project/module_{m}/file_{f}.c</data>
      <data key="procedure">{name}</data>
    </node>
    <node id="n:-{f}:2">
      <data key="label">exit: {name}</data>
      <data key="basic-block">function_exit</data>
      <data key="kind">exit</data>
      <data key="lines">( 0 )</data>
    </node>
    <edge source="n:-{f}:1" target="n:-{f}:3"/>
"#,
            m = f % 17
        );
        for i in 3..per {
            let call = i % 10 == 5;
            let kind = if call { "call-site" } else { "expression" };
            let _ = write!(
                s,
                r#"    <node id="n:-{f}:{i}">
      <data key="label">  %call{i}</data>
      <data key="basic-block">for.body{b}</data>
      <data key="kind">{kind}</data>
      <data key="lines">({l})</data>
      <data key="csi-label">{i}</data>
    </node>
"#,
                b = i / 8,
                l = 10 + i,
            );
            let next = if i + 1 < per {
                format!("n:-{f}:{}", i + 1)
            } else {
                format!("n:-{f}:2")
            };
            let _ = writeln!(s, r#"    <edge source="n:-{f}:{i}" target="{next}"/>"#);
            if call {
                let callee = 2 + (f * 7 + i) % (funcs - 1);
                let _ = write!(
                    s,
                    r#"    <edge source="n:-{f}:{i}" target="n:-{callee}:1">
      <data key="type">control</data>
      <data key="scope">interprocedural</data>
    </edge>
"#
                );
            }
        }
    }
    s.push_str("  </graph>\n</graphml>\n");
    s
}

/// Nanoseconds this thread has run on a CPU (Linux), to time the parse
/// fairly on a busy machine.
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn current_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
#[ignore = "scale check: run in release with --ignored"]
fn seven_hundred_thousand_nodes() {
    let doc = synth(7000, 100);
    let mb = doc.len() as f64 / 1e6;
    let before = current_rss_kb();
    // Reset the peak so that it measures the parse (Linux >= 4.0).
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let t = Instant::now();
    let cpu0 = thread_cpu_ns();
    let g = read_graphml(doc.as_bytes(), "big.graphml").unwrap();
    let dt = t.elapsed();
    let cpu = cpu0
        .zip(thread_cpu_ns())
        .map(|(a, b)| std::time::Duration::from_nanos(b - a));
    let peak = peak_rss_kb();
    eprintln!(
        "{mb:.1} MB, {} nodes, {} edges: parsed in {dt:.2?} (on CPU {cpu:.2?}, {:.0} MB/s); graph heap {:.1} MB; RSS before {:?} kB, peak {:?} kB",
        g.num_nodes(),
        g.num_edges(),
        mb / dt.as_secs_f64(),
        g.heap_bytes() as f64 / 1e6,
        before,
        peak
    );
    assert_eq!(g.num_nodes(), 7000 * 99);
    if let (Some(before), Some(peak)) = (before, peak) {
        assert!(
            peak.saturating_sub(before) < 1_000_000,
            "parse peak {} kB above the input",
            peak - before
        );
    }
    if !cfg!(debug_assertions) {
        assert!(dt.as_secs_f64() < 5.0, "far too slow: {dt:?}");
    }
}

/// Writes the synthetic document (of `$POSTMORTEM_BIG_FUNCS` functions of
/// 100 nodes, default 7000) to `$POSTMORTEM_BIG_GRAPHML`, for timing the
/// reader on its own with the `parse_graphml` example.
#[test]
#[ignore = "writes a 200 MB file"]
fn write_big_graphml() {
    if let Some(path) = std::env::var_os("POSTMORTEM_BIG_GRAPHML") {
        let funcs = std::env::var("POSTMORTEM_BIG_FUNCS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(7000);
        std::fs::write(path, synth(funcs, 100)).unwrap();
    }
}
