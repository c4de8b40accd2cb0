//! Locations: loud nodes stay themselves, silent sub-components are
//! contracted (the first phase of [`super::explore`]).

use super::*;

impl<'s, 'a> ContractedProduct<'s, 'a> {
    /// Locations (loud nodes stay themselves, silent sub-components are
    /// contracted), then the trackers over them.
    pub(super) fn new(
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
    pub(super) fn alive(&self, v: u32) -> bool {
        alive_in(self.st, self.skip, v)
    }

    /// The location of node `v`: its silent sub-component when that is
    /// not trivial, else itself.
    pub(super) fn loc_of(&self, v: u32) -> LocId {
        match self.sub.comp(v) {
            Some(s) if !self.sub.is_trivial(s) => LocId(self.n + s.as_u32()),
            _ => LocId(v),
        }
    }

    /// What location `l` stands for.
    #[inline]
    pub(super) fn place(&self, l: LocId) -> Place {
        match l.0.checked_sub(self.n) {
            None => Place::Node(l.0),
            Some(s) => Place::Sub(SubId(s)),
        }
    }

    /// The location of vertex `v`.
    pub(super) fn loc(&self, v: VertexId) -> LocId {
        LocId(self.key(v)[0])
    }

    pub(super) fn whole(&self, c: SccId) -> bool {
        self.whole_comp[c]
    }

    /// The contracted sub-component location `l` stands for, or `None`
    /// when it is a node of its own.
    #[inline]
    pub(super) fn sub_of(&self, l: LocId) -> Option<SubId> {
        match self.place(l) {
            Place::Node(_) => None,
            Place::Sub(s) => Some(s),
        }
    }

    /// The component of location `l`.
    pub(super) fn comp_of_loc(&self, l: LocId) -> SccId {
        let node = match self.place(l) {
            Place::Node(v) => v,
            Place::Sub(s) => self.sub.members_of(s)[0],
        };
        self.st.core.sccs.comp(node).expect("a live location")
    }
}
