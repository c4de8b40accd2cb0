//! The UTL solver: failure data as unreliable trace languages
//! (Ohmann, Brooks, D'Antoni, Liblit, PLDI 2017, section 4; WODA 2015),
//! over the context-insensitive ICFG.
//!
//! Encoding of a report (PLDI 2017, section 5):
//!
//! * the crash stack becomes the vector `<call₀, entry₀, call₁, entry₁, …>`
//!   and the path must end at one of the crash nodes (an ambiguous crash set
//!   is exact: it is a set of targets);
//! * every `obsYes` trace is a vector;
//! * every single-node `obsNo` set removes its node from the graph.
//!
//! Constraints UTL cannot express are *weakened* (replaced by a superset of
//! executions) and listed in the result, never dropped silently (the
//! lowering is the crate's `lower` module, shared with the FSA solver,
//! with its `Strategy::Weaken`):
//!
//! * an element that is a set of several nodes is dropped from its vector;
//! * a `reliable` trace is treated as unreliable;
//! * an `obsNo` set of several nodes is dropped;
//! * a bursty trace becomes one unreliable trace of all its elements.
//!
//! The algorithms are in the crate's `structure` module, shared with the FSA
//! solver; see its docs for the one-pass bulk recovery and its complexity.

use crate::structure::Verdict;
pub use crate::structure::{BulkLimits, BulkStats};

use crate::icfg::Icfg;
use crate::ids::NodeId;
use crate::lower;
use crate::report::{Origin, Report};
use crate::solver::{Answer, Checked, Label, Query, Recovery, SolveError, Solver};

/// The unreliable-trace-language solver.
#[derive(Clone, Debug, Default)]
pub struct Utl {
    /// Work limits of bulk recovery.
    pub limits: BulkLimits,
}

impl Utl {
    /// The report and query as UTL lowers them (every weakening applied),
    /// as a report of their own: what UTL's answers are exact for, and
    /// what its witnesses satisfy (the crash set, one unreliable trace per
    /// vector, one `obsNo` per node no path may visit).
    /// Fails as [`Solver::check`] does for a query UTL cannot ask.
    pub fn checked_report(
        &self,
        g: &Icfg,
        report: &Report,
        query: Option<&Query>,
    ) -> Result<Report, SolveError> {
        supported(query)?;
        Ok(lower::weakened(g, report, query).as_report())
    }

    /// [`Solver::check`], with the witness only if `witness`. A possible
    /// answer comes with a witness: a path that satisfies the constraints
    /// UTL checked (the report and query as lowered, weakenings included),
    /// found in the products below both solvers on those constraints alone
    /// (all UTL-expressible, so no automaton), as the FSA solver's check
    /// of them finds it.
    fn check_with(
        &self,
        g: &Icfg,
        report: &Report,
        query: Option<&Query>,
        witness: bool,
    ) -> Result<Checked, SolveError> {
        supported(query)?;
        let low = lower::weakened(g, report, query);
        let start = [g.start().as_u32()];
        let possible = low.solve(&low.instance(g, &start)).is_some();
        let witness = (possible && witness)
            .then(|| crate::products::witness::of_constraints(g, &low))
            .flatten();
        Ok(Checked {
            answer: if possible {
                Answer::Possible
            } else {
                Answer::Impossible
            },
            weakened: low.weakened,
            witness,
        })
    }
}

/// An error for a query UTL cannot ask (a regular language).
fn supported(query: Option<&Query>) -> Result<(), SolveError> {
    match query {
        Some(Query::Language(_)) => Err(SolveError::Unsupported(
            "a regular-language query needs the fsa solver (--solver fsa)".into(),
        )),
        _ => Ok(()),
    }
}

impl Solver for Utl {
    fn name(&self) -> &'static str {
        "utl"
    }

    fn refines_utl(&self) -> bool {
        let d = BulkLimits::default();
        self.limits.exact_work == d.exact_work && self.limits.witnesses == d.witnesses
    }

    crate::solver::check_by_search!();

    fn recover(&self, g: &Icfg, report: &Report) -> Result<Recovery, SolveError> {
        let low = lower::weakened(g, report, None);
        let start = [g.start().as_u32()];
        let inst = low.instance(g, &start);
        let Some(core) = low.solve(&inst) else {
            return Err(SolveError::Infeasible {
                culprit: self.culprit(g, report).unwrap_or(Origin::Crash),
            });
        };
        let (verdicts, stats) = crate::structure::bulk(&inst, &core, self.limits);
        let mut undecided = Vec::new();
        let labels = verdicts
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Verdict::Never => Label::No,
                Verdict::Always => Label::Yes,
                Verdict::Sometimes => Label::Maybe,
                Verdict::Undecided => {
                    undecided.push(NodeId::new(i));
                    Label::Maybe
                }
            })
            .collect();
        Ok(Recovery {
            labels,
            weakened: low.weakened,
            undecided,
            stats: vec![
                ("crossings", stats.crossings),
                ("largest_crossing", stats.largest_crossing),
                ("candidates", stats.candidates),
                ("exact_checks", stats.exact_checks),
            ],
        })
    }
}
