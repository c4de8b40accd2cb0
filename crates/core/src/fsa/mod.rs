//! The FSA solver: any regular failure constraint and any regular query,
//! intersected with the context-insensitive ICFG language (PLDI 2017,
//! sections 3 and 5), explored on the fly.
//!
//! # Design
//!
//! The product of a real program with hundreds of coverage constraints is
//! far too large to build (the paper's FSA solver ran out of memory on most
//! real failures). We split the report:
//!
//! * constraints UTL expresses *exactly* (single-node unreliable traces,
//!   single-node `obsNo`, the crash set) are enforced **structurally**: the
//!   UTL condensation pass ([`crate::utl`]) computes the chain of required
//!   components and the usable edges, and the product only moves along
//!   those. Every such path visits the required components in order, which
//!   satisfies every UTL element in a trivial component;
//! * everything else (ambiguous sets, reliable and bursty traces, ambiguous
//!   `obsNo`, the query) becomes a deterministic automaton over node classes
//!   ([`automaton`]), one per constraint;
//! * inside a non-trivial component where no automaton changes state (a
//!   *silent* component), the product keeps one vertex per automaton state
//!   for the whole component: a crossing can visit any of its nodes in any
//!   order, so the UTL elements inside are satisfied by detours; in a
//!   component where some automaton acts, the UTL elements inside get
//!   subsequence automata of their own.
//!
//! # Bulk recovery
//!
//! One forward exploration and one backward pass over the explored product
//! give the trimmed product graph; a node may run iff one of its vertices
//! survives. A node must run iff its vertices form a cut of the trimmed
//! graph: a dominator tree answers for nodes with one vertex (and proves the
//! cut for the others when one vertex dominates the sink); the rest are
//! checked by one search each. Inside a silent component, whether the
//! crossing can avoid a node is the UTL crossing analysis again, once per
//! automaton state, with the entries and exits the trimmed product uses.

/// The constraint automata, at the top of the crate (queries use them too).
pub use crate::automaton;
mod contracted;
pub(crate) mod product;

use crate::algo::{self, SccId, Walker};
use crate::graph::{BitSet, Csr};
use crate::icfg::Icfg;
use crate::ids::{IdVec, NodeId};
use crate::lower::{lower, Reduction, Split, Strategy};
use crate::report::{NodeSet, Origin, Report};
use crate::solver::{Answer, Checked, Label, Query, Recovery, SolveError, Solver};
use crate::structure::{BulkLimits, BulkStats, Core, Crossing, Ends, Segments, Verdict};
use automaton::Dfa;
use product::{Loc, Product, Stop, VertexId};
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// Limits of the FSA solver. Reaching one degrades answers soundly.
#[derive(Copy, Clone, Debug)]
pub struct FsaLimits {
    /// Maximum number of product vertices (and, to bound memory, at most
    /// 8 times this many automaton states stored over all vertices).
    pub max_states: usize,
    /// Maximum wall-clock time per exploration.
    pub timeout: Option<Duration>,
    /// Limits of the crossing analysis inside silent components.
    pub bulk: BulkLimits,
    /// Work budget (vertex visits) for exact cut checks.
    pub exact_work: u64,
    /// Vertex limit of the contracted product (see `contracted.rs`; 0:
    /// never use it, and fall back to UTL at once when the full product
    /// exceeds `max_states`).
    pub coarse_states: usize,
    /// Exact checks (one antichain exploration of the contracted product
    /// each) it may make for nodes its witnesses and dominators leave
    /// undecided.
    pub coarse_checks: usize,
    /// Bulk recovery and queries explore the contracted product before the
    /// full one, and keep its answer when it decided everything; the full
    /// product is explored only when it did not.
    pub contracted_first: bool,
    /// Memory budget, in bytes, of every product exploration (estimated
    /// from what it stores; the CLI gives half the machine's RAM).
    pub max_memory: usize,
    /// Queries bulk recovery may make to settle, one by one, the nodes
    /// that ambiguous `obsNo` sets dropped from the product leave unsure
    /// (see `Fsa::settle`); nodes beyond are listed as undecided.
    pub settle_checks: usize,
    /// While more than this many Maybe nodes are unconfirmed, every
    /// witness [`Fsa::settle`] finds (an execution of the report) also
    /// gives a *choice* that is surely possible (each ambiguous `obsNo`
    /// set's member it skips), whose bulk recovery confirms Maybe nodes in
    /// bulk. `usize::MAX`: never, only the witness itself is evidence.
    pub witness_choices: usize,
}

impl Default for FsaLimits {
    fn default() -> Self {
        FsaLimits {
            max_states: 4_000_000,
            timeout: None,
            bulk: BulkLimits::default(),
            exact_work: 2_000_000_000,
            coarse_states: 4_000_000,
            coarse_checks: 128,
            contracted_first: true,
            max_memory: 4 << 30,
            settle_checks: 256,
            witness_choices: SETTLE_AT,
        }
    }
}

/// The FSA solver.
#[derive(Clone, Debug, Default)]
pub struct Fsa {
    /// Its limits.
    pub limits: FsaLimits,
}

/// Splits a report (and query) into structural UTL constraints and
/// automata: [`lower`] with [`Strategy::Automata`].
///
/// With `red` (the report reduced with the UTL solver's labels, sound for
/// it: every consistent execution runs the Yes nodes and none of the No
/// nodes), the reduced report is lowered, and reduced again while lowering
/// (see [`lower`]). Returns the origin of the constraint that the
/// reduction found impossible.
pub(crate) fn split(
    g: &Icfg,
    report: &Report,
    query: Option<&Query>,
    red: Option<&Reduced>,
    max_auto_states: usize,
) -> Result<Split, Origin> {
    let report = red.map_or(report, |r| &r.report);
    let strategy = Strategy::Automata {
        reduction: red.map(|r| Reduction {
            labels: &r.labels,
            no_origin: &r.no_origin,
        }),
        max_bursty: max_auto_states.min(MAX_BURSTY_STATES),
    };
    lower(g, report, query, strategy)
}

/// A report reduced exactly with the UTL labels (see [`Fsa::reduction`]).
pub(crate) struct Reduced {
    /// The reduced report: same stack, `obsYes` and bursty traces (elements
    /// without members that never run), fewer `obsNo` sets.
    report: Report,
    /// UTL's labels for `report` (sound for it and for the original).
    labels: Vec<Label>,
    /// The original index of every `obsNo` set of `report`.
    no_origin: Vec<usize>,
}

/// Most states of a bursty trace's automaton (a subset construction);
/// beyond, the trace is weakened to an unreliable one.
const MAX_BURSTY_STATES: usize = 1 << 16;

impl Split {
    /// This split without the droppable automata (ambiguous `obsNo`) at
    /// `drop` (indices into `droppable`), each listed as weakened.
    fn without(&self, drop: &[usize], why: &str) -> Split {
        let gone: HashSet<usize> = drop.iter().map(|&i| self.droppable[i]).collect();
        let mut base = self.base.clone();
        let mut autos = Vec::new();
        let mut droppable = Vec::new();
        for (i, a) in self.autos.iter().enumerate() {
            if gone.contains(&i) {
                base.weakened.push(crate::solver::Weakening {
                    origin: a.origin,
                    how: format!("\"at least one of these nodes did not run\" dropped: {why}"),
                });
                continue;
            }
            if self.droppable.contains(&i) {
                droppable.push(autos.len());
            }
            autos.push(a.clone());
        }
        Split {
            base,
            autos,
            traces: self.traces.clone(),
            droppable,
        }
    }
}

/// The UTL structure plus the automata (with trackers for UTL elements in
/// components where automata act).
struct Prepared {
    core: Core,
    seg: Segments,
    ends: Ends,
    autos: Vec<Dfa>,
}

impl Fsa {
    fn prepare(&self, g: &Icfg, sp: &Split, start: &[u32]) -> Option<Prepared> {
        let inst = sp.instance(g, start);
        let core = sp.solve(&inst)?;
        let ends = Ends::new(&inst);
        let seg = core.segments(&inst, &ends);
        // Components where some automaton acts get trackers for the UTL
        // elements they hold.
        let sccs = &core.sccs;
        let mut autos = sp.autos.clone();
        let mut loud = BitSet::new(g.num_nodes());
        let all_loud = autos.iter().any(|a| !a.silent_elsewhere());
        for a in &autos {
            for v in a.mentioned() {
                if !a.silent_on(v) {
                    loud.insert(v as usize);
                }
            }
        }
        let active: IdVec<SccId, bool> = sccs
            .ids()
            .map(|c| {
                !sccs.is_trivial(c)
                    && (all_loud
                        || sccs
                            .members_of(c)
                            .iter()
                            .any(|&v| loud.contains(v as usize)))
            })
            .collect();
        for (i, vec) in sp.vectors.iter().enumerate() {
            let inside: Vec<NodeSet> = vec
                .iter()
                .filter(|&&e| active[sccs.comp(e).expect("a live element")])
                .map(|&e| NodeSet::one(NodeId::new(e as usize)))
                .collect();
            if !inside.is_empty() {
                autos.push(Dfa::subsequence(Origin::ObsYes(i), &inside));
            }
        }
        Some(Prepared {
            core,
            seg,
            ends,
            autos,
        })
    }

    /// [`Solver::check`], building the witness only if `witness`.
    fn check_with(
        &self,
        g: &Icfg,
        report: &Report,
        query: Option<&Query>,
        witness: bool,
    ) -> Result<Checked, SolveError> {
        let impossible = Checked {
            answer: Answer::Impossible,
            weakened: vec![],
            witness: None,
        };
        let red = match self.reduction(g, report) {
            Ok(r) => r,
            Err(_) => return Ok(impossible),
        };
        self.check_reduced(g, report, red.as_ref(), query, witness)
    }

    /// [`Fsa::check_with`] once `report` is reduced to `red`.
    fn check_reduced(
        &self,
        g: &Icfg,
        report: &Report,
        red: Option<&Reduced>,
        query: Option<&Query>,
        witness: bool,
    ) -> Result<Checked, SolveError> {
        let impossible = Checked {
            answer: Answer::Impossible,
            weakened: vec![],
            witness: None,
        };
        let Ok(sp) = split(g, report, query, red, self.limits.max_states) else {
            return Ok(impossible);
        };
        let start = [g.start().as_u32()];
        let Some(prep) = self.prepare(g, &sp, &start) else {
            return Ok(impossible);
        };
        // A witness must satisfy every constraint: none if one was weakened.
        let witness = witness && sp.weakened.is_empty();
        let weakened = sp.weakened.clone();
        // The contracted product first (antichains, exact for emptiness);
        // the full product if that reaches its limit.
        if self.limits.contracted_first && self.limits.coarse_states > 0 {
            let st = structure(g, &prep, start[0]);
            match contracted::explore(
                &st,
                &sp,
                self.coarse_limits(),
                contracted::Mode::Check { witness },
            ) {
                Ok(contracted::Outcome::Witness(w)) => {
                    let witness = w.into_iter().map(|v| NodeId::new(v as usize)).collect();
                    return Ok(Checked {
                        answer: Answer::Possible,
                        weakened,
                        witness: Some(witness),
                    });
                }
                Ok(contracted::Outcome::Impossible) => return Ok(impossible),
                Ok(contracted::Outcome::Possible) => {
                    return Ok(Checked {
                        answer: Answer::Possible,
                        weakened,
                        witness: None,
                    });
                }
                Ok(_) | Err(Stop::States(_)) | Err(Stop::Memory(_)) => {}
                Err(Stop::Time) => return Err(SolveError::Limit(stop_message(Stop::Time))),
            }
        }
        let mut p = product(g, &prep, start[0]);
        match p.explore(
            true,
            self.limits.max_states,
            self.limits.max_memory,
            self.deadline(),
        ) {
            Ok(false) => Ok(impossible),
            Ok(true) => {
                let last = p.first_accepting().expect("accepting vertex");
                let witness = witness.then(|| Self::witness(g, &p, &sp.vectors, last));
                Ok(Checked {
                    answer: Answer::Possible,
                    weakened,
                    witness,
                })
            }
            Err(s) => {
                drop(p);
                match self.check_weakened(g, &prep, &sp, start[0], &stop_message(s.clone())) {
                    Some(c) => Ok(c),
                    None => Err(SolveError::Limit(stop_message(s))),
                }
            }
        }
    }

    /// When both products are too large: the contracted product with only
    /// the ambiguous `obsNo` automata that fit (none, 1, 2, 4, ...). An
    /// impossible answer is exact (a weaker report already is); a witness
    /// that happens to satisfy the dropped sets too is a real one, and the
    /// answer exact; otherwise the answer is "possible" for the weakened
    /// report, each dropped set listed, without a witness.
    fn check_weakened(
        &self,
        g: &Icfg,
        prep: &Prepared,
        sp: &Split,
        start: u32,
        why: &str,
    ) -> Option<Checked> {
        let total = sp.droppable.len();
        if total == 0 || !self.limits.contracted_first || self.limits.coarse_states == 0 {
            return None;
        }
        let st = structure(g, prep, start);
        let limits = self.coarse_limits();
        let why = format!("the product with it did not fit ({why})");
        let mut best: Option<Vec<crate::solver::Weakening>> = None;
        let mut keep = 0;
        loop {
            let drop: Vec<usize> = (keep..total).collect();
            let weak = sp.without(&drop, &why);
            match contracted::explore(
                &st,
                &weak,
                limits,
                contracted::Mode::Check { witness: true },
            ) {
                Ok(contracted::Outcome::Impossible) => {
                    return Some(Checked {
                        answer: Answer::Impossible,
                        weakened: sp.weakened.clone(),
                        witness: None,
                    })
                }
                Ok(contracted::Outcome::Witness(w)) => {
                    let dropped = drop.iter().map(|&i| &sp.autos[sp.droppable[i]]);
                    if dropped.into_iter().all(|a| accepts(a, &w)) && sp.weakened.is_empty() {
                        return Some(Checked {
                            answer: Answer::Possible,
                            weakened: vec![],
                            witness: Some(w.into_iter().map(|v| NodeId::new(v as usize)).collect()),
                        });
                    }
                    best = Some(weak.base.weakened);
                }
                Ok(_) => {}
                Err(_) => break,
            }
            if keep + 1 >= total {
                break;
            }
            keep = (keep * 2).max(1).min(total - 1);
        }
        best.map(|weakened| Checked {
            answer: Answer::Possible,
            weakened,
            witness: None,
        })
    }

    /// `report` reduced exactly with UTL's labels, before any automaton
    /// is built (see [`split`]): `None` when it has nothing to reduce (no
    /// "one of these" set). Reduces and relabels a few times, since a
    /// reduced report (an ambiguous `obsNo` become single) can give UTL
    /// more labels; the labels returned are always those of the report
    /// returned (never used on the report they were derived from with a
    /// reduction of their own). `Err` if the report is impossible.
    fn reduction(&self, g: &Icfg, report: &Report) -> Result<Option<Reduced>, ()> {
        let ambiguous = report.obs_no.iter().any(|s| s.single().is_none())
            || report
                .obs_yes
                .iter()
                .any(|t| t.entries.iter().any(|e| e.single().is_none()))
            || report
                .stack
                .iter()
                .any(|f| f.call.single().is_none() || f.entry.single().is_none())
            || !report.bursty.is_empty()
            || !report.values.is_empty();
        if !ambiguous {
            return Ok(None);
        }
        let utl = crate::utl::Utl::default();
        let mut r = report.clone();
        let mut no_origin: Vec<usize> = (0..r.obs_no.len()).collect();
        let mut round = 0;
        loop {
            let labels = match utl.recover(g, &r) {
                Ok(rec) => rec.labels,
                Err(SolveError::Infeasible { .. }) => return Err(()),
                Err(_) => return Ok(None),
            };
            round += 1;
            if round == 3 {
                return Ok(Some(Reduced {
                    report: r,
                    labels,
                    no_origin,
                }));
            }
            let (r2, kept) = reduced(&r, &labels)?;
            if r2 == r {
                return Ok(Some(Reduced {
                    report: r,
                    labels,
                    no_origin,
                }));
            }
            no_origin = kept.into_iter().map(|i| no_origin[i]).collect();
            r = r2;
        }
    }

    fn coarse_limits(&self) -> contracted::CoarseLimits {
        contracted::CoarseLimits {
            max_states: self.limits.coarse_states,
            deadline: self.deadline(),
            max_memory: self.limits.max_memory,
            checks: self.limits.coarse_checks,
        }
    }

    fn deadline(&self) -> Option<Instant> {
        self.limits.timeout.map(|t| Instant::now() + t)
    }

    /// Expands a product path into consecutive ICFG nodes.
    fn witness(g: &Icfg, p: &Product<'_>, vectors: &[Vec<u32>], last: VertexId) -> Vec<NodeId> {
        let sccs = &p.core.sccs;
        let csr = g.succ_csr();
        let edges = p.tree_path(last);
        let mut path: Vec<u32> = vec![p.start];
        let mut walker = Walker::new(g.num_nodes());
        // Inside a silent component: from `entry`, visit the UTL elements it
        // holds (vector by vector, in order), then reach `exit`.
        let mut cross = |path: &mut Vec<u32>, c: SccId, entry: u32, exit: Option<u32>| {
            let mut cur = entry;
            let in_c = |v: u32| sccs.comp(v) == Some(c);
            let mut goals: Vec<u32> = vectors
                .iter()
                .flat_map(|v| v.iter().copied().filter(|&e| in_c(e)))
                .collect();
            match exit {
                Some(x) => goals.push(x),
                None => {
                    // End at a target inside the component.
                    let t = sccs
                        .members_of(c)
                        .iter()
                        .copied()
                        .find(|&v| p.ends.is_target(v))
                        .expect("target");
                    goals.push(t);
                }
            }
            let last_goal = goals.len() - 1;
            for (i, goal) in goals.into_iter().enumerate() {
                // The entry visit matches a first goal equal to it, and the
                // exit needs no new visit; any other repeated visit of the
                // current node needs a real cycle.
                let stay = i == 0 || i == last_goal;
                let leg = walker
                    .walk(csr, cur, |x| x == goal, in_c, stay, usize::MAX)
                    .expect("strongly connected");
                path.extend_from_slice(&leg);
                cur = goal;
            }
        };
        let mut entry = p.start;
        for e in &edges {
            if let Loc::Comp(c) = p.loc(e.from) {
                cross(&mut path, c, entry, Some(e.from_node));
            }
            path.push(e.to_node);
            entry = e.to_node;
        }
        if let Loc::Comp(c) = p.loc(last) {
            cross(&mut path, c, entry, None);
        }
        path.into_iter().map(|v| NodeId::new(v as usize)).collect()
    }
}

fn stop_message(s: Stop) -> String {
    match s {
        Stop::States(n) => format!("the product exceeded {n} states (--max-states)"),
        Stop::Time => "the exploration exceeded its time limit (--timeout)".into(),
        Stop::Memory(b) => format!(
            "the product exceeded its memory budget of {} MiB (--max-memory)",
            b >> 20
        ),
    }
}

/// Milliseconds since `t` (for `solver_stats`).
fn millis(t: Instant) -> u64 {
    t.elapsed().as_millis() as u64
}

/// Whether the automaton accepts the node sequence `w`.
fn accepts(a: &Dfa, w: &[u32]) -> bool {
    a.initial.iter().any(|&q0| {
        let mut q = q0;
        for &v in w {
            q = a.step(q, v);
            if q == automaton::DEAD {
                return false;
            }
        }
        a.accepting[q as usize]
    })
}

/// `report` reduced with sound `labels` (see [`split`]), and the index in
/// `report` of every `obsNo` set kept (dropped ones disappear). `Err` if a
/// reduction shows the report impossible.
fn reduced(report: &Report, labels: &[Label]) -> Result<(Report, Vec<usize>), ()> {
    let l = |n: &NodeId| labels[n.index()];
    let elem = |e: &NodeSet| -> Result<NodeSet, ()> {
        if e.single().is_some() {
            return Ok(e.clone());
        }
        NodeSet::new(
            e.nodes()
                .iter()
                .copied()
                .filter(|n| l(n) != Label::No)
                .collect(),
        )
        .ok_or(())
    };
    let mut r = report.clone();
    for f in &mut r.stack {
        f.call = elem(&f.call)?;
        f.entry = elem(&f.entry)?;
    }
    for t in &mut r.obs_yes {
        t.entries = t.entries.iter().map(elem).collect::<Result<_, _>>()?;
    }
    for b in &mut r.bursty {
        for burst in &mut b.bursts {
            *burst = burst.iter().map(elem).collect::<Result<_, _>>()?;
        }
    }
    let mut no = Vec::new();
    let mut kept = Vec::new();
    for (i, s) in report.obs_no.iter().enumerate() {
        if s.single().is_some() {
            no.push(s.clone());
            kept.push(i);
            continue;
        }
        if s.nodes().iter().any(|n| l(n) == Label::No) {
            continue;
        }
        let left: Vec<NodeId> = s
            .nodes()
            .iter()
            .copied()
            .filter(|n| l(n) != Label::Yes)
            .collect();
        no.push(NodeSet::new(left).ok_or(())?);
        kept.push(i);
    }
    r.obs_no = no;
    Ok((r, kept))
}

impl Solver for Fsa {
    fn name(&self) -> &'static str {
        "fsa"
    }

    fn check(
        &self,
        g: &Icfg,
        report: &Report,
        query: Option<&Query>,
    ) -> Result<Checked, SolveError> {
        self.check_with(g, report, query, true)
    }

    fn possible(
        &self,
        g: &Icfg,
        report: &Report,
        query: Option<&Query>,
    ) -> Result<Answer, SolveError> {
        self.check_with(g, report, query, false).map(|c| c.answer)
    }

    fn recover(&self, g: &Icfg, report: &Report) -> Result<Recovery, SolveError> {
        let started = Instant::now();
        // Ambiguous `obsNo` sets that do not fit are dropped from the
        // product at once; [`Fsa::confirm`] then makes the labels exact.
        let explained = |e: SolveError| match e {
            SolveError::Infeasible { .. } => SolveError::Infeasible {
                culprit: self.culprit(g, report).unwrap_or(Origin::Crash),
            },
            e => e,
        };
        let mut rec = self
            .recover_once(g, report, false, None)
            .map_err(explained)?;
        rec.stats.push(("fsa_bulk_ms", millis(started)));
        if confirmable(report, &rec) {
            return Ok(self.confirm(g, report, rec, started));
        }
        if rec.weakened.iter().any(|w| dropped(report, w)) {
            // Nothing can undo some other weakening: keep as many of the
            // sets as fit instead.
            return self.recover_once(g, report, true, None).map_err(explained);
        }
        Ok(rec)
    }
}

/// Whether `w` dropped an ambiguous `obsNo` set of `report`.
fn dropped(report: &Report, w: &crate::solver::Weakening) -> bool {
    matches!(w.origin, Origin::ObsNo(i) if report.obs_no.get(i).is_some_and(|s| s.nodes().len() > 1))
}

/// Whether `w` only gave up deciding nodes (each listed as undecided).
fn gave_up(w: &crate::solver::Weakening) -> bool {
    w.origin == Origin::Query
}

/// Whether [`Fsa::confirm`] can make `rec` exact: it dropped ambiguous
/// `obsNo` sets and nothing else (a bursty trace made unreliable, say,
/// no choice can undo).
fn confirmable(report: &Report, rec: &Recovery) -> bool {
    rec.weakened.iter().any(|w| dropped(report, w))
        && rec
            .weakened
            .iter()
            .all(|w| dropped(report, w) || gave_up(w))
}

/// While searching how many ambiguous `obsNo` sets fit in the contracted
/// product, each attempt may have this many times the vertices of the last
/// one that fit (and at least [`KEEP_FLOOR`]).
const KEEP_GROWTH: usize = 4;
const KEEP_FLOOR: usize = 100_000;

/// Rounds of [`Fsa::confirm`]: choices tried at most. Rounds stop earlier
/// once at most [`SETTLE_AT`] nodes are left unconfirmed, or after a batch
/// of rounds that did not confirm half of those left: the rest are
/// cheaper settled one by one.
const CONFIRM_ROUNDS: u64 = 16;
const SETTLE_AT: usize = 16;
/// Choices tried at once, in parallel (at most one per core).
const MAX_PARALLEL_CHOICES: usize = 4;
/// [`Fsa::settle`] runs one bulk recovery with the sets it tracks when
/// deciding a node left at least this many nodes to settle.
const SETTLE_BULK_AT: usize = 8;

impl Fsa {
    /// Makes labels computed with ambiguous `obsNo` sets weakened (dropped
    /// because the product with them did not fit) exact where it can.
    ///
    /// The labels are sound, but a Maybe may be a Yes or a No that the
    /// dropped sets would have shown. A *choice* names, for every
    /// ambiguous `obsNo` set, one member that did not run; the report with
    /// each set replaced by its chosen member (a single node, no automaton)
    /// has only executions of the report, so whatever it shows possible is
    /// possible: a node that is Maybe under one choice, or Yes under one
    /// and No under another, is really Maybe. Rounds of choices (members
    /// drawn pseudo-randomly, never a Yes one, preferring members still
    /// lacking an execution that skips them and avoiding those lacking one
    /// that runs them) run while they confirm nodes, each as cheap as one
    /// recovery without ambiguous sets (see [`CONFIRM_ROUNDS`]); the few
    /// nodes left are settled one by one ([`Fsa::settle`]), which may also
    /// turn a Maybe into the Yes or No it really is. When every Maybe is
    /// confirmed the labels are exact and the weakenings are withdrawn;
    /// otherwise the unconfirmed Maybe nodes are listed as undecided (and
    /// the weakenings stay listed).
    fn confirm(&self, g: &Icfg, report: &Report, mut rec: Recovery, started: Instant) -> Recovery {
        if !confirmable(report, &rec) {
            return rec;
        }
        // The report reduced with UTL's labels: they are sound for every
        // choice (a stronger report) and every report with fewer ambiguous
        // `obsNo` sets (UTL ignores them), so they spare a UTL run each.
        let red = self.reduction(g, report).ok().flatten();
        let sound = red.as_ref().map(|r| &r.labels[..]);
        let mut ev = Evidence::new(&rec.labels);
        let undecided: HashSet<NodeId> = rec.undecided.iter().copied().collect();
        let t = Instant::now();
        let rounds = self.confirm_rounds(g, report, &rec.labels, &mut ev, sound, started);
        rec.stats.push(("confirm_rounds", rounds));
        rec.stats.push(("confirm_ms", millis(t)));
        rec.stats.push(("confirm_left", ev.left(0) as u64));
        let t = Instant::now();
        let settled = self.settle(g, report, &mut rec.labels, &mut ev, started, red.as_ref());
        rec.stats.push(("settle_checks", settled.checks));
        rec.stats.push(("settle_decided", settled.decided));
        rec.stats.push(("settle_again", settled.again));
        rec.stats.push(("settle_witnesses", settled.witnesses));
        rec.stats.push(("settle_gave_up", settled.gave_up));
        rec.stats.push(("settle_choices", settled.choices));
        rec.stats.push(("settle_left", ev.left(0) as u64));
        rec.stats.push(("settle_ms", millis(t)));
        let unconfirmed = ev.unconfirmed();
        if unconfirmed.is_empty() {
            // Every label is exact: nothing was given up either.
            rec.weakened.retain(|w| !dropped(report, w) && !gave_up(w));
            rec.undecided.clear();
        } else {
            let mut all: Vec<NodeId> = undecided.into_iter().chain(unconfirmed).collect();
            all.sort_unstable();
            all.dedup();
            rec.undecided = all;
        }
        rec
    }

    /// [`Fsa::confirm`]'s rounds of choices, a batch of them in parallel
    /// (choices are independent), while they confirm nodes; the number of
    /// choices tried.
    fn confirm_rounds(
        &self,
        g: &Icfg,
        report: &Report,
        labels: &[Label],
        ev: &mut Evidence,
        sound: Option<&[Label]>,
        started: Instant,
    ) -> u64 {
        let mut rounds = 0;
        let mut left = ev.maybe.len();
        let mut stalled = false;
        let width = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_PARALLEL_CHOICES);
        while rounds < CONFIRM_ROUNDS && left > 0 && (rounds == 0 || left > SETTLE_AT) && !stalled {
            let remaining = match self.limits.timeout {
                Some(t) => match t.checked_sub(started.elapsed()) {
                    Some(r) if !r.is_zero() => Some(r),
                    _ => break,
                },
                None => None,
            };
            let choices: Vec<Report> = (0..width).map(|_| ev.choice(report, labels)).collect();
            let mut inner = self.clone();
            inner.limits.timeout = remaining;
            rounds += choices.len() as u64;
            let results: Vec<Result<Recovery, SolveError>> = std::thread::scope(|scope| {
                let inner = &inner;
                let runs: Vec<_> = choices
                    .iter()
                    .map(|c| scope.spawn(move || inner.recover_once(g, c, false, sound)))
                    .collect();
                runs.into_iter()
                    .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .collect()
            });
            // An impossible (or too large) choice shows nothing.
            for r in results.into_iter().flatten() {
                ev.record(&r);
            }
            let now = ev.left(0);
            stalled = now > left / 2;
            left = now;
        }
        rounds
    }

    /// Settles the Maybe nodes that no choice confirmed, one by one, by
    /// counterexample-guided refinement: asks whether the node may run (may
    /// be skipped) under the report with only the ambiguous `obsNo` sets
    /// tracked so far; a witness that satisfies every set is evidence (for
    /// every node, on or off it); one that violates sets adds them to the
    /// tracked ones; an impossible answer is exact (a weaker report), and
    /// decides the node. Returns the checks made and the nodes decided.
    fn settle(
        &self,
        g: &Icfg,
        report: &Report,
        labels: &mut [Label],
        ev: &mut Evidence,
        started: Instant,
        red: Option<&Reduced>,
    ) -> SettleStats {
        // The report reduced once (UTL ignores ambiguous `obsNo` sets, so
        // its labels hold for every subset of them).
        let Some(red) = red else {
            return SettleStats::default();
        };
        let base = &red.report;
        let ambiguous: Vec<usize> = (0..base.obs_no.len())
            .filter(|&i| base.obs_no[i].nodes().len() > 1)
            .collect();
        let mut st = Settler {
            red,
            report,
            tried: HashSet::new(),
            tracked: vec![false; ambiguous.len()],
            bulk_tracked: vec![false; ambiguous.len()],
            ambiguous,
            original: report
                .obs_no
                .iter()
                .filter(|s| s.nodes().len() > 1)
                .collect(),
            stats: SettleStats::default(),
            started,
        };
        for k in 0..ev.maybe.len() {
            for need in [Need::Run, Need::Skip] {
                if Evidence::confirmed(ev.seen[k]) || ev.seen[k] & need.bit() != 0 {
                    continue;
                }
                let next = loop {
                    match st.check(self, g, labels, ev, k, need) {
                        Settle::Again => continue,
                        next => break next,
                    }
                };
                match next {
                    Settle::Stop => return st.stats,
                    Settle::NextNode => break,
                    Settle::NextNeed | Settle::Again => {}
                }
            }
        }
        st.stats
    }

    /// One bulk recovery. When the product with every ambiguous `obsNo`
    /// set does not fit, `keep_search` keeps as many as fit (none, 1, 2,
    /// 4, ...); without it, all of them are dropped at once. `sound`:
    /// labels known sound for `report` (from a weaker report whose
    /// ambiguous `obsNo` sets they ignore, see [`Fsa::reduction`]), used
    /// to reduce it instead of running UTL on it.
    fn recover_once(
        &self,
        g: &Icfg,
        report: &Report,
        keep_search: bool,
        sound: Option<&[Label]>,
    ) -> Result<Recovery, SolveError> {
        // The culprit is found by the caller (see `Fsa::recover`).
        let infeasible = || SolveError::Infeasible {
            culprit: Origin::Crash,
        };
        let red = match sound {
            // Labels sound for a weaker report hold here: one reduction
            // with them, no UTL run.
            Some(labels) => {
                let (r, kept) = reduced(report, labels).map_err(|_| infeasible())?;
                Some(Reduced {
                    report: r,
                    labels: labels.to_vec(),
                    no_origin: kept,
                })
            }
            None => self.reduction(g, report).map_err(|_| infeasible())?,
        };
        let sp = split(g, report, None, red.as_ref(), self.limits.max_states)
            .map_err(|_| infeasible())?;
        let start = [g.start().as_u32()];
        let Some(prep) = self.prepare(g, &sp, &start) else {
            return Err(infeasible());
        };
        let st = structure(g, &prep, start[0]);
        let runs = CoarseRuns {
            st: &st,
            limits: self.coarse_limits(),
        };
        // The contracted product first: far smaller, and exact unless it
        // lists nodes it could not decide.
        let mut first: Option<Result<contracted::Outcome, Stop>> = None;
        if self.limits.contracted_first && self.limits.coarse_states > 0 {
            match runs.run(&sp, false) {
                Ok(contracted::Outcome::Classified(c)) if c.decided() => {
                    return Ok(contracted_recovery(g, &c, sp.weakened.clone()))
                }
                Ok(contracted::Outcome::Classified(c)) => {
                    first = Some(Ok(contracted::Outcome::Classified(c)))
                }
                Ok(_) => return Err(infeasible()),
                Err(s) => {
                    if let Some(rec) = Self::keep_fitting(g, report, &runs, &sp, &s, keep_search)? {
                        return Ok(rec);
                    }
                    first = Some(Err(s))
                }
            }
        }
        // The full product.
        let mut p = product(g, &prep, start[0]);
        match p.explore(
            false,
            self.limits.max_states,
            self.limits.max_memory,
            self.deadline(),
        ) {
            Ok(false) => Err(infeasible()),
            Ok(true) => {
                let mut rec = classify(g, &p, &sp, self.limits);
                rec.weakened.extend(sp.weakened.iter().cloned());
                Ok(rec)
            }
            Err(s) => {
                drop(p);
                self.coarse_fallback(g, report, &runs, &sp, first, stop_message(s))
            }
        }
    }

    /// When the contracted product with every ambiguous `obsNo` did not
    /// fit (stopped by `s`): the recovery with the ones that fit (in report
    /// order: none, then 1, 2, 4, ... with `keep_search`, so that only the
    /// last attempt fails; else none), the rest weakened. `None` if even
    /// none did not fit (or a deadline stopped it).
    fn keep_fitting(
        g: &Icfg,
        report: &Report,
        runs: &CoarseRuns<'_, '_>,
        sp: &Split,
        s: &Stop,
        keep_search: bool,
    ) -> Result<Option<Recovery>, SolveError> {
        if matches!(s, Stop::Time) || sp.droppable.is_empty() {
            return Ok(None);
        }
        let why = format!(
            "the product with it did not fit ({})",
            stop_message(s.clone())
        );
        let total = sp.droppable.len();
        let mut best: Option<(contracted::Coarse, Split)> = None;
        let mut keep = 0;
        let mut within = runs.limits;
        loop {
            let drop: Vec<usize> = (keep..total).collect();
            let weak = sp.without(&drop, &why);
            match runs.run_within(&weak, false, within) {
                Ok(contracted::Outcome::Classified(c)) => {
                    // Each attempt may grow the product by KEEP_GROWTH over
                    // the last one that fit: the attempt that does not fit
                    // stops early.
                    within.max_states = runs
                        .limits
                        .max_states
                        .min((c.vertices * KEEP_GROWTH).max(KEEP_FLOOR));
                    best = Some((c, weak))
                }
                // The weaker report is impossible only if the report is.
                Ok(_) => {
                    return Err(SolveError::Infeasible {
                        culprit: Origin::Crash,
                    })
                }
                Err(_) => break,
            }
            if keep + 1 >= total || !keep_search {
                break;
            }
            keep = (keep * 2).max(1).min(total - 1);
        }
        let Some((c, weak)) = best else {
            return Ok(None);
        };
        if c.decided() {
            return Ok(Some(contracted_recovery(g, &c, weak.base.weakened)));
        }
        let mut rec = coarse_recovery(g, report, &c, "some nodes were left undecided".into())?;
        rec.weakened.extend(weak.base.weakened);
        Ok(Some(rec))
    }

    /// When the full product did not fit (`why`): the contracted product's
    /// labels merged with UTL's (`first`: its attempt with every automaton,
    /// if made), explicitly first (exact "may run"), with antichains if
    /// that is too big; else UTL's alone.
    fn coarse_fallback(
        &self,
        g: &Icfg,
        report: &Report,
        runs: &CoarseRuns<'_, '_>,
        sp: &Split,
        first: Option<Result<contracted::Outcome, Stop>>,
        why: String,
    ) -> Result<Recovery, SolveError> {
        if self.limits.coarse_states == 0 {
            return degrade(g, report, why);
        }
        let c = match first.unwrap_or_else(|| runs.run(sp, false)) {
            Err(Stop::States(_)) | Err(Stop::Memory(_)) => runs.run(sp, true),
            other => other,
        };
        match c {
            Ok(contracted::Outcome::Classified(c)) => {
                let mut rec = coarse_recovery(g, report, &c, why)?;
                rec.weakened.extend(sp.weakened.iter().cloned());
                Ok(rec)
            }
            Ok(_) => Err(SolveError::Infeasible {
                culprit: Origin::Crash,
            }),
            Err(s2) => degrade(
                g,
                report,
                format!("{why}; coarse tier: {}", stop_message(s2)),
            ),
        }
    }
}

/// Bulk classifications of the contracted product of one structure, all
/// under the same limits (one deadline for every attempt).
struct CoarseRuns<'s, 'a> {
    st: &'s contracted::Structure<'a>,
    limits: contracted::CoarseLimits,
}

impl CoarseRuns<'_, '_> {
    fn run(&self, sp: &Split, subsume: bool) -> Result<contracted::Outcome, Stop> {
        self.run_within(sp, subsume, self.limits)
    }

    fn run_within(
        &self,
        sp: &Split,
        subsume: bool,
        limits: contracted::CoarseLimits,
    ) -> Result<contracted::Outcome, Stop> {
        contracted::explore(self.st, sp, limits, contracted::Mode::Classify { subsume })
    }
}

/// What [`Fsa::confirm`] knows of the nodes Maybe: per node, what the
/// results of choices showed, and the draws that make choices.
struct Evidence {
    /// The Maybe nodes (indices, sorted).
    maybe: Vec<usize>,
    /// Per Maybe node: 1 seen Yes, 2 seen No, 4 seen Maybe (or decided).
    seen: Vec<u8>,
    /// SplitMix64 (Steele, Lea, Flood 2014): deterministic draws.
    rng: u64,
}

impl Evidence {
    fn new(labels: &[Label]) -> Evidence {
        let maybe: Vec<usize> = (0..labels.len())
            .filter(|&i| labels[i] == Label::Maybe)
            .collect();
        Evidence {
            seen: vec![0u8; maybe.len()],
            maybe,
            rng: 0x9E37_79B9_7F4A_7C15,
        }
    }

    /// Whether a node with evidence `m` is confirmed Maybe (or decided).
    fn confirmed(m: u8) -> bool {
        m & 4 != 0 || m & 3 == 3
    }

    /// Nodes not confirmed, from the `from`-th Maybe node on.
    fn left(&self, from: usize) -> usize {
        self.seen[from..]
            .iter()
            .filter(|&&m| !Self::confirmed(m))
            .count()
    }

    fn unconfirmed(&self) -> Vec<NodeId> {
        self.maybe
            .iter()
            .zip(&self.seen)
            .filter(|&(_, &m)| !Self::confirmed(m))
            .map(|(&i, _)| NodeId::new(i))
            .collect()
    }

    /// A number below `n`.
    fn below(&mut self, n: usize) -> usize {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n as u64) as usize
    }

    /// What member `n`'s not running would show: best (0) a node still
    /// lacking an execution that skips it, worst (3) one lacking an
    /// execution that runs it.
    fn rank(&self, n: NodeId) -> u8 {
        match self.maybe.binary_search(&n.index()) {
            Ok(k) if !Self::confirmed(self.seen[k]) => match self.seen[k] & 3 {
                1 => 0,
                2 => 3,
                _ => 2,
            },
            _ => 1,
        }
    }

    /// A choice: `report` with every ambiguous `obsNo` set replaced by one
    /// of its members that `labels` does not say ran, drawn among the best
    /// ranked.
    fn choice(&mut self, report: &Report, labels: &[Label]) -> Report {
        let mut chosen = report.clone();
        for set in &mut chosen.obs_no {
            if set.nodes().len() < 2 {
                continue;
            }
            let open = set
                .nodes()
                .iter()
                .copied()
                .filter(|&n| labels[n.index()] != Label::Yes);
            let Some(best) = open.clone().map(|n| self.rank(n)).min() else {
                continue;
            };
            let open: Vec<NodeId> = open.filter(|&n| self.rank(n) == best).collect();
            let pick = open[self.below(open.len())];
            *set = NodeSet::new(vec![pick]).expect("one node");
        }
        chosen
    }

    /// What the recovery `r` of a choice shows. Nothing if it dropped a
    /// constraint. Yes and No show an execution that runs (skips) the
    /// node only if the choice is surely possible: an exact result
    /// (nothing weakened, nothing undecided). Its Maybe nodes not listed
    /// as undecided are real.
    fn record(&mut self, r: &Recovery) {
        if !r.weakened.iter().all(gave_up) {
            return;
        }
        let exact = r.undecided.is_empty() && r.weakened.is_empty();
        let open: HashSet<NodeId> = r.undecided.iter().copied().collect();
        for (k, &i) in self.maybe.iter().enumerate() {
            self.seen[k] |= match r.labels[i] {
                Label::Yes if exact => 1,
                Label::No if exact => 2,
                Label::Yes | Label::No => 0,
                Label::Maybe if !open.contains(&NodeId::new(i)) => 4,
                Label::Maybe => 0,
            };
        }
    }
}

/// What [`Fsa::settle`] asks of a node: an execution that runs it, or
/// one that skips it.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Need {
    Run,
    Skip,
}

impl Need {
    /// Its bit in [`Evidence::seen`].
    fn bit(self) -> u8 {
        match self {
            Need::Run => 1,
            Need::Skip => 2,
        }
    }
}

/// Where one check of [`Fsa::settle`] leads.
enum Settle {
    /// Ask again: the witness violated sets, now tracked.
    Again,
    /// On to the other need of the node: evidence was recorded.
    NextNeed,
    /// On to the next node: it is decided, or nothing can be learnt.
    NextNode,
    /// Out of time or checks.
    Stop,
}

/// [`Fsa::settle`]'s state: the reduced report, which of its ambiguous
/// `obsNo` sets are tracked, and the counters.
struct Settler<'r> {
    red: &'r Reduced,
    /// The report itself.
    report: &'r Report,
    /// Witness choices already recovered (the member chosen per set).
    tried: HashSet<Vec<NodeId>>,
    /// Indices in `red.report.obs_no` of its ambiguous sets.
    ambiguous: Vec<usize>,
    /// The ambiguous `obsNo` sets of the original report.
    original: Vec<&'r NodeSet>,
    /// Per ambiguous set: tracked.
    tracked: Vec<bool>,
    /// What was tracked at the last bulk recovery.
    bulk_tracked: Vec<bool>,
    stats: SettleStats,
    started: Instant,
}

/// What [`Fsa::settle`] did (its `solver_stats`).
#[derive(Clone, Copy, Debug, Default)]
struct SettleStats {
    /// Checks (and bulk recoveries) made.
    checks: u64,
    /// Nodes it turned from Maybe into Yes or No.
    decided: u64,
    /// Checks whose witness violated sets not tracked yet (asked again).
    again: u64,
    /// Witnesses that satisfied every set (evidence for every node).
    witnesses: u64,
    /// Checks that gave up (a limit, a weakening): nothing learnt.
    gave_up: u64,
    /// Bulk recoveries of witness choices (counted in `checks` too).
    choices: u64,
}

impl Settler<'_> {
    /// The reduced report with only the ambiguous `obsNo` sets tracked.
    fn tracked_report(&self) -> Reduced {
        let (base, red) = (&self.red.report, self.red);
        let keep = |i: usize| {
            base.obs_no[i].nodes().len() < 2
                || self
                    .ambiguous
                    .binary_search(&i)
                    .is_ok_and(|j| self.tracked[j])
        };
        let mut sub = Reduced {
            report: base.clone(),
            labels: red.labels.clone(),
            no_origin: Vec::new(),
        };
        sub.report.obs_no.retain({
            let mut i = 0;
            move |_| {
                i += 1;
                keep(i - 1)
            }
        });
        sub.no_origin = (0..base.obs_no.len())
            .filter(|&i| keep(i))
            .map(|i| red.no_origin[i])
            .collect();
        sub
    }

    /// One check for the `k`-th Maybe node of `ev`: may it run (skip)
    /// under the tracked sets?
    fn check(
        &mut self,
        fsa: &Fsa,
        g: &Icfg,
        labels: &mut [Label],
        ev: &mut Evidence,
        k: usize,
        need: Need,
    ) -> Settle {
        let remaining = match fsa.limits.timeout {
            Some(t) => match t.checked_sub(self.started.elapsed()) {
                Some(r) if !r.is_zero() => Some(r),
                _ => return Settle::Stop,
            },
            None => None,
        };
        if self.stats.checks >= fsa.limits.settle_checks as u64 {
            return Settle::Stop;
        }
        let sub = self.tracked_report();
        let v = NodeId::new(ev.maybe[k]);
        let q = match need {
            Need::Run => Query::MayRun(v),
            Need::Skip => Query::MaySkip(v),
        };
        let mut inner = fsa.clone();
        inner.limits.timeout = remaining;
        self.stats.checks += 1;
        let c = inner.check_reduced(g, &sub.report, Some(&sub), Some(&q), true);
        let Ok(c) = c else {
            self.stats.gave_up += 1;
            return Settle::NextNode;
        };
        if c.answer == Answer::Impossible {
            // Exact: no execution of a weaker report does it.
            labels[ev.maybe[k]] = match need {
                Need::Run => Label::No,
                Need::Skip => Label::Yes,
            };
            ev.seen[k] = 4; // decided, nothing left to confirm
            self.stats.decided += 1;
            // The sets that decided it may decide others: one bulk
            // recovery with them decides every node it labels Yes or No
            // (a weaker report's labels).
            if ev.left(k + 1) >= SETTLE_BULK_AT && self.bulk_tracked != self.tracked {
                self.bulk_tracked.clone_from(&self.tracked);
                self.stats.checks += 1;
                if let Ok(r) = inner.recover_once(g, &sub.report, false, Some(&self.red.labels)) {
                    for kk in k + 1..ev.maybe.len() {
                        let l = r.labels[ev.maybe[kk]];
                        if !Evidence::confirmed(ev.seen[kk]) && l != Label::Maybe {
                            labels[ev.maybe[kk]] = l;
                            ev.seen[kk] = 4;
                            self.stats.decided += 1;
                        }
                    }
                }
            }
            return Settle::NextNode;
        }
        let (true, Some(w)) = (c.weakened.is_empty(), c.witness) else {
            self.stats.gave_up += 1;
            return Settle::NextNode;
        };
        let mut on = vec![false; g.num_nodes()];
        for n in &w {
            on[n.index()] = true;
        }
        let base = &self.red.report;
        let mut violated = false;
        for (j, &i) in self.ambiguous.iter().enumerate() {
            if !self.tracked[j] && base.obs_no[i].nodes().iter().all(|n| on[n.index()]) {
                self.tracked[j] = true;
                violated = true;
            }
        }
        if violated {
            self.stats.again += 1;
            return Settle::Again;
        }
        // Sets the reduction dropped are satisfied by every path of the
        // reduced report; checked all the same.
        if self
            .original
            .iter()
            .any(|s| s.nodes().iter().all(|n| on[n.index()]))
        {
            return Settle::NextNode;
        }
        for (kk, &i) in ev.maybe.iter().enumerate() {
            ev.seen[kk] |= if on[i] { 1 } else { 2 };
        }
        self.stats.witnesses += 1;
        if ev.left(0) > fsa.limits.witness_choices {
            self.witness_choice(&inner, g, ev, &on);
        }
        Settle::NextNeed
    }

    /// The choice a witness shows possible (`on`: its nodes): every
    /// ambiguous `obsNo` set of the report replaced by a member the
    /// witness skips (among those, one still lacking an execution that
    /// skips it, if any). The witness is an execution of that choice, so
    /// its bulk recovery is exact unless a limit stops it, and confirms
    /// what [`Evidence::record`] says; far more than the witness alone,
    /// which confirms only the nodes it shows run.
    fn witness_choice(&mut self, fsa: &Fsa, g: &Icfg, ev: &mut Evidence, on: &[bool]) {
        if self.stats.checks >= fsa.limits.settle_checks as u64 {
            return;
        }
        let mut choice = self.report.clone();
        let mut picks = Vec::new();
        for set in &mut choice.obs_no {
            if set.nodes().len() < 2 {
                continue;
            }
            let off = set.nodes().iter().copied().filter(|n| !on[n.index()]);
            let Some(best) = off.clone().map(|n| ev.rank(n)).min() else {
                return; // the witness violates the set: not an execution
            };
            let off: Vec<NodeId> = off.filter(|&n| ev.rank(n) == best).collect();
            let pick = off[ev.below(off.len())];
            picks.push(pick);
            *set = NodeSet::new(vec![pick]).expect("one node");
        }
        if !self.tried.insert(picks) {
            return;
        }
        self.stats.checks += 1;
        self.stats.choices += 1;
        // UTL's labels of the reduced report are sound for the choice (a
        // stronger report).
        if let Ok(r) = fsa.recover_once(g, &choice, false, Some(&self.red.labels)) {
            ev.record(&r);
        }
    }
}

/// The full product.
fn product<'a>(g: &'a Icfg, prep: &'a Prepared, start: u32) -> Product<'a> {
    Product::new(
        g.succ_csr(),
        &prep.core,
        &prep.seg,
        &prep.ends,
        &prep.autos,
        start,
    )
}

/// The UTL structure for the contracted product.
fn structure<'a>(g: &'a Icfg, prep: &'a Prepared, start: u32) -> contracted::Structure<'a> {
    contracted::Structure {
        g: g.succ_csr(),
        rg: g.pred_csr(),
        core: &prep.core,
        seg: &prep.seg,
        ends: &prep.ends,
        start,
    }
}

/// Labels from a contracted product that decided every node.
fn contracted_recovery(
    g: &Icfg,
    c: &contracted::Coarse,
    weakened: Vec<crate::solver::Weakening>,
) -> Recovery {
    let labels = (0..g.num_nodes())
        .map(|i| {
            if !c.may.contains(i) {
                Label::No
            } else if c.must.contains(i) {
                Label::Yes
            } else {
                Label::Maybe
            }
        })
        .collect();
    Recovery {
        labels,
        weakened,
        undecided: vec![],
        stats: c.stats(),
    }
}

/// The coarse tier's result: No where it shows a node cannot run, Yes where
/// it or UTL (sound for the full report) shows it must, Maybe elsewhere;
/// Maybe nodes it cannot vouch for are listed as undecided.
fn coarse_recovery(
    g: &Icfg,
    report: &Report,
    c: &contracted::Coarse,
    why: String,
) -> Result<Recovery, SolveError> {
    let mut rec = crate::utl::Utl::default().recover(g, report)?;
    let mut refined = 0u64;
    for (i, l) in rec.labels.iter_mut().enumerate() {
        let new = if !c.may.contains(i) {
            Label::No
        } else if c.must.contains(i) {
            Label::Yes
        } else {
            *l
        };
        if new != *l {
            refined += 1;
            *l = new;
        }
    }
    rec.undecided = (0..rec.labels.len())
        .filter(|&i| rec.labels[i] == Label::Maybe && c.unsure.contains(i))
        .map(NodeId::new)
        .collect();
    rec.weakened.push(crate::solver::Weakening {
        origin: Origin::Query,
        how: format!(
            "fsa gave up on the exact product ({why}); coarse tier used instead ({}): Maybe nodes listed as \
             undecided may be imprecise, every Yes and No is sound",
            if c.exact { "contracted product, explicit" } else { "contracted product with antichains" }
        ),
    });
    rec.stats.push(("coarse_refined", refined));
    rec.stats.extend(c.stats());
    Ok(rec)
}

/// When the product is too large: UTL's labels, which are sound for the
/// full report, with every Maybe marked undecided.
fn degrade(g: &Icfg, report: &Report, why: String) -> Result<Recovery, SolveError> {
    let mut rec = crate::utl::Utl::default().recover(g, report)?;
    rec.undecided = (0..rec.labels.len())
        .filter(|&i| rec.labels[i] == Label::Maybe)
        .map(NodeId::new)
        .collect();
    rec.weakened.push(crate::solver::Weakening {
        origin: Origin::Query,
        how: format!("fsa gave up ({why}); labels are the UTL solver's, sound but less precise"),
    });
    Ok(rec)
}

/// Bulk classification from the explored product: nodes that are
/// locations of their own by cuts of the trimmed product, members of
/// silent components by the crossing analysis per vertex (see
/// [`Classify`]).
fn classify(g: &Icfg, p: &Product<'_>, sp: &Split, limits: FsaLimits) -> Recovery {
    let co = p.co_reachable();
    let live = |v: VertexId| co.contains(v.index());
    // Vertices per location.
    let mut node_states: HashMap<u32, Vec<VertexId>> = HashMap::new();
    let mut comp_states: HashMap<SccId, Vec<VertexId>> = HashMap::new();
    for v in p.vertices() {
        if !live(v) {
            continue;
        }
        match p.loc(v) {
            Loc::Node(node) => node_states.entry(node).or_default().push(v),
            Loc::Comp(c) => comp_states.entry(c).or_default().push(v),
        }
    }
    let n = g.num_nodes();
    let mut required_vertex = BitSet::new(n);
    for v in sp.vectors.iter().flatten() {
        required_vertex.insert(*v as usize);
    }
    required_vertex.insert(p.start as usize);
    if let Some([t]) = sp.targets.as_deref() {
        required_vertex.insert(*t as usize);
    }
    let mut cl = Classify {
        g,
        p,
        sp,
        limits,
        trimmed: TrimmedProduct::new(p, live),
        budget: limits.exact_work,
        crossing_budget: limits.bulk.exact_work,
        stats: BulkStats::default(),
        required_vertex,
        labels: vec![Label::No; n],
        undecided: Vec::new(),
    };
    for (&node, states) in &node_states {
        cl.node(node, states);
    }
    // Concrete entry and exit nodes of every trimmed super-vertex, in one
    // pass over the edges.
    let mut ends_of: HashMap<VertexId, (Vec<u32>, Vec<u32>)> = HashMap::new();
    for e in p.edges.values() {
        if !(live(e.from) && live(e.to)) {
            continue;
        }
        if let Loc::Comp(_) = p.loc(e.to) {
            ends_of.entry(e.to).or_default().0.push(e.to_node);
        }
        if let Loc::Comp(_) = p.loc(e.from) {
            ends_of.entry(e.from).or_default().1.push(e.from_node);
        }
    }
    for (&c, states) in &comp_states {
        cl.component(c, states, &ends_of);
    }
    let Classify {
        labels,
        mut undecided,
        stats,
        ..
    } = cl;
    undecided.sort();
    undecided.dedup();
    Recovery {
        labels,
        weakened: vec![],
        undecided,
        stats: vec![
            ("product_vertices", p.num_vertices() as u64),
            ("product_edges", p.edges.len() as u64),
            ("automata", p.autos.len() as u64),
            ("silent_crossings", stats.crossings),
        ],
    }
}

/// The trimmed full product as a graph: the live vertices, a virtual root
/// (`nv`) before the initial ones and a virtual sink (`nv + 1`) after the
/// accepting ones; and the vertices that dominate the sink.
struct TrimmedProduct {
    h: Csr,
    root: u32,
    sink: u32,
    dom_sink: BitSet,
}

impl TrimmedProduct {
    fn new(p: &Product<'_>, live: impl Fn(VertexId) -> bool) -> TrimmedProduct {
        let nv = p.num_vertices();
        let (root, sink) = (nv as u32, nv as u32 + 1);
        let mut hedges: Vec<(u32, u32)> = Vec::new();
        for &i in &p.initial {
            if live(i) {
                hedges.push((root, i.as_u32()));
            }
        }
        for v in p.vertices() {
            if live(v) && p.accepting[v] {
                hedges.push((v.as_u32(), sink));
            }
        }
        for e in p.edges.values() {
            if live(e.from) && live(e.to) {
                hedges.push((e.from.as_u32(), e.to.as_u32()));
            }
        }
        let h = Csr::from_edges(nv + 2, &hedges);
        let hr = h.reversed();
        let idom = algo::dominator_tree(&h, &hr, root, |_| true);
        let mut dom_sink = BitSet::new(nv + 2);
        for x in idom.up_from(idom.parent(sink), root) {
            dom_sink.insert(x as usize);
        }
        TrimmedProduct {
            h,
            root,
            sink,
            dom_sink,
        }
    }

    /// Is every root-to-sink path through `set`? `None` when the search
    /// this needs is over `budget`.
    fn cut(&self, set: &[VertexId], budget: &mut u64) -> Option<bool> {
        if set.iter().any(|&v| self.dom_sink.contains(v.index())) {
            return Some(true);
        }
        if set.len() == 1 {
            return Some(false);
        }
        let h = &self.h;
        let cost = (h.num_vertices() + h.num_edges()) as u64;
        if *budget < cost {
            return None;
        }
        *budget -= cost;
        let blocked: HashSet<u32> = set.iter().map(|v| v.as_u32()).collect();
        let mut seen = BitSet::new(h.num_vertices());
        algo::reach(h, [self.root], |v| !blocked.contains(&v), &mut seen);
        Some(!seen.contains(self.sink as usize))
    }
}

/// [`classify`]'s state: the labels so far, and the budgets of cuts and
/// crossings.
struct Classify<'a, 'p> {
    g: &'a Icfg,
    p: &'a Product<'p>,
    sp: &'a Split,
    limits: FsaLimits,
    trimmed: TrimmedProduct,
    /// Work left for cuts.
    budget: u64,
    /// Work left for the crossing analyses.
    crossing_budget: u64,
    stats: BulkStats,
    /// Nodes every path visits (UTL elements, the start, a single target).
    required_vertex: BitSet,
    labels: Vec<Label>,
    undecided: Vec<NodeId>,
}

impl Classify<'_, '_> {
    /// A node that is a location of its own: it must run iff its vertices
    /// `states` cut the trimmed product.
    fn node(&mut self, node: u32, states: &[VertexId]) {
        self.labels[node as usize] = match self.trimmed.cut(states, &mut self.budget) {
            Some(true) => Label::Yes,
            Some(false) => Label::Maybe,
            None => {
                self.undecided.push(NodeId::new(node as usize));
                Label::Maybe
            }
        };
    }

    /// The members of silent component `c`, with vertices `states`: a
    /// member must run iff the component is always crossed and no crossing
    /// (from any of its vertices) avoids it.
    fn component(
        &mut self,
        c: SccId,
        states: &[VertexId],
        ends_of: &HashMap<VertexId, (Vec<u32>, Vec<u32>)>,
    ) {
        let members = self.p.core.sccs.members_of(c);
        let always_crossed = if self.p.core.chain_pos[c] > 0 {
            Some(true)
        } else {
            self.trimmed.cut(states, &mut self.budget)
        };
        // Per state: can the crossing avoid each member?
        let mut verdict = vec![Verdict::Always; members.len()];
        if always_crossed == Some(true) {
            for &sv in states {
                let vs = self.crossing(c, sv, ends_of);
                for (acc, v) in verdict.iter_mut().zip(vs) {
                    *acc = match (*acc, v) {
                        (Verdict::Sometimes, _) | (_, Verdict::Sometimes) => Verdict::Sometimes,
                        (Verdict::Undecided, _) | (_, Verdict::Undecided) => Verdict::Undecided,
                        _ => Verdict::Always,
                    };
                }
            }
        }
        for (i, &v) in members.iter().enumerate() {
            self.labels[v as usize] = match (always_crossed, verdict[i]) {
                (Some(true), Verdict::Always) => Label::Yes,
                (Some(true), Verdict::Undecided) | (None, _) => {
                    self.undecided.push(NodeId::new(v as usize));
                    Label::Maybe
                }
                _ => Label::Maybe,
            };
        }
    }

    /// The crossing analysis of silent component `c` at vertex `sv`, from
    /// the entries to the exits its product edges (or the start, or the
    /// crash) use: a verdict per member.
    fn crossing(
        &mut self,
        c: SccId,
        sv: VertexId,
        ends_of: &HashMap<VertexId, (Vec<u32>, Vec<u32>)>,
    ) -> Vec<Verdict> {
        let (p, sccs) = (self.p, &self.p.core.sccs);
        let members = sccs.members_of(c);
        let mut entries: HashSet<u32> = HashSet::new();
        let mut exits: HashSet<u32> = HashSet::new();
        if p.initial.contains(&sv) {
            entries.insert(p.start);
        }
        if p.accepting[sv] {
            exits.extend(members.iter().copied().filter(|&v| p.ends.is_target(v)));
        }
        if let Some(es) = ends_of.get(&sv) {
            entries.extend(es.0.iter().copied());
            exits.extend(es.1.iter().copied());
        }
        let crossing = Crossing::new(
            self.g.succ_csr(),
            members,
            |v| sccs.comp(v) == Some(c),
            |v| entries.contains(&v),
            |v| exits.contains(&v),
            &self.sp.vectors,
        );
        crossing.classify(
            &self.required_vertex,
            self.limits.bulk.witnesses,
            &mut self.crossing_budget,
            &mut self.stats,
        )
    }
}
