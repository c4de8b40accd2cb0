//! Synthetic, gcc-sized programs with a matching failure report.
//!
//! [`generate`] builds a random but deterministic (seeded) C-like program —
//! functions made of structured control flow (straight-line runs, if/else
//! diamonds, `&&` chains, switches, while/for/do loops, nested loops, early
//! returns), calls along a mostly layered call graph with some direct and
//! mutual recursion, indirect calls, library stubs and bare declarations —
//! and writes it in the csi-cc GraphML dialect of the real data
//! (`/work/shared/data/README.md`). It then *runs* the program: a
//! context-sensitive simulation with a real call stack starting at `main`,
//! with pseudo-random branch choices, bounded loops and bounded recursion,
//! which finally "crashes" at a statement reached with a call stack
//! [`SynthConfig::crash_depth`] frames deep. The csi-grissom JSON failure
//! report written next to the GraphML is true for that run: the stack is
//! exactly the pending calls, every `obsYes` call site executed and no
//! `obsNo` call site did.
//!
//! # How the program is shaped
//!
//! Defined functions are arranged in layers: `main` alone in layer 0, and
//! every other function in one of `crash_depth + max(2, crash_depth / 4)`
//! layers. Calls go "down" (to a higher layer number), which makes the call
//! graph a DAG except for the recursion added on purpose:
//!
//! * every function above the bottom layer has a *spine* call to a function
//!   of the next layer, so `main` can always reach a stack of `crash_depth`
//!   frames;
//! * the callee of an ordinary call is drawn with a heavy-tailed popularity
//!   weight, so many functions are called from many sites (this is what
//!   makes the context-insensitive ICFG condense into giant SCCs);
//! * a share of functions get a direct self call or a call back "up" to one
//!   of their callers (mutual recursion); a share of calls are indirect
//!   (several `control` edges from one call site, like function pointers);
//! * some calls go to library *stubs* (an `entry` flowing straight to its
//!   `exit`, as csi-cc emits for external functions) and a few to bare
//!   *declarations* (a node of the default kind `declaration` with no flow
//!   edge at all: readers must treat such a callee as external).
//!
//! Every block is either on the function's *cheap path* (the path that
//! skips every optional arm and leaves every loop at once) or *optional*.
//! Calls on the cheap path only go to functions that are cheap to run, and
//! recursive calls only sit in optional blocks, so "run this call to
//! completion the cheap way" always terminates quickly.
//!
//! # How the run is shaped
//!
//! 1. *Exploration.* `main` spins in its driver loop; every other branch is
//!    random (optional arms are taken less and less often deeper in the
//!    stack), loops run a random number of iterations up to
//!    [`SynthConfig::max_loop_iterations`], and a callee runs in
//!    "cheap" mode (cheap path only) once the stack is
//!    [`SynthConfig::explore_depth`] deep, when the callee already has
//!    [`SynthConfig::recursion_bound`] activations, and more and more often
//!    for functions already explored many times (which spreads the run
//!    over the program, like a long real run). Exploration stops once
//!    a little more than [`SynthConfig::coverage`] distinct call sites ran
//!    (or after [`SynthConfig::max_steps`] statements).
//! 2. *Dive.* From wherever the run is, each frame walks (by a shortest
//!    intraprocedural path, calls on the way running to completion) to a
//!    call whose callee can still reach the wanted depth, returning first if
//!    its function has none left.
//! 3. *Crash.* In the innermost frame, the run walks a few more statements
//!    and stops at an ordinary statement: that is the `crash` node.

#![deny(missing_docs)]

use std::collections::{HashMap, HashSet};
use std::io::{self, BufWriter, Write};

/// Parameters of a synthetic program and of its failing run.
///
/// Sizes are targets: the generator hits `functions` exactly and the block
/// and statement counts within a few percent.
#[derive(Clone, Debug, PartialEq)]
pub struct SynthConfig {
    /// Seed of every pseudo-random choice; same config, same bytes.
    pub seed: u64,
    /// Number of defined functions (with bodies), `main` included.
    pub functions: usize,
    /// Number of basic blocks over all defined functions.
    pub blocks: usize,
    /// Number of statement nodes (call sites included) in the bodies of
    /// defined functions, not counting the per-function entry/exit nodes.
    pub statements: usize,
    /// Number of pending calls (frames of the report's `stack`) at the
    /// crash. Capped by what the number of functions allows (see
    /// [`SynthStats::stack_depth`] for the depth actually used).
    pub crash_depth: usize,
    /// Number of `obsYes` entries (executed call sites) to report, if the
    /// run executed at least that many distinct call sites.
    pub coverage: usize,
    /// Number of `obsNo` entries (call sites that never ran) to report, if
    /// that many exist.
    pub obs_no: usize,
    /// Number of source files the functions are spread over.
    pub files: usize,
    /// Number of library stubs (an `entry` flowing straight to its `exit`).
    pub library_functions: usize,
    /// Number of bare declarations (no flow edges) that some calls target.
    pub declarations: usize,
    /// Share, in ‰, of non-terminator statements that are call sites.
    pub call_permille: u32,
    /// Share, in ‰, of optional call sites that are indirect (2 to 7
    /// possible callees).
    pub indirect_permille: u32,
    /// Share, in ‰, of functions given a recursive call (direct or mutual).
    pub recursion_permille: u32,
    /// During exploration, a callee that already has this many activations
    /// on the stack runs in cheap mode (no further recursion).
    pub recursion_bound: u32,
    /// During exploration, the most times a loop body runs per entry into
    /// the loop (at most 255).
    pub max_loop_iterations: u32,
    /// During exploration, frames this deep and deeper run in cheap mode.
    pub explore_depth: usize,
    /// Statement budget of the exploration phase.
    pub max_steps: u64,
    /// Length of a reliable call trace to add to `obsYes` (0: none): every
    /// occurrence, in order, of a set of call sites chosen so that they
    /// occurred about this many times in the run.
    pub reliable_trace: usize,
    /// Number of `obsYes` entries made ambiguous: "this call site or that
    /// other one ran" (the first one did).
    pub ambiguous: usize,
    /// Number of ambiguous `obsNo` sets of 2 or 3 call sites, "at least one
    /// of these never ran", as a coverage bit that stands for several
    /// statements gives: one call site that never ran plus one or two
    /// others of the same function (that may have run).
    pub ambiguous_no: usize,
    /// Length of an ordered `obsYes` vector of two-node sets taken from
    /// the run (0: none): each element is a call site that ran, in order,
    /// or some other call site.
    pub ambiguous_vector: usize,
}

impl SynthConfig {
    /// A program the size of gcc in the PLDI 2017 evaluation: ~2,300
    /// functions, ~140k basic blocks, ~700k statement nodes, a crash stack
    /// 30 deep and ~11k executed call sites reported (plus as many that did
    /// not run).
    pub fn gcc_like() -> Self {
        SynthConfig {
            seed: 2017,
            functions: 2_300,
            blocks: 142_000,
            statements: 700_000,
            crash_depth: 30,
            coverage: 11_000,
            obs_no: 11_000,
            files: 180,
            library_functions: 150,
            declarations: 40,
            call_permille: 70,
            indirect_permille: 30,
            recursion_permille: 120,
            recursion_bound: 3,
            max_loop_iterations: 4,
            explore_depth: 20,
            max_steps: 100_000_000,
            reliable_trace: 0,
            ambiguous: 0,
            ambiguous_no: 0,
            ambiguous_vector: 0,
        }
    }

    /// The coverage-like ambiguity mix (issue 9) on [`SynthConfig::gcc_like`]
    /// scaled by `factor`: ambiguous `obsNo` sets of 2–3 call sites (535 at
    /// 113k nodes, scaled), ambiguous `obsYes` elements, an ordered vector
    /// of 10 two-node sets and a reliable trace of 16 calls.
    /// `coverage_mix(400.0 / 2300.0)` is the ~110k-node program of the
    /// issue, `coverage_mix(1.0)` the gcc-sized one.
    pub fn coverage_mix(factor: f64) -> Self {
        let base = Self::gcc_like().scaled(factor);
        let f = |n: f64| ((n * factor * 2300.0 / 400.0).round() as usize).max(1);
        SynthConfig {
            coverage: f(67.0),
            obs_no: f(1335.0),
            ambiguous_no: f(535.0),
            ambiguous: f(20.0),
            ambiguous_vector: 10,
            reliable_trace: 16,
            ..base
        }
    }

    /// [`SynthConfig::gcc_like`] with 100 ambiguous observations and a
    /// reliable trace of about 50 calls (the FSA solver's benchmark).
    pub fn gcc_fsa() -> Self {
        SynthConfig {
            reliable_trace: 50,
            ambiguous: 100,
            ..Self::gcc_like()
        }
    }

    /// A program of a few hundred nodes, for tests.
    pub fn small(seed: u64) -> Self {
        SynthConfig {
            seed,
            functions: 14,
            blocks: 70,
            statements: 300,
            crash_depth: 4,
            coverage: 10,
            obs_no: 10,
            files: 2,
            library_functions: 4,
            declarations: 2,
            call_permille: 150,
            indirect_permille: 50,
            recursion_permille: 200,
            recursion_bound: 2,
            max_loop_iterations: 3,
            explore_depth: 8,
            max_steps: 20_000,
            reliable_trace: 0,
            ambiguous: 0,
            ambiguous_no: 0,
            ambiguous_vector: 0,
        }
    }

    /// [`SynthConfig::small`] in the coverage-like ambiguity mode: many
    /// ambiguous `obsNo` sets for its size, ambiguous `obsYes` elements, an
    /// ordered vector of two-node sets and a reliable trace.
    pub fn small_coverage(seed: u64) -> Self {
        SynthConfig {
            obs_no: 12,
            ambiguous_no: 40,
            ambiguous: 4,
            ambiguous_vector: 4,
            reliable_trace: 4,
            ..Self::small(seed)
        }
    }

    /// This configuration with every size (functions, blocks, statements,
    /// coverage, `obs_no`, files, library functions, declarations and the
    /// step budget) multiplied by `factor`; depths, shares and bounds are
    /// kept. `gcc_like().scaled(0.05)` is a 1/20th-size gcc.
    pub fn scaled(&self, factor: f64) -> Self {
        let s = |n: usize, min: usize| ((n as f64 * factor).round() as usize).max(min);
        SynthConfig {
            functions: s(self.functions, 2),
            blocks: s(self.blocks, 1),
            statements: s(self.statements, 1),
            coverage: s(self.coverage, 0),
            obs_no: s(self.obs_no, 0),
            files: s(self.files, 1),
            library_functions: s(self.library_functions, 0),
            declarations: s(self.declarations, 0),
            max_steps: ((self.max_steps as f64 * factor) as u64).max(10_000),
            ..self.clone()
        }
    }
}

impl Default for SynthConfig {
    fn default() -> Self {
        SynthConfig::gcc_like()
    }
}

/// What [`generate`] produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SynthStats {
    /// GraphML nodes: statements, entry/exit nodes, stubs and declarations.
    pub nodes: usize,
    /// Basic blocks of the defined functions.
    pub blocks: usize,
    /// Defined functions (`main` included; stubs and declarations not).
    pub functions: usize,
    /// Call-site nodes.
    pub call_sites: usize,
    /// Frames in the report's `stack` (pending calls at the crash).
    pub stack_depth: usize,
    /// Entries in the report's `obsYes`.
    pub obs_yes: usize,
    /// Entries in the report's `obsNo`.
    pub obs_no: usize,
    /// Statement nodes (entry/exit nodes included) the run executed.
    pub executed_steps: usize,
}

/// Generates the program of `cfg`, writes it to `graphml` (csi-cc GraphML)
/// and the failure report of one run of it to `report` (csi-grissom JSON).
///
/// Both writers are written through an internal [`BufWriter`] and flushed
/// at the end; the GraphML is never held in memory as text (gcc-like is
/// ~200 MB). Generation is deterministic in `cfg`.
pub fn generate(
    cfg: &SynthConfig,
    graphml: &mut impl Write,
    report: &mut impl Write,
) -> io::Result<SynthStats> {
    generate_inner(cfg, graphml, report, false).map(|(s, _)| s)
}

/// [`generate`], also returning the input ids of every node the simulated
/// run executed (sorted, deduplicated): the known execution, for
/// soundness tests (a Yes node must be among them, a No node must not).
pub fn generate_traced(
    cfg: &SynthConfig,
    graphml: &mut impl Write,
    report: &mut impl Write,
) -> io::Result<(SynthStats, Vec<String>)> {
    let (s, ran) = generate_inner(cfg, graphml, report, true)?;
    Ok((s, ran.unwrap_or_default()))
}

fn generate_inner(
    cfg: &SynthConfig,
    graphml: &mut impl Write,
    report: &mut impl Write,
    traced: bool,
) -> io::Result<(SynthStats, Option<Vec<String>>)> {
    let prog = build_program(cfg);
    let run = simulate(
        &prog,
        cfg,
        traced || cfg.reliable_trace > 0 || cfg.ambiguous_vector > 0,
    );
    let ran = traced.then(|| {
        let mut seen: HashSet<(u32, u32)> = HashSet::new();
        let mut ids: Vec<String> = run
            .trace
            .iter()
            .flatten()
            .filter(|&&x| seen.insert(x))
            .map(|&(f, l)| format!("n:-{}:{l}", prog.funcs[f as usize].num))
            .collect();
        ids.sort();
        ids
    });
    {
        let mut w = BufWriter::with_capacity(1 << 17, &mut *graphml);
        write_graphml(&prog, &mut w)?;
        w.flush()?;
    }
    let (obs_yes, obs_no) = {
        let mut w = BufWriter::with_capacity(1 << 16, &mut *report);
        let r = write_report(&prog, &run, cfg, &mut w)?;
        w.flush()?;
        r
    };
    let defined = &prog.funcs[..prog.defined];
    let nodes = defined.iter().map(|f| 2 + f.nstmts as usize).sum::<usize>()
        + prog.funcs[prog.defined..]
            .iter()
            .map(|f| if f.kind == FKind::Stub { 2 } else { 1 })
            .sum::<usize>();
    Ok((
        SynthStats {
            nodes,
            blocks: prog.blocks.len(),
            functions: prog.defined,
            call_sites: prog.calls.len(),
            stack_depth: run.stack.len(),
            obs_yes,
            obs_no,
            executed_steps: run.steps as usize,
        },
        ran,
    ))
}

// ---------------------------------------------------------------------------
// PRNG

use crate::rng::Rng;

/// What the generator draws beyond the shared [`Rng`].
trait Draw {
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

// ---------------------------------------------------------------------------
// Program model

const EXIT: u32 = u32::MAX;
const NONE: u32 = u32::MAX;
/// Functions whose cheap path costs at most this many steps may be called
/// from a cheap-path block.
const CHEAP_COST_CAP: u64 = 400;
/// Share of calls that go to library stubs / declarations.
const LIBRARY_SHARE: f64 = 0.12;
/// Share of library calls that go to bare declarations.
const DECLARATION_SHARE: f64 = 0.15;
/// Share of optional direct calls that prefer a not-yet-called function.
const UNCALLED_SHARE: f64 = 0.35;
/// Share of recursive calls that are self calls (the rest are mutual).
const SELF_RECURSION_SHARE: f64 = 0.45;
/// Probability of taking an optional arm at stack depth 0, and its decay
/// per frame.
const ARM_P0: f64 = 0.55;
const ARM_DECAY: f64 = 0.93;
/// Probability of running one more loop iteration during exploration.
const LOOP_P: f64 = 0.55;
/// A function explores (rather than runs cheap) on its first this many
/// calls during exploration, and afterwards with probability
/// `FRESH_EXPLORATIONS / explorations so far`.
const FRESH_EXPLORATIONS: u32 = 4;
/// Most statements walked in the crashing frame before the crash.
const CRASH_WALK: u64 = 24;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum FKind {
    Defined,
    Stub,
    Decl,
}

struct Func {
    name: String,
    kind: FKind,
    layer: u32,
    file: u32,
    /// csi-cc function number: node ids are `n:-num:i`.
    num: u32,
    blocks: (u32, u32),
    calls: (u32, u32),
    nloops: u32,
    nstmts: u32,
    line: u32,
    /// Steps to run the function along its cheap path.
    cost: u64,
    /// Longest chain of downward calls below this function.
    height: u32,
}

#[derive(Clone, Copy, Debug)]
enum Term {
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
struct Block {
    term: Term,
    /// Off the cheap path.
    optional: bool,
    label: u8,
    label_n: u32,
    stmts: u32,
    /// Index of the block's first statement among the function's statements
    /// (node index = 3 + first_stmt + offset).
    first_stmt: u32,
    calls: (u32, u32),
    line: u32,
}

#[derive(Clone, Copy)]
struct Call {
    func: u32,
    block: u32,
    offset: u32,
    targets: (u32, u32),
    spine: bool,
    /// Ordinal of the call within its function.
    ordinal: u32,
}

struct Program {
    funcs: Vec<Func>,
    defined: usize,
    blocks: Vec<Block>,
    arms: Vec<u32>,
    calls: Vec<Call>,
    targets: Vec<u32>,
    files: Vec<String>,
    /// Emission order of all functions.
    order: Vec<u32>,
    /// Header of `main`'s driver loop.
    driver_header: u32,
    /// Crash depth actually used.
    depth: usize,
}

impl Program {
    fn local(&self, block: u32, offset: u32) -> u32 {
        3 + self.blocks[block as usize].first_stmt + offset
    }
    fn call_local(&self, c: &Call) -> u32 {
        self.local(c.block, c.offset)
    }
    fn cheap_succ(&self, b: u32) -> u32 {
        match self.blocks[b as usize].term {
            Term::Goto(n) => n,
            Term::Cond { skip, .. } => skip,
            Term::Switch { start, len } => self.arms[(start + len - 1) as usize],
            Term::Loop { exit, .. } => exit,
            Term::Return => EXIT,
            Term::Open => unreachable!("open block"),
        }
    }
    fn for_succs(&self, b: u32, mut f: impl FnMut(u32)) {
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
    fn targets_of(&self, c: &Call) -> &[u32] {
        &self.targets[c.targets.0 as usize..c.targets.1 as usize]
    }
}

// Block labels (LLVM-style names).
const L_ENTRY: u8 = 0;
const L_IF_THEN: u8 = 1;
const L_IF_ELSE: u8 = 2;
const L_IF_END: u8 = 3;
const L_FOR_COND: u8 = 4;
const L_FOR_BODY: u8 = 5;
const L_FOR_INC: u8 = 6;
const L_FOR_END: u8 = 7;
const L_WHILE_COND: u8 = 8;
const L_WHILE_BODY: u8 = 9;
const L_WHILE_END: u8 = 10;
const L_DO_BODY: u8 = 11;
const L_DO_COND: u8 = 12;
const L_DO_END: u8 = 13;
const L_SW_BB: u8 = 14;
const L_SW_DEFAULT: u8 = 15;
const L_SW_EPILOG: u8 = 16;
const L_LAND: u8 = 17;
const L_RETURN: u8 = 18;
const LABELS: [&str; 19] = [
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

const NAME_PREFIX: [&str; 30] = [
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
const NAME_STEM: [&str; 30] = [
    "expr", "decl", "type", "insn", "rtx", "operand", "constant", "block", "loop", "reg", "label",
    "binop", "unop", "cond", "call", "mem", "note", "stmt", "value", "node", "list", "jump",
    "edge", "range", "offset", "address", "cost", "mode", "attr", "scope",
];
const FILE_STEM: [&str; 30] = [
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
const LIB_NAMES: [&str; 24] = [
    "malloc", "free", "memcpy", "memset", "strlen", "strcmp", "strcpy", "fprintf", "fputs",
    "sprintf", "abort", "exit", "realloc", "calloc", "strchr", "strncmp", "fputc", "fwrite",
    "fflush", "fopen", "fclose", "printf", "qsort", "getenv",
];
const DECL_NAMES: [&str; 10] = [
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
const EXPR_LABELS: [&str; 20] = [
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

// ---------------------------------------------------------------------------
// Program generation

/// The structured constructs of a function body (see `Gen::region`).
#[derive(Clone, Copy)]
enum Construct {
    Plain,
    IfThen,
    IfElse,
    While,
    For,
    EarlyReturn,
    Switch,
    And,
    DoWhile,
}

/// The constructs in the order of `Gen::pick_construct`'s weights.
const CONSTRUCTS: [Construct; 9] = [
    Construct::Plain,
    Construct::IfThen,
    Construct::IfElse,
    Construct::While,
    Construct::For,
    Construct::EarlyReturn,
    Construct::Switch,
    Construct::And,
    Construct::DoWhile,
];

struct Gen<'c> {
    cfg: &'c SynthConfig,
    rng: Rng,
    funcs: Vec<Func>,
    defined: usize,
    blocks: Vec<Block>,
    arms: Vec<u32>,
    calls: Vec<Call>,
    targets: Vec<u32>,
    /// Prefix sums of popularity weights over all functions.
    pref: Vec<f64>,
    layer_start: Vec<usize>,
    called: Vec<bool>,
    pool: Vec<u32>,
    cheap: Vec<u32>,
    cheap_pref: Vec<f64>,
    spine_cursor: usize,
    // Per-function shaping state.
    label_used: [bool; LABELS.len()],
    label_counter: u32,
    nloops: u32,
    driver_header: u32,
    stmts_mean_extra: f64,
    /// Whether `region` may place early returns (not in `main`, whose
    /// driver loop must not be left).
    early_returns: bool,
}

fn build_program(cfg: &SynthConfig) -> Program {
    let mut rng = Rng::with_stream(cfg.seed, 1);
    let nf = cfg.functions.max(2);
    let extra = (cfg.crash_depth / 4).max(2);
    let nlayers = (cfg.crash_depth + 1 + extra).min(nf).max(2);
    let depth = cfg.crash_depth.min(nlayers - 1);
    let layer_start = layer_starts(nf, nlayers);
    let nfiles = cfg.files.max(1);
    let funcs = declare_functions(cfg, &mut rng, &layer_start, nfiles);
    let pref = popularity(&mut rng, funcs.len());
    let sizes = block_budgets(cfg, &mut rng, nf);

    let stmts_mean_extra = (cfg.statements as f64 / cfg.blocks.max(1) as f64 - 1.0).max(0.0);
    let nfuncs = funcs.len();
    let mut g = Gen {
        cfg,
        rng,
        funcs,
        defined: nf,
        blocks: Vec::with_capacity(cfg.blocks + 16),
        arms: Vec::new(),
        calls: Vec::new(),
        targets: Vec::new(),
        pref,
        layer_start,
        called: vec![false; nfuncs],
        pool: Vec::new(),
        cheap: Vec::new(),
        cheap_pref: vec![0.0],
        spine_cursor: 0,
        label_used: [false; LABELS.len()],
        label_counter: 0,
        nloops: 0,
        driver_header: NONE,
        stmts_mean_extra,
        early_returns: true,
    };
    g.build_bodies(&sizes, nlayers, nfiles);
    g.add_recursion();
    g.compute_heights();
    let order = g.csi_order();
    Program {
        funcs: g.funcs,
        defined: nf,
        blocks: g.blocks,
        arms: g.arms,
        calls: g.calls,
        targets: g.targets,
        files: file_names(nfiles),
        order,
        driver_header: g.driver_header,
        depth,
    }
}

/// Layer sizes: main alone in layer 0, deeper layers get more functions.
/// Returns each layer's first function (and the end).
fn layer_starts(nf: usize, nlayers: usize) -> Vec<usize> {
    let mut layer_size = vec![1usize; nlayers];
    let weights: Vec<f64> = (1..nlayers).map(|l| pow_eighths(l as f64, 6)).collect();
    let wsum: f64 = weights.iter().sum();
    let spare = nf - nlayers;
    let mut given = 0;
    for l in 1..nlayers {
        let k = (spare as f64 * weights[l - 1] / wsum).floor() as usize;
        layer_size[l] += k;
        given += k;
    }
    let mut l = nlayers - 1;
    while given < spare {
        layer_size[l] += 1;
        given += 1;
        l = if l == 1 { nlayers - 1 } else { l - 1 };
    }
    let mut layer_start = vec![0usize; nlayers + 1];
    for l in 0..nlayers {
        layer_start[l + 1] = layer_start[l] + layer_size[l];
    }
    layer_start
}

/// Functions: defined (in layer order, named and placed in files),
/// library stubs, declarations.
fn declare_functions(
    cfg: &SynthConfig,
    rng: &mut Rng,
    layer_start: &[usize],
    nfiles: usize,
) -> Vec<Func> {
    let nlayers = layer_start.len() - 1;
    let nf = layer_start[nlayers];
    let mut names = HashSet::new();
    let mut funcs = Vec::with_capacity(nf + cfg.library_functions + cfg.declarations);
    for l in 0..nlayers {
        for i in layer_start[l]..layer_start[l + 1] {
            let name = if i == 0 {
                "main".to_string()
            } else {
                let base = format!(
                    "{}_{}",
                    NAME_PREFIX[rng.index(NAME_PREFIX.len())],
                    NAME_STEM[rng.index(NAME_STEM.len())]
                );
                if names.contains(&base) {
                    format!("{base}_{i}")
                } else {
                    base
                }
            };
            names.insert(name.clone());
            let file = if i == 0 { 0 } else { rng.index(nfiles) as u32 };
            funcs.push(Func::new(name, FKind::Defined, l as u32, file));
        }
    }
    for i in 0..cfg.library_functions {
        let name = lib_name(&LIB_NAMES, i);
        funcs.push(Func::new(name, FKind::Stub, nlayers as u32, 0));
    }
    for i in 0..cfg.declarations {
        let name = lib_name(&DECL_NAMES, i);
        funcs.push(Func::new(name, FKind::Decl, nlayers as u32, 0));
    }
    funcs
}

/// Popularity prefix sums: heavy-tailed, so a few functions are called
/// from hundreds of sites.
fn popularity(rng: &mut Rng, n: usize) -> Vec<f64> {
    let mut pref = Vec::with_capacity(n + 1);
    pref.push(0.0);
    let mut acc = 0.0;
    for _ in 0..n {
        acc += rng.heavy(7, 2000.0);
        pref.push(acc);
    }
    pref
}

/// Block budgets: heavy-tailed function sizes summing to `cfg.blocks`.
fn block_budgets(cfg: &SynthConfig, rng: &mut Rng, nf: usize) -> Vec<usize> {
    let main_blocks = (cfg.blocks / nf).clamp(6, 40);
    let mut sizes = vec![0usize; nf];
    sizes[0] = main_blocks;
    let rest = cfg.blocks.saturating_sub(main_blocks).max(nf - 1);
    let w: Vec<f64> = (1..nf).map(|_| rng.heavy(5, 300.0)).collect();
    let ws: f64 = w.iter().sum();
    let mut total = main_blocks;
    for i in 1..nf {
        sizes[i] = ((rest as f64 * w[i - 1] / ws).round() as usize).max(1);
        total += sizes[i];
    }
    // Correct the rounding drift on the largest function.
    let (big, _) = sizes
        .iter()
        .enumerate()
        .skip(1)
        .max_by_key(|(_, s)| **s)
        .unwrap();
    if total > cfg.blocks {
        let d = (total - cfg.blocks).min(sizes[big] - 1);
        sizes[big] -= d;
    } else {
        sizes[big] += cfg.blocks - total;
    }
    sizes
}

/// The source files' names.
fn file_names(nfiles: usize) -> Vec<String> {
    (0..nfiles)
        .map(|i| {
            let stem = if i == 0 {
                "main".to_string()
            } else if i <= FILE_STEM.len() {
                FILE_STEM[i - 1].to_string()
            } else {
                format!(
                    "{}-{}",
                    FILE_STEM[(i - 1) % FILE_STEM.len()],
                    (i - 1) / FILE_STEM.len()
                )
            };
            format!("/synth/gcc-like/gcc/{stem}.c")
        })
        .collect()
}

impl Gen<'_> {
    /// Function bodies, bottom-up: callees are complete (cost known)
    /// before their callers.
    fn build_bodies(&mut self, sizes: &[usize], nlayers: usize, nfiles: usize) {
        let mut file_line = vec![1u32; nfiles];
        for l in (0..nlayers).rev() {
            let cheap_snapshot = self.cheap.len();
            self.spine_cursor = self.layer_start[(l + 1).min(nlayers)];
            let (a, b) = (self.layer_start[l], self.layer_start[l + 1]);
            for (fi, &size) in sizes.iter().enumerate().take(b).skip(a) {
                self.build_function(fi, size, &mut file_line);
                self.assign_calls(fi, cheap_snapshot);
                let cost = self.cheap_cost(fi);
                self.funcs[fi].cost = cost;
                if cost <= CHEAP_COST_CAP && fi != 0 {
                    self.cheap.push(fi as u32);
                    let w = self.pref[fi + 1] - self.pref[fi];
                    let last = *self.cheap_pref.last().unwrap();
                    self.cheap_pref.push(last + w);
                }
            }
            for fi in self.layer_start[l]..self.layer_start[l + 1] {
                if !self.called[fi] && fi != 0 {
                    self.pool.push(fi as u32);
                }
            }
        }
    }

    /// Heights over downward calls (higher index = same or lower layer).
    fn compute_heights(&mut self) {
        for fi in (0..self.defined).rev() {
            let (a, b) = self.funcs[fi].calls;
            let mut h = 0;
            for c in &self.calls[a as usize..b as usize] {
                for &t in &self.targets[c.targets.0 as usize..c.targets.1 as usize] {
                    let tf = &self.funcs[t as usize];
                    if tf.kind == FKind::Defined && tf.layer > self.funcs[fi].layer {
                        h = h.max(tf.height + 1);
                    }
                }
            }
            self.funcs[fi].height = h;
        }
    }

    /// csi-cc numbering: defined functions grouped by file, then library.
    fn csi_order(&mut self) -> Vec<u32> {
        let nf = self.defined;
        let mut order: Vec<u32> = (0..nf as u32).collect();
        order.sort_by_key(|&f| (self.funcs[f as usize].file, f));
        order.extend(nf as u32..self.funcs.len() as u32);
        for (k, &f) in order.iter().enumerate() {
            self.funcs[f as usize].num = k as u32 + 1;
        }
        order
    }
}

/// `x^(e8/8)` for `e8` in `0..=8`, from square roots and products only.
fn pow_eighths(x: f64, e8: u32) -> f64 {
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

fn lib_name(list: &[&str], i: usize) -> String {
    if i < list.len() {
        list[i].to_string()
    } else {
        format!("{}_{}", list[i % list.len()], i / list.len())
    }
}

impl Func {
    fn new(name: String, kind: FKind, layer: u32, file: u32) -> Func {
        Func {
            name,
            kind,
            layer,
            file,
            num: 0,
            blocks: (0, 0),
            calls: (0, 0),
            nloops: 0,
            nstmts: 0,
            line: 0,
            cost: match kind {
                FKind::Stub => 2,
                _ => 0,
            },
            height: 0,
        }
    }
}

impl Gen<'_> {
    fn new_block(&mut self, optional: bool, label: u8) -> u32 {
        let n = if self.label_used[label as usize] {
            self.label_counter += 1;
            self.label_counter
        } else {
            self.label_used[label as usize] = true;
            0
        };
        self.blocks.push(Block {
            term: Term::Open,
            optional,
            label,
            label_n: n,
            stmts: 0,
            first_stmt: 0,
            calls: (0, 0),
            line: 0,
        });
        (self.blocks.len() - 1) as u32
    }

    fn set(&mut self, b: u32, t: Term) {
        debug_assert!(matches!(self.blocks[b as usize].term, Term::Open));
        self.blocks[b as usize].term = t;
    }

    /// A sub-region size in `1..=avail`, skewed towards small.
    fn sub(&mut self, avail: usize) -> usize {
        let a = avail.clamp(1, 64) as u64;
        let x = self.rng.below_u64(a);
        let y = self.rng.below_u64(a);
        (1 + x * y / a) as usize
    }

    fn new_loop_id(&mut self) -> u32 {
        self.nloops += 1;
        self.nloops - 1
    }

    /// Appends `left` blocks of structured code after the open block `cur`;
    /// returns the new open block.
    fn region(&mut self, mut cur: u32, mut left: usize, opt: bool, depth: u32) -> u32 {
        while left > 0 {
            let (next, used) = match self.pick_construct(left, depth) {
                Construct::Plain => self.plain(cur, opt),
                Construct::IfThen => self.if_then(cur, left, opt, depth),
                Construct::IfElse => self.if_else(cur, left, opt, depth),
                Construct::While => self.while_loop(cur, left, opt, depth),
                Construct::For => self.for_loop(cur, left, opt, depth),
                Construct::EarlyReturn => self.early_return(cur, opt),
                Construct::Switch => self.switch(cur, left, opt, depth),
                Construct::And => self.and_then(cur, left, opt, depth),
                Construct::DoWhile => self.do_while(cur, left, opt, depth),
            };
            cur = next;
            left -= used;
        }
        cur
    }

    /// The next construct of a region with `left` blocks to go at nesting
    /// `depth`: a weighted choice among those that fit.
    fn pick_construct(&mut self, left: usize, depth: u32) -> Construct {
        // In the order of CONSTRUCTS.
        let mut w = [30u32, 0, 0, 0, 0, 0, 0, 0, 0];
        if depth < 8 && left >= 2 {
            w[1] = 30;
            if self.early_returns {
                w[5] = 8;
            }
        }
        if depth < 6 && left >= 3 {
            w[2] = 15;
            w[3] = 8;
            w[7] = 8;
            w[8] = 3;
        }
        if depth < 6 && left >= 4 {
            w[4] = 12;
        }
        if depth < 6 && left >= 5 {
            w[6] = 4;
        }
        let sum: u32 = w.iter().sum();
        let mut x = self.rng.below_u64(sum as u64) as u32;
        let mut choice = 0;
        while x >= w[choice] {
            x -= w[choice];
            choice += 1;
        }
        CONSTRUCTS[choice]
    }

    // The constructs of `region`: each appends itself after the open block
    // `cur` and returns the new open block and how many blocks it used.

    /// One more block.
    fn plain(&mut self, cur: u32, opt: bool) -> (u32, usize) {
        let nb = self.new_block(opt, L_IF_END);
        self.set(cur, Term::Goto(nb));
        (nb, 1)
    }

    /// `if (c) { ... }`.
    fn if_then(&mut self, cur: u32, left: usize, opt: bool, depth: u32) -> (u32, usize) {
        let t = self.sub(left - 1);
        let tb = self.new_block(true, L_IF_THEN);
        let tend = self.region(tb, t - 1, true, depth + 1);
        let j = self.new_block(opt, L_IF_END);
        self.set(tend, Term::Goto(j));
        self.set(cur, Term::Cond { take: tb, skip: j });
        (j, t + 1)
    }

    /// `if (c) { ... } else { ... }`.
    fn if_else(&mut self, cur: u32, left: usize, opt: bool, depth: u32) -> (u32, usize) {
        let t = self.sub(left - 2);
        let e = self.sub(left - 1 - t);
        let tb = self.new_block(true, L_IF_THEN);
        let tend = self.region(tb, t - 1, true, depth + 1);
        let eb = self.new_block(opt, L_IF_ELSE);
        let eend = self.region(eb, e - 1, opt, depth + 1);
        let j = self.new_block(opt, L_IF_END);
        self.set(tend, Term::Goto(j));
        self.set(eend, Term::Goto(j));
        self.set(cur, Term::Cond { take: tb, skip: eb });
        (j, t + e + 1)
    }

    /// `while (c) { ... }`.
    fn while_loop(&mut self, cur: u32, left: usize, opt: bool, depth: u32) -> (u32, usize) {
        let b = self.sub(left - 2);
        let h = self.new_block(opt, L_WHILE_COND);
        self.set(cur, Term::Goto(h));
        let bb = self.new_block(true, L_WHILE_BODY);
        let bend = self.region(bb, b - 1, true, depth + 1);
        self.set(bend, Term::Goto(h));
        let x = self.new_block(opt, L_WHILE_END);
        let id = self.new_loop_id();
        self.set(
            h,
            Term::Loop {
                body: bb,
                exit: x,
                id,
            },
        );
        (x, b + 2)
    }

    /// `for (...; c; inc) { ... }`.
    fn for_loop(&mut self, cur: u32, left: usize, opt: bool, depth: u32) -> (u32, usize) {
        let b = self.sub(left - 3);
        let h = self.new_block(opt, L_FOR_COND);
        self.set(cur, Term::Goto(h));
        let bb = self.new_block(true, L_FOR_BODY);
        let bend = self.region(bb, b - 1, true, depth + 1);
        let inc = self.new_block(true, L_FOR_INC);
        self.set(bend, Term::Goto(inc));
        self.set(inc, Term::Goto(h));
        let x = self.new_block(opt, L_FOR_END);
        let id = self.new_loop_id();
        self.set(
            h,
            Term::Loop {
                body: bb,
                exit: x,
                id,
            },
        );
        (x, b + 3)
    }

    /// `if (c) return;`.
    fn early_return(&mut self, cur: u32, opt: bool) -> (u32, usize) {
        let r = self.new_block(true, L_IF_THEN);
        self.set(r, Term::Return);
        let n = self.new_block(opt, L_IF_END);
        self.set(cur, Term::Cond { take: r, skip: n });
        (n, 2)
    }

    /// `switch` with k arms, the last the default (large switches in
    /// large regions).
    fn switch(&mut self, cur: u32, left: usize, opt: bool, depth: u32) -> (u32, usize) {
        let mut k = 3 + self.rng.index(4);
        if left > 200 && self.rng.chance_f(0.3) {
            k = 8 + self.rng.index((left / 6).min(60));
        }
        let k = k.min(left - 1);
        let budget = if left > 200 {
            k + self.rng.index(left - k)
        } else {
            (k + self.sub(left - 1)).min(left - 1)
        };
        // Split `budget` into k arms of at least one block.
        let mut arm_sizes = vec![1usize; k];
        for _ in k..budget {
            let i = self.rng.index(k);
            arm_sizes[i] += 1;
        }
        let mut entries = Vec::with_capacity(k);
        let mut ends = Vec::with_capacity(k);
        for (i, &s) in arm_sizes.iter().enumerate() {
            let last = i + 1 == k;
            let (o, lab) = if last {
                (opt, L_SW_DEFAULT)
            } else {
                (true, L_SW_BB)
            };
            let a = self.new_block(o, lab);
            let aend = self.region(a, s - 1, o, depth + 1);
            entries.push(a);
            ends.push(aend);
        }
        let j = self.new_block(opt, L_SW_EPILOG);
        for e in ends {
            self.set(e, Term::Goto(j));
        }
        let start = self.arms.len() as u32;
        self.arms.extend_from_slice(&entries);
        self.set(
            cur,
            Term::Switch {
                start,
                len: k as u32,
            },
        );
        (j, budget + 1)
    }

    /// `if (a && b) { ... }`.
    fn and_then(&mut self, cur: u32, left: usize, opt: bool, depth: u32) -> (u32, usize) {
        let t = self.sub(left - 2);
        let lb = self.new_block(true, L_LAND);
        let tb = self.new_block(true, L_IF_THEN);
        let tend = self.region(tb, t - 1, true, depth + 1);
        let j = self.new_block(opt, L_IF_END);
        self.set(tend, Term::Goto(j));
        self.set(lb, Term::Cond { take: tb, skip: j });
        self.set(cur, Term::Cond { take: lb, skip: j });
        (j, t + 2)
    }

    /// `do { ... } while (c);`.
    fn do_while(&mut self, cur: u32, left: usize, opt: bool, depth: u32) -> (u32, usize) {
        let b = self.sub(left - 2);
        let bb = self.new_block(opt, L_DO_BODY);
        self.set(cur, Term::Goto(bb));
        let bend = self.region(bb, b - 1, opt, depth + 1);
        let c = self.new_block(opt, L_DO_COND);
        self.set(bend, Term::Goto(c));
        let x = self.new_block(opt, L_DO_END);
        let id = self.new_loop_id();
        self.set(
            c,
            Term::Loop {
                body: bb,
                exit: x,
                id,
            },
        );
        (x, b + 2)
    }

    /// Shapes function `fi` with `nblocks` blocks and its statements, and
    /// records its call slots (callees assigned by [`Gen::assign_calls`]).
    fn build_function(&mut self, fi: usize, nblocks: usize, file_line: &mut [u32]) {
        let (start, end) = self.shape_blocks(fi, nblocks);

        // Statements and call slots.
        let bottom = self.funcs[fi].layer as usize + 1 >= self.layer_start.len() - 1;
        let has_lib = self.cfg.library_functions + self.cfg.declarations > 0;
        let may_call = !bottom || has_lib;
        let file = self.funcs[fi].file as usize;
        let fline = file_line[file] + 1 + self.rng.below_u64(8) as u32;
        let (mut nst, mut slots) = self.place_statements(start, end, fline, may_call);
        // Every function above the bottom needs an optional call slot for
        // its spine call (or, failing that, any call slot).
        let spine = if bottom {
            None
        } else {
            Some(self.spine_slot(start, end, &mut slots, &mut nst))
        };
        let cstart = self.calls.len() as u32;
        self.add_calls(fi, start, end, &slots, spine);
        let f = &mut self.funcs[fi];
        f.blocks = (start, end);
        f.calls = (cstart, self.calls.len() as u32);
        f.nloops = self.nloops;
        f.nstmts = nst;
        f.line = fline;
        file_line[file] = fline + nst * 2 / 3 + 4;
    }

    /// The blocks of function `fi`, `nblocks` of them (at least 4 for
    /// `main`): `start..end` of [`Gen::blocks`], the last one returning.
    fn shape_blocks(&mut self, fi: usize, nblocks: usize) -> (u32, u32) {
        self.label_used = [false; LABELS.len()];
        self.label_counter = 0;
        self.nloops = 0;
        let start = self.blocks.len() as u32;
        let entry = self.new_block(false, L_ENTRY);
        let last = if fi == 0 {
            self.driver(entry, nblocks)
        } else {
            self.region(entry, nblocks - 1, false, 0)
        };
        self.set(last, Term::Return);
        let end = self.blocks.len() as u32;
        self.blocks[last as usize].label = L_RETURN;
        self.blocks[last as usize].label_n = 0;
        (start, end)
    }

    /// `main`'s body after `entry`: a little set-up, then the driver loop
    /// (no early returns in it). Returns the block after the loop.
    fn driver(&mut self, entry: u32, nblocks: usize) -> u32 {
        let nblocks = nblocks.max(4);
        let pre = (nblocks - 4).min(2);
        let mut cur = entry;
        for _ in 0..pre {
            let nb = self.new_block(false, L_IF_END);
            self.set(cur, Term::Goto(nb));
            cur = nb;
        }
        let h = self.new_block(false, L_WHILE_COND);
        self.set(cur, Term::Goto(h));
        let body = self.new_block(true, L_WHILE_BODY);
        self.early_returns = false;
        let bend = self.region(body, nblocks - pre - 4, true, 1);
        self.early_returns = true;
        self.set(bend, Term::Goto(h));
        let x = self.new_block(false, L_WHILE_END);
        let id = self.new_loop_id();
        self.set(h, Term::Loop { body, exit: x, id });
        self.driver_header = h;
        x
    }

    /// Gives blocks `start..end` their statements (lines from `fline`) and,
    /// when the function `may_call`, picks call slots (block, offset)
    /// among the statements before each block's last. Returns the number
    /// of statements and the slots, sorted.
    fn place_statements(
        &mut self,
        start: u32,
        end: u32,
        fline: u32,
        may_call: bool,
    ) -> (u32, Vec<(u32, u32)>) {
        let mut nst = 0u32;
        let mut slots: Vec<(u32, u32)> = Vec::new(); // (block, offset)
        for b in start..end {
            let s = 1 + self.rng.geometric(self.stmts_mean_extra, 200) as u32;
            let blk = &mut self.blocks[b as usize];
            blk.stmts = s;
            blk.first_stmt = nst;
            blk.line = fline + 1 + nst * 2 / 3;
            nst += s;
            if may_call {
                for off in 0..s - 1 {
                    if self.rng.permille(self.cfg.call_permille) {
                        slots.push((b, off));
                    }
                }
            }
        }
        (nst, slots)
    }

    /// The slot of the spine call of a function with blocks `start..end`:
    /// an optional call slot if there is one, else a new slot in an
    /// optional block (growing a one-statement block, `nst` counts it),
    /// else any slot.
    fn spine_slot(
        &mut self,
        start: u32,
        end: u32,
        slots: &mut Vec<(u32, u32)>,
        nst: &mut u32,
    ) -> (u32, u32) {
        let opt_slots: Vec<usize> = (0..slots.len())
            .filter(|&i| self.blocks[slots[i].0 as usize].optional)
            .collect();
        if !opt_slots.is_empty() {
            return slots[opt_slots[self.rng.index(opt_slots.len())]];
        }
        let opt_blocks: Vec<u32> = (start..end)
            .filter(|&b| self.blocks[b as usize].optional)
            .collect();
        if opt_blocks.is_empty() && !slots.is_empty() {
            return slots[self.rng.index(slots.len())];
        }
        let b = if opt_blocks.is_empty() {
            start + self.rng.below_u64((end - start) as u64) as u32
        } else {
            opt_blocks[self.rng.index(opt_blocks.len())]
        };
        if self.blocks[b as usize].stmts == 1 {
            // Grow the block by one statement.
            self.blocks[b as usize].stmts = 2;
            for bb in b + 1..end {
                self.blocks[bb as usize].first_stmt += 1;
            }
            *nst += 1;
        }
        let off = self.rng.below_u64(self.blocks[b as usize].stmts as u64 - 1) as u32;
        if !slots.contains(&(b, off)) {
            slots.push((b, off));
            slots.sort_unstable();
        }
        (b, off)
    }

    /// Records the calls of function `fi` at `slots` (sorted), block by
    /// block; the one at `spine` is its spine call.
    fn add_calls(
        &mut self,
        fi: usize,
        start: u32,
        end: u32,
        slots: &[(u32, u32)],
        spine: Option<(u32, u32)>,
    ) {
        let cstart = self.calls.len() as u32;
        let mut si = 0;
        for b in start..end {
            let c0 = self.calls.len() as u32;
            while si < slots.len() && slots[si].0 == b {
                let (_, off) = slots[si];
                self.calls.push(Call {
                    func: fi as u32,
                    block: b,
                    offset: off,
                    targets: (0, 0),
                    spine: spine == Some((b, off)),
                    ordinal: self.calls.len() as u32 - cstart,
                });
                si += 1;
            }
            self.blocks[b as usize].calls = (c0, self.calls.len() as u32);
        }
    }

    fn pick_weighted(&mut self, a: usize, b: usize) -> u32 {
        debug_assert!(a < b);
        let lo = self.pref[a];
        let hi = self.pref[b];
        let x = lo + self.rng.unit() * (hi - lo);
        let i = self.pref[a..=b].partition_point(|&p| p <= x);
        (a + i.saturating_sub(1)).min(b - 1) as u32
    }

    fn pick_cheap(&mut self, n: usize) -> u32 {
        let hi = self.cheap_pref[n];
        let x = self.rng.unit() * hi;
        let i = self.cheap_pref[..=n].partition_point(|&p| p <= x);
        self.cheap[i.saturating_sub(1).min(n - 1)]
    }

    fn pick_lib(&mut self) -> Option<u32> {
        let (s, d) = (self.cfg.library_functions, self.cfg.declarations);
        if s + d == 0 {
            return None;
        }
        let decl = d > 0 && (s == 0 || self.rng.chance_f(DECLARATION_SHARE));
        let (base, n) = if decl {
            (self.defined + s, d)
        } else {
            (self.defined, s)
        };
        let u = self.rng.unit();
        Some((base + ((n as f64 * u * u) as usize).min(n - 1)) as u32)
    }

    fn pick_uncalled(&mut self) -> Option<u32> {
        while !self.pool.is_empty() {
            let i = self.rng.index(self.pool.len());
            let f = self.pool.swap_remove(i);
            if !self.called[f as usize] {
                return Some(f);
            }
        }
        None
    }

    fn pick_spine(&mut self, layer: usize) -> u32 {
        let (a, b) = (self.layer_start[layer], self.layer_start[layer + 1]);
        while self.spine_cursor < b && self.called[self.spine_cursor] {
            self.spine_cursor += 1;
        }
        if self.spine_cursor < b {
            self.spine_cursor as u32
        } else {
            self.pick_weighted(a, b)
        }
    }

    fn assign_calls(&mut self, fi: usize, cheap_snapshot: usize) {
        let layer = self.funcs[fi].layer as usize;
        let nlayers = self.layer_start.len() - 1;
        let lower = self.layer_start[(layer + 1).min(nlayers)];
        let bottom = layer + 1 >= nlayers;
        let (c0, c1) = self.funcs[fi].calls;
        for ci in c0..c1 {
            let c = self.calls[ci as usize];
            let t0 = self.targets.len() as u32;
            let optional = self.blocks[c.block as usize].optional;
            if c.spine {
                let t = self.pick_spine(layer + 1);
                self.targets.push(t);
            } else {
                let lib = if bottom || self.rng.chance_f(LIBRARY_SHARE) {
                    self.pick_lib()
                } else {
                    None
                };
                if let Some(t) = lib {
                    self.targets.push(t);
                } else if !optional {
                    let t = if cheap_snapshot > 0 {
                        self.pick_cheap(cheap_snapshot)
                    } else if let Some(t) = self.pick_lib() {
                        t
                    } else {
                        self.pick_weighted(lower, self.defined)
                    };
                    self.targets.push(t);
                } else if self.rng.permille(self.cfg.indirect_permille) {
                    let k = 2 + self.rng.index(6);
                    for _ in 0..k {
                        let t = self.pick_weighted(lower, self.defined);
                        if !self.targets[t0 as usize..].contains(&t) {
                            self.targets.push(t);
                        }
                    }
                } else {
                    let t = if self.rng.chance_f(UNCALLED_SHARE) {
                        self.pick_uncalled()
                    } else {
                        None
                    };
                    let t = t.unwrap_or_else(|| self.pick_weighted(lower, self.defined));
                    self.targets.push(t);
                }
            }
            for k in t0 as usize..self.targets.len() {
                let t = self.targets[k] as usize;
                self.called[t] = true;
            }
            self.calls[ci as usize].targets = (t0, self.targets.len() as u32);
        }
    }

    /// Steps to run function `fi` along its cheap path.
    fn cheap_cost(&self, fi: usize) -> u64 {
        let f = &self.funcs[fi];
        let mut b = f.blocks.0;
        let mut cost = 2u64;
        loop {
            let blk = &self.blocks[b as usize];
            cost = cost.saturating_add(blk.stmts as u64);
            for c in &self.calls[blk.calls.0 as usize..blk.calls.1 as usize] {
                let m = self.targets[c.targets.0 as usize..c.targets.1 as usize]
                    .iter()
                    .map(|&t| self.funcs[t as usize].cost)
                    .max()
                    .unwrap_or(0);
                cost = cost.saturating_add(m);
            }
            b = match blk.term {
                Term::Goto(n) => n,
                Term::Cond { skip, .. } => skip,
                Term::Switch { start, len } => self.arms[(start + len - 1) as usize],
                Term::Loop { exit, .. } => exit,
                Term::Return => return cost,
                Term::Open => unreachable!(),
            };
        }
    }

    /// Turns some optional direct calls into recursive ones: self calls, or
    /// calls back up to one of the function's callers.
    fn add_recursion(&mut self) {
        let nf = self.defined;
        let mut callers: Vec<Vec<u32>> = vec![Vec::new(); nf];
        for c in &self.calls {
            if c.targets.1 - c.targets.0 == 1 {
                let t = self.targets[c.targets.0 as usize] as usize;
                if t < nf && t != c.func as usize {
                    callers[t].push(c.func);
                }
            }
        }
        for (fi, fcallers) in callers.iter().enumerate().skip(1) {
            if !self.rng.permille(self.cfg.recursion_permille) {
                continue;
            }
            let (c0, c1) = self.funcs[fi].calls;
            let cands: Vec<u32> = (c0..c1)
                .filter(|&ci| {
                    let c = &self.calls[ci as usize];
                    c.targets.1 - c.targets.0 == 1
                        && !c.spine
                        && self.blocks[c.block as usize].optional
                        && (self.targets[c.targets.0 as usize] as usize) < nf
                })
                .collect();
            if cands.is_empty() {
                continue;
            }
            let ci = cands[self.rng.index(cands.len())] as usize;
            let mut target = fi as u32;
            if !self.rng.chance_f(SELF_RECURSION_SHARE) {
                let cs: Vec<u32> = fcallers.iter().copied().filter(|&g| g != 0).collect();
                if !cs.is_empty() {
                    let g = cs[self.rng.index(cs.len())];
                    // Only if g still calls fi (its slot may have been
                    // retargeted meanwhile).
                    let (g0, g1) = self.funcs[g as usize].calls;
                    let still = self.calls[g0 as usize..g1 as usize].iter().any(|c| {
                        self.targets[c.targets.0 as usize..c.targets.1 as usize]
                            .contains(&(fi as u32))
                    });
                    if still {
                        target = g;
                    }
                }
            }
            let t0 = self.calls[ci].targets.0 as usize;
            self.targets[t0] = target;
        }
    }
}

// ---------------------------------------------------------------------------
// Simulation

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    /// Random branches, callees explore too (within bounds).
    Explore,
    /// Cheap path only; callees run cheap too.
    Cheap,
    /// Heading for the crash depth.
    Dive,
}

#[derive(Clone, Copy)]
struct Frame {
    func: u32,
    block: u32,
    /// Next statement (offset in the block) to execute.
    pos: u32,
    /// Next call (index into `calls`) of the block not yet executed.
    next_call: u32,
    mode: Mode,
    loop_base: u32,
    /// The call that created this frame (NONE for main).
    via: u32,
}

struct DivePlan {
    frame: usize,
    /// Blocks still to enter, last first (pop order).
    path: Vec<u32>,
    call: u32,
}

struct Run {
    executed: Vec<bool>,
    /// Pending calls at the crash, outermost first: (call, callee function).
    stack: Vec<(u32, u32)>,
    /// (function, local statement index).
    crash: (u32, u32),
    steps: u64,
    /// Every node executed, as (function, local index), if recorded.
    #[cfg_attr(not(test), allow(dead_code))]
    trace: Option<Vec<(u32, u32)>>,
}

struct Sim<'p> {
    p: &'p Program,
    visited: Vec<u32>,
    parent: Vec<u32>,
    stamp: u32,
    queue: Vec<u32>,
}

const START: u32 = u32::MAX - 1;

impl Sim<'_> {
    fn qualifies(&self, ci: u32, need: u32) -> bool {
        let c = &self.p.calls[ci as usize];
        self.p.targets_of(c).iter().any(|&t| {
            let f = &self.p.funcs[t as usize];
            f.kind == FKind::Defined && f.height >= need
        })
    }

    /// A shortest intraprocedural route from the frame's position to a call
    /// whose callee can reach `need` more frames.
    fn find_dive(&mut self, fr: &Frame, need: u32) -> Option<(Vec<u32>, u32)> {
        let p = self.p;
        let b = &p.blocks[fr.block as usize];
        for ci in fr.next_call..b.calls.1 {
            if self.qualifies(ci, need) {
                return Some((Vec::new(), ci));
            }
        }
        self.stamp += 1;
        let stamp = self.stamp;
        self.queue.clear();
        let mut q = std::mem::take(&mut self.queue);
        p.for_succs(fr.block, |s| {
            if s != EXIT && self.visited[s as usize] != stamp {
                self.visited[s as usize] = stamp;
                self.parent[s as usize] = START;
                q.push(s);
            }
        });
        let mut head = 0;
        let mut found = None;
        'bfs: while head < q.len() {
            let x = q[head];
            head += 1;
            let (c0, c1) = p.blocks[x as usize].calls;
            for ci in c0..c1 {
                if self.qualifies(ci, need) {
                    found = Some((x, ci));
                    break 'bfs;
                }
            }
            p.for_succs(x, |s| {
                if s != EXIT && self.visited[s as usize] != stamp {
                    self.visited[s as usize] = stamp;
                    self.parent[s as usize] = x;
                    q.push(s);
                }
            });
        }
        self.queue = q;
        let (x, ci) = found?;
        let mut path = vec![x];
        let mut cur = x;
        while self.parent[cur as usize] != START {
            cur = self.parent[cur as usize];
            path.push(cur);
        }
        Some((path, ci))
    }
}

fn simulate(p: &Program, cfg: &SynthConfig, record: bool) -> Run {
    let mut r = Runner::new(p, cfg, record);
    let crash = loop {
        r.start_diving_when_due();
        let depth = r.stack.len() - 1;
        let fr = r.stack[depth];
        if fr.mode == Mode::Dive && !r.plan_dive(depth, &fr) {
            continue;
        }
        let b = &p.blocks[fr.block as usize];
        let crashing = fr.mode == Mode::Dive && depth == r.target;
        let more_calls = fr.next_call < b.calls.1;
        if crashing {
            if let Some(c) = r.crash_in(&fr, more_calls) {
                break c;
            }
        }
        if more_calls {
            r.call(depth, &fr, crashing);
        } else {
            r.end_block(depth, &fr, crashing);
        }
    };
    Run {
        executed: r.executed,
        stack: r.stack[1..].iter().map(|f| (f.via, f.func)).collect(),
        crash,
        steps: r.steps,
        trace: r.trace,
    }
}

/// The state of [`simulate`]'s run: one step per block visit or call.
struct Runner<'p> {
    p: &'p Program,
    cfg: &'p SynthConfig,
    rng: Rng,
    sim: Sim<'p>,
    /// The crash depth.
    target: usize,
    /// Executed call sites after which the run dives to the crash.
    switch_at: usize,
    max_iter: u32,
    trace: Option<Vec<(u32, u32)>>,
    executed: Vec<bool>,
    n_exec: usize,
    steps: u64,
    /// Activations per function.
    active: Vec<u32>,
    /// Explorations per function.
    explored: Vec<u32>,
    /// Probability of a conditional's taken arm, per depth.
    arm_p: Vec<f64>,
    /// Loop iteration counters of the frames, in stack order.
    loops: Vec<u8>,
    stack: Vec<Frame>,
    diving: bool,
    plan: Option<DivePlan>,
    /// Statements left to walk in the crashing frame.
    walk: Option<u32>,
}

impl<'p> Runner<'p> {
    fn new(p: &'p Program, cfg: &'p SynthConfig, record: bool) -> Runner<'p> {
        // ARM_P0 * ARM_DECAY^depth, by repeated products (portable, unlike powi).
        let mut arm_p = vec![ARM_P0];
        for _ in 0..cfg.explore_depth.max(1) {
            let last = *arm_p.last().unwrap();
            arm_p.push(last * ARM_DECAY);
        }
        let mut r = Runner {
            p,
            cfg,
            rng: Rng::with_stream(cfg.seed, 2),
            sim: Sim {
                p,
                visited: vec![0; p.blocks.len()],
                parent: vec![0; p.blocks.len()],
                stamp: 0,
                queue: Vec::new(),
            },
            target: p.depth,
            switch_at: cfg.coverage + cfg.coverage / 10,
            max_iter: cfg.max_loop_iterations.min(255),
            trace: if record { Some(Vec::new()) } else { None },
            executed: vec![false; p.calls.len()],
            n_exec: 0,
            steps: 0,
            active: vec![0u32; p.funcs.len()],
            explored: vec![0u32; p.funcs.len()],
            arm_p,
            loops: Vec::new(),
            stack: Vec::new(),
            diving: false,
            plan: None,
            walk: None,
        };
        if let Some(t) = &mut r.trace {
            t.push((0, 1));
        }
        r.steps += 1;
        r.push(0, NONE, Mode::Explore);
        r
    }

    /// Enters function `f` from call site `via`.
    fn push(&mut self, f: u32, via: u32, mode: Mode) {
        let p = self.p;
        let func = &p.funcs[f as usize];
        let base = self.loops.len() as u32;
        self.loops
            .resize(self.loops.len() + func.nloops as usize, 0);
        self.active[f as usize] += 1;
        let b0 = func.blocks.0;
        self.stack.push(Frame {
            func: f,
            block: b0,
            pos: 0,
            next_call: p.blocks[b0 as usize].calls.0,
            mode,
            loop_base: base,
            via,
        });
    }

    /// Records statements `from..to` of block `b` of function `f`.
    fn rec(&mut self, f: u32, b: u32, from: u32, to: u32) {
        if let Some(t) = &mut self.trace {
            for off in from..to {
                t.push((f, self.p.local(b, off)));
            }
        }
    }

    /// After enough coverage (or steps), every exploring frame dives.
    fn start_diving_when_due(&mut self) {
        if !self.diving && (self.n_exec >= self.switch_at || self.steps >= self.cfg.max_steps) {
            self.diving = true;
            for fr in self.stack.iter_mut() {
                if fr.mode == Mode::Explore {
                    fr.mode = Mode::Dive;
                }
            }
        }
    }

    /// A diving frame plans its way to a call deep enough; false (the
    /// frame turned cheap) when it is too deep or has none.
    fn plan_dive(&mut self, depth: usize, fr: &Frame) -> bool {
        if depth > self.target {
            self.stack[depth].mode = Mode::Cheap;
            self.plan = None;
            return false;
        }
        if depth < self.target && !matches!(&self.plan, Some(d) if d.frame == depth) {
            match self.sim.find_dive(fr, (self.target - depth - 1) as u32) {
                Some((path, call)) => {
                    self.plan = Some(DivePlan {
                        frame: depth,
                        path,
                        call,
                    })
                }
                None => {
                    self.stack[depth].mode = Mode::Cheap;
                    self.plan = None;
                    return false;
                }
            }
        }
        true
    }

    /// In the crashing frame: walks a random number of statements and
    /// crashes there, if it comes before the next call (or the return).
    fn crash_in(&mut self, fr: &Frame, more_calls: bool) -> Option<(u32, u32)> {
        let p = self.p;
        let b = &p.blocks[fr.block as usize];
        let rng = &mut self.rng;
        let k = *self
            .walk
            .get_or_insert_with(|| rng.below_u64(CRASH_WALK + 1) as u32);
        let stop = if more_calls {
            p.calls[fr.next_call as usize].offset
        } else {
            b.stmts
        };
        let avail = stop - fr.pos;
        if k < avail || (!more_calls && matches!(b.term, Term::Return)) {
            let off = if k < avail { fr.pos + k } else { b.stmts - 1 };
            self.rec(fr.func, fr.block, fr.pos, off + 1);
            self.steps += (off + 1 - fr.pos) as u64;
            return Some((fr.func, p.local(fr.block, off)));
        }
        self.walk = Some(k - avail);
        None
    }

    /// The frame's next call: a target by the frame's mode, entered.
    fn call(&mut self, depth: usize, fr: &Frame, crashing: bool) {
        let p = self.p;
        let ci = fr.next_call;
        let c = p.calls[ci as usize];
        self.rec(fr.func, fr.block, fr.pos, c.offset + 1);
        self.steps += (c.offset + 1 - fr.pos) as u64;
        {
            let f = &mut self.stack[depth];
            f.pos = c.offset + 1;
            f.next_call += 1;
        }
        if !self.executed[ci as usize] {
            self.executed[ci as usize] = true;
            self.n_exec += 1;
        }
        let ts = p.targets_of(&c);
        let (t, mode) = match fr.mode {
            Mode::Dive if !crashing && self.plan.as_ref().is_some_and(|d| d.call == ci) => {
                let need = (self.target - depth - 1) as u32;
                let ok: Vec<u32> = ts
                    .iter()
                    .copied()
                    .filter(|&t| {
                        let f = &p.funcs[t as usize];
                        f.kind == FKind::Defined && f.height >= need
                    })
                    .collect();
                (ok[self.rng.index(ok.len())], Mode::Dive)
            }
            Mode::Explore => {
                let t = ts[self.rng.index(ts.len())];
                let seen = self.explored[t as usize];
                let m = if depth + 1 < self.cfg.explore_depth
                    && self.active[t as usize] < self.cfg.recursion_bound
                    && (seen < FRESH_EXPLORATIONS
                        || self.rng.chance_f(FRESH_EXPLORATIONS as f64 / seen as f64))
                {
                    self.explored[t as usize] = seen.saturating_add(1);
                    Mode::Explore
                } else {
                    Mode::Cheap
                };
                (t, m)
            }
            _ => (ts[self.rng.index(ts.len())], Mode::Cheap),
        };
        match p.funcs[t as usize].kind {
            FKind::Decl => {}
            FKind::Stub => {
                if let Some(tr) = &mut self.trace {
                    tr.push((t, 1));
                    tr.push((t, 2));
                }
                self.steps += 2;
            }
            FKind::Defined => {
                if let Some(tr) = &mut self.trace {
                    tr.push((t, 1));
                }
                self.steps += 1;
                self.push(t, ci, mode);
                if mode == Mode::Dive {
                    self.plan = None;
                }
            }
        }
    }

    /// The end of the frame's block: the next block by the frame's mode,
    /// or the return.
    fn end_block(&mut self, depth: usize, fr: &Frame, crashing: bool) {
        let p = self.p;
        let b = &p.blocks[fr.block as usize];
        self.rec(fr.func, fr.block, fr.pos, b.stmts);
        self.steps += (b.stmts - fr.pos) as u64;
        let next = match fr.mode {
            Mode::Cheap => p.cheap_succ(fr.block),
            Mode::Dive if crashing => p.cheap_succ(fr.block),
            Mode::Dive => self
                .plan
                .as_mut()
                .and_then(|d| d.path.pop())
                .expect("dive path"),
            Mode::Explore => self.explore_succ(depth, fr),
        };
        if let Term::Loop { exit, id, .. } = b.term {
            if next == exit && fr.mode != Mode::Explore {
                self.loops[(fr.loop_base + id) as usize] = 0;
            }
        }
        if next == EXIT {
            if let Some(t) = &mut self.trace {
                t.push((fr.func, 2));
            }
            self.steps += 1;
            self.active[fr.func as usize] -= 1;
            self.loops.truncate(fr.loop_base as usize);
            self.stack.pop();
            assert!(!self.stack.is_empty(), "synthetic run returned from main");
            return;
        }
        let f = &mut self.stack[depth];
        f.block = next;
        f.pos = 0;
        f.next_call = p.blocks[next as usize].calls.0;
    }

    /// An exploring frame's random successor block (or [`EXIT`]).
    fn explore_succ(&mut self, depth: usize, fr: &Frame) -> u32 {
        let p = self.p;
        match p.blocks[fr.block as usize].term {
            Term::Goto(n) => n,
            Term::Return => EXIT,
            Term::Cond { take, skip } => {
                if self
                    .rng
                    .chance_f(self.arm_p[depth.min(self.arm_p.len() - 1)])
                {
                    take
                } else {
                    skip
                }
            }
            Term::Switch { start, len } => {
                p.arms[(start + self.rng.below_u64(len as u64) as u32) as usize]
            }
            Term::Loop { body, exit, id } => {
                if fr.block == p.driver_header && depth == 0 {
                    body
                } else {
                    let c = &mut self.loops[(fr.loop_base + id) as usize];
                    if (*c as u32) < self.max_iter && self.rng.chance_f(LOOP_P) {
                        *c += 1;
                        body
                    } else {
                        *c = 0;
                        exit
                    }
                }
            }
            Term::Open => unreachable!(),
        }
    }
}

// ---------------------------------------------------------------------------
// Output

const GRAPHML_HEAD: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns"
    xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
    xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">
  <key id="nature"      for="graph" attr.name="nature"     attr.type="string"/>
  <key id="label"       for="node" attr.name="label"       attr.type="string"/>
  <key id="kind"        for="node" attr.name="kind"        attr.type="string"> <default>declaration</default> </key>
  <key id="syntax"      for="node" attr.name="syntax"      attr.type="string"/>
  <key id="basic-block" for="node" attr.name="basic-block" attr.type="string"/>
  <key id="file"        for="node" attr.name="file"        attr.type="string"/>
  <key id="procedure"   for="node" attr.name="procedure"   attr.type="string"/>
  <key id="lines"       for="node" attr.name="lines"       attr.type="string"/>
  <key id="call-id"     for="node" attr.name="call-id"     attr.type="string"/>
  <key id="call-name"   for="node" attr.name="call-name"   attr.type="string"/>
  <key id="alocs-used"  for="node" attr.name="alocs-used"  attr.type="string"/>
  <key id="alocs-defd"  for="node" attr.name="alocs-defd"  attr.type="string"/>
  <key id="alocs-mayd"  for="node" attr.name="alocs-mayd"  attr.type="string"/>
  <key id="csi-label"   for="node" attr.name="csi-label"   attr.type="string"/>
  <key id="type"        for="edge" attr.name="type"        attr.type="string"> <default>flow</default> </key>
  <key id="when"        for="edge" attr.name="when"        attr.type="string"> <default>true</default> </key>
  <key id="scope"       for="edge" attr.name="scope"       attr.type="string"> <default>intraprocedural</default> </key>
  <graph id="CFG" edgedefault="directed">
    <data key="nature">CFG</data>
"#;

fn mix(a: u32, b: u32) -> u64 {
    let mut z = ((a as u64) << 32 | b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z ^= z >> 29;
    z = z.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z ^ (z >> 32)
}

fn write_entry_exit<W: Write>(w: &mut W, f: &Func, file: Option<&str>) -> io::Result<()> {
    let (n, name) = (f.num, &f.name);
    write!(
        w,
        "    <node id=\"n:-{n}:1\">\n      <data key=\"label\">entry: {name}</data>\n      \
         <data key=\"basic-block\">function_entry</data>\n      <data key=\"kind\">entry</data>\n      \
         <data key=\"lines\">( 0 )</data>\n"
    )?;
    if let Some(file) = file {
        writeln!(w, "      <data key=\"file\">{file}</data>")?;
    }
    write!(
        w,
        "      <data key=\"procedure\">{name}</data>\n    </node>\n    <node id=\"n:-{n}:2\">\n      \
         <data key=\"label\">exit: {name}</data>\n      <data key=\"basic-block\">function_exit</data>\n      \
         <data key=\"kind\">exit</data>\n      <data key=\"lines\">( 0 )</data>\n    </node>\n"
    )
}

fn write_graphml<W: Write>(p: &Program, w: &mut W) -> io::Result<()> {
    w.write_all(GRAPHML_HEAD.as_bytes())?;
    for &fi in &p.order {
        write_function(p, &p.funcs[fi as usize], w)?;
    }
    w.write_all(b"  </graph>\n</graphml>\n")
}

/// One function's nodes and edges: a declaration's node, a stub's entry
/// and exit, or a defined function's entry, exit and statements.
fn write_function<W: Write>(p: &Program, f: &Func, w: &mut W) -> io::Result<()> {
    let n = f.num;
    writeln!(w, "    <!-- cfg -{n} {} -->", f.name)?;
    match f.kind {
        FKind::Decl => {
            return write!(
                w,
                "    <node id=\"n:-{n}:1\">\n      <data key=\"label\">declaration: {}</data>\n      \
                 <data key=\"procedure\">{}</data>\n    </node>\n",
                f.name, f.name
            );
        }
        FKind::Stub => {
            write_entry_exit(w, f, None)?;
            return writeln!(w, "    <edge source=\"n:-{n}:1\" target=\"n:-{n}:2\"/>");
        }
        FKind::Defined => {}
    }
    write_entry_exit(w, f, Some(&p.files[f.file as usize]))?;
    writeln!(w, "    <edge source=\"n:-{n}:1\" target=\"n:-{n}:3\"/>")?;
    for b in f.blocks.0..f.blocks.1 {
        let blk = &p.blocks[b as usize];
        let mut ci = blk.calls.0;
        for off in 0..blk.stmts {
            let call = if ci < blk.calls.1 && p.calls[ci as usize].offset == off {
                ci += 1;
                Some(&p.calls[ci as usize - 1])
            } else {
                None
            };
            write_statement(p, w, n, b, off, call)?;
            write_statement_edges(p, w, n, b, off, call)?;
        }
    }
    Ok(())
}

/// The node of statement `off` of block `b` of the function numbered `n`
/// (a call site when `call` is given).
fn write_statement<W: Write>(
    p: &Program,
    w: &mut W,
    n: u32,
    b: u32,
    off: u32,
    call: Option<&Call>,
) -> io::Result<()> {
    let blk = &p.blocks[b as usize];
    let label = LABELS[blk.label as usize];
    let id = 3 + blk.first_stmt + off;
    let h = mix(n, id);
    let line = blk.line + off * 2 / 3;
    w.write_all(b"    <node id=\"n:-")?;
    write!(w, "{n}:{id}\">\n      <data key=\"label\">  ")?;
    let last = off + 1 == blk.stmts;
    if let Some(c) = call {
        if c.ordinal == 0 {
            w.write_all(b"%call")?;
        } else {
            write!(w, "%call{}", c.ordinal)?;
        }
    } else if last {
        w.write_all(match blk.term {
            Term::Return => b"ret",
            Term::Switch { .. } => b"switch",
            _ => b"br",
        })?;
    } else {
        let l = EXPR_LABELS[(h % EXPR_LABELS.len() as u64) as usize];
        if l == "%" {
            write!(w, "%{}", (h >> 16) % 200)?;
        } else {
            w.write_all(l.as_bytes())?;
        }
    }
    w.write_all(b"</data>\n      <data key=\"basic-block\">")?;
    w.write_all(label.as_bytes())?;
    if blk.label_n > 0 {
        write!(w, "{}", blk.label_n)?;
    }
    w.write_all(b"</data>\n      <data key=\"kind\">")?;
    w.write_all(if call.is_some() {
        b"call-site"
    } else {
        b"expression"
    })?;
    write!(w, "</data>\n      <data key=\"lines\">({line})</data>\n")?;
    if let Some(c) = call {
        writeln!(w, "      <data key=\"csi-label\">{}</data>", c.ordinal)?;
    }
    w.write_all(b"    </node>\n")
}

/// The edges of statement `off` of block `b` of the function numbered
/// `n`: flow to the next statement (from a block's last, to the first
/// statements of its successors or the exit) and, for a call, to the
/// callees' entries.
fn write_statement_edges<W: Write>(
    p: &Program,
    w: &mut W,
    n: u32,
    b: u32,
    off: u32,
    call: Option<&Call>,
) -> io::Result<()> {
    let blk = &p.blocks[b as usize];
    let id = 3 + blk.first_stmt + off;
    if off + 1 != blk.stmts {
        writeln!(
            w,
            "    <edge source=\"n:-{n}:{id}\" target=\"n:-{n}:{}\"/>",
            id + 1
        )?;
    } else {
        let mut res = Ok(());
        p.for_succs(b, |s| {
            if res.is_err() {
                return;
            }
            let t = if s == EXIT {
                2
            } else {
                3 + p.blocks[s as usize].first_stmt
            };
            res = writeln!(
                w,
                "    <edge source=\"n:-{n}:{id}\" target=\"n:-{n}:{t}\"/>"
            );
        });
        res?;
    }
    if let Some(c) = call {
        for &t in p.targets_of(c) {
            write!(
                w,
                "    <edge source=\"n:-{n}:{id}\" target=\"n:-{}:1\">\n      \
                 <data key=\"type\">control</data>\n      \
                 <data key=\"scope\">interprocedural</data>\n    </edge>\n",
                p.funcs[t as usize].num
            )?;
        }
    }
    Ok(())
}

/// Writes the report; returns the numbers of obsYes and obsNo entries.
fn write_report<W: Write>(
    p: &Program,
    run: &Run,
    cfg: &SynthConfig,
    w: &mut W,
) -> io::Result<(usize, usize)> {
    let mut r = ReportWriter {
        p,
        run,
        cfg,
        rng: Rng::with_stream(cfg.seed, 3),
        w,
    };
    let (yes, no): (Vec<u32>, Vec<u32>) =
        (0..p.calls.len() as u32).partition(|&c| run.executed[c as usize]);
    let yes = sample(&mut r.rng, yes, cfg.coverage);
    let no = sample(&mut r.rng, no, cfg.obs_no);
    let ncalls = p.calls.len();
    r.w.write_all(b"{\"obsYes\": [")?;
    r.covered(&yes)?;
    let mut n_yes = yes.len();
    if let (true, Some(trace)) = (cfg.reliable_trace > 0, &run.trace) {
        if r.reliable_trace(trace, n_yes)? {
            n_yes += 1;
        }
    }
    if let (true, Some(trace)) = (cfg.ambiguous_vector > 0 && ncalls > 1, &run.trace) {
        if r.ambiguous_vector(trace, n_yes)? {
            n_yes += 1;
        }
    }
    let (cf, cl) = run.crash;
    write!(
        r.w,
        "], \"crash\": [\"n:-{}:{cl}\"], \"obsNo\": [",
        p.funcs[cf as usize].num
    )?;
    for (i, &c) in no.iter().enumerate() {
        let (n, l) = r.call_id(c);
        let sep = if i == 0 { "" } else { ", " };
        write!(r.w, "{sep}[\"n:-{n}:{l}\"]")?;
    }
    let mut n_no = no.len();
    if cfg.ambiguous_no > 0 {
        n_no += r.ambiguous_no(n_no)?;
    }
    r.w.write_all(b"], \"stack\": [")?;
    for (i, &(c, f)) in run.stack.iter().enumerate() {
        let (n, l) = r.call_id(c);
        let sep = if i == 0 { "" } else { ", " };
        write!(
            r.w,
            "{sep}{{\"call\": [\"n:-{n}:{l}\"], \"entry\": [\"n:-{}:1\"]}}",
            p.funcs[f as usize].num
        )?;
    }
    r.w.write_all(b"]}")?;
    Ok((n_yes, n_no))
}

/// The first `k` elements of a random permutation of `v` (partial
/// Fisher–Yates).
fn sample(rng: &mut Rng, mut v: Vec<u32>, k: usize) -> Vec<u32> {
    let k = k.min(v.len());
    for i in 0..k {
        let j = i + rng.index(v.len() - i);
        v.swap(i, j);
    }
    v.truncate(k);
    v
}

/// The state of [`write_report`]: the run it reports, and the report's
/// random stream, which its parts draw from in turn.
struct ReportWriter<'a, W> {
    p: &'a Program,
    run: &'a Run,
    cfg: &'a SynthConfig,
    rng: Rng,
    w: &'a mut W,
}

impl<W: Write> ReportWriter<'_, W> {
    /// A call site as (function number, local statement index).
    fn call_id(&self, c: u32) -> (u32, u32) {
        let c = &self.p.calls[c as usize];
        (self.p.funcs[c.func as usize].num, self.p.call_local(c))
    }

    /// A call site other than `c` (for "c or some other call site").
    fn other_call(&mut self, c: u32) -> u32 {
        let ncalls = self.p.calls.len();
        let mut o = self.rng.index(ncalls) as u32;
        if o == c {
            o = (o + 1) % ncalls as u32;
        }
        o
    }

    /// The unreliable `obsYes` entries of the covered call sites `yes`,
    /// the first `cfg.ambiguous` of them ambiguous.
    fn covered(&mut self, yes: &[u32]) -> io::Result<()> {
        let ncalls = self.p.calls.len();
        for (i, &c) in yes.iter().enumerate() {
            let (n, l) = self.call_id(c);
            let sep = if i == 0 { "" } else { ", " };
            if i < self.cfg.ambiguous && ncalls > 1 {
                // "c or some other call site ran" (c did).
                let o = self.other_call(c);
                let (on, ol) = self.call_id(o);
                write!(
                    self.w,
                    "{sep}{{\"reliable\": false, \"entries\": [[\"n:-{n}:{l}\", \"n:-{on}:{ol}\"]]}}"
                )?;
            } else {
                write!(
                    self.w,
                    "{sep}{{\"reliable\": false, \"entries\": [[\"n:-{n}:{l}\"]]}}"
                )?;
            }
        }
        Ok(())
    }

    /// Every call site by its (function, local index).
    fn calls_by_loc(&self) -> HashMap<(u32, u32), u32> {
        let p = self.p;
        (0..p.calls.len() as u32)
            .map(|c| {
                (
                    (p.calls[c as usize].func, p.call_local(&p.calls[c as usize])),
                    c,
                )
            })
            .collect()
    }

    /// The reliable trace: every occurrence in the run's `trace` of some
    /// rarely executed call sites, `cfg.reliable_trace` occurrences in
    /// all (fewer if they do not add up). Returns whether it was written
    /// (after `n_yes` entries).
    fn reliable_trace(&mut self, trace: &[(u32, u32)], n_yes: usize) -> io::Result<bool> {
        let ncalls = self.p.calls.len();
        // Occurrences of every call site in the run.
        let by_loc = self.calls_by_loc();
        let mut count = vec![0usize; ncalls];
        for loc in trace {
            if let Some(&c) = by_loc.get(loc) {
                count[c as usize] += 1;
            }
        }
        // Pick rarely executed sites until they add up to the length.
        let mut order: Vec<u32> = (0..ncalls as u32)
            .filter(|&c| (1..=8).contains(&count[c as usize]))
            .collect();
        order = sample(&mut self.rng, order.clone(), order.len());
        let mut traced = vec![false; ncalls];
        let mut total = 0;
        for c in order {
            if total + count[c as usize] > self.cfg.reliable_trace {
                continue;
            }
            traced[c as usize] = true;
            total += count[c as usize];
            if total == self.cfg.reliable_trace {
                break;
            }
        }
        let entries: Vec<String> = trace
            .iter()
            .filter_map(|loc| by_loc.get(loc).copied().filter(|&c| traced[c as usize]))
            .map(|c| {
                let (n, l) = self.call_id(c);
                format!("[\"n:-{n}:{l}\"]")
            })
            .collect();
        if entries.is_empty() {
            return Ok(false);
        }
        let sep = if n_yes == 0 { "" } else { ", " };
        write!(
            self.w,
            "{sep}{{\"reliable\": true, \"entries\": [{}]}}",
            entries.join(", ")
        )?;
        Ok(true)
    }

    /// An unreliable ordered vector of two-site sets: a sorted sample of
    /// `cfg.ambiguous_vector` call occurrences of the run's `trace`, each
    /// with some other call site. Returns whether it was written (after
    /// `n_yes` entries).
    fn ambiguous_vector(&mut self, trace: &[(u32, u32)], n_yes: usize) -> io::Result<bool> {
        // Call occurrences of the run, in order; a sorted sample of them.
        let by_loc = self.calls_by_loc();
        let occ: Vec<u32> = trace
            .iter()
            .filter_map(|loc| by_loc.get(loc).copied())
            .collect();
        let mut idx = sample(
            &mut self.rng,
            (0..occ.len() as u32).collect(),
            self.cfg.ambiguous_vector,
        );
        idx.sort_unstable();
        let entries: Vec<String> = idx
            .iter()
            .map(|&i| {
                let c = occ[i as usize];
                let o = self.other_call(c);
                let ((n, l), (on, ol)) = (self.call_id(c), self.call_id(o));
                format!("[\"n:-{n}:{l}\", \"n:-{on}:{ol}\"]")
            })
            .collect();
        if entries.is_empty() {
            return Ok(false);
        }
        let sep = if n_yes == 0 { "" } else { ", " };
        write!(
            self.w,
            "{sep}{{\"reliable\": false, \"entries\": [{}]}}",
            entries.join(", ")
        )?;
        Ok(true)
    }

    /// Coverage bits standing for several call sites of one function: at
    /// least one of them (the first, which never ran) did not run.
    /// `cfg.ambiguous_no` such `obsNo` sets (fewer if fewer call sites
    /// never ran), after `n_no` entries; returns how many.
    fn ambiguous_no(&mut self, n_no: usize) -> io::Result<usize> {
        let p = self.p;
        let ncalls = p.calls.len();
        let never: Vec<u32> = (0..ncalls as u32)
            .filter(|&c| !self.run.executed[c as usize])
            .collect();
        let k = self.cfg.ambiguous_no.min(never.len());
        let picked = sample(&mut self.rng, never.clone(), k);
        let mut written = 0;
        for c in picked {
            let f = &p.funcs[p.calls[c as usize].func as usize];
            let mut set = vec![c];
            let others = 1 + self.rng.index(2);
            for _ in 0..others {
                let span = (f.calls.1 - f.calls.0) as usize;
                let o = if span > 1 {
                    f.calls.0 + self.rng.index(span) as u32
                } else {
                    self.rng.index(ncalls) as u32
                };
                if !set.contains(&o) {
                    set.push(o);
                }
            }
            if set.len() < 2 {
                let o = (c + 1) % ncalls as u32;
                if o != c {
                    set.push(o);
                }
            }
            let ids: Vec<String> = set
                .iter()
                .map(|&x| {
                    let (n, l) = self.call_id(x);
                    format!("\"n:-{n}:{l}\"")
                })
                .collect();
            let sep = if n_no + written == 0 { "" } else { ", " };
            write!(self.w, "{sep}[{}]", ids.join(", "))?;
            written += 1;
        }
        Ok(written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quick_xml::events::Event;
    use serde_json::Value;
    use std::collections::{HashMap, HashSet};

    fn gen(cfg: &SynthConfig) -> (Vec<u8>, Vec<u8>, SynthStats) {
        let (mut g, mut r) = (Vec::new(), Vec::new());
        let stats = generate(cfg, &mut g, &mut r).unwrap();
        (g, r, stats)
    }

    #[test]
    fn fsa_report_has_a_true_reliable_trace_and_ambiguous_entries() {
        let cfg = SynthConfig {
            reliable_trace: 12,
            ambiguous: 3,
            ..SynthConfig::small(5)
        };
        let (g, r, _) = gen(&cfg);
        let g = postmortem_formats::read_graphml(&g[..], "synth.graphml").unwrap();
        let rep =
            postmortem_formats::read_report_str(std::str::from_utf8(&r).unwrap(), "synth.json", &g)
                .unwrap();
        let reliable: Vec<_> = rep.obs_yes.iter().filter(|t| t.reliable).collect();
        assert_eq!(reliable.len(), 1);
        assert!(!reliable[0].entries.is_empty() && reliable[0].entries.len() <= 12);
        assert_eq!(
            rep.obs_yes
                .iter()
                .filter(|t| t.entries[0].nodes().len() == 2)
                .count(),
            3
        );
        // The report is true of the run, so the exact solver finds it possible.
        use postmortem_core::Solver;
        let f = postmortem_core::fsa::Fsa::default();
        assert_eq!(
            f.check(&g, &rep, None).unwrap().answer,
            postmortem_core::Answer::Possible
        );
    }

    fn mid() -> SynthConfig {
        SynthConfig::gcc_like().scaled(0.05)
    }

    /// The graph as a test sees it: node kinds, flow successors, call
    /// targets, all by node id.
    #[derive(Default)]
    struct Parsed {
        kind: HashMap<String, String>,
        flow: HashMap<String, Vec<String>>,
        calls: HashMap<String, Vec<String>>,
    }

    fn parse(xml: &[u8]) -> Parsed {
        let mut rd = quick_xml::Reader::from_reader(xml);
        let mut buf = Vec::new();
        let mut p = Parsed::default();
        let mut node: Option<String> = None;
        let mut edge: Option<(String, String, bool)> = None;
        let mut key = String::new();
        let attr = |e: &quick_xml::events::BytesStart, k: &[u8]| -> Option<String> {
            e.attributes()
                .map(|a| a.unwrap())
                .find(|a| a.key.as_ref() == k)
                .map(|a| String::from_utf8(a.value.to_vec()).unwrap())
        };
        loop {
            match rd.read_event_into(&mut buf).expect("well-formed XML") {
                Event::Eof => break,
                Event::Start(e) if e.name().as_ref() == b"node" => {
                    let id = attr(&e, b"id").unwrap();
                    p.kind.insert(id.clone(), "declaration".into());
                    node = Some(id);
                }
                Event::End(e) if e.name().as_ref() == b"node" => node = None,
                Event::Start(e) if e.name().as_ref() == b"edge" => {
                    edge = Some((
                        attr(&e, b"source").unwrap(),
                        attr(&e, b"target").unwrap(),
                        false,
                    ));
                }
                Event::Empty(e) if e.name().as_ref() == b"edge" => {
                    let (s, t) = (attr(&e, b"source").unwrap(), attr(&e, b"target").unwrap());
                    p.flow.entry(s).or_default().push(t);
                }
                Event::End(e) if e.name().as_ref() == b"edge" => {
                    let (s, t, control) = edge.take().unwrap();
                    assert!(control, "an edge with data must be a call edge");
                    p.calls.entry(s).or_default().push(t);
                }
                Event::Start(e) if e.name().as_ref() == b"data" => key = attr(&e, b"key").unwrap(),
                Event::Text(t) => {
                    let t = t.unescape().unwrap().to_string();
                    if key == "kind" {
                        if let Some(n) = &node {
                            p.kind.insert(n.clone(), t);
                        }
                    } else if key == "type" {
                        if let Some(e) = &mut edge {
                            assert_eq!(t, "control");
                            e.2 = true;
                        }
                    }
                }
                Event::End(e) if e.name().as_ref() == b"data" => key.clear(),
                _ => {}
            }
            buf.clear();
        }
        p
    }

    fn ids(v: &Value) -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    }

    fn func_of(id: &str) -> &str {
        id.rsplit_once(':').unwrap().0
    }

    /// Checks the report against the graph; returns the obsYes and obsNo ids.
    fn check_report(p: &Parsed, report: &[u8], depth: usize) -> (Vec<String>, Vec<String>) {
        let v: Value = serde_json::from_slice(report).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 4);
        let stack = v["stack"].as_array().unwrap();
        assert_eq!(stack.len(), depth);
        let mut caller = "n:-0".to_string();
        for (i, fr) in stack.iter().enumerate() {
            let call = ids(&fr["call"]);
            let entry = ids(&fr["entry"]);
            assert_eq!((call.len(), entry.len()), (1, 1));
            assert_eq!(p.kind[&call[0]], "call-site");
            assert_eq!(p.kind[&entry[0]], "entry");
            assert!(
                p.calls[&call[0]].contains(&entry[0]),
                "frame {i}: callee mismatch"
            );
            if i > 0 {
                assert_eq!(
                    func_of(&call[0]),
                    caller,
                    "frame {i} not called from the frame above"
                );
            }
            caller = func_of(&entry[0]).to_string();
        }
        let crash = ids(&v["crash"]);
        assert_eq!(crash.len(), 1);
        assert_eq!(p.kind[&crash[0]], "expression");
        if depth > 0 {
            assert_eq!(func_of(&crash[0]), caller);
        }
        let yes: Vec<String> = v["obsYes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                assert_eq!(o["reliable"], Value::Bool(false));
                let e = o["entries"].as_array().unwrap();
                assert_eq!(e.len(), 1);
                let s = ids(&e[0]);
                assert_eq!(s.len(), 1);
                s[0].clone()
            })
            .collect();
        let no: Vec<String> = v["obsNo"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let s = ids(s);
                assert_eq!(s.len(), 1);
                s[0].clone()
            })
            .collect();
        let ys: HashSet<&String> = yes.iter().collect();
        let ns: HashSet<&String> = no.iter().collect();
        assert_eq!(ys.len(), yes.len(), "duplicate obsYes");
        assert_eq!(ns.len(), no.len(), "duplicate obsNo");
        assert!(ys.is_disjoint(&ns), "obsYes and obsNo overlap");
        for n in yes.iter().chain(&no) {
            assert_eq!(p.kind[n], "call-site");
        }
        for fr in stack {
            // A pending call executed.
            assert!(!ns.contains(&ids(&fr["call"])[0]));
        }
        (yes, no)
    }

    /// Replays the recorded run on the emitted graph: every step follows a
    /// flow edge, a call edge, or a return to the pending call's return
    /// site; at the end the pending calls are the report's stack.
    fn replay(cfg: &SynthConfig) {
        let prog = build_program(cfg);
        let run = simulate(&prog, cfg, true);
        let (mut xml, mut rep) = (Vec::new(), Vec::new());
        write_graphml(&prog, &mut xml).unwrap();
        write_report(&prog, &run, cfg, &mut rep).unwrap();
        let p = parse(&xml);
        let (yes, no) = check_report(&p, &rep, prog.depth);
        let id = |(f, l): (u32, u32)| format!("n:-{}:{}", prog.funcs[f as usize].num, l);
        let trace: Vec<String> = run.trace.as_ref().unwrap().iter().map(|&x| id(x)).collect();
        assert_eq!(trace.len() as u64, run.steps);
        let main = id((0, 1));
        assert_eq!(trace[0], main);
        let empty = Vec::new();
        let mut stack: Vec<&String> = Vec::new();
        for w in trace.windows(2) {
            let (a, b) = (&w[0], &w[1]);
            let kind = p.kind[a].as_str();
            let flow = p.flow.get(a).unwrap_or(&empty);
            match kind {
                "call-site" => {
                    let callees = &p.calls[a];
                    if callees.contains(b) {
                        stack.push(a);
                    } else {
                        assert!(flow.contains(b), "{a} -> {b}");
                        assert!(
                            callees.iter().any(|c| p.kind[c] == "declaration"),
                            "{a} flowed on without a call"
                        );
                    }
                }
                "exit" => {
                    let site = stack.pop().expect("return without a call");
                    assert!(
                        p.flow[site].contains(b),
                        "return from {a} to {b}, not after {site}"
                    );
                }
                _ => assert!(flow.contains(b), "{a} -> {b} is not a flow edge"),
            }
        }
        assert_eq!(trace.last().unwrap(), &id(run.crash));
        let v: Value = serde_json::from_slice(&rep).unwrap();
        let rstack: Vec<String> = v["stack"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| ids(&f["call"])[0].clone())
            .collect();
        let pending: Vec<String> = stack.iter().map(|s| s.to_string()).collect();
        assert_eq!(rstack, pending);
        let seen: HashSet<&String> = trace.iter().collect();
        for y in &yes {
            assert!(seen.contains(y), "obsYes {y} never executed");
        }
        for n in &no {
            assert!(!seen.contains(n), "obsNo {n} executed");
        }
    }

    #[test]
    fn small_is_well_formed() {
        for seed in 0..20 {
            let cfg = SynthConfig::small(seed);
            let (g, r, stats) = gen(&cfg);
            let p = parse(&g);
            assert_eq!(p.kind.len(), stats.nodes);
            assert!((100..=1000).contains(&stats.nodes), "{stats:?}");
            assert_eq!(stats.functions, cfg.functions);
            assert_eq!(stats.stack_depth, cfg.crash_depth);
            check_report(&p, &r, cfg.crash_depth);
            let text = std::str::from_utf8(&r).unwrap();
            let order: Vec<usize> = ["\"obsYes\"", "\"crash\"", "\"obsNo\"", "\"stack\""]
                .iter()
                .map(|k| text.find(k).unwrap())
                .collect();
            assert!(order.windows(2).all(|w| w[0] < w[1]), "key order");
            // Every function kind is present.
            let kinds: HashSet<&str> = p.kind.values().map(|s| s.as_str()).collect();
            for k in ["entry", "exit", "expression", "call-site", "declaration"] {
                assert!(kinds.contains(k), "seed {seed}: no {k} node");
            }
        }
    }

    #[test]
    fn deterministic() {
        let cfg = SynthConfig::small(7);
        let (g1, r1, s1) = gen(&cfg);
        let (g2, r2, s2) = gen(&cfg);
        assert!(g1 == g2 && r1 == r2 && s1 == s2);
        let (g3, r3, _) = gen(&SynthConfig::small(8));
        assert!(g1 != g3 && r1 != r3);
        let m = mid();
        let (a, b, _) = gen(&m);
        let (c, d, _) = gen(&m);
        assert!(a == c && b == d);
    }

    #[test]
    fn runs_replay_on_the_graph() {
        for seed in 0..30 {
            replay(&SynthConfig::small(seed));
        }
        let mut m = mid();
        for seed in 0..3 {
            m.seed = seed;
            replay(&m);
        }
    }

    #[test]
    fn odd_configs_still_crash_at_the_right_depth() {
        let base = SynthConfig::small(1);
        let odd = [
            SynthConfig {
                functions: 2,
                blocks: 5,
                statements: 10,
                crash_depth: 1,
                ..base.clone()
            },
            SynthConfig {
                crash_depth: 0,
                coverage: 0,
                obs_no: 0,
                ..base.clone()
            },
            SynthConfig {
                library_functions: 0,
                declarations: 0,
                ..base.clone()
            },
            SynthConfig {
                statements: 40,
                call_permille: 0,
                ..base.clone()
            },
            SynthConfig {
                recursion_permille: 1000,
                indirect_permille: 1000,
                ..base.clone()
            },
            SynthConfig {
                max_steps: 0,
                explore_depth: 0,
                ..base.clone()
            },
        ];
        for cfg in &odd {
            for seed in 0..5 {
                replay(&SynthConfig {
                    seed,
                    ..cfg.clone()
                });
            }
        }
        // A depth the call graph cannot reach is capped.
        let cfg = SynthConfig {
            functions: 5,
            crash_depth: 30,
            ..base
        };
        let (_, _, s) = gen(&cfg);
        assert_eq!(s.stack_depth, 4);
    }

    #[test]
    fn mid_size_stats() {
        let cfg = mid();
        let (g, r, s) = gen(&cfg);
        let near =
            |x: usize, want: usize, tol: f64| (x as f64 - want as f64).abs() <= tol * want as f64;
        assert_eq!(s.functions, cfg.functions);
        assert!(near(s.blocks, cfg.blocks, 0.02), "{s:?}");
        assert!(near(s.nodes, cfg.statements, 0.10), "{s:?}");
        assert!(near(s.call_sites, cfg.statements * 6 / 100, 0.4), "{s:?}");
        assert_eq!(s.stack_depth, cfg.crash_depth);
        assert_eq!(s.obs_yes, cfg.coverage, "{s:?}");
        assert!(s.obs_no > cfg.obs_no / 2 && s.obs_no <= cfg.obs_no, "{s:?}");
        assert!(s.executed_steps > 0);
        let p = parse(&g);
        assert_eq!(p.kind.len(), s.nodes);
        let (yes, no) = check_report(&p, &r, cfg.crash_depth);
        assert_eq!((yes.len(), no.len()), (s.obs_yes, s.obs_no));
        // Popular callees: some entry is called from many sites, and the
        // call graph has recursion.
        let mut callers: HashMap<&String, usize> = HashMap::new();
        let mut self_calls = 0;
        for (site, ts) in &p.calls {
            for t in ts {
                *callers.entry(t).or_default() += 1;
                if func_of(site) == func_of(t) {
                    self_calls += 1;
                }
            }
        }
        assert!(callers.values().max().unwrap() > &50, "no popular function");
        assert!(self_calls > 0, "no direct recursion");
    }

    #[test]
    fn reads_back_with_the_crate_readers() {
        for seed in 0..5 {
            let cfg = SynthConfig::small(seed);
            let (g, r, s) = gen(&cfg);
            let icfg = postmortem_formats::read_graphml(&g[..], "synth.graphml").unwrap();
            // Declarations are left out of the model.
            assert_eq!(icfg.num_nodes(), s.nodes - cfg.declarations);
            assert_eq!(icfg.num_call_sites(), s.call_sites);
            let main = format!("n:-{}:1", build_program(&cfg).funcs[0].num);
            assert_eq!(icfg.ext_id(icfg.start()), main);
            let report = postmortem_formats::read_report_str(
                std::str::from_utf8(&r).unwrap(),
                "synth.json",
                &icfg,
            )
            .unwrap();
            assert_eq!(report.stack.len(), cfg.crash_depth);
            assert_eq!(report.obs_yes.len(), s.obs_yes);
            assert_eq!(report.obs_no.len(), s.obs_no);
        }
    }
}
