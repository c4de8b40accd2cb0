//! Writers for analysis results: a human-readable text summary and a JSON
//! document for tools.

use postmortem_core::line_notes::{LineNotes, Moved};
use postmortem_core::summary::{by_line, Counts, LineIndex};
use postmortem_core::{Icfg, Label, NodeId, Weakening};
use serde_json::{json, Value};
use std::io::{self, Write};

/// Wall-clock timings of one analysis, in milliseconds.
#[derive(Copy, Clone, Debug, Default)]
pub struct Timings {
    /// Reading the graph.
    pub parse_graph_ms: f64,
    /// Reading the report.
    pub parse_report_ms: f64,
    /// Bulk recovery.
    pub recover_ms: f64,
}

/// Everything an analysis output shows.
pub struct Analysis<'a> {
    /// The graph.
    pub graph: &'a Icfg,
    /// One label per node.
    pub labels: &'a [Label],
    /// Constraints the solver weakened.
    pub weakened: &'a [Weakening],
    /// Nodes left Maybe because a work limit was hit.
    pub undecided: &'a [NodeId],
    /// The solver's name.
    pub solver: &'a str,
    /// The solver's counters.
    pub solver_stats: &'a [(&'static str, u64)],
    /// Where the graph came from.
    pub cfg_path: &'a str,
    /// Where the report came from.
    pub report_path: &'a str,
    /// Whether obsYes/obsNo were ignored.
    pub stack_only: bool,
    /// Timings.
    pub timings: Timings,
    /// Variables' values read from a core and what became of each.
    pub values: &'a [crate::vars::ValueUse],
    /// What a core's stack residue gave (None: no core, or `--no-residue`).
    pub residue: Option<&'a crate::failure::ResidueInfo>,
    /// Local labels of the frames on the stack.
    pub frames: &'a [postmortem_core::local::FrameLabels],
    /// The report's number of stack frames (`frames` are numbered from
    /// the outermost; the JSON also gives each one's number from the
    /// crash, as debuggers number them).
    pub stack_len: usize,
    /// The nodes Local labels proved ran, fed back to the solver (None:
    /// not tried).
    pub lift: Option<&'a postmortem_core::staged::Lift>,
    /// Every log matched against the graph's logging calls.
    pub logs: &'a [crate::logs::LogMatch],
    /// What killed the process, when a core or minidump says.
    pub fault: Option<&'a crate::image::fault::Fault>,
    /// What to say beside lines the optimiser moved or the binary has no
    /// code on ([`postmortem_core::line_notes`]).
    pub line_notes: Option<&'a LineNotes>,
    /// How many more nodes were decided with the logs than without them
    /// (None: no log, or not measured).
    pub log_decided: Option<usize>,
    /// The report analysed: where its stack has gaps (see
    /// [`stack_gaps`]).
    pub report: Option<&'a postmortem_core::Report>,
}

/// A place in the crash stack where calls may be missing (the report's
/// `stack_gaps`): unreported activations may be pending between the
/// function `outer` entered and the function `inner` whose call (or the
/// crash) comes next.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct StackGap {
    /// The position in the report's stack (0: before its outermost
    /// frame; its length: before the crash).
    pub position: usize,
    /// The function entered before the gap (`None`: the program's start;
    /// ``a callee of `f` `` when the call could enter many).
    pub outer: Option<String>,
    /// The function after it (`None`: unknown).
    pub inner: Option<String>,
    /// Only sibling calls (calls compiled as jumps, which took their
    /// caller's frame off the stack) can be missing there.
    pub sibling_calls_only: bool,
}

impl std::fmt::Display for StackGap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = |n: &Option<String>, none: &str| match n {
            Some(x) if x.starts_with("a callee of ") => x.clone(),
            Some(x) => format!("`{x}`"),
            None => none.to_string(),
        };
        write!(
            f,
            "between {} and {}{}",
            name(&self.outer, "the start"),
            name(&self.inner, "the crash"),
            if self.sibling_calls_only {
                " (sibling calls)"
            } else {
                ""
            }
        )
    }
}

/// The gaps of `report`'s stack, outermost first.
pub fn stack_gaps(g: &Icfg, report: &postmortem_core::Report) -> Vec<StackGap> {
    let names = |s: &postmortem_core::NodeSet| -> Vec<&str> {
        let mut names: Vec<&str> = s
            .nodes()
            .iter()
            .map(|&n| &*g.function(g.func_of(n)).name)
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    };
    let func = |s: &postmortem_core::NodeSet| -> Option<String> {
        let n = names(s);
        (!n.is_empty()).then(|| n.join("|"))
    };
    let st = &report.stack;
    // The function a frame entered; when its call may enter many (an
    // indirect call, a frame widened to its caller), its caller's.
    let entered = |k: usize| -> Option<String> {
        let n = names(&st[k].entry);
        if n.len() == 1 {
            Some(n.join("|"))
        } else {
            func(&st[k].call).map(|c| format!("a callee of `{c}`"))
        }
    };
    report
        .stack_gaps
        .iter()
        .map(|&i| StackGap {
            position: i,
            outer: i.checked_sub(1).and_then(entered),
            inner: match st.get(i) {
                Some(fr) => func(&fr.call),
                None => report.crash.as_ref().and_then(func),
            },
            sibling_calls_only: report.sibling_gaps.binary_search(&i).is_ok(),
        })
        .collect()
}

/// Formats sorted line numbers as compact ranges: `3-5, 9, 12-13`.
pub fn ranges(lines: impl IntoIterator<Item = u32>) -> String {
    let mut out = String::new();
    let mut run: Option<(u32, u32)> = None;
    let flush = |out: &mut String, (a, b): (u32, u32)| {
        if !out.is_empty() {
            out.push_str(", ");
        }
        if a == b {
            out.push_str(&a.to_string());
        } else {
            out.push_str(&format!("{a}-{b}"));
        }
    };
    for l in lines {
        run = match run {
            Some((a, b)) if l == b + 1 => Some((a, l)),
            Some(r) => {
                flush(&mut out, r);
                Some((l, l))
            }
            None => Some((l, l)),
        };
    }
    if let Some(r) = run {
        flush(&mut out, r);
    }
    out
}

fn pct(part: usize, total: usize) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * part as f64 / total as f64
    }
}

/// Writes the text summary: counts and percentages, then each file's Yes,
/// No and Maybe lines.
pub fn write_text(out: &mut dyn Write, a: &Analysis<'_>) -> io::Result<()> {
    let c = Counts::of(a.labels);
    let t = c.total();
    writeln!(
        out,
        "postmortem: {} solver{}",
        a.solver,
        if a.stack_only { ", stack only" } else { "" }
    )?;
    writeln!(out, "  graph:  {}", a.cfg_path)?;
    writeln!(out, "  report: {}", a.report_path)?;
    if let Some(f) = a.fault {
        writeln!(out, "  crash:  {}", f.line())?;
        for c in &f.causes {
            writeln!(out, "  cause:  {}", c.line())?;
        }
    }
    if let Some(r) = a.report {
        let gaps = stack_gaps(a.graph, r);
        if !gaps.is_empty() {
            let shown: Vec<String> = gaps.iter().take(4).map(|x| x.to_string()).collect();
            writeln!(
                out,
                "  gaps:   calls may be missing from the stack at {} place{}: {}{}",
                gaps.len(),
                if gaps.len() == 1 { "" } else { "s" },
                shown.join("; "),
                if gaps.len() > 4 { "; ..." } else { "" }
            )?;
        }
    }
    for m in a.logs {
        write!(out, "  log:    {}: {}", m.stream, m.summary())?;
        match a.log_decided {
            Some(n) if a.logs.len() == 1 => writeln!(out, "; it decided {n} nodes")?,
            Some(n) => writeln!(out, "; the logs decided {n} nodes")?,
            None => writeln!(out)?,
        }
    }
    writeln!(out)?;
    writeln!(out, "{t} nodes")?;
    writeln!(
        out,
        "  yes   {:>8}  {:5.1}%  ran on every execution consistent with the report",
        c.yes,
        pct(c.yes, t)
    )?;
    writeln!(
        out,
        "  no    {:>8}  {:5.1}%  ran on none",
        c.no,
        pct(c.no, t)
    )?;
    writeln!(
        out,
        "  maybe {:>8}  {:5.1}%  ran on some",
        c.maybe,
        pct(c.maybe, t)
    )?;
    if !a.undecided.is_empty() {
        writeln!(
            out,
            "  ({} of the maybe nodes were left undecided when a work limit was reached)",
            a.undecided.len()
        )?;
    }
    if !a.weakened.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "weakened constraints ({}), answers stay sound but may be less precise:",
            a.weakened.len()
        )?;
        for w in a.weakened {
            writeln!(out, "  {}: {}", w.origin, w.how)?;
        }
    }
    for f in by_line(a.graph, a.labels) {
        writeln!(out)?;
        writeln!(out, "{}", a.graph.file_path(f.file))?;
        for (name, l) in [
            ("yes", Label::Yes),
            ("no", Label::No),
            ("maybe", Label::Maybe),
        ] {
            let r = ranges(f.with(l));
            if !r.is_empty() {
                writeln!(out, "  {name:<5} {r}")?;
            }
        }
        if let Some(notes) = a.line_notes {
            let (no_code, moved) = file_notes(notes, f.file);
            if !no_code.is_empty() {
                writeln!(out, "  no code in the binary:  {}", ranges(no_code))?;
            }
            if !moved.is_empty() {
                let m: Vec<String> = moved
                    .iter()
                    .map(|&(l, m)| match m.to {
                        Some(to) => format!("{l} (to line {to})"),
                        None => format!("{l} (after line {})", m.after),
                    })
                    .collect();
                writeln!(out, "  moved by the optimiser: {}", m.join(", "))?;
            }
        }
    }
    writeln!(out)?;
    writeln!(
        out,
        "time: graph {:.1} ms, report {:.1} ms, recovery {:.1} ms",
        a.timings.parse_graph_ms, a.timings.parse_report_ms, a.timings.recover_ms
    )?;
    Ok(())
}

/// The JSON document: `nodes` (input ids per label; every node in exactly
/// one list), `lines` per file, `counts`, `weakened`, `undecided`,
/// `values` (every variable read from a core: where, its value, the
/// stores it kept and ruled out, or why it was not used), `frames` (each
/// activation on the stack, outermost first: `frame` 0 is the outermost,
/// `from_crash` 0 the crash's, as gdb numbers frames where the report
/// kept every one (no gap, inlined or library frame); with its Local labels: what
/// ran in that activation before its pending call or the crash, see
/// `postmortem_core::local`), `lift` (the nodes those Local labels proved
/// ran, fed back to the solver: `postmortem_core::staged::recover_lifted`)
/// and `timings_ms`.
pub fn to_json(a: &Analysis<'_>) -> Value {
    to_json_with(a, true, None)
}

/// [`to_json`], with the `nodes` lists (of the whole graph and of each
/// frame) only if `nodes`: without them, the document [`to_json`] gives
/// with those keys removed, never built (on a large program they are most
/// of its size and of the time it takes to build). `lines`: the graph's
/// line index, when kept (else it is derived here).
pub fn to_json_with(a: &Analysis<'_>, nodes: bool, lines: Option<&LineIndex>) -> Value {
    let g = a.graph;
    let ids = |l: Label| -> Vec<&str> {
        g.nodes()
            .filter(|n| a.labels[n.index()] == l)
            .map(|n| g.ext_id(n))
            .collect()
    };
    let c = Counts::of(a.labels);
    let files = match lines {
        Some(index) => index.by_line(a.labels),
        None => by_line(g, a.labels),
    };
    let mut lines = serde_json::Map::new();
    for f in files {
        let mut v = json!({
            "yes": f.with(Label::Yes).collect::<Vec<_>>(),
            "no": f.with(Label::No).collect::<Vec<_>>(),
            "maybe": f.with(Label::Maybe).collect::<Vec<_>>(),
        });
        if let Some(notes) = a.line_notes {
            let (no_code, moved) = file_notes(notes, f.file);
            if !no_code.is_empty() {
                v["no_code"] = json!(no_code);
            }
            if !moved.is_empty() {
                v["moved"] = moved
                    .iter()
                    .map(|&(l, m)| json!({ "line": l, "to": m.to, "after": m.after }))
                    .collect();
            }
        }
        lines.insert(g.file_path(f.file).to_string(), v);
    }
    let mut v = json!({
        "solver": a.solver,
        "cfg": a.cfg_path,
        "report": a.report_path,
        "stack_only": a.stack_only,
        "counts": { "nodes": c.total(), "yes": c.yes, "no": c.no, "maybe": c.maybe },
        "lines": lines,
        "weakened": a.weakened.iter().map(|w| json!({ "constraint": w.origin.to_string(), "how": w.how })).collect::<Vec<_>>(),
        "solver_stats": a.solver_stats.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
        "undecided": a.undecided.iter().map(|&n| g.ext_id(n)).collect::<Vec<_>>(),
        "values": a.values,
        "residue": a.residue,
        "frames": a.frames.iter().map(|f| frame_json(g, f, a.stack_len, nodes)).collect::<Vec<_>>(),
        "lift": a.lift.map(|l| lift_json(g, l)),
        "fault": a.fault,
        "logs": a.logs.iter().map(|m| json!({
            "stream": m.stream.to_string(),
            "summary": m.summary(),
        })).collect::<Vec<_>>(),
        "logs_decided": a.log_decided,
        "stack_gaps": a.report.map(|r| stack_gaps(g, r)).unwrap_or_default(),
        "timings_ms": {
            "parse_graph": a.timings.parse_graph_ms,
            "parse_report": a.timings.parse_report_ms,
            "recover": a.timings.recover_ms,
        },
    });
    if nodes {
        v["nodes"] =
            json!({ "yes": ids(Label::Yes), "no": ids(Label::No), "maybe": ids(Label::Maybe) });
    }
    v
}

/// The lines of `file` with no code in the binary, and those the
/// optimiser moved, in line order.
fn file_notes(notes: &LineNotes, file: postmortem_core::FileId) -> (Vec<u32>, Vec<(u32, Moved)>) {
    let no_code = notes
        .of_file(file)
        .filter(|(_, n)| n.no_code)
        .map(|(l, _)| l)
        .collect();
    let moved = notes
        .of_file(file)
        .filter_map(|(l, n)| Some((l, n.moved?)))
        .collect();
    (no_code, moved)
}

/// The Local lift: every node fed back as "ran" (the frame whose Local
/// labels proved it, its input id and lines), how many labels it decided,
/// and why it was dropped, if it was.
fn lift_json(g: &Icfg, l: &postmortem_core::staged::Lift) -> Value {
    json!({
        "nodes": l.nodes.iter().map(|&(frame, n)| json!({
            "frame": frame,
            "node": g.ext_id(n),
            "lines": g.lines(n),
        })).collect::<Vec<_>>(),
        "gained": l.gained,
        "dropped": l.dropped,
    })
}

/// One frame's Local labels: its function, where it stopped, and its
/// function's lines and nodes per Local label (a line is Yes if a node on
/// it is, No if all are, as for the global lines).
fn frame_json(
    g: &Icfg,
    f: &postmortem_core::local::FrameLabels,
    stack_len: usize,
    with_nodes: bool,
) -> Value {
    let mut by_line: std::collections::BTreeMap<u32, Vec<Label>> = Default::default();
    for &(n, l) in &f.labels {
        for &line in g.lines(n) {
            by_line.entry(line).or_default().push(l);
        }
    }
    let line_label = |ls: &[Label]| {
        if ls.contains(&Label::Yes) {
            Label::Yes
        } else if ls.iter().all(|&l| l == Label::No) {
            Label::No
        } else {
            Label::Maybe
        }
    };
    let lines = |want: Label| -> Vec<u32> {
        by_line
            .iter()
            .filter(|(_, ls)| line_label(ls) == want)
            .map(|(&line, _)| line)
            .collect()
    };
    let nodes = |want: Label| -> Vec<&str> {
        f.labels
            .iter()
            .filter(|&&(_, l)| l == want)
            .map(|&(n, _)| g.ext_id(n))
            .collect()
    };
    let func = g.function(f.function);
    let mut v = json!({
        "frame": f.frame,
        "from_crash": stack_len.saturating_sub(f.frame),
        "function": &*func.name,
        "file": func.file.map(|x| g.file_path(x)),
        "stop": f.stop.iter().flat_map(|&n| g.lines(n).iter().copied()).collect::<Vec<_>>(),
        "lines": { "yes": lines(Label::Yes), "no": lines(Label::No), "maybe": lines(Label::Maybe) },
    });
    if with_nodes {
        v["nodes"] = json!({ "yes": nodes(Label::Yes), "no": nodes(Label::No), "maybe": nodes(Label::Maybe) });
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_ranges_are_compact() {
        assert_eq!(ranges([1, 2, 3, 5, 7, 8]), "1-3, 5, 7-8");
        assert_eq!(ranges([4]), "4");
        assert_eq!(ranges(std::iter::empty()), "");
    }
}

/// A witness path for humans: one event per function entry, return and
/// source line (consecutive nodes on the same line are one event), with
/// repeated runs of events (loop iterations) folded as `[...] x N`.
pub fn witness_lines(g: &Icfg, path: &[NodeId]) -> Vec<String> {
    use postmortem_core::{EdgeKind, NodeKind};
    let mut events: Vec<String> = Vec::new();
    let mut prev: Option<NodeId> = None;
    for &n in path {
        let f = g.function(g.func_of(n));
        let kind_in = prev.and_then(|p| g.succs(p).find(|&(w, _)| w == n).map(|(_, k)| k));
        let ev = match (g.kind(n), kind_in) {
            (NodeKind::Entry, _) => Some(format!("enter {}", f.name)),
            (_, Some(EdgeKind::Return)) => Some(format!("return to {}", f.name)),
            _ => None,
        };
        if let Some(e) = ev {
            events.push(e);
        }
        if let (Some(line), Some(file)) = (g.lines(n).first(), g.file_of(n)) {
            let file = g.file_path(file);
            let short = file.rsplit('/').next().unwrap_or(file);
            let e = format!("  {short}:{line}");
            if events.last() != Some(&e) {
                events.push(e);
            }
        }
        prev = Some(n);
    }
    fold_repeats(events)
}

/// Folds immediately repeated runs (length 1 to 12) of events.
fn fold_repeats(events: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < events.len() {
        let mut best: Option<(usize, usize)> = None; // (run length, repeats)
        for len in 1..=12.min(events.len() - i) {
            let mut reps = 1;
            while i + (reps + 1) * len <= events.len()
                && events[i..i + len] == events[i + reps * len..i + (reps + 1) * len]
            {
                reps += 1;
            }
            if reps > 1 && best.is_none_or(|(l, r)| len * reps > l * r) {
                best = Some((len, reps));
            }
        }
        match best {
            Some((len, reps)) => {
                out.push(format!(
                    "[ {} ] x {reps}",
                    events[i..i + len]
                        .iter()
                        .map(|s| s.trim())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
                i += len * reps;
            }
            None => {
                out.push(events[i].clone());
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod witness_tests {
    use super::fold_repeats;

    #[test]
    fn loop_iterations_fold() {
        let ev: Vec<String> = ["a", "b", "c", "b", "c", "b", "c", "d"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(fold_repeats(ev), vec!["a", "[ b, c ] x 3", "d"]);
    }
}
