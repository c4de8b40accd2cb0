//! The program the generator builds and the simulator runs: functions,
//! blocks, terminators and calls, as flat vectors indexed by `u32`, and
//! the names the generator draws from, and the draws it needs beyond the
//! shared [`Rng`].

use crate::rng::Rng;

// ---------------------------------------------------------------------------
// PRNG

/// What the generator draws beyond the shared [`Rng`].
pub(super) trait Draw {
    fn geometric(&mut self, mean: f64, cap: u64) -> u64;
    fn heavy(&mut self, e8: u32, cap: f64) -> f64;
}

impl Draw for Rng {
    /// Number of failures before the first success with success
    /// probability `1/(mean+1)` (geometric with the given mean), at most
    /// `cap`. Counted trial by trial: no libm, so the same on every platform.
    fn geometric(&mut self, mean: f64, cap: u64) -> u64 {
        let q = mean / (mean + 1.0);
        let mut n = 0;
        while n < cap && self.chance_f(q) {
            n += 1;
        }
        n
    }
    /// A Pareto-like weight `u^-e` for `e` in eighths (`e8 / 8`), `u`
    /// uniform in `(0, 1]`, capped. Built from square roots only (exactly
    /// rounded everywhere, unlike `powf`), so outputs do not depend on the
    /// platform's libm.
    fn heavy(&mut self, e8: u32, cap: f64) -> f64 {
        let u = 1.0 - self.unit();
        (1.0 / pow_eighths(u, e8)).min(cap)
    }
}

/// `x^(e8/8)` for `e8` in `0..=8`, from square roots and products only.
pub(super) fn pow_eighths(x: f64, e8: u32) -> f64 {
    let r2 = x.sqrt();
    let r4 = r2.sqrt();
    let r8 = r4.sqrt();
    let mut v = 1.0;
    if e8 & 8 != 0 {
        v *= x;
    }
    if e8 & 4 != 0 {
        v *= r2;
    }
    if e8 & 2 != 0 {
        v *= r4;
    }
    if e8 & 1 != 0 {
        v *= r8;
    }
    v
}

// ---------------------------------------------------------------------------
// Program model

pub(super) const EXIT: u32 = u32::MAX;
pub(super) const NONE: u32 = u32::MAX;
/// Functions whose cheap path costs at most this many steps may be called
/// from a cheap-path block.
pub(super) const CHEAP_COST_CAP: u64 = 400;
/// Share of calls that go to library stubs / declarations.
pub(super) const LIBRARY_SHARE: f64 = 0.12;
/// Share of library calls that go to bare declarations.
pub(super) const DECLARATION_SHARE: f64 = 0.15;
/// Share of optional direct calls that prefer a not-yet-called function.
pub(super) const UNCALLED_SHARE: f64 = 0.35;
/// Share of recursive calls that are self calls (the rest are mutual).
pub(super) const SELF_RECURSION_SHARE: f64 = 0.45;
/// Probability of taking an optional arm at stack depth 0, and its decay
/// per frame.
pub(super) const ARM_P0: f64 = 0.55;
pub(super) const ARM_DECAY: f64 = 0.93;
/// Probability of running one more loop iteration during exploration.
pub(super) const LOOP_P: f64 = 0.55;
/// A function explores (rather than runs cheap) on its first this many
/// calls during exploration, and afterwards with probability
/// `FRESH_EXPLORATIONS / explorations so far`.
pub(super) const FRESH_EXPLORATIONS: u32 = 4;
/// Most statements walked in the crashing frame before the crash.
pub(super) const CRASH_WALK: u64 = 24;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum FKind {
    Defined,
    Stub,
    Decl,
}

pub(super) struct Func {
    pub(super) name: String,
    pub(super) kind: FKind,
    pub(super) layer: u32,
    pub(super) file: u32,
    /// csi-cc function number: node ids are `n:-num:i`.
    pub(super) num: u32,
    pub(super) blocks: (u32, u32),
    pub(super) calls: (u32, u32),
    pub(super) nloops: u32,
    pub(super) nstmts: u32,
    pub(super) line: u32,
    /// Steps to run the function along its cheap path.
    pub(super) cost: u64,
    /// Longest chain of downward calls below this function.
    pub(super) height: u32,
}

#[derive(Clone, Copy, Debug)]
pub(super) enum Term {
    Open,
    Goto(u32),
    /// `take` is the optional arm, `skip` the cheap one.
    Cond {
        take: u32,
        skip: u32,
    },
    /// Arms in `arms[start..start+len]`; the last one is the cheap one.
    Switch {
        start: u32,
        len: u32,
    },
    Loop {
        body: u32,
        exit: u32,
        id: u32,
    },
    Return,
}

#[derive(Clone, Copy)]
pub(super) struct Block {
    pub(super) term: Term,
    /// Off the cheap path.
    pub(super) optional: bool,
    pub(super) label: u8,
    pub(super) label_n: u32,
    pub(super) stmts: u32,
    /// Index of the block's first statement among the function's statements
    /// (node index = 3 + first_stmt + offset).
    pub(super) first_stmt: u32,
    pub(super) calls: (u32, u32),
    pub(super) line: u32,
}

#[derive(Clone, Copy)]
pub(super) struct Call {
    pub(super) func: u32,
    pub(super) block: u32,
    pub(super) offset: u32,
    pub(super) targets: (u32, u32),
    pub(super) spine: bool,
    /// Ordinal of the call within its function.
    pub(super) ordinal: u32,
}

pub(super) struct Program {
    pub(super) funcs: Vec<Func>,
    pub(super) defined: usize,
    pub(super) blocks: Vec<Block>,
    pub(super) arms: Vec<u32>,
    pub(super) calls: Vec<Call>,
    pub(super) targets: Vec<u32>,
    pub(super) files: Vec<String>,
    /// Emission order of all functions.
    pub(super) order: Vec<u32>,
    /// Header of `main`'s driver loop.
    pub(super) driver_header: u32,
    /// Crash depth actually used.
    pub(super) depth: usize,
}

impl Program {
    pub(super) fn local(&self, block: u32, offset: u32) -> u32 {
        3 + self.blocks[block as usize].first_stmt + offset
    }
    pub(super) fn call_local(&self, c: &Call) -> u32 {
        self.local(c.block, c.offset)
    }
    pub(super) fn cheap_succ(&self, b: u32) -> u32 {
        match self.blocks[b as usize].term {
            Term::Goto(n) => n,
            Term::Cond { skip, .. } => skip,
            Term::Switch { start, len } => self.arms[(start + len - 1) as usize],
            Term::Loop { exit, .. } => exit,
            Term::Return => EXIT,
            Term::Open => unreachable!("open block"),
        }
    }
    pub(super) fn for_succs(&self, b: u32, mut f: impl FnMut(u32)) {
        match self.blocks[b as usize].term {
            Term::Goto(n) => f(n),
            Term::Cond { take, skip } => {
                f(take);
                f(skip)
            }
            Term::Switch { start, len } => {
                for &a in &self.arms[start as usize..(start + len) as usize] {
                    f(a)
                }
            }
            Term::Loop { body, exit, .. } => {
                f(body);
                f(exit)
            }
            Term::Return => f(EXIT),
            Term::Open => unreachable!("open block"),
        }
    }
    pub(super) fn targets_of(&self, c: &Call) -> &[u32] {
        &self.targets[c.targets.0 as usize..c.targets.1 as usize]
    }
}

// Block labels (LLVM-style names).
pub(super) const L_ENTRY: u8 = 0;
pub(super) const L_IF_THEN: u8 = 1;
pub(super) const L_IF_ELSE: u8 = 2;
pub(super) const L_IF_END: u8 = 3;
pub(super) const L_FOR_COND: u8 = 4;
pub(super) const L_FOR_BODY: u8 = 5;
pub(super) const L_FOR_INC: u8 = 6;
pub(super) const L_FOR_END: u8 = 7;
pub(super) const L_WHILE_COND: u8 = 8;
pub(super) const L_WHILE_BODY: u8 = 9;
pub(super) const L_WHILE_END: u8 = 10;
pub(super) const L_DO_BODY: u8 = 11;
pub(super) const L_DO_COND: u8 = 12;
pub(super) const L_DO_END: u8 = 13;
pub(super) const L_SW_BB: u8 = 14;
pub(super) const L_SW_DEFAULT: u8 = 15;
pub(super) const L_SW_EPILOG: u8 = 16;
pub(super) const L_LAND: u8 = 17;
pub(super) const L_RETURN: u8 = 18;
pub(super) const LABELS: [&str; 19] = [
    "entry",
    "if.then",
    "if.else",
    "if.end",
    "for.cond",
    "for.body",
    "for.inc",
    "for.end",
    "while.cond",
    "while.body",
    "while.end",
    "do.body",
    "do.cond",
    "do.end",
    "sw.bb",
    "sw.default",
    "sw.epilog",
    "land.lhs.true",
    "return",
];

pub(super) const NAME_PREFIX: [&str; 30] = [
    "fold",
    "expand",
    "emit",
    "build",
    "get",
    "lookup",
    "find",
    "check",
    "make",
    "record",
    "process",
    "convert",
    "simplify",
    "output",
    "gen",
    "scan",
    "mark",
    "copy",
    "init",
    "finish",
    "push",
    "pop",
    "note",
    "count",
    "decode",
    "validate",
    "insert",
    "compute",
    "propagate",
    "reload",
];
pub(super) const NAME_STEM: [&str; 30] = [
    "expr", "decl", "type", "insn", "rtx", "operand", "constant", "block", "loop", "reg", "label",
    "binop", "unop", "cond", "call", "mem", "note", "stmt", "value", "node", "list", "jump",
    "edge", "range", "offset", "address", "cost", "mode", "attr", "scope",
];
pub(super) const FILE_STEM: [&str; 30] = [
    "toplev",
    "c-decl",
    "c-typeck",
    "fold-const",
    "expr",
    "emit-rtl",
    "cse",
    "combine",
    "reload",
    "regclass",
    "flow",
    "loop",
    "tree",
    "varasm",
    "stmt",
    "calls",
    "function",
    "jump",
    "recog",
    "optabs",
    "alias",
    "gcse",
    "sched-deps",
    "haifa-sched",
    "local-alloc",
    "global",
    "dwarf2out",
    "c-parse",
    "cppexp",
    "cpplib",
];
pub(super) const LIB_NAMES: [&str; 24] = [
    "malloc", "free", "memcpy", "memset", "strlen", "strcmp", "strcpy", "fprintf", "fputs",
    "sprintf", "abort", "exit", "realloc", "calloc", "strchr", "strncmp", "fputc", "fwrite",
    "fflush", "fopen", "fclose", "printf", "qsort", "getenv",
];
pub(super) const DECL_NAMES: [&str; 10] = [
    "llvm.memcpy.p0i8.p0i8.i64",
    "llvm.memset.p0i8.i64",
    "llvm.trap",
    "_obstack_newchunk",
    "obstack_free",
    "bsearch",
    "signal",
    "setjmp",
    "longjmp",
    "__builtin_expect",
];
pub(super) const EXPR_LABELS: [&str; 20] = [
    "store",
    "%",
    "call",
    "store",
    "%",
    "%arrayidx",
    "%cmp",
    "%idxprom",
    "%conv",
    "%tobool",
    "%inc",
    "%sub",
    "%add",
    "%arraydecay",
    "%retval",
    "%and",
    "%mul",
    "%add.ptr",
    "%cond",
    "%",
];
