//! The full product's bulk classification: cuts of the trimmed product
//! for nodes that are locations of their own, the crossing analysis for
//! members of silent components.

use super::*;

/// Bulk classification from the explored product: nodes that are
/// locations of their own by cuts of the trimmed product, members of
/// silent components by the crossing analysis per vertex (see
/// [`Classify`]).
pub(super) fn classify(g: &Icfg, p: &Product<'_>, sp: &Split, limits: FsaLimits) -> Recovery {
    let co = p.co_reachable();
    let live = |v: VertexId| co.contains(v.index());
    // Vertices per location.
    let mut node_states: HashMap<u32, Vec<VertexId>> = HashMap::new();
    let mut comp_states: HashMap<SccId, Vec<VertexId>> = HashMap::new();
    for v in p.vertices() {
        if !live(v) {
            continue;
        }
        match p.loc(v) {
            Loc::Node(node) => node_states.entry(node).or_default().push(v),
            Loc::Comp(c) => comp_states.entry(c).or_default().push(v),
        }
    }
    let n = g.num_nodes();
    let mut required_vertex = BitSet::new(n);
    for v in sp.vectors.iter().flatten() {
        required_vertex.insert(*v as usize);
    }
    required_vertex.insert(p.start as usize);
    if let Some([t]) = sp.targets.as_deref() {
        required_vertex.insert(*t as usize);
    }
    let mut cl = Classify {
        g,
        p,
        sp,
        limits,
        trimmed: TrimmedProduct::new(p, live),
        budget: limits.exact_work,
        crossing_budget: limits.bulk.exact_work,
        stats: BulkStats::default(),
        required_vertex,
        labels: vec![Label::No; n],
        undecided: Vec::new(),
    };
    for (&node, states) in &node_states {
        cl.node(node, states);
    }
    // Concrete entry and exit nodes of every trimmed super-vertex, in one
    // pass over the edges.
    let mut ends_of: HashMap<VertexId, (Vec<u32>, Vec<u32>)> = HashMap::new();
    for e in p.edges.values() {
        if !(live(e.from) && live(e.to)) {
            continue;
        }
        if let Loc::Comp(_) = p.loc(e.to) {
            ends_of.entry(e.to).or_default().0.push(e.to_node);
        }
        if let Loc::Comp(_) = p.loc(e.from) {
            ends_of.entry(e.from).or_default().1.push(e.from_node);
        }
    }
    for (&c, states) in &comp_states {
        cl.component(c, states, &ends_of);
    }
    let Classify {
        labels,
        mut undecided,
        stats,
        ..
    } = cl;
    undecided.sort();
    undecided.dedup();
    Recovery {
        labels,
        weakened: vec![],
        undecided,
        stats: vec![
            ("product_vertices", p.num_vertices() as u64),
            ("product_edges", p.edges.len() as u64),
            ("automata", p.autos.len() as u64),
            ("silent_crossings", stats.crossings),
        ],
    }
}

/// The trimmed full product as a graph: the live vertices, a virtual root
/// (`nv`) before the initial ones and a virtual sink (`nv + 1`) after the
/// accepting ones; and the vertices that dominate the sink.
struct TrimmedProduct {
    h: Csr,
    root: u32,
    sink: u32,
    dom_sink: BitSet,
}

impl TrimmedProduct {
    fn new(p: &Product<'_>, live: impl Fn(VertexId) -> bool) -> TrimmedProduct {
        let nv = p.num_vertices();
        let (root, sink) = (nv as u32, nv as u32 + 1);
        let mut hedges: Vec<(u32, u32)> = Vec::new();
        for &i in &p.initial {
            if live(i) {
                hedges.push((root, i.as_u32()));
            }
        }
        for v in p.vertices() {
            if live(v) && p.accepting[v] {
                hedges.push((v.as_u32(), sink));
            }
        }
        for e in p.edges.values() {
            if live(e.from) && live(e.to) {
                hedges.push((e.from.as_u32(), e.to.as_u32()));
            }
        }
        let h = Csr::from_edges(nv + 2, &hedges);
        let hr = h.reversed();
        let idom = algo::dominator_tree(&h, &hr, root, |_| true);
        let mut dom_sink = BitSet::new(nv + 2);
        for x in idom.up_from(idom.parent(sink), root) {
            dom_sink.insert(x as usize);
        }
        TrimmedProduct {
            h,
            root,
            sink,
            dom_sink,
        }
    }

    /// Is every root-to-sink path through `set`? `None` when the search
    /// this needs is over `budget`.
    fn cut(&self, set: &[VertexId], budget: &mut u64) -> Option<bool> {
        if set.iter().any(|&v| self.dom_sink.contains(v.index())) {
            return Some(true);
        }
        if set.len() == 1 {
            return Some(false);
        }
        let h = &self.h;
        let cost = (h.num_vertices() + h.num_edges()) as u64;
        if *budget < cost {
            return None;
        }
        *budget -= cost;
        let blocked: HashSet<u32> = set.iter().map(|v| v.as_u32()).collect();
        let mut seen = BitSet::new(h.num_vertices());
        algo::reach(h, [self.root], |v| !blocked.contains(&v), &mut seen);
        Some(!seen.contains(self.sink as usize))
    }
}

/// [`classify`]'s state: the labels so far, and the budgets of cuts and
/// crossings.
struct Classify<'a, 'p> {
    g: &'a Icfg,
    p: &'a Product<'p>,
    sp: &'a Split,
    limits: FsaLimits,
    trimmed: TrimmedProduct,
    /// Work left for cuts.
    budget: u64,
    /// Work left for the crossing analyses.
    crossing_budget: u64,
    stats: BulkStats,
    /// Nodes every path visits (UTL elements, the start, a single target).
    required_vertex: BitSet,
    labels: Vec<Label>,
    undecided: Vec<NodeId>,
}

impl Classify<'_, '_> {
    /// A node that is a location of its own: it must run iff its vertices
    /// `states` cut the trimmed product.
    fn node(&mut self, node: u32, states: &[VertexId]) {
        self.labels[node as usize] = match self.trimmed.cut(states, &mut self.budget) {
            Some(true) => Label::Yes,
            Some(false) => Label::Maybe,
            None => {
                self.undecided.push(NodeId::new(node as usize));
                Label::Maybe
            }
        };
    }

    /// The members of silent component `c`, with vertices `states`: a
    /// member must run iff the component is always crossed and no crossing
    /// (from any of its vertices) avoids it.
    fn component(
        &mut self,
        c: SccId,
        states: &[VertexId],
        ends_of: &HashMap<VertexId, (Vec<u32>, Vec<u32>)>,
    ) {
        let members = self.p.core.sccs.members_of(c);
        let always_crossed = if self.p.core.chain_pos[c] > 0 {
            Some(true)
        } else {
            self.trimmed.cut(states, &mut self.budget)
        };
        // Per state: can the crossing avoid each member?
        let mut verdict = vec![Verdict::Always; members.len()];
        if always_crossed == Some(true) {
            for &sv in states {
                let vs = self.crossing(c, sv, ends_of);
                for (acc, v) in verdict.iter_mut().zip(vs) {
                    *acc = match (*acc, v) {
                        (Verdict::Sometimes, _) | (_, Verdict::Sometimes) => Verdict::Sometimes,
                        (Verdict::Undecided, _) | (_, Verdict::Undecided) => Verdict::Undecided,
                        _ => Verdict::Always,
                    };
                }
            }
        }
        for (i, &v) in members.iter().enumerate() {
            self.labels[v as usize] = match (always_crossed, verdict[i]) {
                (Some(true), Verdict::Always) => Label::Yes,
                (Some(true), Verdict::Undecided) | (None, _) => {
                    self.undecided.push(NodeId::new(v as usize));
                    Label::Maybe
                }
                _ => Label::Maybe,
            };
        }
    }

    /// The crossing analysis of silent component `c` at vertex `sv`, from
    /// the entries to the exits its product edges (or the start, or the
    /// crash) use: a verdict per member.
    fn crossing(
        &mut self,
        c: SccId,
        sv: VertexId,
        ends_of: &HashMap<VertexId, (Vec<u32>, Vec<u32>)>,
    ) -> Vec<Verdict> {
        let (p, sccs) = (self.p, &self.p.core.sccs);
        let members = sccs.members_of(c);
        let mut entries: HashSet<u32> = HashSet::new();
        let mut exits: HashSet<u32> = HashSet::new();
        if p.initial.contains(&sv) {
            entries.insert(p.start);
        }
        if p.accepting[sv] {
            exits.extend(members.iter().copied().filter(|&v| p.ends.is_target(v)));
        }
        if let Some(es) = ends_of.get(&sv) {
            entries.extend(es.0.iter().copied());
            exits.extend(es.1.iter().copied());
        }
        let crossing = Crossing::new(
            self.g.succ_csr(),
            members,
            |v| sccs.comp(v) == Some(c),
            |v| entries.contains(&v),
            |v| exits.contains(&v),
            &self.sp.vectors,
        );
        crossing.classify(
            &self.required_vertex,
            self.limits.bulk.witnesses,
            &mut self.crossing_budget,
            &mut self.stats,
        )
    }
}
