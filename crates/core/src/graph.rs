//! Flat graph storage shared by the model and the solvers: compressed sparse
//! rows (CSR) over dense `u32` vertex indices, and a small bit set.
//!
//! The solvers work on *local* graphs (a subproblem, plus virtual source and
//! sink vertices) built as [`Csr`] values, so that every algorithm in
//! [`crate::algo`] has one implementation for the whole ICFG and for a piece
//! of it.

/// Compressed adjacency: the out-neighbours of vertex `v` are
/// `targets[offsets[v]..offsets[v + 1]]`.
#[derive(Clone, Debug, Default)]
pub struct Csr {
    offsets: Vec<u32>,
    targets: Vec<u32>,
}

/// `items` (source, payload) grouped by source, `n` sources: the offsets
/// of each source's payloads (one more than `n`) and the payloads, each
/// source's in the list's order (a stable counting sort).
pub(crate) fn group_by_source<T: Copy + Default>(
    n: usize,
    items: &[(u32, T)],
) -> (Vec<u32>, Vec<T>) {
    let mut offsets = vec![0u32; n + 1];
    for &(s, _) in items {
        offsets[s as usize + 1] += 1;
    }
    for i in 0..n {
        offsets[i + 1] += offsets[i];
    }
    let mut fill = offsets.clone();
    let mut out = vec![T::default(); items.len()];
    for &(s, x) in items {
        let slot = &mut fill[s as usize];
        out[*slot as usize] = x;
        *slot += 1;
    }
    (offsets, out)
}

impl Csr {
    /// Builds the adjacency of `n` vertices from an edge list. Edges keep the
    /// order of the list within each source vertex (a stable counting sort).
    pub fn from_edges(n: usize, edges: &[(u32, u32)]) -> Csr {
        let (offsets, targets) = group_by_source(n, edges);
        Csr { offsets, targets }
    }

    /// The adjacency from its arrays: `offsets` (one per vertex and one
    /// more, non-decreasing, the last `targets.len()`) and `targets`.
    pub fn from_parts(offsets: Vec<u32>, targets: Vec<u32>) -> Csr {
        debug_assert!(offsets.windows(2).all(|w| w[0] <= w[1]));
        debug_assert_eq!(offsets.last().map(|&o| o as usize), Some(targets.len()));
        Csr { offsets, targets }
    }

    /// The same graph with every edge reversed.
    pub fn reversed(&self) -> Csr {
        let n = self.num_vertices();
        let mut edges = Vec::with_capacity(self.targets.len());
        for v in 0..n {
            for &w in self.succs(v as u32) {
                edges.push((w, v as u32));
            }
        }
        Csr::from_edges(n, &edges)
    }

    /// Number of vertices.
    #[inline]
    pub fn num_vertices(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Number of edges.
    #[inline]
    pub fn num_edges(&self) -> usize {
        self.targets.len()
    }

    /// Out-neighbours of `v`.
    #[inline]
    pub fn succs(&self, v: u32) -> &[u32] {
        let v = v as usize;
        &self.targets[self.offsets[v] as usize..self.offsets[v + 1] as usize]
    }

    /// The range of edge indices leaving `v` (for parallel per-edge tables).
    #[inline]
    pub fn edge_range(&self, v: u32) -> std::ops::Range<usize> {
        let v = v as usize;
        self.offsets[v] as usize..self.offsets[v + 1] as usize
    }

    /// Heap bytes used.
    pub fn heap_bytes(&self) -> usize {
        (self.offsets.capacity() + self.targets.capacity()) * 4
    }
}

/// A fixed-size set of `u32` indices.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BitSet {
    words: Vec<u64>,
    len: usize,
}

impl BitSet {
    /// An empty set able to hold `0..len`.
    pub fn new(len: usize) -> BitSet {
        BitSet {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }
    /// Capacity (exclusive upper bound of members).
    pub fn capacity(&self) -> usize {
        self.len
    }
    /// Adds `i`; returns true if it was not there.
    #[inline]
    pub fn insert(&mut self, i: usize) -> bool {
        let (w, b) = (i / 64, 1u64 << (i % 64));
        let was = self.words[w] & b != 0;
        self.words[w] |= b;
        !was
    }
    /// Removes `i`.
    #[inline]
    pub fn remove(&mut self, i: usize) {
        self.words[i / 64] &= !(1u64 << (i % 64));
    }
    /// Membership.
    #[inline]
    pub fn contains(&self, i: usize) -> bool {
        self.words[i / 64] & (1u64 << (i % 64)) != 0
    }
    /// Empties the set.
    pub fn clear(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
    }
    /// Number of members.
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }
    /// Members in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(wi, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let t = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(wi * 64 + t)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csr_round_trip() {
        let g = Csr::from_edges(4, &[(0, 1), (0, 2), (2, 3), (3, 0)]);
        assert_eq!(g.succs(0), &[1, 2]);
        assert_eq!(g.succs(1), &[] as &[u32]);
        assert_eq!(g.num_edges(), 4);
        let r = g.reversed();
        assert_eq!(r.succs(0), &[3]);
        assert_eq!(r.succs(2), &[0]);
    }

    #[test]
    fn bitset_basics() {
        let mut s = BitSet::new(130);
        assert!(s.insert(129));
        assert!(!s.insert(129));
        s.insert(3);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![3, 129]);
        s.remove(3);
        assert_eq!(s.count(), 1);
        assert!(s.contains(129) && !s.contains(3));
    }
}
