//! Any bytes into the backtrace parser, then through the mapping onto a
//! small fixed graph, and any first line into the demangler and the log
//! matcher: nothing may panic, errors must be one line naming the input,
//! and a mapped report may only name nodes of the graph.
#![no_main]

use libfuzzer_sys::fuzz_target;
use postmortem_core::locate::PathMap;
use postmortem_core::{Icfg, IcfgBuilder, NodeKind, NodeSpec};
use postmortem_formats::backtrace::{demangle, locator, parse_backtrace};
use postmortem_formats::logs::{LogConfig, LogMatcher};

/// `main` (a.c) calls `f` on line 3 and printf on line 4; `f` (a.c) has two
/// nodes on line 10.
fn graph(format: &str) -> Icfg {
    let mut b = IcfgBuilder::new();
    let main = b.function("main");
    let f = b.function("_Z1fi");
    b.set_function_file(main, "/src/a.c");
    b.set_function_file(f, "/src/a.c");
    let add = |b: &mut IcfgBuilder, id: &str, kind, func, line: u32| {
        b.add_node(NodeSpec { ext_id: id, kind, func, label: id, lines: &[line] }).expect("fresh id")
    };
    let me = add(&mut b, "me", NodeKind::Entry, main, 2);
    let c = add(&mut b, "c", NodeKind::CallSite, main, 3);
    let p = add(&mut b, "p", NodeKind::CallSite, main, 4);
    let mx = add(&mut b, "mx", NodeKind::Exit, main, 5);
    let fe = add(&mut b, "fe", NodeKind::Entry, f, 9);
    let f1 = add(&mut b, "f1", NodeKind::Statement, f, 10);
    let f2 = add(&mut b, "f2", NodeKind::Statement, f, 10);
    let fx = add(&mut b, "fx", NodeKind::Exit, f, 11);
    for (x, y) in [(me, c), (c, p), (p, mx), (fe, f1), (f1, f2), (f2, fx)] {
        b.add_flow_edge(x, y);
    }
    b.add_call_edge(c, fe);
    b.set_column(c, 5);
    b.add_external_callee(p);
    b.add_external_callee_name(p, "printf");
    b.add_string_arg(p, format);
    b.build().expect("valid graph")
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let first = text.lines().next().unwrap_or("");
    let _ = demangle(first);
    let g = graph(first);
    let matched = LogMatcher::new(&g, &LogConfig::default()).match_text(&text);
    assert_eq!(matched.lines.len(), text.lines().count());
    match parse_backtrace(&text, "fuzz.txt") {
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.contains('\n'), "{msg:?}");
            assert!(msg.starts_with("fuzz.txt: "), "{msg:?}");
        }
        Ok(bt) => {
            assert!(!bt.frames.is_empty());
            let mut map = PathMap::new();
            map.push("/build", "/src");
            let located = locator(&g, map).locate_stack(&bt.source_frames());
            for n in located.report.mentioned_nodes() {
                assert!(n.index() < g.num_nodes());
            }
            for w in &located.warnings {
                assert!(!w.to_string().contains('\n'));
            }
        }
    }
});
