//! From a real crash to an annotated source, end to end: runs
//! `examples/figure1/run.sh` (the PLDI 2017 Figure 1 program compiled with
//! clang-14, crashed, its stdout kept as the log and gdb's backtrace taken)
//! and checks what postmortem says about it in every output format.
//!
//! Needs clang-14 and gdb: without them the test fails, it does not skip.
//! Lines are found by the comments of `figure1.c` (`/* N: ...`, `/* B */`,
//! ...), so the source can move.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_postmortem")
}

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/figure1")
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Fails (never skips) when a tool the example needs is missing.
fn require(tool: &str) {
    let ok = Command::new(tool)
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        ok,
        "{tool} is required by the end-to-end tests but cannot be run (install it; see .ci/run)"
    );
}

/// The directory `run.sh` writes its results to.
fn results() -> PathBuf {
    std::env::temp_dir().join(format!("pm-e2e-figure1-{}", std::process::id()))
}

/// Runs the example: compile, crash, analyse.
fn run_example() {
    require("clang-14");
    require("gdb");
    let dir = results();
    let _ = std::fs::remove_dir_all(&dir);
    let o = Command::new("bash")
        .arg(example().join("run.sh"))
        .env("POSTMORTEM", bin())
        .env("OUT", &dir)
        .output()
        .expect("run examples/figure1/run.sh");
    assert!(
        o.status.success(),
        "examples/figure1/run.sh failed: {}",
        text(&o)
    );
}

/// One run of the example, then every check on its results (they stay in
/// `$TMPDIR/pm-e2e-figure1-PID` when a check fails).
#[test]
fn figure1_from_a_real_crash_to_an_annotated_source() {
    run_example();
    the_crash_run_gives_a_gdb_backtrace_and_an_ambiguous_log();
    the_backtrace_and_the_log_label_figure1();
    fsa_is_strictly_more_precise_than_utl_here();
    text_and_annotate_outputs();
    lcov_has_da_lines_for_figure1();
    html_report_links_the_file_page();
    std::fs::remove_dir_all(results()).unwrap();
}

fn read(name: &str) -> String {
    let p = results().join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn json(name: &str) -> Value {
    serde_json::from_str(&read(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The line of `figure1.c` holding `marker` (exactly one).
fn line_of(marker: &str) -> u64 {
    let src = std::fs::read_to_string(example().join("figure1.c")).unwrap();
    let hits: Vec<u64> = src
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(marker))
        .map(|(i, _)| i as u64 + 1)
        .collect();
    assert_eq!(
        hits.len(),
        1,
        "marker {marker:?} must be on exactly one line of figure1.c: {hits:?}"
    );
    hits[0]
}

/// The line labels of `figure1.c` in an analysis: the only file.
fn labels(v: &Value) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
    let files = v["lines"].as_object().expect("lines");
    assert_eq!(files.len(), 1, "{:?}", files.keys().collect::<Vec<_>>());
    let (name, f) = files.iter().next().unwrap();
    assert!(name.ends_with("/figure1.c"), "{name}");
    let get = |k: &str| -> Vec<u64> {
        f[k].as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect()
    };
    (get("yes"), get("no"), get("maybe"))
}

fn node_ids(v: &Value, label: &str) -> Vec<String> {
    v["nodes"][label]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

/// Figure 1's statements, by their comments.
struct Lines {
    bar: u64,
    crash: u64,
    bar_return: u64,
    foo: u64,
    early: u64,
    call_bar: u64,
    main: u64,
    b: u64,
    c: u64,
    x: u64,
    call_foo: u64,
    e: u64,
}

fn lines() -> Lines {
    Lines {
        bar: line_of("static int bar("),
        crash: line_of("/* N:"),
        bar_return: line_of("return first + total;"),
        foo: line_of("static int foo("),
        early: line_of("puts(\"too many items\")"),
        call_bar: line_of("/* J */"),
        main: line_of("int main("),
        b: line_of("/* B */"),
        c: line_of("/* C */"),
        x: line_of("/* X:"),
        call_foo: line_of("/* D */"),
        e: line_of("/* E */"),
    }
}

fn the_crash_run_gives_a_gdb_backtrace_and_an_ambiguous_log() {
    let bt = read("bt.txt");
    assert!(
        bt.contains("Program received signal SIGSEGV"),
        "not a gdb report of the crash:\n{bt}"
    );
    let frames: Vec<&str> = bt.lines().filter(|l| l.starts_with('#')).collect();
    let l = lines();
    assert_eq!(frames.len(), 3, "{bt}");
    assert!(
        frames[0].contains(" bar (") && frames[0].ends_with(&format!("figure1.c:{}", l.crash)),
        "{bt}"
    );
    assert!(
        frames[1].contains(" foo (") && frames[1].ends_with(&format!("figure1.c:{}", l.call_bar)),
        "{bt}"
    );
    assert!(
        frames[2].contains(" main (") && frames[2].ends_with(&format!("figure1.c:{}", l.call_foo)),
        "{bt}"
    );
    assert_eq!(read("out.log"), "Processed 5 items\n");
}

fn the_backtrace_and_the_log_label_figure1() {
    let l = lines();
    for name in ["analysis-fsa.json", "analysis-utl.json"] {
        let v = json(name);
        let (yes, no, maybe) = labels(&v);
        // The stack: every frame's function ran, and the calls between them.
        for (what, line) in [
            ("crash line in bar", l.crash),
            ("bar's entry", l.bar),
            ("foo's entry", l.foo),
            ("main's entry", l.main),
            ("foo's call of bar", l.call_bar),
            ("main's call of foo", l.call_foo),
        ] {
            assert!(
                yes.contains(&line),
                "{name}: {what} (line {line}) is not Yes: yes {yes:?}"
            );
        }
        let yes_nodes = node_ids(&v, "yes");
        for entry in ["main:entry", "foo:entry", "bar:entry"] {
            assert!(
                yes_nodes.contains(&entry.to_string()),
                "{name}: {entry} not Yes: {yes_nodes:?}"
            );
        }
        assert!(
            yes_nodes
                .iter()
                .any(|n| n.starts_with(&format!("bar:{}:", l.crash))),
            "{name}: no crash node on line {} is Yes: {yes_nodes:?}",
            l.crash
        );
        // Ruled out by the stack: foo's early return (foo went on to call
        // bar), bar returning, and statement E after the call of foo.
        for (what, line) in [
            ("foo's early return", l.early),
            ("bar's return", l.bar_return),
            ("E", l.e),
        ] {
            assert!(
                no.contains(&line),
                "{name}: {what} (line {line}) is not No: no {no:?}"
            );
        }
        // The log line fits both printf calls: which one ran is unknown.
        assert!(
            maybe.contains(&l.b) && maybe.contains(&l.c),
            "{name}: B and C must be Maybe: {maybe:?}"
        );
    }

    // "B or C ran" rules out the silent third branch X, but only the FSA
    // solver can say so; UTL drops the disjunction and lists it.
    let fsa = json("analysis-fsa.json");
    let utl = json("analysis-utl.json");
    assert!(
        labels(&fsa).1.contains(&l.x),
        "fsa: X (line {}) is not No",
        l.x
    );
    assert!(
        labels(&utl).2.contains(&l.x),
        "utl: X (line {}) is not Maybe",
        l.x
    );
    assert_eq!(
        fsa["weakened"],
        serde_json::json!([]),
        "fsa weakened something"
    );
    let weakened = utl["weakened"].as_array().unwrap();
    assert_eq!(weakened.len(), 1, "{weakened:?}");
    assert_eq!(weakened[0]["constraint"], "obsYes[0]");
    assert!(
        weakened[0]["how"].as_str().unwrap().contains("disjunction"),
        "{weakened:?}"
    );
}

fn fsa_is_strictly_more_precise_than_utl_here() {
    // run.sh ran `--compare fsa,utl --expect gt` (exit 0, or it fails).
    let cmp = read("compare.txt");
    assert!(cmp.lines().any(|l| l == "ok: fsa gt utl"), "{cmp}");
    // And not the other way round: utl is not at least as precise.
    let o = Command::new(bin())
        .current_dir(results())
        .args([
            "analyze",
            "--cfg",
            "figure1.bc",
            "--backtrace",
            "bt.txt",
            "--log",
            "out.log",
        ])
        .args(["--compare", "utl,fsa", "--expect", "gt"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("violated: utl gt fsa"),
        "{}",
        text(&o)
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(&format!("main:{}:", lines().x)),
        "{}",
        text(&o)
    );
}

fn text_and_annotate_outputs() {
    let l = lines();
    let txt = read("analysis.txt");
    assert!(txt.starts_with("postmortem: fsa solver"), "{txt}");
    assert!(txt.contains("report: bt.txt + out.log"), "{txt}");
    assert!(txt.lines().any(|x| x.ends_with("/figure1.c")), "{txt}");

    let ann = read("annotate.txt");
    // With functions on the stack, a Local column comes second.
    let col = if ann.contains(":Local:") { 2 } else { 1 };
    let mark = |line: u64| -> String {
        let row = ann
            .lines()
            .find(|r| {
                r.split(':')
                    .nth(col)
                    .map(|n| n.trim() == line.to_string())
                    .unwrap_or(false)
            })
            .unwrap_or_else(|| panic!("no annotated line {line}:\n{ann}"));
        row.split(':').next().unwrap().trim().to_string()
    };
    assert_eq!(mark(l.crash), "Yes");
    assert_eq!(mark(l.main), "Yes");
    assert_eq!(mark(l.b), "Maybe");
    assert_eq!(mark(l.c), "Maybe");
    assert_eq!(mark(l.x), "No");
    assert_eq!(mark(l.e), "No");
    assert_eq!(mark(l.early), "No");
    // Every source line is there, comments included.
    let src = std::fs::read_to_string(example().join("figure1.c")).unwrap();
    assert!(ann.contains(src.lines().next().unwrap()), "{ann}");
}

fn lcov_has_da_lines_for_figure1() {
    let l = lines();
    let lcov = read("figure1.lcov");
    let sf: Vec<&str> = lcov.lines().filter(|x| x.starts_with("SF:")).collect();
    assert_eq!(sf.len(), 1, "{lcov}");
    assert!(sf[0].ends_with("/figure1.c"), "{lcov}");
    let da = |line: u64, hits: u32| format!("DA:{line},{hits}");
    let has = |s: String| lcov.lines().any(|x| x == s);
    for line in [l.crash, l.bar, l.foo, l.main, l.call_bar, l.call_foo] {
        assert!(has(da(line, 1)), "{} missing:\n{lcov}", da(line, 1));
    }
    for line in [l.early, l.e, l.x] {
        assert!(has(da(line, 0)), "{} missing:\n{lcov}", da(line, 0));
    }
    assert!(lcov.lines().any(|x| x == "end_of_record"), "{lcov}");
}

fn html_report_links_the_file_page() {
    let dir = results().join("report");
    let index = std::fs::read_to_string(dir.join("index.html")).expect("report/index.html");
    assert!(index.contains("figure1.c"), "{index}");
    let pages: Vec<String> = index
        .split("href=\"")
        .skip(1)
        .map(|s| s.split(['"', '#']).next().unwrap().to_string())
        .filter(|h| h.ends_with(".html") && !h.contains("://"))
        .collect();
    assert!(!pages.is_empty(), "index.html links no file page:\n{index}");
    for p in &pages {
        let page =
            std::fs::read_to_string(dir.join(p)).unwrap_or_else(|e| panic!("linked page {p}: {e}"));
        assert!(page.contains("figure1.c"), "{p}");
        assert!(
            page.contains("Processed %d items"),
            "{p} does not show the source"
        );
    }
}
