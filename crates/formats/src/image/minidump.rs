//! Minidumps (Breakpad and Crashpad format, Linux x86-64) read into the
//! same view as an ELF core ([`crate::image::native::Core`]): memory ranges, the crashing
//! thread's registers, the auxiliary vector and the file mappings, so that
//! unwinding, coverage flags and variables' values run through the same
//! code as for cores ([`crate::image::native`], [`crate::image::values`]).
//!
//! Read with the `minidump` crate:
//! * the exception stream: which thread crashed, the signal and the
//!   faulting address; its context (registers), else that thread's in the
//!   thread list. A dump without an exception stream is refused: it does
//!   not say which thread crashed.
//! * the memory: every range of the `MemoryList` (thread stacks, memory
//!   around pointers, a handler's extra ranges) and of the `Memory64List`
//!   (full-memory dumps), in place: a range is a slice of the mapped file.
//!   What the dump does not hold is not read: a flag array or a variable
//!   outside every range is no evidence.
//! * the module list, with each module's build id (CodeView ELF record):
//!   [`crate::image::native::load_base`] checks the binary's build id against its
//!   module's, and a library's before its call frame information is used.
//! * `LinuxAuxv` (`AT_ENTRY`, the load base of a PIE) and `LinuxMaps`
//!   (the file mappings), which Breakpad and minidump-writer write; without
//!   them the module list stands for the mappings.
//!
//! A stack that a writer *sanitized* (non-pointer words replaced by
//! `0x0defaced0defaced`, Breakpad's and minidump-writer's option) still
//! unwinds (frame pointers and return addresses are kept) but holds no
//! values: it is marked ([`DumpInfo::stack_sanitized`]) and its locals are
//! not read.

use crate::image::{Mapping, NativeError, Regs, Seg};
use ::minidump::format::MINIDUMP_STREAM_TYPE;
use ::minidump::system_info::Cpu;
use ::minidump::{
    CodeView, Minidump, MinidumpContext, MinidumpException, MinidumpMemory64List,
    MinidumpMemoryList, MinidumpMiscInfo, MinidumpModuleList, MinidumpRawContext,
    MinidumpSystemInfo, MinidumpThreadList,
};
use std::path::Path;

/// The magic of a minidump (`MDMP`, little-endian).
pub const MAGIC: &[u8; 4] = b"MDMP";

/// What a minidump says beyond a core's view.
#[derive(Clone, Debug, Default)]
pub struct DumpInfo {
    /// The modules (executable and libraries) with their build ids.
    pub modules: Vec<DumpModule>,
    /// The crashing thread's id.
    pub thread_id: u32,
    /// The exception code (on Linux, the signal number; `0xffffffff`
    /// for a dump requested without a crash).
    pub code: u32,
    /// The faulting address.
    pub address: u64,
    /// The signal's `si_code` (Breakpad and Crashpad write it as the
    /// exception's flags on Linux).
    pub si_code: u32,
    /// The crashing thread's stack was sanitized by the writer: its
    /// non-pointer words are gone, so no local variable is read from it.
    pub stack_sanitized: bool,
    /// How many memory ranges the dump holds, and their bytes.
    pub ranges: (usize, u64),
}

/// A module of the dump's module list.
#[derive(Clone, Debug)]
pub struct DumpModule {
    /// First address.
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    /// Its path in the crashed process.
    pub name: String,
    /// Its GNU build id (from the CodeView ELF record), when the writer
    /// recorded one.
    pub build_id: Option<Vec<u8>>,
}

impl DumpInfo {
    /// The module holding `addr`.
    pub fn module_at(&self, addr: u64) -> Option<&DumpModule> {
        self.modules
            .iter()
            .find(|m| addr >= m.start && addr < m.end)
    }
}

/// A minidump in a [`Core`](crate::image::native::Core)'s terms: memory ranges
/// (offsets into the dump's bytes) and the rest.
pub(crate) struct Parsed {
    pub segs: Vec<Seg>,
    pub auxv: Vec<(u64, u64)>,
    pub files: Vec<Mapping>,
    pub regs: Regs,
    pub signal: u32,
    pub threads: usize,
    /// An address in each other thread's stack memory (its stack's start).
    pub other_stacks: Vec<u64>,
    pub info: DumpInfo,
}

/// The sentinel a sanitizing writer leaves in place of non-pointer words.
const DEFACED: u64 = 0x0def_aced_0def_aced;

/// Reads the minidump `data` (the whole file), named `path` in errors.
pub(crate) fn parse(data: &[u8], path: &Path) -> Result<Parsed, NativeError> {
    let shown = path.display();
    let bad = |what: String| NativeError(format!("{shown}: {what}"));
    let dump = Minidump::read(data).map_err(|e| {
        bad(format!(
            "not a readable minidump (truncated or corrupt): {e}"
        ))
    })?;
    check_directory(data).map_err(|e| bad(e.to_string()))?;
    let exc: MinidumpException<'_> = dump.get_stream().map_err(|e| {
        bad(format!(
            "no exception stream ({e}): the minidump does not say which thread crashed"
        ))
    })?;
    let sys: MinidumpSystemInfo = dump.get_stream().map_err(|e| {
        bad(format!(
            "no system info stream ({e}): the CPU of the registers is unknown"
        ))
    })?;
    if sys.cpu != Cpu::X86_64 {
        return Err(bad(format!(
            "a minidump of a {} process: only x86-64 is supported",
            sys.cpu
        )));
    }
    let misc: Option<MinidumpMiscInfo> = dump.get_stream().ok();
    let threads: MinidumpThreadList<'_> = dump.get_stream().map_err(|e| {
        bad(format!(
            "no readable thread list ({e}): truncated or corrupt"
        ))
    })?;
    let tid = exc.thread_id;
    let thread = threads.get_thread(tid);
    // The exception's context is the crash's (the thread's may be the
    // signal handler's); else the thread's.
    let ctx = exc
        .context(&sys, misc.as_ref())
        .or_else(|| thread.and_then(|t| t.context(&sys, misc.as_ref())))
        .ok_or_else(|| {
            bad(format!(
                "no registers for the crashing thread {tid} (no context in the exception stream or the thread list)"
            ))
        })?;
    let regs =
        amd64(&ctx).ok_or_else(|| bad("the crashing thread's registers are not x86-64".into()))?;
    let (segs, other_stacks) = memory_ranges(&dump, data, &threads, tid).map_err(|e| {
        bad(format!(
            "unreadable memory list ({e}): truncated or corrupt"
        ))
    })?;
    let stack_sanitized = sanitized(&segs, data, regs.rsp);
    let modules = match dump.get_stream::<MinidumpModuleList>() {
        Ok(list) => dump_modules(&list),
        Err(e) => {
            return Err(bad(format!(
                "no readable module list ({e}): the binary cannot be found in the dump"
            )))
        }
    };
    let auxv = dump
        .get_raw_stream(MINIDUMP_STREAM_TYPE::LinuxAuxv as u32)
        .map(crate::image::pairs)
        .unwrap_or_default();
    let files = match dump.get_raw_stream(MINIDUMP_STREAM_TYPE::LinuxMaps as u32) {
        Ok(text) => parse_maps(text),
        Err(_) => modules
            .iter()
            .map(|m| Mapping {
                start: m.start,
                end: m.end,
                offset: 0,
                path: m.name.clone(),
            })
            .collect(),
    };
    let ranges = (segs.len(), segs.iter().map(|s| s.filesz).sum());
    Ok(Parsed {
        segs,
        auxv,
        files,
        regs,
        signal: exc.raw.exception_record.exception_code,
        threads: threads.threads.len().max(1),
        other_stacks,
        info: DumpInfo {
            modules,
            thread_id: tid,
            code: exc.raw.exception_record.exception_code,
            address: exc.raw.exception_record.exception_address,
            si_code: exc.raw.exception_record.exception_flags,
            stack_sanitized,
            ranges,
        },
    })
}

/// The dump's memory as ranges of `data` (the crashing thread's stack,
/// the other threads' stacks, then the memory lists), and an address in
/// each other thread's stack. Err with the memory list's error when one
/// is there but unreadable (a range past the end of the file): that is
/// not a dump without memory.
fn memory_ranges(
    dump: &Minidump<'_, &[u8]>,
    data: &[u8],
    threads: &MinidumpThreadList<'_>,
    tid: u32,
) -> Result<(Vec<Seg>, Vec<u64>), ::minidump::Error> {
    let thread = threads.get_thread(tid);
    let base = data.as_ptr() as usize;
    let mut segs = Vec::new();
    // A range's bytes are a slice of `data`: its offset is where it
    // starts (a slice from anywhere else is not used).
    let mut push = |vaddr: u64, bytes: &[u8]| {
        let Some(offset) = (bytes.as_ptr() as usize).checked_sub(base) else {
            return;
        };
        let len = bytes.len();
        if len > 0 && offset.checked_add(len).is_some_and(|end| end <= data.len()) {
            segs.push(Seg {
                vaddr,
                memsz: len as u64,
                filesz: len as u64,
                offset: offset as u64,
            });
        }
    };
    let memory = dump.get_memory().unwrap_or_default();
    if let Some(stack) = thread.and_then(|t| t.stack_memory(&memory)) {
        push(stack.base_address(), stack.bytes());
    }
    // The other threads' stacks (the memory list usually holds them too).
    let mut other_stacks = Vec::new();
    for t in threads.threads.iter().filter(|t| t.raw.thread_id != tid) {
        if let Some(stack) = t.stack_memory(&memory) {
            push(stack.base_address(), stack.bytes());
            other_stacks.push(stack.base_address());
        }
    }
    if dump
        .get_raw_stream(MINIDUMP_STREAM_TYPE::MemoryListStream as u32)
        .is_ok()
    {
        let list = dump.get_stream::<MinidumpMemoryList<'_>>()?;
        list.iter().for_each(|m| push(m.base_address, m.bytes));
    }
    if dump
        .get_raw_stream(MINIDUMP_STREAM_TYPE::Memory64ListStream as u32)
        .is_ok()
    {
        let list = dump.get_stream::<MinidumpMemory64List<'_>>()?;
        list.iter().for_each(|m| push(m.base_address, m.bytes));
    }
    Ok((segs, other_stacks))
}

/// Whether the crashing thread's stack (the range of `segs` holding its
/// stack pointer `rsp`) was sanitized: it holds the [`DEFACED`] word.
fn sanitized(segs: &[Seg], data: &[u8], rsp: u64) -> bool {
    segs.iter()
        .find(|s| rsp >= s.vaddr && rsp - s.vaddr < s.filesz)
        .and_then(|s| data.get(s.offset as usize..(s.offset + s.filesz) as usize))
        .is_some_and(|b| {
            b.chunks_exact(8)
                .any(|w| u64::from_le_bytes(w.try_into().unwrap()) == DEFACED)
        })
}

/// The dump's module list as [`DumpModule`]s, with the build id of each
/// module's CodeView ELF record when it has a non-empty one.
fn dump_modules(list: &MinidumpModuleList) -> Vec<DumpModule> {
    list.iter()
        .map(|m| DumpModule {
            start: m.raw.base_of_image,
            end: m
                .raw
                .base_of_image
                .saturating_add(u64::from(m.raw.size_of_image)),
            name: m.name.clone(),
            build_id: match &m.codeview_info {
                Some(CodeView::Elf(e)) if !e.build_id.is_empty() => Some(e.build_id.clone()),
                _ => None,
            },
        })
        .collect()
}

/// What `assemble` says about a minidump it reads: the crashing thread,
/// the signal, and how much memory the dump holds.
pub fn note(name: &str, d: &DumpInfo) -> String {
    let what = match d.code {
        0xffff_ffff => "a dump requested without a crash".to_string(),
        c => format!("signal {c} at {:#x}", d.address),
    };
    format!(
        "{name}: minidump, crashing thread {} ({what}), {} memory ranges ({} bytes), {} modules",
        d.thread_id,
        d.ranges.0,
        d.ranges.1,
        d.modules.len()
    )
}

/// How a minidump is cut short ([`check_directory`]); `len` is the
/// file's size.
#[derive(Debug, thiserror::Error)]
enum Truncated {
    /// Not even the header's stream count and directory offset.
    #[error("truncated minidump: no complete header")]
    Header,
    /// The stream directory ends past the end of the file.
    #[error(
        "truncated minidump: its stream directory ({count} entries at {dir:#x}) ends past the end of the file ({len} bytes)"
    )]
    Directory { count: u64, dir: u64, len: u64 },
    /// A stream ends past the end of the file.
    #[error(
        "truncated minidump: stream {index} (type {kind:#x}) needs bytes up to {end} but the file has {len}"
    )]
    Stream {
        index: u64,
        kind: u64,
        end: u64,
        len: u64,
    },
}

/// Every stream the directory lists must lie inside the file: a dump cut
/// short (a writer killed mid-way, a partial upload) is refused rather
/// than read with streams missing.
fn check_directory(data: &[u8]) -> Result<(), Truncated> {
    let word = |at: usize| {
        data.get(at..at + 4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()) as u64)
    };
    let (Some(count), Some(dir)) = (word(8), word(12)) else {
        return Err(Truncated::Header);
    };
    let len = data.len() as u64;
    if dir + 12 * count > len {
        return Err(Truncated::Directory { count, dir, len });
    }
    for i in 0..count {
        let e = (dir + 12 * i) as usize;
        let (Some(kind), Some(size), Some(rva)) = (word(e), word(e + 4), word(e + 8)) else {
            continue;
        };
        if kind != 0 && rva + size > len {
            return Err(Truncated::Stream {
                index: i,
                kind,
                end: rva + size,
                len,
            });
        }
    }
    Ok(())
}

fn amd64(ctx: &MinidumpContext) -> Option<Regs> {
    match &ctx.raw {
        MinidumpRawContext::Amd64(c) => Some(Regs {
            rip: c.rip,
            rsp: c.rsp,
            rbp: c.rbp,
        }),
        _ => None,
    }
}

/// `/proc/PID/maps` lines (`start-end perms offset dev inode path`) with a
/// path, as [`Mapping`]s; malformed lines are skipped.
fn parse_maps(text: &[u8]) -> Vec<Mapping> {
    String::from_utf8_lossy(text)
        .lines()
        .filter_map(|line| {
            let mut f = line.split_whitespace();
            let (range, _perms, off, _dev, _inode) =
                (f.next()?, f.next()?, f.next()?, f.next()?, f.next()?);
            let path: Vec<&str> = f.collect();
            if path.is_empty() || !path[0].starts_with('/') {
                return None;
            }
            let (s, e) = range.split_once('-')?;
            Some(Mapping {
                start: u64::from_str_radix(s, 16).ok()?,
                end: u64::from_str_radix(e, 16).ok()?,
                offset: u64::from_str_radix(off, 16).ok()?,
                path: path.join(" "),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The errors say what they said as strings (issue 38).
    #[test]
    fn truncation_keeps_its_messages() {
        assert_eq!(
            check_directory(&[0; 8]).unwrap_err().to_string(),
            "truncated minidump: no complete header"
        );
        assert_eq!(
            Truncated::Directory {
                count: 3,
                dir: 32,
                len: 40
            }
            .to_string(),
            "truncated minidump: its stream directory (3 entries at 0x20) ends past the end of the file (40 bytes)"
        );
        assert_eq!(
            Truncated::Stream {
                index: 1,
                kind: 4,
                end: 100,
                len: 40
            }
            .to_string(),
            "truncated minidump: stream 1 (type 0x4) needs bytes up to 100 but the file has 40"
        );
    }

    #[test]
    fn maps_lines_with_a_path_become_mappings() {
        let m = parse_maps(
            b"5555-6666 r-xp 00001000 08:01 42 /usr/bin/prog\n7000-8000 rw-p 00000000 00:00 0 \n7fff-8fff rw-p 00000000 00:00 0 [stack]\nbad line\n",
        );
        assert_eq!(m.len(), 1);
        assert_eq!(
            (m[0].start, m[0].end, m[0].offset),
            (0x5555, 0x6666, 0x1000)
        );
        assert_eq!(m[0].path, "/usr/bin/prog");
    }
}
