//! The coarse tier of FSA bulk recovery, used only when the exact product
//! is too large. It computes a sound **over-approximation of "may run"**,
//! so every node it labels No truly ran on no consistent execution; Yes
//! labels come from UTL (sound for the full report) and everything else is
//! Maybe, marked undecided.
//!
//! What makes it scale where the exact product does not:
//!
//! * only automata that are not subsequence automata (reliable and bursty
//!   traces, "not all", regular queries) make nodes *loud*; the silent
//!   sub-components (SCCs of the silent nodes) of every component are
//!   contracted into one location each;
//! * every subsequence constraint, and every UTL element inside a component
//!   where automata act, becomes a *tracker* over locations: "visit one of
//!   these locations", in order. Inside a contracted location any sequence
//!   of its nodes can be visited, so entering it matches every consecutive
//!   element it holds. Identical trackers are merged, so thousands of
//!   coverage observations in one giant location become one tracker;
//! * the exploration keeps, per location, only vertices not covered by
//!   another with the same automaton states and at least the tracker
//!   progress (an antichain), most progress first.
//!
//! Soundness of the over-approximation: every real state is covered by an
//! explored vertex at the same location (tracker steps are monotone), and
//! co-reachability is computed over explored edges *including* the edges to
//! covering vertices, which can only add vertices.

use super::automaton::{Dfa, DEAD};
use super::product::Stop;
use super::Split;
use crate::algo::{Sccs, NONE};
use crate::graph::{BitSet, Csr};
use crate::utl::engine::{Core, Ends, Segments};
use std::collections::{BinaryHeap, HashMap};
use std::time::Instant;

/// What the coarse tier found.
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
    pub exact: bool,
}

/// Explores the contracted product. Without `subsume` the exploration is
/// explicit, "may run" is exact and "must run" is decided by cuts of the
/// trimmed graph (and, inside contracted locations, soundly by the
/// crossing analysis without element requirements). With `subsume`, only
/// an over-approximation of "may run" is computed. `Ok(None)` when no
/// vertex can accept (the report is impossible).
/// The UTL structure the coarse tier works on.
pub(crate) struct Structure<'a> {
    pub g: &'a Csr,
    pub core: &'a Core,
    pub seg: &'a Segments,
    pub ends: &'a Ends,
    pub start: u32,
}

pub(crate) fn may_run_over(
    st: &Structure<'_>,
    sp: &Split,
    max_states: usize,
    deadline: Option<Instant>,
    subsume: bool,
) -> Result<Option<Coarse>, Stop> {
    let Structure { g, core, seg, ends, start } = *st;
    let n = g.num_vertices() as u32;
    let sccs = &core.sccs;
    let alive = |v: u32| {
        let c = sccs.comp[v as usize];
        c != NONE && seg.alive[c as usize]
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
    let whole = |c: u32| -> bool {
        let m = sccs.members_of(c);
        !sccs.trivial[c as usize] && loc_of(m[0]) >= n && m.iter().all(|&v| loc_of(v) == loc_of(m[0]))
    };
    // Trackers over locations.
    let mut trackers: Vec<Vec<Vec<u32>>> = Vec::new();
    for vec in &sp.vectors {
        let t: Vec<Vec<u32>> = vec
            .iter()
            .filter(|&&e| {
                let c = sccs.comp[e as usize];
                !sccs.trivial[c as usize] && !whole(c)
            })
            .map(|&e| vec![loc_of(e)])
            .collect();
        if !t.is_empty() {
            trackers.push(t);
        }
    }
    for elems in &sp.traces {
        let t: Vec<Vec<u32>> = elems
            .iter()
            .map(|e| {
                let mut locs: Vec<u32> = e.nodes().iter().map(|x| x.as_u32()).filter(|&v| alive(v)).map(loc_of).collect();
                locs.sort_unstable();
                locs.dedup();
                locs
            })
            .collect();
        trackers.push(t);
    }
    // Merge consecutive identical single-location elements that are
    // contracted locations (one visit matches them all), then duplicates.
    for t in &mut trackers {
        t.dedup_by(|a, b| a.len() == 1 && a == b && a[0] >= n);
    }
    trackers.sort();
    trackers.dedup();
    let k_o = others.len();
    let width = 1 + k_o + trackers.len();
    let has_target: Vec<bool> = (0..sub.count).map(|s| sub.members_of(s).iter().any(|&v| ends.is_target(v))).collect();
    let comp_of_loc = |l: u32| if l < n { sccs.comp[l as usize] } else { sccs.comp[sub.members_of(l - n)[0] as usize] };

    // Steps into location `l` through node `w`; None if rejected.
    let step = |qs: &[u32], w: u32, l: u32, out: &mut Vec<u32>| -> bool {
        out.clear();
        out.push(l);
        for (a, &q) in others.iter().zip(&qs[1..1 + k_o]) {
            let t = a.step(q, w);
            if t == DEAD {
                return false;
            }
            out.push(t);
        }
        for (t, &p) in trackers.iter().zip(&qs[1 + k_o..]) {
            let mut p = p as usize;
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
            && others.iter().zip(&qs[1..1 + k_o]).all(|(a, &q)| a.accepting[q as usize])
            && trackers.iter().zip(&qs[1 + k_o..]).all(|(t, &p)| p as usize == t.len())
    };
    let progress = |qs: &[u32]| -> u64 { qs[1 + k_o..].iter().map(|&p| u64::from(p)).sum() };
    let covers = |a: &[u32], b: &[u32]| a[..1 + k_o] == b[..1 + k_o] && a[1 + k_o..].iter().zip(&b[1 + k_o..]).all(|(x, y)| x >= y);

    let mut keys: Vec<u32> = Vec::new();
    let mut index: HashMap<Box<[u32]>, u32> = HashMap::new();
    let mut by_loc: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut edges: Vec<(u32, u32)> = Vec::new();
    let mut edge_nodes: Vec<(u32, u32)> = Vec::new();
    let mut acc: Vec<bool> = Vec::new();
    let mut heap: BinaryHeap<(u64, std::cmp::Reverse<u32>)> = BinaryHeap::new();
    let key = |keys: &Vec<u32>, v: u32| keys[v as usize * width..(v as usize + 1) * width].to_vec();
    let mut intern = |qs: &[u32], keys: &mut Vec<u32>, heap: &mut BinaryHeap<(u64, std::cmp::Reverse<u32>)>, acc: &mut Vec<bool>| -> u32 {
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
        keys.extend_from_slice(qs);
        index.insert(qs.into(), id);
        by_loc.entry(qs[0]).or_default().push(id);
        acc.push(accepting(qs));
        heap.push((progress(qs), std::cmp::Reverse(id)));
        id
    };

    // Initial vertices.
    let mut initial: Vec<u32> = Vec::new();
    let mut buf = Vec::new();
    if !alive(start) {
        return Ok(None);
    }
    let mut combos: Vec<Vec<u32>> = vec![vec![NONE]];
    for a in &others {
        combos = combos.into_iter().flat_map(|c| a.initial.iter().map(move |&q| [c.clone(), vec![q]].concat())).collect();
    }
    for mut c in combos {
        c.extend(std::iter::repeat_n(0, trackers.len()));
        if step(&c, start, loc_of(start), &mut buf) {
            let qs = buf.clone();
            let id = intern(&qs, &mut keys, &mut heap, &mut acc);
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
                let to = intern(&next, &mut keys, &mut heap, &mut acc);
                edges.push((v, to));
                edge_nodes.push((from, w));
            }
        }
    }
    // Over-approximate co-reachability.
    let nv = acc.len();
    let rev = Csr::from_edges(nv, &edges.iter().map(|&(a, b)| (b, a)).collect::<Vec<_>>());
    let mut co = BitSet::new(nv);
    crate::algo::reach(&rev, (0..nv as u32).filter(|&v| acc[v as usize]), |_| true, &mut co);
    if co.count() == 0 {
        return Ok(None);
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
    if subsume {
        for v in 0..n as usize {
            unsure.insert(v);
        }
    } else {
        // Trimmed graph with a virtual root (nv) and sink (nv + 1).
        let live = |v: u32| co.contains(v as usize);
        let (root, sink) = (nv as u32, nv as u32 + 1);
        let mut h: Vec<(u32, u32)> = initial.iter().filter(|&&i| live(i)).map(|&i| (root, i)).collect();
        h.extend((0..nv as u32).filter(|&v| live(v) && acc[v as usize]).map(|v| (v, sink)));
        h.extend(edges.iter().copied().filter(|&(a, b)| live(a) && live(b)));
        let hg = Csr::from_edges(nv + 2, &h);
        let hr = hg.reversed();
        let idom = crate::algo::dominators(&hg, &hr, root, |_| true);
        let mut dom_sink = BitSet::new(nv + 2);
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
            let mut seen = BitSet::new(nv + 2);
            crate::algo::reach(&hg, [root], |v| !blocked.contains(&v), &mut seen);
            !seen.contains(sink as usize)
        };
        let mut at: HashMap<u32, Vec<u32>> = HashMap::new();
        for v in co.iter() {
            at.entry(keys[v * width]).or_default().push(v as u32);
        }
        // Elements the trackers require inside each contracted location.
        let mut holds = BitSet::new(sub.count as usize);
        for t in &trackers {
            for e in t {
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
        for (&l, states) in &at {
            if l < n {
                if cut(states) {
                    must.insert(l as usize);
                }
                continue;
            }
            let s = l - n;
            let members = sub.members_of(s);
            if holds.contains(s as usize) {
                // Element requirements inside: the crossing analysis without
                // them would prove little and cost much; UTL's Yes stands
                // and the other members stay undecided.
                for &v in members {
                    unsure.insert(v as usize);
                }
                continue;
            }
            let crossed = cut(states);
            let mut always = vec![crossed; members.len()];
            if crossed {
                for &sv in states {
                    let mut entries = std::collections::HashSet::new();
                    let mut exits = std::collections::HashSet::new();
                    if initial.contains(&sv) {
                        entries.insert(start);
                    }
                    if acc[sv as usize] {
                        exits.extend(members.iter().copied().filter(|&v| ends.is_target(v)));
                    }
                    if let Some(es) = ends_of.get(&sv) {
                        entries.extend(es.0.iter().copied());
                        exits.extend(es.1.iter().copied());
                    }
                    let crossing = crate::utl::engine::Crossing::new(
                        g,
                        members,
                        &sub.comp,
                        s,
                        |v| entries.contains(&v),
                        |v| exits.contains(&v),
                        &[],
                    );
                    let mut budget = 200_000_000u64;
                    let mut stats = crate::utl::engine::BulkStats::default();
                    let verdicts = crossing.classify(&BitSet::new(n as usize), 4, &mut budget, &mut stats);
                    for (a, v) in always.iter_mut().zip(verdicts) {
                        *a &= v == crate::utl::engine::Verdict::Always;
                    }
                }
            }
            for (i, &v) in members.iter().enumerate() {
                if always[i] {
                    must.insert(v as usize);
                }
            }
        }
    }
    Ok(Some(Coarse { may, must, unsure, vertices: nv, trackers: trackers.len(), exact: !subsume }))
}
