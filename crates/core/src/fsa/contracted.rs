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
use super::product::{estimated_bytes, Stop, Touch};
use super::Split;
use crate::algo::{bfs_tree, Sccs, Walker, NONE};
use crate::graph::{BitSet, Csr};
use crate::structure::{Core, Crossing, Ends, Leg, Segments, Verdict};
use std::collections::{BinaryHeap, HashMap};
use std::time::Instant;

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
    locs: Vec<Vec<u32>>,
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
pub(crate) fn explore(
    st: &Structure<'_>,
    sp: &Split,
    limits: CoarseLimits,
    mode: Mode,
) -> Result<Outcome, Stop> {
    let Structure {
        g,
        rg: g_rev,
        core,
        seg,
        ends,
        start,
    } = *st;
    let n = g.num_vertices() as u32;
    let sccs = &core.sccs;
    let (subsume, skip, early) = match mode {
        Mode::Classify { subsume } => (subsume, NONE, false),
        Mode::Avoid(v) => (true, v, true),
        Mode::Check { .. } => (true, NONE, true),
    };
    let CoarseLimits {
        max_states,
        deadline,
        max_memory,
        ..
    } = limits;
    let alive = |v: u32| {
        let c = sccs.comp[v as usize];
        c != NONE && seg.alive[c as usize] && v != skip
    };
    // Loud nodes: where an automaton other than a subsequence automaton acts.
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
    // Silent sub-components.
    let sub = Sccs::compute(g, |v| !all_loud && alive(v) && !loud.contains(v as usize));
    let loc_of = |v: u32| -> u32 {
        let s = sub.comp[v as usize];
        if s != NONE && !sub.trivial[s as usize] {
            n + s
        } else {
            v
        }
    };
    // A component is fully silent when it is one silent sub-component.
    // (Computed once for all components: it is asked per element.)
    let whole_comp: Vec<bool> = (0..sccs.count)
        .map(|c| {
            let m = sccs.members_of(c);
            !sccs.trivial[c as usize]
                && loc_of(m[0]) >= n
                && m.iter().all(|&v| loc_of(v) == loc_of(m[0]))
        })
        .collect();
    let whole = |c: u32| -> bool { whole_comp[c as usize] };
    // Trackers over locations, each element with the node sets it stands
    // for (one node of each must be visited where the element is matched).
    let mut raw: Vec<Tracker> = Vec::new();
    for vec in &sp.vectors {
        let mut t = Tracker::default();
        for &e in vec {
            let c = sccs.comp[e as usize];
            if !sccs.trivial[c as usize] && !whole(c) {
                t.locs.push(vec![loc_of(e)]);
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
                .filter(|&v| alive(v))
                .collect();
            let mut locs: Vec<u32> = nodes.iter().map(|&v| loc_of(v)).collect();
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
            if locs.len() == 1 && locs[0] >= n && m.locs.last() == Some(&locs) {
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
    let k_o = others.len();
    let width = 1 + k_o + trackers.len();
    let has_target: Vec<bool> = (0..sub.count)
        .map(|s| sub.members_of(s).iter().any(|&v| ends.is_target(v)))
        .collect();
    let comp_of_loc = |l: u32| {
        if l < n {
            sccs.comp[l as usize]
        } else {
            sccs.comp[sub.members_of(l - n)[0] as usize]
        }
    };

    // Steps into location `l` through node `w`; None if rejected.
    let step = |qs: &[u32], w: u32, l: u32, out: &mut Vec<u32>| -> bool {
        out.clear();
        out.push(l);
        out.extend_from_slice(&qs[1..1 + k_o]);
        if !touch.step(&others, &mut out[1..], w) {
            return false;
        }
        for (t, &p) in trackers.iter().zip(&qs[1 + k_o..]) {
            let mut p = p as usize;
            let t = &t.locs;
            if l >= n {
                while p < t.len() && t[p].binary_search(&l).is_ok() {
                    p += 1;
                }
            } else if p < t.len() && t[p].binary_search(&l).is_ok() {
                p += 1;
            }
            out.push(p as u32);
        }
        true
    };
    let accepting = |qs: &[u32]| -> bool {
        let l = qs[0];
        let at_end = if l < n {
            ends.is_target(l) && seg.ends(sccs.comp[l as usize], core.m)
        } else {
            has_target[(l - n) as usize] && seg.ends(comp_of_loc(l), core.m)
        };
        at_end
            && others
                .iter()
                .zip(&qs[1..1 + k_o])
                .all(|(a, &q)| a.accepting[q as usize])
            && trackers
                .iter()
                .zip(&qs[1 + k_o..])
                .all(|(t, &p)| p as usize == t.locs.len())
    };
    let progress = |qs: &[u32]| -> u64 { qs[1 + k_o..].iter().map(|&p| u64::from(p)).sum() };
    let covers = |a: &[u32], b: &[u32]| {
        a[0] == b[0]
            && others
                .iter()
                .zip(a[1..1 + k_o].iter().zip(&b[1..1 + k_o]))
                .all(|(d, (&x, &y))| d.covers(x, y))
            && a[1 + k_o..].iter().zip(&b[1 + k_o..]).all(|(x, y)| x >= y)
    };

    let mut keys: Vec<u32> = Vec::new();
    let mut index: HashMap<Box<[u32]>, u32> = HashMap::new();
    let mut by_loc: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut edges: Vec<(u32, u32)> = Vec::new();
    let mut edge_nodes: Vec<(u32, u32)> = Vec::new();
    let mut acc: Vec<bool> = Vec::new();
    let mut heap: BinaryHeap<(u64, std::cmp::Reverse<u32>)> = BinaryHeap::new();
    let key = |keys: &Vec<u32>, v: u32| keys[v as usize * width..(v as usize + 1) * width].to_vec();
    // How each vertex was first reached: (vertex, from node, to node).
    let mut parent: Vec<(u32, u32, u32)> = Vec::new();
    let mut intern = |qs: &[u32],
                      by: (u32, u32, u32),
                      keys: &mut Vec<u32>,
                      heap: &mut BinaryHeap<(u64, std::cmp::Reverse<u32>)>,
                      acc: &mut Vec<bool>,
                      parent: &mut Vec<(u32, u32, u32)>|
     -> u32 {
        if let Some(&id) = index.get(qs) {
            return id;
        }
        if let Some(vs) = by_loc.get(&qs[0]).filter(|_| subsume) {
            for &v in vs {
                if covers(&keys[v as usize * width..(v as usize + 1) * width], qs) {
                    return v;
                }
            }
        }
        let id = acc.len() as u32;
        if early && accepting(qs) {
            // Mode::Avoid and Mode::Check: an accepting vertex is all we need.
            return NONE;
        }
        parent.push(by);
        keys.extend_from_slice(qs);
        index.insert(qs.into(), id);
        by_loc.entry(qs[0]).or_default().push(id);
        acc.push(accepting(qs));
        heap.push((progress(qs), std::cmp::Reverse(id)));
        id
    };

    // An accepting state `qs` reached by `by`: in Mode::Check, the witness
    // along the first-discovery tree (whose edges are real transitions).
    let found = |qs: &[u32],
                 by: (u32, u32, u32),
                 keys: &Vec<u32>,
                 parent: &Vec<(u32, u32, u32)>|
     -> Outcome {
        if !matches!(mode, Mode::Check { witness: true }) {
            return Outcome::Possible;
        }
        // (state, entry node, the move's from node) from the last back.
        let mut steps: Vec<(Vec<u32>, u32, u32)> = vec![(qs.to_vec(), by.2, by.1)];
        let mut v = by.0;
        while v != NONE {
            let (pv, from, w) = parent[v as usize];
            steps.push((key(keys, v), w, from));
            v = pv;
        }
        steps.reverse();
        let mut path: Vec<u32> = Vec::new();
        let mut whole_done: Vec<u32> = Vec::new();
        let mut walker = Walker::new(n as usize);
        for (i, (qs, entry, _)) in steps.iter().enumerate() {
            let l = qs[0];
            if l < n {
                path.push(l);
                continue;
            }
            let s = l - n;
            let inside = |x: u32| sub.comp[x as usize] == s;
            path.push(*entry);
            // What the crossing must visit, as independent sequences of node
            // sets: the elements every tracker matched on entry, and the
            // UTL elements of a whole component (on its one crossing).
            let mut seqs: Vec<Vec<Vec<u32>>> = Vec::new();
            for (j, t) in trackers.iter().enumerate() {
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
            let c = comp_of_loc(l);
            if whole(c) && !whole_done.contains(&c) {
                whole_done.push(c);
                for vec in &sp.vectors {
                    seqs.push(
                        vec.iter()
                            .copied()
                            .filter(|&e| inside(e))
                            .map(|e| vec![e])
                            .collect(),
                    );
                }
            }
            // Walk to the nearest node some sequence needs next, again and
            // again; one visit advances every sequence that needs it.
            let mut ptr = vec![0usize; seqs.len()];
            let mut wanted: HashMap<u32, Vec<usize>> = HashMap::new();
            for (k, seq) in seqs.iter().enumerate() {
                if let Some(first) = seq.first() {
                    for &x in first {
                        wanted.entry(x).or_default().push(k);
                    }
                }
            }
            let visit = |x: u32, wanted: &mut HashMap<u32, Vec<usize>>, ptr: &mut Vec<usize>| {
                let Some(ks) = wanted.get(&x).cloned() else {
                    return;
                };
                for k in ks {
                    for y in &seqs[k][ptr[k]] {
                        if let Some(list) = wanted.get_mut(y) {
                            list.retain(|&z| z != k);
                            if list.is_empty() {
                                wanted.remove(y);
                            }
                        }
                    }
                    ptr[k] += 1;
                    if let Some(next) = seqs[k].get(ptr[k]) {
                        for &y in next {
                            wanted.entry(y).or_default().push(k);
                        }
                    }
                }
            };
            visit(*entry, &mut wanted, &mut ptr);
            // Nearest first while that is cheap; when the next goal is far,
            // through the entry along two BFS trees (into it and out of it).
            let mut trees: Option<(Vec<u32>, Vec<u32>, Vec<u32>)> = None;
            while !wanted.is_empty() {
                let cur = *path.last().expect("entry");
                if let Some(leg) =
                    walker.walk(g, cur, |x| wanted.contains_key(&x), inside, false, 4096)
                {
                    let x = *leg.last().expect("a goal");
                    path.extend(leg);
                    visit(x, &mut wanted, &mut ptr);
                    continue;
                }
                let (into, out_of, depth) = trees.get_or_insert_with(|| {
                    let (into, _) = bfs_tree(g_rev, *entry, inside);
                    let (out_of, depth) = bfs_tree(g, *entry, inside);
                    (into, out_of, depth)
                });
                let Some(x) = wanted
                    .keys()
                    .take(64)
                    .copied()
                    .min_by_key(|&x| depth[x as usize])
                else {
                    break;
                };
                if depth[x as usize] == u32::MAX || into[cur as usize] == NONE && cur != *entry {
                    break; // cannot happen in a strongly connected location
                }
                let before = path.len();
                let mut y = cur;
                while y != *entry {
                    y = into[y as usize];
                    path.push(y);
                }
                let mut down = Vec::new();
                let mut y = x;
                while y != *entry {
                    down.push(y);
                    y = out_of[y as usize];
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
                visit(x, &mut wanted, &mut ptr);
            }
            let out: Vec<u32> = match steps.get(i + 1) {
                Some(next) => vec![next.2],
                None => sub
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
        Outcome::Witness(path)
    };

    // Initial vertices.
    let mut initial: Vec<u32> = Vec::new();
    let mut buf = Vec::new();
    if !alive(start) {
        return Ok(Outcome::Impossible);
    }
    // Every combination of initial states, lazily and under the limits.
    let combos = super::automaton::initial_combinations(&[NONE], others.iter().copied());
    for (i, mut c) in combos.enumerate() {
        if acc.len() > max_states {
            return Err(Stop::States(max_states));
        }
        if estimated_bytes(acc.len(), width, 0) > max_memory {
            return Err(Stop::Memory(max_memory));
        }
        if i % 1024 == 1023 && deadline.is_some_and(|d| Instant::now() > d) {
            return Err(Stop::Time);
        }
        c.extend(std::iter::repeat_n(0, trackers.len()));
        if step(&c, start, loc_of(start), &mut buf) {
            let qs = buf.clone();
            let id = intern(
                &qs,
                (NONE, NONE, start),
                &mut keys,
                &mut heap,
                &mut acc,
                &mut parent,
            );
            if id == NONE {
                return Ok(found(&qs, (NONE, NONE, start), &keys, &parent));
            }
            initial.push(id);
        }
    }
    let mut out_edges: HashMap<u32, Vec<(u32, u32)>> = HashMap::new();
    let mut popped = 0usize;
    while let Some((_, std::cmp::Reverse(v))) = heap.pop() {
        popped += 1;
        if acc.len() > max_states || keys.len() > max_states.saturating_mul(8) {
            return Err(Stop::States(max_states));
        }
        if estimated_bytes(acc.len(), width, edges.len()) > max_memory {
            return Err(Stop::Memory(max_memory));
        }
        if popped.is_multiple_of(1024) && deadline.is_some_and(|d| Instant::now() > d) {
            return Err(Stop::Time);
        }
        let qs = key(&keys, v);
        let l = qs[0];
        let moves: Vec<(u32, u32)> = if l < n {
            g.succs(l).iter().map(|&w| (l, w)).collect()
        } else {
            out_edges
                .entry(l)
                .or_insert_with(|| {
                    let s = l - n;
                    let mut e = Vec::new();
                    for &x in sub.members_of(s) {
                        for &w in g.succs(x) {
                            if sub.comp[w as usize] != s {
                                e.push((x, w));
                            }
                        }
                    }
                    e
                })
                .clone()
        };
        for (from, w) in moves {
            if !alive(w) {
                continue;
            }
            let (cf, cw) = (sccs.comp[from as usize], sccs.comp[w as usize]);
            if cf != cw && !seg.usable(cf, cw) {
                continue;
            }
            if step(&qs, w, loc_of(w), &mut buf) {
                let next = buf.clone();
                let to = intern(
                    &next,
                    (v, from, w),
                    &mut keys,
                    &mut heap,
                    &mut acc,
                    &mut parent,
                );
                if to == NONE {
                    return Ok(found(&next, (v, from, w), &keys, &parent));
                }
                edges.push((v, to));
                edge_nodes.push((from, w));
            }
        }
    }
    if early {
        return Ok(Outcome::Impossible);
    }
    // Over-approximate co-reachability.
    let nv = acc.len();
    let rev = Csr::from_edges(nv, &edges.iter().map(|&(a, b)| (b, a)).collect::<Vec<_>>());
    let mut co = BitSet::new(nv);
    crate::algo::reach(
        &rev,
        (0..nv as u32).filter(|&v| acc[v as usize]),
        |_| true,
        &mut co,
    );
    if co.count() == 0 {
        return Ok(Outcome::Impossible);
    }
    let mut may = BitSet::new(n as usize);
    for v in co.iter() {
        let l = keys[v * width];
        if l < n {
            may.insert(l as usize);
        } else {
            for &x in sub.members_of(l - n) {
                may.insert(x as usize);
            }
        }
    }
    let mut must = BitSet::new(n as usize);
    let mut unsure = BitSet::new(n as usize);
    let (mut held_decided, mut held_left, mut checks) = (0, 0, 0);
    if subsume {
        for v in 0..n as usize {
            unsure.insert(v);
        }
    } else {
        let live = |v: u32| co.contains(v as usize);
        let split = SplitGraph::new(nv, &initial, &acc, &edges, live);
        let (hg, root, sink) = (&split.hg, split.root, split.sink);
        let nh = hg.num_vertices();
        let hr = hg.reversed();
        let idom = crate::algo::dominators(hg, &hr, root, |_| true);
        let mut dom_sink = BitSet::new(nh);
        let mut x = idom[sink as usize];
        while x != NONE && x != root {
            dom_sink.insert(x as usize);
            x = idom[x as usize];
        }
        let cut = |set: &[u32]| -> bool {
            if set.iter().any(|&v| dom_sink.contains(v as usize)) {
                return true;
            }
            if set.len() == 1 {
                return false;
            }
            let blocked: std::collections::HashSet<u32> = set.iter().copied().collect();
            let mut seen = BitSet::new(nh);
            crate::algo::reach(hg, [root], |v| !blocked.contains(&v), &mut seen);
            !seen.contains(sink as usize)
        };
        // The vertices of the split graph at each location, if on some
        // root-to-sink path (a copy whose crossing cannot happen is not).
        let (mut fwd, mut bwd) = (BitSet::new(nh), BitSet::new(nh));
        crate::algo::reach(hg, [root], |_| true, &mut fwd);
        crate::algo::reach(&hr, [sink], |_| true, &mut bwd);
        let mut at: HashMap<u32, Vec<u32>> = HashMap::new();
        for x in 0..nh as u32 {
            let b = split.base[x as usize];
            if b != NONE && fwd.contains(x as usize) && bwd.contains(x as usize) {
                at.entry(keys[b as usize * width]).or_default().push(x);
            }
        }
        // Elements the trackers require inside each contracted location.
        let mut holds = BitSet::new(sub.count as usize);
        for t in &trackers {
            for e in &t.locs {
                for &l in e {
                    if l >= n {
                        holds.insert((l - n) as usize);
                    }
                }
            }
        }
        // Concrete entry and exit nodes of every contracted vertex, in one
        // pass over the edges.
        let mut ends_of: HashMap<u32, (Vec<u32>, Vec<u32>)> = HashMap::new();
        for (i, &(a, b)) in edges.iter().enumerate() {
            if !(live(a) && live(b)) {
                continue;
            }
            if keys[b as usize * width] >= n {
                ends_of.entry(b).or_default().0.push(edge_nodes[i].1);
            }
            if keys[a as usize * width] >= n {
                ends_of.entry(a).or_default().1.push(edge_nodes[i].0);
            }
        }
        // Entries and exits of the crossing of a split vertex at contracted
        // location `s`.
        let crossing_ends = |x: u32,
                             members: &[u32]|
         -> (
            std::collections::HashSet<u32>,
            std::collections::HashSet<u32>,
        ) {
            let (b, kind) = (split.base[x as usize], split.kind[x as usize]);
            let none = (Vec::new(), Vec::new());
            let es = ends_of.get(&b).unwrap_or(&none);
            let entries = if kind.starts() {
                [start].into_iter().collect()
            } else {
                es.0.iter().copied().collect()
            };
            let exits = if kind.ends() {
                members
                    .iter()
                    .copied()
                    .filter(|&v| ends.is_target(v))
                    .collect()
            } else {
                es.1.iter().copied().collect()
            };
            (entries, exits)
        };
        // Node sets every path visits inside one contracted location: UTL
        // elements and trace elements all of whose live nodes lie in it,
        // the start, and the crash.
        let mut mandatory: HashMap<u32, Vec<Vec<u32>>> = HashMap::new();
        let targets: Vec<u32> = match &sp.targets {
            Some(t) => t.iter().copied().filter(|&v| alive(v)).collect(),
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
                    .filter(|&v| alive(v))
                    .collect()
            }))
            .chain([vec![start], targets]);
        for nodes in elements {
            let Some(&first) = nodes.first() else {
                continue;
            };
            let l = loc_of(first);
            if l >= n && nodes.iter().all(|&v| loc_of(v) == l) {
                mandatory.entry(l - n).or_default().push(nodes);
            }
        }
        // Nodes that are locations of their own first: they must run iff
        // their vertices cut the trimmed graph. A path reaches such a node
        // from one of its predecessors and (unless it ends there) leaves it
        // to one of its successors; when all of those lie in one contracted
        // location, that is one more set the location must visit.
        let usable = |a: u32, b: u32| {
            let (ca, cb) = (sccs.comp[a as usize], sccs.comp[b as usize]);
            alive(a) && alive(b) && (ca == cb || seg.usable(ca, cb))
        };
        for (&l, states) in &at {
            if l >= n || !cut(states) {
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
                    let loc = loc_of(first);
                    if needed && loc >= n && set.iter().all(|&v| loc_of(v) == loc) {
                        mandatory.entry(loc - n).or_default().push(set);
                    }
                }
            }
        }
        // UTL elements must run (inside a fully silent component, on its
        // one crossing). The start and the crash are not required of every
        // crossing: they are entries and exits of the right vertices.
        let mut required = BitSet::new(n as usize);
        for &e in sp.vectors.iter().flatten() {
            required.insert(e as usize);
        }
        let mut witness_path: Option<Vec<Step>> = None;
        for (&l, states) in &at {
            if l < n {
                continue;
            }
            let s = l - n;
            let members = sub.members_of(s);
            // A location that is not a whole component may be crossed many
            // times on one path, and which crossing can avoid a member then
            // depends on the others: decide it on whole paths. (So must a
            // location with element requirements.)
            if holds.contains(s as usize) || !whole(comp_of_loc(l)) {
                if !cut(states) {
                    // Some consistent path avoids the location: every
                    // member is avoidable, and Maybe is exact.
                    continue;
                }
                let path = witness_path.get_or_insert_with(|| product_path(&split, &edges));
                let (mut entries, mut exits) = (
                    std::collections::HashSet::new(),
                    std::collections::HashSet::new(),
                );
                for &x in states {
                    let (a, b) = crossing_ends(x, members);
                    entries.extend(a);
                    exits.extend(b);
                }
                let ctx = Held {
                    g,
                    members,
                    comp: &sub.comp,
                    s,
                    l,
                    entries: &entries,
                    exits: &exits,
                    start,
                    is_target: &|v| ends.is_target(v),
                    mandatory: mandatory.get(&s).map_or(&[][..], |m| &m[..]),
                    // A whole component's UTL elements have no trackers: its
                    // one crossing visits them, in order.
                    untracked: if whole(comp_of_loc(l)) {
                        sp.vectors
                            .iter()
                            .flatten()
                            .copied()
                            .filter(|&e| loc_of(e) == l)
                            .collect()
                    } else {
                        Vec::new()
                    },
                    path,
                    edge_nodes: &edge_nodes,
                    keys: &keys,
                    width,
                    k_o,
                    trackers: &trackers,
                };
                let (always, left) = ctx.decide();
                for v in always {
                    must.insert(v as usize);
                }
                // Exact checks for what is left, one per class, while allowed.
                for class in left {
                    let verdict = if checks < limits.checks {
                        checks += 1;
                        explore(st, sp, limits, Mode::Avoid(class[0])).ok()
                    } else {
                        None
                    };
                    for v in class {
                        match verdict {
                            Some(Outcome::Impossible) => {
                                must.insert(v as usize);
                            }
                            Some(_) => {}
                            None => {
                                unsure.insert(v as usize);
                                held_left += 1;
                            }
                        }
                    }
                }
                held_decided += members.len();
                continue;
            }
            if !cut(states) {
                // Some consistent path avoids the location altogether.
                continue;
            }
            // Per product vertex here, which members its crossings cannot
            // avoid; a member must run iff the vertices where it cannot be
            // avoided cut the trimmed graph. Members are grouped by that
            // set of vertices (partition refinement, one vertex at a time).
            let k = members.len();
            let mut class = vec![0u32; k];
            let mut class_states: Vec<Vec<u32>> = vec![Vec::new()];
            let mut budget = 200_000_000u64;
            let mut stats = crate::structure::BulkStats::default();
            for &sv in states {
                let (entries, exits) = crossing_ends(sv, members);
                // The UTL elements of a fully silent component are all
                // visited on its one crossing.
                let crossing = Crossing::new(
                    g,
                    members,
                    &sub.comp,
                    s,
                    |v| entries.contains(&v),
                    |v| exits.contains(&v),
                    &sp.vectors,
                );
                let verdicts = crossing.classify(&required, 4, &mut budget, &mut stats);
                let mut remap: HashMap<(u32, bool), u32> = HashMap::new();
                let mut next: Vec<Vec<u32>> = Vec::new();
                for (i, v) in verdicts.into_iter().enumerate() {
                    if v == Verdict::Undecided {
                        unsure.insert(members[i] as usize);
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
                .map(|st| !st.is_empty() && cut(st))
                .collect();
            for (i, &v) in members.iter().enumerate() {
                if always[class[i] as usize] && !unsure.contains(v as usize) {
                    must.insert(v as usize);
                }
            }
        }
    }
    Ok(Outcome::Classified(Coarse {
        may,
        must,
        unsure,
        vertices: nv,
        trackers: trackers.len(),
        held_decided: held_decided - held_left,
        held_left,
        checks,
        exact: !subsume,
    }))
}

/// One vertex of a product path, with the explored edges it is entered
/// and left by (`None`: entered as an initial vertex, left to the sink).
pub(crate) struct Step {
    v: u32,
    in_edge: Option<usize>,
    out_edge: Option<usize>,
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
    /// Product vertex of each split vertex (`NONE` for root and sink).
    base: Vec<u32>,
    kind: Vec<Kind>,
}

impl SplitGraph {
    fn new(
        nv: usize,
        initial: &[u32],
        acc: &[bool],
        edges: &[(u32, u32)],
        live: impl Fn(u32) -> bool,
    ) -> SplitGraph {
        let mut base: Vec<u32> = (0..nv as u32).chain([NONE, NONE]).collect();
        let mut kind = vec![Kind::Mid; nv + 2];
        let (root, sink) = (nv as u32, nv as u32 + 1);
        let mut h: Vec<(u32, u32)> = Vec::new();
        let add = |b: u32, k: Kind, base: &mut Vec<u32>, kind: &mut Vec<Kind>| -> u32 {
            base.push(b);
            kind.push(k);
            base.len() as u32 - 1
        };
        let mut first: HashMap<u32, u32> = HashMap::new();
        let mut last: HashMap<u32, u32> = HashMap::new();
        for &i in initial {
            if !live(i) || first.contains_key(&i) {
                continue;
            }
            let f = add(i, Kind::First, &mut base, &mut kind);
            first.insert(i, f);
            h.push((root, f));
            if acc[i as usize] {
                let o = add(i, Kind::Only, &mut base, &mut kind);
                h.push((root, o));
                h.push((o, sink));
            }
        }
        for v in 0..nv as u32 {
            if live(v) && acc[v as usize] {
                let l = add(v, Kind::Last, &mut base, &mut kind);
                last.insert(v, l);
                h.push((l, sink));
            }
        }
        for &(a, b) in edges {
            if !(live(a) && live(b)) {
                continue;
            }
            for from in [Some(a), first.get(&a).copied()].into_iter().flatten() {
                for to in [Some(b), last.get(&b).copied()].into_iter().flatten() {
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
fn product_path(split: &SplitGraph, edges: &[(u32, u32)]) -> Vec<Step> {
    let (hg, root, sink) = (&split.hg, split.root, split.sink);
    let mut walker = Walker::new(hg.num_vertices());
    let Some(mut xs) = walker.walk(hg, root, |x| x == sink, |_| true, false, usize::MAX) else {
        return Vec::new();
    };
    xs.pop(); // the sink
    let vs: Vec<u32> = xs.iter().map(|&x| split.base[x as usize]).collect();
    // One explored edge for every consecutive pair, in one pass.
    let want: HashMap<(u32, u32), usize> = vs
        .windows(2)
        .enumerate()
        .map(|(i, p)| ((p[0], p[1]), i))
        .collect();
    let mut found = vec![None; vs.len().saturating_sub(1)];
    for (e, &(a, b)) in edges.iter().enumerate() {
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
    comp: &'a [u32],
    s: u32,
    l: u32,
    entries: &'a std::collections::HashSet<u32>,
    exits: &'a std::collections::HashSet<u32>,
    start: u32,
    is_target: &'a dyn Fn(u32) -> bool,
    mandatory: &'a [Vec<u32>],
    /// UTL elements without trackers that the (single) crossing visits.
    untracked: Vec<u32>,
    path: &'a [Step],
    edge_nodes: &'a [(u32, u32)],
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
            self.comp,
            self.s,
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
            |v: u32, j: usize| self.keys[v as usize * self.width + 1 + self.k_o + j] as usize;
        let mut legs = Vec::new();
        for (i, st) in self.path.iter().enumerate() {
            if self.keys[st.v as usize * self.width] != self.l {
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
