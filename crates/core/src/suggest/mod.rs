//! What to observe next: the program points whose observation (ran / did
//! not run) would decide the most source lines that are still Maybe, each
//! with an exact guarantee.
//!
//! For a point `n` (a node) the guarantee is two counts: the lines that are
//! Maybe in the base analysis and that the analysis of the report **plus**
//! `obsYes [n]` labels Yes or No (`if_ran`), and the same with `obsNo {n}`
//! (`if_not`); the worst case is their minimum. Both are computed by
//! running [`analysis`] (what `analyze` runs: values in stages, the Local
//! lift, then the flags set in some thread) with the same solver, so they
//! are exact for
//! that solver by construction, whether or not it is monotone (UTL weakens
//! what it cannot express; a larger report may in principle weaken
//! differently). Lines are counted as [`crate::summary::by_line`] labels
//! them, i.e. as the line labels the other commands print.
//!
//! # Algorithm
//!
//! 1. **Candidates**: nodes labelled Maybe that a developer can instrument:
//!    a function entry, a call or a statement, with a file and a line.
//!    A node whose observation is impossible one way (the analysis with it
//!    is infeasible: the point surely ran, or surely did not) is dropped:
//!    observing it tells nothing new.
//! 2. **Classes**: candidates in a straight-line chain (`a`'s only
//!    successor is `b` by a local edge, `b`'s only predecessor is `a`, `a`
//!    is no crash node, `b` is not the start) lie on exactly the same
//!    complete paths, so observing any of them says the same thing; one
//!    representative (the smallest id) is evaluated. Only when the report
//!    has a crash and the program no asynchronous function (a thread may
//!    be stopped anywhere, between `a` and `b`).
//! 3. **Upper bounds**: the worst case is at most `if_not`, so the "did not
//!    run" analysis of every class is run first (across `threads` workers).
//! 4. **Branch and bound**: classes in decreasing order of that bound get
//!    their "ran" analysis; the search stops when the next bound cannot
//!    beat the k-th best worst case found. The result is then the exact
//!    top k (ties broken by `if_ran + if_not`, then node id) among the
//!    points that decide at least one line either way, one point per
//!    source line (the best of the line's nodes: a developer instruments
//!    lines; a point is named by its first line).
//!
//! **Groups** ([`suggest_group`]): for crashes of one program, a point's
//! worst case is the sum over the crashes of its worst case in each (a
//! crash where it is decided, or where one observation is impossible,
//! adds 0); the bound is the sum of the "did not run" counts.
//!
//! # Large programs: [`Method::Bounds`]
//!
//! Steps 3-4 cost at least one analysis per class: on SQLite (44.8k
//! classes, 0.3 s per UTL analysis) that is hours. [`Method::Bounds`]
//! (what [`Method::Auto`] picks past [`AUTO_EXACT_CLASSES`] classes)
//! replaces them by:
//!
//! 3'. **Lower bounds for every class in one pass** (`bounds.rs`): in the
//!    graph of the nodes the base does not label No, `obsNo {n}` surely
//!    makes No every node `n` dominates from the start or post-dominates
//!    towards the crash, and `obsYes [n]` surely makes Yes every node
//!    that dominates or post-dominates `n`. Two dominator trees give
//!    these sets for all candidates at once; lines are counted as above.
//!    These are proven lower bounds on what the solver decides when it is
//!    exact on its own model of the paths (checked against re-runs on
//!    random programs for UTL, FSA and CS by `tests/suggest_bounds.rs`);
//!    they are not exact (other deductions, such as the stack's order,
//!    decide more). "The base" here is the labels before the Local lift
//!    ([`Crash::first`]): the lift only adds to the labels, of the base
//!    and of each re-run alike, so a bound on the re-run without it holds
//!    with it; the lines counted are those Maybe after the lift.
//! 3''. **UTL's re-runs** (when the solver refines UTL,
//!    [`Solver::refines_utl`]: `best`, which adds UTL's labels of the same
//!    report to its own before refining them; the reports have no values or
//!    residue in stages): classes in decreasing order of dominator bound,
//!    one per line, get both observations re-run with UTL (a tenth of a
//!    `best` analysis or less), until `k` have a positive bound or the
//!    budget is spent. The base's Maybe lines that UTL's labels with the
//!    observation decide are decided by the solver's re-run too (it
//!    decides every node UTL decides, the same way), so they are a proven
//!    lower bound; each class keeps the larger of the two bounds (printed
//!    `>=N`, JSON `"bound": "utl"`). UTL finding the observation
//!    impossible makes the solver's re-run fail too (its recovery fails
//!    when UTL's does): the point decides nothing new in that crash.
//!    Classes are ranked again by these bounds.
//! 4'. **Confirmation**: classes in decreasing order of bound get both
//!    analyses, one point per line, until `k` points are confirmed or a
//!    limit is reached (no batch is started that would end past the
//!    budget, [`Limits::analysis_time`]). Confirmed counts are exact; points left
//!    unconfirmed are listed with their bounds, marked as such
//!    ([`Suggestion::exact`] false, printed `>=N`). A confirmed count
//!    below its bound (a solver that gives up on part of the problem) is
//!    counted in [`Suggestions::below_bound`] and said.
//!
//! The list is then the top `k` by proven guarantee, not proven to be the
//! exact top `k`: a point whose real worst case exceeds its bound can be
//! missed (on the SQLite crash below, UTL's exact search finds a point of
//! `sqlite3ErrorMsg` deciding 39 lines both ways whose bound is 3: the
//! stack's order decides most of it).
//!
//! Measured (release, 2 cores, 2 threads; SQLite `sqlite3ErrorMsg`
//! backtrace, `.pmcfg` cache: 92k nodes, 55.4k Maybe lines, 44.8k
//! classes): the bounds of all classes take 0.23 s; with UTL the top 10,
//! all confirmed (20 analyses), in 4.6 s wall and 48 MB peak RSS (the
//! exact method under a 10 s budget bounded 27 classes and listed
//! nothing). With `best` (4-6 s per analysis) bounds alone take 1.8 s
//! and 110 MB; `--budget 5` confirms 1 of 10 (6.8 s, 226 MB).
//! With UTL's re-runs (step 3'', the same crashes from a version-4
//! cache, under load 12-14 on 2 cores): `best` lists 10 points, all with
//! UTL-proven bounds, in 6.0-6.9 s and 111 MB with `--budget 5` (before:
//! 9.2 s, 224 MB, 1 exact and 9 dominator bounds). On these crashes the
//! UTL bounds equal the dominator bounds and `best`'s exact counts are
//! higher (the stack's order); confirming all ten took 66 s.
//!
//! # Cost
//!
//! [`Method::Exact`]: one analysis per class for the bounds, plus one per class evaluated in
//! step 4 (often few: the bounds fall off fast). The [`Solver`] interface
//! has no incremental mode, so each analysis starts from scratch (what
//! `analyze` costs, times the values' stages); the base labels only serve
//! to pick candidates and to count. The search runs under [`Limits`]
//! (a wall-clock budget, a number of analyses): past one it stops with
//! the best found so far, `complete` false and a note saying what was
//! left. Each printed guarantee is still exact; only "these are the top
//! k" is then not proven.

use crate::icfg::{EdgeKind, Icfg, NodeKind};
use crate::ids::{FileId, NodeId};
use crate::report::{NodeSet, Report, Trace};
use crate::solver::{Label, SolveError, Solver};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

mod bounds;
pub use bounds::WALK_CAP;

/// What one observation says about a point.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Observation {
    /// It ran (an `obsYes` trace of the point alone).
    Ran,
    /// It did not run (an `obsNo` set of the point alone).
    NotRan,
}

/// `report` with one more observation of `n`.
pub fn observe(report: &Report, n: NodeId, obs: Observation) -> Report {
    let mut r = report.clone();
    match obs {
        Observation::Ran => r.obs_yes.push(Trace {
            reliable: false,
            entries: vec![NodeSet::one(n)],
        }),
        Observation::NotRan => r.obs_no.push(NodeSet::one(n)),
    }
    r
}

/// The labels `analyze` prints ([`crate::pipeline::analyse`], every value
/// staged). `Ok(None)` when no
/// execution satisfies the report (the solver finds it infeasible, or a
/// flag set in some thread is on a node it labels No).
pub fn analysis(
    s: &(dyn Solver + Sync),
    g: &Icfg,
    report: &Report,
) -> Result<Option<Vec<Label>>, SolveError> {
    // Every value staged: a guarantee compares two analyses, which a
    // time budget would make depend on the machine's load.
    let how = crate::staged::Staging {
        value_budget: None,
        ..Default::default()
    };
    match crate::pipeline::analyse(s, g, report, how) {
        Ok(a) => Ok(Some(a.rec.labels)),
        Err(f) if f.impossible() => Ok(None),
        Err(crate::pipeline::Failed::Solve(e)) => Err(e),
        Err(crate::pipeline::Failed::RanSomewhere(_)) => Ok(None),
    }
}

/// [`analysis`] without the Local lift ([`crate::staged::recover_with_values`]
/// and [`crate::concurrency::mark_ran_somewhere`]): UTL's re-runs, whose
/// labels the solver's (lifted or not) contain.
pub fn analysis_before_lift(
    s: &dyn Solver,
    g: &Icfg,
    report: &Report,
) -> Result<Option<Vec<Label>>, SolveError> {
    match crate::staged::recover_with_values(s, g, report) {
        Ok(mut rec) => match crate::concurrency::mark_ran_somewhere(g, report, &mut rec.labels) {
            Ok(_) => Ok(Some(rec.labels)),
            Err(_) => Ok(None),
        },
        Err(SolveError::Infeasible { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// How far the search may go.
#[derive(Clone, Debug)]
pub struct Limits {
    /// How many points to return.
    pub k: usize,
    /// Wall-clock budget of the whole search (the bounds get at most half
    /// of it). `None`: no limit.
    pub budget: Option<Duration>,
    /// The most analyses to run. `None`: no limit.
    pub max_analyses: Option<usize>,
    /// Worker threads for the bounds (at least 1).
    pub threads: usize,
    /// How to rank the candidates.
    pub method: Method,
    /// How long one analysis is expected to take (the base's, say):
    /// [`Method::Bounds`] starts no confirmation whose analyses would end
    /// past the budget. `None`: the longest one seen so far.
    pub analysis_time: Option<Duration>,
}

/// How [`suggest`] ranks the candidates (see the module docs).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Method {
    /// [`Method::Exact`] up to [`AUTO_EXACT_CLASSES`] candidate points,
    /// else [`Method::Bounds`].
    #[default]
    Auto,
    /// Two analyses per point at most, branch and bound: the exact top k.
    Exact,
    /// Lower bounds for every point from dominator trees (no analysis),
    /// then the best confirmed by re-running: guarantees exact where
    /// confirmed, proven lower bounds elsewhere.
    Bounds,
}

/// [`Method::Auto`] ranks exactly up to this many candidate points.
pub const AUTO_EXACT_CLASSES: usize = 400;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            k: 10,
            budget: Some(Duration::from_secs(60)),
            max_analyses: None,
            threads: 1,
            method: Method::Auto,
            analysis_time: None,
        }
    }
}

/// One suggested point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suggestion {
    /// The point to observe (the representative of its class).
    pub point: NodeId,
    /// Every candidate on exactly the same paths (the point included),
    /// sorted.
    pub equivalent: Vec<NodeId>,
    /// Maybe lines decided if the point is observed to have run.
    pub if_ran: usize,
    /// Maybe lines decided if it is observed not to have run.
    pub if_not: usize,
    /// The guarantee: lines decided whatever the observation says. For one
    /// crash, the least of `if_ran` and `if_not`; for a group, the sum over
    /// the crashes of that least (`if_ran` and `if_not` are sums too).
    pub worst: usize,
    /// Whether the three counts are exact (computed by re-running the
    /// analysis); otherwise they are proven lower bounds
    /// ([`Method::Bounds`], a point not confirmed within the limits).
    pub exact: bool,
    /// Not exact, and the bounds come from re-running UTL with the
    /// observation (the solver refines UTL, see [`Solver::refines_utl`]),
    /// not from dominators alone.
    pub utl_bound: bool,
    /// Points (with their equivalents) whose observation decides exactly
    /// the same lines the same way, both ways: the same question asked
    /// elsewhere ("did `kv_del` run"), sorted; only among exact counts.
    pub alternatives: Vec<NodeId>,
}

impl Suggestion {
    /// The guarantee ([`Suggestion::worst`]).
    pub fn worst(&self) -> usize {
        self.worst
    }
}

/// One crash of a group: its report and its base labels ([`analysis`] of
/// the report with the solver used).
#[derive(Copy, Clone, Debug)]
pub struct Crash<'a> {
    /// The report.
    pub report: &'a Report,
    /// Its labels.
    pub base: &'a [Label],
    /// Its labels before the Local lift
    /// ([`crate::staged::recover_lifted_keeping`]), for a report without
    /// values and residue: the bounds' graph (module docs, step 3'). `None`:
    /// recovered again where needed (the lift may decide more than the
    /// bounds' argument allows for).
    pub first: Option<&'a [Label]>,
}

/// The result of [`suggest`].
#[derive(Clone, Debug, Default)]
pub struct Suggestions {
    /// The best points, best first (worst case, then the sum of both),
    /// one per source line.
    pub top: Vec<Suggestion>,
    /// Lines Maybe in the base labels (summed over a group's crashes).
    pub maybe_lines: usize,
    /// Crashes (1, or a group's size).
    pub crashes: usize,
    /// Candidate nodes (Maybe and instrumentable).
    pub candidate_nodes: usize,
    /// Their classes (points evaluated at most once each).
    pub classes: usize,
    /// Observations found impossible (the point surely ran, or surely did
    /// not, in that crash): they decide nothing new.
    pub surely: usize,
    /// Analyses run.
    pub analyses: usize,
    /// [`Method::Bounds`]: listed points whose counts were confirmed by
    /// re-running (they come first among equals; the rest are bounds).
    pub confirmed: usize,
    /// [`Method::Bounds`]: confirmed points that decided fewer lines than
    /// their bound (a limit of the solver: see `bounds.rs`).
    pub below_bound: usize,
    /// [`Method::Bounds`] with a solver that refines UTL: the UTL analyses
    /// run for proven bounds (counted in `analyses` too).
    pub utl_analyses: usize,
    /// The method used ([`Method::Exact`] or [`Method::Bounds`]).
    pub method: Method,
    /// Whether the search finished: with [`Method::Exact`], `top` is then
    /// the exact top k; with [`Method::Bounds`], every listed point was
    /// confirmed (its counts are exact) and `top` holds the points of
    /// highest proven guarantee.
    pub complete: bool,
    /// Why it did not finish (limits, solver errors).
    pub note: Option<String>,
}

/// Whether a developer can instrument `n`: an entry, a call or a
/// statement, with a file and a line.
pub fn instrumentable(g: &Icfg, n: NodeId) -> bool {
    matches!(
        g.kind(n),
        NodeKind::Entry | NodeKind::CallSite | NodeKind::Statement
    ) && g.file_of(n).is_some()
        && !g.lines(n).is_empty()
}

/// The lines Maybe in the base labels, and how to label each from node
/// labels exactly as [`crate::summary::by_line`] does.
struct MaybeLines {
    /// Per line: its strong nodes, then its weak-only nodes.
    nodes: Vec<(Vec<NodeId>, Vec<NodeId>)>,
}

impl MaybeLines {
    fn new(g: &Icfg, base: &[Label]) -> MaybeLines {
        let mut acc: BTreeMap<(FileId, u32), (Vec<NodeId>, Vec<NodeId>)> = BTreeMap::new();
        for n in g.nodes() {
            let Some(file) = g.file_of(n) else { continue };
            for &line in g.lines(n) {
                acc.entry((file, line)).or_default().0.push(n);
            }
            for line in g.weak_lines(n) {
                acc.entry((file, line)).or_default().1.push(n);
            }
        }
        let nodes = acc
            .into_values()
            .filter(|(strong, weak)| line_label(strong, weak, base) == Label::Maybe)
            .collect();
        MaybeLines { nodes }
    }

    /// How many of the lines `labels` decides.
    fn decided(&self, labels: &[Label]) -> usize {
        self.nodes
            .iter()
            .filter(|(s, w)| line_label(s, w, labels) != Label::Maybe)
            .count()
    }

    /// Which lines `labels` decide, and how, as a hash (two observations
    /// with the same one decide the same lines the same way, but for a
    /// collision of 64-bit hashes).
    fn signature(&self, labels: &[Label]) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = crate::fxhash::FxHasher::default();
        for (i, (s, w)) in self.nodes.iter().enumerate() {
            let l = line_label(s, w, labels);
            if l != Label::Maybe {
                (i, l == Label::Yes).hash(&mut h);
            }
        }
        h.finish()
    }
}

fn line_label(strong: &[NodeId], weak: &[NodeId], labels: &[Label]) -> Label {
    if strong.iter().any(|n| labels[n.index()] == Label::Yes) {
        Label::Yes
    } else if strong
        .iter()
        .chain(weak)
        .all(|n| labels[n.index()] == Label::No)
    {
        Label::No
    } else {
        Label::Maybe
    }
}

/// The candidate classes: sorted members; those in the stacks' functions
/// first, then the largest. A
/// candidate is Maybe in some crash; chains are merged only when every
/// crash has a crash location they avoid.
fn classes(g: &Icfg, crashes: &[Crash<'_>]) -> Vec<Vec<NodeId>> {
    let cand = |n: NodeId| {
        crashes.iter().any(|c| c.base[n.index()] == Label::Maybe) && instrumentable(g, n)
    };
    let mut parent: Vec<u32> = (0..g.num_nodes() as u32).collect();
    fn find(p: &mut [u32], mut x: u32) -> u32 {
        while p[x as usize] != x {
            p[x as usize] = p[p[x as usize] as usize];
            x = p[x as usize];
        }
        x
    }
    let merge = crashes.iter().all(|c| c.report.crash.is_some()) && g.async_functions().is_empty();
    let at_crash = |n: NodeId| {
        crashes
            .iter()
            .any(|c| c.report.crash.as_ref().is_some_and(|s| s.contains(n)))
    };
    if merge {
        for a in g.nodes().filter(|&a| cand(a) && !at_crash(a)) {
            let mut succs = g.succs(a);
            let (Some((b, EdgeKind::Local)), None) = (succs.next(), succs.next()) else {
                continue;
            };
            if b == a || b == g.start() || !cand(b) {
                continue;
            }
            let mut preds = g.preds(b);
            if let (Some((p, EdgeKind::Local)), None) = (preds.next(), preds.next()) {
                if p == a {
                    let (ra, rb) = (
                        find(&mut parent, a.index() as u32),
                        find(&mut parent, b.index() as u32),
                    );
                    parent[ra.max(rb) as usize] = ra.min(rb);
                }
            }
        }
    }
    let mut by_root: BTreeMap<u32, Vec<NodeId>> = BTreeMap::new();
    for n in g.nodes().filter(|&n| cand(n)) {
        let r = find(&mut parent, n.index() as u32);
        by_root.entry(r).or_default().push(n);
    }
    // The order only matters under a limit (which bounds are computed
    // first): points in the functions of the crash stacks first, where
    // an observation is likely to decide most, then larger classes.
    let mut on_stack = vec![false; g.functions().len()];
    for c in crashes {
        let frames = c
            .report
            .stack
            .iter()
            .flat_map(|f| f.call.nodes().iter().chain(f.entry.nodes()));
        for &n in frames.chain(c.report.crash.iter().flat_map(|s| s.nodes())) {
            on_stack[g.func_of(n).index()] = true;
        }
    }
    let mut out: Vec<Vec<NodeId>> = by_root.into_values().collect();
    out.sort_by_key(|c| {
        (
            !on_stack[g.func_of(c[0]).index()],
            std::cmp::Reverse(c.len()),
            c[0],
        )
    });
    out
}

/// The order of suggestions: worst case, then the sum of both counts,
/// then node id.
fn rank(a: &Suggestion, b: &Suggestion) -> std::cmp::Ordering {
    b.worst()
        .cmp(&a.worst())
        .then((b.if_ran + b.if_not).cmp(&(a.if_ran + a.if_not)))
        .then(a.point.cmp(&b.point))
}

fn better(a: &Suggestion, b: &Suggestion) -> bool {
    rank(a, b) == std::cmp::Ordering::Less
}

/// The top `limits.k` points to observe next (see the module docs).
/// `base` must be [`analysis`] of `report` with `s`.
pub fn suggest(
    s: &(dyn Solver + Sync),
    g: &Icfg,
    report: &Report,
    base: &[Label],
    limits: &Limits,
) -> Suggestions {
    suggest_group(
        s,
        g,
        &[Crash {
            report,
            base,
            first: None,
        }],
        limits,
    )
}

/// The lower bounds of [`Method::Bounds`] for one crash (see
/// `bounds.rs`): per node, `Some((ran, not))`, the Maybe lines (counted
/// as [`crate::summary::by_line`] does) that observing it to have run, or
/// not to have run, surely decides, for every instrumentable node Maybe in
/// `base`; `None` elsewhere, or for every node when the bounds do not
/// apply (asynchronous functions, flags set in some thread) or the
/// report's first stage fails.
pub fn lower_bounds(s: &dyn Solver, g: &Icfg, crash: Crash<'_>) -> Vec<Option<(usize, usize)>> {
    let n = g.num_nodes();
    let wanted: Vec<bool> = g
        .nodes()
        .map(|m| crash.base[m.index()] == Label::Maybe && instrumentable(g, m))
        .collect();
    if !g.async_functions().is_empty()
        || !crash.report.ran_somewhere.is_empty()
        || !crash.report.residue_somewhere.is_empty()
    {
        return vec![None; n];
    }
    let first;
    let l0: &[Label] = match crash.first {
        Some(l) if crash.report.values.is_empty() => l,
        _ => {
            let r = Report {
                values: Vec::new(),
                ..crash.report.clone()
            };
            match s.recover(g, &r) {
                Ok(rec) => {
                    first = rec.labels;
                    &first
                }
                Err(_) => return vec![None; n],
            }
        }
    };
    let lines = MaybeLines::new(g, crash.base);
    let b = bounds::bounds(g, crash.report, l0, &lines.nodes, &wanted);
    (0..n)
        .map(|i| wanted[i].then(|| (b.ran[i] as usize, b.not[i] as usize)))
        .collect()
}

/// What both rankings share: the inputs, one evaluation (an observation
/// analysed in every crash) and the limits.
struct Search<'a> {
    s: &'a (dyn Solver + Sync),
    g: &'a Icfg,
    crashes: &'a [Crash<'a>],
    lines: &'a [MaybeLines],
    classes: &'a [Vec<NodeId>],
    limits: &'a Limits,
    start: Instant,
    analyses: &'a AtomicUsize,
    eval: &'a (dyn Fn(NodeId, Observation) -> Option<PerCrash> + Sync),
    /// UTL's re-runs, when the solver refines UTL (see [`UtlRerun`]).
    eval_utl: Option<&'a UtlEval<'a>>,
    out_of_budget: &'a (dyn Fn(Option<Instant>) -> bool + Sync),
    /// The order in which [`Search::exact`] bounds the classes (indices
    /// into `classes`; see [`heuristic_order`]).
    order: &'a [usize],
    /// Adds an exact suggestion to a point of `top` that decides the same
    /// lines, as its alternative (the better of the two the
    /// representative); false when there is none.
    same: &'a (dyn Fn(&mut Vec<Suggestion>, &Suggestion) -> bool + Sync),
}

/// One observation re-run with UTL in every crash: per crash, `None`
/// where the point is not Maybe or UTL failed (a limit), else
/// [`UtlRerun`].
type UtlEval<'a> = dyn Fn(NodeId, Observation) -> Vec<Option<UtlRerun>> + Sync + 'a;

/// What UTL's re-run with an observation says, for a solver that
/// refines UTL ([`Solver::refines_utl`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum UtlRerun {
    /// The Maybe lines of the solver's base that UTL's labels decide: the
    /// solver's re-run decides each of them too (it decides every node
    /// UTL decides), so this is a proven lower bound.
    Decides(usize),
    /// UTL finds the observation impossible; so does the solver (its
    /// recovery fails when UTL's does): the point decides nothing new.
    Impossible,
}

impl Search<'_> {
    /// [`Method::Exact`]: steps 3 and 4 of the module docs.
    /// Step 3 (module docs): the "did not run" analysis of the classes,
    /// in [`Search::order`], in parallel, within half the budget; the
    /// classes bounded, as (bound, class, "did not run" per crash), best
    /// first.
    fn not_ran_bounds(
        &self,
        out: &mut Suggestions,
        notes: &mut Vec<String>,
    ) -> Vec<(usize, usize, PerCrash)> {
        // Step 3: the bounds, "did not run", in parallel, in `order`, within
        // half the budget ...
        let bound_deadline = self.limits.budget.map(|b| self.start + b / 2);
        let next = AtomicUsize::new(0);
        let bounds: Mutex<Vec<(usize, Option<PerCrash>)>> = Mutex::new(Vec::new());
        // ... and leave step 4 the analyses of k points (or half of them).
        let reserve = self.limits.k * self.crashes.len();
        let bound_analyses = self
            .limits
            .max_analyses
            .map(|m| m.saturating_sub(reserve).max(m.div_ceil(2)));
        let worker = || loop {
            if (self.out_of_budget)(bound_deadline)
                || bound_analyses.is_some_and(|m| self.analyses.load(Ordering::Relaxed) >= m)
            {
                break;
            }
            let Some(&i) = self.order.get(next.fetch_add(1, Ordering::Relaxed)) else {
                break;
            };
            let e = (self.eval)(self.classes[i][0], Observation::NotRan);
            bounds.lock().expect("no worker panics").push((i, e));
        };
        // The run's deadline holds in the workers (see `crate::budget`).
        let deadline = crate::budget::deadline();
        std::thread::scope(|sc| {
            for _ in 1..self.limits.threads.max(1) {
                sc.spawn(|| crate::budget::with_deadline(deadline, worker));
            }
            worker();
        });
        let bounds = bounds.into_inner().expect("no worker panics");
        if bounds.len() < self.classes.len() {
            out.complete = false;
            notes.push(format!(
                "bounds computed for {} of {} points within the limits",
                bounds.len(),
                self.classes.len()
            ));
        }
        // (bound, class, "did not run" per crash)
        let mut order: Vec<(usize, usize, PerCrash)> = Vec::new();
        for (i, e) in bounds {
            match e {
                Some(per) => order.push((per.iter().flatten().sum(), i, per)),
                None => out.complete = false,
            }
        }
        order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        order
    }

    fn exact(&self, out: &mut Suggestions, notes: &mut Vec<String>) -> Vec<Suggestion> {
        let order = self.not_ran_bounds(out, notes);
        // Step 4: branch and bound.
        let deadline = self.limits.budget.map(|b| self.start + b);
        let mut top: Vec<Suggestion> = Vec::new();
        for (bound, i, not) in order {
            let kth = if top.len() >= self.limits.k {
                top[self.limits.k - 1].worst()
            } else {
                0
            };
            if bound <= kth {
                break;
            }
            if (self.out_of_budget)(deadline) {
                out.complete = false;
                notes.push(format!(
                    "stopped within the limits with points of bound {bound} left to evaluate"
                ));
                break;
            }
            let c = &self.classes[i];
            let Some(ran) = (self.eval)(c[0], Observation::Ran) else {
                out.complete = false;
                continue;
            };
            let sug = exact_suggestion(c, &ran, &not);
            if (self.same)(&mut top, &sug) {
                continue;
            }
            // One point per line: a developer instruments lines.
            let line = |n: NodeId| (self.g.file_of(n), self.g.lines(n).first().copied());
            if let Some(j) = top.iter().position(|t| line(t.point) == line(sug.point)) {
                if better(&sug, &top[j]) {
                    top[j] = sug;
                }
            } else if sug.worst() > 0 {
                top.push(sug);
            }
            top.sort_by(rank);
            top.truncate(self.limits.k);
        }
        // A group's representative may have changed last.
        top.sort_by(rank);
        top
    }
}

impl Search<'_> {
    /// Step 3'' (see the module docs): UTL's re-runs of the best points by
    /// dominators, in that order, one point per line, until `k` points
    /// with a positive bound are done or the budget is spent; `per` (the
    /// bounds per class and crash) takes the larger of the two proven
    /// bounds, or `None` in a crash where the observation is impossible.
    fn utl_pass(
        &self,
        order: &[Suggestion],
        class_of: &BTreeMap<NodeId, usize>,
        eval_utl: &UtlEval<'_>,
        per: &mut [Vec<Option<(usize, usize)>>],
        by_utl: &mut [bool],
    ) {
        let line = |n: NodeId| (self.g.file_of(n), self.g.lines(n).first().copied());
        let deadline = self.limits.budget.map(|b| self.start + b);
        let per_batch = self.limits.threads.max(1);
        let mut lines = std::collections::BTreeSet::new();
        let (mut done, mut next) = (0, 0);
        while done < self.limits.k && next < order.len() && !(self.out_of_budget)(deadline) {
            let mut batch: Vec<usize> = Vec::new();
            while batch.len() < per_batch && next < order.len() {
                let p = order[next].point;
                next += 1;
                if lines.insert(line(p)) {
                    batch.push(class_of[&p]);
                }
            }
            let jobs: Vec<(NodeId, Observation)> = batch
                .iter()
                .flat_map(|&i| {
                    let p = self.classes[i][0];
                    [(p, Observation::Ran), (p, Observation::NotRan)]
                })
                .collect();
            let got = par_map(&jobs, self.limits.threads, &|&(p, o)| eval_utl(p, o));
            for (&i, pair) in batch.iter().zip(got.chunks(2)) {
                by_utl[i] = true;
                for (c, b) in per[i].iter_mut().enumerate() {
                    let Some((dr, dn)) = *b else { continue };
                    *b = match (pair[0][c], pair[1][c]) {
                        (Some(UtlRerun::Impossible), _) | (_, Some(UtlRerun::Impossible)) => None,
                        (r, n) => {
                            let at_least = |d: usize, u: Option<UtlRerun>| match u {
                                Some(UtlRerun::Decides(x)) => d.max(x),
                                _ => d,
                            };
                            Some((at_least(dr, r), at_least(dn, n)))
                        }
                    };
                }
                done +=
                    usize::from(per[i].iter().flatten().map(|b| b.0.min(b.1)).sum::<usize>() > 0);
            }
        }
    }

    /// [`Method::Bounds`]: every point's lower bounds from dominators,
    /// then the best confirmed by re-running, in order, until `k` points
    /// on distinct lines are confirmed or a limit is reached; the rest of
    /// the list keeps its proven lower bounds.
    /// The classes with a positive bound as unconfirmed suggestions
    /// (`per`: per class and crash, the bounds "ran" and "not";
    /// `by_utl`: the bound is UTL's), best first.
    fn ranked(&self, per: &[Vec<Option<(usize, usize)>>], by_utl: &[bool]) -> Vec<Suggestion> {
        let bound_of = |i: usize| {
            let p = per[i].iter().flatten();
            Suggestion {
                point: self.classes[i][0],
                equivalent: self.classes[i].clone(),
                if_ran: p.clone().map(|b| b.0).sum(),
                if_not: p.clone().map(|b| b.1).sum(),
                worst: p.map(|b| b.0.min(b.1)).sum(),
                exact: false,
                utl_bound: by_utl[i],
                alternatives: Vec::new(),
            }
        };
        let mut order: Vec<Suggestion> = (0..self.classes.len())
            .map(bound_of)
            .filter(|b| b.worst > 0)
            .collect();
        order.sort_by(rank);
        order
    }

    /// Step 3' (module docs): per class and crash, the dominator bounds
    /// "ran" and "not" (None where the point is not Maybe in that crash,
    /// or the crash has no bounds).
    fn dominator_bounds(&self, notes: &mut Vec<String>) -> Vec<Vec<Option<(usize, usize)>>> {
        let (g, n) = (self.g, self.g.num_nodes());
        let mut per: Vec<Vec<Option<(usize, usize)>>> = vec![Vec::new(); self.classes.len()];
        let mut wanted = vec![false; n];
        let mut cut = 0;
        for (c, l) in self.crashes.iter().zip(self.lines) {
            let first;
            let l0: &[Label] = if let (Some(l), true) = (c.first, c.report.values.is_empty()) {
                l
            } else {
                // What `analyze` recovers first, without the values (and
                // the lift, which adds to it).
                let r = Report {
                    values: Vec::new(),
                    ..c.report.clone()
                };
                self.analyses.fetch_add(1, Ordering::Relaxed);
                match self.s.recover(g, &r) {
                    Ok(rec) => {
                        first = rec.labels;
                        &first
                    }
                    Err(e) => {
                        notes.push(format!("no bounds for a crash ({e})"));
                        per.iter_mut().for_each(|p| p.push(None));
                        continue;
                    }
                }
            };
            let maybe = |m: NodeId| c.base[m.index()] == Label::Maybe;
            wanted.iter_mut().for_each(|w| *w = false);
            for m in self.classes.iter().flatten().filter(|&&m| maybe(m)) {
                wanted[m.index()] = true;
            }
            let b = bounds::bounds(g, c.report, l0, &l.nodes, &wanted);
            cut += b.cut_walks;
            for (i, class) in self.classes.iter().enumerate() {
                per[i].push(maybe(class[0]).then(|| {
                    let best = |v: &[u32]| {
                        class
                            .iter()
                            .filter(|&&m| maybe(m))
                            .map(|m| v[m.index()] as usize)
                            .max()
                            .unwrap_or(0)
                    };
                    (best(&b.ran), best(&b.not))
                }));
            }
        }
        if cut > 0 {
            notes.push(format!(
                "{cut} dominator walks cut at {WALK_CAP} steps (their bounds are lower)"
            ));
        }
        per
    }

    fn by_bounds(&self, out: &mut Suggestions, notes: &mut Vec<String>) -> Vec<Suggestion> {
        let g = self.g;
        let mut per = self.dominator_bounds(notes);
        let mut by_utl = vec![false; self.classes.len()];
        let mut order = self.ranked(&per, &by_utl);
        let equivalent_of: BTreeMap<NodeId, usize> = (0..self.classes.len())
            .map(|i| (self.classes[i][0], i))
            .collect();

        let line = |n: NodeId| (g.file_of(n), g.lines(n).first().copied());
        let k = self.limits.k;
        if let Some(eval_utl) = self.eval_utl {
            self.utl_pass(&order, &equivalent_of, eval_utl, &mut per, &mut by_utl);
            order = self.ranked(&per, &by_utl);
        }
        let mut top: Vec<Suggestion> = Vec::new();
        let mut taken = std::collections::BTreeSet::new();
        let mut below = 0;
        let mut next = 0;
        let deadline = self.limits.budget.map(|b| self.start + b);
        let per_batch = (self.limits.threads / 2).max(1);
        let mut batch_time = self.limits.analysis_time;
        while top.len() < k && next < order.len() {
            // No batch that would end past the budget (an analysis under
            // way cannot be stopped).
            let late = deadline
                .zip(batch_time)
                .is_some_and(|(d, t)| Instant::now() + t > d);
            if late || (self.out_of_budget)(deadline) {
                out.complete = false;
                break;
            }
            // The next points on lines not taken yet, one per line.
            let mut batch: Vec<&Suggestion> = Vec::new();
            while batch.len() < per_batch.min(k - top.len()) && next < order.len() {
                let b = &order[next];
                next += 1;
                if !taken.contains(&line(b.point))
                    && batch.iter().all(|o| line(o.point) != line(b.point))
                {
                    batch.push(b);
                }
            }
            let jobs: Vec<(NodeId, Observation)> = batch
                .iter()
                .flat_map(|b| [(b.point, Observation::Ran), (b.point, Observation::NotRan)])
                .collect();
            let t = Instant::now();
            let got = par_map(&jobs, self.limits.threads, &|&(p, o)| (self.eval)(p, o));
            batch_time = batch_time.max(Some(t.elapsed()));
            for (b, pair) in batch.iter().zip(got.chunks(2)) {
                let (Some(ran), Some(not)) = (&pair[0], &pair[1]) else {
                    out.complete = false;
                    continue;
                };
                let both = |c: usize| ran[c].zip(not[c]);
                let sug = exact_suggestion(&self.classes[equivalent_of[&b.point]], ran, not);
                // A bound is on a possible observation (one the solver
                // finds impossible decides nothing and is not made).
                let under = per[equivalent_of[&b.point]]
                    .iter()
                    .enumerate()
                    .any(|(c, lb)| match (lb, both(c)) {
                        (Some((lr, ln)), Some((r, n))) => r < *lr || n < *ln,
                        _ => false,
                    });
                below += usize::from(under);
                taken.insert(line(sug.point));
                if sug.worst > 0 && !(self.same)(&mut top, &sug) {
                    top.push(sug);
                }
            }
        }
        out.confirmed = top.len();
        out.below_bound = below;
        if below > 0 {
            notes.push(format!(
                "{below} confirmed points decided fewer lines than their bound (a limit of the solver)"
            ));
        }
        // Not confirmed within the limits: their proven lower bounds.
        for b in &order[next..] {
            if top.len() >= k {
                break;
            }
            if taken.insert(line(b.point)) {
                top.push(b.clone());
            }
        }
        if top.len() > out.confirmed {
            notes.push(unconfirmed_note(&top, out.confirmed));
        }
        top.sort_by(rank);
        top
    }
}

/// `f` of every job, on `threads` workers, in the jobs' order.
fn par_map<J: Sync, T: Send>(jobs: &[J], threads: usize, f: &(dyn Fn(&J) -> T + Sync)) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, T)>> = Mutex::new(Vec::with_capacity(jobs.len()));
    let worker = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(j) = jobs.get(i) else { break };
        let r = f(j);
        done.lock().expect("no worker panics").push((i, r));
    };
    let deadline = crate::budget::deadline();
    std::thread::scope(|sc| {
        for _ in 1..threads.min(jobs.len()).max(1) {
            sc.spawn(|| crate::budget::with_deadline(deadline, worker));
        }
        worker();
    });
    let mut done = done.into_inner().expect("no worker panics");
    done.sort_by_key(|p| p.0);
    done.into_iter().map(|p| p.1).collect()
}

/// Per crash, the Maybe lines an observation decides; `None` where the
/// point is not Maybe in that crash or the observation is impossible
/// there (it decides nothing new).
type PerCrash = Vec<Option<usize>>;

/// The classes most likely to decide many lines first, for an exact
/// ranking that may not bound them all within its budget (many points, a
/// program whose threads keep the bounds from applying): by the
/// dominator bounds of `bounds.rs` (worst case, then both), computed as if
/// they applied. Only an order: what is printed is still exact, and
/// without it the budget went to points in the order of their ids (a
/// threaded zstd crash: 34 of 81,505 points bounded in 36 s, all deciding
/// nothing, and no suggestion).
fn heuristic_order(
    g: &Icfg,
    crashes: &[Crash<'_>],
    lines: &[MaybeLines],
    classes: &[Vec<NodeId>],
) -> Vec<usize> {
    let n = g.num_nodes();
    let mut score = vec![(0usize, 0usize); classes.len()];
    for (c, l) in crashes.iter().zip(lines) {
        let wanted: Vec<bool> = g
            .nodes()
            .map(|m| c.base[m.index()] == Label::Maybe && instrumentable(g, m))
            .collect();
        let l0 = c.first.unwrap_or(c.base);
        let b = bounds::bounds(g, c.report, l0, &l.nodes, &wanted);
        for (i, class) in classes.iter().enumerate() {
            let p = class[0].index();
            if p < n && wanted[p] {
                let (r, t) = (b.ran[p] as usize, b.not[p] as usize);
                score[i].0 += r.min(t);
                score[i].1 += r + t;
            }
        }
    }
    let mut order: Vec<usize> = (0..classes.len()).collect();
    order.sort_by(|&a, &b| score[b].cmp(&score[a]).then(a.cmp(&b)));
    order
}

/// Per evaluated point and observation (ran?): the signature of the
/// lines it decides in each crash (see `MaybeLines::signature`).
type Signatures = crate::fxhash::FxHashMap<(NodeId, bool), Vec<u64>>;

/// The analyses of one suggestion search: a point observed, in every
/// crash; with what they found and counted.
struct Evaluator<'a> {
    s: &'a (dyn Solver + Sync),
    g: &'a Icfg,
    crashes: &'a [Crash<'a>],
    lines: &'a [MaybeLines],
    analyses: AtomicUsize,
    utl_analyses: AtomicUsize,
    /// Observations found impossible.
    impossible: AtomicUsize,
    /// The first analysis that failed (a limit of the solver).
    failed: Mutex<Option<SolveError>>,
    signatures: Mutex<Signatures>,
}

impl Evaluator<'_> {
    /// One observation of `n` in every crash where it is Maybe; `None`
    /// when an analysis failed (a limit of the solver).
    fn eval(&self, n: NodeId, obs: Observation) -> Option<PerCrash> {
        let mut per = Vec::with_capacity(self.crashes.len());
        let mut sig = Vec::with_capacity(self.crashes.len());
        for (c, l) in self.crashes.iter().zip(self.lines) {
            if c.base[n.index()] != Label::Maybe {
                per.push(None);
                sig.push(u64::MAX);
                continue;
            }
            self.analyses.fetch_add(1, Ordering::Relaxed);
            match analysis(self.s, self.g, &observe(c.report, n, obs)) {
                Ok(Some(labels)) => {
                    per.push(Some(l.decided(&labels)));
                    sig.push(l.signature(&labels));
                }
                Ok(None) => {
                    self.impossible.fetch_add(1, Ordering::Relaxed);
                    per.push(None);
                    sig.push(0);
                }
                Err(e) => {
                    self.failed
                        .lock()
                        .expect("no worker panics")
                        .get_or_insert(e);
                    return None;
                }
            }
        }
        self.signatures
            .lock()
            .expect("no worker panics")
            .insert((n, obs == Observation::Ran), sig);
        Some(per)
    }

    /// UTL's re-runs as proven bounds (step 3''): the solver decides
    /// every node UTL decides, and `analysis` is its `recover` alone (no
    /// values or residue in stages, no flags set in some thread).
    fn eval_utl(&self, n: NodeId, obs: Observation) -> Vec<Option<UtlRerun>> {
        let utl = crate::utl::Utl::default();
        let mut per = Vec::with_capacity(self.crashes.len());
        for (c, l) in self.crashes.iter().zip(self.lines) {
            if c.base[n.index()] != Label::Maybe {
                per.push(None);
                continue;
            }
            self.analyses.fetch_add(1, Ordering::Relaxed);
            self.utl_analyses.fetch_add(1, Ordering::Relaxed);
            per.push(
                match analysis_before_lift(&utl, self.g, &observe(c.report, n, obs)) {
                    Ok(Some(labels)) => Some(UtlRerun::Decides(l.decided(&labels))),
                    Ok(None) => Some(UtlRerun::Impossible),
                    Err(_) => None,
                },
            );
        }
        per
    }

    /// Both observations' signatures of an evaluated point.
    fn signature_of(&self, n: NodeId) -> Option<(Vec<u64>, Vec<u64>)> {
        let m = self.signatures.lock().expect("no worker panics");
        Some((m.get(&(n, true))?.clone(), m.get(&(n, false))?.clone()))
    }

    /// Adds an exact suggestion to the point of `top` that asks the same
    /// question (decides the same lines the same way, both ways), as its
    /// alternative, the better of the two the representative; false when
    /// there is none.
    fn same(&self, top: &mut [Suggestion], sug: &Suggestion) -> bool {
        let Some(mine) = self.signature_of(sug.point) else {
            return false;
        };
        let Some(t) = top
            .iter_mut()
            .find(|t| t.exact && self.signature_of(t.point).as_ref() == Some(&mine))
        else {
            return false;
        };
        if better(sug, t) {
            let mut alt = std::mem::take(&mut t.alternatives);
            alt.extend(&t.equivalent);
            *t = Suggestion {
                alternatives: alt,
                ..sug.clone()
            };
        } else {
            t.alternatives.extend(&sug.equivalent);
        }
        t.alternatives.sort();
        t.alternatives.dedup();
        true
    }
}

/// The suggestion of class `class` (its first member the point) whose
/// observation was analysed both ways: per crash, the lines decided if it
/// ran and if it did not (`None` where not Maybe or impossible).
fn exact_suggestion(class: &[NodeId], ran: &PerCrash, not: &PerCrash) -> Suggestion {
    let both: Vec<(usize, usize)> = ran.iter().zip(not).filter_map(|(r, n)| r.zip(*n)).collect();
    Suggestion {
        point: class[0],
        equivalent: class.to_vec(),
        if_ran: both.iter().map(|p| p.0).sum(),
        if_not: both.iter().map(|p| p.1).sum(),
        worst: both.iter().map(|&(a, b)| a.min(b)).sum(),
        exact: true,
        utl_bound: false,
        alternatives: Vec::new(),
    }
}

/// What the list says of its points not confirmed by re-running.
fn unconfirmed_note(top: &[Suggestion], confirmed: usize) -> String {
    let by_utl = top.iter().filter(|t| t.utl_bound).count();
    format!(
        "{confirmed} of the {} points listed confirmed by re-running within the limits; \
         the others' counts are proven lower bounds ({by_utl} from UTL's re-runs, \
         which this solver refines; the rest from dominators)",
        top.len()
    )
}

/// Whether the search ranks by bounds ([`Method::Bounds`]): asked for,
/// or [`Method::Auto`] past [`AUTO_EXACT_CLASSES`] classes; never where
/// the bounds do not apply (asynchronous functions, flags set in some
/// thread: a note in `out` then says so when they were asked for).
fn uses_bounds(
    g: &Icfg,
    crashes: &[Crash<'_>],
    method: Method,
    classes: usize,
    out: &mut Suggestions,
) -> bool {
    let bounds_apply = g.async_functions().is_empty()
        && crashes
            .iter()
            .all(|c| c.report.ran_somewhere.is_empty() && c.report.residue_somewhere.is_empty());
    match method {
        Method::Exact => false,
        Method::Bounds => {
            if !bounds_apply {
                out.note = Some(
                    "bounds need a program without asynchronous functions and a report \
                     without flags set in some thread: ranked exactly instead"
                        .into(),
                );
            }
            bounds_apply
        }
        Method::Auto => bounds_apply && classes > AUTO_EXACT_CLASSES,
    }
}

/// [`suggest`] for a group of crashes of one program: the points whose
/// worst case, summed over the crashes, is highest (see
/// [`Suggestion::worst`]). A crash where the point is decided, or where
/// one observation is impossible, adds 0.
pub fn suggest_group(
    s: &(dyn Solver + Sync),
    g: &Icfg,
    crashes: &[Crash<'_>],
    limits: &Limits,
) -> Suggestions {
    let start = Instant::now();
    let lines: Vec<MaybeLines> = crashes.iter().map(|c| MaybeLines::new(g, c.base)).collect();
    let classes = classes(g, crashes);
    let mut out = Suggestions {
        maybe_lines: lines.iter().map(|l| l.nodes.len()).sum(),
        crashes: crashes.len(),
        candidate_nodes: classes.iter().map(Vec::len).sum(),
        classes: classes.len(),
        complete: true,
        ..Suggestions::default()
    };
    let use_bounds = uses_bounds(g, crashes, limits.method, classes.len(), &mut out);
    out.method = if use_bounds {
        Method::Bounds
    } else {
        Method::Exact
    };
    if limits.k == 0 || classes.is_empty() {
        return out;
    }
    let ev = Evaluator {
        s,
        g,
        crashes,
        lines: &lines,
        analyses: AtomicUsize::new(0),
        utl_analyses: AtomicUsize::new(0),
        impossible: AtomicUsize::new(0),
        failed: Mutex::new(None),
        signatures: Mutex::new(Signatures::default()),
    };
    let out_of_budget = |deadline: Option<Instant>| {
        deadline.is_some_and(|d| Instant::now() >= d)
            || limits
                .max_analyses
                .is_some_and(|m| ev.analyses.load(Ordering::Relaxed) >= m)
    };
    let eval = |n: NodeId, obs: Observation| ev.eval(n, obs);
    let eval_utl = |n: NodeId, obs: Observation| ev.eval_utl(n, obs);
    let same = |top: &mut Vec<Suggestion>, sug: &Suggestion| ev.same(top, sug);
    let utl_applies = use_bounds
        && s.refines_utl()
        && s.name() != "utl"
        && crashes
            .iter()
            .all(|c| c.report.values.is_empty() && c.report.residue.is_empty());
    let mut notes: Vec<String> = out.note.take().into_iter().collect();
    let order = if !use_bounds && classes.len() > AUTO_EXACT_CLASSES {
        heuristic_order(g, crashes, &lines, &classes)
    } else {
        (0..classes.len()).collect()
    };
    let search = Search {
        order: &order,
        same: &same,
        s,
        g,
        crashes,
        lines: &lines,
        classes: &classes,
        limits,
        start,
        analyses: &ev.analyses,
        eval: &eval,
        eval_utl: utl_applies.then_some(&eval_utl as &UtlEval<'_>),
        out_of_budget: &out_of_budget,
    };
    let top = if use_bounds {
        search.by_bounds(&mut out, &mut notes)
    } else {
        search.exact(&mut out, &mut notes)
    };
    if let Some(e) = ev.failed.into_inner().expect("no worker panics") {
        out.complete = false;
        notes.push(format!(
            "some analyses failed ({e}); their points were left out"
        ));
    }
    out.top = top;
    out.surely = ev.impossible.into_inner();
    out.analyses = ev.analyses.into_inner();
    out.utl_analyses = ev.utl_analyses.into_inner();
    if !notes.is_empty() {
        out.note = Some(notes.join("; "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::icfg::{IcfgBuilder, NodeSpec};
    use crate::utl::Utl;

    /// main: s -> if (c) {a} else {b} -> j -> crash, with a and b two
    /// statements each (a chain), on lines of their own.
    fn diamond() -> (Icfg, Vec<NodeId>) {
        let mut b = IcfgBuilder::new();
        let f = b.function("main");
        b.set_function_file(f, "m.c");
        let mut add = |id: &str, kind, line: u32| {
            b.add_node(NodeSpec {
                ext_id: id,
                kind,
                func: f,
                label: id,
                lines: &[line],
            })
            .unwrap()
        };
        let s = add("s", NodeKind::Entry, 1);
        let c = add("c", NodeKind::Statement, 2);
        let a1 = add("a1", NodeKind::Statement, 3);
        let a2 = add("a2", NodeKind::Statement, 4);
        let b1 = add("b1", NodeKind::Statement, 5);
        let b2 = add("b2", NodeKind::Statement, 6);
        let j = add("j", NodeKind::Statement, 7);
        for (p, q) in [
            (s, c),
            (c, a1),
            (a1, a2),
            (a2, j),
            (c, b1),
            (b1, b2),
            (b2, j),
        ] {
            b.add_flow_edge(p, q);
        }
        b.set_start(s);
        (b.build().unwrap(), vec![s, c, a1, a2, b1, b2, j])
    }

    #[test]
    fn a_branch_decides_both_branches_and_chains_are_one_point() {
        let (g, n) = diamond();
        let report = Report {
            crash: Some(NodeSet::one(n[6])),
            ..Report::default()
        };
        let s = Utl::default();
        let base = analysis(&s, &g, &report).unwrap().unwrap();
        let r = suggest(&s, &g, &report, &base, &Limits::default());
        assert!(r.complete);
        assert_eq!(r.maybe_lines, 4);
        assert_eq!(r.candidate_nodes, 4);
        assert_eq!(r.classes, 2, "a1-a2 and b1-b2");
        // Either branch observed decides all four lines.
        assert_eq!(r.top.len(), 2);
        assert_eq!((r.top[0].if_ran, r.top[0].if_not), (4, 4));
        assert_eq!(r.top[0].equivalent, vec![n[2], n[3]]);
        let one = suggest(
            &s,
            &g,
            &report,
            &base,
            &Limits {
                k: 1,
                ..Limits::default()
            },
        );
        assert_eq!(one.top.len(), 1);
        // Two bounds, then one "ran": the second cannot beat the first.
        assert_eq!(one.analyses, 3);
    }

    #[test]
    fn nothing_maybe_gives_nothing_and_limits_are_reported() {
        let (g, n) = diamond();
        let report = Report {
            crash: Some(NodeSet::one(n[6])),
            obs_yes: vec![Trace {
                reliable: false,
                entries: vec![NodeSet::one(n[2])],
            }],
            ..Report::default()
        };
        let s = Utl::default();
        let base = analysis(&s, &g, &report).unwrap().unwrap();
        let r = suggest(&s, &g, &report, &base, &Limits::default());
        assert_eq!((r.maybe_lines, r.classes, r.top.len()), (0, 0, 0));
        assert!(r.complete);
        let report = Report {
            crash: Some(NodeSet::one(n[6])),
            ..Report::default()
        };
        let base = analysis(&s, &g, &report).unwrap().unwrap();
        let r = suggest(
            &s,
            &g,
            &report,
            &base,
            &Limits {
                max_analyses: Some(1),
                ..Limits::default()
            },
        );
        assert!(!r.complete);
        assert!(r.note.is_some());
        assert_eq!(r.analyses, 1);
    }
}
