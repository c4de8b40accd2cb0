//! A crashed process's image as cores and minidumps both give it: its
//! memory segments, the files mapped into it and the crashing thread's
//! registers, with the error type of both readers. Below both
//! ([`crate::image::native`] reads ELF cores, [`crate::image::minidump`] minidumps), so
//! that neither reader imports the other's types.

pub mod buildcheck;
pub mod fault;
pub mod minidump;
pub mod native;
pub mod no_code;
pub mod open;
pub mod residue;
pub mod sancov;
pub mod values;

/// One line: what is wrong with which file.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NativeError(pub String);

/// Little-endian `(u64, u64)` pairs of `b`.
pub(crate) fn pairs(b: &[u8]) -> Vec<(u64, u64)> {
    b.chunks_exact(16)
        .map(|c| {
            (
                u64::from_le_bytes(c[..8].try_into().unwrap()),
                u64::from_le_bytes(c[8..].try_into().unwrap()),
            )
        })
        .collect()
}

/// A `PT_LOAD` segment of a core: memory `[vaddr, vaddr + memsz)`, of
/// which the first `filesz` bytes are in the file at `offset`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Seg {
    pub vaddr: u64,
    pub memsz: u64,
    pub filesz: u64,
    pub offset: u64,
}

/// An `NT_FILE` entry: a file mapped at `[start, end)` from page `pgoff`.
#[derive(Clone, Debug)]
pub struct Mapping {
    /// Start address.
    pub start: u64,
    /// End address.
    pub end: u64,
    /// Offset in the file, in bytes.
    pub offset: u64,
    /// The file.
    pub path: String,
}

/// x86-64 registers of the crashing thread.
#[derive(Clone, Copy, Debug, Default)]
pub struct Regs {
    /// Program counter.
    pub rip: u64,
    /// Stack pointer.
    pub rsp: u64,
    /// Frame pointer.
    pub rbp: u64,
}
