//! The search: the worklist over the contracted product, which builds
//! the explored graph.

use super::*;

/// The explored graph: the output of the search, which the witness and
/// the classification read.
pub(super) struct Explored {
    /// Words per key.
    width: usize,
    /// The keys of the vertices, `width` words each.
    pub(super) keys: Vec<u32>,
    /// The vertex of each key, hashed by [`key_hash`] and compared in
    /// `keys` (no allocation per vertex: most of a search's time went to
    /// boxing keys and faulting in their pages, issue 25).
    index: hashbrown::HashTable<VertexId>,
    by_loc: FxHashMap<LocId, Vec<VertexId>>,
    pub(super) edges: IdVec<EdgeId, (VertexId, VertexId)>,
    /// Per edge, the graph edge (from node, to node) it takes.
    pub(super) edge_nodes: IdVec<EdgeId, (u32, u32)>,
    /// Per vertex: accepting.
    pub(super) acc: IdVec<VertexId, bool>,
    /// Per vertex: how it was first reached.
    pub(super) parent: IdVec<VertexId, By>,
    pub(super) initial: Vec<VertexId>,
}

impl Explored {
    /// The key of vertex `v`.
    pub(super) fn key(&self, v: VertexId) -> &[u32] {
        &self.keys[v.index() * self.width..(v.index() + 1) * self.width]
    }

    /// The location of vertex `v`.
    pub(super) fn loc(&self, v: VertexId) -> LocId {
        LocId(self.key(v)[0])
    }
}

/// Phase 3: the search over the key space, which builds the [`Explored`]
/// graph (with antichains when `subsume`; stopping at the first accepting
/// vertex when `early`).
pub(super) struct Search<'p, 's, 'a> {
    st: &'s Structure<'a>,
    space: &'p Space<'s, 'a>,
    limits: CoarseLimits,
    /// Antichains: a vertex covered by an explored one is not added.
    subsume: bool,
    /// Stop at the first accepting vertex.
    early: bool,
    heap: BinaryHeap<(u64, std::cmp::Reverse<VertexId>)>,
    pub(super) graph: Explored,
}

impl<'p, 's, 'a> Search<'p, 's, 'a> {
    pub(super) fn new(
        space: &'p Space<'s, 'a>,
        limits: CoarseLimits,
        subsume: bool,
        early: bool,
    ) -> Self {
        Search {
            st: space.locs.st,
            space,
            limits,
            subsume,
            early,
            heap: BinaryHeap::new(),
            graph: Explored {
                width: space.width,
                keys: Vec::new(),
                index: hashbrown::HashTable::new(),
                by_loc: FxHashMap::default(),
                edges: IdVec::new(),
                edge_nodes: IdVec::new(),
                acc: IdVec::new(),
                parent: IdVec::new(),
                initial: Vec::new(),
            },
        }
    }
}

/// The hash of a key (FxHash, two words at a time).
fn key_hash(qs: &[u32]) -> u64 {
    use std::hash::Hasher;
    let mut h = crate::fxhash::FxHasher::default();
    let mut pairs = qs.chunks_exact(2);
    for p in &mut pairs {
        h.write_u64(u64::from(p[0]) | u64::from(p[1]) << 32);
    }
    if let [last] = pairs.remainder() {
        h.write_u32(*last);
    }
    h.finish()
}

impl Search<'_, '_, '_> {
    /// The vertex of key `qs` (reached by `by`), added if new (unless
    /// covered, with antichains); `None` for an accepting vertex when
    /// exploring stops at the first.
    pub(super) fn intern(&mut self, qs: &[u32], by: By) -> Option<VertexId> {
        let hash = key_hash(qs);
        let width = self.graph.width;
        let keys = &self.graph.keys;
        let same = |v: &VertexId| &keys[v.index() * width..(v.index() + 1) * width] == qs;
        if let Some(&id) = self.graph.index.find(hash, same) {
            return Some(id);
        }
        if self.subsume {
            if let Some(vs) = self.graph.by_loc.get(&LocId(qs[0])) {
                for &v in vs {
                    if self.space.covers(self.graph.key(v), qs) {
                        return Some(v);
                    }
                }
            }
        }
        let id = self.graph.acc.next_id();
        if self.early && self.space.accepting(qs) {
            // Mode::Avoid and Mode::Check: an accepting vertex is all we need.
            return None;
        }
        self.graph.parent.push(by);
        self.graph.keys.extend_from_slice(qs);
        let (keys, width) = (&self.graph.keys, width);
        self.graph.index.insert_unique(hash, id, |v| {
            key_hash(&keys[v.index() * width..(v.index() + 1) * width])
        });
        self.graph.by_loc.entry(LocId(qs[0])).or_default().push(id);
        let acc = self.space.accepting(qs);
        self.graph.acc.push(acc);
        let p = self.space.progress(qs);
        self.heap.push((p, std::cmp::Reverse(id)));
        Some(id)
    }

    /// The limits on vertices, keys, estimated memory and (when `tick`)
    /// time.
    pub(super) fn within_limits(&self, tick: bool) -> Result<(), Stop> {
        let CoarseLimits {
            max_states,
            deadline,
            max_memory,
            ..
        } = self.limits;
        if self.graph.acc.len() > max_states || self.graph.keys.len() > max_states.saturating_mul(8)
        {
            return Err(Stop::States(max_states));
        }
        if estimated_bytes(
            self.graph.acc.len(),
            self.space.width,
            self.graph.edges.len(),
        ) > max_memory
        {
            return Err(Stop::Memory(max_memory));
        }
        if tick && deadline.is_some_and(|d| Instant::now() > d) {
            return Err(Stop::Time);
        }
        if tick {
            if let Some(b) = crate::budget::exceeded() {
                return Err(Stop::Memory(b));
            }
            if crate::budget::past_deadline() {
                return Err(Stop::Time);
            }
        }
        Ok(())
    }

    /// The initial vertices: every combination of initial states, lazily
    /// and under the limits. An accepting one when exploring stops at the
    /// first.
    pub(super) fn seed(&mut self) -> Result<Option<(Vec<u32>, By)>, Stop> {
        let start = self.st.start;
        let mut buf = Vec::new();
        // (The location word is the start's, as `step` writes it.)
        let l = self.space.locs.loc_of(start);
        let combos =
            crate::automaton::initial_combinations(&[l.as_u32()], self.space.others.clone());
        for (i, mut c) in combos.enumerate() {
            self.within_limits(i % 1024 == 1023)?;
            c.extend(std::iter::repeat_n(0, self.space.trackers.len()));
            if self.space.step(&c, start, l, &mut buf) {
                let qs = buf.clone();
                let by = By {
                    vertex: None,
                    from: None,
                    to: start,
                };
                let Some(id) = self.intern(&qs, by) else {
                    return Ok(Some((qs, by)));
                };
                self.graph.initial.push(id);
            }
        }
        Ok(None)
    }

    /// The worklist (most tracker progress first) over the usable edges
    /// between locations, under the limits. An accepting vertex when
    /// exploring stops at the first.
    pub(super) fn search(&mut self) -> Result<Option<(Vec<u32>, By)>, Stop> {
        let Structure { g, core, seg, .. } = *self.st;
        let sccs = &core.sccs;
        let mut buf = Vec::new();
        let mut out_edges: FxHashMap<SubId, Vec<(u32, u32)>> = FxHashMap::default();
        let mut popped = 0usize;
        while let Some((_, std::cmp::Reverse(v))) = self.heap.pop() {
            popped += 1;
            self.within_limits(popped.is_multiple_of(1024))?;
            let qs = self.graph.key(v).to_vec();
            let moves: Vec<(u32, u32)> = match self.space.locs.place(LocId(qs[0])) {
                Place::Node(l) => g.succs(l).iter().map(|&w| (l, w)).collect(),
                Place::Sub(s) => out_edges
                    .entry(s)
                    .or_insert_with(|| {
                        let mut e = Vec::new();
                        for &x in self.space.locs.sub.members_of(s) {
                            for &w in g.succs(x) {
                                if self.space.locs.sub.comp(w) != Some(s) {
                                    e.push((x, w));
                                }
                            }
                        }
                        e
                    })
                    .clone(),
            };
            for (from, w) in moves {
                if !self.space.locs.alive(w) {
                    continue;
                }
                let comp = |v: u32| sccs.comp(v).expect("a live node");
                let (cf, cw) = (comp(from), comp(w));
                if cf != cw && !seg.usable(cf, cw) {
                    continue;
                }
                if self.space.step(&qs, w, self.space.locs.loc_of(w), &mut buf) {
                    let next = buf.clone();
                    let by = By {
                        vertex: Some(v),
                        from: Some(from),
                        to: w,
                    };
                    let Some(to) = self.intern(&next, by) else {
                        return Ok(Some((next, by)));
                    };
                    self.graph.edges.push((v, to));
                    self.graph.edge_nodes.push((from, w));
                }
            }
        }
        Ok(None)
    }
}
