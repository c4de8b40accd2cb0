//! Native crash data: an ELF binary built with
//! `-fsanitize-coverage=...,inline-bool-flag,pc-table` and a Linux core
//! dump of it.
//!
//! * [`Binary`]: the `__sancov_bools` and `__sancov_pcs` sections, the
//!   function symbols, the build id, and DWARF line info (through
//!   `addr2line`) for symbolizing addresses.
//! * [`Core`]: an ELF core (`ET_CORE`): its `PT_LOAD` segments (memory),
//!   the auxiliary vector (`AT_ENTRY`, for the load base of a PIE), the
//!   `NT_FILE` mappings and the first thread's registers (`NT_PRSTATUS`,
//!   x86-64: the thread that got the fatal signal, which the kernel and gdb
//!   write first). A minidump becomes the same view ([`crate::image::minidump`],
//!   told by its magic in [`Core::read`]), so everything below reads both.
//! * [`read_flags`]: the flag bytes, after checking that the core is of
//!   this binary (build id in the core's memory, entry point, and the
//!   relocated pc table in the core equal to the binary's).
//! * [`unwind`]: the crash stack. Frames in shared libraries (a crash in
//!   `abort`) are unwound with the library's `.eh_frame` (gimli), the
//!   library read from this machine and used only when its build id is
//!   the one in the core; the binary's frames by a frame-pointer walk
//!   (clang keeps frame pointers at `-O0`), every step checked
//!   (frame-pointer prologue of the function, a call instruction before
//!   every return address); from the first function without a frame
//!   pointer on (optimised code), by the binary's `.eh_frame` (`walk_cfi`),
//!   which also marks where sibling calls may hide frames. A stack that
//!   cannot be unwound soundly is refused, never guessed.
//!
//! Every error is one line ([`NativeError`]).

use crate::backtrace::RawFrame;
use crate::image::pairs;
pub(crate) use crate::image::Seg;
pub use crate::image::{Mapping, NativeError, Regs};
use object::elf;
use object::read::elf::{FileHeader, ProgramHeader};
use object::{Object, ObjectSection, ObjectSegment, ObjectSymbol, SymbolKind};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn err<T>(msg: impl Into<String>) -> Result<T, NativeError> {
    Err(NativeError(msg.into()))
}

/// The flag array section.
pub const BOOLS: &str = "__sancov_bools";
/// The pc table section: `(pc, flags)` pairs, one per flag; flags bit 0
/// marks a function entry.
pub const PCS: &str = "__sancov_pcs";

/// A function symbol of the binary.
#[derive(Clone, Debug)]
pub struct FuncSym {
    /// Its name.
    pub name: String,
    /// Its address (file vaddr).
    pub addr: u64,
    /// Its size in bytes (0 when unknown).
    pub size: u64,
}

/// An ELF executable with sancov sections.
pub struct Binary {
    path: PathBuf,
    data: Vec<u8>,
    /// Position independent (`ET_DYN`): loaded at a base chosen at run
    /// time.
    pub pie: bool,
    /// `e_entry`.
    pub entry: u64,
    /// The GNU build id, if any.
    pub build_id: Option<Vec<u8>>,
    /// Address of the build-id note's descriptor (file vaddr).
    build_id_addr: Option<u64>,
    /// `__sancov_bools`: (vaddr, size).
    pub bools: Option<(u64, u64)>,
    /// `__sancov_pcs`: (vaddr, size).
    pcs_range: Option<(u64, u64)>,
    /// Function symbols by address.
    funcs: Vec<FuncSym>,
    by_name: HashMap<String, usize>,
    /// Sections with file contents: (vaddr, size, file offset).
    sections: Vec<(u64, u64, u64)>,
    /// Code sections: (vaddr, size).
    text: Vec<(u64, u64)>,
    lines: Option<addr2line::Loader>,
}

/// The GNU build id (`NT_GNU_BUILD_ID` note) of the ELF file at `path`,
/// or None when it has none; the file is mapped, not read.
pub fn read_build_id(path: &Path) -> Result<Option<Vec<u8>>, NativeError> {
    let shown = path.display();
    crate::input::require_regular(path, "the program's binary (--binary)")
        .map_err(|e| NativeError(e.to_string()))?;
    let f =
        std::fs::File::open(path).map_err(|e| NativeError(format!("{shown}: cannot read: {e}")))?;
    // SAFETY: the map is read-only and lives for this call; a file changed
    // under it gives wrong bytes at worst, which `object` checks as input.
    let map = unsafe { memmap2::Mmap::map(&f) }
        .map_err(|e| NativeError(format!("{shown}: cannot map: {e}")))?;
    let file = object::File::parse(&*map)
        .map_err(|e| NativeError(format!("{shown}: not an ELF binary: {e}")))?;
    Ok(file.build_id().ok().flatten().map(|b| b.to_vec()))
}

impl Binary {
    /// Reads an ELF executable.
    pub fn read(path: &Path) -> Result<Binary, NativeError> {
        let shown = path.display();
        crate::input::require_regular(path, "the program's binary (--binary)")
            .map_err(|e| NativeError(e.to_string()))?;
        let data =
            std::fs::read(path).map_err(|e| NativeError(format!("{shown}: cannot read: {e}")))?;
        let lines = addr2line::Loader::new(path).ok();
        Binary::parse(data, path, lines)
    }

    /// An ELF executable from its bytes (for tests and fuzzing); `name`
    /// names it in errors. Without the file there is no DWARF line table:
    /// [`Binary::symbolize`] gives function names only.
    pub fn from_bytes(data: Vec<u8>, name: &Path) -> Result<Binary, NativeError> {
        Binary::parse(data, name, None)
    }

    fn parse(
        data: Vec<u8>,
        path: &Path,
        lines: Option<addr2line::Loader>,
    ) -> Result<Binary, NativeError> {
        let shown = path.display();
        let file = object::File::parse(&*data)
            .map_err(|e| NativeError(format!("{shown}: not an ELF binary: {e}")))?;
        if file.format() != object::BinaryFormat::Elf {
            return err(format!("{shown}: not an ELF binary"));
        }
        let pie = file.kind() == object::ObjectKind::Dynamic;
        let mut bools = None;
        let mut pcs_range = None;
        let mut build_id_addr = None;
        let mut sections = Vec::new();
        let mut text = Vec::new();
        for s in file.sections() {
            if s.kind() == object::SectionKind::Text {
                text.push((s.address(), s.size()));
            }
            let name = s.name().unwrap_or("");
            match name {
                BOOLS => bools = Some((s.address(), s.size())),
                PCS => pcs_range = Some((s.address(), s.size())),
                // Note header: namesz, descsz, type (4 bytes each), "GNU\0".
                ".note.gnu.build-id" => build_id_addr = Some(s.address().wrapping_add(16)),
                _ => {}
            }
            if let Some((off, size)) = s.file_range() {
                if s.address() != 0 && s.kind() != object::SectionKind::UninitializedData {
                    sections.push((s.address(), size, off));
                }
            }
        }
        let build_id = file.build_id().ok().flatten().map(|b| b.to_vec());
        let mut funcs: Vec<FuncSym> = file
            .symbols()
            .filter(|s| s.kind() == SymbolKind::Text && s.address() != 0)
            .filter_map(|s| {
                Some(FuncSym {
                    name: s.name().ok()?.to_string(),
                    addr: s.address(),
                    size: s.size(),
                })
            })
            .collect();
        funcs.sort_by_key(|f| (f.addr, std::cmp::Reverse(f.size)));
        let by_name = funcs
            .iter()
            .enumerate()
            .map(|(i, f)| (f.name.clone(), i))
            .collect();
        let entry = file.entry();
        drop(file);
        Ok(Binary {
            path: path.to_path_buf(),
            data,
            pie,
            entry,
            build_id,
            build_id_addr,
            bools,
            pcs_range,
            funcs,
            by_name,
            sections,
            text,
            lines,
        })
    }

    fn shown(&self) -> String {
        self.path.display().to_string()
    }

    /// The whole file.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// The file's bytes at file vaddr `addr`.
    pub fn bytes_at(&self, addr: u64, len: u64) -> Option<&[u8]> {
        let &(va, size, off) = self.sections.iter().find(|&&(va, size, _)| {
            addr >= va && addr.saturating_add(len) <= va.saturating_add(size)
        })?;
        let _ = size;
        let start = usize::try_from(off.checked_add(addr - va)?).ok()?;
        self.data
            .get(start..start.checked_add(usize::try_from(len).ok()?)?)
    }

    /// At most `len` bytes at file vaddr `addr`: up to the end of its
    /// section. None when no section holds `addr`.
    pub fn bytes_upto(&self, addr: u64, len: u64) -> Option<&[u8]> {
        let &(va, size, _) = self
            .sections
            .iter()
            .find(|&&(va, size, _)| addr >= va && addr - va < size)?;
        self.bytes_at(addr, len.min(va + size - addr))
    }

    /// The pc table as the file holds it: `(pc, flags)` pairs at file
    /// addresses. (In a PIE the pcs are also filled by relocations at load
    /// time; GNU ld writes the addends into the file too, and
    /// [`load_base`] tolerates zero words.)
    pub fn pcs(&self) -> Option<Vec<(u64, u64)>> {
        let (addr, size) = self.pcs_range?;
        let b = self.bytes_at(addr, size)?;
        Some(pairs(b))
    }

    /// Whether `addr` (file vaddr) is in a code section.
    pub fn in_text(&self, addr: u64) -> bool {
        self.text.iter().any(|&(a, n)| addr >= a && addr - a < n)
    }

    /// Whether pc-table entry `fpc` (the file's word) is a slot the linker
    /// never relocated: a value that is not the address of any code of
    /// the binary (LLVM writes the constant 1 for the address of a block
    /// that code generation deleted, and `llvm-link` keeps the pc tables
    /// of every translation unit's copy of a `linkonce_odr` function, whose
    /// block addresses become 1 once the copy is dropped). 0 is not one:
    /// in a PIE it is a slot that the dynamic loader fills.
    pub fn unrelocated(&self, fpc: u64) -> bool {
        fpc != 0 && !self.in_text(fpc)
    }

    /// The function symbol containing `addr` (file vaddr).
    pub fn func_at(&self, addr: u64) -> Option<&FuncSym> {
        if !self.in_text(addr) {
            return None;
        }
        let i = self.funcs.partition_point(|f| f.addr <= addr);
        let f = self.funcs.get(i.checked_sub(1)?)?;
        (f.size == 0 || addr - f.addr < f.size).then_some(f)
    }

    /// Every function symbol, by address.
    pub fn funcs(&self) -> &[FuncSym] {
        &self.funcs
    }

    /// A function symbol by name.
    pub fn func_named(&self, name: &str) -> Option<&FuncSym> {
        self.by_name.get(name).map(|&i| &self.funcs[i])
    }

    /// The frames at file vaddr `probe` (several with inlining, innermost
    /// first): function, file, line, column from DWARF, else the symbol.
    pub fn symbolize(&self, probe: u64) -> Vec<RawFrame> {
        let mut out = Vec::new();
        if let Some(l) = &self.lines {
            if let Ok(mut it) = l.find_frames(probe) {
                while let Ok(Some(f)) = it.next() {
                    let function = f
                        .function
                        .as_ref()
                        .and_then(|n| n.raw_name().ok().map(|s| s.to_string()));
                    let (file, line, column) = match &f.location {
                        Some(loc) => (
                            loc.file.map(str::to_string),
                            loc.line,
                            loc.column.filter(|&c| c != 0),
                        ),
                        None => (None, None, None),
                    };
                    out.push(RawFrame {
                        function,
                        file,
                        line,
                        column,
                        module: Some(self.shown()),
                        address: Some(probe),
                        ..RawFrame::default()
                    });
                }
            }
        }
        if out.is_empty() {
            out.push(RawFrame {
                function: self.func_at(probe).map(|f| f.name.clone()),
                module: Some(self.shown()),
                address: Some(probe),
                ..RawFrame::default()
            });
        }
        out
    }
}

/// The bytes of a file read whole (a core, a library): mapped, or owned
/// (for tests, and an empty file).
pub(crate) enum Bytes {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl Bytes {
    /// The regular file at `path`, mapped read-only: no copy, and pages
    /// read only where they are looked at (the C library is 2 MB). A
    /// device or a pipe is an error, found before it is opened (opening a
    /// pipe waits for a writer): the path may come from a core.
    pub(crate) fn map_regular(path: &Path) -> std::io::Result<Bytes> {
        if !std::fs::metadata(path)?.is_file() {
            return Err(std::io::Error::other("not a regular file"));
        }
        let file = std::fs::File::open(path)?;
        if file.metadata()?.len() == 0 {
            return Ok(Bytes::Owned(Vec::new()));
        }
        // SAFETY: the map is read only; a file changed by another process
        // while it is read gives wrong bytes (caught by the checks of
        // whoever parses them) but no undefined behaviour in practice, as
        // for every reader of mapped files.
        Ok(Bytes::Mapped(unsafe { memmap2::Mmap::map(&file) }?))
    }
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}

/// The registers of x86-64 Linux's `user_regs_struct`, in its order (a
/// core's `NT_PRSTATUS` `pr_reg`).
pub const GREG_NAMES: [&str; 27] = [
    "r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax", "rcx", "rdx", "rsi",
    "rdi", "orig_rax", "rip", "cs", "eflags", "rsp", "ss", "fs_base", "gs_base", "ds", "es", "fs",
    "gs",
];

/// What the kernel said about the signal that killed the process
/// (`siginfo_t`: its number, its code, the faulting address of a
/// `SIGSEGV`, `SIGBUS`, `SIGFPE` or `SIGILL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SigInfo {
    /// The signal number.
    pub signo: u32,
    /// `si_code` (`SEGV_MAPERR`, `FPE_INTDIV`, ...; negative when sent by
    /// a process).
    pub code: i32,
    /// `si_addr`, for the signals that carry one.
    pub addr: Option<u64>,
}

/// `NT_SIGINFO` ("SIGI").
const NT_SIGINFO: u32 = 0x5349_4749;

/// A Linux ELF core dump.
pub struct Core {
    path: PathBuf,
    data: Bytes,
    segs: Vec<Seg>,
    /// Auxiliary vector (`NT_AUXV`).
    pub auxv: Vec<(u64, u64)>,
    /// File mappings (`NT_FILE`).
    pub files: Vec<Mapping>,
    /// The first thread's registers (x86-64 only).
    pub regs: Option<Regs>,
    /// The first thread's signal (`NT_PRSTATUS`).
    pub signal: Option<u32>,
    /// The first thread's general registers, in `user_regs_struct`'s
    /// order (an x86-64 ELF core's `NT_PRSTATUS`; see [`GREG_NAMES`]).
    pub gregs: Option<Vec<u64>>,
    /// The signal's information (`NT_SIGINFO`; a minidump's exception).
    pub siginfo: Option<SigInfo>,
    /// Number of threads (`NT_PRSTATUS` notes).
    pub threads: usize,
    /// An address in each other thread's stack: its stack pointer (an
    /// x86-64 ELF core), or its stack memory's start (a minidump).
    pub other_stacks: Vec<u64>,
    /// When the file is a minidump (read into this view by
    /// [`crate::image::minidump`]): its exception and module list.
    pub minidump: Option<crate::image::minidump::DumpInfo>,
    /// Where the crashed machine's libraries are (`--sysroot`): a mapped
    /// file `/lib/x/libc.so.6` is looked for as `DIR/lib/x/libc.so.6`,
    /// then as `DIR/libc.so.6`, never on this machine's own path.
    pub sysroot: Option<PathBuf>,
}

const AT_ENTRY: u64 = 9;

/// A `siginfo_t` (x86-64 Linux): `si_signo`, `si_errno`, `si_code`, 4
/// bytes of padding, then for `SIGILL`, `SIGFPE`, `SIGSEGV` and `SIGBUS`
/// (4, 8, 11, 7) the faulting address.
fn parse_siginfo(d: &[u8]) -> Option<SigInfo> {
    let word = |o: usize| {
        d.get(o..o + 4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
    };
    let signo = word(0)?;
    let code = word(8)? as i32;
    let addr = matches!(signo, 4 | 7 | 8 | 11)
        .then(|| {
            d.get(16..24)
                .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
        })
        .flatten();
    Some(SigInfo { signo, code, addr })
}

impl Core {
    /// Reads an ELF core; a truncated file is an error.
    pub fn read(path: &Path) -> Result<Core, NativeError> {
        let shown = path.display().to_string();
        let cannot = |e: std::io::Error| NativeError(format!("{shown}: cannot read: {e}"));
        // Mapped: a device or a pipe has no size to map.
        crate::input::require_regular(path, "a core (it is mapped)")
            .map_err(|e| NativeError(e.to_string()))?;
        let data = Bytes::map_regular(path).map_err(cannot)?;
        Core::parse(data, path)
    }

    /// A core from its bytes (for tests and fuzzing); `name` names it in
    /// errors.
    pub fn from_bytes(data: Vec<u8>, name: &Path) -> Result<Core, NativeError> {
        Core::parse(Bytes::Owned(data), name)
    }

    /// A minidump read into this view ([`crate::image::minidump`]).
    fn from_minidump(data: Bytes, path: &Path) -> Result<Core, NativeError> {
        let d = crate::image::minidump::parse(&data, path)?;
        Ok(Core {
            sysroot: None,
            path: path.to_path_buf(),
            data,
            segs: d.segs,
            auxv: d.auxv,
            files: d.files,
            regs: Some(d.regs),
            signal: Some(d.signal),
            gregs: None,
            siginfo: Some(SigInfo {
                signo: d.signal,
                code: d.info.si_code as i32,
                addr: Some(d.info.address),
            }),
            threads: d.threads,
            other_stacks: d.other_stacks,
            minidump: Some(d.info),
        })
    }

    fn parse(data: Bytes, path: &Path) -> Result<Core, NativeError> {
        if data.starts_with(crate::image::minidump::MAGIC) {
            return Core::from_minidump(data, path);
        }
        let shown = path.display().to_string();
        let bad = |what: String| NativeError(format!("{shown}: {what}"));
        let hdr = elf::FileHeader64::<object::Endianness>::parse(&*data)
            .map_err(|e| bad(format!("not a 64-bit ELF core: {e}")))?;
        let endian = hdr
            .endian()
            .map_err(|e| bad(format!("not an ELF core: {e}")))?;
        if hdr.e_type(endian) != elf::ET_CORE {
            return Err(bad("not a core dump (ELF type is not ET_CORE)".into()));
        }
        let x86_64 = hdr.e_machine(endian) == elf::EM_X86_64;
        let phdrs = hdr
            .program_headers(endian, &*data)
            .map_err(|e| bad(format!("truncated or corrupt core: {e}")))?;
        let mut core = Core {
            sysroot: None,
            path: path.to_path_buf(),
            data: Bytes::Owned(Vec::new()),
            segs: Vec::new(),
            auxv: Vec::new(),
            files: Vec::new(),
            regs: None,
            signal: None,
            gregs: None,
            siginfo: None,
            threads: 0,
            other_stacks: Vec::new(),
            minidump: None,
        };
        for ph in phdrs {
            let (offset, filesz) = (ph.p_offset(endian), ph.p_filesz(endian));
            if offset
                .checked_add(filesz)
                .is_none_or(|end| end > data.len() as u64)
            {
                return Err(bad(format!(
                    "truncated core: a segment needs bytes up to {} but the file has {}",
                    offset.saturating_add(filesz),
                    data.len()
                )));
            }
            match ph.p_type(endian) {
                elf::PT_LOAD => core.segs.push(Seg {
                    vaddr: ph.p_vaddr(endian),
                    memsz: ph.p_memsz(endian),
                    filesz,
                    offset,
                }),
                elf::PT_NOTE => {
                    let Some(mut notes) = ph
                        .notes(endian, &*data)
                        .map_err(|e| bad(format!("corrupt note segment: {e}")))?
                    else {
                        continue;
                    };
                    while let Some(note) = notes
                        .next()
                        .map_err(|e| bad(format!("corrupt note segment: {e}")))?
                    {
                        core.note(note.n_type(endian).0, note.desc(), x86_64);
                    }
                }
                _ => {}
            }
        }
        core.data = data;
        Ok(core)
    }

    /// Reads one `PT_NOTE` entry of type `t` (the first thread's
    /// `NT_PRSTATUS` gives the signal and the registers, the others' give
    /// their stack pointers; `NT_SIGINFO`, `NT_AUXV`, `NT_FILE`).
    fn note(&mut self, t: u32, desc: &[u8], x86_64: bool) {
        match t {
            _ if t == elf::NT_PRSTATUS.0 && self.threads > 0 => {
                self.threads += 1;
                // pr_reg's rsp, as below.
                let rsp = desc
                    .get(112 + 8 * 19..112 + 8 * 20)
                    .map(|b| u64::from_le_bytes(b.try_into().unwrap()));
                if let (true, Some(rsp)) = (x86_64, rsp) {
                    self.other_stacks.push(rsp);
                }
            }
            _ if t == elf::NT_PRSTATUS.0 => {
                self.threads = 1;
                if desc.len() >= 12 {
                    self.signal = Some(u32::from_le_bytes(desc[..4].try_into().unwrap()));
                }
                // elf_prstatus: 112 bytes, then pr_reg
                // (user_regs_struct: rbp 4, rip 16, rsp 19).
                let reg = |i: usize| {
                    let o = 112 + 8 * i;
                    desc.get(o..o + 8)
                        .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
                };
                if x86_64 {
                    if let (Some(rbp), Some(rip), Some(rsp)) = (reg(4), reg(16), reg(19)) {
                        self.regs = Some(Regs { rip, rsp, rbp });
                    }
                    self.gregs = (0..GREG_NAMES.len()).map(reg).collect();
                }
            }
            _ if t == NT_SIGINFO && self.siginfo.is_none() => {
                self.siginfo = parse_siginfo(desc);
            }
            _ if t == elf::NT_AUXV.0 => self.auxv = pairs(desc),
            _ if t == elf::NT_FILE.0 => self.files = parse_nt_file(desc),
            _ => {}
        }
    }

    /// The bytes at `addr` in the crashed process, when the core holds
    /// them.
    pub fn mem(&self, addr: u64, len: u64) -> Option<&[u8]> {
        let s = self
            .segs
            .iter()
            .find(|s| addr >= s.vaddr && addr - s.vaddr < s.memsz)?;
        let rel = addr - s.vaddr;
        if rel.checked_add(len)? > s.filesz {
            return None;
        }
        let start = usize::try_from(s.offset.checked_add(rel)?).ok()?;
        self.data
            .get(start..start.checked_add(usize::try_from(len).ok()?)?)
    }

    /// The memory the core holds of the segment containing `addr`: its
    /// start address and bytes (the part the file holds).
    pub fn segment_at(&self, addr: u64) -> Option<(u64, &[u8])> {
        let s = self
            .segs
            .iter()
            .find(|s| addr >= s.vaddr && addr - s.vaddr < s.memsz)?;
        let start = usize::try_from(s.offset).ok()?;
        let len = usize::try_from(s.filesz.min(s.memsz)).ok()?;
        Some((s.vaddr, self.data.get(start..start.checked_add(len)?)?))
    }

    pub(crate) fn word(&self, addr: u64) -> Option<u64> {
        self.mem(addr, 8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
    }

    fn shown(&self) -> String {
        self.path.display().to_string()
    }

    /// Whether the file is a minidump (rather than an ELF core).
    pub fn is_minidump(&self) -> bool {
        self.minidump.is_some()
    }
}

fn parse_nt_file(d: &[u8]) -> Vec<Mapping> {
    let w = |i: usize| {
        d.get(8 * i..8 * i + 8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
    };
    let (Some(count), Some(page)) = (w(0), w(1)) else {
        return Vec::new();
    };
    let count = count.min(d.len() as u64 / 24) as usize;
    let names_at = 16 + 24 * count;
    let mut names = d.get(names_at..).unwrap_or(&[]).split(|&b| b == 0);
    (0..count)
        .filter_map(|i| {
            let (s, e, off) = (w(2 + 3 * i)?, w(3 + 3 * i)?, w(4 + 3 * i)?);
            Some(Mapping {
                start: s,
                end: e,
                offset: off.saturating_mul(page),
                path: String::from_utf8_lossy(names.next().unwrap_or(&[])).into_owned(),
            })
        })
        .collect()
}

/// Where the binary was loaded in the crashed process: 0 for a fixed
/// address executable, `AT_ENTRY - e_entry` for a PIE. Checks that the
/// core belongs to this binary: the build id in the core's memory (when
/// the core holds that page), the entry point, and, when both have one,
/// the relocated pc table.
pub fn load_base(core: &Core, bin: &Binary) -> Result<u64, NativeError> {
    let (cs, bs) = (core.shown(), bin.shown());
    let at_entry = core
        .auxv
        .iter()
        .find(|&&(k, _)| k == AT_ENTRY)
        .map(|&(_, v)| v);
    if let Some(d) = &core.minidump {
        // The main module (at the process's entry point, else by name)
        // first: a dump of another build is named by its build ids.
        let name = bin.path.file_name();
        let main = at_entry.and_then(|e| d.module_at(e)).or_else(|| {
            d.modules
                .iter()
                .find(|m| Path::new(&m.name).file_name() == name)
        });
        if let Some(m) = main {
            check_build_id(&cs, &bs, m, bin)?;
        }
    }
    let base = match (bin.pie, at_entry) {
        (false, Some(e)) if e != bin.entry => {
            return err(format!(
                "{cs}: the core is not of {bs}: its entry point is {e:#x}, the binary's {:#x}",
                bin.entry
            ))
        }
        (false, _) => 0,
        (true, Some(e)) => {
            let base = e.wrapping_sub(bin.entry);
            if base % 4096 != 0 {
                return err(format!(
                    "{cs}: the core is not of {bs}: its entry point {e:#x} is not the binary's ({:#x}) at a page-aligned base",
                    bin.entry
                ));
            }
            base
        }
        (true, None) => {
            // No auxiliary vector: the mapping of a file with the
            // binary's name at offset 0.
            let name = bin
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned());
            match core.files.iter().find(|m| {
                m.offset == 0 && Path::new(&m.path).file_name().map(|n| n.to_string_lossy().into_owned()) == name
            }) {
                Some(m) => m.start,
                None => {
                    return err(format!(
                        "{cs}: cannot find where {bs} was loaded (no auxiliary vector, no mapping of that file)"
                    ))
                }
            }
        }
    };
    if let (Some(id), Some(at)) = (&bin.build_id, bin.build_id_addr) {
        if let Some(mem) = core.mem(base.wrapping_add(at), id.len() as u64) {
            if mem != id.as_slice() {
                return err(format!(
                    "{cs}: the core is not of {bs}: build id {} in the core, {} in the binary",
                    hex(mem),
                    hex(id)
                ));
            }
        }
    }
    if let Some(d) = &core.minidump {
        check_module(&cs, &bs, d, bin, base)?;
    }
    if let Some((addr, size)) = bin.pcs_range {
        if let (Some(mem), Some(file)) = (core.mem(base.wrapping_add(addr), size), bin.pcs()) {
            let core_pcs = pairs(mem);
            for (i, (&(cpc, cfl), &(fpc, ffl))) in core_pcs.iter().zip(&file).enumerate() {
                if slot(bin, base, cpc, fpc) == Slot::Mismatch || cfl != ffl {
                    return err(format!(
                        "{cs}: the core is not of {bs}: pc table entry {i} is ({cpc:#x}, flags {cfl:#x}) in the core, ({fpc:#x}, flags {ffl:#x}) in the binary, with the binary loaded at {base:#x} (a relocated entry would be {:#x} in the core)",
                        fpc.wrapping_add(base)
                    ));
                }
            }
        }
    }
    Ok(base)
}

/// A minidump's module at the binary's entry point must be the binary
/// (see [`check_build_id`]).
fn check_module(
    cs: &str,
    bs: &str,
    d: &crate::image::minidump::DumpInfo,
    bin: &Binary,
    base: u64,
) -> Result<(), NativeError> {
    let at = base.wrapping_add(bin.entry);
    match d.module_at(at) {
        Some(m) => check_build_id(cs, bs, m, bin),
        None => err(format!(
            "{cs}: the minidump is not of {bs}: no module of its module list holds the binary's entry point {at:#x}"
        )),
    }
}

/// The build id a minidump's writer recorded for module `m` must be the
/// binary's (when both have one).
fn check_build_id(
    cs: &str,
    bs: &str,
    m: &crate::image::minidump::DumpModule,
    bin: &Binary,
) -> Result<(), NativeError> {
    match (&m.build_id, &bin.build_id) {
        (Some(dump), Some(file)) if dump != file => err(format!(
            "{cs}: the minidump is not of {bs}: build id {} in the dump (module {}), {} in the binary",
            hex(dump),
            m.name,
            hex(file)
        )),
        _ => Ok(()),
    }
}

/// What a pc-table entry of the core is, given the binary's word `fpc`
/// and the load base.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    /// Relocated: the binary's address plus the load base (or a PIE's 0
    /// word filled by the dynamic loader).
    Relocated,
    /// Never relocated ([`Binary::unrelocated`]): the same word in the
    /// binary and in the core, which is the address of no code.
    Unrelocated,
    /// Neither: the core is not of this binary.
    Mismatch,
}

fn slot(bin: &Binary, base: u64, cpc: u64, fpc: u64) -> Slot {
    if cpc.wrapping_sub(base) == fpc || (bin.pie && fpc == 0) {
        Slot::Relocated
    } else if cpc == fpc && bin.unrelocated(fpc) {
        Slot::Unrelocated
    } else {
        Slot::Mismatch
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// What the flag array order was checked against.
#[derive(Clone, Debug, Default)]
pub struct OrderCheck {
    /// Arrays whose first pc-table entry is their function's entry and
    /// address.
    pub arrays_checked: usize,
}

/// Checks that the binary's flags are laid out as the front-end's arrays
/// (`(function, number of flags)` in module order): the pc table has one
/// entry per flag; the first entry of each array is marked as a function
/// entry and is the address of that function's symbol; no other entry is
/// marked. `pcs` is the pc table relocated to file addresses (from the
/// core for a PIE, else from the file).
pub fn check_order(
    bin: &Binary,
    pcs: &[(u64, u64)],
    arrays: &[(Option<String>, usize)],
) -> Result<OrderCheck, NativeError> {
    let bs = bin.shown();
    let total: usize = arrays.iter().map(|a| a.1).sum();
    if pcs.len() != total {
        return err(format!(
            "{bs}: the binary has {} coverage flags, the graph {total}: the graph is not of this binary's IR (build both from the same instrumented bitcode)",
            pcs.len()
        ));
    }
    let mut at = 0;
    let mut check = OrderCheck::default();
    for (func, len) in arrays {
        for (k, &(pc, flags)) in pcs[at..at + len].iter().enumerate() {
            if (flags & 1 == 1) != (k == 0) {
                return err(format!(
                    "{bs}: pc table entry {} {} a function entry, but the graph's flag order says otherwise: the flag order cannot be verified",
                    at + k,
                    if flags & 1 == 1 { "is" } else { "is not" }
                ));
            }
            if k == 0 {
                if let Some(name) = func {
                    match bin.func_named(name) {
                        Some(f) if f.addr == pc => {}
                        Some(f) => {
                            return err(format!(
                                "{bs}: pc table entry {at} is {pc:#x}, but the graph's flag order puts `{name}` there, at {:#x}: the flag order cannot be verified",
                                f.addr
                            ))
                        }
                        None => {
                            return err(format!(
                                "{bs}: no symbol `{name}` in the binary: the flag order cannot be verified (is the binary stripped?)"
                            ))
                        }
                    }
                    check.arrays_checked += 1;
                }
            }
        }
        at += len;
    }
    Ok(check)
}

/// The flag bytes and the relocated pc table, read from the core.
pub struct CoreFlags {
    /// The load base of the binary.
    pub base: u64,
    /// `__start___sancov_bools..__stop___sancov_bools`.
    pub flags: Vec<u8>,
    /// The pc table at file addresses (an unrelocated slot keeps its
    /// word).
    pub pcs: Vec<(u64, u64)>,
    /// The indices of the pc-table slots that were never relocated (see
    /// [`unrelocated_slots`]).
    pub unrelocated: Vec<usize>,
}

/// The indices of the entries of `pcs` (the pc table at file addresses)
/// that were never relocated ([`Binary::unrelocated`]): their block has no
/// code in the binary (deleted by code generation, or in a dropped copy of
/// a `linkonce_odr` function), so their flag says nothing reliable about
/// any block and must not be used as evidence.
pub fn unrelocated_slots(bin: &Binary, pcs: &[(u64, u64)]) -> Vec<usize> {
    pcs.iter()
        .enumerate()
        .filter(|(_, &(pc, _))| bin.unrelocated(pc))
        .map(|(i, _)| i)
        .collect()
}

/// Reads the flags of `bin` from `core` (after [`load_base`]'s checks).
pub fn read_flags(core: &Core, bin: &Binary) -> Result<CoreFlags, NativeError> {
    let (cs, bs) = (core.shown(), bin.shown());
    let Some((addr, size)) = bin.bools else {
        return err(format!(
            "{bs}: no {BOOLS} section: build with -fsanitize-coverage=func,inline-bool-flag,pc-table (or bb,...)"
        ));
    };
    let Some((paddr, psize)) = bin.pcs_range else {
        return err(format!(
            "{bs}: no {PCS} section: build with -fsanitize-coverage=...,inline-bool-flag,pc-table"
        ));
    };
    let base = load_base(core, bin)?;
    let flags = core
        .mem(base.wrapping_add(addr), size)
        .ok_or_else(|| {
            NativeError(format!(
                "{cs}: the core does not hold the coverage flags of {bs} (at {:#x}, {size} bytes): truncated core, or a core_pattern / coredump_filter that drops data pages",
                base.wrapping_add(addr)
            ))
        })?
        .to_vec();
    let file = bin.pcs().unwrap_or_default();
    let pcs: Vec<(u64, u64)> = match core.mem(base.wrapping_add(paddr), psize) {
        Some(m) => pairs(m)
            .into_iter()
            .zip(file.iter().map(|p| p.0).chain(std::iter::repeat(0)))
            .map(|((pc, f), fpc)| match slot(bin, base, pc, fpc) {
                Slot::Unrelocated => (pc, f),
                _ => (pc.wrapping_sub(base), f),
            })
            .collect(),
        None => file,
    };
    let unrelocated = unrelocated_slots(bin, &pcs);
    Ok(CoreFlags {
        base,
        flags,
        pcs,
        unrelocated,
    })
}

/// The crash stack of the first thread, innermost first, symbolized with
/// the binary's DWARF; library frames above the program's are unwound (see
/// `unwind_libraries`) but not listed. A return into code outside the
/// binary ends the walk (the C library's start-up code below `main`).
/// Refused (an error saying why) when a library cannot be unwound, or a
/// frame of the binary has neither a frame pointer nor call frame
/// information this unwinder follows, or a return address that does not
/// follow a call.
pub fn unwind(core: &Core, bin: &Binary, base: u64) -> Result<Unwound, NativeError> {
    let cs = core.shown();
    let Some(regs) = core.regs else {
        return err(format!(
            "{cs}: no x86-64 register note (NT_PRSTATUS): cannot unwind the crash stack"
        ));
    };
    let mut w = Walker {
        core,
        bin,
        base,
        notes: Vec::new(),
    };
    let frames = w.unwind_from(Vec::new(), regs, 0)?;
    Ok(Unwound {
        frames,
        notes: w.notes,
    })
}

/// The crash stack [`unwind`] found.
#[derive(Debug)]
pub struct Unwound {
    /// The frames, innermost first.
    pub frames: Vec<RawFrame>,
    /// Where the walk ended early, and why: a library frame below a
    /// callback into the program (`qsort`'s comparison) whose library
    /// could not be found or is not the crashed process's. The stack ends
    /// there; its frames below are unknown.
    pub notes: Vec<String>,
}

/// One walk over a crash stack (see [`unwind`]).
struct Walker<'a> {
    core: &'a Core,
    bin: &'a Binary,
    /// The binary's load address.
    base: u64,
    /// What the walk could not follow (see [`Unwound::notes`]).
    notes: Vec<String>,
}

impl Walker<'_> {
    /// [`unwind`] from the registers `regs` of a frame stopped at its pc (the
    /// crash, or where a signal interrupted it: not a return address),
    /// appending to `frames`, the frame numbered `k`.
    fn unwind_from(
        &mut self,
        mut frames: Vec<RawFrame>,
        regs: Regs,
        k: u32,
    ) -> Result<Vec<RawFrame>, NativeError> {
        let (core, bin, base) = (self.core, self.bin, self.base);
        let cs = core.shown();
        let rel = |a: u64| a.wrapping_sub(base);
        let pc = rel(regs.rip);
        if k == 0 {
            if let Some(ret) = bad_call_return(core, bin, base) {
                // A call through a bad pointer: the caller is the crash
                // frame, stopped at its call (the callee pushed nothing).
                let at = Regs {
                    rip: ret,
                    rsp: regs.rsp.wrapping_add(8),
                    rbp: regs.rbp,
                };
                let r = rel(ret);
                let g = bin.func_at(r - 1).expect("bad_call_return checks it");
                if !has_frame_pointer(bin, g) {
                    return self.walk_cfi(frames, at, false);
                }
                frames.extend(physical(bin.symbolize(r - 1), k));
                return self.walk(frames, at.rbp.wrapping_add(8), core.word(at.rbp));
            }
        }
        let Some(f) = bin.func_at(pc) else {
            // The crash is in a library (abort, raise, ...): walk its frames
            // with the library's call frame information, then go on with the
            // binary's frame pointers from the first frame in the binary.
            let (ret, rsp, rbp) = unwind_libraries(core, regs).map_err(|e| {
                NativeError(format!(
                    "{cs}: the crash pc {:#x} is outside the binary and {e}: pass the crash stack with --backtrace (e.g. `gdb -batch -ex bt PROG CORE`)",
                    regs.rip
                ))
            })?;
            let r = rel(ret);
            // The caller is the function holding the call, at r - 1: a call
            // of a `noreturn` function can be its last instruction, so that r
            // is already past its end (in padding or the next function).
            let Some(g) = bin.func_at(r.wrapping_sub(1)) else {
                return err(format!(
                    "{cs}: the library frames return to {ret:#x}, outside the binary"
                ));
            };
            if !after_call(bin, r) {
                return err(format!(
                    "{cs}: the library frames return to {ret:#x} in `{}`, which does not follow a call instruction: pass --backtrace",
                    g.name
                ));
            }
            if !has_frame_pointer(bin, g) {
                let at = Regs { rip: ret, rsp, rbp };
                return self.walk_cfi(frames, at, false);
            }
            frames.extend(physical(bin.symbolize(r - 1), k));
            return self.walk(frames, rbp.wrapping_add(8), core.word(rbp));
        };
        if !has_frame_pointer(bin, f) {
            // Optimised code: the binary's call frame information.
            return self.walk_cfi(frames, regs, true);
        }
        frames.extend(physical(bin.symbolize(pc), k));
        // (stack slot of the return address, the caller's frame pointer).
        let at_ret = bin.bytes_at(pc, 1) == Some(&[0xc3][..]);
        let (ret_slot, caller_rbp) = match pc - f.addr {
            // Before `push rbp`, after it, or at the final `ret`: rbp is still
            // (or again) the caller's.
            0 => (regs.rsp, Some(regs.rbp)),
            1 => (regs.rsp.wrapping_add(8), Some(regs.rbp)),
            _ if at_ret => (regs.rsp, Some(regs.rbp)),
            _ => (regs.rbp.wrapping_add(8), core.word(regs.rbp)),
        };
        self.walk(frames, ret_slot, caller_rbp)
    }

    /// The frame-pointer walk over the binary's frames: `ret_slot` holds the
    /// return address of the innermost frame so far, `caller_rbp` its
    /// caller's frame pointer.
    fn walk(
        &mut self,
        mut frames: Vec<RawFrame>,
        mut ret_slot: u64,
        mut caller_rbp: Option<u64>,
    ) -> Result<Vec<RawFrame>, NativeError> {
        let (core, bin, base) = (self.core, self.bin, self.base);
        let cs = core.shown();
        let rel = |a: u64| a.wrapping_sub(base);
        for _ in 0..100_000 {
            let Some(ret) = core.word(ret_slot) else {
                return err(format!(
                    "{cs}: the stack at {ret_slot:#x} is not in the core: cannot unwind"
                ));
            };
            let r = rel(ret);
            // At r - 1, inside the call: see `unwind`.
            let Some(g) = bin.func_at(r.wrapping_sub(1)) else {
                // Returned into code outside the binary: the C library's
                // start-up code that called main, or a library function that
                // called back into the program.
                if is_signal_trampoline(core, ret) {
                    return self.after_signal(frames, ret_slot.wrapping_add(8));
                }
                let Some(rbp) = caller_rbp else {
                    return Ok(frames);
                };
                return self.after_library(frames, ret, ret_slot.wrapping_add(8), rbp);
            };
            if !after_call(bin, r) {
                return err(format!(
                    "{cs}: the frame chain at {ret_slot:#x} holds {ret:#x}, which does not follow a call instruction: cannot unwind soundly, pass --backtrace"
                ));
            }
            if !has_frame_pointer(bin, g) {
                // Optimised code from here on: its call frame information,
                // with the registers as the return leaves them (rbp was saved
                // by the callee's prologue).
                let Some(rbp) = caller_rbp else {
                    return err(format!(
                        "{cs}: the frame pointer chain leaves the core's memory: cannot unwind"
                    ));
                };
                let at = Regs {
                    rip: ret,
                    rsp: ret_slot.wrapping_add(8),
                    rbp,
                };
                return self.walk_cfi(frames, at, false);
            }
            // A caller's frame: the line of the call, at the return address - 1.
            let mut k = frames.last().and_then(|f| f.index).map_or(0, |i| i + 1);
            // A direct call of another function than the frame above: a
            // sibling call (optimised code with frame pointers) hid a frame
            // between them (see `walk_cfi`; an indirect call cannot be told
            // here, and `-O0` code makes no sibling calls).
            let above = frames
                .last()
                .and_then(|f| f.address)
                .and_then(|a| bin.func_at(a))
                .map(|f| f.addr);
            let target = direct_call_target(bin, r);
            if let (Some(t), Some(a)) = (target, above) {
                if t != a {
                    frames.push(sibling_gap(k));
                    k += 1;
                }
            }
            let direct = target.is_some() && target == above;
            frames.extend(physical_direct(bin.symbolize(r - 1), k, direct));
            let Some(rbp) = caller_rbp else {
                return err(format!(
                    "{cs}: the frame pointer chain leaves the core's memory: cannot unwind"
                ));
            };
            if rbp <= ret_slot {
                return err(format!(
                    "{cs}: the frame chain goes down the stack at {rbp:#x}: cannot unwind soundly, pass --backtrace"
                ));
            }
            ret_slot = rbp.wrapping_add(8);
            caller_rbp = core.word(rbp);
        }
        err(format!("{cs}: the frame chain does not end"))
    }

    /// The walk over the binary's frames by its `.eh_frame` call frame
    /// information (optimised code, without frame pointers), from the
    /// registers `at` of a frame (`innermost`: the crash frame, whose pc is
    /// the crash's; else a return address), appending to `frames`. Only CFA
    /// rules over rsp or rbp and the return address and rbp saved at CFA
    /// offsets are followed; anything else, a pc without call frame
    /// information, or a return address not after a call, is refused.
    ///
    /// **Sibling calls.** An optimised caller may have left the stack by a
    /// jump to its callee (`return f(x);` compiled as `jmp f`): its frame is
    /// then missing, and the frame below it holds a call to another function
    /// than the one above. Wherever the call instruction before a return
    /// address is not a direct call of the function of the frame above it
    /// (an indirect call, or a call of another function), a `runtime` frame
    /// `[sibling calls?]` is put between the two, which the report reads as a
    /// gap in the stack (unknown calls may be pending there), never as the
    /// caller's own pending call.
    fn walk_cfi(
        &mut self,
        mut frames: Vec<RawFrame>,
        at: Regs,
        innermost: bool,
    ) -> Result<Vec<RawFrame>, NativeError> {
        let (core, bin, base) = (self.core, self.bin, self.base);
        use addr2line::gimli::{
            BaseAddresses, EhFrame, LittleEndian, UnwindContext, UnwindSection,
        };
        let cs = core.shown();
        let rel = |a: u64| a.wrapping_sub(base);
        let file = object::File::parse(bin.data())
            .map_err(|e| NativeError(format!("{cs}: the binary cannot be read ({e})")))?;
        let Some(eh) = file.section_by_name(".eh_frame") else {
            return err(format!(
                "{cs}: the binary has no frame pointers and no .eh_frame: cannot unwind, pass --backtrace"
            ));
        };
        let eh_data = eh
            .data()
            .map_err(|e| NativeError(format!("{cs}: .eh_frame: {e}")))?;
        let eh_frame = EhFrame::new(eh_data, LittleEndian);
        let mut bases = BaseAddresses::default().set_eh_frame(eh.address());
        if let Some(t) = file.section_by_name(".text") {
            bases = bases.set_text(t.address());
        }
        let mut ctx = UnwindContext::new();
        let (mut pc, mut rsp, mut rbp) = (at.rip, at.rsp, at.rbp);
        let mut innermost = innermost;
        // The function of the frame above (its symbol's address), for the
        // sibling-call check.
        let mut above: Option<u64> = if innermost {
            None
        } else {
            frames
                .last()
                .and_then(|f| f.address)
                .and_then(|a| bin.func_at(a))
                .map(|f| f.addr)
        };
        for _ in 0..100_000 {
            let r = rel(pc);
            // A return address is looked up one byte back (inside the call).
            let probe = r.wrapping_sub(u64::from(!innermost));
            let Some(g) = bin.func_at(probe) else {
                if innermost {
                    return err(format!("{cs}: the crash pc {pc:#x} is in no function"));
                }
                // Returned into code outside the binary: the C library's
                // start-up code that called main, or a library function that
                // called back into the program; or a signal trampoline.
                if is_signal_trampoline(core, pc) {
                    return self.after_signal(frames, rsp);
                }
                return self.after_library(frames, pc, rsp, rbp);
            };
            let mut k = frames.last().and_then(|f| f.index).map_or(0, |i| i + 1);
            let mut direct = false;
            if !innermost {
                if !after_call(bin, r) {
                    return err(format!(
                        "{cs}: the stack holds {pc:#x}, which does not follow a call instruction: cannot unwind soundly, pass --backtrace"
                    ));
                }
                if above.is_none() || direct_call_target(bin, r) != above {
                    frames.push(sibling_gap(k));
                    k += 1;
                } else {
                    direct = true;
                }
            }
            frames.extend(physical_direct(bin.symbolize(probe), k, direct));
            above = Some(g.addr);
            let row = eh_frame
                .unwind_info_for_address(&bases, &mut ctx, probe, EhFrame::cie_from_offset)
                .map_err(|e| {
                    NativeError(format!(
                        "{cs}: no call frame information for {pc:#x} in `{}` ({e}): cannot unwind, pass --backtrace",
                        g.name
                    ))
                })?;
            let at = Regs { rip: pc, rsp, rbp };
            let (cfa, ret, caller_rbp) = cfi_step(core, row, at, &g.name)?;
            rbp = caller_rbp;
            if cfa <= rsp {
                return err(format!(
                    "{cs}: the stack goes down at {cfa:#x}: cannot unwind soundly, pass --backtrace"
                ));
            }
            rsp = cfa;
            pc = ret;
            innermost = false;
        }
        err(format!("{cs}: the frame chain does not end"))
    }

    /// A return into a shared library at `ret` (with the stack pointer and
    /// frame pointer as the return leaves them): either the C library's
    /// start-up code that called `main` (the end of the stack), or a library
    /// function the program called that called back into it (`qsort`'s
    /// comparison, `bsearch`'s, a signal handler's trampoline). The library's
    /// frames are unwound with its call frame information (the file mapped in
    /// the core, read from this machine, used only when its build id is the
    /// core's: [`unwind_libraries`]); where they return into the binary, a
    /// `runtime` frame `[library frames]` stands for them (a gap: the library
    /// may have made calls the stack does not show) and the walk goes on in
    /// the binary. Where they cannot be unwound, or return to the start-up
    /// code (`_start`), the stack ends there, as it did before.
    fn after_library(
        &mut self,
        mut frames: Vec<RawFrame>,
        ret: u64,
        rsp: u64,
        rbp: u64,
    ) -> Result<Vec<RawFrame>, NativeError> {
        let (core, bin, base) = (self.core, self.bin, self.base);
        let at = Regs { rip: ret, rsp, rbp };
        let (back, rsp, rbp) = match unwind_libraries_from(core, at, false) {
            Ok(r) => r,
            Err(_) => {
                // Only a library that cannot be read is worth a warning:
                // `main` returns into the C library's start-up code, a
                // thread's function into `start_thread`, whose frames
                // end the stack (no return address rule at `clone`).
                let unread = open_lib(core, ret).err();
                let last = frames.iter().rev().find(|f| !f.runtime);
                let last = last.filter(|f| f.function.as_deref() != Some("main"));
                if let (Some(e), Some(f)) = (unread, last) {
                    let name = f.function.as_deref().unwrap_or("?");
                    self.notes.push(format!(
                        "the stack ends at `{name}`, called from a library: {e}{}",
                        if core.sysroot.is_none() {
                            " (for a core of another machine, --sysroot names where its libraries are)"
                        } else {
                            ""
                        }
                    ));
                }
                return Ok(frames);
            }
        };
        let r = back.wrapping_sub(base);
        let Some(g) = bin.func_at(r.wrapping_sub(1)) else {
            return Ok(frames);
        };
        if g.name == "_start" || !after_call(bin, r) {
            return Ok(frames);
        }
        let k = frames.last().and_then(|f| f.index).map_or(0, |i| i + 1);
        let module = core
            .files
            .iter()
            .find(|m| ret >= m.start && ret < m.end)
            .map(|m| m.path.clone());
        frames.push(RawFrame {
            index: Some(k),
            function: Some("[library frames]".into()),
            module,
            runtime: true,
            ..RawFrame::default()
        });
        if has_frame_pointer(bin, g) {
            frames.extend(physical(bin.symbolize(r - 1), k + 1));
            self.walk(frames, rbp.wrapping_add(8), core.word(rbp))
        } else {
            let at = Regs {
                rip: back,
                rsp,
                rbp,
            };
            self.walk_cfi(frames, at, false)
        }
    }

    /// The frames below a signal handler: the handler returned to the signal
    /// trampoline, whose frame (at `sp`, the handler's return address popped)
    /// is the `ucontext_t` the kernel saved when the signal arrived. A
    /// `runtime` frame `<signal handler called>` marks the boundary (the
    /// frames above it ran in the handler, see
    /// `backtrace::cut_signal_handler_frames`), and the walk goes on from the
    /// interrupted frame's registers, at its pc (not a return address).
    fn after_signal(
        &mut self,
        mut frames: Vec<RawFrame>,
        sp: u64,
    ) -> Result<Vec<RawFrame>, NativeError> {
        let core = self.core;
        let reg = |i: u64| core.word(sp.wrapping_add(GREGS + 8 * i));
        let (Some(rip), Some(rsp), Some(rbp)) = (reg(REG_RIP), reg(REG_RSP), reg(REG_RBP)) else {
            return err(format!(
                "{}: the signal frame at {sp:#x} is not in the core: cannot unwind below the signal handler",
                core.shown()
            ));
        };
        let k = frames.last().and_then(|f| f.index).map_or(0, |i| i + 1);
        frames.push(RawFrame {
            index: Some(k),
            function: Some("<signal handler called>".into()),
            runtime: true,
            ..RawFrame::default()
        });
        self.unwind_from(frames, Regs { rip, rsp, rbp }, k + 1)
    }
}

/// One step of [`Walker::walk_cfi`]: the canonical frame address, the
/// return address and the caller's rbp by the call frame information
/// `row` of `function` at the registers `at` (only CFA rules over rsp or
/// rbp, and the return address and rbp saved at CFA offsets).
fn cfi_step(
    core: &Core,
    row: &addr2line::gimli::UnwindTableRow<usize>,
    at: Regs,
    function: &str,
) -> Result<(u64, u64, u64), NativeError> {
    use addr2line::gimli::{CfaRule, Register, RegisterRule};
    const RBP: Register = Register(6);
    const RSP: Register = Register(7);
    const RA: Register = Register(16);
    let cs = core.shown();
    let pc = at.rip;
    let beyond = || {
        NativeError(format!(
            "{cs}: the call frame information of `{function}` at {pc:#x} is beyond this unwinder: pass --backtrace"
        ))
    };
    let cfa = match row.cfa() {
        CfaRule::RegisterAndOffset { register, offset } if *register == RSP => {
            at.rsp.wrapping_add(*offset as u64)
        }
        CfaRule::RegisterAndOffset { register, offset } if *register == RBP => {
            at.rbp.wrapping_add(*offset as u64)
        }
        _ => return Err(beyond()),
    };
    let saved = |o: i64| {
        core.word(cfa.wrapping_add(o as u64)).ok_or_else(|| {
            NativeError(format!(
                "{cs}: the stack at {:#x} is not in the core: cannot unwind",
                cfa.wrapping_add(o as u64)
            ))
        })
    };
    let ret = match row.register(RA) {
        Some(RegisterRule::Offset(o)) => saved(o)?,
        _ => return Err(beyond()),
    };
    let rbp = match row.register(RBP) {
        None | Some(RegisterRule::SameValue) => at.rbp,
        Some(RegisterRule::Offset(o)) => saved(o)?,
        Some(_) => return Err(beyond()),
    };
    Ok((cfa, ret, rbp))
}

/// The frames of one physical frame (its DWARF inline chain, innermost
/// first), numbered `k`: frames of one number are inlined in each other,
/// frames of different numbers never (see
/// `backtrace::merge_inlined_by_address`), even when a recursive
/// function's activations return to one address.
fn physical(mut chain: Vec<RawFrame>, k: u32) -> Vec<RawFrame> {
    for f in &mut chain {
        f.index = Some(k);
    }
    chain
}

/// [`physical`] for a caller whose call instruction (before its return
/// address) is a direct call of the function of the frame above: no
/// sibling call can have hidden a frame between them
/// ([`RawFrame::direct_call`]).
fn physical_direct(chain: Vec<RawFrame>, k: u32, direct: bool) -> Vec<RawFrame> {
    let mut chain = physical(chain, k);
    for f in &mut chain {
        f.direct_call = direct;
    }
    chain
}

/// Whether `f` starts with `push rbp; mov rbp, rsp`.
pub(crate) fn has_frame_pointer(bin: &Binary, f: &FuncSym) -> bool {
    bin.bytes_at(f.addr, 4) == Some(&[0x55, 0x48, 0x89, 0xe5][..])
}

/// Whether the return address `ret` (outside the binary) is a signal
/// trampoline (`__restore_rt`): the library's call frame information
/// marks its entry as a signal frame (augmentation `S`), read from the
/// library file as [`open_lib`] checks it.
fn is_signal_trampoline(core: &Core, ret: u64) -> bool {
    use addr2line::gimli::{BaseAddresses, EhFrame, LittleEndian, UnwindSection};
    let Ok(lib) = open_lib(core, ret) else {
        return false;
    };
    let eh = EhFrame::new(&lib.eh_frame, LittleEndian);
    let bases = BaseAddresses::default()
        .set_eh_frame(lib.eh_frame_addr)
        .set_text(lib.text_addr);
    // A signal frame's address is looked up as is: the kernel made it
    // the return address, no call precedes it.
    eh.fde_for_address(&bases, ret.wrapping_sub(lib.bias), EhFrame::cie_from_offset)
        .is_ok_and(|fde| fde.is_signal_trampoline())
}

/// Offset of `uc_mcontext.gregs` in the x86-64 Linux `ucontext_t`
/// (`uc_flags`, `uc_link`, a 24-byte `stack_t`), and the indices of rbp,
/// rsp and rip in it (`REG_RBP`, `REG_RSP`, `REG_RIP` of `<sys/ucontext.h>`).
const GREGS: u64 = 40;
const REG_RBP: u64 = 10;
const REG_RSP: u64 = 15;
const REG_RIP: u64 = 16;

/// The frame put where sibling calls may hide frames: runtime code, which
/// the report reads as a gap in the stack.
fn sibling_gap(k: u32) -> RawFrame {
    RawFrame {
        index: Some(k),
        function: Some("[sibling calls?]".into()),
        runtime: true,
        ..RawFrame::default()
    }
}

/// The target (file vaddr) of the `call rel32` that ends right before file
/// vaddr `r`, if that is what is there.
fn direct_call_target(bin: &Binary, r: u64) -> Option<u64> {
    let b = bin.bytes_at(r.wrapping_sub(5), 5)?;
    if b[0] != 0xe8 {
        return None;
    }
    let rel = i32::from_le_bytes([b[1], b[2], b[3], b[4]]);
    Some(r.wrapping_add(rel as i64 as u64))
}

/// The return address (as in the core) of a crash that is a call through
/// a bad pointer: the process faulted fetching its instruction (the
/// faulting address is the pc), the pc is in no mapped file, and the word
/// at the stack pointer returns into the binary right after an indirect
/// call whose target (its register, or the memory word it names) is the
/// pc ([`super::fault::call_to_pc`]): that call pushed it, and nothing
/// ran after it. A jump to the bad address (a tail call) is not taken
/// for one.
pub(crate) fn bad_call_return(core: &Core, bin: &Binary, base: u64) -> Option<u64> {
    let regs = core.regs?;
    let info = core.siginfo?;
    if !matches!(info.signo, 7 | 11) || info.addr != Some(regs.rip) {
        return None;
    }
    let mapped = core
        .files
        .iter()
        .any(|m| regs.rip >= m.start && regs.rip < m.end);
    if mapped || bin.func_at(regs.rip.wrapping_sub(base)).is_some() {
        return None;
    }
    let ret = core.word(regs.rsp)?;
    let r = ret.wrapping_sub(base);
    bin.func_at(r.wrapping_sub(1))?;
    super::fault::call_to_pc(core, bin, base, ret).map(|_| ret)
}

/// Whether the instruction before file vaddr `r` is a call (`call rel32`,
/// or `call *` through a register or memory operand).
fn after_call(bin: &Binary, r: u64) -> bool {
    let b = |k: u64| bin.bytes_at(r.wrapping_sub(k), 1).map(|x| x[0]);
    if b(5) == Some(0xe8) {
        return true;
    }
    // ff /2 with a ModRM of 2, 3, 6 or 7 bytes of instruction (with or
    // without a REX prefix).
    for len in [2u64, 3, 4, 6, 7] {
        if b(len) == Some(0xff) {
            if let Some(modrm) = b(len - 1) {
                if (modrm >> 3) & 7 == 2 {
                    return true;
                }
            }
        }
    }
    false
}

/// Why a library of the crashed process could not unwind its frames: not
/// found, not the crashed process's build, or call frame information
/// beyond this unwinder (one line).
#[derive(Clone, Debug, thiserror::Error)]
#[error("{0}")]
pub struct LibError(pub String);

impl From<String> for LibError {
    fn from(s: String) -> LibError {
        LibError(s)
    }
}

/// A library mapped in the crashed process, with its call frame
/// information.
struct Lib {
    /// Load bias: runtime address = file vaddr + bias.
    bias: u64,
    eh_frame: Vec<u8>,
    eh_frame_addr: u64,
    text_addr: u64,
}

/// Opens the library mapped at runtime address `pc` (from the core's
/// `NT_FILE` list, read from this machine's file system or the
/// `--sysroot`: [`read_lib`]) after checking
/// that it is the same file as in the crashed process: its build id must
/// be in the core's memory and equal.
fn open_lib(core: &Core, pc: u64) -> Result<Lib, LibError> {
    let m = core
        .files
        .iter()
        .find(|m| pc >= m.start && pc < m.end)
        .ok_or_else(|| format!("no mapped file holds {pc:#x}"))?;
    let (path, data) = read_lib(core, &m.path, pc)?;
    let file = object::File::parse(&*data).map_err(|e| format!("{path}: {e}"))?;
    // The file vaddr of the mapping's start.
    let seg = file
        .segments()
        .find(|s| {
            let (off, size) = s.file_range();
            m.offset >= off && m.offset < off.saturating_add(size.max(1))
        })
        .ok_or_else(|| format!("{path}: no segment at file offset {:#x}", m.offset))?;
    let bias = m
        .start
        .wrapping_sub(seg.address().wrapping_add(m.offset - seg.file_range().0));
    let id = file
        .build_id()
        .ok()
        .flatten()
        .ok_or_else(|| format!("{path} has no build id to check it against the core"))?;
    let note = file
        .section_by_name(".note.gnu.build-id")
        .ok_or_else(|| format!("{path} has no build-id note"))?;
    // A minidump's module list has the build id when its memory does not.
    let recorded = core
        .minidump
        .as_ref()
        .and_then(|d| d.module_at(pc))
        .and_then(|m| m.build_id.as_deref());
    match core
        .mem(
            note.address().wrapping_add(bias).wrapping_add(16),
            id.len() as u64,
        )
        .or(recorded)
    {
        Some(mem) if mem == id => {}
        Some(_) => {
            return Err(LibError(format!(
                "{path} is not the library the crashed process had (build id differs)"
            )))
        }
        None => {
            return Err(LibError(format!(
                "the core does not hold the build id of {path}, so it cannot be checked"
            )))
        }
    }
    let eh = file
        .section_by_name(".eh_frame")
        .ok_or_else(|| format!("{path} has no .eh_frame"))?;
    let text_addr = file
        .section_by_name(".text")
        .map(|t| t.address())
        .unwrap_or(0);
    Ok(Lib {
        bias,
        eh_frame: eh.data().map_err(|e| e.to_string())?.to_vec(),
        eh_frame_addr: eh.address(),
        text_addr,
    })
}

/// The file of the library mapped from `mapped` in the crashed process:
/// that path on this machine, or under [`Core::sysroot`] (the path
/// appended to it, then its file name in it). Returns the path read and
/// its bytes.
fn read_lib(core: &Core, mapped: &str, pc: u64) -> Result<(String, Bytes), LibError> {
    let candidates: Vec<PathBuf> = match &core.sysroot {
        None => vec![PathBuf::from(mapped)],
        Some(root) => {
            let rel = Path::new(mapped.trim_start_matches('/'));
            let mut c = vec![root.join(rel)];
            if let Some(name) = rel.file_name() {
                c.push(root.join(name));
            }
            c
        }
    };
    for p in &candidates {
        if p.is_file() {
            // The path comes from the core: it must name a regular file.
            crate::input::require_regular(p, "a mapped library")
                .map_err(|e| format!("{e} (mapped at {pc:#x} in the crashed process)"))?;
            let shown = p.display().to_string();
            let data =
                Bytes::map_regular(p).map_err(|e| format!("{shown} cannot be read here ({e})"))?;
            return Ok((shown, data));
        }
    }
    Err(LibError(match &core.sysroot {
        None => {
            format!("{mapped} (mapped at {pc:#x} in the crashed process) is not on this machine")
        }
        Some(root) => format!(
            "{mapped} (mapped at {pc:#x} in the crashed process) is not under the sysroot {}",
            root.display()
        ),
    }))
}

/// Unwinds the frames of the crash that are in libraries, with their
/// `.eh_frame` call frame information (only CFA rules over rsp or rbp,
/// the return address and rbp saved at CFA offsets, as the C library's
/// functions have). Returns the first return address outside the
/// libraries, with the stack and frame pointers of that frame.
pub(crate) fn unwind_libraries(core: &Core, regs: Regs) -> Result<(u64, u64, u64), LibError> {
    unwind_libraries_from(core, regs, true)
}

/// [`unwind_libraries`] from a crash pc (`innermost`) or from a return
/// address into a library (a callback's caller).
fn unwind_libraries_from(
    core: &Core,
    regs: Regs,
    innermost: bool,
) -> Result<(u64, u64, u64), LibError> {
    use addr2line::gimli::{
        BaseAddresses, CfaRule, EhFrame, LittleEndian, Register, RegisterRule, UnwindContext,
        UnwindSection,
    };
    const RBP: Register = Register(6);
    const RSP: Register = Register(7);
    const RA: Register = Register(16);
    let (mut pc, mut rsp, mut rbp) = (regs.rip, regs.rsp, regs.rbp);
    let mut innermost = innermost;
    let mut libs: HashMap<String, Lib> = HashMap::new();
    let mut ctx = UnwindContext::new();
    for _ in 0..64 {
        let Some(m) = core.files.iter().find(|m| pc >= m.start && pc < m.end) else {
            return Err(LibError(format!("no mapped file holds {pc:#x}")));
        };
        if !libs.contains_key(&m.path) {
            let lib = open_lib(core, pc)?;
            libs.insert(m.path.clone(), lib);
        }
        let lib = &libs[&m.path];
        let eh = EhFrame::new(&lib.eh_frame, LittleEndian);
        let bases = BaseAddresses::default()
            .set_eh_frame(lib.eh_frame_addr)
            .set_text(lib.text_addr);
        // A return address is looked up one byte back (inside the call).
        let probe = pc
            .wrapping_sub(lib.bias)
            .wrapping_sub(u64::from(!innermost));
        let row = eh
            .unwind_info_for_address(&bases, &mut ctx, probe, EhFrame::cie_from_offset)
            .map_err(|e| format!("{} has no call frame information for {pc:#x} ({e})", m.path))?;
        let cfa = match row.cfa() {
            CfaRule::RegisterAndOffset { register, offset } if *register == RSP => {
                rsp.wrapping_add(*offset as u64)
            }
            CfaRule::RegisterAndOffset { register, offset } if *register == RBP => {
                rbp.wrapping_add(*offset as u64)
            }
            _ => {
                return Err(LibError(format!(
                    "the call frame information of {} at {pc:#x} is beyond this unwinder",
                    m.path
                )))
            }
        };
        let at = |rule: Option<RegisterRule<usize>>, old: u64| -> Result<u64, String> {
            match rule {
                None | Some(RegisterRule::SameValue) => Ok(old),
                Some(RegisterRule::Offset(o)) => {
                    core.word(cfa.wrapping_add(o as u64)).ok_or_else(|| {
                        format!(
                            "the stack at {:#x} is not in the core",
                            cfa.wrapping_add(o as u64)
                        )
                    })
                }
                Some(_) => Err(format!(
                    "the call frame information of {} at {pc:#x} is beyond this unwinder",
                    m.path
                )),
            }
        };
        let ret = match row.register(RA) {
            Some(RegisterRule::Offset(o)) => core
                .word(cfa.wrapping_add(o as u64))
                .ok_or_else(|| "the stack is not in the core".to_string())?,
            _ => {
                return Err(LibError(format!(
                    "no return address rule in {} at {pc:#x}",
                    m.path
                )))
            }
        };
        rbp = at(row.register(RBP), rbp)?;
        rsp = cfa;
        pc = ret;
        innermost = false;
        let in_lib = core
            .files
            .iter()
            .find(|m| pc >= m.start && pc < m.end)
            .is_some_and(|m| libs.contains_key(&m.path) || m.path.contains(".so"));
        if !in_lib {
            return Ok((pc, rsp, rbp));
        }
    }
    Err(LibError("the library frames do not end".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file is mapped as its bytes (an empty one as none); a pipe or a
    /// directory is refused at once, never opened (opening a pipe would
    /// wait for a writer: the test would hang).
    #[test]
    fn only_regular_files_are_mapped() {
        let dir = std::env::temp_dir().join(format!("pm-map-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("lib.so");
        std::fs::write(&file, b"\x7fELF and more").unwrap();
        assert_eq!(&*Bytes::map_regular(&file).unwrap(), b"\x7fELF and more");
        let empty = dir.join("empty");
        std::fs::write(&empty, b"").unwrap();
        assert!(Bytes::map_regular(&empty).unwrap().is_empty());
        assert!(Bytes::map_regular(&dir).is_err());
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success());
        if made {
            assert!(Bytes::map_regular(&fifo).is_err());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Minidump headers that lie (a directory past the end, a stream past the
    /// end, nothing after the magic) are one-line errors naming the file.
    #[test]
    fn lying_headers_are_errors() {
        let header = |count: u32, dir: u32| {
            let mut d = b"MDMP".to_vec();
            d.extend(0xa793u32.to_le_bytes());
            d.extend(count.to_le_bytes());
            d.extend(dir.to_le_bytes());
            d.extend([0u8; 16]);
            d
        };
        let mut stream_past_end = header(1, 32);
        stream_past_end.extend(6u32.to_le_bytes());
        stream_past_end.extend(1000u32.to_le_bytes());
        stream_past_end.extend(16u32.to_le_bytes());
        for (data, what) in [
            (b"MDMP".to_vec(), "minidump"),
            (header(u32::MAX, 32), "truncated"),
            (header(3, u32::MAX), "truncated"),
            (stream_past_end, "truncated minidump: stream 0"),
            (header(0, 32), "no exception stream"),
        ] {
            let e = Core::from_bytes(data, Path::new("x.dmp"))
                .err()
                .expect("an error");
            assert!(e.0.starts_with("x.dmp: ") && e.0.contains(what), "{e}");
            assert!(!e.0.contains('\n'), "{e}");
        }
    }

    /// The pc-table check accepts a relocated slot and a never relocated
    /// one (the same word in both files, the address of no code), and
    /// nothing else.
    #[test]
    fn pc_table_slots_are_relocated_or_the_same_non_code_word() {
        let exe = std::env::current_exe().unwrap();
        let bin = Binary::from_bytes(std::fs::read(&exe).unwrap(), Path::new("self")).unwrap();
        let &(text, _) = bin.text.first().expect("a code section");
        let base = 0x5555_5555_4000;
        let code = text + 16;
        assert!(bin.in_text(code) && !bin.unrelocated(code));
        assert!(bin.unrelocated(1) && !bin.unrelocated(0));
        assert_eq!(slot(&bin, base, code + base, code), Slot::Relocated);
        assert_eq!(slot(&bin, base, 1, 1), Slot::Unrelocated);
        // A code address must be relocated.
        assert_eq!(slot(&bin, base, code, code), Slot::Mismatch);
        // A word in neither file.
        assert_eq!(slot(&bin, base, 1u64.wrapping_sub(base), 1), Slot::Mismatch);
        assert_eq!(slot(&bin, base, 2, 1), Slot::Mismatch);
        assert_eq!(slot(&bin, base, code + base + 1, code), Slot::Mismatch);
    }
}
