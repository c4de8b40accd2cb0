//! The solvers on a random small graph and report (from
//! `postmortem_testkit::testgen`, seeded by the input): no panic, limits
//! honoured (small limits only ever give Maybe), and every Yes/No label
//! of UTL and FSA agrees with the brute-force oracle.
//!
//! Input: 8 bytes of seed, then option bits (report kind, graph size,
//! solver limits).
#![no_main]
use libfuzzer_sys::fuzz_target;
use postmortem_core::fsa::{Fsa, FsaLimits};
use postmortem_testkit::testgen::{random_icfg, random_report, GraphShape, Rng};
use postmortem_core::utl::Utl;
use postmortem_core::{Answer, Label, NodeId, Query, SolveError, Solver};
use postmortem_testkit::oracle;

fn sound(labels: &[Label], truth: &[Label], what: &str) {
    assert_eq!(labels.len(), truth.len(), "{what}: label count");
    for (i, (l, t)) in labels.iter().zip(truth).enumerate() {
        assert!(
            *l == Label::Maybe || l == t,
            "{what}: node {i}: {l:?}, truly {t:?}"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 8 {
        return;
    }
    let seed = u64::from_le_bytes(data[..8].try_into().unwrap());
    let opt = |i: usize| data.get(8 + i).copied().unwrap_or(0);
    let shape = GraphShape {
        max_functions: 1 + opt(0) as usize % 4,
        max_body: 1 + opt(1) as usize % 6,
    };
    let mut rng = Rng::new(seed);
    let g = random_icfg(&mut rng, &shape);
    let r = random_report(&mut rng, &g, opt(2) & 1 == 1);
    let truth = oracle::recover(&g, &r);
    let tiny = opt(3) as usize % 8;
    let solvers: Vec<(&str, Fsa)> = vec![
        ("fsa", Fsa::default()),
        (
            "fsa full product",
            Fsa {
                limits: FsaLimits {
                    contracted_first: false,
                    ..FsaLimits::default()
                },
            },
        ),
        (
            "fsa tiny limits",
            Fsa {
                limits: FsaLimits {
                    max_states: tiny,
                    coarse_states: tiny * 4,
                    coarse_checks: tiny,
                    exact_work: tiny as u64 * 10,
                    ..FsaLimits::default()
                },
            },
        ),
    ];
    for (what, fsa) in &solvers {
        match (fsa.recover(&g, &r), &truth) {
            (Ok(rec), Some(t)) => {
                sound(&rec.labels, t, what);
                if *what != "fsa tiny limits" && rec.undecided.is_empty() && rec.weakened.is_empty()
                {
                    assert_eq!(&rec.labels, t, "{what}: exact");
                }
            }
            // Sound: a feasible report for the oracle when the solver
            // dropped constraints (weakened) is fine; an exact answer must
            // not claim feasibility.
            (Ok(rec), None) => assert!(
                !rec.weakened.is_empty() || !rec.undecided.is_empty(),
                "{what}: feasible but the oracle says impossible"
            ),
            (Err(SolveError::Infeasible { .. }), Some(_)) => {
                panic!("{what}: infeasible but the oracle has a path")
            }
            (Err(_), _) => {}
        }
    }
    match (Utl::default().recover(&g, &r), &truth) {
        (Ok(rec), Some(t)) => sound(&rec.labels, t, "utl"),
        (Err(SolveError::Infeasible { .. }), Some(_)) => {
            panic!("utl: infeasible but the oracle has a path")
        }
        _ => {}
    }
    // One query per solver against the oracle.
    let n = NodeId::new(rng.below(g.num_nodes()));
    let q = if opt(4) & 1 == 1 {
        Query::MayRun(n)
    } else {
        Query::MaySkip(n)
    };
    let exact = oracle::check(&g, &r, Some(&q));
    for (what, fsa) in &solvers[..2] {
        if let Ok(c) = fsa.check(&g, &r, Some(&q)) {
            if c.weakened.is_empty() {
                assert_eq!(c.answer, exact, "{what} check {q:?}");
                if let Some(w) = &c.witness {
                    assert_eq!(w.first(), Some(&g.start()), "{what}: witness start");
                    for p in w.windows(2) {
                        assert!(
                            g.succs(p[0]).any(|(x, _)| x == p[1]),
                            "{what}: witness edge"
                        );
                    }
                    assert!(oracle::path_consistent(&r, Some(&q), w), "{what}: witness");
                }
            } else if c.answer == Answer::Impossible {
                assert_eq!(exact, Answer::Impossible, "{what} check {q:?}");
            }
        }
    }
    if let Ok(c) = Utl::default().check(&g, &r, Some(&q)) {
        if c.answer == Answer::Impossible {
            assert_eq!(exact, Answer::Impossible, "utl check {q:?}");
        }
    }
});
