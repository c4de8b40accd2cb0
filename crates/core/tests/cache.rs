//! The `.pmcfg` cache on random graphs: a round trip keeps everything a
//! reader can see.

use postmortem_core::icfg::Icfg;
use postmortem_core::ids::FuncId;
use postmortem_testkit::testgen::{random_icfg, GraphShape, Rng};

/// Everything an accessor can see, in one comparable value.
fn observe(g: &Icfg) -> String {
    let mut s = String::new();
    use std::fmt::Write;
    for n in g.nodes() {
        let mut succs: Vec<_> = g.succs(n).collect();
        succs.sort_by_key(|e| e.0);
        let preds: Vec<_> = g.preds(n).collect();
        let rs: Vec<_> = g.return_sites(n).collect();
        writeln!(
            s,
            "{n} {} {:?} {} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?}",
            g.ext_id(n),
            g.kind(n),
            g.label(n),
            g.func_of(n),
            g.lines(n),
            g.column(n),
            g.file_of(n).map(|f| g.file_path(f)),
            succs,
            preds,
            rs,
            g.call_note(n)
        )
        .unwrap();
        assert_eq!(g.lookup(g.ext_id(n)), Some(n));
    }
    for (i, f) in g.functions().iter().enumerate() {
        writeln!(s, "{i} {f:?}").unwrap();
        assert_eq!(g.function_by_name(&f.name), Some(FuncId::new(i)));
    }
    writeln!(
        s,
        "start {} files {} calls {}",
        g.start(),
        g.num_files(),
        g.num_call_sites()
    )
    .unwrap();
    s
}

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
        let h = Icfg::decode(&g.encode()).unwrap();
        assert_eq!(observe(&g), observe(&h));
    }
}
