//! The UTL bounds of `suggest` for a solver that refines UTL (`best`):
//! on random programs and reports, `best` decides every node UTL decides
//! (`Solver::refines_utl`), so for every candidate and both observations
//! the Maybe lines of `best`'s base that UTL's re-run decides are at most
//! those `best`'s re-run decides, and an observation UTL finds impossible
//! `best` finds impossible too; `suggest` in bounds mode lists re-run
//! counts where it says they are exact and at most them elsewhere.

use postmortem_core::cs::Cs;
use postmortem_core::fsa::Fsa;
use postmortem_core::solver::Checked;
use postmortem_core::suggest::{
    self, analysis, analysis_before_lift, observe, Limits, Method, Observation,
};
use postmortem_core::utl::Utl;
use postmortem_core::{Answer, Icfg, Label, NodeId, Query, Recovery, Report, SolveError, Solver};
use postmortem_testkit::testgen::{random_icfg, random_report, GraphShape, Rng};
use std::collections::BTreeMap;

mod common;
use common::{cases, decided, line_labels};

/// A base that decides nothing: `best` over it must still decide every
/// node UTL decides (by its merge, not by FSA's precision).
#[derive(Default)]
struct Blind;

impl Solver for Blind {
    fn name(&self) -> &'static str {
        "blind"
    }

    fn check(&self, _: &Icfg, _: &Report, _: Option<&Query>) -> Result<Checked, SolveError> {
        Ok(Checked {
            answer: Answer::Possible,
            weakened: Vec::new(),
            witness: None,
        })
    }

    fn recover(&self, g: &Icfg, _: &Report) -> Result<Recovery, SolveError> {
        Ok(Recovery {
            labels: vec![Label::Maybe; g.num_nodes()],
            weakened: Vec::new(),
            undecided: Vec::new(),
            stats: Vec::new(),
        })
    }
}

#[test]
fn best_over_any_base_decides_what_utl_decides() {
    let s = Cs {
        base: Blind,
        best: true,
        ..Cs::default()
    };
    assert!(s.refines_utl());
    let (mut checked, mut decided_by_utl) = (0, 0);
    for seed in 0..cases() {
        let mut rng = Rng::with_stream(seed, 23);
        let g = random_icfg(
            &mut rng,
            &GraphShape {
                max_functions: 3,
                max_body: 6,
            },
        );
        let report = random_report(&mut rng, &g, false);
        let (Ok(b), Ok(u)) = (s.recover(&g, &report), Utl::default().recover(&g, &report)) else {
            continue;
        };
        // Hinted too (a hint that decides nothing): the base does not take
        // it, so `best` merges UTL's labels all the same.
        let hint = vec![Label::Maybe; g.num_nodes()];
        let h = s.recover_hinted(&g, &report, &hint).expect("as unhinted");
        checked += 1;
        for (i, (&x, &y)) in b.labels.iter().zip(&u.labels).enumerate() {
            decided_by_utl += usize::from(y != Label::Maybe);
            assert!(
                y == Label::Maybe || x == y,
                "seed {seed}: node {i}: utl {y:?}, best over a blind base {x:?}"
            );
            assert!(
                y == Label::Maybe || h.labels[i] == y,
                "seed {seed}: node {i}: utl {y:?}, hinted best over a blind base {:?}",
                h.labels[i]
            );
        }
    }
    assert!(checked > 0 && decided_by_utl > 0);
}

fn best() -> Cs<Fsa> {
    Cs {
        best: true,
        ..Cs::default()
    }
}

/// Base-Maybe lines of `base` that `labels` decide.
fn decides(g: &postmortem_core::Icfg, base: &[Label], labels: &[Label]) -> usize {
    let before = line_labels(g, base);
    let after = line_labels(g, labels);
    before
        .iter()
        .filter(|(k, &l)| l == Label::Maybe && after[k] != Label::Maybe)
        .count()
}

#[test]
fn best_refines_utl_and_utl_reruns_bound_best_reruns() {
    let (s, u) = (best(), Utl::default());
    assert!(s.refines_utl() && u.refines_utl() && !Fsa::default().refines_utl());
    let (mut pairs, mut positive, mut tight, mut impossible, mut above_dom) = (0, 0, 0, 0, 0);
    for seed in 0..cases() {
        let mut rng = Rng::with_stream(seed, 21);
        let g = random_icfg(
            &mut rng,
            &GraphShape {
                max_functions: 3,
                max_body: 6,
            },
        );
        let mut report = random_report(&mut rng, &g, false);
        // UTL bounds are used only without values in stages.
        report.values.clear();
        report.residue.clear();
        let Some(base) = analysis(&s, &g, &report).expect("no limit") else {
            continue;
        };
        // Containment on the base report itself.
        if let Some(ub) = analysis_before_lift(&u, &g, &report).expect("no limit") {
            for (i, (&b, &x)) in base.iter().zip(&ub).enumerate() {
                assert!(
                    x == Label::Maybe || b == x,
                    "seed {seed}: node {i}: utl {x:?}, best {b:?}"
                );
            }
        }
        let first = common::first(&s, &g, &report, seed);
        let lb = suggest::lower_bounds(
            &s,
            &g,
            suggest::Crash {
                report: &report,
                base: &base,
                first: first.as_deref(),
            },
        );
        for n in g.nodes() {
            if base[n.index()] != Label::Maybe || !suggest::instrumentable(&g, n) {
                continue;
            }
            for (k, o) in [Observation::Ran, Observation::NotRan]
                .into_iter()
                .enumerate()
            {
                let r = observe(&report, n, o);
                let ul = analysis_before_lift(&u, &g, &r).expect("no limit");
                let real = decided(&s, &g, &report, &base, n, o);
                pairs += 1;
                let Some(ul) = ul else {
                    impossible += 1;
                    assert_eq!(
                        real, None,
                        "seed {seed}: {n:?} {o:?}: utl impossible, best not"
                    );
                    continue;
                };
                let bound = decides(&g, &base, &ul);
                positive += usize::from(bound > 0);
                let Some(real) = real else { continue };
                assert!(
                    bound <= real,
                    "seed {seed}: {n:?} {o:?}: utl bound {bound} > best re-run {real}"
                );
                tight += usize::from(bound == real);
                let dom = lb[n.index()].map_or(0, |b| if k == 0 { b.0 } else { b.1 });
                above_dom += usize::from(bound > dom);
            }
        }
    }
    assert!(
        positive * 4 > pairs,
        "only {positive} of {pairs} UTL bounds positive"
    );
    eprintln!(
        "best: {pairs} observations, {positive} UTL bounds positive, {tight} equal to the re-run, \
         {above_dom} above the dominator bound, {impossible} impossible"
    );
}

/// `suggest` in bounds mode with `best`: UTL's pass runs, counts are
/// re-run counts where exact and at most them elsewhere (under a limit of
/// a few analyses), and no confirmed count is below its bound.
#[test]
fn best_in_bounds_mode_lists_utl_bounds_below_reruns() {
    let s = best();
    let (mut listed, mut by_utl, mut utl_runs) = (0, 0, 0);
    for seed in 0..cases() {
        let mut rng = Rng::with_stream(seed, 22);
        let g = random_icfg(
            &mut rng,
            &GraphShape {
                max_functions: 3,
                max_body: 6,
            },
        );
        let mut report = random_report(&mut rng, &g, false);
        report.values.clear();
        report.residue.clear();
        let Some(base) = analysis(&s, &g, &report).expect("no limit") else {
            continue;
        };
        let mut exact: BTreeMap<NodeId, (Option<usize>, Option<usize>)> = BTreeMap::new();
        for max in [None, Some(4), Some(8)] {
            let r = suggest::suggest(
                &s,
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
            if r.method != Method::Bounds {
                continue;
            }
            utl_runs += r.utl_analyses;
            assert_eq!(r.below_bound, 0, "seed {seed}: {:?}", r.note);
            for t in &r.top {
                listed += 1;
                by_utl += usize::from(t.utl_bound);
                let (ran, not) = *exact.entry(t.point).or_insert_with(|| {
                    (
                        decided(&s, &g, &report, &base, t.point, Observation::Ran),
                        decided(&s, &g, &report, &base, t.point, Observation::NotRan),
                    )
                });
                assert!(t.worst > 0 && t.worst <= t.if_ran.min(t.if_not));
                if t.exact {
                    assert!(!t.utl_bound);
                    assert_eq!((ran, not), (Some(t.if_ran), Some(t.if_not)), "seed {seed}");
                } else {
                    assert!(max.is_some(), "seed {seed}: unconfirmed without a limit");
                    assert!(ran.is_none_or(|x| t.if_ran <= x), "seed {seed}");
                    assert!(not.is_none_or(|x| t.if_not <= x), "seed {seed}");
                }
            }
        }
    }
    assert!(
        listed > 0 && by_utl > 0 && utl_runs > 0,
        "{listed} {by_utl} {utl_runs}"
    );
    eprintln!("best: {listed} points listed, {by_utl} with UTL bounds, {utl_runs} UTL re-runs");
}
