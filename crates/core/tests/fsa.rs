//! The FSA solver against the brute-force oracle and the UTL solver.

use postmortem_core::automaton::{Dfa, DEAD};
use postmortem_core::fsa::Fsa;
use postmortem_core::utl::Utl;
use postmortem_core::{
    Answer, EdgeKind, Icfg, Label, NodeId, Origin, Query, Report, SolveError, Solver,
};
use postmortem_testkit::oracle;
use postmortem_testkit::testgen::{
    random_icfg, random_report, random_value, GraphShape, Rng, ValueMix,
};
use proptest::prelude::*;
use std::collections::HashMap;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000)
}

/// An independent witness checker: a path of the ICFG from the start to a
/// crash node that satisfies the report and the query.
pub fn check_witness(g: &Icfg, r: &Report, q: Option<&Query>, w: &[NodeId]) -> Result<(), String> {
    if w.first() != Some(&g.start()) {
        return Err("does not start at the start node".into());
    }
    for p in w.windows(2) {
        if !g.succs(p[0]).any(|(x, _)| x == p[1]) {
            return Err(format!(
                "{} -> {} is not an edge",
                g.ext_id(p[0]),
                g.ext_id(p[1])
            ));
        }
    }
    if !oracle::path_consistent(r, q, w) {
        return Err("violates the report or the query".into());
    }
    Ok(())
}

/// A random query automaton over a few random node classes.
fn random_query(rng: &mut Rng, g: &Icfg) -> Query {
    let n = g.num_nodes();
    let k = 1 + rng.below(3) as u32; // classes 1..=k
    let mut class = HashMap::new();
    for c in 1..=k {
        for _ in 0..1 + rng.below(2) {
            class.insert(rng.below(n) as u32, c);
        }
    }
    let states = 2 + rng.below(3) as u32;
    let delta: Vec<u32> = (0..states * (k + 1))
        .map(|i| {
            let c = i % (k + 1);
            if c == 0 && rng.chance(70) {
                i / (k + 1) // mostly silent on other nodes
            } else if rng.chance(10) {
                DEAD
            } else {
                rng.below(states as usize) as u32
            }
        })
        .collect();
    let accepting: Vec<bool> = (0..states).map(|_| rng.chance(50)).collect();
    Query::Language(Dfa::from_table(
        Origin::Query,
        0,
        accepting,
        class,
        k + 1,
        delta,
    ))
}

fn describe(g: &Icfg, r: &Report) -> String {
    let mut s = String::new();
    for n in g.nodes() {
        let succ: Vec<String> = g
            .succs(n)
            .map(|(w, k)| {
                format!(
                    "{}{}",
                    g.ext_id(w),
                    if k == EdgeKind::Local { "" } else { "*" }
                )
            })
            .collect();
        s += &format!("{} -> {}\n", g.ext_id(n), succ.join(" "));
    }
    s + &format!("report {r:?}\n")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// Exact bulk recovery on any report: sets, reliable, bursty, ambiguous obsNo.
    #[test]
    fn fsa_bulk_is_exact(seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let g = random_icfg(&mut rng, &GraphShape::default());
        let r = random_report(&mut rng, &g, seed % 3 == 0);
        let truth = oracle::recover(&g, &r);
        // The contracted product first (the default), and the full product alone.
        for fsa in [Fsa::default(), full_product()] {
            match fsa.recover(&g, &r) {
                Ok(rec) => {
                    prop_assert!(rec.undecided.is_empty());
                    prop_assert_eq!(Some(rec.labels), truth.clone(), "{}", describe(&g, &r));
                }
                Err(SolveError::Infeasible { .. }) => prop_assert_eq!(truth.clone(), None, "{}", describe(&g, &r)),
                Err(e) => prop_assert!(false, "{e}"),
            }
        }
    }

    /// Single queries, node and regular, with checked witnesses.
    #[test]
    fn fsa_queries_are_exact_with_valid_witnesses(seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let g = random_icfg(&mut rng, &GraphShape::default());
        let r = random_report(&mut rng, &g, false);
        let mut queries = vec![
            Query::MayRun(NodeId::new(rng.below(g.num_nodes()))),
            Query::MaySkip(NodeId::new(rng.below(g.num_nodes()))),
            random_query(&mut rng, &g),
        ];
        if let Some(t) = random_report(&mut rng, &g, false).obs_yes.into_iter().next() {
            queries.push(Query::Trace(t.entries));
        }
        for (q, fsa) in queries.iter().map(Some).chain([None]).flat_map(|q| [(q, Fsa::default()), (q, full_product())]) {
            let got = fsa.check(&g, &r, q).unwrap();
            // The answer alone (no witness built) is the same.
            prop_assert_eq!(fsa.possible(&g, &r, q).unwrap(), got.answer);
            prop_assert_eq!(got.answer, oracle::check(&g, &r, q), "{:?}\n{}", q, describe(&g, &r));
            if got.answer == Answer::Possible {
                let w = got.witness.expect("a witness");
                if let Err(e) = check_witness(&g, &r, q, &w) {
                    prop_assert!(false, "bad witness {:?}: {e}\n{}", w.iter().map(|&n| g.ext_id(n)).collect::<Vec<_>>(), describe(&g, &r));
                }
            }
        }
    }

    /// FSA equals UTL on UTL-expressible inputs.
    #[test]
    fn fsa_equals_utl_on_expressible_reports(seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let g = random_icfg(&mut rng, &GraphShape { max_functions: 4, max_body: 5 });
        let r = random_report(&mut rng, &g, true);
        let a = Utl::default().recover(&g, &r).map(|x| x.labels);
        let b = Fsa::default().recover(&g, &r).map(|x| x.labels);
        prop_assert_eq!(a.is_ok(), b.is_ok());
        if let (Ok(a), Ok(b)) = (a, b) { prop_assert_eq!(a, b); }
    }

    /// FSA is never less precise than UTL, and both are sound.
    #[test]
    fn fsa_is_at_least_as_precise_as_utl(seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let g = random_icfg(&mut rng, &GraphShape::default());
        let r = random_report(&mut rng, &g, false);
        if let (Ok(u), Ok(f)) = (Utl::default().recover(&g, &r), Fsa::default().recover(&g, &r)) {
            for i in 0..g.num_nodes() {
                prop_assert!(u.labels[i] == Label::Maybe || u.labels[i] == f.labels[i]);
            }
        }
    }
}

/// Larger graphs (big strongly connected components, silent crossings).
#[test]
fn fsa_bulk_is_exact_on_larger_graphs() {
    let shape = GraphShape {
        max_functions: 5,
        max_body: 6,
    };
    let mut contracted = 0;
    for seed in 0..600u64 {
        let mut rng = Rng::new(seed ^ 0xF5A);
        let g = random_icfg(&mut rng, &shape);
        let r = random_report(&mut rng, &g, seed % 2 == 0);
        let truth = oracle::recover(&g, &r);
        let rec = Fsa::default().recover(&g, &r).ok();
        // Answered by the contracted product alone?
        contracted += usize::from(rec.as_ref().is_some_and(|x| x.has_stat("coarse_vertices")));
        assert_eq!(
            rec.map(|x| x.labels),
            truth,
            "seed {seed}\n{}",
            describe(&g, &r)
        );
        let got = full_product().recover(&g, &r).ok().map(|x| x.labels);
        assert_eq!(
            got,
            truth,
            "seed {seed} (full product)\n{}",
            describe(&g, &r)
        );
    }
    assert!(
        contracted > 300,
        "the contracted product decided only {contracted} of 600"
    );
}

/// The FSA solver that explores the full product (no contracted product first).
fn full_product() -> Fsa {
    Fsa {
        limits: postmortem_core::fsa::FsaLimits {
            contracted_first: false,
            ..Default::default()
        },
    }
}

/// A limit degrades soundly: labels are UTL's, and the output says so.
#[test]
fn state_limit_degrades_to_sound_labels() {
    use postmortem_core::fsa::FsaLimits;
    let tiny = Fsa {
        limits: FsaLimits {
            max_states: 1,
            coarse_states: 0,
            ..FsaLimits::default()
        },
    };
    let mut degraded = 0;
    for seed in 0..300u64 {
        let mut rng = Rng::new(seed);
        let g = random_icfg(&mut rng, &GraphShape::default());
        let r = random_report(&mut rng, &g, false);
        let (Some(truth), Ok(rec)) = (oracle::recover(&g, &r), tiny.recover(&g, &r)) else {
            continue;
        };
        for (got, want) in rec.labels.iter().zip(&truth) {
            assert!(*got == Label::Maybe || got == want, "seed {seed}");
        }
        if rec.weakened.iter().any(|w| w.how.contains("gave up")) {
            degraded += 1;
        }
    }
    assert!(
        degraded > 20,
        "the limit was hardly ever reached: {degraded}"
    );
}

/// Explanations are impossible, and each member is needed (checked with the
/// oracle, not with the solver that produced them).
#[test]
fn explanations_are_minimal_impossible_subsets() {
    let mut explained = 0;
    for seed in 0..1500u64 {
        let mut rng = Rng::new(seed ^ 0xE4);
        let g = random_icfg(&mut rng, &GraphShape::default());
        let r = random_report(&mut rng, &g, false);
        let q = if seed % 2 == 0 {
            Some(random_query(&mut rng, &g))
        } else {
            None
        };
        let Some(ex) = Fsa::default().explain(&g, &r, q.as_ref()) else {
            assert_eq!(
                oracle::check(&g, &r, q.as_ref()),
                Answer::Possible,
                "seed {seed}"
            );
            continue;
        };
        explained += 1;
        let check = |set: &[Origin]| {
            let qq = if set.contains(&Origin::Query) {
                q.as_ref()
            } else {
                None
            };
            oracle::check(&g, &r.restrict(set), qq)
        };
        assert_eq!(check(&ex), Answer::Impossible, "seed {seed}: {ex:?}");
        for i in 0..ex.len() {
            let mut fewer = ex.clone();
            fewer.remove(i);
            assert_eq!(
                check(&fewer),
                Answer::Possible,
                "seed {seed}: {ex:?} without {:?}",
                ex[i]
            );
        }
    }
    assert!(explained > 200, "only {explained} impossible cases");
}

/// The coarse tier (used when the exact product is too large) is sound:
/// every No and Yes it gives is the truth, and "impossible" only when the
/// report is. It also refines UTL: some No labels UTL does not have.
#[test]
fn coarse_tier_is_sound_and_refines_utl() {
    use postmortem_core::fsa::FsaLimits;
    // With exact checks, and with witnesses and dominators alone.
    for checks in [256, 0] {
        let limits = FsaLimits {
            max_states: 1,
            coarse_checks: checks,
            contracted_first: false,
            ..FsaLimits::default()
        };
        coarse_tier_case(Fsa { limits });
    }
}

fn coarse_tier_case(coarse: Fsa) {
    let (mut refined, mut used, mut held, mut checks) = (0, 0, 0, 0);
    for seed in 0..3000u64 {
        let mut rng = Rng::new(seed ^ 0xC0A);
        let g = random_icfg(
            &mut rng,
            &GraphShape {
                max_functions: 4,
                max_body: 5,
            },
        );
        let r = random_report(&mut rng, &g, false);
        let truth = oracle::recover(&g, &r);
        match (coarse.recover(&g, &r), &truth) {
            (Ok(rec), Some(t)) => {
                for (i, (&got, &want)) in rec.labels.iter().zip(t).enumerate() {
                    assert!(
                        got == Label::Maybe || got == want,
                        "seed {seed} node {i}\n{}",
                        describe(&g, &r)
                    );
                    // Nodes not listed as undecided carry the exact label.
                    if !rec.undecided.contains(&NodeId::new(i)) {
                        assert_eq!(
                            got,
                            want,
                            "seed {seed} node {i} not undecided\n{}",
                            describe(&g, &r)
                        );
                    }
                }
                if rec.weakened.iter().any(|w| w.how.contains("coarse tier")) {
                    used += 1;
                    let stat = rec.stat("coarse_refined");
                    refined += usize::from(stat > 0);
                    held += rec.stat("coarse_held_decided");
                    checks += rec.stat("coarse_checks");
                }
            }
            (Ok(_), None) => {}
            (Err(SolveError::Infeasible { .. }), t) => assert_eq!(
                t,
                &None,
                "seed {seed}: coarse says impossible\n{}",
                describe(&g, &r)
            ),
            (Err(e), _) => panic!("{e}"),
        }
    }
    assert!(used > 500, "coarse tier used {used} times");
    assert!(refined > 20, "coarse tier refined UTL only {refined} times");
    // Members of contracted locations with element requirements were decided.
    assert!(
        held > 100,
        "only {held} members of locations with requirements decided"
    );
    eprintln!("coarse tier ({:?}): used {used}, refined {refined}, held members decided {held}, exact checks {checks}", coarse.limits);
    if coarse.limits.coarse_checks > 0 {
        assert!(checks > 20, "only {checks} exact checks");
    }
}

/// `r` plus `k` ambiguous `obsNo` sets of 2 or 3 random nodes (coverage
/// bits standing for several statements) and an ambiguous `obsYes`
/// element.
fn with_ambiguous_obs_no(rng: &mut Rng, g: &Icfg, mut r: Report, k: usize) -> Report {
    use postmortem_core::{NodeSet, Trace};
    let n = g.num_nodes();
    for _ in 0..k {
        let m = 2 + rng.below(2);
        let set: Vec<NodeId> = (0..m).map(|_| NodeId::new(rng.below(n))).collect();
        r.obs_no.push(NodeSet::new(set).expect("non-empty"));
    }
    if rng.chance(50) {
        let e = NodeSet::new(vec![NodeId::new(rng.below(n)), NodeId::new(rng.below(n))]);
        r.obs_yes.push(Trace {
            reliable: false,
            entries: vec![e.expect("non-empty")],
        });
    }
    r
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases() / 2, ..ProptestConfig::default() })]

    /// Many ambiguous obsNo sets (issue 9): exact against the oracle, with
    /// the contracted product first and with the full product alone.
    #[test]
    fn fsa_bulk_is_exact_with_many_ambiguous_obs_no(seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let g = random_icfg(&mut rng, &GraphShape::default());
        let r = random_report(&mut rng, &g, false);
        let k = 2 + rng.below(5);
        let r = with_ambiguous_obs_no(&mut rng, &g, r, k);
        let truth = oracle::recover(&g, &r);
        for fsa in [Fsa::default(), full_product()] {
            match fsa.recover(&g, &r) {
                Ok(rec) => {
                    prop_assert!(rec.undecided.is_empty());
                    prop_assert!(rec.weakened.is_empty(), "{:?}", rec.weakened);
                    prop_assert_eq!(Some(rec.labels), truth.clone(), "{}", describe(&g, &r));
                }
                Err(SolveError::Infeasible { .. }) => prop_assert_eq!(truth.clone(), None, "{}", describe(&g, &r)),
                Err(e) => prop_assert!(false, "{e}"),
            }
        }
        // Queries too, with checked witnesses.
        let q = Query::MayRun(NodeId::new(rng.below(g.num_nodes())));
        let got = Fsa::default().check(&g, &r, Some(&q)).unwrap();
        prop_assert_eq!(got.answer, oracle::check(&g, &r, Some(&q)));
        if let Some(w) = got.witness {
            prop_assert!(check_witness(&g, &r, Some(&q), &w).is_ok());
        }
    }
}

/// Labels sound against the oracle's (a Yes or No is the truth).
fn assert_sound(labels: &[Label], truth: &[Label], what: &str) {
    for (i, (l, t)) in labels.iter().zip(truth).enumerate() {
        assert!(
            *l == Label::Maybe || l == t,
            "{what}: node {i}: {l:?}, truly {t:?}"
        );
    }
}

/// A limit trips inside automaton construction (the subset construction
/// of a bursty trace, capped by --max-states) and the answer stays sound,
/// the trace listed as weakened.
#[test]
fn limit_in_automaton_construction_weakens_soundly() {
    use postmortem_core::fsa::FsaLimits;
    use postmortem_core::report::Bursty;
    use postmortem_core::NodeSet;
    let fsa = Fsa {
        limits: FsaLimits {
            max_states: 1,
            ..FsaLimits::default()
        },
    };
    let mut tripped = 0;
    for seed in 0..400u64 {
        let mut rng = Rng::new(seed ^ 0xB0);
        let g = random_icfg(&mut rng, &GraphShape::default());
        let mut r = random_report(&mut rng, &g, false);
        let n = g.num_nodes();
        r.bursty.push(Bursty {
            bursts: vec![
                vec![NodeSet::one(NodeId::new(rng.below(n)))],
                vec![NodeSet::one(NodeId::new(rng.below(n)))],
            ],
        });
        let (Some(truth), Ok(rec)) = (oracle::recover(&g, &r), fsa.recover(&g, &r)) else {
            continue;
        };
        assert_sound(&rec.labels, &truth, &format!("seed {seed}"));
        if rec
            .weakened
            .iter()
            .any(|w| w.how.contains("bursty trace") && w.how.contains("--max-states"))
        {
            tripped += 1;
        }
    }
    assert!(tripped > 50, "the automaton limit tripped {tripped} times");
}

/// A memory budget trips inside product exploration: the answer stays
/// sound and says what it gave up (ambiguous obsNo weakened to fit, or the
/// whole product given up for the UTL labels).
#[test]
fn limit_in_product_exploration_degrades_soundly() {
    use postmortem_core::fsa::FsaLimits;
    let (mut fitted, mut gave_up) = (0, 0);
    let (mut made_exact, mut left_undecided) = (0, 0);
    for seed in 0..600u64 {
        let mut rng = Rng::new(seed ^ 0x3E3);
        let g = random_icfg(
            &mut rng,
            &GraphShape {
                max_functions: 4,
                max_body: 5,
            },
        );
        let r = random_report(&mut rng, &g, false);
        let k = 3 + rng.below(4);
        let r = with_ambiguous_obs_no(&mut rng, &g, r, k);
        let Some(truth) = oracle::recover(&g, &r) else {
            continue;
        };
        for budget in [1usize, 2_000, 4_000, 8_000, 16_000] {
            let fsa = Fsa {
                limits: FsaLimits {
                    max_memory: budget,
                    ..FsaLimits::default()
                },
            };
            let rec = match fsa.recover(&g, &r) {
                Ok(rec) => rec,
                Err(e) => panic!("seed {seed}: {e}"),
            };
            assert_sound(&rec.labels, &truth, &format!("seed {seed} budget {budget}"));
            // Sets dropped to fit are made up for by choices (one member
            // each that did not run): a Maybe the choices confirm is a
            // real Maybe, the others are listed as undecided, so every
            // label not listed is the truth.
            let confirmed = rec.stat("confirm_rounds") > 0;
            if confirmed {
                for (i, (l, t)) in rec.labels.iter().zip(&truth).enumerate() {
                    if !rec.undecided.contains(&NodeId::new(i)) {
                        assert_eq!(l, t, "seed {seed} budget {budget}: node {i} not undecided");
                    }
                }
                if rec.weakened.is_empty() {
                    made_exact += 1;
                } else {
                    assert!(!rec.undecided.is_empty(), "seed {seed}");
                    left_undecided += 1;
                }
            }
            // A query under the same budget: impossible only if truly so, a
            // witness only if real, a weakened "possible" says so.
            let q = Query::MayRun(NodeId::new(rng.below(g.num_nodes())));
            if let Ok(c) = fsa.check(&g, &r, Some(&q)) {
                let want = oracle::check(&g, &r, Some(&q));
                if c.answer == Answer::Impossible {
                    assert_eq!(want, Answer::Impossible, "seed {seed} budget {budget}");
                } else if let Some(w) = &c.witness {
                    check_witness(&g, &r, Some(&q), w).unwrap();
                } else {
                    assert!(
                        want == Answer::Possible || !c.weakened.is_empty(),
                        "seed {seed}"
                    );
                }
            }
            if rec.weakened.iter().any(|w| w.how.contains("did not fit")) {
                fitted += 1;
                assert!(rec
                    .weakened
                    .iter()
                    .all(|w| !w.how.contains("did not fit") || w.how.contains("--max-memory")));
            }
            if rec
                .weakened
                .iter()
                .any(|w| w.how.contains("gave up") && w.how.contains("--max-memory"))
            {
                gave_up += 1;
            }
        }
    }
    eprintln!("weakened to fit {fitted} times, gave up {gave_up} times; choices made {made_exact} answers exact, left {left_undecided} with undecided nodes");
    // Sets dropped to fit and then made exact by choices no longer show
    // as weakened: they count as fitted too.
    assert!(
        fitted + made_exact > 10,
        "weakened to fit only {} times",
        fitted + made_exact
    );
    assert!(
        made_exact + left_undecided > 10,
        "choices tried only {} times",
        made_exact + left_undecided
    );
    assert!(gave_up > 20, "gave up only {gave_up} times");
}

/// Ambiguous obsNo sets dropped because the product with them did not fit
/// are made up for exactly: choices confirm the Maybe nodes in bulk, and
/// the few left are settled one by one (a Maybe may become the No or Yes
/// it really is). With the default settle budget every such recovery is
/// exact; with none, some are left undecided, so the settling is what
/// made them exact.
#[test]
fn dropped_obs_no_sets_are_settled_exactly() {
    use postmortem_core::fsa::FsaLimits;
    let (mut exact, mut decided, mut without, mut left) = (0, 0, 0, 0);
    for seed in 0..1500u64 {
        let mut rng = Rng::new(seed ^ 0x5E77);
        let g = random_icfg(
            &mut rng,
            &GraphShape {
                max_functions: 4,
                max_body: 6,
            },
        );
        let r = random_report(&mut rng, &g, false);
        let k = 4 + rng.below(6);
        let r = with_ambiguous_obs_no(&mut rng, &g, r, k);
        let Some(truth) = oracle::recover(&g, &r) else {
            continue;
        };
        for budget in [4_000usize, 8_000, 16_000] {
            for settle_checks in [0, FsaLimits::default().settle_checks] {
                let fsa = Fsa {
                    limits: FsaLimits {
                        max_memory: budget,
                        settle_checks,
                        ..FsaLimits::default()
                    },
                };
                let rec = fsa
                    .recover(&g, &r)
                    .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
                if rec.stat("confirm_rounds") == 0 {
                    continue; // nothing was dropped
                }
                assert_sound(&rec.labels, &truth, &format!("seed {seed} budget {budget}"));
                if !rec.undecided.is_empty() {
                    if settle_checks == 0 {
                        without += 1;
                    } else {
                        left += 1;
                    }
                    continue;
                }
                assert_eq!(rec.labels, truth, "seed {seed} budget {budget}");
                assert!(rec.weakened.is_empty(), "seed {seed}: {:?}", rec.weakened);
                if settle_checks > 0 {
                    exact += 1;
                    decided += rec.stat("settle_decided");
                }
            }
        }
    }
    eprintln!("{exact} exact after dropping sets ({decided} nodes decided by settling), {left} not; {without} left undecided without settling");
    assert!(exact > 50, "only {exact} recoveries made exact");
    assert!(decided > 5, "settling decided only {decided} nodes");
    assert!(without > 10, "settling was needed only {without} times");
}

/// Every solver gives a witness for a possible answer: UTL's satisfies
/// the constraints UTL checked (the report as UTL weakens it, and the
/// query), checked by the independent witness checker; on reports UTL
/// expresses exactly, that is the whole report.
#[test]
fn utl_witnesses_pass_the_independent_checker() {
    use postmortem_testkit::testgen::utl_weakened;
    let mut checked = 0;
    for seed in 0..1500u64 {
        let mut rng = Rng::new(seed ^ 0x77);
        let g = random_icfg(&mut rng, &GraphShape::default());
        let r = random_report(&mut rng, &g, seed % 2 == 0);
        let weak = utl_weakened(&r);
        let queries = [
            None,
            Some(Query::MayRun(NodeId::new(rng.below(g.num_nodes())))),
            Some(Query::MaySkip(NodeId::new(rng.below(g.num_nodes())))),
        ];
        for q in &queries {
            let c = Utl::default().check(&g, &r, q.as_ref()).unwrap();
            assert_eq!(
                c.answer,
                oracle::check(&g, &weak, q.as_ref()),
                "seed {seed}"
            );
            if c.answer == Answer::Possible {
                let w = c.witness.expect("a witness for a possible answer");
                if let Err(e) = check_witness(&g, &weak, q.as_ref(), &w) {
                    panic!("seed {seed}: bad utl witness: {e}\n{}", describe(&g, &r));
                }
                if seed % 2 == 0 {
                    check_witness(&g, &r, q.as_ref(), &w).unwrap();
                }
                checked += 1;
            }
            // The answer alone agrees.
            assert_eq!(
                Utl::default().possible(&g, &r, q.as_ref()).unwrap(),
                c.answer
            );
        }
    }
    assert!(checked > 1000, "only {checked} witnesses");
}

/// UTL's witness is the one the FSA solver's check finds for the
/// constraints UTL checked (`Utl::checked_report`), though UTL builds it
/// without the FSA solver (the products below both): the same path, node
/// for node, and none where that check gives none.
#[test]
fn utl_witnesses_are_fsa_witnesses_of_what_utl_checked() {
    let (mut same, mut differ) = (0, Vec::new());
    for seed in 0..600u64 {
        let mut rng = Rng::new(seed ^ 0x3177);
        let g = random_icfg(&mut rng, &GraphShape::default());
        let r = random_report(&mut rng, &g, seed % 2 == 0);
        let queries = [
            None,
            Some(Query::MayRun(NodeId::new(rng.below(g.num_nodes())))),
            Some(Query::MaySkip(NodeId::new(rng.below(g.num_nodes())))),
        ];
        for q in &queries {
            let utl = Utl::default().check(&g, &r, q.as_ref()).unwrap();
            if utl.answer != Answer::Possible {
                continue;
            }
            let checked = Utl::default().checked_report(&g, &r, q.as_ref()).unwrap();
            let fsa = Fsa::default().check(&g, &checked, None).unwrap();
            assert_eq!(fsa.answer, Answer::Possible, "seed {seed}");
            if utl.witness == fsa.witness && utl.witness.is_some() {
                same += 1;
            } else {
                differ.push(seed);
            }
        }
    }
    assert!(differ.is_empty(), "witnesses differ at seeds {differ:?}");
    assert!(same > 400, "only {same} witnesses compared");
}

/// Variables' values (last writes): FSA bulk recovery equals the
/// oracle's labels exactly and UTL's are sound, on reports whose only
/// constraints beyond the crash are values; and values decide labels the
/// report without them leaves Maybe (a test that fails if the values are
/// ignored).
#[test]
fn values_are_exact_in_fsa_and_sound_in_utl() {
    use postmortem_core::cs::Cs;
    let (mut cases_run, mut decided_by_values) = (0, 0);
    for seed in 0..cases() as u64 {
        let mut rng = Rng::new(seed ^ 0xA1E5);
        let g = random_icfg(&mut rng, &GraphShape::default());
        let mut r = random_report(&mut rng, &g, true);
        r.obs_yes.clear();
        r.obs_no.clear();
        let mix = ValueMix {
            writes: 4,
            bad: 50,
            need: 40,
        };
        for _ in 0..1 + rng.below(3) {
            r.values
                .push(random_value(&mut rng, &g, mix, format!("v{seed}")));
        }
        for v in &mut r.values {
            v.tests = postmortem_testkit::testgen::random_branch_tests(&mut rng, &g);
        }
        let Some(truth) = oracle::recover(&g, &r) else {
            // Impossible: every solver that expresses values exactly says so.
            assert!(Fsa::default().recover(&g, &r).is_err(), "seed {seed}");
            continue;
        };
        cases_run += 1;
        let fsa = Fsa::default().recover(&g, &r).expect("feasible");
        assert_eq!(fsa.labels, truth, "fsa, seed {seed}: {}", describe(&g, &r));
        // cs reads the report in the semantics of valid paths (tested
        // against its own oracle in cs.rs): never the opposite of a label
        // the flat semantics decides.
        if let Ok(cs) = Cs::<Fsa>::default().recover(&g, &r) {
            for (c, t) in cs.labels.iter().zip(&truth) {
                assert!(
                    !matches!((c, t), (Label::Yes, Label::No) | (Label::No, Label::Yes)),
                    "cs contradicts the flat oracle, seed {seed}"
                );
            }
        }
        let utl = Utl::default().recover(&g, &r).expect("feasible");
        assert_sound(&utl.labels, &truth, &format!("utl, seed {seed}"));
        assert!(
            utl.weakened
                .iter()
                .any(|w| matches!(w.origin, Origin::Value(_))),
            "utl lists the values it weakened, seed {seed}"
        );
        let without = Report {
            values: Vec::new(),
            ..r.clone()
        };
        let base = oracle::recover(&g, &without).expect("weaker report");
        decided_by_values += truth
            .iter()
            .zip(&base)
            .filter(|(t, b)| **b == Label::Maybe && **t != Label::Maybe)
            .count();
    }
    eprintln!(
        "{cases_run} reports with values; {decided_by_values} labels decided by the values alone"
    );
    assert!(cases_run > cases() as usize / 4, "{cases_run}");
    assert!(
        decided_by_values > cases() as usize / 10,
        "{decided_by_values}"
    );
}

/// Values in stages (`staged::recover_with_values`, what `analyze` runs):
/// sound against the oracle with every value, never less precise than the
/// report without values, and, with one group, as precise as FSA with
/// every value at once.
#[test]
fn staged_values_are_sound_and_refine_the_base() {
    use postmortem_core::staged::{recover_with_values, GROUP};
    let (mut runs, mut gained) = (0, 0);
    for seed in 0..cases() as u64 {
        let mut rng = Rng::new(seed ^ 0x57A6);
        let g = random_icfg(&mut rng, &GraphShape::default());
        let mut r = random_report(&mut rng, &g, true);
        let n = g.num_nodes();
        for _ in 0..1 + rng.below(10) {
            let writes: Vec<NodeId> = (0..1 + rng.below(3))
                .map(|_| NodeId::new(rng.below(n)))
                .collect();
            let writes = postmortem_core::report::NodeSet::new(writes).expect("non-empty");
            let bad = writes
                .nodes()
                .iter()
                .copied()
                .filter(|_| rng.chance(40))
                .collect();
            r.values.push(postmortem_core::report::LastWrite {
                writes,
                bad,
                need: rng.chance(30),
                what: "v".into(),
                tests: Vec::new(),
            });
        }
        for v in &mut r.values {
            v.tests = postmortem_testkit::testgen::random_branch_tests(&mut rng, &g);
        }
        let base_report = Report {
            values: Vec::new(),
            ..r.clone()
        };
        let Some(base_truth) = oracle::recover(&g, &base_report) else {
            continue;
        };
        let fsa = Fsa::default();
        let Ok(staged) = recover_with_values(&fsa, &g, &r) else {
            panic!("seed {seed}: the base is feasible");
        };
        runs += 1;
        if let Some(truth) = oracle::recover(&g, &r) {
            assert_sound(&staged.labels, &truth, &format!("seed {seed}"));
            if r.values.len() <= GROUP {
                let joint = fsa.recover(&g, &r).expect("feasible");
                assert_eq!(staged.labels, joint.labels, "seed {seed}");
            }
        }
        for (s, b) in staged.labels.iter().zip(&base_truth) {
            assert!(
                *b == Label::Maybe || s == b,
                "seed {seed}: less precise than the base"
            );
            if *b == Label::Maybe && *s != Label::Maybe {
                gained += 1;
            }
        }
    }
    eprintln!("{runs} staged recoveries, {gained} labels gained from values");
    assert!(runs > cases() as usize / 4 && gained > 0, "{runs} {gained}");
}

/// Stack residue in stages (`Report::residue`, staged before the
/// values): never makes a feasible base impossible (residue that does is
/// dropped and listed as `residue[i]`), sound against the oracle with the
/// residue as `obsYes` whenever that report is feasible, and exactly
/// FSA's labels of that report then.
#[test]
fn staged_residue_is_sound_and_never_impossible() {
    use postmortem_core::report::{NodeSet, Trace};
    use postmortem_core::staged::recover_with_values;
    let (mut runs, mut dropped, mut gained) = (0, 0, 0);
    for seed in 0..cases() as u64 {
        let mut rng = Rng::new(seed ^ 0x2E51);
        let g = random_icfg(&mut rng, &GraphShape::default());
        let base = random_report(&mut rng, &g, true);
        let Some(base_truth) = oracle::recover(&g, &base) else {
            continue;
        };
        let n = g.num_nodes();
        let mut r = base.clone();
        for _ in 0..1 + rng.below(4) {
            let set: Vec<NodeId> = (0..1 + rng.below(2))
                .map(|_| NodeId::new(rng.below(n)))
                .collect();
            r.residue.push(NodeSet::new(set).expect("non-empty"));
        }
        let fsa = Fsa::default();
        let staged = recover_with_values(&fsa, &g, &r)
            .unwrap_or_else(|e| panic!("seed {seed}: residue made a feasible base fail: {e}"));
        runs += 1;
        // The residue sets not dropped, as obsYes traces.
        let with = |keep: &dyn Fn(usize) -> bool| Report {
            residue: Vec::new(),
            obs_yes: base
                .obs_yes
                .iter()
                .cloned()
                .chain(
                    r.residue
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| keep(*i))
                        .map(|(_, s)| Trace {
                            reliable: false,
                            entries: vec![s.clone()],
                        }),
                )
                .collect(),
            ..base.clone()
        };
        let listed: Vec<usize> = staged
            .weakened
            .iter()
            .filter_map(|w| match w.origin {
                Origin::Residue(i) => Some(i),
                _ => None,
            })
            .collect();
        if oracle::recover(&g, &with(&|_| true)).is_some() {
            assert!(listed.is_empty(), "seed {seed}: feasible residue dropped");
        } else {
            assert!(
                !listed.is_empty(),
                "seed {seed}: impossible residue not listed"
            );
            dropped += 1;
        }
        let kept = with(&|i| !listed.contains(&i));
        let truth = oracle::recover(&g, &kept).expect("the residue kept is feasible");
        assert_sound(&staged.labels, &truth, &format!("seed {seed}"));
        assert_eq!(
            staged.labels,
            fsa.recover(&g, &kept).expect("feasible").labels,
            "seed {seed}"
        );
        gained += staged
            .labels
            .iter()
            .zip(&base_truth)
            .filter(|(s, b)| **b == Label::Maybe && **s != Label::Maybe)
            .count();
    }
    eprintln!(
        "{runs} staged residue recoveries, {dropped} dropped as impossible, {gained} labels gained"
    );
    assert!(
        runs > cases() as usize / 4 && dropped > 0 && gained > 0,
        "{runs} {dropped} {gained}"
    );
}

/// Every explanation of a label forces it: under the explained
/// constraints alone, the brute-force oracle finds no execution with the
/// opposite (a Yes node skipped, a No node run); with utl tried first and
/// fsa after, most decided nodes get one.
#[test]
fn why_explanations_force_the_label() {
    use postmortem_core::why::explain_labels;
    let (mut explained, mut decided) = (0, 0);
    for seed in 0..cases() as u64 / 4 {
        let mut rng = Rng::new(seed ^ 0x3A1);
        let g = random_icfg(&mut rng, &GraphShape::default());
        let r = random_report(&mut rng, &g, true);
        let fsa = Fsa::default();
        let Ok(rec) = fsa.recover(&g, &r) else {
            continue;
        };
        let nodes: Vec<NodeId> = (0..g.num_nodes())
            .map(NodeId::new)
            .filter(|n| rec.labels[n.index()] != Label::Maybe)
            .collect();
        decided += nodes.len();
        let far = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let why = explain_labels(&[&Utl::default(), &fsa], &g, &r, &rec.labels, &nodes, far);
        assert_eq!(why.left, 0);
        for (n, because) in &why.nodes {
            explained += 1;
            let opposite = match rec.labels[n.index()] {
                Label::Yes => Query::MaySkip(*n),
                _ => Query::MayRun(*n),
            };
            assert_eq!(
                oracle::check(&g, &r.restrict(because), Some(&opposite)),
                Answer::Impossible,
                "seed {seed}: node {n:?} {because:?}"
            );
        }
    }
    eprintln!("{explained} of {decided} decided nodes explained");
    assert!(decided > 100, "only {decided} decided nodes");
    assert!(
        explained * 10 >= decided * 9,
        "only {explained} of {decided} decided nodes explained"
    );
}

/// Issue 25: `settle` turns every witness into a choice that is surely
/// possible and confirms Maybe nodes with its bulk recovery. With it
/// (always) and without it (never), on random reports whose ambiguous
/// `obsNo` sets do not fit: both sound against the oracle, every label
/// the run without it decided is the same with it, and where both are
/// exact, the labels are equal.
#[test]
fn witness_choices_keep_the_labels() {
    use postmortem_core::fsa::FsaLimits;
    let (mut compared, mut chose, mut more) = (0, 0, 0);
    for seed in 0..1500u64 {
        let mut rng = Rng::new(seed ^ 0xC4_01CE);
        let g = random_icfg(
            &mut rng,
            &GraphShape {
                max_functions: 4,
                max_body: 6,
            },
        );
        let r = random_report(&mut rng, &g, false);
        let k = 4 + rng.below(6);
        let r = with_ambiguous_obs_no(&mut rng, &g, r, k);
        let Some(truth) = oracle::recover(&g, &r) else {
            continue;
        };
        let run = |witness_choices: usize, settle_checks: usize| {
            Fsa {
                limits: FsaLimits {
                    max_memory: 4_000 << (seed % 3),
                    witness_choices,
                    settle_checks,
                    ..FsaLimits::default()
                },
            }
            .recover(&g, &r)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"))
        };
        for checks in [2, 256] {
            let (with, without) = (run(0, checks), run(usize::MAX, checks));
            if with.stat("confirm_rounds") == 0 {
                continue; // nothing was dropped
            }
            let what = format!("seed {seed} checks {checks}");
            assert_sound(&with.labels, &truth, &what);
            assert_sound(&without.labels, &truth, &what);
            assert_eq!(without.stat("settle_choices"), 0, "{what}");
            chose += (with.stat("settle_choices") > 0) as usize;
            for (i, (&a, &b)) in with.labels.iter().zip(&without.labels).enumerate() {
                if b != Label::Maybe {
                    assert_eq!(a, b, "{what}: node {i} decided without, not with");
                } else if a != Label::Maybe {
                    more += 1;
                }
            }
            if with.undecided.is_empty() && without.undecided.is_empty() {
                assert_eq!(with.labels, without.labels, "{what}");
                compared += 1;
            }
        }
    }
    eprintln!("{compared} exact pairs compared, witness choices made in {chose} runs, {more} nodes decided only with them");
    assert!(compared > 20, "only {compared} exact pairs");
    assert!(chose > 10, "witness choices made in only {chose} runs");
}

/// Issue 25: bulk recovery's first attempt with every ambiguous `obsNo`
/// set capped (`FsaLimits::first_states`, here so low that it always
/// stops) against the same recovery without the cap, on random reports
/// (ambiguous sets, traces, reliable ones included, and a memory budget
/// that makes some products too large): both sound against the oracle,
/// every label decided without the cap is the same with it, and where
/// both are exact the labels are equal. The capped pass must be accepted
/// (exact) in many runs, and rerun without the cap in some (no settle
/// checks leave nodes unconfirmed), so the comparison is not vacuous.
#[test]
fn capped_first_attempt_keeps_the_labels() {
    use postmortem_core::fsa::FsaLimits;
    let (mut capped, mut accepted, mut compared) = (0, 0, 0);
    for seed in 0..2000u64 {
        let mut rng = Rng::new(seed ^ 0xCA_99ED);
        let g = random_icfg(
            &mut rng,
            &GraphShape {
                max_functions: 4,
                max_body: 6,
            },
        );
        let r = random_report(&mut rng, &g, false);
        let k = 2 + rng.below(6);
        let r = with_ambiguous_obs_no(&mut rng, &g, r, k);
        let Some(truth) = oracle::recover(&g, &r) else {
            continue;
        };
        let run = |first_states: usize| {
            Fsa {
                limits: FsaLimits {
                    max_memory: 8_000 << (seed % 4),
                    settle_checks: if seed % 2 == 0 { 0 } else { 256 },
                    // Tiny automata limits weaken traces: not confirmable.
                    max_states: if seed % 5 == 0 { 3 } else { 4_000_000 },
                    first_states,
                    ..FsaLimits::default()
                },
            }
            .recover(&g, &r)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"))
        };
        let (with, without) = (run(1 + (seed % 3) as usize), run(usize::MAX));
        let what = format!("seed {seed}");
        assert_sound(&with.labels, &truth, &what);
        assert_sound(&without.labels, &truth, &what);
        assert_eq!(without.stat("fsa_first_capped"), 0, "{what}");
        if with.stat("fsa_first_capped") > 0 {
            capped += 1;
            // A rerun without the cap records its time.
            accepted += !with.has_stat("fsa_first_capped_ms") as usize;
        }
        for (i, (&a, &b)) in with.labels.iter().zip(&without.labels).enumerate() {
            if b != Label::Maybe {
                assert_eq!(
                    a, b,
                    "{what}: node {i} decided without the cap, not with it"
                );
            }
        }
        if with.undecided.is_empty() && without.undecided.is_empty() {
            assert_eq!(with.labels, without.labels, "{what}");
            compared += 1;
        }
    }
    eprintln!("{capped} capped first attempts, {accepted} accepted, {compared} exact pairs");
    assert!(accepted > 50, "only {accepted} capped passes accepted");
    assert!(
        capped - accepted > 5,
        "only {} capped passes rerun",
        capped - accepted
    );
    assert!(compared > 100, "only {compared} exact pairs");
}

/// Issue 25: members of contracted locations whose own star walk would
/// avoid them, told from the dominator trees of the star's root
/// (`FsaLimits::sharp_stars`), and exact checks spared for classes that
/// hold a node UTL says runs (`FsaLimits::known_checks`), against
/// building every such walk and making every check, on
/// random reports with ambiguous `obsNo` sets and traces (and memory
/// budgets that drop the sets, so that confirmation rounds classify with
/// care too): both sound against the oracle, and the same labels and
/// undecided nodes. The shortcut must have acted (its counter is that of
/// the pass whose labels are kept; confirmation rounds use it unseen), so
/// the comparison is not vacuous; `structure.rs`'s unit test
/// `star_hits_tell_what_each_star_visits` checks the shortcut itself. An unsound shortcut (a member called
/// avoidable that its star visits) shows as a wrong No-must, that is a
/// Maybe where the oracle says Yes, or a label that differs.
#[test]
fn sharp_stars_keep_the_labels() {
    use postmortem_core::fsa::FsaLimits;
    let (mut acted, mut compared) = (0, 0);
    for seed in 0..1500u64 {
        let mut rng = Rng::new(seed ^ 0x5A_A2F5);
        let g = random_icfg(
            &mut rng,
            &GraphShape {
                max_functions: 3,
                max_body: 12,
            },
        );
        let r = random_report(&mut rng, &g, false);
        let k = 1 + rng.below(6);
        let r = with_ambiguous_obs_no(&mut rng, &g, r, k);
        let Some(truth) = oracle::recover(&g, &r) else {
            continue;
        };
        let run = |on: bool| {
            Fsa {
                limits: FsaLimits {
                    max_memory: if seed % 3 == 0 {
                        usize::MAX
                    } else {
                        8_000 << (seed % 4)
                    },
                    sharp_stars: on,
                    known_checks: on,
                    ..FsaLimits::default()
                },
            }
            .recover(&g, &r)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"))
        };
        let (with, without) = (run(true), run(false));
        let what = format!("seed {seed}");
        assert_sound(&with.labels, &truth, &what);
        assert_sound(&without.labels, &truth, &what);
        assert_eq!(with.labels, without.labels, "{what}");
        assert_eq!(with.undecided, without.undecided, "{what}");
        assert_eq!(without.stat("coarse_sharp"), 0, "{what}");
        acted += usize::from(with.stat("coarse_sharp") > 0);
        compared += 1;
    }
    eprintln!("{compared} pairs, the shortcut acted in {acted}");
    assert!(acted > 0, "the shortcut never acted");
}

/// Issue 25: exact checks that give their witness, and classes of held
/// members that a witness found so far misses called avoidable without a
/// check of their own (`FsaLimits::shared_witnesses`), against one check
/// per class: on random reports, both through the coarse tier (exact
/// checks on every held location, as in `coarse_tier_is_sound_and_refines_utl`)
/// and through the default flow with ambiguous `obsNo` sets and small
/// memory budgets (the first pass and the confirmation rounds), sound
/// against the oracle, the same labels, and never more undecided nodes.
/// The sharing and the grouped checks (all classes of a location at
/// once) must have acted. An unsound share (a class called
/// avoidable that every execution runs) shows as a Maybe where the oracle
/// says Yes, or labels that differ.
#[test]
fn shared_witnesses_keep_the_labels() {
    use postmortem_core::fsa::FsaLimits;
    let (mut acted, mut grouped, mut compared) = (0, 0, 0);
    for seed in 0..2000u64 {
        let mut rng = Rng::new(seed ^ 0x5_11A7);
        let coarse = seed % 2 == 0;
        let g = random_icfg(
            &mut rng,
            &GraphShape {
                max_functions: if coarse { 4 } else { 3 },
                max_body: if coarse { 5 } else { 12 },
            },
        );
        let mut r = random_report(&mut rng, &g, false);
        if !coarse {
            let k = 1 + rng.below(6);
            r = with_ambiguous_obs_no(&mut rng, &g, r, k);
        }
        let Some(truth) = oracle::recover(&g, &r) else {
            continue;
        };
        let run = |on: bool| {
            let limits = if coarse {
                FsaLimits {
                    max_states: 1,
                    contracted_first: false,
                    shared_witnesses: on,
                    ..FsaLimits::default()
                }
            } else {
                FsaLimits {
                    max_memory: 8_000 << (seed % 4),
                    shared_witnesses: on,
                    ..FsaLimits::default()
                }
            };
            Fsa { limits }
                .recover(&g, &r)
                .unwrap_or_else(|e| panic!("seed {seed}: {e}"))
        };
        let (with, without) = (run(true), run(false));
        let what = format!("seed {seed}\n{}", describe(&g, &r));
        assert_sound(&with.labels, &truth, &what);
        assert_sound(&without.labels, &truth, &what);
        assert_eq!(with.labels, without.labels, "{what}");
        assert!(
            with.undecided.iter().all(|v| without.undecided.contains(v)),
            "{what}"
        );
        assert_eq!(without.stat("coarse_checks_shared"), 0, "{what}");
        assert_eq!(without.stat("coarse_checks_grouped"), 0, "{what}");
        acted += usize::from(with.stat("coarse_checks_shared") > 0);
        grouped += usize::from(with.stat("coarse_checks_grouped") > 0);
        compared += 1;
    }
    eprintln!("{compared} pairs, witnesses shared in {acted}, classes grouped in {grouped}");
    assert!(acted > 10, "witnesses were shared in only {acted} pairs");
    assert!(grouped > 10, "classes were grouped in only {grouped} pairs");
}

/// A random value on `g`: 1-3 writes, some bad, maybe needed, with at
/// least one branch test.
fn random_tested_value(
    rng: &mut Rng,
    g: &postmortem_core::Icfg,
) -> postmortem_core::report::LastWrite {
    let mix = ValueMix {
        writes: 3,
        bad: 30,
        need: 30,
    };
    let mut w = random_value(rng, g, mix, "v".into());
    while w.tests.is_empty() {
        w.tests = postmortem_testkit::testgen::random_branch_tests(rng, g);
    }
    w
}

/// `Dfa::last_write` (through [`LastWrite::step`]) accepts exactly the
/// paths [`LastWrite::holds`] (the constraint's definition) accepts: random
/// values with branch tests, on random walks of random graphs and on
/// random node sequences.
#[test]
fn last_write_automaton_agrees_with_holds() {
    use postmortem_core::report::LastWrite;
    let (mut accepted, mut rejected_by_tests) = (0usize, 0usize);
    for seed in 0..cases() as u64 * 4 {
        let mut rng = Rng::new(seed ^ 0x7E57);
        let g = random_icfg(&mut rng, &GraphShape::default());
        let n = g.num_nodes();
        let w = random_tested_value(&mut rng, &g);
        let d = Dfa::last_write(Origin::Value(0), &w);
        let plain = LastWrite {
            tests: Vec::new(),
            ..w.clone()
        };
        for _ in 0..40 {
            let mut path = vec![g.start()];
            if rng.chance(80) {
                for _ in 0..rng.below(16) {
                    let succs: Vec<NodeId> =
                        g.succs(*path.last().unwrap()).map(|(t, _)| t).collect();
                    if succs.is_empty() {
                        break;
                    }
                    path.push(succs[rng.below(succs.len())]);
                }
            } else {
                path.extend((0..rng.below(12)).map(|_| NodeId::new(rng.below(n))));
            }
            let mut q = d.initial[0];
            for x in &path {
                q = d.step(q, x.as_u32());
                assert_ne!(
                    q, DEAD,
                    "seed {seed}: the value's automaton has no dead state"
                );
            }
            let by_dfa = d.accepting[q as usize];
            assert_eq!(by_dfa, w.holds(&path), "seed {seed}: {w:?} on {path:?}");
            accepted += usize::from(by_dfa);
            rejected_by_tests += usize::from(!by_dfa && plain.holds(&path));
        }
    }
    eprintln!("{accepted} accepted, {rejected_by_tests} rejected by the tests alone");
    assert!(
        accepted > 0 && rejected_by_tests > 0,
        "{accepted} {rejected_by_tests}"
    );
}

/// `Dfa::last_write` is minimal: "no write yet" and "a good write last"
/// are one state when no write is needed, and a value known only from a
/// test has the test's three states (ok, pending, failed), against 3 x 3
/// for the product of [`LastWrite::step`]. Fails if the
/// automaton is built without `Dfa::minimized`.
#[test]
fn last_write_automata_are_minimal() {
    use postmortem_core::report::{BranchTest, LastWrite, NodeSet};
    let n = |i: usize| NodeId::new(i);
    let w = |bad: Vec<NodeId>, need: bool, tests: Vec<BranchTest>| LastWrite {
        writes: NodeSet::new(vec![n(1), n(2)]).unwrap(),
        bad,
        need,
        what: "v".into(),
        tests,
    };
    let test = || {
        vec![BranchTest {
            branch: n(3),
            taken: n(4),
            others: vec![n(5)],
        }]
    };
    let states = |w: &LastWrite| Dfa::last_write(Origin::Value(0), w).num_states();
    // Needed: "none yet" and "a bad one last" both wait for a good one.
    assert_eq!(states(&w(vec![n(2)], true, vec![])), 2);
    assert_eq!(states(&w(vec![n(2)], false, vec![])), 2);
    assert_eq!(states(&w(vec![], false, test())), 3);
    // A good write last with the test ok, or pending; or waiting for a
    // good write (none yet, or the test failed since).
    assert_eq!(states(&w(vec![], true, test())), 3);
}

/// [`LastWrite::tests_as_writes`] (a test's other successors read as bad
/// writes, when only the branch enters them) accepts exactly the walks
/// of the graph that [`LastWrite::holds`] accepts, on random graphs and
/// values with branch tests; and its automaton agrees too. Fails if a
/// successor entered from elsewhere, or a path's first node, is taken
/// for a failed test.
#[test]
fn tests_as_writes_agree_with_holds_on_walks() {
    use postmortem_core::report::LastWrite;
    let (mut converted, mut walks, mut rejected_by_tests) = (0usize, 0usize, 0usize);
    for seed in 0..cases() as u64 * 8 {
        let mut rng = Rng::new(seed ^ 0xA5A5);
        let g = random_icfg(&mut rng, &GraphShape::default());
        let w = random_tested_value(&mut rng, &g);
        let Some(p) = w.tests_as_writes(&g) else {
            continue;
        };
        assert!(p.tests.is_empty());
        converted += usize::from(w.tests.iter().any(|t| !t.others.is_empty()));
        let d = Dfa::last_write(Origin::Value(0), &p);
        let plain = LastWrite {
            tests: Vec::new(),
            ..w.clone()
        };
        for _ in 0..60 {
            let mut path = vec![g.start()];
            for _ in 0..rng.below(20) {
                let succs: Vec<NodeId> = g.succs(*path.last().unwrap()).map(|(t, _)| t).collect();
                if succs.is_empty() {
                    break;
                }
                path.push(succs[rng.below(succs.len())]);
            }
            let want = w.holds(&path);
            assert_eq!(
                p.holds(&path),
                want,
                "seed {seed}: {w:?} as {p:?} on {path:?}"
            );
            let q = path.iter().fold(d.initial[0], |q, x| d.step(q, x.as_u32()));
            assert_eq!(
                d.accepting[q as usize], want,
                "seed {seed}: {p:?} on {path:?}"
            );
            walks += 1;
            rejected_by_tests += usize::from(!want && plain.holds(&path));
        }
    }
    eprintln!("{converted} converted with other successors, {walks} walks, {rejected_by_tests} rejected by the tests alone");
    assert!(
        converted > 10 && rejected_by_tests > 10,
        "{converted} {rejected_by_tests}"
    );
}
