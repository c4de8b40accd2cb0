//! The witness read from the explored graph: an execution through an
//! accepting vertex, each contracted location crossed by a walk.

use super::*;

/// Phase 4 (when the search stopped at an accepting vertex): the witness
/// read from the explored graph.
pub(super) struct Witness<'p, 's, 'a> {
    pub(super) st: &'s Structure<'a>,
    pub(super) sp: &'s Split,
    pub(super) mode: Mode,
    pub(super) space: &'p Space<'s, 'a>,
    pub(super) graph: &'p Explored,
}

impl Witness<'_, '_, '_> {
    /// An accepting key `qs` reached by `by`: in [`Mode::Check`] or
    /// [`Mode::Avoid`] with a witness, the execution along the
    /// first-discovery tree (whose edges are real transitions), each
    /// contracted location crossed by [`Witness::cross`] (inside the
    /// locations of the search, so never through the node avoided);
    /// otherwise just possible.
    pub(super) fn witness(&self, qs: &[u32], by: By) -> Outcome {
        if !matches!(
            self.mode,
            Mode::Check { witness: true } | Mode::Avoid(_, true)
        ) {
            return Outcome::Possible;
        }
        // (state, entry node, the move's from node) from the last back.
        let mut steps: Vec<WitnessStep> = vec![(qs.to_vec(), by.to, by.from)];
        let mut v = by.vertex;
        while let Some(x) = v {
            let p = self.graph.parent[x];
            steps.push((self.graph.key(x).to_vec(), p.to, p.from));
            v = p.vertex;
        }
        steps.reverse();
        let mut path: Vec<u32> = Vec::new();
        let mut whole_done: Vec<SccId> = Vec::new();
        let mut walker = Walker::new(self.space.locs.n as usize);
        for i in 0..steps.len() {
            if let Place::Node(v) = self.space.locs.place(LocId(steps[i].0[0])) {
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
    pub(super) fn cross(
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
            .space
            .locs
            .sub_of(LocId(steps[i].0[0]))
            .expect("a contracted location");
        let inside = |x: u32| self.space.locs.sub.comp(x) == Some(s);
        path.push(entry);
        let mut goals = Goals::new(self.crossing_goals(steps, i, whole_done));
        goals.visit(entry);
        self.walk_goals(s, entry, &mut goals, path, walker);
        let out: Vec<u32> = match steps.get(i + 1) {
            Some(next) => vec![next.2.expect("a move into the next location")],
            None => self
                .space
                .locs
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
    pub(super) fn crossing_goals(
        &self,
        steps: &[WitnessStep],
        i: usize,
        whole_done: &mut Vec<SccId>,
    ) -> Vec<Vec<Vec<u32>>> {
        let qs = &steps[i].0;
        let (l, k_o) = (LocId(qs[0]), self.space.k_o);
        let s = self.space.locs.sub_of(l).expect("a contracted location");
        let inside = |x: u32| self.space.locs.sub.comp(x) == Some(s);
        let mut seqs: Vec<Vec<Vec<u32>>> = Vec::new();
        for (j, t) in self.space.trackers.iter().enumerate() {
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
        let c = self.space.locs.comp_of_loc(l);
        if self.space.locs.whole(c) && !whole_done.contains(&c) {
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
    pub(super) fn walk_goals(
        &self,
        s: SubId,
        entry: u32,
        goals: &mut Goals,
        path: &mut Vec<u32>,
        walker: &mut Walker,
    ) {
        let Structure { g, rg: g_rev, .. } = *self.st;
        let inside = |x: u32| self.space.locs.sub.comp(x) == Some(s);
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
}

/// The goals of a crossing's walk: independent sequences of node sets,
/// each visited in order (one node of each set); one visit advances every
/// sequence that needs the node visited next.
pub(super) struct Goals {
    pub(super) seqs: Vec<Vec<Vec<u32>>>,
    /// Per sequence, the position of the set it needs next.
    pub(super) ptr: Vec<usize>,
    /// The sequences that need each node next. A fixed hasher: which goals
    /// come first is part of the witness, and witnesses are deterministic.
    pub(super) wanted: FxHashMap<u32, Vec<usize>>,
}

impl Goals {
    pub(super) fn new(seqs: Vec<Vec<Vec<u32>>>) -> Goals {
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
    pub(super) fn visit(&mut self, x: u32) {
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
