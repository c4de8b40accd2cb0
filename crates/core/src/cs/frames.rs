//! Context-sensitive labels from the crash stack: paths whose calls and
//! returns match, with the pending calls at the crash being exactly the
//! report's frames (except at [gaps](crate::report::Report::stack_gaps)).
//!
//! The stack splits every valid path into *segments*, one per activation
//! that is still pending at the crash: segment `j` runs in the callee of
//! frame `j - 1` (segment 0 from the start) up to frame `j`'s call site
//! (the last one up to the crash), and every call it makes in between
//! returns (Reps, Horwitz, Sagiv, POPL 1995: *same-level* paths, with
//! completed calls as summary edges). So the analysis is three linear
//! passes, no tabulation per node:
//!
//! 1. **Same-level graph** ([`SameLevel`]): for every function, whether an
//!    invocation can complete (reach its exit) or *escape* (leave by a
//!    non-local jump, `longjmp`), found by one worklist pass to a least
//!    fixpoint; then each call site gets summary edges to its return sites
//!    (some callee completes) and to the jump targets of its own function
//!    (some callee escapes and the jump lands here).
//! 2. **Frame graph** ([`FrameGraph`]): states (node, segment). Inside a
//!    segment: same-level edges; at a gap, also unreported calls that never
//!    return; from frame `j`'s call sites, its call edges into segment
//!    `j + 1`; a non-local jump may land in the same segment or any
//!    earlier one (it pops frames). Kept: the states on some path from the
//!    start to the crash (forward ∩ backward).
//! 3. **Labels.** A node *may* have run if some kept state has it, or it
//!    lies inside a completed (or escaped) invocation of a kept summary
//!    edge: the functions so invoked, closed over their own inner calls,
//!    contribute their nodes on entry-to-exit same-level paths. A node
//!    *must* have run if a kept state of it dominates the crash in the
//!    frame graph, or it dominates the exit of a function surely invoked:
//!    the only callee that can complete at a dominating call site that
//!    cannot fall through (closed the same way). Dominators: Cooper,
//!    Harvey, Kennedy (2001), see [`crate::algo::dominators`].
//!
//! Sound by construction: every step only widens the set of paths (the
//! must-run side takes fewer nodes than the exact answer when a node runs
//! in different segments on different paths, or under an indirect call
//! with several callees). Exact for "may it have run?" on graphs without
//! non-local jumps, as the tests check against a bounded-stack oracle.
//!
//! Cost: O(V + E) for the same-level graph, O(Σ segment sizes) for the
//! frame graph (one function per segment except at gaps), and a
//! dominator computation over the kept frame graph and each surely
//! invoked function.

use crate::algo::dominators;
use crate::graph::{BitSet, Csr};
use crate::icfg::{EdgeKind, Icfg};
use crate::ids::{FuncId, NodeId};
use crate::report::Report;
use std::collections::HashMap;

const NONE: u32 = u32::MAX;

/// Estimated bytes per frame-graph state: its id map entry, the state,
/// its edges forward and backward, and the per-state bit sets.
pub const BYTES_PER_STATE: usize = 96;

/// Why the frame graph gave no labels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum CsFail {
    /// No valid path from the start to the crash with this stack.
    Infeasible,
    /// The frame graph would exceed a limit (which, for humans).
    TooLarge(String),
}

/// The same-level structure of the graph with some nodes removed.
pub(crate) struct SameLevel {
    /// Some invocation reaches the exit.
    pub completes: Vec<bool>,
    /// Some invocation leaves by a non-local jump.
    pub escapes: Vec<bool>,
    /// Same-level edges: flow inside a function, and summary edges of
    /// calls (to return sites, and to the function's jump targets).
    pub edges: Csr,
    /// Reached from the function's entry by same-level edges.
    pub fwd: BitSet,
    /// Reaches the function's exit or an escape point.
    pub bwd: BitSet,
    /// Every target of a non-local jump.
    pub all_jump_targets: Vec<NodeId>,
    /// Nodes from which an invocation may leave by a jump: jump sources,
    /// and call sites with an escaping callee.
    pub escape_points: BitSet,
}

fn is_jump(g: &Icfg, from: NodeId, to: NodeId, kind: EdgeKind) -> bool {
    kind == EdgeKind::Local && g.func_of(from) != g.func_of(to)
}

impl SameLevel {
    /// Builds it, ignoring the `removed` nodes.
    pub fn compute(g: &Icfg, removed: &BitSet) -> SameLevel {
        let n = g.num_nodes();
        let nf = g.functions().len();
        let ok = |v: NodeId| !removed.contains(v.index());
        let mut jump_targets: HashMap<FuncId, Vec<NodeId>> = HashMap::new();
        let mut all_jump_targets = Vec::new();
        for v in g.nodes() {
            for (w, k) in g.succs(v) {
                if is_jump(g, v, w, k) && ok(w) {
                    all_jump_targets.push(w);
                }
            }
            for r in g.return_sites(v) {
                if g.func_of(r) != g.func_of(v) && ok(r) {
                    all_jump_targets.push(r);
                }
            }
        }
        all_jump_targets.sort_unstable();
        all_jump_targets.dedup();
        for &w in &all_jump_targets {
            jump_targets.entry(g.func_of(w)).or_default().push(w);
        }
        // Pass 1: least fixpoint of "completes" and "escapes", with the
        // nodes reached from their function's entry.
        let mut completes = vec![false; nf];
        let mut escapes = vec![false; nf];
        let mut fwd = BitSet::new(n);
        let mut work: Vec<NodeId> = Vec::new();
        // Reached call sites by callee function.
        let mut callers: Vec<Vec<NodeId>> = vec![Vec::new(); nf];
        for f in g.functions() {
            if let Some(e) = f.entry {
                if ok(e) && fwd.insert(e.index()) {
                    work.push(e);
                }
            }
        }
        let add = |v: NodeId, fwd: &mut BitSet, work: &mut Vec<NodeId>| {
            if ok(v) && fwd.insert(v.index()) {
                work.push(v);
            }
        };
        // Functions whose escape was just found, to propagate to callers.
        let mut escaped_now: Vec<FuncId> = Vec::new();
        loop {
            while let Some(v) = work.pop() {
                let f = g.func_of(v);
                for (w, k) in g.succs(v) {
                    match k {
                        EdgeKind::Local if g.func_of(w) == f => add(w, &mut fwd, &mut work),
                        EdgeKind::Local => {
                            if ok(w) && !escapes[f.index()] {
                                escapes[f.index()] = true;
                                escaped_now.push(f);
                            }
                        }
                        EdgeKind::Call => {
                            let t = g.func_of(w);
                            callers[t.index()].push(v);
                            if completes[t.index()] {
                                for r in g.return_sites(v) {
                                    if g.func_of(r) == f {
                                        add(r, &mut fwd, &mut work);
                                    } else if ok(r) && !escapes[f.index()] {
                                        escapes[f.index()] = true;
                                        escaped_now.push(f);
                                    }
                                }
                            }
                            if escapes[t.index()] {
                                for &r in jump_targets.get(&f).map_or(&[][..], |x| x) {
                                    add(r, &mut fwd, &mut work);
                                }
                                if !escapes[f.index()] {
                                    escapes[f.index()] = true;
                                    escaped_now.push(f);
                                }
                            }
                        }
                        EdgeKind::Return => {}
                    }
                }
                if g.function(f).exit == Some(v) && !completes[f.index()] {
                    completes[f.index()] = true;
                    for &s in &callers[f.index()] {
                        let h = g.func_of(s);
                        for r in g.return_sites(s) {
                            if g.func_of(r) == h {
                                add(r, &mut fwd, &mut work);
                            } else if ok(r) && !escapes[h.index()] {
                                escapes[h.index()] = true;
                                escaped_now.push(h);
                            }
                        }
                    }
                }
            }
            let Some(f) = escaped_now.pop() else { break };
            for s in callers[f.index()].clone() {
                let h = g.func_of(s);
                for &r in jump_targets.get(&h).map_or(&[][..], |x| x) {
                    add(r, &mut fwd, &mut work);
                }
                if !escapes[h.index()] {
                    escapes[h.index()] = true;
                    escaped_now.push(h);
                }
            }
        }
        // Pass 2: the same-level edges, and escape points.
        let mut edges: Vec<(u32, u32)> = Vec::new();
        let mut escape_points = BitSet::new(n);
        for v in g.nodes() {
            if !ok(v) {
                continue;
            }
            let f = g.func_of(v);
            let (mut any_completes, mut any_escapes) = (false, false);
            for (w, k) in g.succs(v) {
                match k {
                    EdgeKind::Local if g.func_of(w) == f => {
                        if ok(w) {
                            edges.push((v.as_u32(), w.as_u32()));
                        }
                    }
                    EdgeKind::Local => {
                        if ok(w) {
                            escape_points.insert(v.index());
                        }
                    }
                    EdgeKind::Call => {
                        let t = g.func_of(w).index();
                        any_completes |= completes[t];
                        any_escapes |= escapes[t];
                    }
                    EdgeKind::Return => {}
                }
            }
            if any_completes {
                for r in g.return_sites(v) {
                    if !ok(r) {
                        continue;
                    }
                    if g.func_of(r) == f {
                        edges.push((v.as_u32(), r.as_u32()));
                    } else {
                        // A return into another function: a jump.
                        escape_points.insert(v.index());
                    }
                }
            }
            if any_escapes {
                escape_points.insert(v.index());
                for &r in jump_targets.get(&f).map_or(&[][..], |x| x) {
                    edges.push((v.as_u32(), r.as_u32()));
                }
            }
        }
        edges.sort_unstable();
        edges.dedup();
        let edges = Csr::from_edges(n, &edges);
        let rev = edges.reversed();
        let mut bwd = BitSet::new(n);
        let mut stack: Vec<u32> = Vec::new();
        for f in g.functions() {
            if let Some(x) = f.exit {
                if ok(x) && bwd.insert(x.index()) {
                    stack.push(x.as_u32());
                }
            }
        }
        for v in escape_points.iter() {
            if bwd.insert(v) {
                stack.push(v as u32);
            }
        }
        while let Some(v) = stack.pop() {
            for &u in rev.succs(v) {
                if bwd.insert(u as usize) {
                    stack.push(u);
                }
            }
        }
        SameLevel {
            completes,
            escapes,
            edges,
            fwd,
            bwd,
            all_jump_targets,
            escape_points,
        }
    }

    /// On some same-level path of an invocation (entry to exit or to an
    /// escape point).
    pub fn inside(&self, v: usize) -> bool {
        self.fwd.contains(v) && self.bwd.contains(v)
    }

    /// The callees of call site `s` that may complete or escape.
    fn finishing_callees<'a>(
        &'a self,
        g: &'a Icfg,
        s: NodeId,
    ) -> impl Iterator<Item = FuncId> + 'a {
        g.succs(s)
            .filter(|&(_, k)| k == EdgeKind::Call)
            .map(|(w, _)| g.func_of(w))
            .filter(|t| self.completes[t.index()] || self.escapes[t.index()])
    }
}

/// Segment `j`'s description.
#[derive(Clone, Debug)]
pub(crate) struct Segment {
    /// Unreported pending calls may be made in it.
    pub gap: bool,
    /// Functions its activation may be in (empty at a gap: any).
    pub home: Vec<FuncId>,
}

/// The `report.stack.len() + 1` segments of the report's stack: segment 0
/// (always a gap: the frames below `main`) and one per frame's callee. A
/// segment is a gap where the report says so or where its frame's callee
/// does not hold the next call site (or the crash).
pub(crate) fn segments(g: &Icfg, report: &Report) -> Vec<Segment> {
    let k = report.stack.len();
    let entry_funcs = |i: usize| -> Vec<FuncId> {
        let mut f: Vec<FuncId> = report.stack[i]
            .entry
            .nodes()
            .iter()
            .map(|&e| g.func_of(e))
            .collect();
        f.sort_unstable();
        f.dedup();
        f
    };
    let mut segs: Vec<Segment> = Vec::with_capacity(k + 1);
    for j in 0..=k {
        if j == 0 {
            segs.push(Segment {
                gap: true,
                home: Vec::new(),
            });
            continue;
        }
        let home = entry_funcs(j - 1);
        let ends: Vec<NodeId> = if j < k {
            report.stack[j].call.nodes().to_vec()
        } else {
            report
                .crash
                .as_ref()
                .map_or(Vec::new(), |c| c.nodes().to_vec())
        };
        let chained = !ends.is_empty() && ends.iter().all(|&e| home.contains(&g.func_of(e)));
        let gap = report.stack_gaps.contains(&j) || !chained;
        segs.push(Segment {
            gap,
            home: if gap { Vec::new() } else { home },
        });
    }
    segs
}

/// The states (node, segment) on some valid path, and the labels.
pub(crate) struct FrameGraph {
    /// Nodes that may have run.
    pub may: BitSet,
    /// Nodes that must have run.
    pub must: BitSet,
    /// States explored.
    pub states: usize,
    /// States kept (on a path from the start to the crash).
    pub kept: usize,
    /// Functions invoked completely (or escaping) somewhere on a kept path.
    pub invoked: usize,
}

impl FrameGraph {
    /// Labels for `report`'s stack and crash over the same-level graph `sl`
    /// (computed with `removed`), within `limits`.
    pub fn compute(
        g: &Icfg,
        report: &Report,
        removed: &BitSet,
        sl: &SameLevel,
        limits: &super::CsLimits,
    ) -> Result<FrameGraph, CsFail> {
        let started = std::time::Instant::now();
        let max_states = limits
            .max_states
            .min(limits.max_memory / BYTES_PER_STATE)
            .max(1);
        let ok = |v: NodeId| !removed.contains(v.index());
        let k = report.stack.len();
        let segs = segments(g, report);
        // State ids.
        let mut ids: HashMap<(u32, u32), u32> = HashMap::new();
        let mut states: Vec<(u32, u32)> = Vec::new(); // (node, segment)
        let mut edges: Vec<(u32, u32)> = Vec::new();
        // (from state, call site) of summary transitions, to find the
        // invoked callees once states are kept.
        let intern = |v: NodeId,
                      j: usize,
                      ids: &mut HashMap<(u32, u32), u32>,
                      states: &mut Vec<(u32, u32)>,
                      work: &mut Vec<u32>|
         -> Result<u32, CsFail> {
            let key = (v.as_u32(), j as u32);
            if let Some(&id) = ids.get(&key) {
                return Ok(id);
            }
            if states.len() >= max_states {
                return Err(CsFail::TooLarge(if max_states < limits.max_states {
                    format!("the memory budget ({} MiB)", limits.max_memory >> 20)
                } else {
                    format!("{max_states} states")
                }));
            }
            if states.len() % 4096 == 4095 && limits.timeout.is_some_and(|t| started.elapsed() > t)
            {
                return Err(CsFail::TooLarge(format!(
                    "the time limit ({:.1} s)",
                    limits.timeout.map_or(0.0, |t| t.as_secs_f64())
                )));
            }
            let id = states.len() as u32;
            ids.insert(key, id);
            states.push(key);
            work.push(id);
            Ok(id)
        };
        let start = g.start();
        if !ok(start) {
            return Err(CsFail::Infeasible);
        }
        let mut work: Vec<u32> = Vec::new();
        let root = intern(start, 0, &mut ids, &mut states, &mut work)?;
        // Where a non-local jump from segment j may land: (target, segment)
        // for every segment i <= j whose activation may be the target's
        // function.
        let lands = |w: NodeId, i: usize| segs[i].gap || segs[i].home.contains(&g.func_of(w));
        while let Some(id) = work.pop() {
            let (v, j) = states[id as usize];
            let (vn, j) = (NodeId::new(v as usize), j as usize);
            // Same-level edges (flow and summaries).
            for &w in sl.edges.succs(v) {
                let t = intern(NodeId::new(w as usize), j, &mut ids, &mut states, &mut work)?;
                edges.push((id, t));
            }
            // Calls: unreported pending ones at a gap; frame j's into j + 1.
            for (w, kind) in g.succs(vn) {
                if kind != EdgeKind::Call || !ok(w) {
                    continue;
                }
                if segs[j].gap {
                    let t = intern(w, j, &mut ids, &mut states, &mut work)?;
                    edges.push((id, t));
                }
                if j < k && report.stack[j].call.contains(vn) && report.stack[j].entry.contains(w) {
                    let t = intern(w, j + 1, &mut ids, &mut states, &mut work)?;
                    edges.push((id, t));
                }
            }
            // Non-local jumps out of this activation, directly or from a
            // callee that escapes: they pop frames, landing in an earlier
            // segment (or this one at a gap: an unreported frame).
            if sl.escape_points.contains(v as usize) {
                let direct: Vec<NodeId> = g
                    .succs(vn)
                    .filter(|&(w, kd)| is_jump(g, vn, w, kd) && ok(w))
                    .map(|(w, _)| w)
                    .chain(
                        g.return_sites(vn)
                            .filter(|&r| g.func_of(r) != g.func_of(vn) && ok(r)),
                    )
                    .collect();
                let via_callee = sl.finishing_callees(g, vn).any(|t| sl.escapes[t.index()]);
                let targets: &[NodeId] = if via_callee {
                    &sl.all_jump_targets
                } else {
                    &direct
                };
                for &w in targets {
                    for i in 0..=j {
                        if (i < j || segs[j].gap) && lands(w, i) {
                            let t = intern(w, i, &mut ids, &mut states, &mut work)?;
                            edges.push((id, t));
                        }
                    }
                }
            }
        }
        let ns = states.len();
        // Accepting states: the crash nodes in the last segment.
        let accept: Vec<u32> = (0..ns as u32)
            .filter(|&s| {
                let (v, j) = states[s as usize];
                j as usize == k
                    && report
                        .crash
                        .as_ref()
                        .is_none_or(|c| c.contains(NodeId::new(v as usize)))
            })
            .collect();
        if accept.is_empty() {
            return Err(CsFail::Infeasible);
        }
        // Virtual sink.
        let sink = ns as u32;
        edges.extend(accept.iter().map(|&a| (a, sink)));
        edges.sort_unstable();
        edges.dedup();
        let fg = Csr::from_edges(ns + 1, &edges);
        let rev = fg.reversed();
        let mut bwd = BitSet::new(ns + 1);
        let mut stack = vec![sink];
        bwd.insert(sink as usize);
        while let Some(s) = stack.pop() {
            for &p in rev.succs(s) {
                if bwd.insert(p as usize) {
                    stack.push(p);
                }
            }
        }
        if !bwd.contains(root as usize) {
            return Err(CsFail::Infeasible);
        }
        // Every explored state is forward reachable; kept = backward too.
        let n = g.num_nodes();
        let mut may = BitSet::new(n);
        let mut kept = 0;
        for (s, &(v, _)) in states.iter().enumerate() {
            if bwd.contains(s) {
                kept += 1;
                may.insert(v as usize);
            }
        }
        // Functions invoked completely on kept paths: a kept call-site
        // state with a kept same-level successor through a summary edge.
        let mut invoked = vec![false; g.functions().len()];
        let mut inv_work: Vec<FuncId> = Vec::new();
        let mark = |t: FuncId, invoked: &mut Vec<bool>, inv_work: &mut Vec<FuncId>| {
            if !invoked[t.index()] {
                invoked[t.index()] = true;
                inv_work.push(t);
            }
        };
        for (s, &(v, j)) in states.iter().enumerate() {
            if !bwd.contains(s) {
                continue;
            }
            let vn = NodeId::new(v as usize);
            if g.kind(vn) != crate::icfg::NodeKind::CallSite {
                continue;
            }
            let kept_at = |w: NodeId, i: u32| {
                ids.get(&(w.as_u32(), i))
                    .is_some_and(|&t| bwd.contains(t as usize) && fg.succs(s as u32).contains(&t))
            };
            let returns = g.return_sites(vn).any(|r| kept_at(r, j));
            let jumps = sl.escape_points.contains(v as usize)
                && sl
                    .all_jump_targets
                    .iter()
                    .any(|&w| (0..=j).any(|i| kept_at(w, i)));
            for t in sl.finishing_callees(g, vn) {
                if (returns && sl.completes[t.index()]) || (jumps && sl.escapes[t.index()]) {
                    mark(t, &mut invoked, &mut inv_work);
                }
            }
        }
        // Closed over their inner calls.
        let mut func_nodes: Vec<Vec<NodeId>> = vec![Vec::new(); g.functions().len()];
        for v in g.nodes() {
            if sl.inside(v.index()) {
                func_nodes[g.func_of(v).index()].push(v);
            }
        }
        while let Some(t) = inv_work.pop() {
            for &v in &func_nodes[t.index()] {
                may.insert(v.index());
                if g.kind(v) == crate::icfg::NodeKind::CallSite {
                    for c in sl.finishing_callees(g, v).collect::<Vec<_>>() {
                        mark(c, &mut invoked, &mut inv_work);
                    }
                }
            }
        }
        // Must: dominators of the sink in the kept frame graph.
        let idom = dominators(&fg, &rev, root, |s| bwd.contains(s as usize));
        let mut must = BitSet::new(n);
        let mut sure: Vec<FuncId> = Vec::new();
        let mut s = idom[sink as usize];
        while s != NONE {
            let (v, _) = states[s as usize];
            must.insert(v as usize);
            // A crash state may end the path there, calling nothing.
            let ends_here = fg.succs(s).contains(&sink);
            if let Some(t) = surely_invoked(g, sl, NodeId::new(v as usize), |w| {
                // Every kept way out of the state is a summary edge.
                fg.succs(s).iter().any(|&x| {
                    (x as usize) < ns
                        && bwd.contains(x as usize)
                        && states[x as usize].0 == w.as_u32()
                })
            }) {
                if !ends_here {
                    sure.push(t);
                }
            }
            if s == root {
                break;
            }
            s = idom[s as usize];
        }
        // Surely invoked functions: the dominators of their exit (or
        // escape) in their same-level graph, closed the same way.
        let mut done = vec![false; g.functions().len()];
        while let Some(t) = sure.pop() {
            if std::mem::replace(&mut done[t.index()], true) {
                continue;
            }
            for (v, inner) in must_in(g, sl, t, &func_nodes[t.index()]) {
                must.insert(v.index());
                if let Some(c) = inner {
                    sure.push(c);
                }
            }
        }
        Ok(FrameGraph {
            may,
            must,
            states: ns,
            kept,
            invoked: invoked.iter().filter(|&&b| b).count(),
        })
    }
}

/// The one callee surely invoked at call site `s` that lies on every path:
/// `s` cannot fall through (no flow edge out of it is taken: `taken`
/// says whether a successor node is used) and exactly one callee may
/// complete or escape. `None` otherwise.
fn surely_invoked(
    g: &Icfg,
    sl: &SameLevel,
    s: NodeId,
    taken: impl Fn(NodeId) -> bool,
) -> Option<FuncId> {
    if g.kind(s) != crate::icfg::NodeKind::CallSite {
        return None;
    }
    let falls_through = g.succs(s).any(|(w, k)| k == EdgeKind::Local && taken(w));
    let pending = g.succs(s).any(|(w, k)| k == EdgeKind::Call && taken(w));
    if falls_through || pending {
        return None;
    }
    let mut callees: Vec<FuncId> = sl.finishing_callees(g, s).collect();
    callees.sort_unstable();
    callees.dedup();
    match callees.as_slice() {
        [t] => Some(*t),
        _ => None,
    }
}

/// The nodes on every invocation of `t` (from its entry to its exit or an
/// escape point), each with the one callee it surely invokes, if any.
fn must_in(g: &Icfg, sl: &SameLevel, t: FuncId, nodes: &[NodeId]) -> Vec<(NodeId, Option<FuncId>)> {
    let Some(entry) = g.function(t).entry else {
        return Vec::new();
    };
    if nodes.is_empty() || !sl.inside(entry.index()) {
        return Vec::new();
    }
    let local: HashMap<NodeId, u32> = nodes
        .iter()
        .enumerate()
        .map(|(i, &v)| (v, i as u32))
        .collect();
    let sink = nodes.len() as u32;
    let mut edges: Vec<(u32, u32)> = Vec::new();
    for (i, &v) in nodes.iter().enumerate() {
        for &w in sl.edges.succs(v.as_u32()) {
            if let Some(&j) = local.get(&NodeId::new(w as usize)) {
                edges.push((i as u32, j));
            }
        }
        if g.function(t).exit == Some(v) || sl.escape_points.contains(v.index()) {
            edges.push((i as u32, sink));
        }
    }
    let fg = Csr::from_edges(nodes.len() + 1, &edges);
    let rev = fg.reversed();
    let root = local[&entry];
    let idom = dominators(&fg, &rev, root, |_| true);
    let mut out = Vec::new();
    let mut s = idom[sink as usize];
    while s != NONE {
        let v = nodes[s as usize];
        let inner = surely_invoked(g, sl, v, |w| {
            local.get(&w).is_some_and(|&j| fg.succs(s).contains(&j))
        });
        // An escape point ends the invocation there: its callee may be
        // the one that escapes, which still runs.
        out.push((v, inner));
        if s == root {
            break;
        }
        s = idom[s as usize];
    }
    out
}

/// Whether the pending calls `pending` (outermost first) are the report's
/// frames, with unreported ones only at gaps (the semantics of
/// [`FrameGraph`]).
pub(crate) fn stack_matches(g: &Icfg, report: &Report, pending: &[(NodeId, NodeId)]) -> bool {
    let k = report.stack.len();
    let segs = segments(g, report);
    let gap = |j: usize| segs[j].gap;
    // ok[p]: frames 0..j matched to pending[..p] (dynamic programme over j).
    let mut ok = vec![false; pending.len() + 1];
    ok[0] = true;
    for j in 0..=k {
        // Unreported frames at a gap.
        if gap(j) {
            for p in 1..=pending.len() {
                ok[p] |= ok[p - 1];
            }
        }
        if j == k {
            break;
        }
        let mut next = vec![false; pending.len() + 1];
        for p in 0..pending.len() {
            let (s, t) = pending[p];
            if ok[p] && report.stack[j].call.contains(s) && report.stack[j].entry.contains(t) {
                next[p + 1] = true;
            }
        }
        ok = next;
    }
    ok[pending.len()]
}
