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
//!    Harvey, Kennedy (2001), see `crate::algo::dominators`.
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

use crate::algo::dominator_tree;
use crate::graph::{BitSet, Csr};
use crate::icfg::{EdgeKind, Icfg};
use crate::ids::{FuncId, NodeId};
use crate::report::Report;
use std::collections::HashMap;

/// Estimated bytes per frame-graph state: its id map entry, the state,
/// its edges forward and backward, and the per-state bit sets.
pub const BYTES_PER_STATE: usize = 96;

/// The node of a *landing hub* state `(HUB, i)` of the frame graph: a
/// non-local jump out of segment `j` (`longjmp` from a callee that may
/// escape) may land at any jump target in any earlier segment whose
/// activation may be the target's function (or in segment `j` itself at
/// a gap). Rather than an edge to each (target, segment) pair, which on
/// a deep stack made hundreds of edges per escaping call, the jump is an
/// edge to hub `i` (the latest segment it may land in), hub `i` has an
/// edge to each target landing in segment `i` and to hub `i - 1`: the
/// same real states reachable from each other, so the same labels.
const HUB: u32 = u32::MAX;

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
        let ok = |v: NodeId| !removed.contains(v.index());
        let all_jump_targets = jump_targets(g, &ok);
        let mut jump_targets: HashMap<FuncId, Vec<NodeId>> = HashMap::new();
        for &w in &all_jump_targets {
            jump_targets.entry(g.func_of(w)).or_default().push(w);
        }
        let done = Completion::solve(g, &ok, &jump_targets);
        let (edges, escape_points) =
            same_level_edges(g, &ok, &done.completes, &done.escapes, &jump_targets);
        let bwd = to_exits(g, &ok, &edges, &escape_points);
        SameLevel {
            completes: done.completes,
            escapes: done.escapes,
            edges,
            fwd: done.fwd,
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

/// Every target of a non-local jump (a flow edge between functions, or a
/// return site in another function than its call site) that is `ok`.
fn jump_targets(g: &Icfg, ok: &impl Fn(NodeId) -> bool) -> Vec<NodeId> {
    let mut all = Vec::new();
    for v in g.nodes() {
        for (w, k) in g.succs(v) {
            if is_jump(g, v, w, k) && ok(w) {
                all.push(w);
            }
        }
        for r in g.return_sites(v) {
            if g.func_of(r) != g.func_of(v) && ok(r) {
                all.push(r);
            }
        }
    }
    all.sort_unstable();
    all.dedup();
    all
}

/// Pass 1 of [`SameLevel::compute`]: the least fixpoint of "some
/// invocation completes" and "some invocation escapes", with the nodes
/// reached from their function's entry.
struct Completion<'a, F> {
    g: &'a Icfg,
    ok: &'a F,
    jump_targets: &'a HashMap<FuncId, Vec<NodeId>>,
    completes: Vec<bool>,
    escapes: Vec<bool>,
    fwd: BitSet,
    work: Vec<NodeId>,
    /// Reached call sites by callee function.
    callers: Vec<Vec<NodeId>>,
    /// Functions whose escape was just found, to propagate to callers.
    escaped_now: Vec<FuncId>,
}

impl<'a, F: Fn(NodeId) -> bool> Completion<'a, F> {
    fn solve(
        g: &'a Icfg,
        ok: &'a F,
        jump_targets: &'a HashMap<FuncId, Vec<NodeId>>,
    ) -> Completion<'a, F> {
        let nf = g.functions().len();
        let mut c = Completion {
            g,
            ok,
            jump_targets,
            completes: vec![false; nf],
            escapes: vec![false; nf],
            fwd: BitSet::new(g.num_nodes()),
            work: Vec::new(),
            callers: vec![Vec::new(); nf],
            escaped_now: Vec::new(),
        };
        for f in g.functions() {
            if let Some(e) = f.entry {
                c.add(e);
            }
        }
        loop {
            while let Some(v) = c.work.pop() {
                c.visit(v);
            }
            let Some(f) = c.escaped_now.pop() else { break };
            for s in c.callers[f.index()].clone() {
                let h = g.func_of(s);
                c.land_in(h);
                c.escape(h);
            }
        }
        c
    }

    fn add(&mut self, v: NodeId) {
        if (self.ok)(v) && self.fwd.insert(v.index()) {
            self.work.push(v);
        }
    }

    fn escape(&mut self, f: FuncId) {
        if !self.escapes[f.index()] {
            self.escapes[f.index()] = true;
            self.escaped_now.push(f);
        }
    }

    /// A callee of `f` escapes: its jump may land at `f`'s targets.
    fn land_in(&mut self, f: FuncId) {
        let jt = self.jump_targets;
        for &r in jt.get(&f).map_or(&[][..], |x| x) {
            self.add(r);
        }
    }

    /// A call at `s` (in `f`) returned: to its return sites in `f`, or
    /// (a return site elsewhere) as a jump out of `f`.
    fn returned(&mut self, s: NodeId, f: FuncId) {
        let g = self.g;
        for r in g.return_sites(s) {
            if g.func_of(r) == f {
                self.add(r);
            } else if (self.ok)(r) {
                self.escape(f);
            }
        }
    }

    fn visit(&mut self, v: NodeId) {
        let g = self.g;
        let f = g.func_of(v);
        for (w, k) in g.succs(v) {
            match k {
                EdgeKind::Local if g.func_of(w) == f => self.add(w),
                EdgeKind::Local => {
                    if (self.ok)(w) {
                        self.escape(f);
                    }
                }
                EdgeKind::Call => {
                    let t = g.func_of(w);
                    self.callers[t.index()].push(v);
                    if self.completes[t.index()] {
                        self.returned(v, f);
                    }
                    if self.escapes[t.index()] {
                        self.land_in(f);
                        self.escape(f);
                    }
                }
                EdgeKind::Return => {}
            }
        }
        if g.function(f).exit == Some(v) && !self.completes[f.index()] {
            self.completes[f.index()] = true;
            for s in self.callers[f.index()].clone() {
                self.returned(s, g.func_of(s));
            }
        }
    }
}

/// Pass 2 of [`SameLevel::compute`]: flow inside functions and summary
/// edges of calls (to return sites, and to the function's jump targets),
/// and the escape points.
fn same_level_edges(
    g: &Icfg,
    ok: &impl Fn(NodeId) -> bool,
    completes: &[bool],
    escapes: &[bool],
    jump_targets: &HashMap<FuncId, Vec<NodeId>>,
) -> (Csr, BitSet) {
    let n = g.num_nodes();
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
    (Csr::from_edges(n, &edges), escape_points)
}

/// The nodes that reach their function's exit or an escape point by
/// same-level edges.
fn to_exits(g: &Icfg, ok: &impl Fn(NodeId) -> bool, edges: &Csr, escape_points: &BitSet) -> BitSet {
    let rev = edges.reversed();
    let mut bwd = BitSet::new(g.num_nodes());
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
    bwd
}

/// Segment `j`'s description.
#[derive(Clone, Debug)]
pub(crate) struct Segment {
    /// Unreported pending calls may be made in it.
    pub gap: bool,
    /// At a gap left only by sibling calls ([`Report::sibling_gaps`]):
    /// the functions from which a chain of tail-marked calls may reach
    /// the segment's end (sorted); unreported calls are pending only at
    /// tail-marked call sites, into these functions. `None`: any call.
    pub tail_reach: Option<Vec<FuncId>>,
    /// Functions its activation may be in (empty at a gap: any).
    pub home: Vec<FuncId>,
}

impl Segment {
    /// Whether an unreported call of `callee` may be left pending at call
    /// site `site` of this segment.
    pub fn pending_at(&self, g: &Icfg, site: NodeId, callee: FuncId) -> bool {
        self.gap
            && self
                .tail_reach
                .as_ref()
                .is_none_or(|r| g.is_tail_call(site) && r.binary_search(&callee).is_ok())
    }
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
    let tails = crate::locate::TailChains::new(g);
    for j in 0..=k {
        if j == 0 {
            segs.push(Segment {
                gap: true,
                tail_reach: None,
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
            tail_reach: (gap && chained && report.sibling_gaps.contains(&j)).then(|| {
                let mut f: Vec<FuncId> = ends.iter().map(|&e| g.func_of(e)).collect();
                f.extend(tails.starts(&f.clone()));
                f.sort_unstable();
                f.dedup();
                f
            }),
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
        limits: &super::limits::CsLimits,
    ) -> Result<FrameGraph, CsFail> {
        let mut x = Explore::new(g, report, removed, sl, limits);
        let start = g.start();
        if removed.contains(start.index()) {
            return Err(CsFail::Infeasible);
        }
        let root = x.intern(start, 0)?;
        x.run()?;
        let t = Trimmed::new(&x)?;
        if !t.bwd.contains(root as usize) {
            return Err(CsFail::Infeasible);
        }
        // Every explored state is forward reachable; kept = backward too.
        let mut may = BitSet::new(g.num_nodes());
        let mut kept = 0;
        for (s, &(v, _)) in x.states.iter().enumerate() {
            if t.bwd.contains(s) && v != HUB {
                kept += 1;
                may.insert(v as usize);
            }
        }
        let mut func_nodes: Vec<Vec<NodeId>> = vec![Vec::new(); g.functions().len()];
        for v in g.nodes() {
            if sl.inside(v.index()) {
                func_nodes[g.func_of(v).index()].push(v);
            }
        }
        let invoked = x.invoked(&t, &func_nodes, &mut may);
        let must = x.must(&t, root, &func_nodes);
        Ok(FrameGraph {
            may,
            must,
            states: t.ns,
            kept,
            invoked,
        })
    }
}

/// The exploration of [`FrameGraph::compute`]: states (node, segment)
/// forward from the start, with their edges.
struct Explore<'a> {
    g: &'a Icfg,
    report: &'a Report,
    removed: &'a BitSet,
    sl: &'a SameLevel,
    limits: &'a super::limits::CsLimits,
    segs: Vec<Segment>,
    max_states: usize,
    started: std::time::Instant,
    ids: crate::fxhash::FxHashMap<(u32, u32), u32>,
    /// (node, segment).
    states: Vec<(u32, u32)>,
    edges: Vec<(u32, u32)>,
    work: Vec<u32>,
    /// See [`Explore::ok_targets`].
    ok_targets: Option<Vec<NodeId>>,
}

impl<'a> Explore<'a> {
    fn new(
        g: &'a Icfg,
        report: &'a Report,
        removed: &'a BitSet,
        sl: &'a SameLevel,
        limits: &'a super::limits::CsLimits,
    ) -> Explore<'a> {
        Explore {
            g,
            report,
            removed,
            sl,
            limits,
            segs: segments(g, report),
            max_states: limits
                .max_states
                .min(limits.max_memory / BYTES_PER_STATE)
                .max(1),
            started: std::time::Instant::now(),
            ids: Default::default(),
            states: Vec::new(),
            edges: Vec::new(),
            work: Vec::new(),
            ok_targets: None,
        }
    }

    fn ok(&self, v: NodeId) -> bool {
        !self.removed.contains(v.index())
    }

    /// The id of state (v, j), made and queued when new, within the
    /// limits.
    fn intern(&mut self, v: NodeId, j: usize) -> Result<u32, CsFail> {
        self.intern_key((v.as_u32(), j as u32))
    }

    /// The landing hub of segment `i` (see [`HUB`]), made and queued when
    /// new.
    fn hub(&mut self, i: usize) -> Result<u32, CsFail> {
        self.intern_key((HUB, i as u32))
    }

    fn intern_key(&mut self, key: (u32, u32)) -> Result<u32, CsFail> {
        if let Some(&id) = self.ids.get(&key) {
            return Ok(id);
        }
        let limits = self.limits;
        if self.states.len() >= self.max_states {
            return Err(CsFail::TooLarge(if self.max_states < limits.max_states {
                format!("the memory budget ({} MiB)", limits.max_memory >> 20)
            } else {
                format!("{} states", self.max_states)
            }));
        }
        if self.states.len() % 4096 == 4095 {
            self.check()?;
        }
        let id = self.states.len() as u32;
        self.ids.insert(key, id);
        self.states.push(key);
        self.work.push(id);
        Ok(id)
    }

    /// An edge from state `id` to (w, j).
    fn step(&mut self, id: u32, w: NodeId, j: usize) -> Result<(), CsFail> {
        let t = self.intern(w, j)?;
        self.edges.push((id, t));
        // Edges grow faster than states (a deep stack's non-local jumps
        // land in every earlier segment): they count too.
        if self.edges.len().is_multiple_of(4096) {
            self.check()?;
        }
        Ok(())
    }

    /// The limits that do not count states: the memory of states and
    /// edges against the budget, the process's memory (see
    /// [`crate::memory`]), the time.
    fn check(&self) -> Result<(), CsFail> {
        let limits = self.limits;
        let bytes = self.states.len() * BYTES_PER_STATE
            + self.edges.len() * std::mem::size_of::<(u32, u32)>();
        if bytes > limits.max_memory {
            return Err(CsFail::TooLarge(format!(
                "the memory budget ({} MiB)",
                limits.max_memory >> 20
            )));
        }
        if let Some(why) = crate::budget::stop() {
            return Err(CsFail::TooLarge(why));
        }
        if limits.timeout.is_some_and(|t| self.started.elapsed() > t) {
            return Err(CsFail::TooLarge(format!(
                "the time limit ({:.1} s)",
                limits.timeout.map_or(0.0, |t| t.as_secs_f64())
            )));
        }
        Ok(())
    }

    fn run(&mut self) -> Result<(), CsFail> {
        let (g, sl) = (self.g, self.sl);
        let k = self.report.stack.len();
        while let Some(id) = self.work.pop() {
            let (v, j) = self.states[id as usize];
            if v == HUB {
                self.land(id, j as usize)?;
                continue;
            }
            let (vn, j) = (NodeId::new(v as usize), j as usize);
            // Same-level edges (flow and summaries).
            for &w in sl.edges.succs(v) {
                self.step(id, NodeId::new(w as usize), j)?;
            }
            // Calls: unreported pending ones at a gap; frame j's into j + 1.
            for (w, kind) in g.succs(vn) {
                if kind != EdgeKind::Call || !self.ok(w) {
                    continue;
                }
                if self.segs[j].pending_at(g, vn, g.func_of(w)) {
                    self.step(id, w, j)?;
                }
                let frame = self.report.stack.get(j);
                if j < k && frame.is_some_and(|f| f.call.contains(vn) && f.entry.contains(w)) {
                    self.step(id, w, j + 1)?;
                }
            }
            if sl.escape_points.contains(v as usize) {
                self.jumps(id, vn, j)?;
            }
        }
        Ok(())
    }

    /// Non-local jumps out of the activation of state `id` (at `vn`, in
    /// segment `j`), directly or from a callee that escapes: they pop
    /// frames, landing in an earlier segment (or this one at a gap: an
    /// unreported frame) whose activation may be the target's function.
    fn jumps(&mut self, id: u32, vn: NodeId, j: usize) -> Result<(), CsFail> {
        let (g, sl) = (self.g, self.sl);
        let mut direct: Vec<NodeId> = g
            .succs(vn)
            .filter(|&(w, kd)| is_jump(g, vn, w, kd) && self.ok(w))
            .map(|(w, _)| w)
            .chain(
                g.return_sites(vn)
                    .filter(|&r| g.func_of(r) != g.func_of(vn) && self.ok(r)),
            )
            .collect();
        direct.sort_unstable();
        direct.dedup();
        let via_callee = sl.finishing_callees(g, vn).any(|t| sl.escapes[t.index()]);
        // A jump to every target of another function (a `longjmp` the
        // front-end sends to every `setjmp`) lands through the hubs: one
        // edge instead of one per target and earlier segment. The hubs
        // also land at the targets in its own function (in an earlier
        // segment: an outer activation's `setjmp`), which is sound.
        let own = g.func_of(vn);
        let to_every = !direct.is_empty() && {
            let all = self.ok_targets();
            direct.iter().all(|w| all.binary_search(w).is_ok())
                && all
                    .iter()
                    .all(|w| g.func_of(*w) == own || direct.binary_search(w).is_ok())
        };
        if via_callee || to_every {
            // Every target, landing in this segment at a gap, else in an
            // earlier one: one edge to the hub of the latest segment it
            // may land in (the hubs chain down to segment 0).
            let latest = if self.segs[j].gap {
                Some(j)
            } else {
                j.checked_sub(1)
            };
            if let Some(i) = latest {
                let h = self.hub(i)?;
                self.edges.push((id, h));
            }
            return Ok(());
        }
        for &w in &direct {
            for i in 0..=j {
                let seg = &self.segs[i];
                let lands = seg.gap || seg.home.contains(&g.func_of(w));
                if (i < j || self.segs[j].gap) && lands {
                    self.step(id, w, i)?;
                }
            }
        }
        Ok(())
    }

    /// The jump targets a hub's edges may go to ([`SameLevel::all_jump_targets`]
    /// that are not removed), sorted.
    fn ok_targets(&mut self) -> &[NodeId] {
        if self.ok_targets.is_none() {
            let v: Vec<NodeId> = self
                .sl
                .all_jump_targets
                .iter()
                .copied()
                .filter(|&w| self.ok(w))
                .collect();
            self.ok_targets = Some(v);
        }
        self.ok_targets.as_deref().unwrap_or_default()
    }

    /// The edges of hub `id` of segment `i`: to every jump target that may
    /// land in segment `i`, and to the hub of segment `i - 1`.
    fn land(&mut self, id: u32, i: usize) -> Result<(), CsFail> {
        let (g, sl) = (self.g, self.sl);
        for &w in &sl.all_jump_targets {
            let seg = &self.segs[i];
            if (seg.gap || seg.home.contains(&g.func_of(w))) && self.ok(w) {
                self.step(id, w, i)?;
            }
        }
        if i > 0 {
            let h = self.hub(i - 1)?;
            self.edges.push((id, h));
        }
        Ok(())
    }

    /// Functions invoked completely (or escaping) on kept paths: a kept
    /// call-site state with a kept same-level successor through a summary
    /// edge, closed over their inner calls; their same-level nodes join
    /// `may`. Returns how many.
    fn invoked(&self, t: &Trimmed, func_nodes: &[Vec<NodeId>], may: &mut BitSet) -> usize {
        let (g, sl) = (self.g, self.sl);
        let mut invoked = vec![false; g.functions().len()];
        let mut work: Vec<FuncId> = Vec::new();
        let mut mark = |f: FuncId, work: &mut Vec<FuncId>| {
            if !std::mem::replace(&mut invoked[f.index()], true) {
                work.push(f);
            }
        };
        for (s, &(v, j)) in self.states.iter().enumerate() {
            if v == HUB {
                continue;
            }
            let vn = NodeId::new(v as usize);
            if !t.bwd.contains(s) || g.kind(vn) != crate::icfg::NodeKind::CallSite {
                continue;
            }
            let kept_at = |w: NodeId, i: u32| {
                self.ids.get(&(w.as_u32(), i)).is_some_and(|&x| {
                    t.bwd.contains(x as usize) && t.fg.succs(s as u32).contains(&x)
                })
            };
            let returns = g.return_sites(vn).any(|r| kept_at(r, j));
            // A kept jump: an edge to a kept hub, or to a kept state of a
            // jump target (in any earlier segment, or this one at a gap).
            let jumps = sl.escape_points.contains(v as usize)
                && t.fg.succs(s as u32).iter().any(|&x| {
                    (x as usize) < t.ns && t.bwd.contains(x as usize) && {
                        let (w, i) = self.states[x as usize];
                        w == HUB
                            || (i <= j && sl.all_jump_targets.contains(&NodeId::new(w as usize)))
                    }
                });
            for f in sl.finishing_callees(g, vn) {
                if (returns && sl.completes[f.index()]) || (jumps && sl.escapes[f.index()]) {
                    mark(f, &mut work);
                }
            }
        }
        while let Some(f) = work.pop() {
            for &v in &func_nodes[f.index()] {
                may.insert(v.index());
                if g.kind(v) == crate::icfg::NodeKind::CallSite {
                    for c in sl.finishing_callees(g, v).collect::<Vec<_>>() {
                        mark(c, &mut work);
                    }
                }
            }
        }
        invoked.iter().filter(|&&b| b).count()
    }

    /// Must: the kept states that dominate the sink, and the exit
    /// dominators of the functions surely invoked (the only callee that
    /// can finish at a dominating call site that cannot fall through),
    /// closed the same way.
    fn must(&self, t: &Trimmed, root: u32, func_nodes: &[Vec<NodeId>]) -> BitSet {
        let (g, sl) = (self.g, self.sl);
        let idom = dominator_tree(&t.fg, &t.rev, root, |s| t.bwd.contains(s as usize));
        let mut must = BitSet::new(g.num_nodes());
        let mut sure: Vec<FuncId> = Vec::new();
        for s in idom.above(t.sink, root) {
            let (v, _) = self.states[s as usize];
            if v == HUB {
                continue;
            }
            must.insert(v as usize);
            // A crash state may end the path there, calling nothing.
            let ends_here = t.fg.succs(s).contains(&t.sink);
            let only = surely_invoked(g, sl, NodeId::new(v as usize), |w| {
                // Every kept way out of the state is a summary edge.
                t.fg.succs(s).iter().any(|&x| {
                    (x as usize) < t.ns
                        && t.bwd.contains(x as usize)
                        && self.states[x as usize].0 == w.as_u32()
                })
            });
            if let (Some(f), false) = (only, ends_here) {
                sure.push(f);
            }
        }
        let mut done = vec![false; g.functions().len()];
        while let Some(f) = sure.pop() {
            if std::mem::replace(&mut done[f.index()], true) {
                continue;
            }
            for (v, inner) in must_in(g, sl, f, &func_nodes[f.index()]) {
                must.insert(v.index());
                if let Some(c) = inner {
                    sure.push(c);
                }
            }
        }
        must
    }
}

/// The explored frame graph with a virtual sink after the accepting
/// states (the crash nodes in the last segment), and the states that
/// reach it.
struct Trimmed {
    /// Explored states (the sink is state `ns`).
    ns: usize,
    sink: u32,
    fg: Csr,
    rev: Csr,
    bwd: BitSet,
}

impl Trimmed {
    fn new(x: &Explore<'_>) -> Result<Trimmed, CsFail> {
        let k = x.report.stack.len();
        let ns = x.states.len();
        let accept: Vec<u32> = (0..ns as u32)
            .filter(|&s| {
                let (v, j) = x.states[s as usize];
                v != HUB
                    && j as usize == k
                    && x.report
                        .crash
                        .as_ref()
                        .is_none_or(|c| c.contains(NodeId::new(v as usize)))
            })
            .collect();
        if accept.is_empty() {
            return Err(CsFail::Infeasible);
        }
        let sink = ns as u32;
        let mut edges = x.edges.clone();
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
        Ok(Trimmed {
            ns,
            sink,
            fg,
            rev,
            bwd,
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
    let idom = dominator_tree(&fg, &rev, root, |_| true);
    let mut out = Vec::new();
    for s in idom.above(sink, root) {
        let v = nodes[s as usize];
        let inner = surely_invoked(g, sl, v, |w| {
            local.get(&w).is_some_and(|&j| fg.succs(s).contains(&j))
        });
        // An escape point ends the invocation there: its callee may be
        // the one that escapes, which still runs.
        out.push((v, inner));
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
