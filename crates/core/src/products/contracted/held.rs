//! Members of a contracted location with element requirements: which
//! surely run (what the classification asks of each such location).

use super::*;

/// A contracted location that holds element requirements and that every
/// consistent path crosses, with what is needed to decide its members.
pub(super) struct Held<'a> {
    pub(super) g: &'a Csr,
    pub(super) members: &'a [u32],
    pub(super) sub: &'a Sccs<SubId>,
    pub(super) s: SubId,
    pub(super) l: LocId,
    pub(super) entries: &'a HashSet<u32>,
    pub(super) exits: &'a HashSet<u32>,
    pub(super) start: u32,
    pub(super) is_target: &'a dyn Fn(u32) -> bool,
    pub(super) mandatory: &'a [Vec<u32>],
    /// UTL elements without trackers that the (single) crossing visits.
    pub(super) untracked: Vec<u32>,
    pub(super) path: &'a [Step],
    pub(super) edge_nodes: &'a IdVec<EdgeId, (u32, u32)>,
    pub(super) keys: &'a [u32],
    pub(super) width: usize,
    pub(super) k_o: usize,
    pub(super) trackers: &'a [Tracker],
    /// Only these nodes' fate is wanted (see [`explore_caring`]): the
    /// others get no star of their own.
    pub(super) care: Option<&'a BitSet>,
    /// Members whose own star avoids them are told by dominators, without
    /// the star (see [`CoarseLimits::sharp_stars`]).
    pub(super) sharp: bool,
}

impl Held<'_> {
    /// Members that surely run, members left undecided (in classes that
    /// share their fate; the others are avoidable), and how many were
    /// found avoidable without their own star (`sharp`).
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
    pub(super) fn decide(&self) -> (Vec<u32>, Vec<Vec<u32>>, usize) {
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
        let sharp = self.avoid_by_stars(&crossing, &mut candidates);
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
        let mut left: HashMap<u32, Vec<u32>> = HashMap::default();
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
        (always, left, sharp)
    }

    /// Removes from `candidates` (positions among the members) those some
    /// star walk of the crossing avoids: a few rounds of stars, then one
    /// star per remaining member with trees that avoid just it. Returns how
    /// many were found avoidable without their own star (`sharp`). Nothing
    /// when the witness path does not visit the location.
    fn avoid_by_stars(&self, crossing: &Crossing<'_>, candidates: &mut BitSet) -> usize {
        let mut sharp = 0;
        let k = self.members.len();
        let Some(legs) = self.legs(crossing) else {
            return sharp;
        };
        crate::structure::star_rounds(k, legs[0].entry, 4, candidates, |root, avoid| {
            crossing.star_legs(root, &legs, avoid)
        });
        // One star per remaining member, with trees that avoid just it
        // (none where the dominators show every such star visits it).
        let todo: Vec<usize> = candidates.iter().collect();
        let (entry, exit) = (legs[0].entry, legs[0].exit);
        let (on_every, exact) = if self.sharp {
            crossing.star_hits(entry, &legs)
        } else {
            (crossing.star_unavoidable(entry, &legs), false)
        };
        for i in todo {
            let cared = self
                .care
                .is_none_or(|c| c.contains(self.members[i] as usize));
            if !candidates.contains(i) || !cared {
                continue;
            }
            let root = if i as u32 == entry { exit } else { entry };
            if root == entry && on_every.contains(i) {
                continue;
            }
            if root == entry && exact {
                // Its own star avoids it (see `Crossing::star_hits`).
                candidates.remove(i);
                sharp += 1;
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
        sharp
    }

    /// The visits of the witness path to this location, as legs of the
    /// local crossing graph; `None` if the path does not visit it.
    pub(super) fn legs(&self, crossing: &Crossing<'_>) -> Option<Vec<Leg>> {
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
