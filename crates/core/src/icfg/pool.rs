//! String pools and the open-addressing index of input ids, the frozen
//! graph's string storage.

/// Append-only string pool addressed by `u32` offsets.
#[derive(Clone, Debug, Default)]
pub(super) struct StrPool {
    pub(super) bytes: String,
    pub(super) ends: Vec<u32>,
}

impl StrPool {
    pub(super) fn push(&mut self, s: &str) {
        self.bytes.push_str(s);
        self.ends.push(self.bytes.len() as u32);
    }
    pub(super) fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.bytes[start..self.ends[i] as usize]
    }
    pub(super) fn heap_bytes(&self) -> usize {
        self.bytes.capacity() + self.ends.capacity() * 4
    }
}

/// Open-addressing hash index from input ids (strings in a [`StrPool`])
/// to node indices: 4 bytes per slot, no per-node allocation.
#[derive(Clone, Debug, Default)]
pub(super) struct ExtIndex {
    pub(super) slots: Vec<u32>,
    pub(super) len: usize,
}

pub(super) const EMPTY: u32 = u32::MAX;

/// A fast non-cryptographic string hash (word-at-a-time multiply-rotate,
/// in the spirit of FxHash). Input ids are not adversarial keys: a
/// collision only costs time.
pub(super) fn hash_str(s: &str) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h: u64 = s.len() as u64;
    let b = s.as_bytes();
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        h = (h.rotate_left(5) ^ w).wrapping_mul(K);
    }
    let mut tail = [0u8; 8];
    let r = chunks.remainder();
    tail[..r.len()].copy_from_slice(r);
    h = (h.rotate_left(5) ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    h ^ (h >> 29)
}

impl ExtIndex {
    pub(super) fn find(&self, pool: &StrPool, key: &str) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = hash_str(key) as usize & mask;
        loop {
            let v = self.slots[i];
            if v == EMPTY {
                return None;
            }
            if pool.get(v as usize) == key {
                return Some(v);
            }
            i = (i + 1) & mask;
        }
    }
    /// Inserts node `v` (whose id is `pool.get(v)`); returns false if the
    /// id is already present.
    pub(super) fn insert(&mut self, pool: &StrPool, v: u32) -> bool {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow(pool);
        }
        let key = pool.get(v as usize);
        let mask = self.slots.len() - 1;
        let mut i = hash_str(key) as usize & mask;
        loop {
            let w = self.slots[i];
            if w == EMPTY {
                self.slots[i] = v;
                self.len += 1;
                return true;
            }
            if pool.get(w as usize) == key {
                return false;
            }
            i = (i + 1) & mask;
        }
    }
    pub(super) fn grow(&mut self, pool: &StrPool) {
        let cap = (self.slots.len() * 2).max(64);
        let old = std::mem::replace(&mut self.slots, vec![EMPTY; cap]);
        let mask = cap - 1;
        for v in old.into_iter().filter(|&v| v != EMPTY) {
            let mut i = hash_str(pool.get(v as usize)) as usize & mask;
            while self.slots[i] != EMPTY {
                i = (i + 1) & mask;
            }
            self.slots[i] = v;
        }
    }
    pub(super) fn heap_bytes(&self) -> usize {
        self.slots.capacity() * 4
    }
}
