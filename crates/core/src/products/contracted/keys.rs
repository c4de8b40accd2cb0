//! Phase 2: the vertex keys. A vertex of the contracted product is a
//! *key* of `width` words: its location, the states of the automata that
//! are not subsequence automata, and each tracker's position; this is
//! how keys step, accept and cover one another.

use super::trackers::trackers;
use super::*;

/// The key space of one report: the locations, the automata that are not
/// subsequence automata, and the trackers over the locations.
pub(super) struct Space<'s, 'a> {
    pub(super) locs: Locations<'s, 'a>,
    /// The automata that are not subsequence automata.
    pub(super) others: Vec<&'s Dfa>,
    touch: Touch,
    pub(super) trackers: Vec<Tracker>,
    /// `others.len()`.
    pub(super) k_o: usize,
    pub(super) width: usize,
}

impl<'s, 'a> Space<'s, 'a> {
    /// The trackers of `sp` over `locs`, and the key layout.
    pub(super) fn new(locs: Locations<'s, 'a>, sp: &Split, others: Vec<&'s Dfa>) -> Self {
        let touch = Touch::new(others.iter().copied());
        let trackers = trackers(&locs, sp);
        let k_o = others.len();
        let width = 1 + k_o + trackers.len();
        Space {
            locs,
            others,
            touch,
            trackers,
            k_o,
            width,
        }
    }

    /// Steps from key `qs` into location `l` through node `w`: the next key
    /// in `out`; false if an automaton rejects.
    pub(super) fn step(&self, qs: &[u32], w: u32, l: LocId, out: &mut Vec<u32>) -> bool {
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
            if self.locs.sub_of(l).is_some() {
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

    pub(super) fn accepting(&self, qs: &[u32]) -> bool {
        let k_o = self.k_o;
        let Structure {
            core, seg, ends, ..
        } = *self.locs.st;
        let l = LocId(qs[0]);
        let at_end = match self.locs.place(l) {
            Place::Node(v) => ends.is_target(v) && seg.ends(self.locs.comp_of_loc(l), core.m),
            Place::Sub(s) => self.locs.has_target[s] && seg.ends(self.locs.comp_of_loc(l), core.m),
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
    pub(super) fn progress(&self, qs: &[u32]) -> u64 {
        qs[1 + self.k_o..].iter().map(|&p| u64::from(p)).sum()
    }

    /// Whether key `a` covers key `b` (antichains).
    pub(super) fn covers(&self, a: &[u32], b: &[u32]) -> bool {
        let k_o = self.k_o;
        a[0] == b[0]
            && self
                .others
                .iter()
                .zip(a[1..1 + k_o].iter().zip(&b[1..1 + k_o]))
                .all(|(d, (&x, &y))| d.covers(x, y))
            && a[1 + k_o..].iter().zip(&b[1 + k_o..]).all(|(x, y)| x >= y)
    }
}
