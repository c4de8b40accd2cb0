//! Lower bounds on what one observation decides, for every candidate at
//! once, from two dominator trees of the base analysis's possible nodes
//! (no analysis per candidate).
//!
//! # The argument
//!
//! Let `G_L` be the graph (the solver's own flow graph, `Icfg::succ_csr`)
//! restricted to the nodes the base analysis does not label No, `s` the
//! start and `T` the crash nodes (the paths' ends). Every path the solver
//! admits as consistent with the report visits only nodes it labels
//! possible, so it is a path of `G_L` from `s`, ending in `T` when the
//! report has a crash. Adding an observation only removes paths: with
//! `obsNo {n}` the consistent paths are those avoiding `n`, with `obsYes
//! [n]` those through `n`. Then, for `n` and `m` in `G_L`:
//!
//! * **`obsNo {n}` makes `m` No** if `n` dominates `m` (every `G_L` path
//!   from `s` to `m` passes `n`) or post-dominates it (every `G_L` path
//!   from `m` to `T` passes `n`): a consistent path through `m` has a
//!   prefix `s -> m` and a suffix `m -> T` in `G_L`, so it visits `n`, and
//!   none is left. A line is then No when all its nodes (strong and weak)
//!   that the base did not label No are so.
//! * **`obsYes [n]` makes `m` Yes** if `m` dominates or post-dominates `n`
//!   (the same argument, the other way round); a line is then Yes when one
//!   of its strong nodes is.
//!
//! Both facts hold on the solver's model of the paths (its weakened report
//! for UTL, its products for FSA and CS), so they are what the solver
//! decides when it is exact on that model: a **lower bound** on the counts
//! that re-running it with the observation gives, not an exact count (a
//! line can also be decided in other ways: under `obsYes [n]` a node on
//! no common path with `n` becomes No; under `obsNo {n}` a node on every
//! path avoiding `n` becomes Yes). A solver that gives up on part of the
//! problem (UTL's undecided nodes past its work budget, CS's limits)
//! may decide less than the bound; the differential test
//! `tests/suggest_bounds.rs` checks bound <= re-run for UTL, FSA and CS on
//! random programs and reports, and `suggest` confirms the points it lists
//! by re-running (see the parent module).
//!
//! With values (`Report::values`), `analyze` first recovers the report
//! without them and merges the later stages into those labels, keeping
//! every decision; `G_L` is then built from that first stage's labels
//! (`l0`), whose runs with the observation decide at least as much.
//!
//! # Cost
//!
//! Two Cooper-Harvey-Kennedy dominator passes (one on the reversed graph
//! from a virtual sink joined to the crash nodes), then one walk up both
//! trees per candidate (its dominators' strong lines, counted once each)
//! and one per Maybe line (from one of its nodes: the candidates above it
//! in either tree that dominate or post-dominate all its nodes). That is
//! `O(V + E)` plus the summed depths, each walk cut at [`WALK_CAP`] steps
//! (a cut walk counts less: still a lower bound).

use crate::algo::{dominators, NONE};
use crate::graph::Csr;
use crate::icfg::Icfg;
use crate::ids::NodeId;
use crate::report::Report;
use crate::solver::Label;

/// The most tree steps of one walk (see the module docs).
pub const WALK_CAP: usize = 1 << 15;

/// A dominator tree with preorder intervals, for "is `a` an ancestor of
/// `b`" in constant time.
struct DomTree {
    idom: Vec<u32>,
    root: u32,
    /// Preorder number; [`NONE`] outside the tree.
    tin: Vec<u32>,
    /// One past the last preorder number of the subtree.
    tout: Vec<u32>,
}

impl DomTree {
    fn new(idom: Vec<u32>, root: u32) -> DomTree {
        let n = idom.len();
        let edges: Vec<(u32, u32)> = (0..n as u32)
            .filter(|&v| v != root && idom[v as usize] != NONE)
            .map(|v| (idom[v as usize], v))
            .collect();
        let kids = Csr::from_edges(n, &edges);
        let mut tin = vec![NONE; n];
        let mut tout = vec![NONE; n];
        let mut t = 0u32;
        tin[root as usize] = t;
        t += 1;
        let mut stack: Vec<(u32, usize)> = vec![(root, 0)];
        while let Some(top) = stack.last_mut() {
            let (v, i) = *top;
            let ks = kids.succs(v);
            if i < ks.len() {
                top.1 += 1;
                let w = ks[i];
                tin[w as usize] = t;
                t += 1;
                stack.push((w, 0));
            } else {
                tout[v as usize] = t;
                stack.pop();
            }
        }
        DomTree {
            idom,
            root,
            tin,
            tout,
        }
    }

    fn contains(&self, v: u32) -> bool {
        self.tin[v as usize] != NONE
    }

    /// Whether `a` dominates `b` (`a == b` included).
    fn is_anc(&self, a: u32, b: u32) -> bool {
        let (ta, tb) = (self.tin[a as usize], self.tin[b as usize]);
        ta != NONE && tb != NONE && ta <= tb && tb < self.tout[a as usize]
    }

    /// `v` and its dominators, nearest first, the root included.
    fn up(&self, v: u32) -> impl Iterator<Item = u32> + '_ {
        let first = self.contains(v).then_some(v);
        std::iter::successors(first, move |&x| {
            (x != self.root).then(|| self.idom[x as usize])
        })
    }
}

/// Per node, lower bounds on the Maybe lines one observation of it
/// decides (0 for nodes not asked about).
pub(crate) struct Bounds {
    /// With `obsYes [n]`.
    pub ran: Vec<u32>,
    /// With `obsNo {n}`.
    pub not: Vec<u32>,
    /// Walks cut at [`WALK_CAP`].
    pub cut_walks: usize,
}

/// The dominator tree from the start and the post-dominator tree
/// towards the crash (a virtual sink, vertex `n`, whose successors are the
/// crash nodes), over the nodes `possible` allows.
fn dom_trees(g: &Icfg, report: &Report, possible: &dyn Fn(u32) -> bool) -> Vec<DomTree> {
    let n = g.num_nodes();
    let start = g.start().as_u32();
    let mut trees: Vec<DomTree> = Vec::with_capacity(2);
    if possible(start) {
        let idom = dominators(g.succ_csr(), g.pred_csr(), start, possible);
        trees.push(DomTree::new(idom, start));
    }
    if let Some(crash) = &report.crash {
        let sink = n as u32;
        let mut rev: Vec<(u32, u32)> = Vec::with_capacity(g.succ_csr().num_edges() + 4);
        let mut fwd: Vec<(u32, u32)> = Vec::with_capacity(g.succ_csr().num_edges() + 4);
        for v in 0..n as u32 {
            for &w in g.succ_csr().succs(v) {
                fwd.push((v, w));
                rev.push((w, v));
            }
        }
        for t in crash.nodes().iter().map(|t| t.as_u32()) {
            if possible(t) {
                rev.push((sink, t));
                fwd.push((t, sink));
            }
        }
        let (rev, fwd) = (Csr::from_edges(n + 1, &rev), Csr::from_edges(n + 1, &fwd));
        let idom = dominators(&rev, &fwd, sink, |v| v == sink || possible(v));
        trees.push(DomTree::new(idom, sink));
    }
    trees
}

/// The bounds of the nodes with `wanted[n]` (see the module docs).
/// `l0`: the labels `G_L` is built from; `lines`: per Maybe line of the
/// base, its strong nodes and its weak-only nodes.
pub(crate) fn bounds(
    g: &Icfg,
    report: &Report,
    l0: &[Label],
    lines: &[(Vec<NodeId>, Vec<NodeId>)],
    wanted: &[bool],
) -> Bounds {
    let n = g.num_nodes();
    let possible = |v: u32| l0[v as usize] != Label::No;
    let trees = dom_trees(g, report, &possible);
    let sink = n as u32;
    let mut out = Bounds {
        ran: vec![0; n],
        not: vec![0; n],
        cut_walks: 0,
    };
    // "ran": the strong lines of n's dominators and post-dominators.
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    for (i, (strong, _)) in lines.iter().enumerate() {
        for &m in strong {
            if possible(m.as_u32()) {
                pairs.push((m.as_u32(), i as u32));
            }
        }
    }
    let strong_of = Csr::from_edges(n, &pairs);
    let mut line_stamp = vec![NONE; lines.len()];
    for v in (0..n as u32).filter(|&v| wanted[v as usize] && possible(v)) {
        let mut count = 0u32;
        for t in &trees {
            for (steps, m) in t.up(v).enumerate() {
                if steps == WALK_CAP {
                    out.cut_walks += 1;
                    break;
                }
                if m == sink {
                    continue;
                }
                for &l in strong_of.succs(m) {
                    if line_stamp[l as usize] != v {
                        line_stamp[l as usize] = v;
                        count += 1;
                    }
                }
            }
        }
        out.ran[v as usize] = count;
    }
    // "not": per line, the candidates that dominate or post-dominate all
    // of its possible nodes; each is above the first of them in a tree.
    let mut node_stamp = vec![NONE; n];
    for (i, (strong, weak)) in lines.iter().enumerate() {
        let xs: Vec<u32> = strong
            .iter()
            .chain(weak)
            .map(|m| m.as_u32())
            .filter(|&m| possible(m))
            .collect();
        let Some(&x1) = xs.first() else { continue };
        for t in &trees {
            for (steps, m) in t.up(x1).enumerate() {
                if steps == WALK_CAP {
                    out.cut_walks += 1;
                    break;
                }
                if m == sink || !wanted[m as usize] || node_stamp[m as usize] == i as u32 {
                    continue;
                }
                node_stamp[m as usize] = i as u32;
                if xs.iter().all(|&x| trees.iter().any(|t| t.is_anc(m, x))) {
                    out.not[m as usize] += 1;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_intervals_answer_ancestry() {
        // 0 -> 1 -> {2, 3}; 4 outside.
        let t = DomTree::new(vec![0, 0, 1, 1, NONE], 0);
        assert!(t.is_anc(0, 3) && t.is_anc(1, 2) && t.is_anc(2, 2));
        assert!(!t.is_anc(2, 3) && !t.is_anc(3, 1) && !t.is_anc(0, 4));
        assert_eq!(t.up(3).collect::<Vec<_>>(), vec![3, 1, 0]);
        assert_eq!(t.up(4).count(), 0);
    }
}
