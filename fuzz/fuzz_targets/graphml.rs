//! Any bytes (plain or gzip) into the GraphML reader: it must never panic,
//! its errors must be one line naming the input, and a graph it accepts
//! must be self-consistent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use postmortem_core::{EdgeKind, NodeKind};

fuzz_target!(|data: &[u8]| {
    match postmortem_formats::read_graphml(data, "fuzz.graphml") {
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.contains('\n'), "{msg:?}");
            assert!(msg.starts_with("fuzz.graphml: "), "{msg:?}");
        }
        Ok(g) => {
            assert!(g.num_nodes() > 0);
            assert!(g.start().index() < g.num_nodes());
            for n in g.nodes() {
                assert_eq!(g.lookup(g.ext_id(n)), Some(n));
                for (t, k) in g.succs(n) {
                    if k == EdgeKind::Call {
                        assert_eq!(g.kind(t), NodeKind::Entry);
                    }
                }
            }
        }
    }
});
