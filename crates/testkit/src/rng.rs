//! SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom
//! number generators", OOPSLA 2014): tiny, fast, deterministic in its
//! seed, so a failing case is reproduced by its seed.

/// A small deterministic PRNG (SplitMix64).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// Seeded generator.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    /// A generator for one of several independent streams of one seed
    /// (the first output is skipped).
    pub fn with_stream(seed: u64, stream: u64) -> Rng {
        let mut r = Rng(seed ^ stream.wrapping_mul(0xD6E8_FEB8_6659_FD93));
        r.next_u64();
        r
    }
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// In `0..n` (`n > 0`), by remainder.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// Uniform in `0..n` (`n > 0`), by multiply-and-shift (no modulo bias).
    pub fn below_u64(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
    /// Uniform index in `0..n` (`n > 0`), by multiply-and-shift.
    pub fn index(&mut self, n: usize) -> usize {
        self.below_u64(n as u64) as usize
    }
    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// True with probability `p` percent.
    pub fn chance(&mut self, p: u32) -> bool {
        self.below(100) < p as usize
    }
    /// True with probability `p` (in `[0, 1]`).
    pub fn chance_f(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    /// True with probability `p` per mille.
    pub fn permille(&mut self, p: u32) -> bool {
        self.below_u64(1000) < p as u64
    }
}
