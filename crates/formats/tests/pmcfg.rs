//! The `.pmcfg` cache on random graphs: a round trip keeps everything a
//! reader can see.

use postmortem_core::icfg::{IcfgBuilder, NodeKind, NodeSpec};
use postmortem_formats::pmcfg::{decode, encode};
use postmortem_testkit::testgen::{observe, random_icfg, GraphShape, Rng};

#[test]
fn round_trip_of_random_graphs() {
    let mut rng = Rng::new(7);
    for _ in 0..200 {
        let g = random_icfg(
            &mut rng,
            &GraphShape {
                max_functions: 5,
                max_body: 8,
            },
        );
        let h = decode(&encode(&g)).unwrap();
        assert_eq!(observe(&g), observe(&h));
    }
}

/// Asynchronous functions (a thread start routine here) survive the cache.
#[test]
fn the_cache_keeps_asynchronous_functions() {
    let mut b = IcfgBuilder::new();
    let main = b.function("main");
    let worker = b.function("worker");
    let add = |b: &mut IcfgBuilder, id: &str, kind, func| {
        b.add_node(NodeSpec {
            ext_id: id,
            kind,
            func,
            label: id,
            lines: &[],
        })
        .unwrap()
    };
    let m = add(&mut b, "M", NodeKind::Entry, main);
    let s = add(&mut b, "s", NodeKind::CallSite, main);
    let x = add(&mut b, "X", NodeKind::Exit, main);
    let w = add(&mut b, "W", NodeKind::Entry, worker);
    let v = add(&mut b, "v", NodeKind::Statement, worker);
    b.add_flow_edge(m, s);
    b.add_flow_edge(s, x);
    b.add_flow_edge(w, v);
    b.add_flow_edge(v, v);
    b.add_call_edge(s, w);
    b.add_external_callee(s);
    b.mark_async(worker, s);
    let g = b.build().unwrap();
    let back = decode(&encode(&g)).unwrap();
    assert_eq!(observe(&g), observe(&back));
    assert_eq!(
        back.async_functions()
            .iter()
            .map(|&f| back.function(f).name.to_string())
            .collect::<Vec<_>>(),
        ["worker"]
    );
}
