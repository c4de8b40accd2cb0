//! `ProcessWide`: labels about the whole process when the graph has
//! asynchronous functions (signal handlers, thread start routines).
//!
//! The program (one letter a node):
//!
//! ```text
//! main:   M(entry) -> s (spawn: calls worker, falls through) -> p -> q -> c -> X(exit)
//!                                                              \-> r -> X
//! worker: W(entry) -> w -> v -> w   (loops forever, never returns)
//!                          v -> z -> Z(exit)    (z only if it ever stops)
//! ```

use postmortem_core::concurrency::ProcessWide;
use postmortem_core::fsa::Fsa;
use postmortem_core::solver::Recovery;
use postmortem_core::utl::Utl;
use postmortem_core::{
    Answer, Frame, Icfg, IcfgBuilder, Label, NodeId, NodeKind, NodeSet, NodeSpec, Origin, Query,
    Report, SolveError, Solver, Trace,
};

struct Prog {
    g: Icfg,
}

impl Prog {
    fn new(worker_is_async: bool, worker_returns: bool) -> Prog {
        let mut b = IcfgBuilder::new();
        let main = b.function("main");
        let worker = b.function("worker");
        let add = |b: &mut IcfgBuilder, id: &str, kind, f| {
            b.add_node(NodeSpec {
                ext_id: id,
                kind,
                func: f,
                label: id,
                lines: &[],
            })
            .unwrap()
        };
        use NodeKind::*;
        let m = add(&mut b, "M", Entry, main);
        let s = add(&mut b, "s", CallSite, main);
        let p = add(&mut b, "p", Statement, main);
        let q = add(&mut b, "q", Statement, main);
        let r = add(&mut b, "r", Statement, main);
        let c = add(&mut b, "c", Statement, main);
        let x = add(&mut b, "X", Exit, main);
        let w0 = add(&mut b, "W", Entry, worker);
        let w = add(&mut b, "w", Statement, worker);
        let v = add(&mut b, "v", Statement, worker);
        let z = add(&mut b, "z", Statement, worker);
        let zx = add(&mut b, "Z", Exit, worker);
        for (a, t) in [
            (m, s),
            (s, p),
            (p, q),
            (q, c),
            (c, x),
            (p, r),
            (r, x),
            (w0, w),
            (w, v),
            (v, w),
        ] {
            b.add_flow_edge(a, t);
        }
        if worker_returns {
            b.add_flow_edge(v, z);
            b.add_flow_edge(z, zx);
        }
        // pthread_create(worker): a library call that may call it.
        b.add_call_edge(s, w0);
        b.add_external_callee(s);
        if worker_is_async {
            b.mark_async(worker, s);
        }
        Prog {
            g: b.build().unwrap(),
        }
    }

    fn n(&self, id: &str) -> NodeId {
        self.g.lookup(id).unwrap()
    }

    fn labels(&self, s: &dyn Solver, r: &Report) -> String {
        let rec = s.recover(&self.g, r).unwrap();
        self.g
            .nodes()
            .map(|n| {
                let l = match rec.labels[n.index()] {
                    Label::Yes => 'Y',
                    Label::No => 'N',
                    Label::Maybe => '?',
                };
                format!("{}{l}", self.g.ext_id(n))
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A solver that records how each recovery was asked for (`recover`,
/// `hinted`, `refine`) and passes it to `inner`.
struct Spy<S> {
    inner: S,
    calls: std::cell::RefCell<Vec<&'static str>>,
}

impl<S> Spy<S> {
    fn new(inner: S) -> Spy<S> {
        Spy {
            inner,
            calls: Default::default(),
        }
    }
}

impl<S: Solver> Solver for Spy<S> {
    fn name(&self) -> &'static str {
        "spy"
    }
    fn check(
        &self,
        g: &Icfg,
        report: &Report,
        query: Option<&Query>,
    ) -> Result<postmortem_core::solver::Checked, SolveError> {
        self.inner.check(g, report, query)
    }
    fn recover(&self, g: &Icfg, report: &Report) -> Result<Recovery, SolveError> {
        self.calls.borrow_mut().push("recover");
        self.inner.recover(g, report)
    }
    fn recover_hinted(
        &self,
        g: &Icfg,
        report: &Report,
        hint: &[Label],
    ) -> Result<Recovery, SolveError> {
        self.calls.borrow_mut().push("hinted");
        self.inner.recover_hinted(g, report, hint)
    }
    fn refine_hint(
        &self,
        g: &Icfg,
        report: &Report,
        hint: &[Label],
        known: &[NodeId],
    ) -> Result<Recovery, SolveError> {
        self.calls.borrow_mut().push("refine");
        self.inner.refine_hint(g, report, hint, known)
    }
}

fn solvers() -> Vec<Box<dyn Solver>> {
    vec![
        Box::new(ProcessWide(Utl::default())),
        Box::new(ProcessWide(Fsa::default())),
    ]
}

#[test]
fn a_thread_that_never_returns_may_have_run() {
    let crash_in_main = |p: &Prog| Report {
        crash: Some(NodeSet::one(p.n("c"))),
        ..Report::default()
    };
    // The path alone: the worker never returns, so no path to the crash
    // runs it, and a solver on the path says No for w and v.
    let sync = Prog::new(false, false);
    for s in solvers() {
        assert_eq!(
            sync.labels(&*s, &crash_in_main(&sync)),
            "MY sY pY qY rN cY XN WN wN vN zN ZN"
        );
    }
    // As a thread, it may have run alongside: Maybe; main's own labels
    // stay, and z, which no edge reaches here, stays No.
    let threaded = Prog::new(true, false);
    for s in solvers() {
        assert_eq!(
            threaded.labels(&*s, &crash_in_main(&threaded)),
            "MY sY pY qY rN cY XN W? w? v? zN ZN"
        );
    }
}

#[test]
fn observations_of_thread_code_are_dropped_and_listed() {
    let p = Prog::new(true, true);
    // "v ran, then r ran" with the crash at c: on the path, the worker
    // returns before p, so v before r is possible and r would be Yes...
    let report = Report {
        crash: Some(NodeSet::one(p.n("c"))),
        obs_yes: vec![Trace {
            reliable: false,
            entries: vec![NodeSet::one(p.n("v")), NodeSet::one(p.n("q"))],
        }],
        ..Report::default()
    };
    for s in solvers() {
        let rec = s.recover(&p.g, &report).unwrap();
        // ... but v may have been seen in the thread, in any order: the
        // element is dropped (and said), so the worker is not forced.
        assert_eq!(rec.weakened.len(), 1, "{:?}", rec.weakened);
        assert_eq!(rec.weakened[0].origin, Origin::ObsYes(0));
        assert_eq!(rec.labels[p.n("q").index()], Label::Yes);
        assert_eq!(rec.labels[p.n("v").index()], Label::Maybe);
        assert_eq!(rec.labels[p.n("r").index()], Label::No);
    }
}

#[test]
fn a_crash_in_a_thread_leaves_the_rest_of_the_process_open() {
    let p = Prog::new(true, true);
    // Crash at v, in the worker; the stack's outermost frame is the worker.
    let report = Report {
        crash: Some(NodeSet::one(p.n("v"))),
        obs_no: vec![NodeSet::one(p.n("r"))],
        ..Report::default()
    };
    for s in solvers() {
        // On the path, main stops at s; but main's thread ran on: q, c and
        // X may have run. r is named by an obsNo set: it never ran.
        assert_eq!(
            p.labels(&*s, &report),
            "MY sY p? q? rN c? X? WY wY vY z? Z?"
        );
        // A query about main's code after the spawn is possible too.
        let q = Query::MayRun(p.n("c"));
        assert_eq!(
            s.check(&p.g, &report, Some(&q)).unwrap().answer,
            Answer::Possible
        );
    }
    // A stack whose outermost call is main's shows a synchronous crash:
    // here the worker is entered through main's spawn call.
    let sync_stack = Report {
        crash: Some(NodeSet::one(p.n("v"))),
        stack: vec![Frame {
            call: NodeSet::one(p.n("s")),
            entry: NodeSet::one(p.n("W")),
        }],
        ..Report::default()
    };
    for s in solvers() {
        let labels = p.labels(&*s, &sync_stack);
        // Still a thread's entry on the stack: the rest stays open.
        assert!(labels.contains("c?"), "{labels}");
    }
}

#[test]
fn programs_without_asynchronous_functions_are_untouched() {
    let p = Prog::new(false, true);
    let report = Report {
        crash: Some(NodeSet::one(p.n("c"))),
        obs_yes: vec![Trace {
            reliable: true,
            entries: vec![NodeSet::one(p.n("v"))],
        }],
        ..Report::default()
    };
    let plain = Utl::default().recover(&p.g, &report).unwrap();
    let wrapped = ProcessWide(Utl::default()).recover(&p.g, &report).unwrap();
    assert_eq!(plain.labels, wrapped.labels);
    assert_eq!(plain.weakened, wrapped.weakened);
}

#[test]
fn a_thread_whose_start_never_ran_costs_no_precision() {
    let p = Prog::new(true, false);
    // An observation says the spawn never ran: then neither did the
    // thread, and its code is No (the path-alone answer).
    let report = Report {
        crash: Some(NodeSet::one(p.n("c"))),
        obs_no: vec![NodeSet::one(p.n("s"))],
        ..Report::default()
    };
    for s in solvers() {
        let rec = s.recover(&p.g, &report);
        // s is on the only path to c: the report is impossible.
        assert!(rec.is_err());
    }
    // Spawn on a branch the report rules out.
    let mut b = IcfgBuilder::new();
    let main = b.function("main");
    let worker = b.function("worker");
    let node = |b: &mut IcfgBuilder, id: &str, kind, f| {
        b.add_node(NodeSpec {
            ext_id: id,
            kind,
            func: f,
            label: id,
            lines: &[],
        })
        .unwrap()
    };
    use NodeKind::*;
    let m = node(&mut b, "M", Entry, main);
    let s = node(&mut b, "s", CallSite, main);
    let a = node(&mut b, "a", Statement, main);
    let c = node(&mut b, "c", Statement, main);
    let w0 = node(&mut b, "W", Entry, worker);
    let w = node(&mut b, "w", Statement, worker);
    for (x, y) in [(m, s), (m, a), (s, c), (a, c), (w0, w), (w, w)] {
        b.add_flow_edge(x, y);
    }
    b.add_call_edge(s, w0);
    b.add_external_callee(s);
    b.mark_async(worker, s);
    let g = b.build().unwrap();
    let labels = |r: &Report, s: &dyn Solver| -> Vec<Label> { s.recover(&g, r).unwrap().labels };
    let skipped = Report {
        crash: Some(NodeSet::one(c)),
        obs_no: vec![NodeSet::one(s)],
        ..Report::default()
    };
    let maybe = Report {
        crash: Some(NodeSet::one(c)),
        ..Report::default()
    };
    for sol in solvers() {
        let l = labels(&skipped, &*sol);
        assert_eq!((l[w.index()], l[w0.index()]), (Label::No, Label::No));
        let l = labels(&maybe, &*sol);
        assert_eq!((l[w.index()], l[w0.index()]), (Label::Maybe, Label::Maybe));
    }
}

/// With every solver: `report` (whose only evidence of the worker is
/// that `v` ran in some thread) makes `v`, `W` and `w` Yes after recovery
/// (from Maybe) and nothing else changes.
fn marks_v_and_its_dominators(p: &Prog, report: &Report) {
    use postmortem_core::concurrency::mark_ran_somewhere;
    for s in solvers() {
        let mut rec = s.recover(&p.g, report).unwrap();
        let before = rec.labels.clone();
        assert_eq!(before[p.n("v").index()], Label::Maybe, "{}", s.name());
        let marked = mark_ran_somewhere(&p.g, report, &mut rec.labels).unwrap();
        let (changed, dropped) = (marked.changed, marked.dropped);
        assert_eq!((changed, dropped), (3, vec![]), "{}", s.name());
        for n in p.g.nodes() {
            let id = p.g.ext_id(n);
            let want = if ["W", "w", "v"].contains(&id) {
                Label::Yes
            } else {
                before[n.index()]
            };
            assert_eq!(rec.labels[n.index()], want, "{}: {id}", s.name());
        }
    }
}

#[test]
fn a_node_that_ran_in_some_thread_is_yes_with_its_dominators_only() {
    use postmortem_core::concurrency::mark_ran_somewhere;
    let p = Prog::new(true, true);
    // A set coverage flag of v, in a core with two threads: v ran in some
    // thread, so did W and w before it in that activation; nothing says
    // the worker went on to z, and main's labels do not change.
    let report = Report {
        crash: Some(NodeSet::one(p.n("c"))),
        ran_somewhere: vec![p.n("v")],
        ..Report::default()
    };
    marks_v_and_its_dominators(&p, &report);
    // Where the solver says No (the worker is no thread here, and it
    // cannot run before the crash), a node that ran is a contradiction:
    // an error, the labels left as they were.
    let sync = Prog::new(false, false);
    let report = Report {
        crash: Some(NodeSet::one(sync.n("c"))),
        ran_somewhere: vec![sync.n("v")],
        ..Report::default()
    };
    for s in solvers() {
        let mut rec = s.recover(&sync.g, &report).unwrap();
        let before = rec.labels.clone();
        assert_eq!(
            mark_ran_somewhere(&sync.g, &report, &mut rec.labels),
            Err(sync.n("v"))
        );
        assert_eq!(rec.labels, before);
    }
}

/// A threaded core's stack residue (`residue_somewhere`) is taken like a
/// set flag where the labels allow it (the node and its dominators Yes),
/// and dropped, never an error, where they contradict it; a flag beside
/// it is still a fact.
#[test]
fn residue_in_some_thread_is_yes_where_possible_and_dropped_elsewhere() {
    use postmortem_core::concurrency::mark_ran_somewhere;
    let p = Prog::new(true, true);
    let report = Report {
        crash: Some(NodeSet::one(p.n("c"))),
        residue_somewhere: vec![p.n("v")],
        ..Report::default()
    };
    marks_v_and_its_dominators(&p, &report);
    // The worker cannot run here: the residue misled, it is dropped and
    // nothing changes; a flag of a node that can run is still used.
    let sync = Prog::new(false, false);
    let residue = Report {
        crash: Some(NodeSet::one(sync.n("c"))),
        residue_somewhere: vec![sync.n("v")],
        ..Report::default()
    };
    for s in solvers() {
        let mut rec = s.recover(&sync.g, &residue).unwrap();
        let before = rec.labels.clone();
        assert_eq!(before[sync.n("v").index()], Label::No, "{}", s.name());
        let marked = mark_ran_somewhere(&sync.g, &residue, &mut rec.labels).unwrap();
        assert_eq!(
            (marked.changed, marked.dropped),
            (0, vec![sync.n("v")]),
            "{}",
            s.name()
        );
        assert_eq!(rec.labels, before);
        let flagged = Report {
            ran_somewhere: vec![sync.n("c")],
            ..residue.clone()
        };
        let mut rec = s.recover(&sync.g, &flagged).unwrap();
        let marked = mark_ran_somewhere(&sync.g, &flagged, &mut rec.labels).unwrap();
        assert_eq!(marked.dropped, vec![sync.n("v")], "{}", s.name());
        assert_eq!(rec.labels[sync.n("c").index()], Label::Yes);
    }
}

#[test]
fn a_node_that_ran_behind_nodes_that_never_ran_is_a_contradiction() {
    use postmortem_core::local::activation_dominators;
    let p = Prog::new(true, true);
    let n = |id: &str| p.n(id);
    let maybe = vec![Label::Maybe; p.g.num_nodes()];
    assert_eq!(
        activation_dominators(&p.g, &maybe, &[n("v")]),
        Ok(vec![n("W"), n("w"), n("v")])
    );
    // z: after v, which the loop may leave; w and v dominate it.
    assert_eq!(
        activation_dominators(&p.g, &maybe, &[n("z")]),
        Ok(vec![n("W"), n("w"), n("v"), n("z")])
    );
    let mut labels = maybe.clone();
    labels[n("w").index()] = Label::No;
    assert_eq!(activation_dominators(&p.g, &labels, &[n("v")]), Err(n("v")));
    let mut labels = maybe;
    labels[n("W").index()] = Label::No;
    assert_eq!(activation_dominators(&p.g, &labels, &[n("v")]), Err(n("v")));
}

/// With asynchronous code, a hint (labels of a weaker report) reaches the
/// inner solver's recovery of the crash path alone, where it is sound,
/// and not the rounds with live asynchronous code, where it need not be.
/// (Value stages of programs with signal handlers recovered the path
/// alone without it.) A round whose weakening drops nothing recovers
/// the very report of the path alone: it is not recovered again
/// (`async_reused`), and the labels are the same.
#[test]
fn a_hint_reaches_the_recovery_of_the_path_alone() {
    let p = Prog::new(true, false);
    // `w` observed: the round with the worker live drops it.
    let r = Report {
        crash: Some(NodeSet::one(p.n("c"))),
        obs_yes: vec![Trace {
            reliable: false,
            entries: vec![NodeSet::one(p.n("w"))],
        }],
        ..Report::default()
    };
    let spy = ProcessWide(Spy::new(Fsa::default()));
    let plain = spy.recover(&p.g, &r).unwrap();
    let unhinted = spy.0.calls.replace(Vec::new());
    // The path alone, then a round with the worker live.
    assert_eq!(unhinted, vec!["recover", "recover"]);
    let weaker = Report::default();
    let hint = spy.recover(&p.g, &weaker).unwrap().labels;
    spy.0.calls.replace(Vec::new());
    let hinted = spy.recover_hinted(&p.g, &r, &hint).unwrap();
    assert_eq!(*spy.0.calls.borrow(), vec!["hinted", "recover"]);
    assert_eq!(hinted.labels, plain.labels);
    // Nothing for the round to drop: the path alone only, its labels
    // relaxed.
    let bare = Report {
        obs_yes: Vec::new(),
        ..r
    };
    spy.0.calls.replace(Vec::new());
    let once = spy.recover(&p.g, &bare).unwrap();
    assert_eq!(*spy.0.calls.borrow(), vec!["recover"]);
    assert_eq!(once.stat("async_reused"), 1);
    let inner = Fsa::default();
    let again = inner
        .recover(&p.g, &bare)
        .map(|mut out| {
            postmortem_core::concurrency::Concurrency::with_live(
                &p.g,
                &bare,
                &[p.g.function_by_name("worker").unwrap()],
            )
            .relax(&mut out.labels);
            out.labels
        })
        .unwrap();
    assert_eq!(once.labels, again);
}

/// A value stage's refined hint (`refine_hint`) is refined in the rounds
/// with asynchronous code too, not recovered again: the round's weakened
/// report admits every execution the report does, and the hint holds on
/// all of them (issue 35: on bzip2's function-flag cores every value
/// stage recovered its round whole, 140 ms where refining takes 31 ms).
/// The labels are those of a whole recovery of the same report. The
/// rounds start from the code the hint leaves live, without recovering
/// the path alone first (a second bulk pass in a third of bzip2's value
/// stages).
#[test]
fn a_refined_hint_is_refined_in_the_rounds_too() {
    use postmortem_core::cs::Cs;
    let p = Prog::new(true, false);
    let spy = ProcessWide(Spy::new(Cs::<Fsa> {
        best: true,
        ..Cs::default()
    }));
    // The hint: the process-wide labels of a weaker report (no `obsNo`).
    let base = Report {
        crash: Some(NodeSet::one(p.n("c"))),
        obs_yes: vec![Trace {
            reliable: false,
            entries: vec![NodeSet::one(p.n("w"))],
        }],
        ..Report::default()
    };
    let hint = spy.recover(&p.g, &base).unwrap().labels;
    // `r` on the crash path; `w` observed, which the round with the
    // worker live drops (so the round's report is not the path alone's).
    let stronger = Report {
        obs_no: vec![NodeSet::one(p.n("r"))],
        ..base
    };
    spy.0.calls.replace(Vec::new());
    let refined = spy.refine_hint(&p.g, &stronger, &hint, &[]).unwrap();
    // One round with the worker live, refined; not the path alone first
    // (the hint leaves the worker live already).
    assert_eq!(*spy.0.calls.borrow(), vec!["refine"]);
    assert_eq!(refined.stat("async_reused"), 0);
    let whole = spy.recover(&p.g, &stronger).unwrap();
    assert_eq!(refined.labels, whole.labels);
    assert!(
        refined
            .weakened
            .iter()
            .any(|w| w.origin == Origin::ObsYes(0)),
        "{:?}",
        refined.weakened
    );
}

/// A value's branch test that a thread (or a signal handler) may run is
/// dropped, its tests on the crashing path kept: with no write off the
/// path, each of those saw the value the crashing path last stored.
/// (All were dropped before: bzip2's signal handler tests its globals,
/// so none of their tests counted.) Sound: the labels with the kept test
/// hold on the oracle's paths.
#[test]
fn only_the_branch_tests_off_the_path_are_dropped() {
    use postmortem_core::concurrency::Concurrency;
    use postmortem_core::{BranchTest, LastWrite};
    let p = Prog::new(true, true);
    let value = LastWrite {
        writes: NodeSet::one(p.n("M")),
        bad: Vec::new(),
        need: false,
        what: "flag = 1 (global)".into(),
        tests: vec![
            // In the worker: dropped.
            BranchTest {
                branch: p.n("v"),
                taken: p.n("w"),
                others: vec![p.n("z")],
            },
            // On the crashing path: kept, it sends `p` to `r`.
            BranchTest {
                branch: p.n("p"),
                taken: p.n("r"),
                others: vec![p.n("q")],
            },
        ],
    };
    let r = Report {
        crash: Some(NodeSet::one(p.n("X"))),
        values: vec![value],
        ..Report::default()
    };
    let c = Concurrency::of(&p.g, &r).unwrap();
    let (weak, why) = c.weaken(&r);
    assert_eq!(weak.values[0].tests.len(), 1);
    assert_eq!(weak.values[0].tests[0].branch, p.n("p"));
    assert!(
        why.iter()
            .any(|w| w.origin == Origin::Value(0) && w.how.contains("1 of 2")),
        "{why:?}"
    );
    // The kept test decides the branch on the whole-process labels: `q`
    // and `c` did not run, `r` did (FSA: UTL cannot express tests).
    let labels = p.labels(&ProcessWide(Fsa::default()), &r);
    for want in ["rY", "qN", "cN"] {
        assert!(labels.contains(want), "{want}: {labels}");
    }
}
