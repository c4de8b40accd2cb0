//! The trimmed contracted product split by crossing kinds, and its cuts
//! (what the classification reads).

use super::*;

/// Cuts of the split trimmed product: which sets of its vertices every
/// root-to-sink path meets.
pub(super) struct Cuts<'t> {
    pub(super) hg: &'t Csr,
    pub(super) nh: usize,
    pub(super) root: u32,
    pub(super) sink: u32,
    /// Vertices that dominate the sink.
    pub(super) dom_sink: BitSet,
    /// Reachable from the root, and reaching the sink.
    pub(super) fwd: BitSet,
    pub(super) bwd: BitSet,
    /// Root-to-sink paths found by earlier [`Cuts::cut`] calls (each as
    /// the set of its vertices): a set that misses one of them is no cut,
    /// without a search. At most [`CUT_PATHS`], the oldest replaced.
    paths: std::cell::RefCell<CutPaths>,
}

/// Paths [`Cuts`] keeps to answer "no cut" without a search.
const CUT_PATHS: usize = 32;

/// [`Cuts::paths`]: the paths, the next one to replace, and the walk's
/// reusable marks.
struct CutPaths {
    paths: Vec<BitSet>,
    next: usize,
    walker: Walker,
}

impl<'t> Cuts<'t> {
    pub(super) fn new(split: &'t SplitGraph) -> Cuts<'t> {
        let (hg, root, sink) = (&split.hg, split.root, split.sink);
        let nh = hg.num_vertices();
        let hr = hg.reversed();
        let idom = crate::algo::dominator_tree(hg, &hr, root, |_| true);
        let mut dom_sink = BitSet::new(nh);
        for x in idom.up_from(idom.parent(sink), root) {
            dom_sink.insert(x as usize);
        }
        let (mut fwd, mut bwd) = (BitSet::new(nh), BitSet::new(nh));
        crate::algo::reach(hg, [root], |_| true, &mut fwd);
        crate::algo::reach(&hr, [sink], |_| true, &mut bwd);
        Cuts {
            hg,
            nh,
            root,
            sink,
            dom_sink,
            fwd,
            bwd,
            paths: std::cell::RefCell::new(CutPaths {
                paths: Vec::new(),
                next: 0,
                walker: Walker::new(nh),
            }),
        }
    }

    /// Whether every root-to-sink path meets `set`. A set that misses a
    /// path found before is answered at once; otherwise a shortest path
    /// avoiding `set` is searched for (and kept if found).
    pub(super) fn cut(&self, set: &[u32]) -> bool {
        if set.iter().any(|&v| self.dom_sink.contains(v as usize)) {
            return true;
        }
        if set.len() == 1 {
            return false;
        }
        let mut kept = self.paths.borrow_mut();
        if kept
            .paths
            .iter()
            .any(|p| set.iter().all(|&v| !p.contains(v as usize)))
        {
            return false;
        }
        let blocked: HashSet<u32> = set.iter().copied().collect();
        let sink = self.sink;
        let Some(path) = kept.walker.walk(
            self.hg,
            self.root,
            |v| v == sink,
            |v| !blocked.contains(&v),
            false,
            usize::MAX,
        ) else {
            return true;
        };
        let mut on = BitSet::new(self.nh);
        for v in path {
            on.insert(v as usize);
        }
        if kept.paths.len() < CUT_PATHS {
            kept.paths.push(on);
        } else {
            let i = kept.next;
            kept.paths[i] = on;
            kept.next = (i + 1) % CUT_PATHS;
        }
        false
    }
}

/// The trimmed product as the must-run phases read it.
pub(super) struct Trimmed<'t> {
    pub(super) split: &'t SplitGraph,
    pub(super) cuts: &'t Cuts<'t>,
    /// Per contracted vertex, its concrete entry and exit nodes.
    pub(super) ends_of: &'t HashMap<VertexId, (Vec<u32>, Vec<u32>)>,
}

/// One vertex of a product path, with the explored edges it is entered
/// and left by (`None`: entered as an initial vertex, left to the sink).
pub(super) struct Step {
    pub(super) v: VertexId,
    pub(super) in_edge: Option<EdgeId>,
    pub(super) out_edge: Option<EdgeId>,
}

/// How a crossing of a product vertex begins and ends.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(super) enum Kind {
    /// Entered and left by product edges.
    Mid,
    /// Begins at the start node, left by a product edge.
    First,
    /// Entered by a product edge, ends at a crash node.
    Last,
    /// Begins at the start node and ends at a crash node.
    Only,
}

impl Kind {
    pub(super) fn starts(self) -> bool {
        matches!(self, Kind::First | Kind::Only)
    }
    pub(super) fn ends(self) -> bool {
        matches!(self, Kind::Last | Kind::Only)
    }
}

/// The trimmed contracted product with every vertex split by how its
/// crossing begins and ends, so that "the crossing of this vertex must
/// visit n" composes exactly with cuts: a vertex `v` is itself the `Mid`
/// copy; initial vertices get a `First` copy (and an `Only` copy if also
/// accepting) entered from the virtual root, accepting vertices a `Last`
/// copy leading to the virtual sink. Every root-to-sink path of the
/// trimmed product is one path here, and back.
pub(super) struct SplitGraph {
    pub(super) hg: Csr,
    pub(super) root: u32,
    pub(super) sink: u32,
    /// Product vertex of each split vertex (none for root and sink).
    pub(super) base: Vec<Option<VertexId>>,
    pub(super) kind: Vec<Kind>,
}

impl SplitGraph {
    pub(super) fn new(
        initial: &[VertexId],
        acc: &IdVec<VertexId, bool>,
        edges: &IdVec<EdgeId, (VertexId, VertexId)>,
        live: impl Fn(VertexId) -> bool,
    ) -> SplitGraph {
        let nv = acc.len();
        let mut base: Vec<Option<VertexId>> = acc.ids().map(Some).chain([None, None]).collect();
        let mut kind = vec![Kind::Mid; nv + 2];
        let (root, sink) = (nv as u32, nv as u32 + 1);
        let mut h: Vec<(u32, u32)> = Vec::new();
        let add = |b: VertexId, k: Kind, base: &mut Vec<Option<VertexId>>, kind: &mut Vec<Kind>| {
            base.push(Some(b));
            kind.push(k);
            base.len() as u32 - 1
        };
        let mut first: HashMap<VertexId, u32> = HashMap::default();
        let mut last: HashMap<VertexId, u32> = HashMap::default();
        for &i in initial {
            if !live(i) || first.contains_key(&i) {
                continue;
            }
            let f = add(i, Kind::First, &mut base, &mut kind);
            first.insert(i, f);
            h.push((root, f));
            if acc[i] {
                let o = add(i, Kind::Only, &mut base, &mut kind);
                h.push((root, o));
                h.push((o, sink));
            }
        }
        for v in acc.ids() {
            if live(v) && acc[v] {
                let l = add(v, Kind::Last, &mut base, &mut kind);
                last.insert(v, l);
                h.push((l, sink));
            }
        }
        for &(a, b) in edges.values() {
            if !(live(a) && live(b)) {
                continue;
            }
            for from in [Some(a.as_u32()), first.get(&a).copied()]
                .into_iter()
                .flatten()
            {
                for to in [Some(b.as_u32()), last.get(&b).copied()]
                    .into_iter()
                    .flatten()
                {
                    h.push((from, to));
                }
            }
        }
        h.sort_unstable();
        h.dedup();
        SplitGraph {
            hg: Csr::from_edges(base.len(), &h),
            root,
            sink,
            base,
            kind,
        }
    }
}

/// A shortest root-to-sink path of the split trimmed product, as product
/// vertices with the explored edges between them.
pub(super) fn product_path(
    split: &SplitGraph,
    edges: &IdVec<EdgeId, (VertexId, VertexId)>,
) -> Vec<Step> {
    let (hg, root, sink) = (&split.hg, split.root, split.sink);
    let mut walker = Walker::new(hg.num_vertices());
    let Some(mut xs) = walker.walk(hg, root, |x| x == sink, |_| true, false, usize::MAX) else {
        return Vec::new();
    };
    xs.pop(); // the sink
    let vs: Vec<VertexId> = xs
        .iter()
        .map(|&x| split.base[x as usize].expect("a product vertex"))
        .collect();
    // One explored edge for every consecutive pair, in one pass.
    let want: HashMap<(VertexId, VertexId), usize> = vs
        .windows(2)
        .enumerate()
        .map(|(i, p)| ((p[0], p[1]), i))
        .collect();
    let mut found = vec![None; vs.len().saturating_sub(1)];
    for (e, &(a, b)) in edges.iter() {
        if let Some(&i) = want.get(&(a, b)) {
            if found[i].is_none() {
                found[i] = Some(e);
            }
        }
    }
    (0..vs.len())
        .map(|i| Step {
            v: vs[i],
            in_edge: i.checked_sub(1).and_then(|j| found[j]),
            out_edge: found.get(i).copied().flatten(),
        })
        .collect()
}
