//! Stack residue: return addresses left on a core's stack by calls that
//! have since returned, as evidence that those calls ran.
//!
//! A `call` pushes the address of the next instruction. When the callee
//! returns, the word stays in memory below the stack pointer (or in a slot
//! of a live frame that the program never wrote again) until something
//! overwrites it. A word of the crashing thread's stack equal to such an
//! address is taken as "that call instruction executed before the crash"
//! only when every guard below holds; each guard answers one way the same
//! word can be there without that call having pushed it. The result is a
//! list of [`Hit`]s (after-call address, slot), which `failure.rs` maps to
//! the graph's call nodes and `core::staged` adds to the report in a stage
//! of its own (dropped, and listed, if it contradicts the rest).
//!
//! Guards (a word failing one is not used; the reason is counted):
//!
//! 1. **Decoded text.** The after-call addresses are found by decoding
//!    the binary's own code exactly (`iced-x86`), by a linear sweep of
//!    every function symbol `[start, start + size)` of the ELF symbol
//!    table (clang emits no data in x86-64 text). Words that are not
//!    such an address are ignored. No symbol table: no residue.
//!    A call that is the last instruction of its function is not used
//!    (its next address belongs to padding or another function).
//! 2. **Function starts.** An after-call address that is also a symbol's
//!    address is a function pointer's value as well: not used.
//! 3. **No return.** A call whose callee never returns (a name from
//!    [`NORETURN`], or a function of the binary whose code has no `ret`)
//!    leaves a next address that starts an unrelated block (a C++ landing
//!    pad that the unwinder copies into its contexts, the next function):
//!    not used.
//! 4. **Address-taken code.** An after-call address that the program can
//!    produce as data — the value of a RIP-relative `lea`/`mov` operand or
//!    an immediate in the code, a word of a data section, or the addend of
//!    a dynamic relocation (`&&label` tables of computed gotos, absolute
//!    jump tables of non-PIE code, function pointer tables) — may be a
//!    spilled copy of that datum: not used. (PIE jump tables hold 32-bit
//!    relative offsets, never such an address.)
//! 5. **Signal frames.** The kernel saves the interrupted pc in the
//!    `rt_sigframe` it pushes below the interrupted code's stack; that pc
//!    may be an after-call address reached by a jump. A word pointing at
//!    the signal restorer (`mov $0xf,%rax; syscall`, glibc's
//!    `__restore_rt`, searched in every executable file mapping and in the
//!    core's memory) marks such a frame: the 16 KiB above it (ucontext,
//!    siginfo, and the xsave area of any size in use today) are skipped.
//!    A stale frame whose restorer word was overwritten still holds the
//!    saved pc followed by `eflags` and the `cs`/`gs`/`fs`/`ss` word whose
//!    low 16 bits are the user code selector 0x33: a candidate followed
//!    two words later by such a word is not used. If an executable file
//!    mapping cannot be read (so its restorer cannot be found), no
//!    residue is used.
//! 6. **Frame shape.** At `-O0` (and with frame pointers) a callee whose
//!    first bytes are `push %rbp; mov %rsp,%rbp` writes the caller's frame
//!    pointer just below the return address: for a direct call of such a
//!    function, the word below must be an 8-aligned address of the same
//!    stack mapping above the return address (a saved frame pointer).
//!    Calls through the PLT, indirect calls and calls of functions without
//!    that prologue have no such shape; they are used only in a
//!    position-independent executable, whose code addresses (high,
//!    random) a coincidental integer does not hit, and in a fixed-address
//!    executable only with the shape.
//! 7. **Where.** Only the program's own module at its load base, and only
//!    the stack mapping that holds the crashing thread's stack pointer
//!    (for a minidump: the memory the dump holds there). In a
//!    multi-threaded process that stack may have been a finished
//!    thread's before (thread libraries reuse stacks), and a thread may
//!    write into another's stack through a pointer: there the residue
//!    says only that a call ran in *some* thread, which is what a label
//!    means, and `failure.rs` makes each call site a
//!    `Report::residue_somewhere` node (a Yes after recovery, no
//!    constraint on the crashing path) instead of a `Report::residue` set.
//!    Then the other threads' stacks (an ELF core's threads' stack
//!    pointers, a minidump's thread list) are scanned too, with the same
//!    guards: their live frames' return addresses and their returned
//!    calls' residue.
//! 8. **Inlining.** A call whose location is inside an inlined function
//!    is not used (the graph's call node is in the function it was
//!    inlined from; mapping it is left to the stack unwinder's rules).
//!
//! Other writers of such a word copy a return address that a real call
//! pushed (the C++ unwinder's contexts, `backtrace()`, `setjmp` buffers,
//! a stack buffer copied from stack memory): the call ran, so they are
//! sound as they are. The binary is a C++ one (it has a
//! `.gcc_except_table`): landing pads follow calls that may throw, and
//! the unwinder writes their addresses; residue is then off (reported).

use crate::image::native::{self, Binary, Core};
use iced_x86::{Decoder, DecoderOptions, FlowControl, Instruction, OpKind};
use object::{Object, ObjectSection, ObjectSymbol, ObjectSymbolTable, RelocationTarget};
use std::collections::{HashMap, HashSet};

/// Functions that never return: the address after a call of one is not
/// evidence (guard 3).
pub const NORETURN: &[&str] = &[
    "abort",
    "exit",
    "_exit",
    "_Exit",
    "quick_exit",
    "__assert_fail",
    "__assert_perror_fail",
    "__assert",
    "longjmp",
    "_longjmp",
    "siglongjmp",
    "__longjmp_chk",
    "__cxa_throw",
    "__cxa_rethrow",
    "__cxa_bad_cast",
    "__cxa_bad_typeid",
    "__cxa_throw_bad_array_new_length",
    "_Unwind_Resume",
    "_Unwind_RaiseException",
    "__stack_chk_fail",
    "__chk_fail",
    "__fortify_fail",
    "pthread_exit",
    "__ubsan_handle_builtin_unreachable",
    "err",
    "errx",
    "verr",
    "verrx",
    "__builtin_trap",
    "__builtin_unreachable",
];

/// Bytes of the signal restorer: `mov $0xf,%rax; syscall`.
const RESTORER: [u8; 9] = [0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05];
/// How much stack above a restorer word is skipped (guard 5).
const SIGFRAME_SKIP: u64 = 16 * 1024;
/// The user code segment selector of x86-64 Linux.
const USER_CS: u64 = 0x33;

/// What a call instruction calls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Callee {
    /// A function of the binary (its symbol name).
    Program(String),
    /// A library function through the PLT (its dynamic symbol name).
    Library(String),
    /// A call through a register or memory.
    Indirect,
    /// A direct call to an address that is neither.
    Unknown,
}

/// A call site of the binary.
#[derive(Clone, Debug)]
struct Site {
    callee: Callee,
    /// The callee starts with `push %rbp; mov %rsp,%rbp` (guard 6).
    shape: bool,
}

/// The binary's usable after-call addresses (file vaddrs), and how many
/// were left out by each guard.
pub struct Sites {
    by_after: HashMap<u64, Site>,
    /// Position-independent executable.
    pie: bool,
    /// Why no residue can be used at all (no symbols, C++).
    pub off: Option<String>,
    /// Call sites excluded by a guard, per reason.
    pub excluded: Vec<(&'static str, usize)>,
    /// Call instructions decoded.
    pub calls: usize,
    /// The after-call addresses excluded, with the reason, by address.
    pub excluded_at: Vec<(u64, &'static str)>,
}

impl Sites {
    /// The usable after-call addresses of `bin` (guards 1-4).
    pub fn of(bin: &Binary) -> Sites {
        let mut s = Sites {
            by_after: HashMap::new(),
            pie: bin.pie,
            off: None,
            excluded: Vec::new(),
            calls: 0,
            excluded_at: Vec::new(),
        };
        let Ok(file) = object::File::parse(bin.data()) else {
            s.off = Some("the binary cannot be parsed".into());
            return s;
        };
        if file.section_by_name(".gcc_except_table").is_some() {
            s.off = Some(
                "the binary has C++ exception tables (.gcc_except_table): the unwinder writes landing-pad addresses that follow calls".into(),
            );
            return s;
        }
        let funcs = bin.funcs();
        if funcs.is_empty() {
            s.off = Some("the binary has no function symbols".into());
            return s;
        }
        let starts: HashSet<u64> = file
            .symbols()
            .map(|y| y.address())
            .chain(funcs.iter().map(|f| f.addr))
            .collect();
        let plt = plt_names(&file);
        // Only a word inside the functions' code can be an after-call
        // address: the others (most of a data section's millions) are
        // not kept. Sorted and deduplicated once, then searched.
        let code = funcs
            .iter()
            .filter(|f| f.size > 0)
            .fold(None, |r: Option<(u64, u64)>, f| {
                let end = f.addr.saturating_add(f.size);
                Some(r.map_or((f.addr, end), |(lo, hi)| (lo.min(f.addr), hi.max(end))))
            })
            .unwrap_or((0, 0));
        let in_code = |w: u64| w >= code.0 && w <= code.1;
        let mut taken = taken_words(&file, in_code);
        let (calls, returns) = decode_calls(bin, funcs, &mut taken, in_code);
        taken.sort_unstable();
        taken.dedup();
        // The first function symbol at each address, as a search of
        // `funcs` in order finds it.
        let mut func_at: HashMap<u64, &native::FuncSym> = HashMap::with_capacity(funcs.len());
        for f in funcs {
            func_at.entry(f.addr).or_insert(f);
        }
        s.calls = calls.len();
        let mut excluded: HashMap<&'static str, usize> = HashMap::new();
        let mut bad: HashSet<u64> = HashSet::new();
        for c in calls {
            let callee = callee_of(c.target, &func_at, &plt);
            let reason = exclusion(&c, &callee, &starts, &returns, &taken);
            if let Some(r) = reason {
                *excluded.entry(r).or_default() += 1;
                s.excluded_at.push((c.after, r));
                bad.insert(c.after);
                continue;
            }
            let shape = match (&callee, c.target) {
                (Callee::Program(_), Some(t)) => {
                    bin.bytes_at(t, 4) == Some(&[0x55, 0x48, 0x89, 0xe5][..])
                }
                _ => false,
            };
            s.by_after.insert(c.after, Site { callee, shape });
        }
        // Two calls before one address cannot happen in decoded text, but a
        // bad one anywhere makes the address unusable.
        for a in bad {
            s.by_after.remove(&a);
        }
        let mut ex: Vec<_> = excluded.into_iter().collect();
        ex.sort();
        s.excluded = ex;
        s.excluded_at.sort();
        s
    }

    /// The callee of the call before the usable after-call address
    /// `after` (file vaddr), if it is one.
    pub fn callee(&self, after: u64) -> Option<&Callee> {
        self.by_after.get(&after).map(|s| &s.callee)
    }

    /// Every usable after-call address (file vaddr), sorted.
    pub fn addresses(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.by_after.keys().copied().collect();
        v.sort_unstable();
        v
    }

    /// How many after-call addresses are usable.
    pub fn usable(&self) -> usize {
        self.by_after.len()
    }
}

/// A call instruction of the binary.
struct Call {
    /// The address after it.
    after: u64,
    /// Its target, for a direct call.
    target: Option<u64>,
    /// It is the last instruction of its function.
    last: bool,
}

/// Words of the data sections (aligned and at every 4 bytes, for packed
/// tables) and relocation addends: addresses that may be taken (guard 4),
/// those `keep` keeps.
fn taken_words(file: &object::File<'_>, keep: impl Fn(u64) -> bool) -> Vec<u64> {
    let mut taken: Vec<u64> = Vec::new();
    for sec in file.sections() {
        use object::SectionKind as K;
        if matches!(
            sec.kind(),
            K::Data | K::ReadOnlyData | K::ReadOnlyDataWithRel | K::Unknown | K::Other
        ) {
            if let Ok(d) = sec.data() {
                // Every word at 4-byte steps: the aligned ones, and the
                // unaligned ones of packed tables.
                for w in d.windows(8).step_by(4) {
                    let w = u64::from_le_bytes(w.try_into().unwrap());
                    if keep(w) {
                        taken.push(w);
                    }
                }
            }
        }
    }
    if let Some(rels) = file.dynamic_relocations() {
        for (_, r) in rels {
            if keep(r.addend() as u64) {
                taken.push(r.addend() as u64);
            }
        }
    }
    taken
}

/// Decodes every function of `funcs` (guard 1): its calls, and the
/// functions that return (guard 3). Adds the addresses its instructions
/// use as operands (RIP-relative and immediate) and `keep` keeps to
/// `taken` (guard 4).
fn decode_calls(
    bin: &Binary,
    funcs: &[native::FuncSym],
    taken: &mut Vec<u64>,
    keep: impl Fn(u64) -> bool,
) -> (Vec<Call>, HashSet<u64>) {
    let mut calls: Vec<Call> = Vec::new();
    let mut returns: HashSet<u64> = HashSet::new();
    let mut ins = Instruction::default();
    for f in funcs {
        if f.size == 0 {
            continue;
        }
        let Some(code) = bin.bytes_at(f.addr, f.size) else {
            continue;
        };
        let mut dec = Decoder::with_ip(64, code, f.addr, DecoderOptions::NONE);
        let mut rets = false;
        while dec.can_decode() {
            dec.decode_out(&mut ins);
            if ins.is_invalid() {
                continue;
            }
            if ins.is_ip_rel_memory_operand() && keep(ins.ip_rel_memory_address()) {
                taken.push(ins.ip_rel_memory_address());
            }
            for k in 0..ins.op_count() {
                match ins.op_kind(k) {
                    OpKind::Immediate32to64 | OpKind::Immediate64 | OpKind::Immediate32
                        if keep(ins.immediate(k)) =>
                    {
                        taken.push(ins.immediate(k));
                    }
                    _ => {}
                }
            }
            match ins.flow_control() {
                FlowControl::Return => rets = true,
                FlowControl::Call => calls.push(Call {
                    after: ins.next_ip(),
                    target: Some(ins.near_branch_target()),
                    last: ins.next_ip() >= f.addr + f.size,
                }),
                FlowControl::IndirectCall => calls.push(Call {
                    after: ins.next_ip(),
                    target: None,
                    last: ins.next_ip() >= f.addr + f.size,
                }),
                _ => {}
            }
        }
        if rets {
            returns.insert(f.addr);
        }
    }
    (calls, returns)
}

/// What a call to `target` calls: a function of `funcs` (by address),
/// else a PLT entry of `plt`; indirect without a target.
fn callee_of(
    target: Option<u64>,
    funcs: &HashMap<u64, &native::FuncSym>,
    plt: &HashMap<u64, String>,
) -> Callee {
    match target {
        None => Callee::Indirect,
        Some(t) => match (funcs.get(&t), plt.get(&t)) {
            (Some(f), _) => Callee::Program(f.name.clone()),
            (None, Some(n)) => Callee::Library(n.clone()),
            (None, None) => Callee::Unknown,
        },
    }
}

/// Why the after-call address of `c` (calling `callee`) is not usable
/// (guards 1 to 4), if it is not: `starts` are the symbols' addresses,
/// `returns` the functions that return, `taken` the words that may be
/// addresses taken.
fn exclusion(
    c: &Call,
    callee: &Callee,
    starts: &HashSet<u64>,
    returns: &HashSet<u64>,
    taken: &[u64],
) -> Option<&'static str> {
    if c.last {
        Some("the call ends its function")
    } else if starts.contains(&c.after) {
        Some("the next address is a symbol's")
    } else if match callee {
        Callee::Program(n) | Callee::Library(n) => NORETURN.contains(&base_name(n)),
        _ => false,
    } || matches!((callee, c.target), (Callee::Program(_), Some(t)) if !returns.contains(&t))
    {
        Some("the callee never returns")
    } else if taken.binary_search(&c.after).is_ok() {
        Some("the next address is also data or an operand (address-taken code)")
    } else {
        None
    }
}

/// `printf@GLIBC_2.2.5` -> `printf`.
fn base_name(n: &str) -> &str {
    n.split('@').next().unwrap_or(n)
}

/// The PLT stubs of the binary: stub address -> the dynamic symbol its
/// GOT slot is relocated to.
fn plt_names(file: &object::File<'_>) -> HashMap<u64, String> {
    let mut slots: HashMap<u64, String> = HashMap::new();
    if let (Some(rels), Some(dynsyms)) = (file.dynamic_relocations(), file.dynamic_symbol_table()) {
        for (off, r) in rels {
            if let RelocationTarget::Symbol(i) = r.target() {
                if let Ok(name) = dynsyms.symbol_by_index(i).and_then(|y| y.name()) {
                    slots.insert(off, base_name(name).to_string());
                }
            }
        }
    }
    let mut out = HashMap::new();
    for sec in file.sections() {
        let name = sec.name().unwrap_or("");
        if !name.starts_with(".plt") {
            continue;
        }
        let Ok(code) = sec.data() else { continue };
        let mut dec = Decoder::with_ip(64, code, sec.address(), DecoderOptions::NONE);
        let mut ins = Instruction::default();
        let mut entry = sec.address();
        while dec.can_decode() {
            dec.decode_out(&mut ins);
            // A stub is `[endbr64] [bnd] jmp *GOT(%rip)`, preceded by the
            // previous stub's last instruction.
            if ins.mnemonic() == iced_x86::Mnemonic::Endbr64 {
                entry = ins.ip();
                continue;
            }
            if ins.flow_control() == FlowControl::IndirectBranch && ins.is_ip_rel_memory_operand() {
                if let Some(n) = slots.get(&ins.ip_rel_memory_address()) {
                    out.insert(ins.ip(), n.clone());
                    out.insert(entry, n.clone());
                }
            }
            entry = ins.next_ip();
        }
    }
    out
}

/// One residue word used as evidence.
#[derive(Clone, Debug)]
pub struct Hit {
    /// The after-call address (file vaddr).
    pub after: u64,
    /// Where it was found on the stack.
    pub slot: u64,
    /// What the call calls.
    pub callee: Callee,
}

/// What a scan of the stack found.
#[derive(Clone, Debug, Default)]
pub struct Scan {
    /// Words of the stack read.
    pub words: usize,
    /// Words equal to a usable after-call address (before guards 5-6).
    pub matched: usize,
    /// Words used, one per distinct after-call address (the lowest slot).
    pub hits: Vec<Hit>,
    /// Matched words not used, per reason.
    pub dropped: Vec<(&'static str, usize)>,
    /// Why no word was used at all.
    pub off: Option<String>,
}

/// Scans the crashing thread's stack of `core` for residue of `sites`
/// (guards 5-7), the binary loaded at `base`; in a multi-threaded core,
/// every other thread's stack too (each hit then says only "ran in some
/// thread" anyway, see guard 7).
pub fn scan(core: &Core, base: u64, sites: &Sites) -> Scan {
    let mut out = Scan::default();
    if let Some(w) = &sites.off {
        out.off = Some(w.clone());
        return out;
    }
    let Some(regs) = core.regs else {
        out.off = Some("no registers of the crashing thread".into());
        return out;
    };
    let Some((lo, stack)) = core.segment_at(regs.rsp) else {
        out.off = Some("the core does not hold the crashing thread's stack".into());
        return out;
    };
    let restorers = match restorers(core) {
        Ok(r) => r,
        Err(e) => {
            out.off = Some(e.to_string());
            return out;
        }
    };
    let mut out = scan_stack(lo, stack, base, sites, &restorers);
    let mut seen = vec![lo];
    for &sp in &core.other_stacks {
        let Some((lo, stack)) = core.segment_at(sp) else {
            continue;
        };
        if !seen.contains(&lo) {
            seen.push(lo);
            out.add(scan_stack(lo, stack, base, sites, &restorers));
        }
    }
    out
}

impl Scan {
    /// `other`'s words and hits added (a hit whose after-call address
    /// is already one of these is not).
    fn add(&mut self, other: Scan) {
        self.words += other.words;
        self.matched += other.matched;
        for h in other.hits {
            if !self.hits.iter().any(|k| k.after == h.after) {
                self.hits.push(h);
            }
        }
        for (why, n) in other.dropped {
            match self.dropped.iter_mut().find(|(w, _)| *w == why) {
                Some((_, m)) => *m += n,
                None => self.dropped.push((why, n)),
            }
        }
    }
}

/// Scans the stack memory `stack` (at address `lo`) for residue of
/// `sites` (guards 5-6), the binary loaded at `base`, `restorers` the
/// runtime addresses of the signal restorer.
pub fn scan_stack(
    lo: u64,
    stack: &[u8],
    base: u64,
    sites: &Sites,
    restorers: &HashSet<u64>,
) -> Scan {
    let mut out = Scan::default();
    if let Some(w) = &sites.off {
        out.off = Some(w.clone());
        return out;
    }
    let hi = lo.saturating_add(stack.len() as u64);
    let word = |a: u64| -> Option<u64> {
        let i = usize::try_from(a.checked_sub(lo)?).ok()?;
        stack
            .get(i..i.checked_add(8)?)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
    };
    let mut dropped: HashMap<&'static str, usize> = HashMap::new();
    let mut seen: HashMap<u64, usize> = HashMap::new();
    let Some(mut a) = lo.checked_add((8 - lo % 8) % 8) else {
        return out;
    };
    let mut skip_to = 0u64;
    // Most words are neither: each is compared with the range of the
    // restorers and of the sites before it is looked up.
    // (Empty for no address: `u64::MAX..=0`.)
    fn range<'a>(xs: impl Iterator<Item = &'a u64>) -> std::ops::RangeInclusive<u64> {
        let (lo, hi) = xs.fold((u64::MAX, 0), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        lo..=hi
    }
    let restorer_range = range(restorers.iter());
    let site_range = range(sites.by_after.keys());
    while a.checked_add(8).is_some_and(|e| e <= hi) {
        let Some(w) = word(a) else { break };
        out.words += 1;
        if restorer_range.contains(&w) && restorers.contains(&w) {
            skip_to = skip_to.max(a.saturating_add(SIGFRAME_SKIP));
        }
        let r = w.wrapping_sub(base);
        let site = if site_range.contains(&r) {
            sites.by_after.get(&r)
        } else {
            None
        };
        if let Some(site) = site {
            out.matched += 1;
            let reason = if a < skip_to {
                Some("inside a signal frame")
            } else if word(a.wrapping_add(16)).is_some_and(|x| x & 0xffff == USER_CS) {
                Some("followed by a saved code selector (a stale signal frame?)")
            } else {
                let fp_ok =
                    word(a.wrapping_sub(8)).is_some_and(|fp| fp > a && fp < hi && fp % 8 == 0);
                match (site.shape, fp_ok, sites.pie) {
                    (true, true, _) => None,
                    (true, false, _) => Some("no saved frame pointer below it"),
                    (false, _, true) => None,
                    (false, true, false) => None,
                    (false, false, false) => {
                        Some("no saved frame pointer below it (fixed-address binary)")
                    }
                }
            };
            match reason {
                Some(why) => *dropped.entry(why).or_default() += 1,
                None => {
                    seen.entry(r).or_insert_with(|| {
                        out.hits.push(Hit {
                            after: r,
                            slot: a,
                            callee: site.callee.clone(),
                        });
                        out.hits.len() - 1
                    });
                }
            }
        }
        a += 8;
    }
    let mut d: Vec<_> = dropped.into_iter().collect();
    d.sort();
    out.dropped = d;
    out
}

/// A mapping that may hold code and that [`restorers`] could not read.
#[derive(Debug, thiserror::Error)]
#[error("cannot read {path} ({source}) to find its signal restorer")]
struct RestorerError {
    /// The mapped file.
    path: String,
    /// Why it could not be read.
    source: std::io::Error,
}

/// The runtime addresses of the signal restorer in every executable file
/// mapping of the process (from the file on this machine); an error when
/// a mapping's file cannot be read. The files are mapped, not read: the C
/// library alone is 2 MB, copied and faulted in for a search that reads
/// it once (a twentieth of the time a bzip2 core was analysed in).
fn restorers(core: &Core) -> Result<HashSet<u64>, RestorerError> {
    let mut out = HashSet::new();
    let mut files: Vec<&str> = core.files.iter().map(|m| m.path.as_str()).collect();
    files.sort_unstable();
    files.dedup();
    for path in files {
        if path.is_empty() || path.starts_with('[') || path.starts_with("/dev/") {
            continue;
        }
        let maps: Vec<&native::Mapping> = core.files.iter().filter(|m| m.path == path).collect();
        let data = match native::Bytes::map_regular(std::path::Path::new(path)) {
            Ok(d) => d,
            Err(e) => {
                // Only a file that may hold code matters: an ELF image.
                if maps
                    .iter()
                    .any(|m| core.mem(m.start, 4) == Some(&b"\x7fELF"[..]) || path.contains(".so"))
                {
                    return Err(RestorerError {
                        path: path.to_string(),
                        source: e,
                    });
                }
                continue;
            }
        };
        if !data.starts_with(b"\x7fELF") {
            continue;
        }
        let Ok(obj) = object::File::parse(&*data) else {
            continue;
        };
        for sec in obj.sections() {
            if sec.kind() != object::SectionKind::Text {
                continue;
            }
            let (Ok(code), Some((off, _))) = (sec.data(), sec.file_range()) else {
                continue;
            };
            // The restorer's bytes cannot overlap themselves: every
            // occurrence is found.
            for i in memchr::memmem::find_iter(code, &RESTORER) {
                let file_off = off + i as u64;
                for m in &maps {
                    let len = m.end.saturating_sub(m.start);
                    if file_off >= m.offset && file_off - m.offset < len {
                        out.insert(m.start + (file_off - m.offset));
                    }
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error says what it said as a string (issue 38).
    #[test]
    fn restorer_error_keeps_its_message() {
        let e = RestorerError {
            path: "/lib/libc.so.6".into(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "gone"),
        };
        assert_eq!(
            e.to_string(),
            "cannot read /lib/libc.so.6 (gone) to find its signal restorer"
        );
    }
}
