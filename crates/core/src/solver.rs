//! The interface every solver implements, so that solvers can be swapped
//! and cross-checked.

use crate::graph::BitSet;
use crate::icfg::Icfg;
use crate::ids::NodeId;
use crate::report::{NodeSet, Origin, Report};

/// What bulk recovery says about one node.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Label {
    /// It ran on every path consistent with the report.
    Yes,
    /// It ran on no path consistent with the report.
    No,
    /// It ran on some consistent paths and not on others (or the solver
    /// could not tell).
    Maybe,
}

impl Label {
    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Label::Yes => "yes",
            Label::No => "no",
            Label::Maybe => "maybe",
        }
    }

    /// The label of a node from what a solver computed about it: whether
    /// some consistent execution runs it (`may`) and whether every one
    /// does (`must`, which only counts when `may`).
    pub fn from_may_must(may: bool, must: bool) -> Label {
        if !may {
            Label::No
        } else if must {
            Label::Yes
        } else {
            Label::Maybe
        }
    }

    /// [`Label::from_may_must`] for every node of `0..n`, from the sets of
    /// nodes that may and that must run.
    pub(crate) fn all_from(n: usize, may: &BitSet, must: &BitSet) -> Vec<Label> {
        (0..n)
            .map(|i| Label::from_may_must(may.contains(i), must.contains(i)))
            .collect()
    }
}

/// A question about the failing run, added as one more constraint.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Query {
    /// May this node have run?
    MayRun(NodeId),
    /// May this node not have run?
    MaySkip(NodeId),
    /// May these have run in this order (an unreliable trace)?
    Trace(Vec<NodeSet>),
    /// Is some path in this regular language (over nodes)?
    Language(crate::automaton::Dfa),
}

/// The answer to a query.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// Some path consistent with the program, the report and the query exists.
    Possible,
    /// No such path exists.
    Impossible,
}

impl Answer {
    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Answer::Possible => "possible",
            Answer::Impossible => "impossible",
        }
    }
}

/// A constraint the solver could not express exactly and replaced by a
/// weaker one (a superset of executions), so answers stay sound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Weakening {
    /// Where the constraint came from.
    pub origin: Origin,
    /// What was done, for humans.
    pub how: String,
}

/// The result of a single query.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The answer.
    pub answer: Answer,
    /// Constraints that were weakened to answer it.
    pub weakened: Vec<Weakening>,
    /// When possible, one complete path from the start to the crash that
    /// satisfies everything (if the solver builds witnesses).
    pub witness: Option<Vec<NodeId>>,
}

/// What the caller of [`Solver::recover_beside`] decides itself, and
/// what it may reuse of the solver's work.
pub trait Beside {
    /// Given labels sound for the report, labels sound for it too that
    /// the caller will merge into the result (an empty vector: none).
    fn labels(&self, sound: &[Label]) -> Vec<Label>;

    /// The default [`crate::utl::Utl`]'s labels of the same report, when
    /// the solver computed them on its way (`best` merges them without
    /// running UTL again). By default ignored.
    fn utl(&self, labels: &[Label]) {
        let _ = labels;
    }

    /// Labels known sound for the report (the caller's
    /// [`Solver::recover_hinted`] hint), which the solver may use instead
    /// of work of its own (FSA: to reduce the report instead of running
    /// UTL). A solver that asks for them promises that its labels are
    /// exact (with the caller's, where it leaves nodes to the caller)
    /// when it lists nothing weakened and nothing undecided: the caller
    /// may then skip work of its own (`best`: merging UTL's labels). By
    /// default none.
    fn hint(&self) -> Option<&[Label]> {
        None
    }
}

/// The result of bulk recovery.
#[derive(Clone, Debug)]
pub struct Recovery {
    /// One label per node, indexed by [`NodeId`].
    pub labels: Vec<Label>,
    /// Constraints that were weakened.
    pub weakened: Vec<Weakening>,
    /// Nodes left Maybe only because a work limit was reached (not because
    /// the answer is really "maybe"). Empty when the result is exact.
    pub undecided: Vec<NodeId>,
    /// Solver-specific counters (what the solver did), for diagnostics.
    pub stats: Vec<(&'static str, u64)>,
}

impl Recovery {
    /// The counter `name` of [`Recovery::stats`], summed over its entries
    /// (0 when the solver did not count it).
    pub fn stat(&self, name: &str) -> u64 {
        self.stats.iter().filter(|s| s.0 == name).map(|s| s.1).sum()
    }

    /// Whether the solver counted `name` at all.
    pub fn has_stat(&self, name: &str) -> bool {
        self.stats.iter().any(|s| s.0 == name)
    }
}

/// Why a solver produced no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SolveError {
    /// No execution satisfies the report: it is not a crash this program
    /// can have. `culprit` is the first constraint, in report order, whose
    /// addition made the report impossible.
    Infeasible {
        /// The first constraint that made the report impossible.
        culprit: Origin,
    },
    /// The solver cannot answer this kind of question.
    Unsupported(String),
    /// A work limit was reached before an answer was found.
    Limit(String),
}

impl std::fmt::Display for SolveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SolveError::Infeasible { culprit } => write!(
                f,
                "no execution of this program satisfies the report: it became impossible with constraint {culprit}"
            ),
            SolveError::Unsupported(what) => write!(f, "unsupported: {what}"),
            SolveError::Limit(what) => write!(f, "gave up: {what}"),
        }
    }
}

impl std::error::Error for SolveError {}

/// [`Solver::check`] and [`Solver::possible`] of a solver whose one
/// search, an inherent `check_with(g, report, query, witness)`, builds
/// the witness only when asked (UTL, FSA): written once here.
macro_rules! check_by_search {
    () => {
        fn check(
            &self,
            g: &$crate::icfg::Icfg,
            report: &$crate::report::Report,
            query: Option<&$crate::solver::Query>,
        ) -> Result<$crate::solver::Checked, $crate::solver::SolveError> {
            self.check_with(g, report, query, true)
        }

        fn possible(
            &self,
            g: &$crate::icfg::Icfg,
            report: &$crate::report::Report,
            query: Option<&$crate::solver::Query>,
        ) -> Result<$crate::solver::Answer, $crate::solver::SolveError> {
            self.check_with(g, report, query, false).map(|c| c.answer)
        }
    };
}
pub(crate) use check_by_search;

/// A control-flow recovery solver.
pub trait Solver {
    /// A short name (`utl`, `fsa`, ...).
    fn name(&self) -> &'static str;

    /// Is some execution consistent with the graph, the report and the
    /// query (if any)? Does not look for a culprit.
    fn check(
        &self,
        g: &Icfg,
        report: &Report,
        query: Option<&Query>,
    ) -> Result<Checked, SolveError>;

    /// The answer of [`Solver::check`] without a witness, which may be
    /// cheaper to get (explanations and culprits ask many of these).
    fn possible(
        &self,
        g: &Icfg,
        report: &Report,
        query: Option<&Query>,
    ) -> Result<Answer, SolveError> {
        self.check(g, report, query).map(|c| c.answer)
    }

    /// Labels every node. Fails with [`SolveError::Infeasible`] when the
    /// report itself is impossible.
    fn recover(&self, g: &Icfg, report: &Report) -> Result<Recovery, SolveError>;

    /// [`Solver::recover`] for a caller that decides some nodes itself
    /// (`best`: the context-sensitive frame graph over this solver).
    /// [`Beside::labels`], given labels sound for `report`, returns labels
    /// sound for it too that the caller will merge into the result (an
    /// empty vector: none). The solver may leave a node Maybe without
    /// making that Maybe exact where `beside` decides it; its result is
    /// then meant only for that caller, which must merge those labels (or
    /// recover again with [`Solver::recover`]). By default,
    /// [`Solver::recover`].
    fn recover_beside(
        &self,
        g: &Icfg,
        report: &Report,
        beside: &dyn Beside,
    ) -> Result<Recovery, SolveError> {
        let _ = beside;
        self.recover(g, report)
    }

    /// [`Solver::recover`], given `hint`: labels (one per node) known
    /// sound for `report`, such as a weaker report's recovery, which a
    /// solver may use to skip work. The labels are never less decided
    /// than `recover`'s, merged with `hint`'s (they may be more); a
    /// solver that cannot use it recovers as usual. A hint may also show
    /// the report impossible where `recover` falls back to weaker labels
    /// (`best`: a hint from valid paths rules out paths FSA's own model
    /// allows; `cs.rs::hinted_best_refines_utl_and_the_unhinted_labels`
    /// checks that no valid path exists then).
    fn recover_hinted(
        &self,
        g: &Icfg,
        report: &Report,
        hint: &[Label],
    ) -> Result<Recovery, SolveError> {
        let _ = hint;
        self.recover(g, report)
    }

    /// `hint` refined by the solver's cheapest pass that reads the whole
    /// report, for evidence that adds little to what `hint` came from (a
    /// value stage adds one value to the report; marked residue adds Yes
    /// nodes to the labels): a solver may skip what only repeats the
    /// recovery that gave `hint`. `hint` is sound for `report` together
    /// with evidence the caller holds, and so is the result; `known` are
    /// nodes `hint` says ran that no recovery has used yet (from that
    /// evidence). At least as decided as `hint`; unlike
    /// `recover_hinted`, it need not decide all that [`Solver::recover`]
    /// decides (`best`'s bulk pass alone does not reason with FSA's
    /// model). `Err(SolveError::Unsupported)` where the solver has no such
    /// pass or it gives no answer of its own (the default): the caller
    /// recovers instead.
    fn refine_hint(
        &self,
        g: &Icfg,
        report: &Report,
        hint: &[Label],
        known: &[NodeId],
    ) -> Result<Recovery, SolveError> {
        let _ = (g, report, hint, known);
        Err(SolveError::Unsupported(format!(
            "{}: no refinement of a hint",
            self.name()
        )))
    }

    /// Whether, by construction, [`Solver::recover`] decides every node
    /// that the default [`crate::utl::Utl`]'s `recover` of the same report
    /// decides, the same way, whenever both succeed, on graphs without
    /// asynchronous functions (`suggest` then takes UTL's re-runs as
    /// proven lower bounds for this solver). Default: no.
    fn refines_utl(&self) -> bool {
        false
    }

    /// A minimal impossible subset of the report's constraints plus the
    /// query (named [`Origin::Query`]): every member of the result is
    /// needed, removing any one makes it possible. `None` if the report and
    /// the query are possible together.
    ///
    /// QuickXplain (Junker, AAAI 2004): split the candidates in halves and
    /// recurse, so an explanation of k members out of n costs
    /// O(k log(n/k)) checks instead of n (thousands of coverage
    /// observations in a real report).
    fn explain(&self, g: &Icfg, report: &Report, query: Option<&Query>) -> Option<Vec<Origin>> {
        let mut all = report.origins();
        if query.is_some() {
            all.push(Origin::Query);
        }
        let impossible = |set: &[Origin]| {
            let q = if set.contains(&Origin::Query) {
                query
            } else {
                None
            };
            // A limit counts as "possible": the member is kept.
            self.possible(g, &report.restrict(set), q)
                .is_ok_and(|a| a == Answer::Impossible)
        };
        if !impossible(&all) {
            return None;
        }
        if impossible(&[]) {
            return Some(Vec::new());
        }
        // quick_xplain(background, added, candidates): a minimal subset of
        // the candidates that is impossible together with the background
        // (`added` says whether the background just grew).
        fn quick_xplain(
            background: &[Origin],
            added: bool,
            candidates: &[Origin],
            impossible: &dyn Fn(&[Origin]) -> bool,
        ) -> Vec<Origin> {
            if added && impossible(background) {
                return Vec::new();
            }
            if candidates.len() == 1 {
                return candidates.to_vec();
            }
            let (c1, c2) = candidates.split_at(candidates.len() / 2);
            let with_c1 = [background, c1].concat();
            let d2 = quick_xplain(&with_c1, true, c2, impossible);
            let with_d2 = [background, &d2[..]].concat();
            let d1 = quick_xplain(&with_d2, !d2.is_empty(), c1, impossible);
            [d1, d2].concat()
        }
        let mut keep = quick_xplain(&[], false, &all, &impossible);
        // Report order.
        keep.sort_by_key(|o| all.iter().position(|a| a == o));
        Some(keep)
    }

    /// The first constraint, in report order, whose addition makes the
    /// report impossible; `None` if the whole report is possible. Uses a
    /// binary search over prefixes (adding constraints only removes
    /// executions, so feasibility is monotone).
    fn culprit(&self, g: &Icfg, report: &Report) -> Option<Origin> {
        let origins = report.origins();
        // A limit counts as "possible": the culprit is then a sound upper bound.
        let feasible = |k: usize| {
            self.possible(g, &report.restrict(&origins[..k]), None)
                .map_or(true, |a| a == Answer::Possible)
        };
        if feasible(origins.len()) {
            return None;
        }
        if !feasible(0) {
            // Even with no constraint at all nothing reaches anywhere: blame the first.
            return origins.first().copied().or(Some(Origin::Crash));
        }
        // Invariant: feasible(lo), !feasible(hi).
        let (mut lo, mut hi) = (0, origins.len());
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if feasible(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Some(origins[hi - 1])
    }
}
