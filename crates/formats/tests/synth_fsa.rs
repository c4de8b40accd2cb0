//! The FSA solver on small synthetic programs shaped like the gcc-sized one
//! (recursion, indirect calls, one large strongly connected component)
//! with ambiguous observations and a reliable call trace: the contracted
//! product (the default) equals the full product, and its witnesses
//! satisfy the report and the query. (The exact oracle agrees too, but
//! takes about 25 s per program: checked by hand, not here.)

use postmortem_core::fsa::{Fsa, FsaLimits};
use postmortem_core::{Answer, Label, NodeId, Query, Solver};
use postmortem_formats::{read_graphml, read_report_str};
use postmortem_testkit::oracle;
use postmortem_testkit::synth::{generate, SynthConfig};

#[test]
fn contracted_product_is_exact_on_synthetic_programs_with_fsa_constraints() {
    let full = Fsa {
        limits: FsaLimits {
            contracted_first: false,
            ..FsaLimits::default()
        },
    };
    let (mut compared, mut checked) = (0, 0);
    for seed in 0..30u64 {
        let cfg = SynthConfig {
            reliable_trace: 3,
            ambiguous: 4,
            ..SynthConfig::small(seed)
        };
        let (mut graph, mut report) = (Vec::new(), Vec::new());
        generate(&cfg, &mut graph, &mut report).unwrap();
        let g = read_graphml(&graph[..], "synth.graphml").unwrap();
        let r = read_report_str(std::str::from_utf8(&report).unwrap(), "synth.json", &g).unwrap();
        let got = Fsa::default()
            .recover(&g, &r)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert!(got.undecided.is_empty(), "seed {seed}: undecided nodes");
        let want = full.recover(&g, &r).unwrap();
        if want.weakened.iter().any(|w| w.how.contains("gave up")) {
            continue;
        }
        assert_eq!(got.labels, want.labels, "seed {seed}");
        compared += 1;
        // Queries on a few nodes of each label: the answer follows from the
        // labels, and every witness is a consistent execution.
        for (i, &l) in got.labels.iter().enumerate().step_by(23) {
            let n = NodeId::new(i);
            for (q, possible) in [
                (Query::MayRun(n), l != Label::No),
                (Query::MaySkip(n), l != Label::Yes),
            ] {
                let c = Fsa::default().check(&g, &r, Some(&q)).unwrap();
                assert_eq!(
                    c.answer == Answer::Possible,
                    possible,
                    "seed {seed}: {q:?} with label {l:?}"
                );
                if let Some(w) = c.witness {
                    assert_eq!(w.first(), Some(&g.start()), "seed {seed}");
                    assert!(
                        w.windows(2).all(|p| g.succs(p[0]).any(|(x, _)| x == p[1])),
                        "seed {seed}: not a path"
                    );
                    assert!(
                        oracle::path_consistent(&r, Some(&q), &w),
                        "seed {seed}: {q:?}: inconsistent witness"
                    );
                    checked += 1;
                }
            }
        }
    }
    eprintln!("{compared} synthetic reports compared, {checked} witnesses checked");
    assert!(
        compared >= 25 && checked >= 200,
        "{compared} compared, {checked} witnesses"
    );
}
