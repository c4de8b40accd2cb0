//! Differential tests: the UTL solver against the brute-force oracles on
//! thousands of random ICFGs (calls, recursion, loops, library calls) and
//! random reports (stacks, ambiguous crash sets, every weakened form).

use postmortem_core::utl::Utl;
use postmortem_core::{Answer, Label, Query, Report, SolveError, Solver};
use postmortem_testkit::oracle;
use postmortem_testkit::testgen::{random_icfg, random_report, utl_weakened, GraphShape, Rng};
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3000)
}

fn describe(g: &postmortem_core::Icfg, r: &Report) -> String {
    let mut s = String::new();
    for n in g.nodes() {
        let succ: Vec<String> = g
            .succs(n)
            .map(|(w, k)| format!("{}({:?})", g.ext_id(w), k))
            .collect();
        s += &format!("{} {:?} -> {}\n", g.ext_id(n), g.kind(n), succ.join(" "));
    }
    s += &format!("start {}\nreport {:?}\n", g.ext_id(g.start()), r);
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// On UTL-expressible reports, bulk recovery and single queries are
    /// exactly the oracle's answers.
    #[test]
    fn utl_is_exact_on_expressible_reports(seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let g = random_icfg(&mut rng, &GraphShape::default());
        let r = random_report(&mut rng, &g, true);
        let utl = Utl::default();
        let exact = oracle::recover(&g, &r);
        match utl.recover(&g, &r) {
            Ok(rec) => {
                prop_assert!(rec.weakened.is_empty());
                prop_assert!(rec.undecided.is_empty());
                prop_assert_eq!(Some(rec.labels.clone()), exact, "{}", describe(&g, &r));
                for n in g.nodes() {
                    let run = utl.check(&g, &r, Some(&Query::MayRun(n))).unwrap().answer;
                    let skip = utl.check(&g, &r, Some(&Query::MaySkip(n))).unwrap().answer;
                    prop_assert_eq!(run == Answer::Possible, rec.labels[n.index()] != Label::No);
                    prop_assert_eq!(skip == Answer::Possible, rec.labels[n.index()] != Label::Yes);
                }
            }
            Err(SolveError::Infeasible { culprit }) => {
                prop_assert_eq!(exact, None, "{}", describe(&g, &r));
                prop_assert_eq!(utl.check(&g, &r, None).unwrap().answer, Answer::Impossible);
                // The culprit is the first constraint whose addition breaks feasibility.
                let origins = r.origins();
                let k = origins.iter().position(|&o| o == culprit).unwrap();
                prop_assert_eq!(oracle::check(&g, &r.restrict(&origins[..=k]), None), Answer::Impossible);
                prop_assert_eq!(oracle::check(&g, &r.restrict(&origins[..k]), None), Answer::Possible);
            }
            Err(e) => prop_assert!(false, "{e}"),
        }
    }

    /// On any report, UTL is sound with respect to the full meaning of the
    /// report, and exact with respect to the weakening it lists.
    #[test]
    fn utl_is_sound_on_any_report_and_exact_on_its_weakening(seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let g = random_icfg(&mut rng, &GraphShape::default());
        let r = random_report(&mut rng, &g, false);
        let truth = oracle::recover(&g, &r);
        let weak = oracle::recover(&g, &utl_weakened(&r));
        match Utl::default().recover(&g, &r) {
            Ok(rec) => {
                prop_assert_eq!(Some(rec.labels.clone()), weak, "{}", describe(&g, &r));
                if let Some(truth) = truth {
                    for n in g.nodes() {
                        let (mine, real) = (rec.labels[n.index()], truth[n.index()]);
                        prop_assert!(mine == Label::Maybe || mine == real,
                            "node {} utl {:?} truth {:?}\n{}", g.ext_id(n), mine, real, describe(&g, &r));
                    }
                }
            }
            Err(_) => {
                prop_assert_eq!(weak, None);
                prop_assert_eq!(truth, None, "UTL says impossible but the report is possible");
            }
        }
    }

    /// Queries given as traces agree with the oracle.
    #[test]
    fn trace_queries_match_the_oracle(seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let g = random_icfg(&mut rng, &GraphShape::default());
        let r = random_report(&mut rng, &g, true);
        let q = random_report(&mut rng, &g, true).obs_yes.into_iter().next();
        if let Some(t) = q {
            let q = Query::Trace(t.entries);
            prop_assert_eq!(Utl::default().check(&g, &r, Some(&q)).unwrap().answer, oracle::check(&g, &r, Some(&q)));
        }
    }

    /// The two oracles agree: every path found by bounded enumeration is a
    /// path of the product, and on these small graphs the bound suffices.
    #[test]
    fn oracles_agree(seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let shape = GraphShape { max_functions: 2, max_body: 3 };
        let g = random_icfg(&mut rng, &shape);
        let r = random_report(&mut rng, &g, false);
        let exact = oracle::recover(&g, &r);
        let bounded = oracle::recover_by_paths(&g, &r, 12);
        match (&exact, &bounded) {
            (None, Some(_)) => prop_assert!(false, "enumeration found a path the product missed"),
            (Some(e), Some(b)) => {
                for n in g.nodes() {
                    // A path found is a real path: what it shows may run does.
                    if b[n.index()] != Label::No { prop_assert!(e[n.index()] != Label::No); }
                    if b[n.index()] != Label::Yes { prop_assert!(e[n.index()] != Label::Yes); }
                }
            }
            _ => {}
        }
    }
}

/// Bigger graphs, fewer cases: exercises large strongly connected
/// components (the crossing analysis) against the exact oracle.
#[test]
fn utl_is_exact_on_larger_graphs() {
    let shape = GraphShape {
        max_functions: 5,
        max_body: 6,
    };
    let utl = Utl::default();
    for seed in 0..2000u64 {
        let mut rng = Rng::new(seed ^ 0xABCDEF);
        let g = random_icfg(&mut rng, &shape);
        let r = random_report(&mut rng, &g, true);
        let exact = oracle::recover(&g, &r);
        let mine = utl.recover(&g, &r).ok().map(|x| x.labels);
        assert_eq!(mine, exact, "seed {seed}\n{}", describe(&g, &r));
    }
}

/// The generators must produce a useful mix, or the tests above prove little.
#[test]
fn generated_cases_are_varied() {
    let utl = Utl::default();
    let (mut feasible, mut infeasible, mut yes, mut no, mut maybe, mut weakened) =
        (0, 0, 0, 0, 0, 0);
    for seed in 0..2000u64 {
        let mut rng = Rng::new(seed);
        let g = random_icfg(&mut rng, &GraphShape::default());
        let r = random_report(&mut rng, &g, seed % 2 == 0);
        match utl.recover(&g, &r) {
            Ok(rec) => {
                feasible += 1;
                weakened += usize::from(!rec.weakened.is_empty());
                for l in rec.labels {
                    match l {
                        Label::Yes => yes += 1,
                        Label::No => no += 1,
                        Label::Maybe => maybe += 1,
                    }
                }
            }
            Err(_) => infeasible += 1,
        }
    }
    eprintln!("feasible {feasible} infeasible {infeasible} yes {yes} no {no} maybe {maybe} weakened {weakened}");
    assert!(
        feasible > 600 && infeasible > 200,
        "feasible {feasible} infeasible {infeasible}"
    );
    assert!(
        yes > 2000 && no > 2000 && maybe > 1000,
        "yes {yes} no {no} maybe {maybe}"
    );
    assert!(weakened > 100, "weakened {weakened}");
}

/// The crossing analysis of large components is exercised, and its limits
/// degrade soundly: with no budget for exact checks, undecided nodes are
/// Maybe and everything else is unchanged; fewer witnesses change nothing.
#[test]
fn crossing_limits_degrade_soundly() {
    use postmortem_core::utl::BulkLimits;
    let shape = GraphShape {
        max_functions: 5,
        max_body: 6,
    };
    let full = Utl::default();
    let starved = Utl {
        limits: BulkLimits {
            exact_work: 0,
            witnesses: 1,
        },
    };
    let one = Utl {
        limits: BulkLimits {
            witnesses: 1,
            ..BulkLimits::default()
        },
    };
    let mut undecided = 0;
    for seed in 0..1500u64 {
        let mut rng = Rng::new(seed ^ 0x5EED);
        let g = random_icfg(&mut rng, &shape);
        let r = random_report(&mut rng, &g, true);
        let (Ok(a), Ok(b), Ok(c)) = (
            full.recover(&g, &r),
            starved.recover(&g, &r),
            one.recover(&g, &r),
        ) else {
            continue;
        };
        assert_eq!(a.labels, c.labels, "seed {seed}");
        for n in g.nodes() {
            let (x, y) = (a.labels[n.index()], b.labels[n.index()]);
            if b.undecided.contains(&n) {
                assert_eq!(y, Label::Maybe);
                assert_ne!(x, Label::No);
            } else {
                assert_eq!(x, y, "seed {seed} node {}", g.ext_id(n));
            }
        }
        undecided += b.undecided.len();
    }
    assert!(undecided > 50, "exact checks hardly exercised: {undecided}");
}
