//! Why the process died, as its image says it (issue 36, step 1): the
//! signal and its code from the core's `NT_SIGINFO` (a minidump's
//! exception), and, for a fault in the program's own code, the faulting
//! instruction decoded at the crash pc with the registers that formed its
//! memory operand (or its divisor), read from the core. The failure's
//! assembly then names the variables that held the bad value
//! (`failure.rs`, [`Fault::suspects`]).
//!
//! Nothing here is evidence about the path: it is what the crash state
//! shows, for the developer.

use super::native::{Binary, Core, GREG_NAMES};
use iced_x86::{
    Decoder, DecoderOptions, Formatter, InstructionInfoFactory, IntelFormatter, Mnemonic, OpAccess,
    OpKind, Register,
};

/// What killed the process.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Fault {
    /// The signal (`SIGSEGV`), or its number when not a known one.
    pub signal: String,
    /// What its code says (`address not mapped`), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The faulting address (`si_addr`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<u64>,
    /// The faulting instruction, when the crash pc is in the program.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instruction: Option<Operand>,
    /// The variables whose value the instruction used (filled by the
    /// assembly, which knows the values read from the core).
    pub suspects: Vec<String>,
    /// Each suspect's index among the values read (`Assembled::values`).
    #[serde(skip)]
    pub suspect_values: Vec<usize>,
    /// Those of [`Fault::suspect_values`] that are an index of the crash
    /// statement's access past an array's end: their bounds are the
    /// suspects, not how the index counted up.
    #[serde(skip)]
    pub index_values: Vec<usize>,
    /// Those that are the bound an index was compared with: the calls
    /// that passed it rank by themselves, not after how the value was
    /// computed (a right value passed where it does not belong).
    #[serde(skip)]
    pub bound_values: Vec<usize>,
    /// The suspects that are no variable: the crash statement's accesses
    /// (or divisions) whose pointer (divisor) came from a struct field or
    /// a call, with the value the instruction used.
    #[serde(skip)]
    pub operands: Vec<OperandSuspect>,
    /// Where the suspects' values were made (filled after the analysis:
    /// [`postmortem_core::cause`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<Cause>,
}

/// Where one suspect's value was made: the definitions that can reach the
/// crash on an execution the report allows.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Cause {
    /// The suspect: ``e = 0x0 (frame #0 `get`)``.
    pub variable: String,
    /// The definitions that can have made it.
    pub made_by: Vec<MadeBy>,
    /// The variable's stores that ran on no execution the report allows
    /// (their nodes are No): what would have set another value.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_run: Vec<String>,
    /// For each store of `not_run` (in order) that a branch kept from
    /// running, that branch ([`postmortem_core::cause::skipped_by`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped_by: Vec<Skipped>,
    /// The stores of another value that may not have run (Maybe), in
    /// functions that ran, each with the branch that may have kept it
    /// from running: were such a store the last write before the crash,
    /// the value would differ (a field's initialisation skipped by a
    /// wrong condition).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub may_skip: Vec<Skipped>,
    /// The calls that may have freed the memory the value points to: a
    /// release function (`free`, `realloc`, a name with "free" or
    /// "release") or a call through a pointer, passed the same field or
    /// variable, where the access faulted at an address no longer mapped
    /// ([`crate::vars::freed_by`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub freed_by: Vec<Freed>,
    /// The branches that tested the variable holding the value and went
    /// on toward the crash (a check that let the bad value through:
    /// [`crate::vars::guards`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub guards: Vec<Guard>,
    /// The suspect is the bound of an index past the end
    /// ([`Fault::bound_values`]): its definitions that only carried the
    /// value (a call's argument, a parameter) rank by their own class.
    #[serde(skip)]
    pub carriers_first: bool,
}

/// A call that may have freed what a dangling pointer points to
/// ([`Cause::freed_by`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Freed {
    /// The call: ``the call at bzlib.c:836``.
    pub call: String,
    /// What it calls: `` `free` ``, or ``a function through a pointer``.
    pub callee: String,
    /// `yes` (it ran on every execution the report allows) or `maybe`.
    pub ran: String,
    /// Its node, for links.
    #[serde(skip)]
    pub node: Option<postmortem_core::NodeId>,
    /// When it did not take the pointer: the call that passed the pointer
    /// on, which it may have run just before
    /// ([`crate::vars::freed_before`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
}

/// A faulting operand that is no variable ([`Fault::operands`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperandSuspect {
    /// The access's node.
    pub node: postmortem_core::NodeId,
    /// Where its pointer (or divisor) came from.
    pub from: crate::vars::Origin,
    /// The value the instruction used.
    pub value: u64,
    /// Its width, for comparisons with constants.
    pub bytes: u32,
    /// As the suspects list shows it.
    pub shown: String,
    /// The access faulted at an address no longer mapped through this
    /// pointer ([`Fault::dangling`]).
    pub dangling: bool,
}

/// A branch that tested a suspect's variable, already holding the
/// value, and went the way that leads to the crash.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Guard {
    /// The branch: ``the branch at lstrlib.c:155``.
    pub branch: String,
    /// `yes` (it ran on every execution the report allows) or `maybe`.
    pub ran: String,
    /// For a check of another variable ([`crate::vars::wrong_checks`]):
    /// ``(`varName`, `envbase`)``, the variable it tested for NULL and
    /// the one that held the NULL a call returned. None: it tested the
    /// value itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tested: Option<(String, String)>,
    /// For a bound of an index ([`crate::vars::bound_guards`]): what it
    /// compared, ``` `i` with `n` ```.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound: Option<String>,
    /// Its node, for links.
    #[serde(skip)]
    pub node: Option<postmortem_core::NodeId>,
}

/// A branch that kept a store from running: it went the other way on
/// every execution the report allows.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Skipped {
    /// The store: ``the store at kv.c:30``, as in [`Cause::not_run`].
    pub store: String,
    /// The branch: ``the branch at kv.c:29``.
    pub branch: String,
    /// Whether the branch ran: `yes` (on every execution the report
    /// allows) or `maybe`.
    pub ran: String,
    /// The branch's node, for links.
    #[serde(skip)]
    pub branch_node: Option<postmortem_core::NodeId>,
}

/// One definition that can have made a suspect's value.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MadeBy {
    /// Where: ``the store at kv.c:35``, ``its initial value``, ``no store
    /// in its activation (uninitialised)``.
    pub at: String,
    /// `every` (on every execution the report allows: the only one) or
    /// `some`.
    pub on: String,
    /// Its node (a store, or the function's entry for an uninitialised
    /// local), for links.
    #[serde(skip)]
    pub node: Option<postmortem_core::NodeId>,
    /// How the value it wrote came to it, unchanged, when it is another
    /// variable's or a call's result: ``the result of `find` ``, ``a copy
    /// of `p` `` ([`crate::origins`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// The definitions that made the value there, each followed further.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub from: Vec<MadeBy>,
    /// For a store to one element of an array in a loop (`a[i] = v`), the
    /// branch that ends the loop ([`postmortem_core::cause::loop_exit`]):
    /// an element it did not reach keeps another value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound: Option<Skipped>,
    /// For a definition of an array element's address (`return
    /// &t->a[i - 1]`), the branches that compared its index with a bound:
    /// the check that let a wild index through.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub index_bounds: Vec<Skipped>,
    /// For the write of a field the front-end does not see
    /// ([`crate::origins::UNSEEN`]: a zeroing allocation), the branches
    /// that may have kept the field's stores from running, so that it was
    /// that write the load saw (a skipped initialisation).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<Skipped>,
    /// For a definition in a function the program only calls through
    /// pointers, the stores of its address into a field (`p->init =
    /// init_stream`): what chose the function that made the value.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub chosen_by: Vec<MadeBy>,
    /// Whether it can only have made this value (a store of this
    /// constant, `= NULL`), not a value computed at run time: a sharper
    /// suspect when several can have made it (not in the JSON).
    #[serde(skip)]
    pub exact: bool,
}

impl MadeBy {
    /// This definition and the ones behind it, as text: ``the store at
    /// kv.c:30 (the result of `find`: the return at kv.c:12)``.
    pub fn chain(&self) -> String {
        let Some(via) = &self.via else {
            return self.at.clone();
        };
        if self.from.is_empty() {
            return format!("{} ({via})", self.at);
        }
        let from: Vec<String> = self.from.iter().map(MadeBy::chain).collect();
        let sep = if self.from.len() == 1 { "" } else { "one of " };
        format!("{} ({via}: {sep}{})", self.at, from.join(", "))
    }
}

impl Cause {
    /// One line: ``e = 0x0 (frame #0 `get`) was made by kv.c:35 on every
    /// execution the report allows``, or ``... by one of kv.c:15, kv.c:19``.
    pub fn line(&self) -> String {
        let every = self.made_by.len() == 1 && self.made_by[0].on == "every";
        let places: Vec<String> = self.made_by.iter().map(MadeBy::chain).collect();
        let mut s = if every {
            format!(
                "{} was made by {}, on every execution the report allows",
                self.variable, places[0]
            )
        } else {
            format!(
                "{} was made by one of {} (each on some execution the report allows)",
                self.variable,
                places.join(", ")
            )
        };
        if !self.not_run.is_empty() {
            let each: Vec<String> = self
                .not_run
                .iter()
                .map(|n| match self.skipped_by.iter().find(|k| &k.store == n) {
                    Some(k) if k.ran == "yes" => {
                        format!("{n} ({}, which ran, never went to it)", k.branch)
                    }
                    Some(k) => format!("{n} ({} never went to it, if it ran)", k.branch),
                    None => n.clone(),
                })
                .collect();
            s += &format!("; did not run: {}", each.join(", "));
        }
        s
    }
}

/// The faulting instruction and what it computed with.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Operand {
    /// The instruction, Intel syntax (`mov eax,[rax+8]`).
    pub text: String,
    /// Whether it wrote memory (else read it, or divided).
    pub write: bool,
    /// The registers its operand was formed from, with their values:
    /// the memory operand's base and index, or a division's divisor.
    pub registers: Vec<(String, u64)>,
    /// The memory operand's displacement.
    pub displacement: i64,
    /// A division's divisor, read from its register or from memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub divisor: Option<u64>,
    /// The divisor's width in bits (0: no divisor).
    #[serde(skip)]
    pub divisor_bits: u32,
    /// The address of a divisor read from memory (`idiv dword ptr
    /// [rbp-7Ch]`: a local's stack slot at an unoptimised build), which
    /// names its variable when a variable was read from there.
    #[serde(skip)]
    pub divisor_address: Option<u64>,
    /// For a call through a bad pointer (the process faulted fetching the
    /// callee's first instruction), the address it called.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<u64>,
    /// The memory operand's base register points to no memory the core
    /// holds (not only its operand's address: the pointer itself).
    #[serde(skip)]
    pub base_unmapped: bool,
}

impl Operand {
    /// The divisor as a signed number of its width.
    fn signed_divisor(&self) -> Option<i64> {
        let (d, bits) = (self.divisor?, self.divisor_bits.clamp(1, 64));
        let shift = 64 - bits;
        Some(((d << shift) as i64) >> shift)
    }
}

impl Fault {
    /// The registers' values of the operand (where suspects are looked
    /// for).
    pub fn operand_values(&self) -> Vec<u64> {
        match &self.instruction {
            Some(Operand {
                divisor: Some(d), ..
            }) => vec![*d],
            Some(Operand {
                target: Some(t), ..
            }) => vec![*t],
            Some(o) => o.registers.iter().map(|r| r.1).collect(),
            None => Vec::new(),
        }
    }

    /// Whether `value` is a dangling pointer: [`Fault::dangling`]'s, or
    /// one that a function outside the program (the C library's
    /// `memcpy`) faulted on in its own page, not mapped (so not a read
    /// past the end of a block that is still there), away from NULL.
    pub fn dangles(&self, value: u64) -> bool {
        self.dangling() == Some(value)
            || (self.reason.as_deref() == Some("address not mapped")
                && value >= 4096
                && self
                    .library_fault()
                    .is_some_and(|a| a >= value && a & !0xfff == value & !0xfff))
    }

    /// The pointer of a memory access in the program that faulted at an
    /// address not mapped, when that pointer (its base register) is no
    /// small offset from NULL and points to no memory of the core itself:
    /// memory that was there (a freed block whose pages went back to the
    /// system) or never was (a wild pointer); not an index past the end
    /// of a block that is still there.
    pub fn dangling(&self) -> Option<u64> {
        let o = self.instruction.as_ref()?;
        if self.signal != "SIGSEGV"
            || self.reason.as_deref() != Some("address not mapped")
            || o.target.is_some()
            || o.divisor.is_some()
        {
            return None;
        }
        if !o.base_unmapped {
            return None;
        }
        o.registers.first().map(|r| r.1).filter(|&p| p >= 4096)
    }

    /// Whether the process faulted outside the program (no instruction of
    /// it at the pc: in a library, reached from the program's crash
    /// statement) at an address near 0: a NULL pointer the program passed.
    pub fn null_in_library(&self) -> bool {
        self.library_fault().is_some_and(|a| a < 4096)
    }

    /// The faulting address of a memory fault outside the program (no
    /// instruction of it at the pc: in a library the crash statement
    /// called).
    pub fn library_fault(&self) -> Option<u64> {
        if self.instruction.is_some() || !matches!(self.signal.as_str(), "SIGSEGV" | "SIGBUS") {
            return None;
        }
        self.address
    }

    /// One line: `SIGSEGV (address not mapped) reading 0x8 at
    /// `mov eax,[rax+8]`: rax = 0x0, the value of `e` (frame #0)`.
    pub fn line(&self) -> String {
        let mut s = self.signal.clone();
        if let Some(r) = &self.reason {
            s += &format!(" ({r})");
        }
        if let Some(o) = &self.instruction {
            let verb = if o.write { "writing" } else { "reading" };
            match (self.address, o.target) {
                (_, Some(t)) => s += &format!(" calling {t:#x}"),
                (Some(a), _) if self.signal != "SIGFPE" => s += &format!(" {verb} {a:#x}"),
                _ => {}
            }
            s += &format!(" at `{}`", o.text);
            let regs: Vec<String> = o
                .registers
                .iter()
                .map(|(r, v)| format!("{r} = {v:#x}"))
                .collect();
            if let Some(d) = o.signed_divisor() {
                s += &format!(": the divisor is {d}");
            } else if let Some(t) = o.target {
                s += &format!(": the callee's address is {t:#x}");
            } else if !regs.is_empty() {
                s += &format!(": {}", regs.join(", "));
            }
        } else if let Some(a) = self.address {
            s += &format!(" at address {a:#x}");
        }
        if !self.suspects.is_empty() {
            s += &format!("; the value of {}", self.suspects.join(" or "));
        }
        s
    }
}

fn signal_name(signo: u32) -> String {
    match signo {
        4 => "SIGILL".into(),
        6 => "SIGABRT".into(),
        7 => "SIGBUS".into(),
        8 => "SIGFPE".into(),
        11 => "SIGSEGV".into(),
        5 => "SIGTRAP".into(),
        n => format!("signal {n}"),
    }
}

fn reason(signo: u32, code: i32) -> Option<String> {
    let r = match (signo, code) {
        (11, 1) => "address not mapped",
        (11, 2) => "no permission for the access",
        (11, 128) => "a general protection fault (a non-canonical address?)",
        (7, 1) => "misaligned address",
        (7, 2) => "address beyond the mapped file",
        (8, 1) => "integer division by zero",
        (8, 2) => "integer overflow",
        (4, 1) => "illegal opcode",
        (_, c) if c <= 0 => "sent by a process (kill, raise, abort)",
        _ => return None,
    };
    Some(r.into())
}

/// The index in `user_regs_struct` of a 64-bit general register.
fn greg(r: Register) -> Option<usize> {
    let name = format!("{:?}", r.full_register()).to_lowercase();
    GREG_NAMES.iter().position(|&n| n == name)
}

/// What `core` says killed the process; the faulting instruction when the
/// crash pc is in `bin` (loaded at `base`) and the core has the crash
/// thread's registers. `None` without signal information.
pub fn of(core: &Core, bin: &Binary, base: u64) -> Option<Fault> {
    let info = core.siginfo?;
    let mut f = Fault {
        signal: signal_name(info.signo),
        reason: reason(info.signo, info.code),
        address: info.addr,
        ..Fault::default()
    };
    if matches!(info.signo, 4 | 7 | 8 | 11) {
        f.instruction = instruction(core, bin, base);
    }
    // x86 raises the same divide error for a quotient that does not fit:
    // the most negative value divided by -1.
    match f.instruction.as_ref().and_then(Operand::signed_divisor) {
        Some(-1) if info.signo == 8 && info.code == 1 => {
            f.reason =
                Some("integer division overflow: the most negative value divided by -1".into())
        }
        Some(d) if d != 0 && info.signo == 8 && info.code == 1 => {
            f.reason = Some("integer division error: the quotient does not fit".into())
        }
        _ => {}
    }
    Some(f)
}

fn instruction(core: &Core, bin: &Binary, base: u64) -> Option<Operand> {
    let regs = core.gregs.as_ref()?;
    let rip = regs[16];
    let pc = rip.wrapping_sub(base);
    if bin.func_at(pc).is_none() {
        return bad_call(core, bin, base);
    }
    // At most an instruction's 15 bytes: fewer at the end of a section
    // (a crash in the last function of `.text`).
    let bytes = bin.bytes_upto(pc, 15)?;
    let mut d = Decoder::with_ip(64, bytes, rip, DecoderOptions::NONE);
    let ins = d.decode();
    if ins.is_invalid() {
        return None;
    }
    let value = |r: Register| register(regs, r);
    let mut out = Operand {
        text: intel(&ins),
        ..Operand::default()
    };
    let divides = matches!(ins.mnemonic(), Mnemonic::Div | Mnemonic::Idiv);
    if (0..ins.op_count()).any(|k| ins.op_kind(k) == OpKind::Memory) {
        let mut info = InstructionInfoFactory::new();
        out.write = info.info(&ins).used_memory().iter().any(|m| {
            matches!(
                m.access(),
                OpAccess::Write
                    | OpAccess::ReadWrite
                    | OpAccess::CondWrite
                    | OpAccess::ReadCondWrite
            )
        });
        for r in [ins.memory_base(), ins.memory_index()] {
            if r != Register::None && r != Register::RIP {
                out.registers.extend(value(r));
            }
        }
        out.displacement = ins.memory_displacement64() as i64;
        let base = ins.memory_base();
        if base != Register::None && base != Register::RIP {
            out.base_unmapped = greg(base).is_some_and(|i| core.mem(regs[i], 1).is_none());
        }
        if divides {
            // The divisor in memory: its address from the registers.
            let reg = |r: Register| match r {
                Register::None => Some(0),
                r => greg(r).map(|i| regs[i]),
            };
            let addr = reg(ins.memory_base())?
                .wrapping_add(
                    reg(ins.memory_index())?.wrapping_mul(u64::from(ins.memory_index_scale())),
                )
                .wrapping_add(ins.memory_displacement64());
            let width = ins.memory_size().size().clamp(1, 8);
            out.divisor_bits = 8 * width as u32;
            out.divisor_address = Some(addr);
            out.divisor = core.mem(addr, width as u64).map(|b| {
                let mut w = [0u8; 8];
                w[..b.len().min(8)].copy_from_slice(&b[..b.len().min(8)]);
                u64::from_le_bytes(w)
            });
        }
    } else if divides && ins.op_kind(0) == OpKind::Register {
        let r = ins.op0_register();
        out.registers.extend(value(r));
        let bits = 8 * r.size().clamp(1, 8) as u32;
        out.divisor_bits = bits;
        out.divisor = greg(r).map(|i| regs[i] & (u64::MAX >> (64 - bits)));
    }
    Some(out)
}

/// The indirect call instruction that ends at return address `ret` (as
/// in the core) and called the crash pc: its register, or the memory
/// word its operand names, holds the pc. Then nothing ran between the
/// call and the fault (no callee that went on elsewhere, no tail jump):
/// the call itself went to the bad address.
pub(crate) fn call_to_pc(
    core: &Core,
    bin: &Binary,
    base: u64,
    ret: u64,
) -> Option<iced_x86::Instruction> {
    let regs = core.gregs.as_ref()?;
    let pc = regs[16];
    let r = ret.wrapping_sub(base);
    let reg = |x: Register| greg(x).map(|i| regs[i]);
    // `call r/m64` is 2 to 7 bytes long (REX, ModRM, SIB, displacement).
    (2..=7u64).rev().find_map(|len| {
        let bytes = bin.bytes_at(r.checked_sub(len)?, len)?;
        let ins = Decoder::with_ip(64, bytes, ret - len, DecoderOptions::NONE).decode();
        if ins.is_invalid() || ins.mnemonic() != Mnemonic::Call || ins.next_ip() != ret {
            return None;
        }
        let target = match ins.op0_kind() {
            OpKind::Register => reg(ins.op0_register())?,
            OpKind::Memory => {
                let part = |x: Register| match x {
                    Register::None | Register::RIP => Some(0),
                    x => reg(x),
                };
                let addr = part(ins.memory_base())?
                    .wrapping_add(
                        part(ins.memory_index())?.wrapping_mul(u64::from(ins.memory_index_scale())),
                    )
                    .wrapping_add(ins.memory_displacement64());
                core.word(addr)?
            }
            _ => return None,
        };
        (target == pc).then_some(ins)
    })
}

/// `ins` in Intel syntax.
fn intel(ins: &iced_x86::Instruction) -> String {
    let mut text = String::new();
    IntelFormatter::new().format(ins, &mut text);
    text
}

/// The 64-bit register of `r` (by name) and its value in `regs`.
fn register(regs: &[u64], r: Register) -> Option<(String, u64)> {
    greg(r).map(|i| (format!("{:?}", r.full_register()).to_lowercase(), regs[i]))
}

/// The call through a bad pointer that crashed the process
/// ([`super::native::bad_call_return`]): the call instruction that ends
/// at the return address, with the registers its callee's operand was
/// formed from (as they were: the call changed only rsp and rip).
fn bad_call(core: &Core, bin: &Binary, base: u64) -> Option<Operand> {
    let regs = core.gregs.as_ref()?;
    let ret = super::native::bad_call_return(core, bin, base)?;
    let ins = call_to_pc(core, bin, base, ret)?;
    let value = |r: Register| register(regs, r);
    let mut out = Operand {
        text: intel(&ins),
        target: Some(regs[16]),
        ..Operand::default()
    };
    if ins.op0_kind() == OpKind::Memory {
        for r in [ins.memory_base(), ins.memory_index()] {
            if r != Register::None && r != Register::RIP {
                out.registers.extend(value(r));
            }
        }
        out.displacement = ins.memory_displacement64() as i64;
    } else if ins.op0_kind() == OpKind::Register {
        out.registers.extend(value(ins.op0_register()));
    }
    Some(out)
}
