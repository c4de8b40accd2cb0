//! Locations: loud nodes stay themselves, silent sub-components are
//! contracted (the first phase of [`super::explore`]).

use super::*;

/// Phase 1: the locations. Loud nodes (where an automaton that is not a
/// subsequence automaton acts) stay themselves; the silent sub-components
/// (SCCs of the other live nodes) are contracted, one location each.
pub(super) struct Locations<'s, 'a> {
    pub(super) st: &'s Structure<'a>,
    /// The nodes avoided ([`Mode::Avoid`], [`avoid_all`]), sorted.
    skip: Vec<u32>,
    /// Nodes of the graph (see [`LocId`]).
    pub(super) n: u32,
    /// Silent sub-components (the contracted locations).
    pub(super) sub: Sccs<SubId>,
    /// Per component: one silent sub-component (fully silent).
    whole_comp: IdVec<SccId, bool>,
    /// Per sub-component: it holds a target (crash) node.
    pub(super) has_target: IdVec<SubId, bool>,
}

impl<'s, 'a> Locations<'s, 'a> {
    /// The locations for the automata `others` (those that are not
    /// subsequence automata), avoiding `skip` (sorted).
    pub(super) fn new(st: &'s Structure<'a>, others: &[&Dfa], skip: Vec<u32>) -> Self {
        let g = st.g;
        let n = g.num_vertices() as u32;
        // Loud nodes: where an automaton other than a subsequence
        // automaton acts.
        let all_loud = others.iter().any(|a| !a.silent_elsewhere());
        let mut loud = BitSet::new(n as usize);
        for a in others {
            for v in a.mentioned() {
                if !a.silent_on(v) {
                    loud.insert(v as usize);
                }
            }
        }
        let alive = |v: u32| alive_in(st, &skip, v);
        // Silent sub-components.
        let sub = Sccs::compute(g, |v| !all_loud && alive(v) && !loud.contains(v as usize));
        let mut locs = Locations {
            st,
            skip,
            n,
            sub,
            whole_comp: IdVec::new(),
            has_target: IdVec::new(),
        };
        // A component is fully silent when it is one silent sub-component.
        // (Computed once for all components: it is asked per element.)
        let sccs = &st.core.sccs;
        locs.whole_comp = sccs
            .ids()
            .map(|c| {
                let m = sccs.members_of(c);
                !sccs.is_trivial(c)
                    && locs.sub_of(locs.loc_of(m[0])).is_some()
                    && m.iter().all(|&v| locs.loc_of(v) == locs.loc_of(m[0]))
            })
            .collect();
        locs.has_target = (locs.sub.ids())
            .map(|s| locs.sub.members_of(s).iter().any(|&v| st.ends.is_target(v)))
            .collect();
        locs
    }

    /// Whether node `v` can be on a consistent path at all (and is not a
    /// node avoided).
    pub(super) fn alive(&self, v: u32) -> bool {
        alive_in(self.st, &self.skip, v)
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
