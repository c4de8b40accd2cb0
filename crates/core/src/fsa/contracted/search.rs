//! The search: the worklist over the contracted product, which builds
//! the explored graph.

use super::*;

impl<'s, 'a> ContractedProduct<'s, 'a> {
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

    pub(super) fn accepting(&self, qs: &[u32]) -> bool {
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

    /// The key of vertex `v`.
    pub(super) fn key(&self, v: VertexId) -> &[u32] {
        &self.keys[v.index() * self.width..(v.index() + 1) * self.width]
    }

    /// The vertex of key `qs` (reached by `by`), added if new (unless
    /// covered, with antichains); `None` for an accepting vertex when
    /// exploring stops at the first.
    pub(super) fn intern(&mut self, qs: &[u32], by: By) -> Option<VertexId> {
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
    pub(super) fn within_limits(&self, tick: bool) -> Result<(), Stop> {
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
    pub(super) fn seed(&mut self) -> Result<Option<(Vec<u32>, By)>, Stop> {
        let start = self.st.start;
        let mut buf = Vec::new();
        // (The location word is the start's, as `step` writes it.)
        let l = self.loc_of(start);
        let combos = crate::automaton::initial_combinations(&[l.as_u32()], self.others.clone());
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
    pub(super) fn search(&mut self) -> Result<Option<(Vec<u32>, By)>, Stop> {
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
}
