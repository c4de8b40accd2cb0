//! Code that runs off the crashing thread's path: signal handlers and
//! threads.
//!
//! Every solver reasons about *one* path, from the program's start to the
//! crash. A process with signal handlers or threads (the graph's
//! [asynchronous functions](Icfg::async_functions)) runs more than that
//! path: a handler interrupts the path at any point, a thread runs
//! alongside it, and either may be where the crash happened. A label
//! therefore means: **the process ran this node, in any thread, before the
//! crash**. [`ProcessWide`] wraps any solver so that its answers keep that
//! meaning soundly:
//!
//! 1. *Asynchronous code* is every node an asynchronous function may
//!    execute: the closure from its entry over flow edges (non-local jumps
//!    included), call edges, and from each call site to its return sites.
//! 2. *The crash may lie in asynchronous code* when a crash node is
//!    asynchronous and the stack does not show a synchronous context (its
//!    outermost call made by `main`, no frame entering an asynchronous
//!    function). Then the rest of the process (the interrupted code, the
//!    other threads, `main`'s thread) may have run anything reachable from
//!    the start, alongside the crashing path.
//! 3. *Observations of code that may run off the path* (asynchronous code;
//!    when the crash may lie in asynchronous code, any code) may come from
//!    another thread, in any order relative to the path: each `obsYes`
//!    element that names such a node is dropped (an unreliable trace keeps
//!    its other elements; a reliable or bursty trace that names one is
//!    dropped whole), and each drop is listed as a weakening. `obsNo` sets
//!    are kept: "never ran" is a fact about the whole process.
//! 4. *No becomes Maybe* for every node of code that may run off the path.
//!    A node named alone by an `obsNo` set keeps No.
//! 5. *Queries*: "may n have run?" is possible for every node whose No
//!    was relaxed. Other queries are answered on the path alone.
//!
//! An asynchronous function runs only after the call that registers it
//! (`signal`, `pthread_create`, ...; see [`Icfg::async_registrations`])
//! ran. Bulk recovery uses that: it first solves on the path alone, where
//! each registration call also calls the function it registers, so that
//! code on the far side of the spawn is reachable; only the functions
//! whose registration is not No are *live*, and steps 1 to 4 are applied
//! for them, again until no registration becomes live. A thread that
//! evidence shows was never started costs no precision. If the path alone
//! is impossible, or the crash may lie in asynchronous code, every
//! asynchronous function is live.
//!
//! Yes stays as the solver found it: a node on every consistent path of
//! the crashing context ran in the process. Programs without asynchronous
//! functions are passed through untouched.

use crate::graph::BitSet;
use crate::icfg::{EdgeKind, Icfg};
use crate::ids::{FuncId, NodeId};
use crate::report::{Bursty, Origin, Report, Trace};
use crate::solver::{Answer, Checked, Label, Query, Recovery, SolveError, Solver, Weakening};

/// What the asynchronous functions of a graph mean for one report.
#[derive(Clone, Debug)]
pub struct Concurrency {
    /// Nodes an asynchronous function may execute.
    pub async_nodes: BitSet,
    /// Nodes that may run off the crashing path: their observations are
    /// dropped, and their No label is relaxed to Maybe.
    pub off_path: BitSet,
    /// Nodes whose No label is relaxed to Maybe (`off_path` less the
    /// nodes an `obsNo` set names alone).
    pub relaxed: BitSet,
    /// Whether the crash may lie in asynchronous code.
    pub crash_is_async: bool,
}

impl Concurrency {
    /// `None` when the graph has no asynchronous function.
    pub fn of(g: &Icfg, report: &Report) -> Option<Concurrency> {
        if g.async_functions().is_empty() {
            return None;
        }
        Some(Concurrency::with_live(g, report, g.async_functions()))
    }

    /// With only the asynchronous functions `live` (every one is used to
    /// tell whether the crash may lie in asynchronous code).
    pub fn with_live(g: &Icfg, report: &Report, live: &[FuncId]) -> Concurrency {
        let entries = |fs: &[FuncId]| -> Vec<NodeId> {
            fs.iter().filter_map(|&f| g.function(f).entry).collect()
        };
        let all_roots = entries(g.async_functions());
        let roots = entries(live);
        let async_nodes = closure(g, &roots, false);
        // The stack shows a synchronous context when its outermost call
        // is made by the program's start function (`main`) and no frame
        // enters an asynchronous function.
        let root_entry =
            |s: &crate::report::NodeSet| s.nodes().iter().any(|n| all_roots.contains(n));
        let main = g.function_by_name("main");
        let starts = |n: &NodeId| {
            let f = g.func_of(*n);
            f == g.func_of(g.start()) || Some(f) == main
        };
        let synchronous_stack = report
            .stack
            .first()
            .is_some_and(|f| f.call.nodes().iter().all(starts))
            && !report.stack.iter().any(|f| root_entry(&f.entry));
        let crash_is_async = !synchronous_stack
            && match &report.crash {
                Some(c) => {
                    let all_async = closure(g, &all_roots, false);
                    c.nodes().iter().any(|n| all_async.contains(n.index()))
                }
                None => true,
            };
        let off_path = if crash_is_async {
            closure(g, &[g.start()], true)
        } else {
            async_nodes.clone()
        };
        let mut relaxed = off_path.clone();
        for s in &report.obs_no {
            if let Some(n) = s.single() {
                relaxed.remove(n.index());
            }
        }
        Concurrency {
            async_nodes,
            off_path,
            relaxed,
            crash_is_async,
        }
    }

    /// The asynchronous functions registered at a site that `labels` does
    /// not rule out, plus `live`.
    fn live_after(g: &Icfg, labels: &[Label], live: &[FuncId]) -> Vec<FuncId> {
        let mut out: Vec<FuncId> = g
            .async_registrations()
            .iter()
            .filter(|(site, _)| labels[site.index()] != Label::No)
            .map(|&(_, f)| f)
            .chain(live.iter().copied())
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The report without observations of code that may run off the path,
    /// and what was dropped.
    pub fn weaken(&self, report: &Report) -> (Report, Vec<Weakening>) {
        let mut r = report.clone();
        let mut weakened = Vec::new();
        let is_async = |s: &crate::report::NodeSet| {
            s.nodes().iter().any(|n| self.off_path.contains(n.index()))
        };
        for (i, t) in r.obs_yes.iter_mut().enumerate() {
            let k = t.entries.iter().filter(|e| is_async(e)).count();
            if k == 0 {
                continue;
            }
            let how = if t.reliable {
                *t = Trace {
                    reliable: false,
                    entries: Vec::new(),
                };
                "dropped: a reliable trace that names code a signal handler or another thread may run".to_string()
            } else {
                t.entries.retain(|e| !is_async(e));
                format!("{k} element(s) dropped: code a signal handler or another thread may run, in any order")
            };
            weakened.push(Weakening {
                origin: Origin::ObsYes(i),
                how,
            });
        }
        for (i, b) in r.bursty.iter_mut().enumerate() {
            if b.bursts.iter().flatten().any(is_async) {
                *b = Bursty { bursts: Vec::new() };
                weakened.push(Weakening {
                    origin: Origin::Bursty(i),
                    how: "dropped: names code a signal handler or another thread may run"
                        .to_string(),
                });
            }
        }
        for (i, v) in r.values.iter_mut().enumerate() {
            // A test that code off the path may run is dropped, the others
            // kept: with no write off the path, every occurrence of a kept
            // test on the crashing thread's path saw the value its last
            // write there left (a handler's test neither writes it nor is
            // in the alphabet any more). (Dropping them all lost every
            // test of bzip2's globals, which its signal handler tests.)
            let before = v.tests.len();
            if !is_async(&v.writes) {
                v.tests.retain(|t| {
                    !std::iter::once(&t.branch)
                        .chain([&t.taken])
                        .chain(&t.others)
                        .any(|n| self.off_path.contains(n.index()))
                });
            }
            if v.tests.len() < before {
                weakened.push(Weakening {
                    origin: Origin::Value(i),
                    how: format!(
                        "{}: {} of {before} branch tests dropped: a signal handler or another thread may run them",
                        v.what,
                        before - v.tests.len()
                    ),
                });
            }
            if is_async(&v.writes) {
                v.bad.clear();
                v.need = false;
                v.tests.clear();
                weakened.push(Weakening {
                    origin: Origin::Value(i),
                    how: format!(
                        "{}: dropped: a signal handler or another thread may write it",
                        v.what
                    ),
                });
            }
        }
        (r, weakened)
    }

    /// Relaxes No to Maybe where the process may have run a node off the
    /// path.
    pub fn relax(&self, labels: &mut [Label]) {
        for (v, l) in labels.iter_mut().enumerate() {
            if *l == Label::No && self.relaxed.contains(v) {
                *l = Label::Maybe;
            }
        }
    }
}

/// Nodes reachable from `from`: over flow and call edges, and from a call
/// site to its return sites; with `returns`, over return edges too.
fn closure(g: &Icfg, from: &[NodeId], returns: bool) -> BitSet {
    let mut seen = BitSet::new(g.num_nodes());
    let mut stack: Vec<NodeId> = Vec::new();
    for &n in from {
        if seen.insert(n.index()) {
            stack.push(n);
        }
    }
    while let Some(n) = stack.pop() {
        let next = g
            .succs(n)
            .filter(|&(_, k)| returns || k != EdgeKind::Return)
            .map(|(t, _)| t)
            .chain(g.return_sites(n));
        for t in next {
            if seen.insert(t.index()) {
                stack.push(t);
            }
        }
    }
    seen
}

/// Bulk recovery with the observations of off-path code dropped and its No
/// labels relaxed.
trait RecoverWith {
    /// `report` recovered with the asynchronous code `c`; `alone`: the
    /// recovery of the crash path alone, which stands for the report's
    /// when the weakening drops nothing (the very same report); `refine`:
    /// a [`Hint::Refined`] hint and known nodes, refined instead of a
    /// recovery (see [`Solver::refine_hint`]).
    fn recover_with(
        &self,
        g: &Icfg,
        report: &Report,
        c: &Concurrency,
        alone: Option<&Recovery>,
        refine: Option<(&[Label], &[NodeId])>,
    ) -> Result<Recovery, SolveError>;
}

impl<S: Solver> RecoverWith for S {
    fn recover_with(
        &self,
        g: &Icfg,
        report: &Report,
        c: &Concurrency,
        alone: Option<&Recovery>,
        refine: Option<(&[Label], &[NodeId])>,
    ) -> Result<Recovery, SolveError> {
        let (r, weakened) = c.weaken(report);
        let reused = alone.is_some() && weakened.is_empty();
        // A refined hint is sound for the whole process under `report`
        // (what the caller's base recovery gave a weaker report), and the
        // weakened report's paths include every execution `report`
        // allows: the hint's No nodes run on none of them, its Yes nodes
        // on all, so the bulk pass may prune and check with them as it
        // does on `report` itself; what it adds holds for the weakened
        // report, and relaxed below for the process. Known nodes that
        // code off the path may run are left out, as their observations
        // are. A recovery repeated most of the base's (5 ms of each such
        // value stage's 7 ms on bzip2's cores).
        let refined = match refine {
            Some((hint, known)) if !reused => {
                let known: Vec<NodeId> = known
                    .iter()
                    .copied()
                    .filter(|n| !c.off_path.contains(n.index()))
                    .collect();
                match self.refine_hint(g, &r, hint, &known) {
                    Err(SolveError::Unsupported(_)) => None,
                    res => Some(res?),
                }
            }
            _ => None,
        };
        let mut out = match (alone, refined) {
            (Some(a), _) if reused => a.clone(),
            (_, Some(rec)) => rec,
            _ => self.recover(g, &r)?,
        };
        out.stats.push(("async_reused", u64::from(reused)));
        c.relax(&mut out.labels);
        out.weakened.extend(weakened);
        out.stats
            .push(("async_nodes", c.async_nodes.count() as u64));
        out.stats.push(("async_relaxed", c.relaxed.count() as u64));
        Ok(out)
    }
}

/// Any solver, with answers about the whole process (see the module docs).
/// The identity for graphs without asynchronous functions.
#[derive(Clone, Debug, Default)]
pub struct ProcessWide<S>(pub S);

impl<S: Solver> Solver for ProcessWide<S> {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    /// The identity without asynchronous functions, where the promise is
    /// made.
    fn refines_utl(&self) -> bool {
        self.0.refines_utl()
    }

    fn check(
        &self,
        g: &Icfg,
        report: &Report,
        query: Option<&Query>,
    ) -> Result<Checked, SolveError> {
        let Some(c) = Concurrency::of(g, report) else {
            return self.0.check(g, report, query);
        };
        let (r, weakened) = c.weaken(report);
        if let Some(Query::MayRun(n)) = query {
            if c.relaxed.contains(n.index()) {
                // The report itself must still be possible.
                if self.0.possible(g, &r, None)? == Answer::Possible {
                    return Ok(Checked {
                        answer: Answer::Possible,
                        weakened,
                        witness: None,
                    });
                }
            }
        }
        let mut out = self.0.check(g, &r, query)?;
        out.weakened.extend(weakened);
        Ok(out)
    }

    fn possible(
        &self,
        g: &Icfg,
        report: &Report,
        query: Option<&Query>,
    ) -> Result<Answer, SolveError> {
        let Some(c) = Concurrency::of(g, report) else {
            return self.0.possible(g, report, query);
        };
        let (r, _) = c.weaken(report);
        if let Some(Query::MayRun(n)) = query {
            if c.relaxed.contains(n.index()) {
                return self.0.possible(g, &r, None);
            }
        }
        self.0.possible(g, &r, query)
    }

    /// The hint goes through to the inner solver where this wrapper is
    /// the identity, and with asynchronous code to the recovery of the
    /// crash path alone (see [`ProcessWide::recover_from`]).
    fn recover_hinted(
        &self,
        g: &Icfg,
        report: &Report,
        hint: &[Label],
    ) -> Result<Recovery, SolveError> {
        match Concurrency::of(g, report) {
            None => self.0.recover_hinted(g, report, hint),
            Some(all) => self.recover_from(g, report, all, Hint::Hinted(hint)),
        }
    }

    /// As [`ProcessWide::recover_hinted`], the hint refined (its error
    /// returned: the caller recovers instead).
    fn refine_hint(
        &self,
        g: &Icfg,
        report: &Report,
        hint: &[Label],
        known: &[NodeId],
    ) -> Result<Recovery, SolveError> {
        match Concurrency::of(g, report) {
            None => self.0.refine_hint(g, report, hint, known),
            Some(all) => self.recover_from(g, report, all, Hint::Refined(hint, known)),
        }
    }

    fn recover(&self, g: &Icfg, report: &Report) -> Result<Recovery, SolveError> {
        match Concurrency::of(g, report) {
            None => self.0.recover(g, report),
            Some(all) => self.recover_from(g, report, all, Hint::None),
        }
    }
}

/// How [`ProcessWide::recover_from`] recovers the crash path alone.
#[derive(Clone, Copy)]
enum Hint<'h> {
    /// [`Solver::recover`].
    None,
    /// [`Solver::recover_hinted`].
    Hinted(&'h [Label]),
    /// [`Solver::refine_hint`], whose error is the recovery's.
    Refined(&'h [Label], &'h [NodeId]),
}

impl<S: Solver> ProcessWide<S> {
    /// Recovery with asynchronous code `all`: the crash path alone, then
    /// rounds with the code that may run after it.
    ///
    /// `hint` (labels this wrapper gave a weaker report) is sound for the
    /// path alone: such labels are the inner solver's labels of a report
    /// weaker still (observations of off-path code dropped), with some No
    /// relaxed to Maybe; every path consistent with `report` is
    /// consistent with that weaker report, so what runs on all of those
    /// paths or on none of them does so on `report`'s. The rounds recover
    /// `report` weakened as their own live code says, which need not be
    /// weaker than the hint's report, so they take no hint; except a
    /// refined hint (`Hint::Refined`: sound for the whole process under
    /// `report`), which each round refines instead. (A value stage
    /// of a program with signal handlers recovered the path alone twice
    /// over without it: bzip2's cores.) A round whose weakening drops
    /// nothing recovers the very report of the path alone: its labels are
    /// the path alone's, relaxed, without a recovery (`async_reused`, of
    /// the last round; with bzip2's signal handlers, that is every round
    /// of its cores).
    fn recover_from(
        &self,
        g: &Icfg,
        report: &Report,
        all: Concurrency,
        hint: Hint,
    ) -> Result<Recovery, SolveError> {
        // A refined hint's labels are the whole process's under a report
        // `report` adds to: the code they leave live is all the path
        // alone could leave live, so the rounds start there and the path
        // alone is not recovered first (it was a second bulk pass in a
        // third of bzip2's value stages, whose rounds weaken something).
        if let (false, Hint::Refined(labels, known)) = (all.crash_is_async, hint) {
            let live = Concurrency::live_after(g, labels, &[]);
            if !live.is_empty() {
                return self.rounds(g, report, live, None, Some((labels, known)));
            }
        }
        let path_alone = if all.crash_is_async {
            None
        } else {
            match hint {
                Hint::None => self.0.recover(g, report).ok(),
                Hint::Hinted(hint) => self.0.recover_hinted(g, report, hint).ok(),
                Hint::Refined(hint, known) => Some(self.0.refine_hint(g, report, hint, known)?),
            }
        };
        let Some(alone) = path_alone else {
            return self.0.recover_with(g, report, &all, None, None);
        };
        let live = Concurrency::live_after(g, &alone.labels, &[]);
        if live.is_empty() {
            let mut out = alone;
            out.stats.push(("async_live", 0));
            out.stats.push(("async_rounds", 1));
            return Ok(out);
        }
        let refine = match hint {
            Hint::Refined(hint, known) => Some((hint, known)),
            _ => None,
        };
        self.rounds(g, report, live, Some(&alone), refine)
    }

    /// The rounds of [`ProcessWide::recover_from`], from the asynchronous
    /// functions `live` (not empty) on, to a fixpoint; `alone` (the path
    /// alone's recovery) and `refine` as [`RecoverWith::recover_with`]
    /// takes them.
    fn rounds(
        &self,
        g: &Icfg,
        report: &Report,
        mut live: Vec<FuncId>,
        alone: Option<&Recovery>,
        refine: Option<(&[Label], &[NodeId])>,
    ) -> Result<Recovery, SolveError> {
        let mut rounds = u64::from(alone.is_some());
        loop {
            let c = Concurrency::with_live(g, report, &live);
            let mut out = self.0.recover_with(g, report, &c, alone, refine)?;
            rounds += 1;
            let next = Concurrency::live_after(g, &out.labels, &live);
            if next == live {
                out.stats.push(("async_live", live.len() as u64));
                out.stats.push(("async_rounds", rounds));
                return Ok(out);
            }
            live = next;
        }
    }
}

/// What [`mark_ran_somewhere`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Marked {
    /// How many labels became Yes.
    pub changed: usize,
    /// The members of [`Report::residue_somewhere`] left out: the labels
    /// say they never ran (or nothing leads to them from their function's
    /// entry), so their residue was a word that only looked like a return
    /// address.
    pub dropped: Vec<NodeId>,
}

/// Makes every node of [`Report::ran_somewhere`] Yes in `labels` (the
/// labels of a recovery of `report`), with the nodes that surely ran
/// before it in the same activation (its dominators in its function, see
/// [`crate::local::activation_dominators`]): each is known to have run in
/// some thread of the process, which is what a label means. Nothing else
/// changes: such a node says nothing about the crashing path (nor about
/// what its own thread did next, since a thread may stop anywhere), so no
/// other label is derived from it. A node the solver labelled No is a
/// contradiction (the graph misses control flow that reaches it, or the
/// evidence is not of this program), and so is one whose function's entry
/// is No, or that only nodes labelled No lead to from there: labels are
/// left as they are and the first such node is the error; the caller must
/// not output the labels.
///
/// [`Report::residue_somewhere`] is taken the same way, except that a
/// member the labels contradict is evidence that misled, not a fact: it
/// is left out and listed in [`Marked::dropped`].
pub fn mark_ran_somewhere(
    g: &Icfg,
    report: &Report,
    labels: &mut [Label],
) -> Result<Marked, NodeId> {
    if report.ran_somewhere.is_empty() && report.residue_somewhere.is_empty() {
        return Ok(Marked::default());
    }
    if let Some(&n) = report
        .ran_somewhere
        .iter()
        .find(|n| labels[n.index()] == Label::No)
    {
        return Err(n);
    }
    let facts = &report.ran_somewhere;
    let mut dropped = Vec::new();
    let mut ran: Vec<NodeId> = facts.clone();
    for &n in &report.residue_somewhere {
        if labels[n.index()] == Label::No {
            dropped.push(n);
        } else if !facts.contains(&n) {
            ran.push(n);
        }
    }
    // A residue node whose function's way to it never ran is dropped in
    // turn (at most once each); a fact's is the error.
    let yes = loop {
        match crate::local::activation_dominators(g, labels, &ran) {
            Ok(yes) => break yes,
            Err(n) if !facts.contains(&n) => {
                ran.retain(|&m| m != n);
                dropped.push(n);
            }
            Err(n) => return Err(n),
        }
    };
    let mut changed = 0;
    for n in yes {
        if labels[n.index()] != Label::Yes {
            labels[n.index()] = Label::Yes;
            changed += 1;
        }
    }
    dropped.sort_unstable();
    Ok(Marked { changed, dropped })
}
