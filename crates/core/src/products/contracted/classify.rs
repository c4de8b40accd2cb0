//! The classification of the explored graph: "may run" from the
//! co-reachable vertices, "must run" by cuts and crossings.

use super::*;

/// Phase 5 (after a complete search): the classification of the explored
/// graph.
pub(super) struct Classify<'p, 's, 'a> {
    pub(super) st: &'s Structure<'a>,
    pub(super) sp: &'s Split,
    pub(super) limits: CoarseLimits,
    /// Explored with antichains: only "may run", over-approximated.
    pub(super) subsume: bool,
    /// Only these nodes' "must run" is wanted (see [`explore_caring`]).
    pub(super) care: Option<&'p BitSet>,
    /// Nodes known to run (see [`explore_caring`]).
    pub(super) yes: Option<&'p BitSet>,
    pub(super) space: &'p Space<'s, 'a>,
    pub(super) graph: &'p Explored,
}

impl Classify<'_, '_, '_> {
    /// [`Mode::Classify`] after a complete exploration: "may run" from the
    /// co-reachable vertices, then (without antichains) "must run" by
    /// [`Classify::must_run`].
    pub(super) fn classify(self) -> Result<Outcome, Stop> {
        let n = self.space.locs.n;
        // Over-approximate co-reachability.
        let nv = self.graph.acc.len();
        let rev = Csr::from_edges(
            nv,
            &self
                .graph
                .edges
                .values()
                .map(|&(a, b)| (b.as_u32(), a.as_u32()))
                .collect::<Vec<_>>(),
        );
        let mut co = BitSet::new(nv);
        crate::algo::reach(
            &rev,
            self.graph
                .acc
                .ids()
                .filter(|&v| self.graph.acc[v])
                .map(VertexId::as_u32),
            |_| true,
            &mut co,
        );
        if co.count() == 0 {
            return Ok(Outcome::Impossible);
        }
        let mut may = BitSet::new(n as usize);
        for v in co.iter() {
            match self
                .space
                .locs
                .place(LocId(self.graph.keys[v * self.space.width]))
            {
                Place::Node(l) => {
                    may.insert(l as usize);
                }
                Place::Sub(s) => {
                    for &x in self.space.locs.sub.members_of(s) {
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
            known: 0,
            shared: 0,
            grouped: 0,
            sharp: 0,
            witnesses: Vec::new(),
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
            trackers: self.space.trackers.len(),
            held_decided: m.held_decided - m.held_left,
            held_left: m.held_left,
            checks: m.checks,
            known: m.known,
            shared: m.shared,
            grouped: m.grouped,
            sharp: m.sharp,
            exact: !self.subsume,
        }))
    }

    /// "Must run" over the trimmed product (vertices in `co`): a node that
    /// is a location of its own runs iff its vertices cut the trimmed
    /// graph (root to sink); the members of contracted locations by
    /// [`Classify::held`] (locations with element requirements,
    /// or crossed many times) or [`Classify::crossings`].
    pub(super) fn must_run(&self, co: &BitSet, m: &mut Must) {
        let n = self.space.locs.n;
        let live = |v: VertexId| co.contains(v.index());
        let split = SplitGraph::new(
            &self.graph.initial,
            &self.graph.acc,
            &self.graph.edges,
            live,
        );
        let cuts = Cuts::new(&split);
        // The vertices of the split graph at each location, if on some
        // root-to-sink path (a copy whose crossing cannot happen is not).
        let mut at: HashMap<LocId, Vec<u32>> = HashMap::default();
        for x in 0..cuts.nh as u32 {
            let Some(b) = split.base[x as usize] else {
                continue;
            };
            if cuts.fwd.contains(x as usize) && cuts.bwd.contains(x as usize) {
                at.entry(self.graph.loc(b)).or_default().push(x);
            }
        }
        // Concrete entry and exit nodes of every contracted vertex, in one
        // pass over the edges.
        let mut ends_of: HashMap<VertexId, (Vec<u32>, Vec<u32>)> = HashMap::default();
        for (i, &(a, b)) in self.graph.edges.iter() {
            if !(live(a) && live(b)) {
                continue;
            }
            if self.space.locs.sub_of(self.graph.loc(b)).is_some() {
                ends_of
                    .entry(b)
                    .or_default()
                    .0
                    .push(self.graph.edge_nodes[i].1);
            }
            if self.space.locs.sub_of(self.graph.loc(a)).is_some() {
                ends_of
                    .entry(a)
                    .or_default()
                    .1
                    .push(self.graph.edge_nodes[i].0);
            }
        }
        let ctx = Trimmed {
            split: &split,
            cuts: &cuts,
            ends_of: &ends_of,
        };
        let mandatory = self.mandatory(&at, &cuts, &mut m.must);
        // Elements the trackers require inside each contracted location.
        let mut holds = IdVec::filled(self.space.locs.sub.count(), false);
        for t in &self.space.trackers {
            for e in &t.locs {
                for &l in e {
                    if let Some(s) = self.space.locs.sub_of(l) {
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
            let Some(s) = self.space.locs.sub_of(l) else {
                continue;
            };
            // A location that is not a whole component may be crossed many
            // times on one path, and which crossing can avoid a member then
            // depends on the others: decide it on whole paths. (So must a
            // location with element requirements.)
            if holds[s] || !self.space.locs.whole(self.space.locs.comp_of_loc(l)) {
                if !cuts.cut(states) {
                    // Some consistent path avoids the location: every
                    // member is avoidable, and Maybe is exact.
                    continue;
                }
                let path =
                    witness_path.get_or_insert_with(|| product_path(&split, &self.graph.edges));
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
    pub(super) fn mandatory(
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
        let mut mandatory: HashMap<SubId, Vec<Vec<u32>>> = HashMap::default();
        let targets: Vec<u32> = match &sp.targets {
            Some(t) => t
                .iter()
                .copied()
                .filter(|&v| self.space.locs.alive(v))
                .collect(),
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
                    .filter(|&v| self.space.locs.alive(v))
                    .collect()
            }))
            .chain([vec![start], targets]);
        for nodes in elements {
            let Some(&first) = nodes.first() else {
                continue;
            };
            let l = self.space.locs.loc_of(first);
            if let Some(s) = self.space.locs.sub_of(l) {
                if nodes.iter().all(|&v| self.space.locs.loc_of(v) == l) {
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
            self.space.locs.alive(a) && self.space.locs.alive(b) && {
                let comp = |v: u32| sccs.comp(v).expect("a live node");
                let (ca, cb) = (comp(a), comp(b));
                ca == cb || seg.usable(ca, cb)
            }
        };
        for (&l, states) in at {
            let Place::Node(l) = self.space.locs.place(l) else {
                continue;
            };
            // A node known to run (labels sound for the report, see
            // `explore_caring`) cuts every root-to-sink path of the
            // executions it holds of, without the walk.
            let known = self.yes.is_some_and(|y| y.contains(l as usize));
            if !known && !cuts.cut(states) {
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
                    let loc = self.space.locs.loc_of(first);
                    match self.space.locs.sub_of(loc) {
                        Some(s)
                            if needed && set.iter().all(|&v| self.space.locs.loc_of(v) == loc) =>
                        {
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
    pub(super) fn crossing_ends(
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
    pub(super) fn held(
        &self,
        ctx: &Trimmed<'_>,
        l: LocId,
        states: &[u32],
        mandatory: &[Vec<u32>],
        path: &[Step],
        m: &mut Must,
    ) {
        let s = self.space.locs.sub_of(l).expect("a contracted location");
        let members = self.space.locs.sub.members_of(s);
        if !self.cares(members) {
            for &v in members {
                m.unsure.insert(v as usize);
            }
            return;
        }
        let (mut entries, mut exits) = (HashSet::default(), HashSet::default());
        for &x in states {
            let (a, b) = self.crossing_ends(ctx, x, members);
            entries.extend(a);
            exits.extend(b);
        }
        let held = Held {
            g: self.st.g,
            members,
            sub: &self.space.locs.sub,
            s,
            l,
            entries: &entries,
            exits: &exits,
            start: self.st.start,
            is_target: &|v| self.st.ends.is_target(v),
            mandatory,
            // A whole component's UTL elements have no trackers: its
            // one crossing visits them, in order.
            untracked: self.untracked(l),
            path,
            edge_nodes: &self.graph.edge_nodes,
            keys: &self.graph.keys,
            width: self.space.width,
            k_o: self.space.k_o,
            trackers: &self.space.trackers,
            care: self.care,
            sharp: self.limits.sharp_stars,
        };
        let (always, left, sharp) = held.decide();
        m.sharp += sharp;
        for v in always {
            m.must.insert(v as usize);
        }
        self.check_left(left, m);
        m.held_decided += members.len();
    }

    /// The UTL elements of contracted location `l` that have no trackers:
    /// all of them when `l`'s component is whole (its one crossing visits
    /// them, in order), else none.
    fn untracked(&self, l: LocId) -> Vec<u32> {
        if self.space.locs.whole(self.space.locs.comp_of_loc(l)) {
            self.sp
                .vectors
                .iter()
                .flatten()
                .copied()
                .filter(|&e| self.space.locs.loc_of(e) == l)
                .collect()
        } else {
            Vec::new()
        }
    }

    /// Exact checks for the classes [`Held::decide`] left, one per class,
    /// while `limits.checks` allows: a class runs on every execution when
    /// a member is known to, is avoidable when an execution found earlier
    /// skips it, else as its [`Mode::Avoid`] exploration says; unsure when
    /// none decides it.
    fn check_left(&self, left: Vec<Vec<u32>>, m: &mut Must) {
        let share = self.limits.shared_witnesses;
        let known_runs = |class: &[u32]| {
            self.yes
                .is_some_and(|y| class.iter().any(|&v| y.contains(v as usize)))
        };
        if share {
            // First one check for every class a check would take: an
            // execution that runs none of them shows each avoidable.
            let open: Vec<u32> = left
                .iter()
                .filter(|c| !known_runs(c) && !m.misses(c) && self.cares(c))
                .map(|c| c[0])
                .collect();
            if open.len() > 1 && m.checks < self.limits.checks {
                m.checks += 1;
                m.grouped += 1;
                if let Ok(Outcome::Witness(w)) =
                    avoid_all(self.st, self.sp, self.limits, &open, true)
                {
                    m.keep_witness(self.st, &w);
                }
            }
        }
        for class in left {
            let known = known_runs(&class);
            let verdict = if known {
                // A member runs on every execution: the class does.
                m.known += 1;
                Some(Outcome::Impossible)
            } else if m.misses(&class) {
                // An execution found by an earlier check skips the class.
                m.shared += 1;
                Some(Outcome::Possible)
            } else if m.checks < self.limits.checks && self.cares(&class) {
                m.checks += 1;
                let r = explore(self.st, self.sp, self.limits, Mode::Avoid(class[0], share)).ok();
                if let Some(Outcome::Witness(w)) = &r {
                    m.keep_witness(self.st, w);
                }
                r
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
    }

    /// Whether "must run" is wanted for one of `nodes` (see
    /// [`explore_caring`]).
    fn cares(&self, nodes: &[u32]) -> bool {
        self.care
            .is_none_or(|c| nodes.iter().any(|&v| c.contains(v as usize)))
    }

    /// The members of contracted location `l`, a whole component crossed
    /// once that every path crosses: per product vertex here, which members
    /// its crossings cannot avoid (the crossing analysis); a member must
    /// run iff the vertices where it cannot be avoided cut the trimmed
    /// graph. Members are grouped by that set of vertices (partition
    /// refinement, one vertex at a time).
    pub(super) fn crossings(
        &self,
        ctx: &Trimmed<'_>,
        l: LocId,
        states: &[u32],
        required: &BitSet,
        m: &mut Must,
    ) {
        let s = self.space.locs.sub_of(l).expect("a contracted location");
        let members = self.space.locs.sub.members_of(s);
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
                |v| self.space.locs.sub.comp(v) == Some(s),
                |v| entries.contains(&v),
                |v| exits.contains(&v),
                &self.sp.vectors,
            );
            let verdicts = crossing.classify(required, 4, &mut budget, &mut stats);
            let mut remap: HashMap<(u32, bool), u32> = HashMap::default();
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

/// "Must run" so far, and its counters.
pub(super) struct Must {
    pub(super) must: BitSet,
    pub(super) unsure: BitSet,
    pub(super) held_decided: usize,
    pub(super) held_left: usize,
    pub(super) checks: usize,
    pub(super) known: usize,
    pub(super) shared: usize,
    /// Checks of many classes at once.
    pub(super) grouped: usize,
    pub(super) sharp: usize,
    /// The nodes of each witness the exact checks gave (consistent
    /// executions of the split classified), at most [`MAX_WITNESSES`].
    pub(super) witnesses: Vec<BitSet>,
}

/// Witnesses of exact checks [`Must`] keeps for later classes.
const MAX_WITNESSES: usize = 32;

impl Must {
    /// Whether a kept witness runs no member of `class`: that execution
    /// shows the class avoidable, as its own check would.
    fn misses(&self, class: &[u32]) -> bool {
        self.witnesses
            .iter()
            .any(|w| class.iter().all(|&v| !w.contains(v as usize)))
    }

    /// Keeps the nodes of witness `w`, if it is a path of the graph from
    /// the start to a crash node (which every witness is; a broken one is
    /// simply not kept).
    fn keep_witness(&mut self, st: &Structure<'_>, w: &[u32]) {
        let walk = w.first() == Some(&st.start)
            && w.last().is_some_and(|&v| st.ends.is_target(v))
            && w.windows(2).all(|p| st.g.succs(p[0]).contains(&p[1]));
        if !walk || self.witnesses.len() >= MAX_WITNESSES {
            return;
        }
        let mut seen = BitSet::new(st.g.num_vertices());
        for &v in w {
            seen.insert(v as usize);
        }
        self.witnesses.push(seen);
    }
}
