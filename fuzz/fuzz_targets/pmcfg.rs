//! The `.pmcfg` binary cache decoder: arbitrary bytes never panic, and a
//! decoded graph's accessors never panic either.
//!
//! Random bytes almost never pass the length and checksum checks, so the
//! input is also decoded *resealed*: with its length field and checksum
//! fixed up, which takes the fuzzer into the structural validation.
#![no_main]
use libfuzzer_sys::fuzz_target;
use postmortem_formats::pmcfg::{decode, encode, CACHE_MAGIC};

/// The cache checksum, as `postmortem_formats::pmcfg` computes it (checked
/// below on every graph that decodes: a re-encoded graph is sealed).
fn checksum(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h: u64 = 0x243f_6a88_85a3_08d3 ^ bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        h = (h ^ u64::from_le_bytes(c.try_into().unwrap())).wrapping_mul(K);
        h ^= h >> 29;
    }
    let mut tail = [0u8; 8];
    let r = chunks.remainder();
    tail[..r.len()].copy_from_slice(r);
    h = (h ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    h ^ (h >> 32)
}

fn seal(bytes: &[u8]) -> Vec<u8> {
    let mut v = bytes.to_vec();
    let len = v.len();
    v[8..16].copy_from_slice(&(len as u64).to_le_bytes());
    let sum = checksum(&v[..len - 8]);
    v[len - 8..].copy_from_slice(&sum.to_le_bytes());
    v
}

fn exercise(bytes: &[u8]) {
    if let Ok(g) = decode(bytes) {
        for n in g.nodes() {
            let _ = (
                g.kind(n),
                g.ext_id(n),
                g.lines(n),
                g.succs(n).count(),
                g.preds(n).count(),
            );
            let _ = (g.label(n), g.func_of(n), g.return_sites(n).len());
        }
        let _ = (
            g.start(),
            g.functions().len(),
            g.async_registrations().len(),
        );
        let again = encode(&g);
        assert_eq!(seal(&again), again, "the checksum replica is out of date");
        let g2 = decode(&again).expect("a re-encoded graph decodes");
        assert_eq!(encode(&g2), again, "encode/decode is not a fixed point");
    }
}

fuzz_target!(|data: &[u8]| {
    exercise(data);
    if data.len() >= 24 && data.starts_with(&CACHE_MAGIC) {
        exercise(&seal(data));
    }
});
