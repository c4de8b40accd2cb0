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

/// Over-approximates the nodes that may run; `Ok(None)` when no vertex
/// can accept (the report is impossible).
pub(crate) fn may_run_over(
    g: &Csr,
    sp: &Split,
    core: &Core,
    seg: &Segments,
    ends: &Ends,
    start: u32,
    max_states: usize,
    deadline: Option<Instant>,
) -> Result<Option<BitSet>, Stop> {
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
    let mut acc: Vec<bool> = Vec::new();
    let mut heap: BinaryHeap<(u64, std::cmp::Reverse<u32>)> = BinaryHeap::new();
    let key = |keys: &Vec<u32>, v: u32| keys[v as usize * width..(v as usize + 1) * width].to_vec();
    let mut intern = |qs: &[u32], keys: &mut Vec<u32>, heap: &mut BinaryHeap<(u64, std::cmp::Reverse<u32>)>, acc: &mut Vec<bool>| -> u32 {
        if let Some(&id) = index.get(qs) {
            return id;
        }
        if let Some(vs) = by_loc.get(&qs[0]) {
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
            intern(&qs, &mut keys, &mut heap, &mut acc);
        }
    }
    let mut out_edges: HashMap<u32, Vec<(u32, u32)>> = HashMap::new();
    let mut popped = 0usize;
    while let Some((_, std::cmp::Reverse(v))) = heap.pop() {
        popped += 1;
        if acc.len() > max_states || keys.len() > max_states.saturating_mul(8) {
            return Err(Stop::States(max_states));
        }
        if popped % 1024 == 0 && deadline.is_some_and(|d| Instant::now() > d) {
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
    Ok(Some(may))
}
