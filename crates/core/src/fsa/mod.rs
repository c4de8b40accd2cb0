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
mod classify;
mod confirm;
mod settle;
mod strategy;

use crate::algo::{self, SccId};
use crate::graph::{BitSet, Csr};
use crate::icfg::Icfg;
use crate::ids::NodeId;
use crate::lower::{lower, Reduction, Split, Strategy, MAX_BURSTY_STATES};
use crate::products::full::{Loc, Product, Stop, VertexId};
use crate::products::{contracted, product, structure, witness, Prepared};
use crate::report::{NodeSet, Origin, Report};
use crate::solver::{Answer, Checked, Label, Query, Recovery, SolveError, Solver};
use crate::structure::{BulkLimits, BulkStats, Crossing, Verdict};
use automaton::Dfa;
use confirm::SETTLE_AT;
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
    /// Vertex limit of the contracted product (see `products/contracted/`; 0:
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
    /// Vertex limit of bulk recovery's first attempt with every ambiguous
    /// `obsNo` set (the contracted product, explicit), when below
    /// `coarse_states`. An attempt that stops there drops the sets and
    /// confirms the labels with choices (see [`Fsa::confirm`]); when they
    /// leave nodes unconfirmed, bulk recovery runs again without the cap,
    /// so the labels are those it gives without it, or more decided
    /// (exact). The first attempt with hundreds of sets rarely fits, and
    /// is most of the cost when it does not. `usize::MAX`: no cap.
    pub first_states: usize,
    /// The confirmation rounds ([`Fsa::confirm`]) decide "must run" only
    /// where it may confirm a node still unconfirmed (issue 25; the
    /// labels are the same without it).
    pub confirm_care: bool,
    /// Star walks that avoid one member each are told from dominator
    /// trees without being built (see `CoarseLimits::sharp_stars`,
    /// issue 25; the labels are the same without it).
    pub sharp_stars: bool,
    /// A class of members left for an exact check (see
    /// `products/contracted/`) that holds a node UTL's labels say runs
    /// must run, without the check (issue 25; the labels are the same
    /// without it, or fewer undecided).
    pub known_checks: bool,
    /// Exact checks give their witness, and a class of members a witness
    /// found so far misses is avoidable without a check of its own (see
    /// `CoarseLimits::shared_witnesses`, issue 25; the labels are the same
    /// without it, or fewer undecided).
    pub shared_witnesses: bool,
}

impl Default for FsaLimits {
    fn default() -> Self {
        FsaLimits {
            max_states: crate::products::MAX_STATES,
            timeout: None,
            bulk: BulkLimits::default(),
            exact_work: 2_000_000_000,
            coarse_states: crate::products::MAX_STATES,
            coarse_checks: 128,
            contracted_first: true,
            max_memory: crate::products::MAX_MEMORY,
            settle_checks: 256,
            witness_choices: SETTLE_AT,
            first_states: 250_000,
            confirm_care: true,
            sharp_stars: true,
            known_checks: true,
            shared_witnesses: true,
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
    /// UTL's labels for `report` (sound for it and for the original, and
    /// for both without their ambiguous `obsNo` sets), or labels as sound
    /// ([`Reduced::with`]).
    labels: Vec<Label>,
    /// The original index of every `obsNo` set of `report`.
    no_origin: Vec<usize>,
}

impl Reduced {
    /// `report` reduced once with `labels`, known sound for it and for
    /// it without its ambiguous `obsNo` sets (as UTL's are).
    pub(super) fn with(report: &Report, labels: &[Label]) -> Result<Reduced, ()> {
        let (r, kept) = reduced(report, labels)?;
        Ok(Reduced {
            report: r,
            labels: labels.to_vec(),
            no_origin: kept,
        })
    }
}

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

impl Fsa {
    /// `report` reduced exactly with UTL's labels, before any automaton
    /// is built (see [`split`]): `None` when it has nothing to reduce (no
    /// "one of these" set). Reduces and relabels a few times, since a
    /// reduced report (an ambiguous `obsNo` become single) can give UTL
    /// more labels; the labels returned are always those of the report
    /// returned (never used on the report they were derived from with a
    /// reduction of their own). `Err` if the report is impossible.
    fn reduction(&self, g: &Icfg, report: &Report) -> Result<Option<Reduced>, ()> {
        self.reduction_with_utl(g, report).map(|(red, _)| red)
    }

    /// [`Fsa::reduction`], and UTL's labels of `report` itself when it ran
    /// UTL (its first round).
    #[allow(clippy::type_complexity)]
    fn reduction_with_utl(
        &self,
        g: &Icfg,
        report: &Report,
    ) -> Result<(Option<Reduced>, Option<Vec<Label>>), ()> {
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
            return Ok((None, None));
        }
        let utl = crate::utl::Utl::default();
        let mut r = report.clone();
        let mut no_origin: Vec<usize> = (0..r.obs_no.len()).collect();
        let mut round = 0;
        let mut first: Option<Vec<Label>> = None;
        loop {
            let labels = match utl.recover(g, &r) {
                Ok(rec) => rec.labels,
                Err(SolveError::Infeasible { .. }) => return Err(()),
                Err(_) => return Ok((None, first)),
            };
            round += 1;
            if round == 1 {
                first = Some(labels.clone());
            }
            if round == 3 {
                let red = Reduced {
                    report: r,
                    labels,
                    no_origin,
                };
                return Ok((Some(red), first));
            }
            let (r2, kept) = reduced(&r, &labels)?;
            if r2 == r {
                let red = Reduced {
                    report: r,
                    labels,
                    no_origin,
                };
                return Ok((Some(red), first));
            }
            no_origin = kept.into_iter().map(|i| no_origin[i]).collect();
            if singles(&r2) == singles(&r) {
                // UTL reads only single-node sets (it drops the others),
                // and the reduction made none: UTL's labels of `r2` are
                // these, and reducing `r2` with them changes nothing.
                let red = Reduced {
                    report: r2,
                    labels,
                    no_origin,
                };
                return Ok((Some(red), first));
            }
            r = r2;
        }
    }

    fn coarse_limits(&self) -> contracted::CoarseLimits {
        contracted::CoarseLimits {
            max_states: self.limits.coarse_states,
            deadline: self.deadline(),
            max_memory: self.limits.max_memory,
            checks: self.limits.coarse_checks,
            sharp_stars: self.limits.sharp_stars,
            shared_witnesses: self.limits.shared_witnesses,
        }
    }

    fn deadline(&self) -> Option<Instant> {
        self.limits.timeout.map(|t| Instant::now() + t)
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

/// How many of `report`'s node sets are single nodes: the stack's calls
/// and entries, `obsYes` and bursty elements, `obsNo` sets. UTL reads
/// only those (lowering drops every set of several nodes,
/// [`Strategy::Weaken`]), and [`reduced`] keeps every one of them, so a
/// reduction that leaves this count unchanged leaves UTL's labels
/// unchanged.
fn singles(report: &Report) -> usize {
    let one = |s: &NodeSet| usize::from(s.single().is_some());
    let stack: usize = report
        .stack
        .iter()
        .map(|f| one(&f.call) + one(&f.entry))
        .sum();
    let yes: usize = report
        .obs_yes
        .iter()
        .flat_map(|t| &t.entries)
        .map(one)
        .sum();
    let bursty: usize = report
        .bursty
        .iter()
        .flat_map(|b| &b.bursts)
        .flatten()
        .map(one)
        .sum();
    let no: usize = report.obs_no.iter().map(one).sum();
    stack + yes + bursty + no
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

    crate::solver::check_by_search!();

    fn recover(&self, g: &Icfg, report: &Report) -> Result<Recovery, SolveError> {
        self.recover_all(g, report, None)
    }

    /// Bulk recovery whose confirmation ([`Fsa::confirm`]) leaves out the
    /// Maybe nodes `beside` decides from the first pass's labels.
    fn recover_beside(
        &self,
        g: &Icfg,
        report: &Report,
        beside: &dyn crate::solver::Beside,
    ) -> Result<Recovery, SolveError> {
        self.recover_all(g, report, Some(beside))
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
