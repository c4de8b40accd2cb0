//! The search: the exploration of the product of the graph, the stack
//! and the constraint automata (see the module docs of `product`).

use super::*;

/// How a state of kind `S` ([`TopId`] or [`PathId`]) was first reached.
#[derive(Copy, Clone, Debug)]
pub(in crate::cs) enum Pred<S> {
    /// An initial state (the start, or a callee's entry).
    Root,
    /// One flow or call step from this state (same kind of state).
    Step(S),
    /// A completed call: from the call site's state `call` (same kind),
    /// through the callee body that is path edge `exit`.
    Summary { call: S, exit: PathId },
    /// A non-local jump out of a call: from the call site's state `call`
    /// (same kind), through the calls that escape record `esc` left.
    Landing { call: S, esc: EscId },
}

impl<S> Pred<S> {
    /// The same step, with its states of this kind renamed by `f`.
    pub(super) fn map<T>(self, f: impl Fn(S) -> T) -> Pred<T> {
        match self {
            Pred::Root => Pred::Root,
            Pred::Step(p) => Pred::Step(f(p)),
            Pred::Summary { call, exit } => Pred::Summary {
                call: f(call),
                exit,
            },
            Pred::Landing { call, esc } => Pred::Landing { call: f(call), esc },
        }
    }
}

/// What an escape record's path is made of, after its call site.
#[derive(Copy, Clone, Debug)]
pub(in crate::cs) enum Body {
    /// A path edge of the callee, up to the jump (or exit).
    Path(PathId),
    /// The escape record of a deeper callee.
    Esc(EscId),
}

/// A non-local jump that leaves an invocation (a context): to `node`
/// with `tuple`. Its path from the context's entry is path edge `call`
/// (up to a call site) followed by `inner`, or `inner` alone.
#[derive(Copy, Clone, Debug)]
pub(super) struct Esc {
    pub(super) node: NodeId,
    pub(super) tuple: TupleId,
    pub(super) call: Option<PathId>,
    pub(super) inner: Body,
}

/// A state waiting on a context's exits: a top-level state or a path
/// edge, at a call site.
#[derive(Copy, Clone, Debug)]
pub(super) enum Waiter {
    Top(TopId),
    Path(PathId),
}

/// The states of one kind, keyed (A, B, tuple): the top-level states
/// (node, segment, tuple) and the path edges (context, node, tuple).
pub(super) struct States<I, A, B> {
    pub(super) key: IdVec<I, (A, B, TupleId)>,
    pub(super) pred: IdVec<I, Pred<I>>,
    pub(super) ids: HashMap<(A, B, TupleId), I>,
    /// With tracked bits: the states not subsumed, per (A, B, base
    /// tuple), and those subsumed after they were added (not expanded:
    /// the state that subsumes them is).
    pub(super) live: HashMap<(A, B, TupleId), Group<I>>,
    pub(super) dead: Vec<bool>,
}

impl<I: EntityId, A, B> States<I, A, B> {
    pub(super) fn new() -> Self {
        States {
            key: IdVec::new(),
            pred: IdVec::new(),
            ids: HashMap::default(),
            live: HashMap::default(),
            dead: Vec::new(),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.key.len()
    }

    /// Room for `n` states without growing the tables (a bulk
    /// exploration, which keeps every state, sized from the graph).
    pub(super) fn reserve(&mut self, n: usize)
    where
        A: Eq + std::hash::Hash,
        B: Eq + std::hash::Hash,
        I: Eq + std::hash::Hash,
    {
        self.key.reserve(n);
        self.pred.reserve(n);
        self.ids.reserve(n);
    }
}

impl<I: EntityId, A, B> std::ops::Index<I> for States<I, A, B> {
    type Output = (A, B, TupleId);
    fn index(&self, id: I) -> &Self::Output {
        &self.key[id]
    }
}

/// A kind of state ([`Tops`] or [`Paths`]): its table, its log of
/// incoming steps and its work item, for [`Search::add`].
pub(super) trait Kind {
    type Id: EntityId;
    type A: Copy + Eq + std::hash::Hash;
    type B: Copy + Eq + std::hash::Hash;
    fn pick<'s>(
        top: &'s mut States<TopId, NodeId, u32>,
        path: &'s mut States<PathId, CtxId, NodeId>,
    ) -> &'s mut States<Self::Id, Self::A, Self::B>;
    fn log(log: &mut Log) -> &mut Vec<(Self::Id, Pred<Self::Id>)>;
    fn waiter(id: Self::Id) -> Waiter;
}

/// Top-level states.
pub(super) enum Tops {}
/// Path edges.
pub(super) enum Paths {}

impl Kind for Tops {
    type Id = TopId;
    type A = NodeId;
    type B = u32;
    fn pick<'s>(
        top: &'s mut States<TopId, NodeId, u32>,
        _: &'s mut States<PathId, CtxId, NodeId>,
    ) -> &'s mut States<TopId, NodeId, u32> {
        top
    }
    fn log(log: &mut Log) -> &mut Vec<(TopId, Pred<TopId>)> {
        &mut log.top_in
    }
    fn waiter(id: TopId) -> Waiter {
        Waiter::Top(id)
    }
}

impl Kind for Paths {
    type Id = PathId;
    type A = CtxId;
    type B = NodeId;
    fn pick<'s>(
        _: &'s mut States<TopId, NodeId, u32>,
        path: &'s mut States<PathId, CtxId, NodeId>,
    ) -> &'s mut States<PathId, CtxId, NodeId> {
        path
    }
    fn log(log: &mut Log) -> &mut Vec<(PathId, Pred<PathId>)> {
        &mut log.path_in
    }
    fn waiter(id: PathId) -> Waiter {
        Waiter::Path(id)
    }
}

pub(super) struct Search<'a> {
    pub(super) g: &'a Icfg,
    pub(super) autos: Vec<&'a Dfa>,
    pub(super) touch: Touch,
    /// Observations tracked as bits (see [`Seen`]).
    pub(super) seen: Seen,
    pub(super) removed: BitSet,
    pub(super) tuples: IdVec<TupleId, Box<[u32]>>,
    pub(super) tuple_ids: HashMap<Box<[u32]>, TupleId>,
    /// Per tuple, the tuple with no bits set (its automaton states).
    pub(super) base: IdVec<TupleId, TupleId>,
    /// Top-level states: (node, segment, tuple).
    pub(super) top: States<TopId, NodeId, u32>,
    /// (callee entry, tuple on entry).
    pub(super) ctx: IdVec<CtxId, (NodeId, TupleId)>,
    pub(super) ctx_ids: HashMap<(NodeId, TupleId), CtxId>,
    /// Per context: (exit tuple, the path edge that reached the exit).
    pub(super) exits: IdVec<CtxId, Vec<(TupleId, PathId)>>,
    pub(super) waiters: IdVec<CtxId, Vec<Waiter>>,
    /// Path edges: (context, node, tuple).
    pub(super) path: States<PathId, CtxId, NodeId>,
    /// States not added or not expanded because another subsumes them.
    pub(super) subsumed: usize,
    /// The stack's segments (where a jump may land, see [`Search::jump`]).
    pub(super) segs: Vec<crate::cs::frames::Segment>,
    /// Escape records, per context the ids of its own, and their keys
    /// (context, node, tuple).
    pub(super) esc: IdVec<EscId, Esc>,
    pub(super) escapes: IdVec<CtxId, Vec<EscId>>,
    pub(super) esc_ids: HashMap<(CtxId, NodeId, TupleId), EscId>,
    pub(super) work: Vec<Waiter>,
    pub(super) max_states: usize,
    pub(super) deadline: Option<Instant>,
    pub(super) limits: &'a CsLimits,
    /// Bulk mode (see [`crate::cs::bulk`]): every way each state is reached,
    /// the accepting top-level states, no subsumption, no early stop.
    pub(super) log: Option<Log>,
    /// Per function, the automata whose states its contexts keep (bit
    /// `i`: automaton `i`), when they leave out the others (see the
    /// module docs, "Shared invocations").
    pub(super) kept: Option<Vec<u64>>,
    /// Per automaton, with [`Search::kept`], its transformations when its
    /// holes are kept as functions of the entry state ([`Sym`]); `None`
    /// for a reset automaton (a hole is the entry state until a node
    /// resets it) and for those the contexts keep.
    pub(super) sym: Vec<Option<Sym>>,
    /// Per gap segment, the functions an unreported call may enter: those
    /// that can reach the segment's end by calls (see the module docs,
    /// "Shared invocations"); `None`: any.
    pub(super) ends: Option<Vec<Option<BitSet>>>,
}

/// Every derivation step of a bulk exploration, for the backward passes
/// of [`crate::cs::bulk`]: each state's incoming steps (its first one is also
/// its `Pred`), every production of every escape record, and the
/// accepting top-level states.
#[derive(Default)]
pub(in crate::cs) struct Log {
    pub top_in: Vec<(TopId, Pred<TopId>)>,
    pub path_in: Vec<(PathId, Pred<PathId>)>,
    pub esc_in: Vec<(EscId, Option<PathId>, Body)>,
    pub accepting: Vec<TopId>,
}

/// One search with these automata: `None` if no valid path is accepted,
/// else the path found (`None` inside if too long to expand).
#[allow(clippy::too_many_arguments)]
pub(super) fn search(
    g: &Icfg,
    report: &Report,
    autos: Vec<&Dfa>,
    seen: Seen,
    removed: BitSet,
    targets: Option<&[NodeId]>,
    limits: &CsLimits,
    deadline: Option<Instant>,
    states: &mut usize,
) -> Result<Option<Option<Vec<NodeId>>>, Unsupported> {
    let segs = segments(g, report);
    let k = report.stack.len();
    let max_states = limits
        .max_states
        .saturating_sub(*states)
        .min(limits.max_memory / BYTES_PER_STATE)
        .max(1);
    let mut s = Search::new(
        g,
        autos,
        seen,
        removed,
        segs.clone(),
        limits,
        deadline,
        max_states,
    );
    let result = s.run(report, &segs, k, targets);
    *states += s.size();
    result
}

impl<'a> Search<'a> {
    /// A search with these automata and tracked observations, over the
    /// graph without `removed`; `max_states` bounds it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        g: &'a Icfg,
        autos: Vec<&'a Dfa>,
        seen: Seen,
        removed: BitSet,
        segs: Vec<crate::cs::frames::Segment>,
        limits: &'a CsLimits,
        deadline: Option<Instant>,
        max_states: usize,
    ) -> Search<'a> {
        Search {
            g,
            touch: Touch::new(autos.iter().copied()),
            autos,
            seen,
            removed,
            tuples: IdVec::new(),
            tuple_ids: HashMap::default(),
            base: IdVec::new(),
            top: States::new(),
            ctx: IdVec::new(),
            ctx_ids: HashMap::default(),
            exits: IdVec::new(),
            waiters: IdVec::new(),
            path: States::new(),
            subsumed: 0,
            segs,
            esc: IdVec::new(),
            escapes: IdVec::new(),
            esc_ids: HashMap::default(),
            work: Vec::new(),
            max_states,
            deadline,
            limits,
            log: None,
            kept: None,
            sym: Vec::new(),
            ends: None,
        }
    }

    /// The logged exploration as a hypergraph over one id space: top-level
    /// states, then path edges, then escape records.
    pub(super) fn hyper(self) -> Hyper {
        let log = self.log.expect("a bulk exploration");
        let (nt, np, ne) = (self.top.len(), self.path.len(), self.esc.len());
        let top = |id: TopId| StateId::new(id.index());
        let path = |id: PathId| StateId::new(nt + id.index());
        let esc = |id: EscId| StateId::new(nt + np + id.index());
        let body = |b: Body| match b {
            Body::Path(p) => path(p),
            Body::Esc(e) => esc(e),
        };
        let mut node = Vec::with_capacity(nt + np + ne);
        let mut root = Vec::with_capacity(nt + np + ne);
        for i in 0..nt {
            let id = TopId::new(i);
            node.push(Some(self.top[id].0));
            root.push(matches!(self.top.pred[id], Pred::Root));
        }
        for i in 0..np {
            let id = PathId::new(i);
            node.push(Some(self.path[id].1));
            root.push(matches!(self.path.pred[id], Pred::Root));
        }
        node.resize(nt + np + ne, None);
        root.resize(nt + np + ne, false);
        let mut recs = Vec::with_capacity(log.top_in.len() + log.path_in.len() + log.esc_in.len());
        let mut step = |to: StateId, pred: Pred<StateId>| match pred {
            Pred::Root => {}
            Pred::Step(p) => recs.push((to, p, None)),
            Pred::Summary { call, exit } => recs.push((to, call, Some(path(exit)))),
            Pred::Landing { call, esc: e } => recs.push((to, call, Some(esc(e)))),
        };
        for (id, p) in log.top_in {
            step(top(id), p.map(top));
        }
        for (id, p) in log.path_in {
            step(path(id), p.map(path));
        }
        for (id, call, inner) in log.esc_in {
            recs.push((esc(id), body(inner), call.map(path)));
        }
        let mut h = Hyper::new(
            node,
            root,
            recs,
            log.accepting.into_iter().map(top).collect(),
        );
        h.tops = Some(nt);
        h.jumps = (0..ne).map(|i| self.esc[EscId::new(i)].node).collect();
        h
    }

    pub(super) fn run(
        &mut self,
        report: &Report,
        segs: &[crate::cs::frames::Segment],
        k: usize,
        targets: Option<&[NodeId]>,
    ) -> Result<Option<Option<Vec<NodeId>>>, Unsupported> {
        let s = self;
        let g = s.g;
        let start = g.start();
        let combos: Vec<Vec<u32>> =
            crate::automaton::initial_combinations(&[], s.autos.iter().copied())
                .take(s.max_states)
                .collect();
        for mut c in combos {
            c.extend(std::iter::repeat_n(0, s.seen.words));
            let t = s.tuple(c.into_boxed_slice());
            if let Some(t) = s.step(t, start) {
                s.add_top((start, 0, t), Pred::Root)?;
            }
        }
        while let Some(item) = s.work.pop() {
            if s.dead(item) {
                continue;
            }
            match item {
                Waiter::Top(id) => {
                    if let Some(w) = s.visit_top(id, report, segs, k, targets)? {
                        return Ok(Some(w));
                    }
                }
                Waiter::Path(id) => s.visit_path(id)?,
            }
        }
        Ok(None)
    }

    /// Explores on from top-level state `id`: its steps, the calls it
    /// makes and, for the call of a report frame or in a gap of `segs`,
    /// the callee's entry. It accepts past all `k` frames of `report`, at
    /// one of the `targets` (any node without them), in an accepting
    /// tuple: Some with the witness then, unless a log keeps it.
    fn visit_top(
        &mut self,
        id: TopId,
        report: &Report,
        segs: &[crate::cs::frames::Segment],
        k: usize,
        targets: Option<&[NodeId]>,
    ) -> Result<Option<Option<Vec<NodeId>>>, Unsupported> {
        let s = self;
        let g = s.g;
        let is_target = |v: NodeId| targets.is_none_or(|t| t.contains(&v));
        let (vn, j, t) = s.top[id];
        let j = j as usize;
        if j == k && is_target(vn) && s.accepting(t) {
            match &mut s.log {
                Some(log) => log.accepting.push(id),
                None => return Ok(Some(s.witness(id))),
            }
        }
        for (w, kind) in g.succs(vn) {
            match kind {
                EdgeKind::Local if g.func_of(w) != g.func_of(vn) => {
                    if let Some(t2) = s.step(t, w) {
                        s.jump(j as u32, w, t2, Pred::Step(id))?;
                    }
                }
                EdgeKind::Local => {
                    if let Some(t2) = s.step(t, w) {
                        s.add_top((w, j as u32, t2), Pred::Step(id))?;
                    }
                }
                EdgeKind::Call => {
                    s.call(Waiter::Top(id), w, t)?;
                    let frame = j < k
                        && report.stack[j].call.contains(vn)
                        && report.stack[j].entry.contains(w);
                    if segs[j].gap || frame {
                        if let Some(t2) = s.step(t, w) {
                            let reaches = |f: crate::ids::FuncId| {
                                s.ends
                                    .as_ref()
                                    .and_then(|e| e[j].as_ref())
                                    .is_none_or(|r| r.contains(f.index()))
                            };
                            if segs[j].pending_at(g, vn, g.func_of(w)) && reaches(g.func_of(w)) {
                                s.add_top((w, j as u32, t2), Pred::Step(id))?;
                            }
                            if frame {
                                s.add_top((w, j as u32 + 1, t2), Pred::Step(id))?;
                            }
                        }
                    }
                }
                EdgeKind::Return => {}
            }
        }
        Ok(None)
    }

    /// Explores on from path edge `id`: at its function's exit, resumes
    /// the states waiting on the call; then its steps, escapes and calls.
    fn visit_path(&mut self, id: PathId) -> Result<(), Unsupported> {
        let s = self;
        let g = s.g;
        let (c, vn, t) = s.path[id];
        if g.function(g.func_of(vn)).exit == Some(vn) && !s.exit_known(c, t) {
            s.exits[c].push((t, id));
            let waiters = s.waiters[c].clone();
            for wt in waiters {
                if !s.dead(wt) {
                    s.resume(wt, t, id)?;
                }
            }
        }
        for (w, kind) in g.succs(vn) {
            match kind {
                EdgeKind::Local if g.func_of(w) != g.func_of(vn) => {
                    if let Some(t2) = s.step(t, w) {
                        let e = Esc {
                            node: w,
                            tuple: t2,
                            call: None,
                            inner: Body::Path(id),
                        };
                        s.escape(c, e)?;
                    }
                }
                EdgeKind::Local => {
                    if let Some(t2) = s.step(t, w) {
                        s.add_path((c, w, t2), Pred::Step(id))?;
                    }
                }
                EdgeKind::Call => s.call(Waiter::Path(id), w, t)?,
                EdgeKind::Return => {}
            }
        }
        Ok(())
    }
}

impl<'a> Search<'a> {
    pub(super) fn size(&self) -> usize {
        let logged = self.log.as_ref().map_or(0, |l| {
            (l.top_in.len() + l.path_in.len() + l.esc_in.len()) / LOG_PER_STATE
        });
        self.top.len()
            + self.path.len()
            + self.ctx.len()
            + self.tuples.len()
            + self.esc.len()
            + logged
    }

    /// States are kept as antichains (not in bulk mode, which needs every
    /// state).
    pub(super) fn subsuming(&self) -> bool {
        self.seen.words > 0 && self.log.is_none()
    }

    pub(super) fn budget(&self) -> Result<(), Unsupported> {
        let n = self.size();
        if n >= self.max_states {
            let by_memory = self.limits.max_memory / BYTES_PER_STATE < self.limits.max_states;
            return Err(Unsupported(if by_memory {
                format!(
                    "the context-sensitive search exceeds the memory budget ({} MiB)",
                    self.limits.max_memory >> 20
                )
            } else if self.log.is_some() {
                format!(
                    "the context-sensitive exploration exceeds {} states",
                    self.max_states
                )
            } else {
                format!(
                    "the context-sensitive search exceeds {} states (all rounds)",
                    self.limits.max_states
                )
            }));
        }
        if n.is_multiple_of(1024) {
            if self.deadline.is_some_and(|d| Instant::now() > d) {
                return Err(Unsupported(format!(
                    "the context-sensitive search exceeds the time limit ({:.1} s)",
                    self.limits.timeout.map_or(0.0, |t| t.as_secs_f64())
                )));
            }
            if let Some(why) = crate::budget::stop() {
                return Err(Unsupported(format!(
                    "the context-sensitive search exceeds {why}"
                )));
            }
        }
        Ok(())
    }

    pub(super) fn tuple(&mut self, t: Box<[u32]>) -> TupleId {
        if let Some(&id) = self.tuple_ids.get(&t) {
            return id;
        }
        let id = self.tuples.next_id();
        let na = self.autos.len();
        let bare = t[na..].iter().all(|&w| w == 0);
        let base = (!bare).then(|| {
            let mut b = t.clone();
            b[na..].iter_mut().for_each(|w| *w = 0);
            b
        });
        self.tuples.push(t.clone());
        self.tuple_ids.insert(t, id);
        self.base.push(id);
        if let Some(b) = base {
            let b = self.tuple(b);
            self.base[id] = b;
        }
        id
    }

    /// Whether state `t` is subsumed by a live state of `group` (then it
    /// is not added); otherwise the live states it subsumes are marked
    /// dead and it joins the group.
    pub(super) fn subsume<S: EntityId>(
        seen: &Seen,
        bits: &[u32],
        group: &mut Group<S>,
        dead: &mut [bool],
        id: S,
    ) -> bool {
        let w = bits.len();
        let covered = if w == 1 {
            // The common case, one word of bits: a tight scan.
            let (b, up, down) = (bits[0], seen.up[0], seen.down[0]);
            let eq = !(up | down);
            group
                .bits
                .iter()
                .any(|&a| b & up & !a == 0 && a & down & !b == 0 && (a ^ b) & eq == 0)
        } else {
            group.bits.chunks_exact(w).any(|m| seen.subsumes(m, bits))
        };
        if covered {
            return true;
        }
        let mut i = 0;
        while i < group.ids.len() {
            if seen.subsumes(bits, &group.bits[i * w..(i + 1) * w]) {
                dead[group.ids[i].index()] = true;
                let last = group.ids.len() - 1;
                group.ids.swap_remove(i);
                group.bits.copy_within(last * w..(last + 1) * w, i * w);
                group.bits.truncate(last * w);
            } else {
                i += 1;
            }
        }
        group.ids.push(id);
        group.bits.extend_from_slice(bits);
        false
    }

    /// The tuple after reading `w`, or `None` if an automaton rejects.
    pub(super) fn step(&mut self, t: TupleId, w: NodeId) -> Option<TupleId> {
        if self.removed.contains(w.index()) {
            return None;
        }
        let bit = self.seen.bit.get(&w.as_u32()).copied();
        if !self.touch.moves(w.as_u32()) && bit.is_none() {
            return Some(t);
        }
        let mut out = self.tuples[t].clone();
        let na = self.autos.len();
        if self.kept.is_some() && out[..na].iter().any(|&q| is_hole(q)) {
            // A reset automaton reads its new state off the node alone; a
            // `Sym` one composes its transformation; the others are silent
            // on every node a hole meets.
            for ((q, a), sym) in out[..na].iter_mut().zip(&self.autos).zip(&self.sym) {
                if a.silent_on(w.as_u32()) {
                    continue;
                }
                if let (true, Some(sym)) = (is_hole(*q), sym) {
                    *q = sym.next(*q, a.class_of(w.as_u32()));
                    continue;
                }
                debug_assert!(*q != HOLE || a.resets(), "a hole where {w:?} moves");
                let from = if *q == HOLE { 0 } else { *q };
                *q = a.step(from, w.as_u32());
                if *q == DEAD {
                    return None;
                }
            }
        } else if !self.touch.step(&self.autos, &mut out[..na], w.as_u32()) {
            return None;
        }
        if let Some(b) = bit {
            out[na + b / 32] |= 1 << (b % 32);
            if self.seen.broken(&out[na..]) {
                return None;
            }
        }
        Some(self.tuple(out))
    }

    /// Tuple `t` with its bits replaced by those of `bits` (a tuple).
    pub(super) fn with_bits(&mut self, t: TupleId, bits: TupleId, union: bool) -> Option<TupleId> {
        let na = self.autos.len();
        let mut out = self.tuples[t].clone();
        let other = &self.tuples[bits][na..];
        for (o, &b) in out[na..].iter_mut().zip(other) {
            *o = if union { *o | b } else { b };
        }
        if self.seen.broken(&out[na..]) {
            return None;
        }
        Some(self.tuple(out))
    }

    pub(super) fn accepting(&self, t: TupleId) -> bool {
        let t = &self.tuples[t];
        let na = self.autos.len();
        t[..na]
            .iter()
            .zip(&self.autos)
            .all(|(&q, a)| q != DEAD && a.accepting[q as usize])
            && self.seen.complete(&t[na..])
    }

    pub(super) fn add_top(
        &mut self,
        key: (NodeId, u32, TupleId),
        pred: Pred<TopId>,
    ) -> Result<(), Unsupported> {
        self.add::<Tops>(key, pred)
    }

    pub(super) fn add_path(
        &mut self,
        key: (CtxId, NodeId, TupleId),
        pred: Pred<PathId>,
    ) -> Result<(), Unsupported> {
        self.add::<Paths>(key, pred)
    }

    /// Adds the state `key` of kind `K`, reached by `pred`: logged (bulk
    /// mode) even if known; dropped if a live state subsumes it (which
    /// kills the live states it subsumes); else given the next id and
    /// queued.
    pub(super) fn add<K: Kind>(
        &mut self,
        key: (K::A, K::B, TupleId),
        pred: Pred<K::Id>,
    ) -> Result<(), Unsupported> {
        let subsuming = self.subsuming();
        let na = self.autos.len();
        let Search {
            top,
            path,
            log,
            seen,
            tuples,
            base,
            subsumed,
            ..
        } = self;
        let table = K::pick(top, path);
        if let Some(&id) = table.ids.get(&key) {
            if let Some(log) = log.as_mut() {
                K::log(log).push((id, pred));
            }
            return Ok(());
        }
        let id = table.key.next_id();
        if let (Some(log), false) = (log.as_mut(), matches!(pred, Pred::Root)) {
            K::log(log).push((id, pred));
        }
        if subsuming {
            let (a, b, t) = key;
            let group = table.live.entry((a, b, base[t])).or_default();
            table.dead.push(false);
            let bits = &tuples[t][na..];
            if Search::subsume(seen, bits, group, &mut table.dead, id) {
                table.dead.pop();
                *subsumed += 1;
                return Ok(());
            }
        }
        self.budget()?;
        let table = K::pick(&mut self.top, &mut self.path);
        table.key.push(key);
        table.pred.push(pred);
        table.ids.insert(key, id);
        self.work.push(K::waiter(id));
        Ok(())
    }

    /// Whether context `c` has an exit with tuple `t`, or one that
    /// subsumes it (same automaton states).
    pub(super) fn exit_known(&self, c: CtxId, t: TupleId) -> bool {
        let na = self.autos.len();
        self.exits[c].iter().any(|&(tx, _)| {
            tx == t
                || (self.subsuming()
                    && self.base[tx] == self.base[t]
                    && self
                        .seen
                        .subsumes(&self.tuples[tx][na..], &self.tuples[t][na..]))
        })
    }

    /// Whether a state was subsumed after it was added.
    pub(super) fn dead(&self, w: Waiter) -> bool {
        match w {
            Waiter::Top(id) => self.top.dead.get(id.index()).copied().unwrap_or(false),
            Waiter::Path(id) => self.path.dead.get(id.index()).copied().unwrap_or(false),
        }
    }

    /// The context of a call into `entry` with tuple `t` (after reading
    /// the entry), created with its first path edge when new.
    pub(super) fn context(&mut self, entry: NodeId, t: TupleId) -> Result<CtxId, Unsupported> {
        let t = self.entry_bits(entry, t);
        let key = (entry, t);
        if let Some(&c) = self.ctx_ids.get(&key) {
            return Ok(c);
        }
        self.budget()?;
        let c = self.ctx.push(key);
        self.ctx_ids.insert(key, c);
        self.exits.push(Vec::new());
        self.escapes.push(Vec::new());
        self.waiters.push(Vec::new());
        self.add_path((c, entry, t), Pred::Root)?;
        Ok(c)
    }

    /// Tuple `t` (just after reading `entry`) with only `entry`'s bit: a
    /// context does not depend on what the caller saw, its callers add
    /// their bits back on return.
    pub(super) fn entry_bits(&mut self, entry: NodeId, t: TupleId) -> TupleId {
        if self.seen.words == 0 {
            return t;
        }
        let na = self.autos.len();
        let mut out = self.tuples[t].clone();
        out[na..].iter_mut().for_each(|w| *w = 0);
        if let Some(&b) = self.seen.bit.get(&entry.as_u32()) {
            out[na + b / 32] |= 1 << (b % 32);
        }
        self.tuple(out)
    }

    /// Tuple `t` at a call of `entry`, before reading it, with [`HOLE`]
    /// for the automata the callee's contexts leave out (with
    /// [`Search::kept`]).
    pub(super) fn holes(&mut self, entry: NodeId, t: TupleId) -> TupleId {
        let Some(kept) = &self.kept else { return t };
        let m = kept[self.g.func_of(entry).index()];
        let na = self.autos.len();
        let cur = &self.tuples[t];
        if (0..na).all(|i| m & (1 << i) != 0 || cur[i] == HOLE) {
            return t;
        }
        let mut out = cur.clone();
        for (i, q) in out[..na].iter_mut().enumerate() {
            if m & (1 << i) == 0 {
                *q = HOLE;
            }
        }
        self.tuple(out)
    }

    /// Tuple `t` (a callee's, on return or escape) with its [`HOLE`]s
    /// filled from `before`, the caller's tuple at the call site: the
    /// invocation did not move those automata.
    pub(super) fn fill(&mut self, t: TupleId, before: TupleId) -> TupleId {
        if self.kept.is_none() {
            return t;
        }
        let na = self.autos.len();
        if !self.tuples[t][..na].iter().any(|&q| is_hole(q)) {
            return t;
        }
        let mut out = self.tuples[t].clone();
        let before = &self.tuples[before][..na];
        for ((q, &b), sym) in out[..na].iter_mut().zip(before).zip(&self.sym) {
            match sym {
                Some(sym) if is_hole(*q) => *q = sym.fill(*q, b),
                _ if *q == HOLE => *q = b,
                _ => {}
            }
        }
        self.tuple(out)
    }

    /// Resumes `waiter` (at call site `site`) after a callee reached its
    /// exit with tuple `t` on path edge `exit`: the callee's automaton
    /// states, with the caller's bits added to the callee's.
    pub(super) fn resume(
        &mut self,
        waiter: Waiter,
        t: TupleId,
        exit: PathId,
    ) -> Result<(), Unsupported> {
        let g = self.g;
        let (site, before) = match waiter {
            Waiter::Top(id) => (self.top[id].0, self.top[id].2),
            Waiter::Path(id) => (self.path[id].1, self.path[id].2),
        };
        let t = self.fill(t, before);
        let Some(t) = self.with_bits(t, before, true) else {
            return Ok(());
        };
        for r in g.return_sites(site) {
            let Some(t2) = self.step(t, r) else { continue };
            if g.func_of(r) != g.func_of(site) {
                // A jump from the caller's activation to an outer one.
                match waiter {
                    Waiter::Top(id) => {
                        let j = self.top[id].1;
                        self.jump(j, r, t2, Pred::Summary { call: id, exit })?;
                    }
                    Waiter::Path(id) => {
                        let c = self.path[id].0;
                        let e = Esc {
                            node: r,
                            tuple: t2,
                            call: Some(id),
                            inner: Body::Path(exit),
                        };
                        self.escape(c, e)?;
                    }
                }
                continue;
            }
            match waiter {
                Waiter::Top(id) => {
                    let seg = self.top[id].1;
                    self.add_top((r, seg, t2), Pred::Summary { call: id, exit })?;
                }
                Waiter::Path(id) => {
                    let c = self.path[id].0;
                    self.add_path((c, r, t2), Pred::Summary { call: id, exit })?;
                }
            }
        }
        Ok(())
    }

    /// A call from `waiter` at call site `v` (tuple `t`) into `w`: waits
    /// on the callee's context and resumes at the exits found so far.
    pub(super) fn call(
        &mut self,
        waiter: Waiter,
        w: NodeId,
        t: TupleId,
    ) -> Result<(), Unsupported> {
        let t = self.holes(w, t);
        let Some(t1) = self.step(t, w) else {
            return Ok(());
        };
        let c = self.context(w, t1)?;
        self.waiters[c].push(waiter);
        let exits = self.exits[c].clone();
        for (tx, exit) in exits {
            self.resume(waiter, tx, exit)?;
        }
        let escapes = self.escapes[c].clone();
        for e in escapes {
            self.land(waiter, e)?;
        }
        Ok(())
    }

    /// A jump to `w` (tuple `t`) from a top-level state of segment `j`:
    /// it lands in an activation of `w`'s function, in segment `j` or an
    /// earlier one (popping frames the path must then call again), where
    /// the segment's function may be it or unreported calls may be
    /// pending (a gap). (Landing in segment `j` may assume an unreported
    /// activation the path did not make: more paths, never fewer.)
    pub(super) fn jump(
        &mut self,
        j: u32,
        w: NodeId,
        t: TupleId,
        pred: Pred<TopId>,
    ) -> Result<(), Unsupported> {
        let f = self.g.func_of(w);
        for i in 0..=j {
            let seg = &self.segs[i as usize];
            if seg.gap || seg.home.contains(&f) {
                self.add_top((w, i, t), pred)?;
            }
        }
        Ok(())
    }

    /// Records that an invocation of context `c` may leave by a jump, and
    /// lands it at every caller waiting on `c`.
    pub(super) fn escape(&mut self, c: CtxId, e: Esc) -> Result<(), Unsupported> {
        let key = (c, e.node, e.tuple);
        if let Some(&id) = self.esc_ids.get(&key) {
            if let Some(log) = &mut self.log {
                log.esc_in.push((id, e.call, e.inner));
            }
            return Ok(());
        }
        self.budget()?;
        let id = self.esc.push(e);
        if let Some(log) = &mut self.log {
            log.esc_in.push((id, e.call, e.inner));
        }
        self.esc_ids.insert(key, id);
        self.escapes[c].push(id);
        let waiters = self.waiters[c].clone();
        for wt in waiters {
            if !self.dead(wt) {
                self.land(wt, id)?;
            }
        }
        Ok(())
    }

    /// Escape record `e` of a callee reaches `waiter` (at its call site):
    /// the jump lands in the caller's activation if it is of the target's
    /// function, and may go on to outer ones (any activation of it).
    pub(super) fn land(&mut self, waiter: Waiter, e: EscId) -> Result<(), Unsupported> {
        let Esc { node, tuple, .. } = self.esc[e];
        let w = node;
        let (site, before) = match waiter {
            Waiter::Top(id) => (self.top[id].0, self.top[id].2),
            Waiter::Path(id) => (self.path[id].1, self.path[id].2),
        };
        let tuple = self.fill(tuple, before);
        let Some(t) = self.with_bits(tuple, before, true) else {
            return Ok(());
        };
        match waiter {
            Waiter::Top(id) => {
                let j = self.top[id].1;
                self.jump(j, w, t, Pred::Landing { call: id, esc: e })?;
            }
            Waiter::Path(id) => {
                let c = self.path[id].0;
                if self.g.func_of(site) == self.g.func_of(w) {
                    self.add_path((c, node, t), Pred::Landing { call: id, esc: e })?;
                }
                let up = Esc {
                    node,
                    tuple: t,
                    call: Some(id),
                    inner: Body::Esc(e),
                };
                self.escape(c, up)?;
            }
        }
        Ok(())
    }
}
