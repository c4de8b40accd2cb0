//! Graph algorithms over [`Csr`] graphs, all iterative (interprocedural
//! graphs are deep; no recursion on graph depth).
//!
//! * [`reach`]: breadth-first reachability with a vertex filter.
//! * [`Sccs::compute`]: Tarjan's strongly connected components (Tarjan 1972),
//!   written with an explicit stack, numbering components in topological
//!   order. O(V + E).
//! * [`dominators`]: the iterative algorithm of Cooper, Harvey and Kennedy,
//!   "A Simple, Fast Dominance Algorithm" (2001), over reverse postorder.
//!   O(E · d) per pass with d the dominator-tree depth walked by
//!   `intersect`; a few passes on reducible graphs.

use crate::graph::{BitSet, Csr};
use crate::ids::{entity_id, EntityId};

/// Sentinel for "no vertex / undefined".
pub const NONE: u32 = u32::MAX;

/// Marks in `seen` every vertex reachable from `sources` in `g` through
/// vertices for which `allowed` holds (sources included only if allowed).
pub fn reach(
    g: &Csr,
    sources: impl IntoIterator<Item = u32>,
    allowed: impl Fn(u32) -> bool,
    seen: &mut BitSet,
) {
    let mut queue: Vec<u32> = Vec::new();
    for s in sources {
        if allowed(s) && seen.insert(s as usize) {
            queue.push(s);
        }
    }
    let mut head = 0;
    while head < queue.len() {
        let v = queue[head];
        head += 1;
        for &w in g.succs(v) {
            if allowed(w) && seen.insert(w as usize) {
                queue.push(w);
            }
        }
    }
}

entity_id!(
    /// A strongly connected component of a [`Sccs`] (by default, of the
    /// condensation the solvers share).
    SccId
);

/// Strongly connected components of the subgraph induced by a vertex set,
/// with ids of type `C`.
#[derive(Clone, Debug)]
pub struct Sccs<C = SccId> {
    /// Component of each vertex, [`NONE`] outside the vertex set.
    /// Components are numbered in topological order of the condensation:
    /// every edge between components goes from a lower to a higher number.
    comp: Vec<u32>,
    /// Number of components.
    count: u32,
    /// Whether each component is *trivial*: one vertex and no self-loop,
    /// so a path can visit it at most once.
    trivial: Vec<bool>,
    /// Members of component `c` are `members[member_start[c]..member_start[c+1]]`.
    members: Vec<u32>,
    /// See `members`.
    member_start: Vec<u32>,
    _id: std::marker::PhantomData<fn(C) -> C>,
}

impl<C: EntityId> Sccs<C> {
    /// Tarjan's algorithm on the vertices `v` of `g` with `inside(v)`.
    pub fn compute(g: &Csr, inside: impl Fn(u32) -> bool) -> Sccs<C> {
        let n = g.num_vertices();
        let mut index = vec![NONE; n];
        let mut low = vec![0u32; n];
        let mut on_stack = BitSet::new(n);
        let mut stack: Vec<u32> = Vec::new();
        let mut call: Vec<(u32, u32)> = Vec::new();
        let mut comp = vec![NONE; n];
        let mut count = 0u32;
        let mut counter = 0u32;
        for r in 0..n as u32 {
            if index[r as usize] != NONE || !inside(r) {
                continue;
            }
            index[r as usize] = counter;
            low[r as usize] = counter;
            counter += 1;
            stack.push(r);
            on_stack.insert(r as usize);
            call.push((r, 0));
            while let Some(top) = call.last_mut() {
                let v = top.0;
                let succs = g.succs(v);
                if (top.1 as usize) < succs.len() {
                    let w = succs[top.1 as usize];
                    top.1 += 1;
                    if !inside(w) {
                        continue;
                    }
                    if index[w as usize] == NONE {
                        index[w as usize] = counter;
                        low[w as usize] = counter;
                        counter += 1;
                        stack.push(w);
                        on_stack.insert(w as usize);
                        call.push((w, 0));
                    } else if on_stack.contains(w as usize) {
                        low[v as usize] = low[v as usize].min(index[w as usize]);
                    }
                } else {
                    call.pop();
                    if let Some(&(u, _)) = call.last() {
                        low[u as usize] = low[u as usize].min(low[v as usize]);
                    }
                    if low[v as usize] == index[v as usize] {
                        loop {
                            let w = stack.pop().expect("tarjan stack");
                            on_stack.remove(w as usize);
                            comp[w as usize] = count;
                            if w == v {
                                break;
                            }
                        }
                        count += 1;
                    }
                }
            }
        }
        // Tarjan completes components in reverse topological order.
        for c in comp.iter_mut() {
            if *c != NONE {
                *c = count - 1 - *c;
            }
        }
        let mut member_start = vec![0u32; count as usize + 1];
        for &c in &comp {
            if c != NONE {
                member_start[c as usize + 1] += 1;
            }
        }
        for i in 0..count as usize {
            member_start[i + 1] += member_start[i];
        }
        let mut fill = member_start.clone();
        let mut members = vec![0u32; member_start[count as usize] as usize];
        for (v, &c) in comp.iter().enumerate() {
            if c != NONE {
                members[fill[c as usize] as usize] = v as u32;
                fill[c as usize] += 1;
            }
        }
        let mut trivial = vec![false; count as usize];
        for c in 0..count as usize {
            let m = &members[member_start[c] as usize..member_start[c + 1] as usize];
            trivial[c] = m.len() == 1 && !g.succs(m[0]).contains(&m[0]);
        }
        Sccs {
            comp,
            count,
            trivial,
            members,
            member_start,
            _id: std::marker::PhantomData,
        }
    }

    /// The component of vertex `v`, `None` outside the vertex set.
    #[inline]
    pub fn comp(&self, v: u32) -> Option<C> {
        let c = self.comp[v as usize];
        (c != NONE).then(|| C::new(c as usize))
    }

    /// Number of components.
    #[inline]
    pub fn count(&self) -> usize {
        self.count as usize
    }

    /// The components, in topological order.
    pub fn ids(&self) -> impl DoubleEndedIterator<Item = C> + ExactSizeIterator {
        (0..self.count as usize).map(C::new)
    }

    /// Whether component `c` is *trivial*: one vertex and no self-loop, so
    /// a path can visit it at most once.
    #[inline]
    pub fn is_trivial(&self, c: C) -> bool {
        self.trivial[c.index()]
    }

    /// The members of component `c`, sorted.
    #[inline]
    pub fn members_of(&self, c: C) -> &[u32] {
        let c = c.index();
        &self.members[self.member_start[c] as usize..self.member_start[c + 1] as usize]
    }
}

/// Immediate dominators of the vertices of `g` reachable from `root`
/// through vertices with `inside(v)`; [`NONE`] for unreachable vertices,
/// `root` for the root itself. `preds` must be the reverse of `g`.
///
/// Lengauer, Tarjan, "A Fast Algorithm for Finding Dominators in a
/// Flowgraph" (TOPLAS 1979), the simple version (path compression without
/// balancing, O(m log n)), with an iterative DFS and an iterative `eval`:
/// frame graphs of deep stacks are chains of millions of vertices, on
/// which Cooper-Harvey-Kennedy's iteration (kept as the test reference,
/// `dominators_chk`) took quadratic time.
pub fn dominators(g: &Csr, preds: &Csr, root: u32, inside: impl Fn(u32) -> bool) -> Vec<u32> {
    let n = g.num_vertices();
    // Preorder numbering (dfnum), DFS-tree parents in dfnum space.
    let mut dfnum = vec![NONE; n];
    let mut vertex: Vec<u32> = Vec::new();
    let mut parent: Vec<u32> = Vec::new();
    let mut call: Vec<(u32, u32)> = vec![(root, 0)];
    dfnum[root as usize] = 0;
    vertex.push(root);
    parent.push(NONE);
    while let Some(top) = call.last_mut() {
        let v = top.0;
        let s = g.succs(v);
        if (top.1 as usize) < s.len() {
            let w = s[top.1 as usize];
            top.1 += 1;
            if inside(w) && dfnum[w as usize] == NONE {
                dfnum[w as usize] = vertex.len() as u32;
                parent.push(dfnum[v as usize]);
                vertex.push(w);
                call.push((w, 0));
            }
        } else {
            call.pop();
        }
    }
    let m = vertex.len();
    let mut semi: Vec<u32> = (0..m as u32).collect();
    let mut label: Vec<u32> = (0..m as u32).collect();
    let mut ancestor = vec![NONE; m];
    let mut idom_d = vec![NONE; m];
    // bucket[x]: the vertices whose semidominator is x, as linked lists.
    let mut bucket_head = vec![NONE; m];
    let mut bucket_next = vec![NONE; m];
    let mut path: Vec<u32> = Vec::new();
    let mut eval = |v: u32, ancestor: &mut Vec<u32>, label: &mut Vec<u32>, semi: &Vec<u32>| {
        if ancestor[v as usize] == NONE {
            return v;
        }
        // Compress the path from v (iteratively, deepest first).
        let mut x = v;
        while ancestor[ancestor[x as usize] as usize] != NONE {
            path.push(x);
            x = ancestor[x as usize];
        }
        while let Some(y) = path.pop() {
            let a = ancestor[y as usize];
            if semi[label[a as usize] as usize] < semi[label[y as usize] as usize] {
                label[y as usize] = label[a as usize];
            }
            ancestor[y as usize] = ancestor[a as usize];
        }
        label[v as usize]
    };
    for w in (1..m).rev() {
        for &p in preds.succs(vertex[w]) {
            let v = dfnum[p as usize];
            if v == NONE {
                continue;
            }
            let u = eval(v, &mut ancestor, &mut label, &semi);
            if semi[u as usize] < semi[w] {
                semi[w] = semi[u as usize];
            }
        }
        let sw = semi[w] as usize;
        bucket_next[w] = bucket_head[sw];
        bucket_head[sw] = w as u32;
        let pw = parent[w];
        ancestor[w] = pw;
        let mut b = std::mem::replace(&mut bucket_head[pw as usize], NONE);
        while b != NONE {
            let u = eval(b, &mut ancestor, &mut label, &semi);
            idom_d[b as usize] = if semi[u as usize] < semi[b as usize] {
                u
            } else {
                pw
            };
            b = bucket_next[b as usize];
        }
    }
    for w in 1..m {
        if idom_d[w] != semi[w] {
            idom_d[w] = idom_d[idom_d[w] as usize];
        }
    }
    let mut idom = vec![NONE; n];
    idom[root as usize] = root;
    for w in 1..m {
        idom[vertex[w] as usize] = vertex[idom_d[w] as usize];
    }
    idom
}

/// Cooper, Harvey, Kennedy, "A Simple, Fast Dominance Algorithm" (2001):
/// the reference [`dominators`] is tested against.
#[cfg(test)]
fn dominators_chk(g: &Csr, preds: &Csr, root: u32, inside: impl Fn(u32) -> bool) -> Vec<u32> {
    let n = g.num_vertices();
    // Iterative DFS for a postorder.
    let mut post_num = vec![NONE; n];
    let mut order: Vec<u32> = Vec::new(); // postorder
    let mut visited = BitSet::new(n);
    let mut call: Vec<(u32, u32)> = vec![(root, 0)];
    visited.insert(root as usize);
    while let Some(top) = call.last_mut() {
        let v = top.0;
        let s = g.succs(v);
        if (top.1 as usize) < s.len() {
            let w = s[top.1 as usize];
            top.1 += 1;
            if inside(w) && visited.insert(w as usize) {
                call.push((w, 0));
            }
        } else {
            post_num[v as usize] = order.len() as u32;
            order.push(v);
            call.pop();
        }
    }
    let mut idom = vec![NONE; n];
    idom[root as usize] = root;
    let intersect = |idom: &Vec<u32>, mut a: u32, mut b: u32| -> u32 {
        while a != b {
            while post_num[a as usize] < post_num[b as usize] {
                a = idom[a as usize];
            }
            while post_num[b as usize] < post_num[a as usize] {
                b = idom[b as usize];
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &v in order.iter().rev() {
            if v == root {
                continue;
            }
            let mut new_idom = NONE;
            for &p in preds.succs(v) {
                if post_num[p as usize] == NONE || idom[p as usize] == NONE {
                    continue;
                }
                new_idom = if new_idom == NONE {
                    p
                } else {
                    intersect(&idom, p, new_idom)
                };
            }
            if new_idom != idom[v as usize] {
                idom[v as usize] = new_idom;
                changed = true;
            }
        }
    }
    idom
}

/// A tree over the vertices of a graph, as parent links: a dominator tree
/// (the root is its own parent) or a search tree (the root has none).
/// Vertices outside the tree have no parent.
#[derive(Clone, Debug)]
pub(crate) struct Tree {
    /// [`NONE`] for no parent.
    parent: Vec<u32>,
}

impl Tree {
    /// A tree of `n` vertices, none of them with a parent yet.
    pub(crate) fn new(n: usize) -> Tree {
        Tree {
            parent: vec![NONE; n],
        }
    }

    /// The parent of `v`, if any.
    #[inline]
    pub(crate) fn parent(&self, v: u32) -> Option<u32> {
        let p = self.parent[v as usize];
        (p != NONE).then_some(p)
    }

    #[inline]
    pub(crate) fn set_parent(&mut self, v: u32, p: u32) {
        self.parent[v as usize] = p;
    }

    pub(crate) fn len(&self) -> usize {
        self.parent.len()
    }

    /// The strict ancestors of `v`, nearest first, up to and including
    /// `root` (in a dominator tree: `v`'s dominators other than itself).
    pub(crate) fn above(&self, v: u32, root: u32) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors(self.parent(v), move |&x| {
            if x == root {
                None
            } else {
                self.parent(x)
            }
        })
    }

    /// `v` (if any) and its ancestors, up to but excluding `root`.
    pub(crate) fn up_from(&self, v: Option<u32>, root: u32) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors(v, |&x| self.parent(x)).take_while(move |&x| x != root)
    }
}

/// The dominator tree of [`dominators`]: each vertex's parent is its
/// immediate dominator.
pub(crate) fn dominator_tree(
    g: &Csr,
    preds: &Csr,
    root: u32,
    inside: impl Fn(u32) -> bool,
) -> Tree {
    Tree {
        parent: dominators(g, preds, root, inside),
    }
}

/// Breadth-first walks inside one component, with marks reused across
/// walks (a generation counter instead of clearing).
pub(crate) struct Walker {
    seen: Vec<u32>,
    parent: Vec<u32>,
    generation: u32,
    queue: std::collections::VecDeque<u32>,
}

impl Walker {
    pub(crate) fn new(n: usize) -> Walker {
        Walker {
            seen: vec![0; n],
            parent: vec![NONE; n],
            generation: 0,
            queue: Default::default(),
        }
    }

    /// The nodes after `a` of a shortest walk from `a` through nodes with
    /// `inside` to a node with `goal` (empty if `a` is one and `may_stay`);
    /// `None` if none is found among the first `limit` nodes reached.
    pub(crate) fn walk(
        &mut self,
        g: &Csr,
        a: u32,
        goal: impl Fn(u32) -> bool,
        inside: impl Fn(u32) -> bool,
        may_stay: bool,
        limit: usize,
    ) -> Option<Vec<u32>> {
        if may_stay && goal(a) {
            return Some(Vec::new());
        }
        let mut reached = 0usize;
        self.generation += 1;
        let gen = self.generation;
        self.queue.clear();
        for &w in g.succs(a) {
            if inside(w) && self.seen[w as usize] != gen {
                self.seen[w as usize] = gen;
                self.parent[w as usize] = a;
                self.queue.push_back(w);
            }
        }
        while let Some(v) = self.queue.pop_front() {
            reached += 1;
            if reached > limit {
                return None;
            }
            if goal(v) {
                // Tree parents lead back to a successor of `a` (whose parent
                // is `a`); `a` itself, if reached again, is a leaf.
                let mut out = vec![v];
                let mut x = v;
                while self.parent[x as usize] != a {
                    x = self.parent[x as usize];
                    out.push(x);
                }
                out.reverse();
                return Some(out);
            }
            for &w in g.succs(v) {
                if inside(w) && self.seen[w as usize] != gen {
                    self.seen[w as usize] = gen;
                    self.parent[w as usize] = v;
                    self.queue.push_back(w);
                }
            }
        }
        None
    }
}

/// A BFS tree from `root` over nodes with `inside`, and the depths
/// (`u32::MAX` outside it).
pub(crate) fn bfs_tree(g: &Csr, root: u32, inside: impl Fn(u32) -> bool) -> (Tree, Vec<u32>) {
    let n = g.num_vertices();
    let mut parent = Tree::new(n);
    let mut depth = vec![u32::MAX; n];
    depth[root as usize] = 0;
    let mut queue = std::collections::VecDeque::from([root]);
    while let Some(v) = queue.pop_front() {
        for &w in g.succs(v) {
            if inside(w) && depth[w as usize] == u32::MAX {
                depth[w as usize] = depth[v as usize] + 1;
                parent.set_parent(w, v);
                queue.push_back(w);
            }
        }
    }
    (parent, depth)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sccs_are_topologically_numbered() {
        // 0 -> 1 <-> 2 -> 3, 3 -> 3 (self loop), 4 isolated
        let g = Csr::from_edges(5, &[(0, 1), (1, 2), (2, 1), (2, 3), (3, 3)]);
        let s: Sccs = Sccs::compute(&g, |_| true);
        let c = |v| s.comp(v).expect("inside");
        assert_eq!(s.count(), 4);
        assert_eq!(c(1), c(2));
        assert!(c(0) < c(1) && c(1) < c(3));
        assert!(s.is_trivial(c(0)));
        assert!(!s.is_trivial(c(1)));
        assert!(!s.is_trivial(c(3)), "self loop is not trivial");
        assert_eq!(s.members_of(c(1)), [1, 2]);
        let s: Sccs = Sccs::compute(&g, |v| v != 2);
        assert_eq!(s.comp(2), None);
        assert!(s.is_trivial(s.comp(1).expect("inside")));
    }

    #[test]
    fn deep_graphs_do_not_overflow_the_stack() {
        let n = 1_000_000u32;
        let mut e: Vec<(u32, u32)> = (0..n - 1).map(|i| (i, i + 1)).collect();
        e.push((n - 1, 0));
        let g = Csr::from_edges(n as usize, &e);
        let s: Sccs = Sccs::compute(&g, |_| true);
        assert_eq!(s.count(), 1);
        let idom = dominators(&g, &g.reversed(), 0, |_| true);
        assert_eq!(idom[5], 4);
    }

    #[test]
    fn lengauer_tarjan_agrees_with_cooper_harvey_kennedy_on_random_graphs() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        for case in 0..2000 {
            let n = 1 + next(30) as usize;
            let ne = next(3 * n as u64 + 1) as usize;
            let e: Vec<(u32, u32)> = (0..ne)
                .map(|_| (next(n as u64) as u32, next(n as u64) as u32))
                .collect();
            let g = Csr::from_edges(n, &e);
            let rev = g.reversed();
            let root = next(n as u64) as u32;
            let out = next(n as u64 + 1) as u32;
            let inside = |v: u32| v != out || v == root;
            assert_eq!(
                dominators(&g, &rev, root, inside),
                dominators_chk(&g, &rev, root, inside),
                "case {case}: {e:?} from {root} without {out}"
            );
        }
    }

    #[test]
    fn dominators_of_a_diamond_with_loop() {
        // 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3, 3 -> 4, 4 -> 1
        let g = Csr::from_edges(5, &[(0, 1), (0, 2), (1, 3), (2, 3), (3, 4), (4, 1)]);
        let idom = dominators(&g, &g.reversed(), 0, |_| true);
        assert_eq!(idom, vec![0, 0, 0, 0, 3]);
        let idom = dominators(&g, &g.reversed(), 0, |v| v != 2);
        assert_eq!(idom, vec![0, 0, NONE, 1, 3]);
    }
}
