//! Why a line is Yes or No: for one decided node per source line, a
//! minimal set of the report's constraints that already forces its label
//! ([`Solver::explain`] of the opposite question: "may it have been
//! skipped?" for a Yes node, "may it have run?" for a No one).
//!
//! An explanation is sound whatever solver gives it: it is a set of
//! constraints under which the solver finds the opposite impossible, and
//! every solver's `impossible` is sound. It may be missing: the label came
//! from something `check` does not see (a staged value, a flag set in
//! another thread), the solvers tried find the opposite possible (UTL
//! weakens), or the time ran out. Each explanation costs O(k log(n/k))
//! checks for k members out of n constraints, so lines are taken in
//! order of interest (the functions on the stack first) until a deadline.

use crate::ids::{FileId, NodeId};
use crate::report::{Origin, Report};
use crate::solver::{Answer, Label, Query, Solver};
use crate::Icfg;
use std::collections::BTreeMap;
use std::time::Instant;

/// The explanations found.
#[derive(Clone, Debug, Default)]
pub struct Why {
    /// For explained nodes: the constraints that force the node's label
    /// (empty: the program alone forces it, e.g. it is on every path from
    /// the start to the crash... of any execution).
    pub nodes: Vec<(NodeId, Vec<Origin>)>,
    /// Nodes not explained because the deadline came before every solver
    /// was tried on them.
    pub left: usize,
}

/// The source line a node is attributed to: its function's file and its
/// first line.
fn place(g: &Icfg, n: NodeId) -> Option<(FileId, u32)> {
    Some((g.file_of(n)?, *g.lines(n).first()?))
}

/// One node per decided line: a Yes node for a line with one (a line is
/// Yes if any node on it is), else the line's first node when every node
/// on it is No. Lines of the functions on the stack (crash and frames)
/// come first, then the rest in file and line order.
pub fn representatives(g: &Icfg, report: &Report, labels: &[Label]) -> Vec<NodeId> {
    /// A line's first Yes node, its first node, and whether all are No.
    #[derive(Default)]
    struct Line {
        yes: Option<NodeId>,
        first: Option<NodeId>,
        all_no: bool,
    }
    let mut lines: BTreeMap<(FileId, u32), Line> = BTreeMap::new();
    for (i, &label) in labels.iter().enumerate() {
        let n = NodeId::new(i);
        let Some(at) = place(g, n) else { continue };
        let e = lines.entry(at).or_insert(Line {
            all_no: true,
            ..Line::default()
        });
        e.first.get_or_insert(n);
        match label {
            Label::Yes => {
                e.yes.get_or_insert(n);
            }
            Label::No => {}
            Label::Maybe => e.all_no = false,
        }
    }
    let mut stack_fns = std::collections::HashSet::new();
    let frames = report.stack.iter().flat_map(|f| f.call.nodes());
    for &n in report.crash.iter().flat_map(|c| c.nodes()).chain(frames) {
        stack_fns.insert(g.func_of(n));
    }
    let mut out: Vec<(bool, NodeId)> = lines
        .into_values()
        .filter_map(|l| l.yes.or(if l.all_no { l.first } else { None }))
        .map(|n| (!stack_fns.contains(&g.func_of(n)), n))
        .collect();
    out.sort_by_key(|&(later, _)| later);
    out.into_iter().map(|(_, n)| n).collect()
}

/// How many recent explanations are tried before a QuickXplain.
const RECENT: usize = 4;

/// `set` minimised by deletion, if it already makes `q` impossible: a
/// minimal subset (removing any member makes `q` possible again).
fn shrink(
    s: &dyn Solver,
    g: &Icfg,
    report: &Report,
    q: &Query,
    set: &[Origin],
) -> Option<Vec<Origin>> {
    let impossible = |keep: &[Origin]| {
        s.possible(g, &report.restrict(keep), Some(q))
            .is_ok_and(|a| a == Answer::Impossible)
    };
    if !impossible(set) {
        return None;
    }
    let mut keep = set.to_vec();
    let mut i = 0;
    while i < keep.len() {
        let mut without = keep.clone();
        without.remove(i);
        if impossible(&without) {
            keep = without;
        } else {
            i += 1;
        }
    }
    Some(keep)
}

/// Explains the label of each of `nodes` with the first of `solvers`
/// that can: each solver in turn over the nodes still unexplained (the
/// cheap one first for all of them), in `nodes`' order, until `deadline`.
/// Explanations come out in `nodes`' order.
pub fn explain_labels(
    solvers: &[&dyn Solver],
    g: &Icfg,
    report: &Report,
    labels: &[Label],
    nodes: &[NodeId],
    deadline: Instant,
) -> Why {
    let mut found: Vec<Option<Vec<Origin>>> = vec![None; nodes.len()];
    let mut tried = vec![0usize; nodes.len()];
    // Neighbouring lines are mostly forced by the same few constraints:
    // the last explanations found are tried first (one check each, and
    // a few more to shrink the set), before a whole QuickXplain.
    let mut recent: Vec<Vec<Origin>> = Vec::new();
    'solvers: for s in solvers {
        for (i, &n) in nodes.iter().enumerate() {
            if found[i].is_some() {
                continue;
            }
            if Instant::now() >= deadline {
                break 'solvers;
            }
            tried[i] += 1;
            let q = match labels[n.index()] {
                Label::Yes => Query::MaySkip(n),
                Label::No => Query::MayRun(n),
                Label::Maybe => continue,
            };
            found[i] = recent
                .iter()
                .find_map(|set| shrink(*s, g, report, &q, set))
                .or_else(|| {
                    s.explain(g, report, Some(&q)).map(|mut because| {
                        because.retain(|&o| o != Origin::Query);
                        because
                    })
                });
            if let Some(set) = &found[i] {
                recent.retain(|r| r != set);
                recent.insert(0, set.clone());
                recent.truncate(RECENT);
            }
        }
    }
    let left = (0..nodes.len())
        .filter(|&i| found[i].is_none() && tried[i] < solvers.len())
        .count();
    Why {
        nodes: nodes
            .iter()
            .zip(found)
            .filter_map(|(&n, f)| Some((n, f?)))
            .collect(),
        left,
    }
}
