//! Brute-force reference for the context-sensitive solver: enumerates the
//! *valid* paths (calls and returns matched through an explicit stack) with
//! a bounded length and stack depth.
//!
//! Semantics, written out independently of the solver:
//!
//! * a call edge pushes `(call site, callee entry)`; at a function's exit
//!   the top frame is popped and the path continues at a return site of
//!   its call site (return edges of the graph are not used); the exit of
//!   the bottom activation ends nothing (the path stops there);
//! * a flow edge between two functions is a non-local jump: it pops frames
//!   until the current activation is one of the target's function (any
//!   such depth), and is impossible if there is none;
//! * at the end, the last node is a crash node and the pending frames,
//!   outermost first, are `P₀ f₀ P₁ f₁ … fₖ₋₁ Pₖ` where frame `fⱼ` has its
//!   call site in the report's `call` set and its callee entry in the
//!   `entry` set, and each `Pⱼ` is empty unless `j` is a *gap*: `j = 0`,
//!   `j` in the report's `stack_gaps`, or the nodes that end segment `j`
//!   (frame `j`'s call sites, or the crash nodes for `j = k`) are not all
//!   in functions that frame `j - 1` enters (a missing crash included);
//!   at a gap `j` in the report's `sibling_gaps` that is not such a
//!   segment, each unreported frame of `Pⱼ` has a tail-marked call site
//!   and a callee from which tail-marked calls may lead to a function of
//!   the nodes that end segment `j` (a function with a tail-marked call of
//!   no known callee, and no library callee, may lead anywhere);
//! * every other constraint as in [`crate::oracle::path_consistent`].

use crate::oracle::path_consistent;
use postmortem_core::icfg::{EdgeKind, Icfg};
use postmortem_core::ids::{FuncId, NodeId};
use postmortem_core::report::Report;
use postmortem_core::solver::Label;

/// The result of an enumeration.
#[derive(Clone, Debug)]
pub struct CsPaths {
    /// Per node: on some consistent path found.
    pub seen: Vec<bool>,
    /// Per node: on every consistent path found.
    pub all: Vec<bool>,
    /// Consistent paths found.
    pub found: usize,
    /// Whether a bound cut some path (if not, the enumeration is exact).
    pub cut: bool,
    /// The first 10,000 consistent paths found.
    pub paths: Vec<Vec<NodeId>>,
}

impl CsPaths {
    /// Labels from the paths found (`None` if none was found).
    pub fn labels(&self) -> Option<Vec<Label>> {
        if self.found == 0 {
            return None;
        }
        Some(
            (0..self.seen.len())
                .map(|v| {
                    if !self.seen[v] {
                        Label::No
                    } else if self.all[v] {
                        Label::Yes
                    } else {
                        Label::Maybe
                    }
                })
                .collect(),
        )
    }
}

/// Per segment: whether it is a gap, and at a sibling gap, the callees
/// its unreported frames may have (see the module docs).
type Gap = (bool, Option<Vec<FuncId>>);

fn gaps(g: &Icfg, r: &Report) -> Vec<Gap> {
    let k = r.stack.len();
    (0..=k)
        .map(|j| {
            let plain = plain_gap(g, r, j);
            if plain || j == 0 || !r.stack_gaps.contains(&j) {
                return (plain || j == 0 || r.stack_gaps.contains(&j), None);
            }
            if !r.sibling_gaps.contains(&j) {
                return (true, None);
            }
            let ends: Vec<NodeId> = if j < k {
                r.stack[j].call.nodes().to_vec()
            } else {
                r.crash
                    .as_ref()
                    .map(|c| c.nodes().to_vec())
                    .unwrap_or_default()
            };
            let mut reach: Vec<FuncId> = ends.iter().map(|&e| g.func_of(e)).collect();
            // To a fixpoint: a function with a tail-marked call of one in
            // reach, or of no known callee (and no library one).
            loop {
                let before = reach.len();
                for &t in g.tail_calls() {
                    let owner = g.func_of(t);
                    if reach.contains(&owner) {
                        continue;
                    }
                    let mut callees = g.callees(t).peekable();
                    let wild = callees.peek().is_none()
                        && g.call_note(t).is_none_or(|n| n.external_callees.is_empty());
                    if wild || callees.any(|c| reach.contains(&c)) {
                        reach.push(owner);
                    }
                }
                if reach.len() == before {
                    break;
                }
            }
            (true, Some(reach))
        })
        .collect()
}

/// Whether segment `j` is a gap without the report saying so: the nodes
/// that end it are not all in functions frame `j - 1` enters.
fn plain_gap(g: &Icfg, r: &Report, j: usize) -> bool {
    let k = r.stack.len();
    if j == 0 {
        return true;
    }
    let home: Vec<FuncId> = r.stack[j - 1]
        .entry
        .nodes()
        .iter()
        .map(|&e| g.func_of(e))
        .collect();
    let ends: Vec<NodeId> = if j < k {
        r.stack[j].call.nodes().to_vec()
    } else {
        match &r.crash {
            Some(c) => c.nodes().to_vec(),
            None => return true,
        }
    };
    !ends.iter().all(|e| home.contains(&g.func_of(*e)))
}

/// Whether the pending frames match the report's stack (see the module
/// docs).
fn stack_matches(g: &Icfg, r: &Report, gap: &[Gap], pending: &[(NodeId, NodeId)]) -> bool {
    // match_at(j, p): frames j.. of the report matched to pending[p..].
    let k = r.stack.len();
    let mut memo = vec![vec![None; pending.len() + 1]; k + 1];
    fn go(
        g: &Icfg,
        r: &Report,
        gap: &[Gap],
        pending: &[(NodeId, NodeId)],
        j: usize,
        p: usize,
        memo: &mut Vec<Vec<Option<bool>>>,
    ) -> bool {
        if let Some(b) = memo[j][p] {
            return b;
        }
        let k = r.stack.len();
        // Whether pending frame q may be an unreported one of segment j.
        let skippable = |j: usize, q: usize| {
            let (is_gap, reach) = &gap[j];
            let (s, t) = pending[q];
            *is_gap
                && reach
                    .as_ref()
                    .is_none_or(|f| g.is_tail_call(s) && f.contains(&g.func_of(t)))
        };
        let res = if j == k {
            (p..pending.len()).all(|q| skippable(k, q))
        } else {
            let mut ok = false;
            // Skip unreported frames only at a gap.
            let mut q = p;
            loop {
                if q < pending.len() {
                    let (s, t) = pending[q];
                    if r.stack[j].call.contains(s)
                        && r.stack[j].entry.contains(t)
                        && go(g, r, gap, pending, j + 1, q + 1, memo)
                    {
                        ok = true;
                        break;
                    }
                }
                if q >= pending.len() || !skippable(j, q) {
                    break;
                }
                q += 1;
            }
            ok
        };
        memo[j][p] = Some(res);
        res
    }
    go(g, r, gap, pending, 0, 0, &mut memo)
}

/// Enumerates valid paths of at most `max_len` nodes and `max_depth`
/// pending frames, keeping those consistent with the report.
pub fn enumerate(g: &Icfg, r: &Report, max_len: usize, max_depth: usize) -> CsPaths {
    let n = g.num_nodes();
    let mut e = Enumeration {
        g,
        r,
        max_len,
        max_depth,
        gap: gaps(g, r),
        out: CsPaths {
            seen: vec![false; n],
            all: vec![true; n],
            found: 0,
            cut: false,
            paths: Vec::new(),
        },
    };
    e.search();
    e.out
}

/// Pending frames, outermost first: (call site, callee entry).
type Frames = Vec<(NodeId, NodeId)>;

/// The state of [`enumerate`]: the bounds, and what was found so far
/// (`out.cut` is set as soon as a bound cuts a path).
struct Enumeration<'a> {
    g: &'a Icfg,
    r: &'a Report,
    max_len: usize,
    max_depth: usize,
    gap: Vec<Gap>,
    out: CsPaths,
}

/// One node of the depth-first search: its successors, each with the
/// pending frames after the step, and the next one to try.
struct Level {
    succs: Vec<(NodeId, Frames)>,
    next: usize,
}

impl Enumeration<'_> {
    /// Depth-first over (path, stack) with explicit successor lists.
    fn search(&mut self) {
        let start = self.g.start();
        let mut path = vec![start];
        let mut levels = vec![Level {
            succs: self.successors(start, &[]),
            next: 0,
        }];
        self.visit(&path, &[]);
        while let Some(top) = levels.last_mut() {
            if top.next < top.succs.len() && path.len() < self.max_len {
                let (w, s) = top.succs[top.next].clone();
                top.next += 1;
                let succs = self.successors(w, &s);
                path.push(w);
                self.visit(&path, &s);
                levels.push(Level { succs, next: 0 });
            } else {
                if top.next < top.succs.len() {
                    self.out.cut = true;
                }
                levels.pop();
                path.pop();
            }
        }
    }

    /// The function of the activation with `d` pending frames under it.
    fn activation(&self, stack: &[(NodeId, NodeId)], d: usize) -> FuncId {
        let g = self.g;
        if d == 0 {
            g.func_of(g.start())
        } else {
            g.func_of(stack[d - 1].1)
        }
    }

    /// The steps from `v` with pending frames `stack`: flow edges (local,
    /// or non-local jumps that pop to an activation of the target's
    /// function), calls (within `max_depth`), and returns from an exit.
    fn successors(&mut self, v: NodeId, stack: &[(NodeId, NodeId)]) -> Vec<(NodeId, Frames)> {
        let g = self.g;
        let mut out: Vec<(NodeId, Frames)> = Vec::new();
        let f = g.func_of(v);
        for (w, k) in g.succs(v) {
            match k {
                EdgeKind::Local if g.func_of(w) == f => out.push((w, stack.to_vec())),
                EdgeKind::Local => {
                    // Pop to any activation of w's function.
                    let target = g.func_of(w);
                    for d in 0..=stack.len() {
                        if self.activation(stack, d) == target {
                            out.push((w, stack[..d].to_vec()));
                        }
                    }
                }
                EdgeKind::Call => {
                    if stack.len() >= self.max_depth {
                        self.out.cut = true;
                        continue;
                    }
                    let mut s = stack.to_vec();
                    s.push((v, w));
                    out.push((w, s));
                }
                EdgeKind::Return => {}
            }
        }
        if g.function(f).exit == Some(v) {
            self.returns(stack, &mut out);
        }
        out
    }

    /// The returns from an exit with pending frames `stack`: to the return
    /// sites of the top frame's call site, added to `out`.
    fn returns(&self, stack: &[(NodeId, NodeId)], out: &mut Vec<(NodeId, Frames)>) {
        let g = self.g;
        let Some(&(site, _)) = stack.last() else {
            return;
        };
        let s = &stack[..stack.len() - 1];
        for rs in g.return_sites(site) {
            if g.func_of(rs) == g.func_of(site) {
                out.push((rs, s.to_vec()));
            } else {
                // A return site in another function: a jump from
                // the caller's activation.
                for d in 0..=s.len() {
                    if self.activation(s, d) == g.func_of(rs) && d < s.len() {
                        out.push((rs, s[..d].to_vec()));
                    }
                }
            }
        }
    }

    /// Records `path` if it is consistent with the report and ends with
    /// pending frames `stack` that match the report's stack.
    fn visit(&mut self, path: &[NodeId], stack: &[(NodeId, NodeId)]) {
        if !(path_consistent(self.r, None, path) && stack_matches(self.g, self.r, &self.gap, stack))
        {
            return;
        }
        let out = &mut self.out;
        out.found += 1;
        if out.paths.len() < 10_000 {
            out.paths.push(path.to_vec());
        }
        let mut on = vec![false; out.seen.len()];
        for &x in path {
            on[x.index()] = true;
        }
        for (v, &o) in on.iter().enumerate() {
            out.seen[v] |= o;
            out.all[v] &= o;
        }
    }
}
