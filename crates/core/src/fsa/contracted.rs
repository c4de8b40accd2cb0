//! The contracted product: what FSA bulk recovery and queries explore
//! first, because it stays small where the full product does not.
//!
//! * Only automata that are not subsequence automata (reliable and bursty
//!   traces, "not all", regular queries) make nodes *loud*; the silent
//!   sub-components (SCCs of the silent nodes) of every component are
//!   contracted into one *location* each.
//! * Every subsequence constraint, and every UTL element inside a component
//!   that is not wholly silent, becomes a *tracker* over locations: "visit
//!   one of these locations", in order. Inside a contracted location any
//!   sequence of its nodes can be visited, so entering it matches every
//!   consecutive element it holds (greedy matching is optimal for
//!   subsequences). Identical trackers are merged, so thousands of coverage
//!   observations in one giant location become a few trackers.
//!
//! The language of this product is the consistent executions', projected
//! onto locations, so "may run" and emptiness are exact.
//! [`Mode::Classify`] decides "must run" node by node (see [`explore`]) and
//! lists the nodes it could not decide; [`Mode::Check`] and
//! [`Mode::Avoid`] explore with antichains (a vertex whose trackers made at
//! least as much progress, with the same other states, covers another),
//! which is exact for emptiness. With antichains in [`Mode::Classify`],
//! only a sound over-approximation of "may run" is computed: every real
//! state is covered by an explored vertex at the same location, and
//! co-reachability is computed over explored edges *including* the edges
//! to covering vertices, which can only add vertices.

use super::automaton::Dfa;
use super::product::{estimated_bytes, EdgeId, Stop, Touch, VertexId};
use super::Split;
use crate::algo::{bfs_tree, SccId, Sccs, Tree, Walker};
use crate::fxhash::FxHashMap;
use crate::graph::{BitSet, Csr};
use crate::ids::{entity_id, IdVec};
use crate::structure::{Core, Crossing, Ends, Leg, Segments, Verdict};
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::time::Instant;

entity_id!(
    /// A silent sub-component of a component: a contracted location when
    /// it is not trivial (see [`ContractedProduct::loc_of`]).
    SubId
);

entity_id!(
    /// A location of the contracted product: a node `l < n` of its own,
    /// or the contracted sub-component `l - n` (see
    /// [`ContractedProduct::place`]). The first word of a key.
    LocId
);

/// What a location stands for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Place {
    Node(u32),
    Sub(SubId),
}

/// What the contracted product says about every node.
pub(crate) struct Coarse {
    /// Nodes that may run (exact without subsumption, else a superset).
    pub may: BitSet,
    /// Nodes that surely run (sound; exact for nodes that are locations of
    /// their own, when explored without subsumption).
    pub must: BitSet,
    /// Nodes whose Maybe may be imprecise.
    pub unsure: BitSet,
    pub vertices: usize,
    pub trackers: usize,
    /// Members of contracted locations with element requirements that were
    /// decided (Yes or avoidable), and those left undecided.
    pub held_decided: usize,
    pub held_left: usize,
    /// Exact checks made.
    pub checks: usize,
    pub exact: bool,
}

/// A subsequence constraint over locations: `locs[i]` are the locations
/// where element `i` can be matched. `alts[i]` is what matching it means
/// in nodes: one entry per original constraint the tracker stands for
/// (identical trackers are merged; entry `k` is the same constraint at
/// every position), each an ordered sequence of node sets (consecutive
/// elements in one contracted location are merged into one position).
#[derive(Default)]
struct Tracker {
    locs: Vec<Vec<LocId>>,
    alts: Vec<Vec<Vec<Vec<u32>>>>,
}

/// The UTL structure the coarse tier works on.
pub(crate) struct Structure<'a> {
    pub g: &'a Csr,
    /// The reverse of `g`.
    pub rg: &'a Csr,
    pub core: &'a Core,
    pub seg: &'a Segments,
    pub ends: &'a Ends,
    pub start: u32,
}

/// What to do with the contracted product.
#[derive(Copy, Clone, Debug)]
pub(crate) enum Mode {
    /// Explore all of it and classify every node; with `subsume`, only an
    /// over-approximation of "may run" (antichains).
    Classify { subsume: bool },
    /// Only decide whether some consistent execution avoids this node
    /// (antichains, which are exact for emptiness; stops at the first
    /// accepting vertex).
    Avoid(u32),
    /// Only decide whether some consistent execution exists, and give one
    /// if `witness` (antichains; stops at the first accepting vertex).
    Check { witness: bool },
}

/// The result of [`explore`].
pub(crate) enum Outcome {
    /// No consistent execution (avoiding the node, in [`Mode::Avoid`]).
    Impossible,
    /// Some consistent execution avoids the node ([`Mode::Avoid`]), or
    /// exists ([`Mode::Check`] without a witness).
    Possible,
    /// The classification ([`Mode::Classify`]).
    Classified(Coarse),
    /// A consistent execution ([`Mode::Check`]): consecutive ICFG nodes
    /// from the start to a crash node.
    Witness(Vec<u32>),
}

/// Limits of the coarse tier.
#[derive(Copy, Clone, Debug)]
pub(crate) struct CoarseLimits {
    pub max_states: usize,
    pub deadline: Option<Instant>,
    /// Memory budget of the exploration, in bytes (estimated).
    pub max_memory: usize,
    /// Exact checks ([`Mode::Avoid`] explorations) allowed for members of
    /// locations with requirements that witnesses and dominators leave.
    pub checks: usize,
}

impl Coarse {
    /// Whether every node is decided: none it may not vouch for is Maybe.
    pub fn decided(&self) -> bool {
        self.unsure
            .iter()
            .all(|v| !self.may.contains(v) || self.must.contains(v))
    }

    /// Statistics for the recovery.
    pub fn stats(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("coarse_vertices", self.vertices as u64),
            ("coarse_trackers", self.trackers as u64),
            ("coarse_held_decided", self.held_decided as u64),
            ("coarse_held_left", self.held_left as u64),
            ("coarse_checks", self.checks as u64),
        ]
    }
}

/// Explores the contracted product. In [`Mode::Classify`] without
/// `subsume` the exploration is explicit, "may run" is exact and "must
/// run" is decided by cuts of the trimmed graph and, inside contracted
/// locations, by the crossing analysis, star witnesses and (under
/// `limits.checks`) exact [`Mode::Avoid`] explorations. With `subsume`,
/// only an over-approximation of "may run" is computed.
///
/// The phases are the methods of [`ContractedProduct`], called in order:
/// [`ContractedProduct::new`] (locations and trackers),
/// [`ContractedProduct::seed`] and [`ContractedProduct::search`] (the
/// worklist), then [`ContractedProduct::witness`] for an early accepting
/// vertex, or [`ContractedProduct::classify`].
pub(crate) fn explore(
    st: &Structure<'_>,
    sp: &Split,
    limits: CoarseLimits,
    mode: Mode,
) -> Result<Outcome, Stop> {
    let mut cp = ContractedProduct::new(st, sp, limits, mode);
    if !cp.alive(st.start) {
        return Ok(Outcome::Impossible);
    }
    if let Some((qs, by)) = cp.seed()? {
        return Ok(cp.witness(&qs, by));
    }
    if let Some((qs, by)) = cp.search()? {
        return Ok(cp.witness(&qs, by));
    }
    if cp.early {
        return Ok(Outcome::Impossible);
    }
    cp.classify()
}

/// How a product vertex was first reached: from `vertex` (none for an
/// initial one) along the graph edge `from` → `to` (no `from` at the
/// start).
#[derive(Copy, Clone, Debug)]
struct By {
    vertex: Option<VertexId>,
    from: Option<u32>,
    to: u32,
}

/// A step of a witness: a key, the node it was entered by, and the node
/// the move came from (none for the first).
type WitnessStep = (Vec<u32>, u32, Option<u32>);

/// The contracted product of one report, built and explored in phases
/// (see [`explore`]). A vertex is a *key* of `width` words: its location,
/// the states of the automata that are not subsequence automata, and each
/// tracker's position.
struct ContractedProduct<'s, 'a> {
    st: &'s Structure<'a>,
    sp: &'s Split,
    limits: CoarseLimits,
    mode: Mode,
    /// Antichains: a vertex covered by an explored one is not added.
    subsume: bool,
    /// Stop at the first accepting vertex.
    early: bool,
    /// The node avoided ([`Mode::Avoid`]).
    skip: Option<u32>,
    /// Nodes of the graph (see [`LocId`]).
    n: u32,
    /// The automata that are not subsequence automata.
    others: Vec<&'s Dfa>,
    touch: Touch,
    /// Silent sub-components (the contracted locations).
    sub: Sccs<SubId>,
    /// Per component: one silent sub-component (fully silent).
    whole_comp: IdVec<SccId, bool>,
    trackers: Vec<Tracker>,
    /// `others.len()`.
    k_o: usize,
    width: usize,
    /// Per sub-component: it holds a target (crash) node.
    has_target: IdVec<SubId, bool>,
    // The explored graph.
    keys: Vec<u32>,
    index: HashMap<Box<[u32]>, VertexId>,
    by_loc: HashMap<LocId, Vec<VertexId>>,
    edges: IdVec<EdgeId, (VertexId, VertexId)>,
    /// Per edge, the graph edge (from node, to node) it takes.
    edge_nodes: IdVec<EdgeId, (u32, u32)>,
    acc: IdVec<VertexId, bool>,
    heap: BinaryHeap<(u64, std::cmp::Reverse<VertexId>)>,
    parent: IdVec<VertexId, By>,
    initial: Vec<VertexId>,
}

impl<'s, 'a> ContractedProduct<'s, 'a> {
    /// Locations (loud nodes stay themselves, silent sub-components are
    /// contracted), then the trackers over them.
    fn new(
        st: &'s Structure<'a>,
        sp: &'s Split,
        limits: CoarseLimits,
        mode: Mode,
    ) -> ContractedProduct<'s, 'a> {
        let g = st.g;
        let n = g.num_vertices() as u32;
        let (subsume, skip, early) = match mode {
            Mode::Classify { subsume } => (subsume, None, false),
            Mode::Avoid(v) => (true, Some(v), true),
            Mode::Check { .. } => (true, None, true),
        };
        // Loud nodes: where an automaton other than a subsequence
        // automaton acts.
        let others: Vec<&Dfa> = sp.autos.iter().filter(|a| !a.is_monotone()).collect();
        let all_loud = others.iter().any(|a| !a.silent_elsewhere());
        let mut loud = BitSet::new(n as usize);
        for a in &others {
            for v in a.mentioned() {
                if !a.silent_on(v) {
                    loud.insert(v as usize);
                }
            }
        }
        let touch = Touch::new(others.iter().copied());
        let alive = |v: u32| alive_in(st, skip, v);
        // Silent sub-components.
        let sub = Sccs::compute(g, |v| !all_loud && alive(v) && !loud.contains(v as usize));
        let k_o = others.len();
        let mut cp = ContractedProduct {
            st,
            sp,
            limits,
            mode,
            subsume,
            early,
            skip,
            n,
            others,
            touch,
            sub,
            whole_comp: IdVec::new(),
            trackers: Vec::new(),
            k_o,
            width: 0,
            has_target: IdVec::new(),
            keys: Vec::new(),
            index: HashMap::new(),
            by_loc: HashMap::new(),
            edges: IdVec::new(),
            edge_nodes: IdVec::new(),
            acc: IdVec::new(),
            heap: BinaryHeap::new(),
            parent: IdVec::new(),
            initial: Vec::new(),
        };
        // A component is fully silent when it is one silent sub-component.
        // (Computed once for all components: it is asked per element.)
        let sccs = &st.core.sccs;
        cp.whole_comp = sccs
            .ids()
            .map(|c| {
                let m = sccs.members_of(c);
                !sccs.is_trivial(c)
                    && cp.sub_of(cp.loc_of(m[0])).is_some()
                    && m.iter().all(|&v| cp.loc_of(v) == cp.loc_of(m[0]))
            })
            .collect();
        cp.trackers = cp.trackers();
        cp.width = 1 + k_o + cp.trackers.len();
        cp.has_target = (cp.sub.ids())
            .map(|s| cp.sub.members_of(s).iter().any(|&v| st.ends.is_target(v)))
            .collect();
        cp
    }

    /// Whether node `v` can be on a consistent path at all (and is not the
    /// node avoided).
    fn alive(&self, v: u32) -> bool {
        alive_in(self.st, self.skip, v)
    }

    /// The location of node `v`: its silent sub-component when that is
    /// not trivial, else itself.
    fn loc_of(&self, v: u32) -> LocId {
        match self.sub.comp(v) {
            Some(s) if !self.sub.is_trivial(s) => LocId(self.n + s.as_u32()),
            _ => LocId(v),
        }
    }

    /// What location `l` stands for.
    #[inline]
    fn place(&self, l: LocId) -> Place {
        match l.0.checked_sub(self.n) {
            None => Place::Node(l.0),
            Some(s) => Place::Sub(SubId(s)),
        }
    }

    /// The location of vertex `v`.
    fn loc(&self, v: VertexId) -> LocId {
        LocId(self.key(v)[0])
    }

    fn whole(&self, c: SccId) -> bool {
        self.whole_comp[c]
    }

    /// The contracted sub-component location `l` stands for, or `None`
    /// when it is a node of its own.
    #[inline]
    fn sub_of(&self, l: LocId) -> Option<SubId> {
        match self.place(l) {
            Place::Node(_) => None,
            Place::Sub(s) => Some(s),
        }
    }

    /// The component of location `l`.
    fn comp_of_loc(&self, l: LocId) -> SccId {
        let node = match self.place(l) {
            Place::Node(v) => v,
            Place::Sub(s) => self.sub.members_of(s)[0],
        };
        self.st.core.sccs.comp(node).expect("a live location")
    }

    /// Trackers over locations, each element with the node sets it stands
    /// for (one node of each must be visited where the element is
    /// matched): one per UTL vector (its elements in components that are
    /// not trivial nor fully silent) and per trace; consecutive identical
    /// contracted elements merged, then identical trackers.
    fn trackers(&self) -> Vec<Tracker> {
        let sp = self.sp;
        let sccs = &self.st.core.sccs;
        let mut raw: Vec<Tracker> = Vec::new();
        for vec in &sp.vectors {
            let mut t = Tracker::default();
            for &e in vec {
                let c = sccs.comp(e).expect("a live element");
                if !sccs.is_trivial(c) && !self.whole(c) {
                    t.locs.push(vec![self.loc_of(e)]);
                    t.alts.push(vec![vec![vec![e]]]);
                }
            }
            if !t.locs.is_empty() {
                raw.push(t);
            }
        }
        for elems in &sp.traces {
            let mut t = Tracker::default();
            for e in elems {
                let nodes: Vec<u32> = e
                    .nodes()
                    .iter()
                    .map(|x| x.as_u32())
                    .filter(|&v| self.alive(v))
                    .collect();
                let mut locs: Vec<LocId> = nodes.iter().map(|&v| self.loc_of(v)).collect();
                locs.sort_unstable();
                locs.dedup();
                t.locs.push(locs);
                t.alts.push(vec![vec![nodes]]);
            }
            raw.push(t);
        }
        // Merge consecutive identical single-location elements that are
        // contracted locations (one visit matches them all), then trackers
        // with the same locations (they move together).
        for t in &mut raw {
            let mut m = Tracker::default();
            for (locs, alts) in t.locs.drain(..).zip(t.alts.drain(..)) {
                if locs.len() == 1 && self.sub_of(locs[0]).is_some() && m.locs.last() == Some(&locs)
                {
                    // Before trackers are merged, one constraint per position.
                    m.alts.last_mut().expect("parallel")[0].extend(alts.into_iter().flatten());
                } else {
                    m.locs.push(locs);
                    m.alts.push(alts);
                }
            }
            *t = m;
        }
        raw.sort_by(|a, b| a.locs.cmp(&b.locs));
        let mut trackers: Vec<Tracker> = Vec::new();
        for t in raw {
            match trackers.last_mut() {
                Some(last) if last.locs == t.locs => {
                    for (a, b) in last.alts.iter_mut().zip(t.alts) {
                        a.extend(b);
                    }
                }
                _ => trackers.push(t),
            }
        }
        trackers
    }

    /// Steps from key `qs` into location `l` through node `w`: the next key
    /// in `out`; false if an automaton rejects.
    fn step(&self, qs: &[u32], w: u32, l: LocId, out: &mut Vec<u32>) -> bool {
        let k_o = self.k_o;
        out.clear();
        out.push(l.as_u32());
        out.extend_from_slice(&qs[1..1 + k_o]);
        if !self.touch.step(&self.others, &mut out[1..], w) {
            return false;
        }
        for (t, &p) in self.trackers.iter().zip(&qs[1 + k_o..]) {
            let mut p = p as usize;
            let t = &t.locs;
            if self.sub_of(l).is_some() {
                while p < t.len() && t[p].binary_search(&l).is_ok() {
                    p += 1;
                }
            } else if p < t.len() && t[p].binary_search(&l).is_ok() {
                p += 1;
            }
            out.push(p as u32);
        }
        true
    }

    fn accepting(&self, qs: &[u32]) -> bool {
        let k_o = self.k_o;
        let Structure {
            core, seg, ends, ..
        } = *self.st;
        let l = LocId(qs[0]);
        let at_end = match self.place(l) {
            Place::Node(v) => ends.is_target(v) && seg.ends(self.comp_of_loc(l), core.m),
            Place::Sub(s) => self.has_target[s] && seg.ends(self.comp_of_loc(l), core.m),
        };
        at_end
            && self
                .others
                .iter()
                .zip(&qs[1..1 + k_o])
                .all(|(a, &q)| a.accepting[q as usize])
            && self
                .trackers
                .iter()
                .zip(&qs[1 + k_o..])
                .all(|(t, &p)| p as usize == t.locs.len())
    }

    /// Trackers' total progress: the worklist's priority.
    fn progress(&self, qs: &[u32]) -> u64 {
        qs[1 + self.k_o..].iter().map(|&p| u64::from(p)).sum()
    }

    /// Whether key `a` covers key `b` (antichains).
    fn covers(&self, a: &[u32], b: &[u32]) -> bool {
        let k_o = self.k_o;
        a[0] == b[0]
            && self
                .others
                .iter()
                .zip(a[1..1 + k_o].iter().zip(&b[1..1 + k_o]))
                .all(|(d, (&x, &y))| d.covers(x, y))
            && a[1 + k_o..].iter().zip(&b[1 + k_o..]).all(|(x, y)| x >= y)
    }

    /// The key of vertex `v`.
    fn key(&self, v: VertexId) -> &[u32] {
        &self.keys[v.index() * self.width..(v.index() + 1) * self.width]
    }

    /// The vertex of key `qs` (reached by `by`), added if new (unless
    /// covered, with antichains); `None` for an accepting vertex when
    /// exploring stops at the first.
    fn intern(&mut self, qs: &[u32], by: By) -> Option<VertexId> {
        if let Some(&id) = self.index.get(qs) {
            return Some(id);
        }
        if self.subsume {
            if let Some(vs) = self.by_loc.get(&LocId(qs[0])) {
                for &v in vs {
                    if self.covers(self.key(v), qs) {
                        return Some(v);
                    }
                }
            }
        }
        let id = self.acc.next_id();
        if self.early && self.accepting(qs) {
            // Mode::Avoid and Mode::Check: an accepting vertex is all we need.
            return None;
        }
        self.parent.push(by);
        self.keys.extend_from_slice(qs);
        self.index.insert(qs.into(), id);
        self.by_loc.entry(LocId(qs[0])).or_default().push(id);
        let acc = self.accepting(qs);
        self.acc.push(acc);
        let p = self.progress(qs);
        self.heap.push((p, std::cmp::Reverse(id)));
        Some(id)
    }

    /// The limits on vertices, keys, estimated memory and (when `tick`)
    /// time.
    fn within_limits(&self, tick: bool) -> Result<(), Stop> {
        let CoarseLimits {
            max_states,
            deadline,
            max_memory,
            ..
        } = self.limits;
        if self.acc.len() > max_states || self.keys.len() > max_states.saturating_mul(8) {
            return Err(Stop::States(max_states));
        }
        if estimated_bytes(self.acc.len(), self.width, self.edges.len()) > max_memory {
            return Err(Stop::Memory(max_memory));
        }
        if tick && deadline.is_some_and(|d| Instant::now() > d) {
            return Err(Stop::Time);
        }
        Ok(())
    }

    /// The initial vertices: every combination of initial states, lazily
    /// and under the limits. An accepting one when exploring stops at the
    /// first.
    fn seed(&mut self) -> Result<Option<(Vec<u32>, By)>, Stop> {
        let start = self.st.start;
        let mut buf = Vec::new();
        // (The location word is the start's, as `step` writes it.)
        let l = self.loc_of(start);
        let combos = super::automaton::initial_combinations(&[l.as_u32()], self.others.clone());
        for (i, mut c) in combos.enumerate() {
            self.within_limits(i % 1024 == 1023)?;
            c.extend(std::iter::repeat_n(0, self.trackers.len()));
            if self.step(&c, start, l, &mut buf) {
                let qs = buf.clone();
                let by = By {
                    vertex: None,
                    from: None,
                    to: start,
                };
                let Some(id) = self.intern(&qs, by) else {
                    return Ok(Some((qs, by)));
                };
                self.initial.push(id);
            }
        }
        Ok(None)
    }

    /// The worklist (most tracker progress first) over the usable edges
    /// between locations, under the limits. An accepting vertex when
    /// exploring stops at the first.
    fn search(&mut self) -> Result<Option<(Vec<u32>, By)>, Stop> {
        let Structure { g, core, seg, .. } = *self.st;
        let sccs = &core.sccs;
        let mut buf = Vec::new();
        let mut out_edges: HashMap<SubId, Vec<(u32, u32)>> = HashMap::new();
        let mut popped = 0usize;
        while let Some((_, std::cmp::Reverse(v))) = self.heap.pop() {
            popped += 1;
            self.within_limits(popped.is_multiple_of(1024))?;
            let qs = self.key(v).to_vec();
            let moves: Vec<(u32, u32)> = match self.place(LocId(qs[0])) {
                Place::Node(l) => g.succs(l).iter().map(|&w| (l, w)).collect(),
                Place::Sub(s) => out_edges
                    .entry(s)
                    .or_insert_with(|| {
                        let mut e = Vec::new();
                        for &x in self.sub.members_of(s) {
                            for &w in g.succs(x) {
                                if self.sub.comp(w) != Some(s) {
                                    e.push((x, w));
                                }
                            }
                        }
                        e
                    })
                    .clone(),
            };
            for (from, w) in moves {
                if !self.alive(w) {
                    continue;
                }
                let comp = |v: u32| sccs.comp(v).expect("a live node");
                let (cf, cw) = (comp(from), comp(w));
                if cf != cw && !seg.usable(cf, cw) {
                    continue;
                }
                if self.step(&qs, w, self.loc_of(w), &mut buf) {
                    let next = buf.clone();
                    let by = By {
                        vertex: Some(v),
                        from: Some(from),
                        to: w,
                    };
                    let Some(to) = self.intern(&next, by) else {
                        return Ok(Some((next, by)));
                    };
                    self.edges.push((v, to));
                    self.edge_nodes.push((from, w));
                }
            }
        }
        Ok(None)
    }

    /// An accepting key `qs` reached by `by`: in [`Mode::Check`] with a
    /// witness, the execution along the first-discovery tree (whose edges
    /// are real transitions), each contracted location crossed by
    /// [`ContractedProduct::cross`]; otherwise just possible.
    fn witness(&self, qs: &[u32], by: By) -> Outcome {
        if !matches!(self.mode, Mode::Check { witness: true }) {
            return Outcome::Possible;
        }
        // (state, entry node, the move's from node) from the last back.
        let mut steps: Vec<WitnessStep> = vec![(qs.to_vec(), by.to, by.from)];
        let mut v = by.vertex;
        while let Some(x) = v {
            let p = self.parent[x];
            steps.push((self.key(x).to_vec(), p.to, p.from));
            v = p.vertex;
        }
        steps.reverse();
        let mut path: Vec<u32> = Vec::new();
        let mut whole_done: Vec<SccId> = Vec::new();
        let mut walker = Walker::new(self.n as usize);
        for i in 0..steps.len() {
            if let Place::Node(v) = self.place(LocId(steps[i].0[0])) {
                path.push(v);
                continue;
            }
            self.cross(&steps, i, &mut path, &mut whole_done, &mut walker);
        }
        Outcome::Witness(path)
    }

    /// Appends to `path` the crossing of contracted location `steps[i]`:
    /// from its entry, visiting what the trackers matched on entry (and
    /// the UTL elements of a whole component, once), to the next step's
    /// node or, last, to a target.
    fn cross(
        &self,
        steps: &[WitnessStep],
        i: usize,
        path: &mut Vec<u32>,
        whole_done: &mut Vec<SccId>,
        walker: &mut Walker,
    ) {
        let Structure { g, ends, .. } = *self.st;
        let entry = steps[i].1;
        let s = self
            .sub_of(LocId(steps[i].0[0]))
            .expect("a contracted location");
        let inside = |x: u32| self.sub.comp(x) == Some(s);
        path.push(entry);
        let mut goals = Goals::new(self.crossing_goals(steps, i, whole_done));
        goals.visit(entry);
        self.walk_goals(s, entry, &mut goals, path, walker);
        let out: Vec<u32> = match steps.get(i + 1) {
            Some(next) => vec![next.2.expect("a move into the next location")],
            None => self
                .sub
                .members_of(s)
                .iter()
                .copied()
                .filter(|&x| ends.is_target(x))
                .collect(),
        };
        let cur = *path.last().expect("entry");
        path.extend(
            walker
                .walk(g, cur, |x| out.contains(&x), inside, true, usize::MAX)
                .unwrap_or_default(),
        );
    }

    /// What the crossing of contracted location `steps[i]` must visit, as
    /// independent sequences of node sets: the elements every tracker
    /// matched on entry, and the UTL elements of a whole component (on its
    /// one crossing: the first, then added to `whole_done`).
    fn crossing_goals(
        &self,
        steps: &[WitnessStep],
        i: usize,
        whole_done: &mut Vec<SccId>,
    ) -> Vec<Vec<Vec<u32>>> {
        let qs = &steps[i].0;
        let (l, k_o) = (LocId(qs[0]), self.k_o);
        let s = self.sub_of(l).expect("a contracted location");
        let inside = |x: u32| self.sub.comp(x) == Some(s);
        let mut seqs: Vec<Vec<Vec<u32>>> = Vec::new();
        for (j, t) in self.trackers.iter().enumerate() {
            let from = if i == 0 {
                0
            } else {
                steps[i - 1].0[1 + k_o + j] as usize
            };
            let to = qs[1 + k_o + j] as usize;
            for k in 0..t.alts.first().map_or(0, |a| a.len()) {
                let seq: Vec<Vec<u32>> = (from..to)
                    .flat_map(|pos| {
                        t.alts[pos][k]
                            .iter()
                            .map(|set| set.iter().copied().filter(|&x| inside(x)).collect())
                    })
                    .collect();
                seqs.push(seq);
            }
        }
        let c = self.comp_of_loc(l);
        if self.whole(c) && !whole_done.contains(&c) {
            whole_done.push(c);
            for vec in &self.sp.vectors {
                seqs.push(
                    vec.iter()
                        .copied()
                        .filter(|&e| inside(e))
                        .map(|e| vec![e])
                        .collect(),
                );
            }
        }
        seqs
    }

    /// Extends `path` (inside sub-component `s`, entered at `entry`) until
    /// it has visited every goal: to the nearest node some sequence needs
    /// next while that is cheap; when the next goal is far, through the
    /// entry along two BFS trees (into it and out of it).
    fn walk_goals(
        &self,
        s: SubId,
        entry: u32,
        goals: &mut Goals,
        path: &mut Vec<u32>,
        walker: &mut Walker,
    ) {
        let Structure { g, rg: g_rev, .. } = *self.st;
        let inside = |x: u32| self.sub.comp(x) == Some(s);
        let mut trees: Option<(Tree, Tree, Vec<u32>)> = None;
        while !goals.wanted.is_empty() {
            let cur = *path.last().expect("entry");
            if let Some(leg) = walker.walk(
                g,
                cur,
                |x| goals.wanted.contains_key(&x),
                inside,
                false,
                4096,
            ) {
                let x = *leg.last().expect("a goal");
                path.extend(leg);
                goals.visit(x);
                continue;
            }
            let (into, out_of, depth) = trees.get_or_insert_with(|| {
                let (into, _) = bfs_tree(g_rev, entry, inside);
                let (out_of, depth) = bfs_tree(g, entry, inside);
                (into, out_of, depth)
            });
            let Some(x) = goals
                .wanted
                .keys()
                .take(64)
                .copied()
                .min_by_key(|&x| depth[x as usize])
            else {
                break;
            };
            if depth[x as usize] == u32::MAX || into.parent(cur).is_none() && cur != entry {
                break; // cannot happen in a strongly connected location
            }
            let before = path.len();
            let up = |tree: &Tree, y: u32| tree.parent(y).expect("in the tree");
            let mut y = cur;
            while y != entry {
                y = up(into, y);
                path.push(y);
            }
            let mut down = Vec::new();
            let mut y = x;
            while y != entry {
                down.push(y);
                y = up(out_of, y);
            }
            path.extend(down.into_iter().rev());
            if path.len() == before {
                // Already at the goal: a fresh visit needs a cycle.
                path.extend(
                    walker
                        .walk(g, cur, |z| z == x, inside, false, usize::MAX)
                        .unwrap_or_default(),
                );
            }
            goals.visit(x);
        }
    }

    /// [`Mode::Classify`] after a complete exploration: "may run" from the
    /// co-reachable vertices, then (without antichains) "must run" by
    /// [`ContractedProduct::must_run`].
    fn classify(self) -> Result<Outcome, Stop> {
        let n = self.n;
        // Over-approximate co-reachability.
        let nv = self.acc.len();
        let rev = Csr::from_edges(
            nv,
            &self
                .edges
                .values()
                .map(|&(a, b)| (b.as_u32(), a.as_u32()))
                .collect::<Vec<_>>(),
        );
        let mut co = BitSet::new(nv);
        crate::algo::reach(
            &rev,
            self.acc
                .ids()
                .filter(|&v| self.acc[v])
                .map(VertexId::as_u32),
            |_| true,
            &mut co,
        );
        if co.count() == 0 {
            return Ok(Outcome::Impossible);
        }
        let mut may = BitSet::new(n as usize);
        for v in co.iter() {
            match self.place(LocId(self.keys[v * self.width])) {
                Place::Node(l) => {
                    may.insert(l as usize);
                }
                Place::Sub(s) => {
                    for &x in self.sub.members_of(s) {
                        may.insert(x as usize);
                    }
                }
            }
        }
        let mut m = Must {
            must: BitSet::new(n as usize),
            unsure: BitSet::new(n as usize),
            held_decided: 0,
            held_left: 0,
            checks: 0,
        };
        if self.subsume {
            for v in 0..n as usize {
                m.unsure.insert(v);
            }
        } else {
            self.must_run(&co, &mut m);
        }
        Ok(Outcome::Classified(Coarse {
            may,
            must: m.must,
            unsure: m.unsure,
            vertices: nv,
            trackers: self.trackers.len(),
            held_decided: m.held_decided - m.held_left,
            held_left: m.held_left,
            checks: m.checks,
            exact: !self.subsume,
        }))
    }

    /// "Must run" over the trimmed product (vertices in `co`): a node that
    /// is a location of its own runs iff its vertices cut the trimmed
    /// graph (root to sink); the members of contracted locations by
    /// [`ContractedProduct::held`] (locations with element requirements,
    /// or crossed many times) or [`ContractedProduct::crossings`].
    fn must_run(&self, co: &BitSet, m: &mut Must) {
        let n = self.n;
        let live = |v: VertexId| co.contains(v.index());
        let split = SplitGraph::new(&self.initial, &self.acc, &self.edges, live);
        let cuts = Cuts::new(&split);
        // The vertices of the split graph at each location, if on some
        // root-to-sink path (a copy whose crossing cannot happen is not).
        let mut at: HashMap<LocId, Vec<u32>> = HashMap::new();
        for x in 0..cuts.nh as u32 {
            let Some(b) = split.base[x as usize] else {
                continue;
            };
            if cuts.fwd.contains(x as usize) && cuts.bwd.contains(x as usize) {
                at.entry(self.loc(b)).or_default().push(x);
            }
        }
        // Concrete entry and exit nodes of every contracted vertex, in one
        // pass over the edges.
        let mut ends_of: HashMap<VertexId, (Vec<u32>, Vec<u32>)> = HashMap::new();
        for (i, &(a, b)) in self.edges.iter() {
            if !(live(a) && live(b)) {
                continue;
            }
            if self.sub_of(self.loc(b)).is_some() {
                ends_of.entry(b).or_default().0.push(self.edge_nodes[i].1);
            }
            if self.sub_of(self.loc(a)).is_some() {
                ends_of.entry(a).or_default().1.push(self.edge_nodes[i].0);
            }
        }
        let ctx = Trimmed {
            split: &split,
            cuts: &cuts,
            ends_of: &ends_of,
        };
        let mandatory = self.mandatory(&at, &cuts, &mut m.must);
        // Elements the trackers require inside each contracted location.
        let mut holds = IdVec::filled(self.sub.count(), false);
        for t in &self.trackers {
            for e in &t.locs {
                for &l in e {
                    if let Some(s) = self.sub_of(l) {
                        holds[s] = true;
                    }
                }
            }
        }
        // UTL elements must run (inside a fully silent component, on its
        // one crossing). The start and the crash are not required of every
        // crossing: they are entries and exits of the right vertices.
        let mut required = BitSet::new(n as usize);
        for &e in self.sp.vectors.iter().flatten() {
            required.insert(e as usize);
        }
        let mut witness_path: Option<Vec<Step>> = None;
        for (&l, states) in &at {
            let Some(s) = self.sub_of(l) else {
                continue;
            };
            // A location that is not a whole component may be crossed many
            // times on one path, and which crossing can avoid a member then
            // depends on the others: decide it on whole paths. (So must a
            // location with element requirements.)
            if holds[s] || !self.whole(self.comp_of_loc(l)) {
                if !cuts.cut(states) {
                    // Some consistent path avoids the location: every
                    // member is avoidable, and Maybe is exact.
                    continue;
                }
                let path = witness_path.get_or_insert_with(|| product_path(&split, &self.edges));
                let mandatory = mandatory.get(&s).map_or(&[][..], |m| &m[..]);
                self.held(&ctx, l, states, mandatory, path, m);
                continue;
            }
            if !cuts.cut(states) {
                // Some consistent path avoids the location altogether.
                continue;
            }
            self.crossings(&ctx, l, states, &required, m);
        }
    }

    /// Node sets every path visits inside one contracted location, per
    /// sub-component: UTL elements and trace elements all of whose live
    /// nodes lie in it, the start, and the crash; also, for each node
    /// that is a location of its own and must run (added to `must`), its
    /// usable predecessors (successors) when they all lie in one
    /// contracted location.
    fn mandatory(
        &self,
        at: &HashMap<LocId, Vec<u32>>,
        cuts: &Cuts<'_>,
        must: &mut BitSet,
    ) -> HashMap<SubId, Vec<Vec<u32>>> {
        let Structure {
            g,
            rg: g_rev,
            core,
            seg,
            ends,
            start,
        } = *self.st;
        let (sp, sccs) = (self.sp, &core.sccs);
        let mut mandatory: HashMap<SubId, Vec<Vec<u32>>> = HashMap::new();
        let targets: Vec<u32> = match &sp.targets {
            Some(t) => t.iter().copied().filter(|&v| self.alive(v)).collect(),
            None => Vec::new(),
        };
        let elements = sp
            .vectors
            .iter()
            .flatten()
            .map(|&e| vec![e])
            .chain(sp.traces.iter().flatten().map(|e| {
                e.nodes()
                    .iter()
                    .map(|x| x.as_u32())
                    .filter(|&v| self.alive(v))
                    .collect()
            }))
            .chain([vec![start], targets]);
        for nodes in elements {
            let Some(&first) = nodes.first() else {
                continue;
            };
            let l = self.loc_of(first);
            if let Some(s) = self.sub_of(l) {
                if nodes.iter().all(|&v| self.loc_of(v) == l) {
                    mandatory.entry(s).or_default().push(nodes);
                }
            }
        }
        // Nodes that are locations of their own first: they must run iff
        // their vertices cut the trimmed graph. A path reaches such a node
        // from one of its predecessors and (unless it ends there) leaves it
        // to one of its successors; when all of those lie in one contracted
        // location, that is one more set the location must visit.
        let usable = |a: u32, b: u32| {
            self.alive(a) && self.alive(b) && {
                let comp = |v: u32| sccs.comp(v).expect("a live node");
                let (ca, cb) = (comp(a), comp(b));
                ca == cb || seg.usable(ca, cb)
            }
        };
        for (&l, states) in at {
            let Place::Node(l) = self.place(l) else {
                continue;
            };
            if !cuts.cut(states) {
                continue;
            }
            must.insert(l as usize);
            let preds: Vec<u32> = g_rev
                .succs(l)
                .iter()
                .copied()
                .filter(|&p| usable(p, l))
                .collect();
            let succs: Vec<u32> = g
                .succs(l)
                .iter()
                .copied()
                .filter(|&w| usable(l, w))
                .collect();
            for (set, needed) in [(preds, l != start), (succs, !ends.is_target(l))] {
                if let Some(&first) = set.first() {
                    let loc = self.loc_of(first);
                    match self.sub_of(loc) {
                        Some(s) if needed && set.iter().all(|&v| self.loc_of(v) == loc) => {
                            mandatory.entry(s).or_default().push(set);
                        }
                        _ => {}
                    }
                }
            }
        }
        mandatory
    }

    /// Entries and exits of the crossing of split vertex `x` at a
    /// contracted location with these members.
    fn crossing_ends(
        &self,
        ctx: &Trimmed<'_>,
        x: u32,
        members: &[u32],
    ) -> (HashSet<u32>, HashSet<u32>) {
        let (b, kind) = (ctx.split.base[x as usize], ctx.split.kind[x as usize]);
        let none = (Vec::new(), Vec::new());
        let es = b.and_then(|b| ctx.ends_of.get(&b)).unwrap_or(&none);
        let entries = if kind.starts() {
            [self.st.start].into_iter().collect()
        } else {
            es.0.iter().copied().collect()
        };
        let exits = if kind.ends() {
            members
                .iter()
                .copied()
                .filter(|&v| self.st.ends.is_target(v))
                .collect()
        } else {
            es.1.iter().copied().collect()
        };
        (entries, exits)
    }

    /// The members of contracted location `l` that every consistent path
    /// crosses and that holds element requirements (or is crossed many
    /// times), decided on whole paths by [`Held`]; what it leaves, by exact
    /// [`Mode::Avoid`] explorations while `limits.checks` allows.
    fn held(
        &self,
        ctx: &Trimmed<'_>,
        l: LocId,
        states: &[u32],
        mandatory: &[Vec<u32>],
        path: &[Step],
        m: &mut Must,
    ) {
        let s = self.sub_of(l).expect("a contracted location");
        let members = self.sub.members_of(s);
        let (mut entries, mut exits) = (HashSet::new(), HashSet::new());
        for &x in states {
            let (a, b) = self.crossing_ends(ctx, x, members);
            entries.extend(a);
            exits.extend(b);
        }
        let held = Held {
            g: self.st.g,
            members,
            sub: &self.sub,
            s,
            l,
            entries: &entries,
            exits: &exits,
            start: self.st.start,
            is_target: &|v| self.st.ends.is_target(v),
            mandatory,
            // A whole component's UTL elements have no trackers: its
            // one crossing visits them, in order.
            untracked: if self.whole(self.comp_of_loc(l)) {
                self.sp
                    .vectors
                    .iter()
                    .flatten()
                    .copied()
                    .filter(|&e| self.loc_of(e) == l)
                    .collect()
            } else {
                Vec::new()
            },
            path,
            edge_nodes: &self.edge_nodes,
            keys: &self.keys,
            width: self.width,
            k_o: self.k_o,
            trackers: &self.trackers,
        };
        let (always, left) = held.decide();
        for v in always {
            m.must.insert(v as usize);
        }
        // Exact checks for what is left, one per class, while allowed.
        for class in left {
            let verdict = if m.checks < self.limits.checks {
                m.checks += 1;
                explore(self.st, self.sp, self.limits, Mode::Avoid(class[0])).ok()
            } else {
                None
            };
            for v in class {
                match verdict {
                    Some(Outcome::Impossible) => {
                        m.must.insert(v as usize);
                    }
                    Some(_) => {}
                    None => {
                        m.unsure.insert(v as usize);
                        m.held_left += 1;
                    }
                }
            }
        }
        m.held_decided += members.len();
    }

    /// The members of contracted location `l`, a whole component crossed
    /// once that every path crosses: per product vertex here, which members
    /// its crossings cannot avoid (the crossing analysis); a member must
    /// run iff the vertices where it cannot be avoided cut the trimmed
    /// graph. Members are grouped by that set of vertices (partition
    /// refinement, one vertex at a time).
    fn crossings(
        &self,
        ctx: &Trimmed<'_>,
        l: LocId,
        states: &[u32],
        required: &BitSet,
        m: &mut Must,
    ) {
        let s = self.sub_of(l).expect("a contracted location");
        let members = self.sub.members_of(s);
        let k = members.len();
        let mut class = vec![0u32; k];
        let mut class_states: Vec<Vec<u32>> = vec![Vec::new()];
        let mut budget = 200_000_000u64;
        let mut stats = crate::structure::BulkStats::default();
        for &sv in states {
            let (entries, exits) = self.crossing_ends(ctx, sv, members);
            // The UTL elements of a fully silent component are all
            // visited on its one crossing.
            let crossing = Crossing::new(
                self.st.g,
                members,
                |v| self.sub.comp(v) == Some(s),
                |v| entries.contains(&v),
                |v| exits.contains(&v),
                &self.sp.vectors,
            );
            let verdicts = crossing.classify(required, 4, &mut budget, &mut stats);
            let mut remap: HashMap<(u32, bool), u32> = HashMap::new();
            let mut next: Vec<Vec<u32>> = Vec::new();
            for (i, v) in verdicts.into_iter().enumerate() {
                if v == Verdict::Undecided {
                    m.unsure.insert(members[i] as usize);
                }
                let key = (class[i], v == Verdict::Always);
                class[i] = *remap.entry(key).or_insert_with(|| {
                    let mut st = class_states[key.0 as usize].clone();
                    if key.1 {
                        st.push(sv);
                    }
                    next.push(st);
                    next.len() as u32 - 1
                });
            }
            class_states = next;
        }
        let always: Vec<bool> = class_states
            .iter()
            .map(|st| !st.is_empty() && ctx.cuts.cut(st))
            .collect();
        for (i, &v) in members.iter().enumerate() {
            if always[class[i] as usize] && !m.unsure.contains(v as usize) {
                m.must.insert(v as usize);
            }
        }
    }
}

/// The goals of a crossing's walk: independent sequences of node sets,
/// each visited in order (one node of each set); one visit advances every
/// sequence that needs the node visited next.
struct Goals {
    seqs: Vec<Vec<Vec<u32>>>,
    /// Per sequence, the position of the set it needs next.
    ptr: Vec<usize>,
    /// The sequences that need each node next. A fixed hasher: which goals
    /// come first is part of the witness, and witnesses are deterministic.
    wanted: FxHashMap<u32, Vec<usize>>,
}

impl Goals {
    fn new(seqs: Vec<Vec<Vec<u32>>>) -> Goals {
        let mut wanted: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
        for (k, seq) in seqs.iter().enumerate() {
            if let Some(first) = seq.first() {
                for &x in first {
                    wanted.entry(x).or_default().push(k);
                }
            }
        }
        Goals {
            ptr: vec![0usize; seqs.len()],
            seqs,
            wanted,
        }
    }

    /// A visit of node `x`.
    fn visit(&mut self, x: u32) {
        let Some(ks) = self.wanted.get(&x).cloned() else {
            return;
        };
        for k in ks {
            for y in &self.seqs[k][self.ptr[k]] {
                if let Some(list) = self.wanted.get_mut(y) {
                    list.retain(|&z| z != k);
                    if list.is_empty() {
                        self.wanted.remove(y);
                    }
                }
            }
            self.ptr[k] += 1;
            if let Some(next) = self.seqs[k].get(self.ptr[k]) {
                for &y in next {
                    self.wanted.entry(y).or_default().push(k);
                }
            }
        }
    }
}

/// Whether node `v` can be on a consistent path (its component is alive)
/// and is not `skip`.
fn alive_in(st: &Structure<'_>, skip: Option<u32>, v: u32) -> bool {
    st.core.sccs.comp(v).is_some_and(|c| st.seg.alive[c]) && skip != Some(v)
}

/// "Must run" so far, and its counters.
struct Must {
    must: BitSet,
    unsure: BitSet,
    held_decided: usize,
    held_left: usize,
    checks: usize,
}

/// Cuts of the split trimmed product: which sets of its vertices every
/// root-to-sink path meets.
struct Cuts<'t> {
    hg: &'t Csr,
    nh: usize,
    root: u32,
    sink: u32,
    /// Vertices that dominate the sink.
    dom_sink: BitSet,
    /// Reachable from the root, and reaching the sink.
    fwd: BitSet,
    bwd: BitSet,
}

impl<'t> Cuts<'t> {
    fn new(split: &'t SplitGraph) -> Cuts<'t> {
        let (hg, root, sink) = (&split.hg, split.root, split.sink);
        let nh = hg.num_vertices();
        let hr = hg.reversed();
        let idom = crate::algo::dominator_tree(hg, &hr, root, |_| true);
        let mut dom_sink = BitSet::new(nh);
        for x in idom.up_from(idom.parent(sink), root) {
            dom_sink.insert(x as usize);
        }
        let (mut fwd, mut bwd) = (BitSet::new(nh), BitSet::new(nh));
        crate::algo::reach(hg, [root], |_| true, &mut fwd);
        crate::algo::reach(&hr, [sink], |_| true, &mut bwd);
        Cuts {
            hg,
            nh,
            root,
            sink,
            dom_sink,
            fwd,
            bwd,
        }
    }

    /// Whether every root-to-sink path meets `set`.
    fn cut(&self, set: &[u32]) -> bool {
        if set.iter().any(|&v| self.dom_sink.contains(v as usize)) {
            return true;
        }
        if set.len() == 1 {
            return false;
        }
        let blocked: HashSet<u32> = set.iter().copied().collect();
        let mut seen = BitSet::new(self.nh);
        crate::algo::reach(self.hg, [self.root], |v| !blocked.contains(&v), &mut seen);
        !seen.contains(self.sink as usize)
    }
}

/// The trimmed product as the must-run phases read it.
struct Trimmed<'t> {
    split: &'t SplitGraph,
    cuts: &'t Cuts<'t>,
    /// Per contracted vertex, its concrete entry and exit nodes.
    ends_of: &'t HashMap<VertexId, (Vec<u32>, Vec<u32>)>,
}

/// One vertex of a product path, with the explored edges it is entered
/// and left by (`None`: entered as an initial vertex, left to the sink).
pub(crate) struct Step {
    v: VertexId,
    in_edge: Option<EdgeId>,
    out_edge: Option<EdgeId>,
}

/// How a crossing of a product vertex begins and ends.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Kind {
    /// Entered and left by product edges.
    Mid,
    /// Begins at the start node, left by a product edge.
    First,
    /// Entered by a product edge, ends at a crash node.
    Last,
    /// Begins at the start node and ends at a crash node.
    Only,
}

impl Kind {
    fn starts(self) -> bool {
        matches!(self, Kind::First | Kind::Only)
    }
    fn ends(self) -> bool {
        matches!(self, Kind::Last | Kind::Only)
    }
}

/// The trimmed contracted product with every vertex split by how its
/// crossing begins and ends, so that "the crossing of this vertex must
/// visit n" composes exactly with cuts: a vertex `v` is itself the `Mid`
/// copy; initial vertices get a `First` copy (and an `Only` copy if also
/// accepting) entered from the virtual root, accepting vertices a `Last`
/// copy leading to the virtual sink. Every root-to-sink path of the
/// trimmed product is one path here, and back.
struct SplitGraph {
    hg: Csr,
    root: u32,
    sink: u32,
    /// Product vertex of each split vertex (none for root and sink).
    base: Vec<Option<VertexId>>,
    kind: Vec<Kind>,
}

impl SplitGraph {
    fn new(
        initial: &[VertexId],
        acc: &IdVec<VertexId, bool>,
        edges: &IdVec<EdgeId, (VertexId, VertexId)>,
        live: impl Fn(VertexId) -> bool,
    ) -> SplitGraph {
        let nv = acc.len();
        let mut base: Vec<Option<VertexId>> = acc.ids().map(Some).chain([None, None]).collect();
        let mut kind = vec![Kind::Mid; nv + 2];
        let (root, sink) = (nv as u32, nv as u32 + 1);
        let mut h: Vec<(u32, u32)> = Vec::new();
        let add = |b: VertexId, k: Kind, base: &mut Vec<Option<VertexId>>, kind: &mut Vec<Kind>| {
            base.push(Some(b));
            kind.push(k);
            base.len() as u32 - 1
        };
        let mut first: HashMap<VertexId, u32> = HashMap::new();
        let mut last: HashMap<VertexId, u32> = HashMap::new();
        for &i in initial {
            if !live(i) || first.contains_key(&i) {
                continue;
            }
            let f = add(i, Kind::First, &mut base, &mut kind);
            first.insert(i, f);
            h.push((root, f));
            if acc[i] {
                let o = add(i, Kind::Only, &mut base, &mut kind);
                h.push((root, o));
                h.push((o, sink));
            }
        }
        for v in acc.ids() {
            if live(v) && acc[v] {
                let l = add(v, Kind::Last, &mut base, &mut kind);
                last.insert(v, l);
                h.push((l, sink));
            }
        }
        for &(a, b) in edges.values() {
            if !(live(a) && live(b)) {
                continue;
            }
            for from in [Some(a.as_u32()), first.get(&a).copied()]
                .into_iter()
                .flatten()
            {
                for to in [Some(b.as_u32()), last.get(&b).copied()]
                    .into_iter()
                    .flatten()
                {
                    h.push((from, to));
                }
            }
        }
        h.sort_unstable();
        h.dedup();
        SplitGraph {
            hg: Csr::from_edges(base.len(), &h),
            root,
            sink,
            base,
            kind,
        }
    }
}

/// A shortest root-to-sink path of the split trimmed product, as product
/// vertices with the explored edges between them.
fn product_path(split: &SplitGraph, edges: &IdVec<EdgeId, (VertexId, VertexId)>) -> Vec<Step> {
    let (hg, root, sink) = (&split.hg, split.root, split.sink);
    let mut walker = Walker::new(hg.num_vertices());
    let Some(mut xs) = walker.walk(hg, root, |x| x == sink, |_| true, false, usize::MAX) else {
        return Vec::new();
    };
    xs.pop(); // the sink
    let vs: Vec<VertexId> = xs
        .iter()
        .map(|&x| split.base[x as usize].expect("a product vertex"))
        .collect();
    // One explored edge for every consecutive pair, in one pass.
    let want: HashMap<(VertexId, VertexId), usize> = vs
        .windows(2)
        .enumerate()
        .map(|(i, p)| ((p[0], p[1]), i))
        .collect();
    let mut found = vec![None; vs.len().saturating_sub(1)];
    for (e, &(a, b)) in edges.iter() {
        if let Some(&i) = want.get(&(a, b)) {
            if found[i].is_none() {
                found[i] = Some(e);
            }
        }
    }
    (0..vs.len())
        .map(|i| Step {
            v: vs[i],
            in_edge: i.checked_sub(1).and_then(|j| found[j]),
            out_edge: found.get(i).copied().flatten(),
        })
        .collect()
}

/// A contracted location that holds element requirements and that every
/// consistent path crosses, with what is needed to decide its members.
struct Held<'a> {
    g: &'a Csr,
    members: &'a [u32],
    sub: &'a Sccs<SubId>,
    s: SubId,
    l: LocId,
    entries: &'a std::collections::HashSet<u32>,
    exits: &'a std::collections::HashSet<u32>,
    start: u32,
    is_target: &'a dyn Fn(u32) -> bool,
    mandatory: &'a [Vec<u32>],
    /// UTL elements without trackers that the (single) crossing visits.
    untracked: Vec<u32>,
    path: &'a [Step],
    edge_nodes: &'a IdVec<EdgeId, (u32, u32)>,
    keys: &'a [u32],
    width: usize,
    k_o: usize,
    trackers: &'a [Tracker],
}

impl Held<'_> {
    /// Members that surely run, and members left undecided (in classes
    /// that share their fate); the others are avoidable.
    ///
    /// * Every crossing goes from one of the entries the trimmed product
    ///   uses to one of its exits, and every path matches each mandatory
    ///   element here: members that dominate or post-dominate the exits,
    ///   the entries or a whole mandatory set are unavoidable (sound whether
    ///   the path matches the elements greedily or not).
    /// * A member is avoidable if some consistent path misses it: take one
    ///   path of the trimmed product and realise each of its visits here as
    ///   a star walk (entry → root → goal → root → … → exit) that matches
    ///   exactly the elements the product matched on that entry; a few roots
    ///   give a few such paths.
    fn decide(&self) -> (Vec<u32>, Vec<Vec<u32>>) {
        let crossing = Crossing::new(
            self.g,
            self.members,
            |v| self.sub.comp(v) == Some(self.s),
            |v| self.entries.contains(&v),
            |v| self.exits.contains(&v),
            &[],
        );
        let local_set =
            |set: &[u32]| -> Vec<u32> { set.iter().filter_map(|&v| crossing.local(v)).collect() };
        let sets: Vec<Vec<u32>> = self.mandatory.iter().map(|m| local_set(m)).collect();
        let must = crossing.unavoidable(&sets);
        let k = self.members.len();
        let mut candidates = BitSet::new(k);
        for i in 0..k {
            if !must.contains(i) {
                candidates.insert(i);
            }
        }
        if let Some(legs) = self.legs(&crossing) {
            crate::structure::star_rounds(k, legs[0].entry, 4, &mut candidates, |root, avoid| {
                crossing.star_legs(root, &legs, avoid)
            });
            // One star per remaining member, with trees that avoid just it
            // (none where the dominators show every such star visits it).
            let todo: Vec<usize> = candidates.iter().collect();
            let (entry, exit) = (legs[0].entry, legs[0].exit);
            let on_every = crossing.star_unavoidable(entry, &legs);
            for i in todo {
                if !candidates.contains(i) {
                    continue;
                }
                let root = if i as u32 == entry { exit } else { entry };
                if root == entry && on_every.contains(i) {
                    continue;
                }
                let mut avoid = BitSet::new(k);
                avoid.insert(i);
                if let Some(w) = crossing
                    .star_legs(root, &legs, &avoid)
                    .filter(|w| !w.contains(i))
                {
                    let left: Vec<usize> = candidates.iter().filter(|&j| !w.contains(j)).collect();
                    for j in left {
                        candidates.remove(j);
                    }
                }
            }
        }
        // Members on a straight stretch share their fate: if u's only way on
        // is w and w's only way in is u (neither leaves nor enters the
        // location there), every crossing visits both or neither.
        let (lg, lrg) = crossing.local_graphs();
        let mut class: Vec<u32> = (0..k as u32).collect();
        fn find(class: &mut [u32], mut x: u32) -> u32 {
            while class[x as usize] != x {
                class[x as usize] = class[class[x as usize] as usize];
                x = class[x as usize];
            }
            x
        }
        for u in 0..k as u32 {
            if let [w] = lg.succs(u) {
                if (*w as usize) < k && lrg.succs(*w) == [u] {
                    let (a, b) = (find(&mut class, u), find(&mut class, *w));
                    class[a.max(b) as usize] = a.min(b);
                }
            }
        }
        // A class is settled by any settled member.
        const OPEN: u8 = 0;
        const ALWAYS: u8 = 1;
        const AVOIDABLE: u8 = 2;
        let mut fate = vec![OPEN; k];
        for i in 0..k {
            let f = if must.contains(i) {
                ALWAYS
            } else if !candidates.contains(i) {
                AVOIDABLE
            } else {
                continue;
            };
            let r = find(&mut class, i as u32) as usize;
            fate[r] = fate[r].max(f);
        }
        let mut always = Vec::new();
        let mut left: HashMap<u32, Vec<u32>> = HashMap::new();
        for i in 0..k {
            let r = find(&mut class, i as u32);
            match fate[r as usize] {
                ALWAYS => always.push(self.members[i]),
                AVOIDABLE => {}
                _ => left.entry(r).or_default().push(self.members[i]),
            }
        }
        let mut left: Vec<Vec<u32>> = left.into_values().collect();
        left.sort();
        (always, left)
    }

    /// The visits of the witness path to this location, as legs of the
    /// local crossing graph; `None` if the path does not visit it.
    fn legs(&self, crossing: &Crossing<'_>) -> Option<Vec<Leg>> {
        let local = |v: u32| crossing.local(v);
        let progress =
            |v: VertexId, j: usize| self.keys[v.index() * self.width + 1 + self.k_o + j] as usize;
        let mut legs = Vec::new();
        for (i, st) in self.path.iter().enumerate() {
            if LocId(self.keys[st.v.index() * self.width]) != self.l {
                continue;
            }
            let entry = match st.in_edge {
                None if i == 0 => self.start,
                None => return None,
                Some(e) => self.edge_nodes[e].1,
            };
            let exit = match st.out_edge {
                Some(e) => self.edge_nodes[e].0,
                None if i + 1 == self.path.len() => self
                    .members
                    .iter()
                    .copied()
                    .find(|&v| (self.is_target)(v))?,
                None => return None,
            };
            let mut goals = Vec::new();
            for (j, t) in self.trackers.iter().enumerate() {
                let from = if i == 0 {
                    0
                } else {
                    progress(self.path[i - 1].v, j)
                };
                for pos in from..progress(st.v, j) {
                    for set in t.alts[pos].iter().flatten() {
                        goals.push(set.iter().filter_map(|&v| local(v)).collect());
                    }
                }
            }
            if legs.is_empty() {
                goals.extend(
                    self.untracked
                        .iter()
                        .map(|&e| local(e).into_iter().collect()),
                );
            }
            legs.push(Leg {
                entry: local(entry)?,
                goals,
                exit: local(exit)?,
            });
        }
        (!legs.is_empty()).then_some(legs)
    }
}
