//! LLVM IR front-end: reads a C/C++ program compiled by clang-14
//! (`clang-14 -g -O0 -emit-llvm`, textual `.ll` or bitcode `.bc`) into
//! postmortem's interprocedural control-flow graph ([`Icfg`](postmortem_core::Icfg)).
//!
//! ```no_run
//! let loaded = postmortem_llvm::load_path(std::path::Path::new("prog.bc"))?;
//! eprintln!("postmortem: note: {}", loaded.report.summary());
//! let graph = loaded.icfg;
//! # Ok::<(), postmortem_llvm::LlvmError>(())
//! ```
//!
//! # Design
//!
//! The module is parsed by LLVM 14 itself, through the `llvm-ir` crate
//! (which links `libLLVM-14.so` via `llvm-sys`), so `.ll` and `.bc` give the
//! same in-memory module and therefore the same graph. One pass over the
//! module then builds the graph with [`IcfgBuilder`](postmortem_core::IcfgBuilder). *Front-ends report,
//! they do not fail*: whatever the lowering has to approximate is counted
//! in a [`FrontendReport`] that travels with the graph; only an unreadable
//! file or a module without a start function is an error ([`LlvmError`]).
//!
//! # Mapping from LLVM IR to the ICFG
//!
//! * **Functions.** Every defined function gets an `Entry` node (its lines:
//!   the `DISubprogram` line) and an `Exit` node (its lines: those of its
//!   `ret` instructions). The function's file is its `DISubprogram`'s
//!   `DIFile`, directory + `/` + filename as clang wrote them (the
//!   filename alone when absolute). The entry flows to the first node of
//!   the entry block; every `ret` (and `resume`, and unwinding to the
//!   caller) flows to the exit. The program starts at `main`'s entry.
//! * **Call sites.** Every call instruction (`call`, `invoke`, `callbr`) to
//!   a function is its own node of kind `CallSite`, followed by its return
//!   site: the next node of its block (for `invoke`, the first nodes of
//!   both its normal and its unwind destination). A call to a function
//!   defined in the module gets a call edge to its entry; the builder then
//!   routes control through the callee and back to the return sites.
//! * **Statements.** The other instructions of a block are grouped by
//!   source line: consecutive instructions of one block on the same
//!   `!DILocation` line form one `Statement` node (never coarser than one
//!   node per line per block). Instructions without a location (or at line
//!   0, or located in another file than their function, e.g. an
//!   `#include` inside a body) join the neighbouring group. A node's lines
//!   are its line, its column ([`IcfgBuilder::set_column`](postmortem_core::IcfgBuilder::set_column)) that of its
//!   first located instruction. The label lists the opcodes (`load icmp
//!   br`), or `call NAME` / `invoke NAME` / `call (indirect)` for sites.
//! * **Intrinsics** (`llvm.*`) are not call sites: `llvm.dbg.*` calls are
//!   dropped, the others (`llvm.memcpy`, `llvm.lifetime.*`, ...) are
//!   ordinary instructions. Inline assembly is an ordinary instruction too.
//! * **Declarations** (functions without a body) are outside the program:
//!   a call to one flows straight on ([`IcfgBuilder::add_external_callee`](postmortem_core::IcfgBuilder::add_external_callee))
//!   and records the callee's name
//!   ([`IcfgBuilder::add_external_callee_name`](postmortem_core::IcfgBuilder::add_external_callee_name)).
//! * **Callbacks.** A call to a declaration that receives a function
//!   pointer (`qsort`, `signal`, `pthread_create`, `atexit`, ...) may call
//!   it: the site also gets call edges to the function passed (or, for a
//!   pointer variable, to every compatible address-taken function) and
//!   keeps its fall-through. Counted in [`FrontendReport::callback_sites`].
//! * **Indirect calls** go to every *address-taken* function (referenced
//!   anywhere other than as the callee of a direct call, including global
//!   initializers) with a compatible type: the same number of parameters
//!   (at least the fixed ones for a variadic callee), pairwise compatible
//!   parameter types and a compatible return type, where every pointer is
//!   compatible with every pointer, integers by width, floats by kind, and
//!   `void` returns with anything (sound for C, which casts function
//!   pointers freely). An address-taken *declaration* that fits makes the
//!   site fall through as well (e.g. a pointer to `free`). A call with no
//!   candidate at all is treated as a call outside the program. Counted in
//!   [`FrontendReport::indirect_calls`], `indirect_resolved`,
//!   `indirect_unresolved` and `indirect_edges`.
//! * **String arguments.** Every call site (in-program or external)
//!   records its constant C-string arguments with
//!   [`IcfgBuilder::add_string_arg`](postmortem_core::IcfgBuilder::add_string_arg): a pointer (directly or through a
//!   `getelementptr 0, k`) into a constant global `[N x i8] c"..."`, up to
//!   the first NUL. This is how log lines are matched to `printf`,
//!   `fprintf`, `syslog`, ... calls.
//! * **Paths that end.** A call that never returns ends the path: no edge
//!   from the site to its next node (for an `invoke`, only the unwind
//!   edge stays). A call never returns when the call site or the callee
//!   carries `noreturn` (for declarations read from the module, see
//!   `decls.rs`), or when it calls a declaration named in
//!   [`NORETURN_NAMES`] (`abort`, `exit`, `__assert_fail`, `longjmp`,
//!   `__cxa_throw`, ...). `unreachable` has no successor. What such a call
//!   may still do before the path ends is modelled by the next rules.
//!
//! # Control flow that no call instruction shows
//!
//! Real programs move control in ways a plain reading of the IR misses;
//! each is modelled soundly (the graph has a path for every way control
//! can really flow) and counted in [`FrontendReport`]:
//!
//! * **`setjmp` / `longjmp`.** A call of a `returns_twice` function (call
//!   site or declaration attribute, or a name in the `setjmp` family) may
//!   return a second time. Every `longjmp`-like call (`longjmp`,
//!   `siglongjmp`, `_longjmp`, `__longjmp_chk`, `setcontext`, ...) gets a
//!   flow edge to the resume point (the next node) of *every* such call
//!   site: without tracking jump buffers any of them may be the target.
//!   These edges cross functions (a `Local` edge whose ends are in
//!   different functions is a non-local jump).
//! * **External code.** A call to a declaration that is not a known inert
//!   C library function (see `libc.rs`: string, memory, stdio, math,
//!   allocation, time, file and thread-synchronisation functions) runs
//!   unknown code, which may call back any function whose address escaped
//!   (every address-taken function: kept in a table, passed in a
//!   structure) and may `longjmp`. One synthetic function
//!   `<external code>` (nodes `<external>:entry`, `<external>:dispatch`,
//!   `<external>:calls:NAME`, `<external>:exit`) does that: its dispatch
//!   node may call every address-taken function any number of times and
//!   jump to every `setjmp` resume point. Such a call site calls it and
//!   keeps its fall-through; so does an unresolved indirect call. `exit`
//!   and `abort` are unknown code too (exit handlers, a `SIGABRT`
//!   handler). Functions that only call the callback passed to them
//!   (`qsort`, `bsearch`, `pthread_once`, ...) keep the direct callback
//!   edges above instead.
//! * **Exit handlers.** A program that registers them (`atexit`,
//!   `on_exit`, `__cxa_atexit`, ...) starts at a synthetic `<program>`
//!   function that calls `main` and then `<external code>`, so a crash in
//!   a handler after `main` returned has a path.
//! * **Signal handlers and threads.** Functions passed to `signal`,
//!   `sigaction` (through its structure: every address-taken function of
//!   a handler's type), `pthread_create`, `thrd_create`, ... may run
//!   asynchronously: they are recorded as the graph's
//!   [asynchronous functions](postmortem_core::Icfg::async_functions),
//!   and `postmortem_core::concurrency` keeps labels sound for the whole
//!   process (a label means "ran in some thread before the crash").
//! * **C++ exceptions.** In a module with exception handling (some
//!   function has a personality), a plain `call` that may throw (neither
//!   the site nor the callee is `nounwind`), `__cxa_throw` included, also
//!   flows to its function's exit: the exception leaves the frame, up to
//!   the nearest `invoke` of a caller, whose unwind edge is kept.
//!
//! # Node ids
//!
//! Ids are stable (they depend only on the source positions and the order
//! of code within each function, not on IR value numbers) and readable:
//!
//! * `FUNC:entry` and `FUNC:exit` for a function's entry and exit;
//! * `FUNC:LINE:COL` for the first node of `FUNC` at source line `LINE`,
//!   column `COL` (of its first located instruction), and
//!   `FUNC:LINE:COL#2`, `#3`, ... for further nodes at the same position,
//!   numbered in block order (several calls on one line and column, the
//!   blocks of a loop header, ...);
//! * `FUNC:0:0`, `FUNC:0:0#2`, ... for nodes without a source location.
//!
//! For example `main:12:3` is the first node of `main` at line 12, column
//! 3, and `main:12:3#2` the next one there.
//!
//! # Multi-file programs
//!
//! The front-end reads one module. Compile every translation unit to
//! bitcode and link them first with `llvm-link-14`:
//!
//! ```text
//! clang-14 -g -O0 -emit-llvm -c a.c -o a.bc
//! clang-14 -g -O0 -emit-llvm -c b.c -o b.bc
//! llvm-link-14 a.bc b.bc -o prog.bc
//! postmortem cfg build prog.bc -o prog.pmcfg
//! ```
//!
//! Each function keeps its own source file from its debug info.
//!
//! # Limitations (all sound or counted)
//!
//! * Function pointers that come from outside the program (`dlsym`) are
//!   called through unresolved indirect calls, hence `<external code>`,
//!   which calls only the program's address-taken functions.
//! * Line attribution follows the debug locations clang emits at `-O0`:
//!   instructions of an always-inlined function keep the callee's line
//!   when it is in the same file; macro expansions are located at the
//!   expansion site. Two kinds of instruction carry a *borrowed* location
//!   and give their node only a *weak* line
//!   ([`postmortem_core::IcfgBuilder::add_weak_line`]): an unconditional
//!   branch alone in its block (clang gives a `case` label that falls
//!   through, or an empty latch, the location of the statement it emitted
//!   last, often another case's `break;`), and SanitizerCoverage's flag
//!   check (located at the covered block's first instruction, which for
//!   such a block is that same borrowed one). A weak line never makes its
//!   line Yes (else the `break;` line would be Yes whenever a later case
//!   ran), but keeps it from being No while the branch may have run: the
//!   branch is a real instruction of that line, and sometimes its only
//!   one that ran (`for(;;)` entered and left in its first iteration:
//!   the entry branch, alone after an `if`, has the loop's line).
//! * `llvm-ir` does not expose the indirect destinations of `callbr` (asm
//!   goto): the site flows to every block of its function instead
//!   ([`FrontendReport::callbr`]).
#![deny(missing_docs)]

mod branch_tests;
mod dbgvars;
mod decls;
mod flows;
mod libc;
mod lower;
mod operands;
pub mod sancov;
mod values;

pub use dbgvars::{Declared, DeclaredVars, InlinedAt};
pub use decls::DeclAttributes;
// The front-end's results are plain data, defined without LLVM so that the
// `postmortem` binary reads them without linking it.
pub use postmortem_formats::frontend::{is_bitcode, FrontendReport, IrFormat, Loaded};

use postmortem_core::icfg::BuildError;
use std::path::Path;

/// Declarations whose calls never return even without a `noreturn`
/// attribute: the C library's and the C++ runtime's functions that end
/// the process or the thread, or leave the frame non-locally.
pub const NORETURN_NAMES: &[&str] = &[
    "abort",
    "exit",
    "_exit",
    "_Exit",
    "quick_exit",
    "__assert_fail",
    "__assert_perror_fail",
    "__assert_rtn",
    "__assert",
    "__stack_chk_fail",
    "__chk_fail",
    "__fortify_fail",
    "longjmp",
    "_longjmp",
    "siglongjmp",
    "__longjmp_chk",
    "pthread_exit",
    "thrd_exit",
    "err",
    "errx",
    "verr",
    "verrx",
    "__cxa_throw",
    "__cxa_rethrow",
    "__cxa_bad_cast",
    "__cxa_bad_typeid",
    "__cxa_throw_bad_array_new_length",
    "__cxa_pure_virtual",
    "__cxa_deleted_virtual",
    "__cxa_call_unexpected",
    "_Unwind_Resume",
    "_ZSt9terminatev",
];

/// The error type of this crate: the input could not be read or gives no
/// graph. Each renders as one line naming the file.
#[derive(Debug, thiserror::Error)]
pub enum LlvmError {
    /// The file cannot be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not one to read: a device, a pipe, or larger than the
    /// limit (see [`load_path_limited`]). The message names the file.
    #[error("{0}")]
    Input(String),
    /// LLVM 14 cannot parse the file as textual IR or bitcode.
    #[error("{path}: not LLVM 14 IR or bitcode: {message}")]
    Parse {
        /// The file.
        path: String,
        /// LLVM's message.
        message: String,
    },
    /// The module gives no graph (no function body, or no `main` and not
    /// exactly one function).
    #[error("{path}: {source}")]
    Graph {
        /// The file.
        path: String,
        /// What the graph builder reported.
        source: BuildError,
    },
}

/// Reads a `.ll` or `.bc` file (told apart by content, see
/// [`IrFormat::sniff`]; anything that is not bitcode is read as text).
pub fn load_path(path: &Path) -> Result<Loaded, LlvmError> {
    load_path_limited(path, u64::MAX)
}

/// [`load_path`], refusing anything but a regular file (LLVM reads the
/// file again by its path) and a file of more than `limit` bytes.
pub fn load_path_limited(path: &Path, limit: u64) -> Result<Loaded, LlvmError> {
    use postmortem_formats::input::{read_bounded, require_regular, Limit};
    let shown = path.display().to_string();
    require_regular(path, "LLVM IR").map_err(|e| LlvmError::Input(e.to_string()))?;
    let bytes = read_bounded(path, &Limit::new(limit, "graph", "--max-memory"))
        .map_err(|e| LlvmError::Input(e.to_string()))?;
    if is_bitcode(&bytes) {
        let mut decls = decls::from_bitcode(&bytes).unwrap_or_default();
        (decls.declared, decls.inlined_at) = dbgvars::read_all(&bytes, true);
        let module = parse(&shown, || {
            let p = path
                .to_str()
                .ok_or_else(|| "the path is not valid UTF-8".to_string())?;
            llvm_ir::Module::from_bc_path(p)
        })?;
        lower_module(&module, &decls, &shown)
    } else {
        let text = String::from_utf8(bytes).map_err(|_| LlvmError::Parse {
            path: shown.clone(),
            message: "neither bitcode nor UTF-8 text".into(),
        })?;
        load_text(&text, &shown)
    }
}

/// Reads textual IR from memory; `name` names it in errors.
pub fn load_ir_str(text: &str, name: &str) -> Result<Loaded, LlvmError> {
    load_text(text, name)
}

fn load_text(text: &str, name: &str) -> Result<Loaded, LlvmError> {
    let mut decls = decls::from_text(text);
    (decls.declared, decls.inlined_at) = dbgvars::read_all(text.as_bytes(), false);
    let module = parse(name, || llvm_ir::Module::from_ir_str(text))?;
    lower_module(&module, &decls, name)
}

/// Runs an `llvm-ir` parse, turning its errors and its panics (it panics
/// on constructs it does not support) into [`LlvmError::Parse`].
fn parse(
    path: &str,
    f: impl FnOnce() -> Result<llvm_ir::Module, String> + std::panic::UnwindSafe,
) -> Result<llvm_ir::Module, LlvmError> {
    match std::panic::catch_unwind(f) {
        Ok(Ok(m)) => Ok(m),
        Ok(Err(message)) => Err(LlvmError::Parse {
            path: path.to_string(),
            message: message.trim().replace('\n', " "),
        }),
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unsupported construct".into());
            Err(LlvmError::Parse {
                path: path.to_string(),
                message: format!("llvm-ir cannot convert it: {message}"),
            })
        }
    }
}

/// Lowers an already parsed module. `declarations` names the declarations
/// that carry the `noreturn` or `returns_twice` attribute (which `llvm-ir`
/// does not keep for declarations); `name` names the module in errors.
pub fn lower_module(
    module: &llvm_ir::Module,
    declarations: &DeclAttributes,
    name: &str,
) -> Result<Loaded, LlvmError> {
    let (icfg, report, extras) = lower::lower(module, declarations, name)?;
    let sancov = sancov::scan(
        module,
        &declarations.sancov_comdats,
        &extras.block_nodes,
        &icfg,
    );
    let lowered = values::Lowered {
        store_nodes: &extras.store_nodes,
        call_nodes: &extras.call_nodes,
        load_nodes: &extras.load_nodes,
        entries: &extras.entries,
        block_nodes: &extras.block_nodes,
        icfg: &icfg,
    };
    let mut vars = values::scan(module, &declarations.declared, &lowered);
    flows::add(module, &declarations.declared, &lowered, &mut vars);
    Ok(Loaded {
        icfg,
        report,
        sancov,
        vars: Some(vars),
    })
}
