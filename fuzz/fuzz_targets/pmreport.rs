//! Any text into the `--report` reader (postmortem's own JSON or
//! csi-grissom's, told apart by their keys) against a small fixed graph:
//! nothing may panic, errors must be one line naming the input, and a
//! mapped report may only name nodes of the graph.
#![no_main]

use libfuzzer_sys::fuzz_target;
use postmortem_core::locate::PathMap;
use postmortem_core::{Icfg, IcfgBuilder, NodeKind, NodeSpec};
use postmortem_formats::logs::LogConfig;
use postmortem_formats::any_report::read_any_report_str;
use std::sync::OnceLock;

/// `main` (a.c) calls `f` on line 3 and `printf("n=%d\n")` on line 4;
/// `f` (a.c) has two nodes on line 10.
fn graph() -> &'static Icfg {
    static G: OnceLock<Icfg> = OnceLock::new();
    G.get_or_init(|| {
        let mut b = IcfgBuilder::new();
        let main = b.function("main");
        let f = b.function("f");
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
        b.add_external_callee(p);
        b.add_external_callee_name(p, "printf");
        b.add_string_arg(p, "n=%d\n");
        b.build().expect("valid graph")
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let g = graph();
    let mut paths = PathMap::new();
    paths.push("/build", "/src");
    match read_any_report_str(text, "fuzz.json", g, &paths, &LogConfig::default()) {
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.contains('\n'), "{msg:?}");
            assert!(msg.starts_with("fuzz.json: "), "{msg:?}");
        }
        Ok((_, mapped)) => {
            for n in mapped.report.mentioned_nodes() {
                assert!(n.index() < g.num_nodes());
            }
        }
    }
});
