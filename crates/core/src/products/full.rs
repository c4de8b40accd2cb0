//! On-the-fly exploration of the product of the ICFG with the constraint
//! automata, restricted to the UTL structure (see the FSA solver's module
//! docs, `fsa/mod.rs`).
//!
//! A product vertex is a *location* plus one state per automaton. A
//! location is a node, or a whole *silent* strongly connected component
//! (non-trivial, and no automaton changes state on any of its nodes): inside
//! such a component every node is reachable from every other with the
//! automata unchanged, so one vertex stands for all of it.

use crate::algo::SccId;
use crate::automaton::{Dfa, DEAD};
use crate::fxhash::FxHashMap;
use crate::graph::{BitSet, Csr};
use crate::ids::{entity_id, IdVec};
use crate::structure::{Core, Ends, Segments};
use std::collections::VecDeque;
use std::time::Instant;

entity_id!(
    /// A vertex of a product (full or contracted): a location and the
    /// automaton states (and tracker positions) there.
    VertexId
);
entity_id!(
    /// An explored edge of the full product.
    EdgeId
);

/// The location of a product vertex: a node, or a whole silent component.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Loc {
    Node(u32),
    Comp(SccId),
}

/// One product edge, with the concrete ICFG edge it follows.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Edge {
    pub from: VertexId,
    pub to: VertexId,
    pub from_node: u32,
    pub to_node: u32,
}

/// The exploration frontier: FIFO (breadth first) or most progress first.
pub(crate) enum Frontier {
    Fifo(VecDeque<VertexId>),
    Best(std::collections::BinaryHeap<(u64, std::cmp::Reverse<VertexId>)>),
}

impl Frontier {
    fn new(best_first: bool) -> Frontier {
        if best_first {
            Frontier::Best(Default::default())
        } else {
            Frontier::Fifo(Default::default())
        }
    }
    fn push(&mut self, v: VertexId, progress: u64) {
        match self {
            Frontier::Fifo(q) => q.push_back(v),
            Frontier::Best(h) => h.push((progress, std::cmp::Reverse(v))),
        }
    }
    fn pop(&mut self) -> Option<VertexId> {
        match self {
            Frontier::Fifo(q) => q.pop_front(),
            Frontier::Best(h) => h.pop().map(|(_, std::cmp::Reverse(v))| v),
        }
    }
}

/// Why exploration stopped early.
#[derive(Clone, Debug)]
pub(crate) enum Stop {
    States(usize),
    Time,
    /// The estimated memory of the exploration exceeded this many bytes.
    Memory(usize),
}

/// Which automata can change state on each node: those that act on nodes
/// they do not mention (`always`), and per node those that mention it, so
/// that a step touches only the automata that may move (a report with
/// hundreds of automata would otherwise cost hundreds of lookups per edge).
pub(crate) struct Touch {
    always: Vec<usize>,
    by_node: FxHashMap<u32, Vec<usize>>,
}

impl Touch {
    pub fn new<'a>(autos: impl IntoIterator<Item = &'a Dfa>) -> Touch {
        let mut always = Vec::new();
        let mut by_node: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
        for (i, a) in autos.into_iter().enumerate() {
            if !a.silent_elsewhere() {
                always.push(i);
                continue;
            }
            for v in a.mentioned() {
                if !a.silent_on(v) {
                    by_node.entry(v).or_default().push(i);
                }
            }
        }
        Touch { always, by_node }
    }

    /// Whether some automaton may change state on node `w`.
    #[inline]
    pub fn moves(&self, w: u32) -> bool {
        !self.always.is_empty() || self.by_node.contains_key(&w)
    }

    /// Steps `out` (a copy of the states, one per automaton of `autos`)
    /// on node `w`; false if some automaton rejects.
    #[inline]
    pub fn step(&self, autos: &[&Dfa], out: &mut [u32], w: u32) -> bool {
        let touched = self.by_node.get(&w).map_or(&[][..], |v| &v[..]);
        for &i in self.always.iter().chain(touched) {
            let t = autos[i].step(out[i], w);
            if t == DEAD {
                return false;
            }
            out[i] = t;
        }
        true
    }
}

/// Estimated bytes of an exploration of `vertices` vertices of `width`
/// words each and `edges` edges: the key and its index copy, the side
/// tables, and what the classification builds afterwards.
pub(crate) fn estimated_bytes(vertices: usize, width: usize, edges: usize) -> usize {
    vertices
        .saturating_mul(8 * width + 96)
        .saturating_add(edges.saturating_mul(48))
}

pub(crate) struct Product<'a> {
    pub g: &'a Csr,
    pub core: &'a Core,
    pub seg: &'a Segments,
    pub ends: &'a Ends,
    pub autos: &'a [Dfa],
    auto_refs: Vec<&'a Dfa>,
    touch: Touch,
    pub silent_comp: IdVec<SccId, bool>,
    pub start: u32,
    /// Nodes of the graph: a key's location word is a node `l < n`, or the
    /// component `l - n` (see [`Product::loc`]).
    n: u32,
    width: usize,
    keys: Vec<u32>,
    index: FxHashMap<Box<[u32]>, VertexId>,
    pub edges: IdVec<EdgeId, Edge>,
    pub initial: Vec<VertexId>,
    pub accepting: IdVec<VertexId, bool>,
    /// BFS tree: the edge that discovered each vertex (none for initial
    /// ones).
    pub parent_edge: IdVec<VertexId, Option<EdgeId>>,
    /// Per silent component: its edges leaving the component.
    out_edges: FxHashMap<SccId, Vec<(u32, u32)>>,
    has_target: IdVec<SccId, bool>,
    /// With subsumption: the explored vertices of each location.
    antichain: Option<FxHashMap<Loc, Vec<VertexId>>>,
}

impl<'a> Product<'a> {
    pub fn new(
        g: &'a Csr,
        core: &'a Core,
        seg: &'a Segments,
        ends: &'a Ends,
        autos: &'a [Dfa],
        start: u32,
    ) -> Self {
        let n = g.num_vertices() as u32;
        let sccs = &core.sccs;
        // Silent components.
        let mut loud = BitSet::new(n as usize);
        let mut all_loud = false;
        for a in autos {
            if !a.silent_elsewhere() {
                all_loud = true;
            }
            for v in a.mentioned() {
                if !a.silent_on(v) {
                    loud.insert(v as usize);
                }
            }
        }
        let has_target = sccs
            .ids()
            .map(|c| sccs.members_of(c).iter().any(|&v| ends.is_target(v)))
            .collect();
        let silent_comp = sccs
            .ids()
            .map(|c| {
                !all_loud
                    && seg.alive[c]
                    && !sccs.is_trivial(c)
                    && sccs
                        .members_of(c)
                        .iter()
                        .all(|&v| !loud.contains(v as usize))
            })
            .collect();
        Product {
            g,
            core,
            seg,
            ends,
            autos,
            auto_refs: autos.iter().collect(),
            touch: Touch::new(autos),
            silent_comp,
            start,
            n,
            width: 1 + autos.len(),
            keys: Vec::new(),
            index: FxHashMap::default(),
            edges: IdVec::new(),
            initial: Vec::new(),
            accepting: IdVec::new(),
            parent_edge: IdVec::new(),
            out_edges: FxHashMap::default(),
            has_target,
            antichain: None,
        }
    }

    pub fn num_vertices(&self) -> usize {
        self.accepting.len()
    }

    /// The explored vertices, in order of discovery.
    pub fn vertices(&self) -> impl Iterator<Item = VertexId> {
        self.accepting.ids()
    }

    /// The location of a vertex.
    pub fn loc(&self, v: VertexId) -> Loc {
        let l = self.keys[v.index() * self.width];
        match l.checked_sub(self.n) {
            None => Loc::Node(l),
            Some(c) => Loc::Comp(SccId::new(c as usize)),
        }
    }

    /// The word that stands for `loc` in a key.
    fn loc_word(&self, loc: Loc) -> u32 {
        match loc {
            Loc::Node(v) => v,
            Loc::Comp(c) => self.n + c.as_u32(),
        }
    }

    fn states(&self, v: VertexId) -> &[u32] {
        let i = v.index() * self.width;
        &self.keys[i + 1..i + self.width]
    }

    fn loc_of_node(&self, w: u32) -> Loc {
        let c = self.core.sccs.comp(w).expect("a live node");
        if self.silent_comp[c] {
            Loc::Comp(c)
        } else {
            Loc::Node(w)
        }
    }

    fn is_accepting(&self, loc: Loc, qs: &[u32]) -> bool {
        if !self
            .autos
            .iter()
            .zip(qs)
            .all(|(a, &q)| a.accepting[q as usize])
        {
            return false;
        }
        let m = self.core.m;
        match loc {
            Loc::Node(v) => {
                self.ends.is_target(v)
                    && self
                        .seg
                        .ends(self.core.sccs.comp(v).expect("a live node"), m)
            }
            Loc::Comp(c) => self.has_target[c] && self.seg.ends(c, m),
        }
    }

    /// Does `a` make at least the progress of `b` (monotone automata: `>=`,
    /// others: equal)?
    fn covers(&self, a: &[u32], b: &[u32]) -> bool {
        self.autos
            .iter()
            .zip(a.iter().zip(b))
            .all(|(d, (&x, &y))| d.covers(x, y))
    }

    fn progress(&self, qs: &[u32]) -> u64 {
        self.autos
            .iter()
            .zip(qs)
            .filter(|(d, _)| d.is_monotone())
            .map(|(_, &q)| u64::from(q))
            .sum()
    }

    fn intern(
        &mut self,
        loc: Loc,
        qs: &[u32],
        queue: &mut Frontier,
        parent: Option<EdgeId>,
    ) -> VertexId {
        let mut key = Vec::with_capacity(self.width);
        key.push(self.loc_word(loc));
        key.extend_from_slice(qs);
        let key = key.into_boxed_slice();
        if let Some(&id) = self.index.get(&key) {
            return id;
        }
        if let Some(chain) = &self.antichain {
            if let Some(v) = chain.get(&loc).and_then(|vs| {
                vs.iter()
                    .copied()
                    .find(|&v| self.covers(self.states(v), qs))
            }) {
                return v;
            }
        }
        let acc = self.is_accepting(loc, qs);
        let id = self.accepting.push(acc);
        self.keys.extend_from_slice(&key);
        self.index.insert(key, id);
        self.parent_edge.push(parent);
        let prio = self.progress(qs);
        queue.push(id, prio);
        if let Some(chain) = &mut self.antichain {
            chain.entry(loc).or_default().push(id);
        }
        id
    }

    fn step_all(&self, qs: &[u32], w: u32, out: &mut Vec<u32>) -> bool {
        out.clear();
        out.extend_from_slice(qs);
        self.touch.step(&self.auto_refs, out, w)
    }

    fn comp_out_edges(&mut self, c: SccId) -> Vec<(u32, u32)> {
        if let Some(e) = self.out_edges.get(&c) {
            return e.clone();
        }
        let sccs = &self.core.sccs;
        let mut e = Vec::new();
        for &v in sccs.members_of(c) {
            for &w in self.g.succs(v) {
                if sccs.comp(w) != Some(c) {
                    e.push((v, w));
                }
            }
        }
        self.out_edges.insert(c, e.clone());
        e
    }

    /// Explores from the initial vertices. With `stop_at_accept` (a single
    /// question), returns as soon as an accepting vertex exists, explores
    /// vertices with the most progress first, and skips vertices subsumed
    /// by an explored one at the same location (an antichain per location;
    /// exact for emptiness, since a subsuming vertex accepts every
    /// continuation the subsumed one does). Otherwise it is a plain
    /// breadth-first exploration of the whole product.
    /// Returns whether some vertex accepts.
    pub fn explore(
        &mut self,
        stop_at_accept: bool,
        max_states: usize,
        max_memory: usize,
        deadline: Option<Instant>,
    ) -> Result<bool, Stop> {
        let s = self.start;
        let mut queue = Frontier::new(stop_at_accept);
        if stop_at_accept && self.autos.iter().any(|a| a.has_order()) {
            self.antichain = Some(FxHashMap::default());
        }
        let mut found = false;
        let alive = |v: u32| self.core.sccs.comp(v).is_some_and(|c| self.seg.alive[c]);
        if !alive(s) || !self.ends.is_source(s) {
            return Ok(false);
        }
        // Every combination of initial states (lazily, under the limits),
        // then read the start node.
        let combos = crate::automaton::initial_combinations(&[], self.autos);
        let mut buf = Vec::new();
        let loc = self.loc_of_node(s);
        for (i, c) in combos.enumerate() {
            self.check_limits(max_states, max_memory)?;
            if i % 1024 == 1023 && deadline.is_some_and(|d| Instant::now() > d) {
                return Err(Stop::Time);
            }
            if self.step_all(&c, s, &mut buf) {
                let qs = buf.clone();
                let id = self.intern(loc, &qs, &mut queue, None);
                if !self.initial.contains(&id) {
                    self.initial.push(id);
                }
            }
        }
        let mut head_count = 0usize;
        while let Some(v) = queue.pop() {
            if self.accepting[v] {
                found = true;
                if stop_at_accept && self.autos.iter().any(|a| a.has_order()) {
                    return Ok(true);
                }
            }
            head_count += 1;
            if head_count.is_multiple_of(1024) {
                if let Some(d) = deadline {
                    if Instant::now() > d {
                        return Err(Stop::Time);
                    }
                }
                if let Some(b) = crate::budget::exceeded() {
                    return Err(Stop::Memory(b));
                }
                if crate::budget::past_deadline() {
                    return Err(Stop::Time);
                }
            }
            self.check_limits(max_states, max_memory)?;
            let qs: Vec<u32> = self.states(v).to_vec();
            let moves: Vec<(u32, u32)> = match self.loc(v) {
                Loc::Node(node) => self.g.succs(node).iter().map(|&w| (node, w)).collect(),
                Loc::Comp(c) => self.comp_out_edges(c),
            };
            for (from, w) in moves {
                let sccs = &self.core.sccs;
                let Some(cw) = sccs.comp(w).filter(|&c| self.seg.alive[c]) else {
                    continue;
                };
                let cf = sccs.comp(from).expect("a live node");
                if cf != cw && !self.seg.usable(cf, cw) {
                    continue;
                }
                if !self.step_all(&qs, w, &mut buf) {
                    continue;
                }
                let qs2 = buf.clone();
                let loc = self.loc_of_node(w);
                let to = self.intern(loc, &qs2, &mut queue, Some(self.edges.next_id()));
                self.edges.push(Edge {
                    from: v,
                    to,
                    from_node: from,
                    to_node: w,
                });
            }
        }
        Ok(found)
    }

    /// The state limit (which also bounds memory: a vertex costs one word
    /// per automaton) and the memory budget.
    fn check_limits(&self, max_states: usize, max_memory: usize) -> Result<(), Stop> {
        if self.num_vertices() > max_states || self.keys.len() > max_states.saturating_mul(8) {
            return Err(Stop::States(max_states));
        }
        if estimated_bytes(self.num_vertices(), self.width, self.edges.len()) > max_memory {
            return Err(Stop::Memory(max_memory));
        }
        Ok(())
    }

    /// Vertices from which an accepting vertex is reachable.
    pub fn co_reachable(&self) -> BitSet {
        let nv = self.num_vertices();
        let rev = Csr::from_edges(
            nv,
            &self
                .edges
                .values()
                .map(|e| (e.to.as_u32(), e.from.as_u32()))
                .collect::<Vec<_>>(),
        );
        let mut seen = BitSet::new(nv);
        crate::algo::reach(
            &rev,
            self.vertices()
                .filter(|&v| self.accepting[v])
                .map(VertexId::as_u32),
            |_| true,
            &mut seen,
        );
        seen
    }

    /// The first accepting vertex found (in BFS order).
    pub fn first_accepting(&self) -> Option<VertexId> {
        self.vertices().find(|&v| self.accepting[v])
    }

    /// The product edges from an initial vertex to `v` along the BFS tree.
    pub fn tree_path(&self, v: VertexId) -> Vec<Edge> {
        let mut out = Vec::new();
        let mut x = v;
        while let Some(e) = self.parent_edge[x] {
            let e = self.edges[e];
            out.push(e);
            x = e.from;
        }
        out.reverse();
        out
    }
}
