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
//! executions) and listed in the result, never dropped silently:
//!
//! * an element that is a set of several nodes is dropped from its vector;
//! * a `reliable` trace is treated as unreliable;
//! * an `obsNo` set of several nodes is dropped;
//! * a bursty trace becomes one unreliable trace of all its elements.
//!
//! The algorithms are in the crate's `structure` module, shared with the FSA
//! solver; see its docs for the one-pass bulk recovery and its complexity.

pub use crate::structure::{BulkLimits, BulkStats};
use crate::structure::{Instance, Verdict};

use crate::graph::BitSet;
use crate::icfg::Icfg;
use crate::ids::NodeId;
use crate::report::{NodeSet, Origin, Report};
use crate::solver::{Answer, Checked, Label, Query, Recovery, SolveError, Solver, Weakening};

/// The unreliable-trace-language solver.
#[derive(Clone, Debug, Default)]
pub struct Utl {
    /// Work limits of bulk recovery.
    pub limits: BulkLimits,
}

/// A report (and query) lowered to UTL constraints.
pub(crate) struct Lowered {
    /// Removed nodes.
    pub absent: BitSet,
    /// Unreliable traces of single nodes.
    pub vectors: Vec<Vec<u32>>,
    /// Crash candidates; `None` when the path may end anywhere.
    pub targets: Option<Vec<u32>>,
    /// What was weakened.
    pub weakened: Vec<Weakening>,
}

fn push_trace(
    origin: Origin,
    reliable: bool,
    entries: &[NodeSet],
    vectors: &mut Vec<Vec<u32>>,
    weakened: &mut Vec<Weakening>,
) {
    if reliable {
        weakened.push(Weakening {
            origin,
            how: "reliable trace treated as unreliable: other occurrences of the traced nodes are no longer excluded"
                .into(),
        });
    }
    let mut v = Vec::with_capacity(entries.len());
    for (j, e) in entries.iter().enumerate() {
        match e.single() {
            Some(n) => v.push(n.as_u32()),
            None => weakened.push(Weakening {
                origin,
                how: format!(
                    "element {j}: \"one of these {} nodes\" dropped from the trace (UTL cannot express disjunction)",
                    e.nodes().len()
                ),
            }),
        }
    }
    if !v.is_empty() {
        vectors.push(v);
    }
}

/// Lowers a report and an optional query to UTL constraints.
pub(crate) fn lower(g: &Icfg, report: &Report, query: Option<&Query>) -> Lowered {
    let mut absent = BitSet::new(g.num_nodes());
    let mut vectors = Vec::new();
    let mut weakened = Vec::new();
    let targets = report
        .crash
        .as_ref()
        .map(|c| c.nodes().iter().map(|n| n.as_u32()).collect());
    let mut stack = Vec::with_capacity(2 * report.stack.len());
    for (i, f) in report.stack.iter().enumerate() {
        for (part, set) in [("call", &f.call), ("entry", &f.entry)] {
            match set.single() {
                Some(n) => stack.push(n.as_u32()),
                None => weakened.push(Weakening {
                    origin: Origin::Frame(i),
                    how: format!(
                        "ambiguous {part} (one of {} nodes) dropped from the stack trace (UTL cannot express disjunction)",
                        set.nodes().len()
                    ),
                }),
            }
        }
    }
    if !stack.is_empty() {
        vectors.push(stack);
    }
    for (i, t) in report.obs_yes.iter().enumerate() {
        push_trace(
            Origin::ObsYes(i),
            t.reliable,
            &t.entries,
            &mut vectors,
            &mut weakened,
        );
    }
    for (i, s) in report.obs_no.iter().enumerate() {
        match s.single() {
            Some(n) => {
                absent.insert(n.index());
            }
            None => weakened.push(Weakening {
                origin: Origin::ObsNo(i),
                how: format!(
                    "\"at least one of these {} nodes did not run\" dropped (UTL cannot express it)",
                    s.nodes().len()
                ),
            }),
        }
    }
    for (i, b) in report.bursty.iter().enumerate() {
        let origin = Origin::Bursty(i);
        weakened.push(Weakening {
            origin,
            how: "bursty trace treated as one unreliable trace: the bursts' completeness is no longer enforced".into(),
        });
        let all: Vec<NodeSet> = b.bursts.iter().flatten().cloned().collect();
        push_trace(origin, false, &all, &mut vectors, &mut weakened);
    }
    match query {
        None => {}
        Some(Query::MayRun(n)) => vectors.push(vec![n.as_u32()]),
        Some(Query::MaySkip(n)) => {
            absent.insert(n.index());
        }
        Some(Query::Trace(sets)) => {
            push_trace(Origin::Query, false, sets, &mut vectors, &mut weakened)
        }
        Some(Query::Language(_)) => {}
    }
    Lowered {
        absent,
        vectors,
        targets,
        weakened,
    }
}

impl Utl {
    fn instance<'a>(g: &'a Icfg, low: &'a Lowered, start: &'a [u32]) -> Instance<'a> {
        Instance {
            g: g.succ_csr(),
            rg: g.pred_csr(),
            sources: start,
            targets: low.targets.as_deref(),
            vectors: &low.vectors,
        }
    }
}

impl Utl {
    fn check_with(
        &self,
        g: &Icfg,
        report: &Report,
        query: Option<&Query>,
        witness: bool,
    ) -> Result<Checked, SolveError> {
        if let Some(Query::Language(_)) = query {
            return Err(SolveError::Unsupported(
                "a regular-language query needs the fsa solver (--solver fsa)".into(),
            ));
        }
        let low = lower(g, report, query);
        let start = [g.start().as_u32()];
        let inst = Self::instance(g, &low, &start);
        let possible = inst.solve(|v| low.absent.contains(v as usize)).is_some();
        let witness = (possible && witness)
            .then(|| {
                crate::fsa::Fsa::default()
                    .check(g, &lowered_report(&low), None)
                    .ok()
                    .and_then(|c| c.witness)
            })
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

/// The constraints UTL checks, as a report of their own (the query
/// included): the crash set, one unreliable trace per vector, one `obsNo`
/// per removed node.
fn lowered_report(low: &Lowered) -> Report {
    let one = |v: u32| NodeSet::one(NodeId::new(v as usize));
    Report {
        crash: low
            .targets
            .as_ref()
            .and_then(|t| NodeSet::new(t.iter().map(|&v| NodeId::new(v as usize)).collect())),
        obs_yes: low
            .vectors
            .iter()
            .map(|v| crate::report::Trace {
                reliable: false,
                entries: v.iter().map(|&x| one(x)).collect(),
            })
            .collect(),
        obs_no: low.absent.iter().map(|v| one(v as u32)).collect(),
        ..Report::default()
    }
}

impl Solver for Utl {
    fn name(&self) -> &'static str {
        "utl"
    }

    /// A possible answer comes with a witness: a path that satisfies the
    /// constraints UTL checked (the report and query as lowered, weakenings
    /// included), built by the FSA machinery on those constraints alone
    /// (all UTL-expressible, so no automaton: the contracted product).
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
        let low = lower(g, report, None);
        let start = [g.start().as_u32()];
        let inst = Self::instance(g, &low, &start);
        let Some(core) = inst.solve(|v| low.absent.contains(v as usize)) else {
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
