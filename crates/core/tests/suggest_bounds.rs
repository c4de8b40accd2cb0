//! The dominator bounds of `suggest` (`Method::Bounds`) against the real
//! thing: on random programs and reports (values included), for every
//! candidate node and both observations, the bound must not exceed the
//! Maybe lines that re-running the analysis with the observation decides;
//! and `suggest` in bounds mode must print re-run counts where it says
//! they are exact and at most them elsewhere.

use postmortem_core::cs::Cs;
use postmortem_core::fsa::Fsa;
use postmortem_core::suggest::{self, analysis, lower_bounds, Crash, Limits, Method, Observation};
use postmortem_core::utl::Utl;
use postmortem_core::{Label, NodeId, Solver};
use postmortem_testkit::testgen::{random_icfg, random_report, GraphShape, Rng};
use std::collections::BTreeMap;

mod common;
use common::{cases, decided};

fn check(s: &(dyn Solver + Sync), expressible: bool, stream: u64) {
    let (mut pairs, mut positive, mut tight, mut listed) = (0, 0, 0, 0);
    for seed in 0..cases() {
        let mut rng = Rng::with_stream(seed, stream);
        let g = random_icfg(
            &mut rng,
            &GraphShape {
                max_functions: 3,
                max_body: 6,
            },
        );
        let report = random_report(&mut rng, &g, expressible);
        let Some(base) = analysis(s, &g, &report).expect("no limit") else {
            continue;
        };
        let first = common::first(s, &g, &report, seed);
        let crash = Crash {
            report: &report,
            base: &base,
            first: first.as_deref(),
        };
        let lb = lower_bounds(s, &g, crash);
        let mut exact: BTreeMap<NodeId, (Option<usize>, Option<usize>)> = BTreeMap::new();
        for n in g.nodes() {
            let Some((ran_lb, not_lb)) = lb[n.index()] else {
                continue;
            };
            let ran = decided(s, &g, &report, &base, n, Observation::Ran);
            let not = decided(s, &g, &report, &base, n, Observation::NotRan);
            exact.insert(n, (ran, not));
            for (what, bound, real) in [("ran", ran_lb, ran), ("not", not_lb, not)] {
                pairs += 1;
                positive += usize::from(bound > 0);
                // An impossible observation (the solver finds the point
                // surely ran or surely did not) is not made: nothing to
                // bound.
                let Some(real) = real else { continue };
                assert!(
                    bound <= real,
                    "seed {seed} {}: node {n:?} {what}: bound {bound} > re-run {real}",
                    s.name()
                );
                tight += usize::from(bound == real);
            }
        }
        // Bounds mode: exact where it says so, at most the re-run
        // elsewhere (here: under a budget of 2 analyses).
        for max in [None, Some(2)] {
            let r = suggest::suggest(
                s,
                &g,
                &report,
                &base,
                &Limits {
                    k: 3,
                    budget: None,
                    max_analyses: max,
                    threads: 2,
                    method: Method::Bounds,
                    analysis_time: None,
                },
            );
            let applies = g.async_functions().is_empty() && report.ran_somewhere.is_empty();
            assert_eq!(r.method == Method::Bounds, applies, "seed {seed}");
            if !applies {
                continue;
            }
            assert_eq!(r.below_bound, 0, "seed {seed} {}", s.name());
            for t in &r.top {
                listed += 1;
                let (ran, not) = exact[&t.point];
                assert!(t.worst > 0 && t.worst <= t.if_ran.min(t.if_not));
                if t.exact {
                    assert_eq!((ran, not), (Some(t.if_ran), Some(t.if_not)), "seed {seed}");
                } else {
                    assert!(max.is_some(), "seed {seed}: unconfirmed without a limit");
                    assert!(ran.is_none_or(|x| t.if_ran <= x), "seed {seed}");
                    assert!(not.is_none_or(|x| t.if_not <= x), "seed {seed}");
                }
            }
        }
    }
    // The bounds must say something, or the checks above are empty.
    assert!(
        positive * 4 > pairs,
        "{}: only {positive} of {pairs} bounds positive",
        s.name()
    );
    assert!(listed > 0);
    eprintln!(
        "{}: {pairs} bounds, {positive} positive, {tight} equal to the re-run",
        s.name()
    );
}

#[test]
fn utl_bounds_never_exceed_a_rerun() {
    check(&Utl::default(), true, 11);
}

#[test]
fn fsa_bounds_never_exceed_a_rerun() {
    check(&Fsa::default(), false, 12);
}

#[test]
fn cs_bounds_never_exceed_a_rerun() {
    check(&Cs::<Fsa>::default(), false, 13);
}

/// Groups in bounds mode: every listed point confirmed (no limit), its
/// counts the sums over the crashes of the re-run counts.
#[test]
fn group_bounds_are_confirmed_sums() {
    let s = Fsa::default();
    let mut listed = 0;
    for seed in 0..cases() / 3 {
        let mut rng = Rng::with_stream(seed, 14);
        let g = random_icfg(
            &mut rng,
            &GraphShape {
                max_functions: 3,
                max_body: 5,
            },
        );
        let mut reports = Vec::new();
        let mut bases = Vec::new();
        for _ in 0..2 + rng.below(2) {
            let r = random_report(&mut rng, &g, false);
            if let Some(b) = analysis(&s, &g, &r).expect("no limit") {
                reports.push(r);
                bases.push(b);
            }
        }
        let crashes: Vec<Crash<'_>> = reports
            .iter()
            .zip(&bases)
            .map(|(report, base)| Crash {
                report,
                base,
                first: None,
            })
            .collect();
        let limits = Limits {
            k: 2,
            budget: None,
            max_analyses: None,
            threads: 2,
            method: Method::Bounds,
            analysis_time: None,
        };
        let r = suggest::suggest_group(&s, &g, &crashes, &limits);
        if r.method != Method::Bounds {
            continue;
        }
        assert!(
            r.complete && r.below_bound == 0,
            "seed {seed}: {:?}",
            r.note
        );
        for t in &r.top {
            listed += 1;
            assert!(t.exact);
            let (mut ran, mut not, mut worst) = (0, 0, 0);
            for c in &crashes {
                if c.base[t.point.index()] != Label::Maybe {
                    continue;
                }
                let a = decided(&s, &g, c.report, c.base, t.point, Observation::Ran);
                let b = decided(&s, &g, c.report, c.base, t.point, Observation::NotRan);
                if let (Some(a), Some(b)) = (a, b) {
                    (ran, not, worst) = (ran + a, not + b, worst + a.min(b));
                }
            }
            assert_eq!(
                (t.if_ran, t.if_not, t.worst),
                (ran, not, worst),
                "seed {seed}"
            );
        }
    }
    assert!(listed > 0);
}
