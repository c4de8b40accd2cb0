//! A fast non-cryptographic hasher for the solvers' internal maps (keys
//! are small integers and integer slices the solvers made themselves, not
//! adversarial input). The multiply-rotate of rustc's `FxHasher`.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` with [`FxHasher`].
pub(crate) type FxHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// A `HashSet` with [`FxHasher`].
pub(crate) type FxHashSet<K> = std::collections::HashSet<K, BuildHasherDefault<FxHasher>>;

/// Word-at-a-time multiply-rotate hashing.
#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher {
    hash: u64,
}

const K: u64 = 0x517c_c1b7_2722_0a95;

impl FxHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.hash = (self.hash.rotate_left(5) ^ w).wrapping_mul(K);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let r = chunks.remainder();
        if !r.is_empty() {
            let mut tail = [0u8; 8];
            tail[..r.len()].copy_from_slice(r);
            self.add(u64::from_le_bytes(tail));
        }
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        // Spread the high bits down: hashbrown takes its control byte from
        // the top 7 bits and its bucket from the low ones.
        self.hash ^ (self.hash >> 29)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_small_keys_hash_apart() {
        let h = |k: (u32, u32, u32)| {
            use std::hash::{BuildHasher, BuildHasherDefault};
            BuildHasherDefault::<FxHasher>::default().hash_one(k)
        };
        let mut seen = std::collections::HashSet::new();
        for a in 0..20 {
            for b in 0..20 {
                for c in 0..20 {
                    seen.insert(h((a, b, c)));
                }
            }
        }
        assert_eq!(seen.len(), 8000);
    }
}
