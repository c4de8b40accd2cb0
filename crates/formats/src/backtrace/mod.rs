//! Crash backtraces: gdb, lldb, sanitizer reports and Rust panics.
//!
//! [`parse_backtrace`] detects the format from the text and returns the
//! frames of the crashing thread, innermost first, as [`RawFrame`]s:
//! function (demangled), file, line, column, module, address.
//!
//! | format | what a frame looks like |
//! | --- | --- |
//! | gdb `bt` | `#0  0x000055555555513d in foo (x=1) at src/a.c:12`, `#1  main () at a.c:30`, `#2  0x00007ffff7829d90 in __libc_start_call_main () from /lib/x86_64-linux-gnu/libc.so.6` |
//! | lldb `bt` | `* frame #0: 0x0000555555555131 prog`foo(p=0x0) at a.c:12:5`, `frame #3: 0x00007ffff7c29e40 libc.so.6`__libc_start_main + 128` |
//! | AddressSanitizer, UBSan, TSan, MSan | `#0 0x4f2b3c in foo /path/a.c:12:5`, `#2 0x7f1e2c5c0b96 in __libc_start_main (/lib/x86_64-linux-gnu/libc.so.6+0x21b96)`, `#3 0x41b2e9 (/path/bin+0x41b2e9)` |
//! | Rust panic (`RUST_BACKTRACE=1` or `full`) | `   6: myapp::compute` then `             at ./src/main.rs:10:5` |
//!
//! Detection, in order: lldb (`frame #N:` lines), sanitizers (`ERROR: ...Sanitizer`,
//! `runtime error:`), Rust (`panicked at`, `stack backtrace:`), then gdb or
//! a bare sanitizer stack by the shape of the `#N` lines. Text around the
//! frames (prompts, messages, register dumps) is ignored.
//!
//! Which stack:
//!
//! * **gdb** `thread apply all bt`: the thread named by `Thread N "..."
//!   received signal` or `[Current thread is N ...]`; several threads and
//!   no such line is an error (a guess could be wrong).
//! * **lldb** `bt all`: the selected thread (`* thread #N`).
//! * **sanitizers**: the first stack (the faulting access; later stacks
//!   say where memory was allocated or freed). A UBSan report without a
//!   stack gives one frame from its `FILE:LINE:COL: runtime error:` line.
//!   UBSan and TSan go on after a report unless told to halt
//!   (`-fno-sanitize-recover`, `halt_on_error=1`): the report is taken as
//!   the failure. LeakSanitizer reports are refused: their stacks say
//!   where memory was allocated, not where the program was.
//! * **Rust**: the panicking thread's backtrace; without one
//!   (`RUST_BACKTRACE` unset), one frame at the panic location.
//!
//! Names starting with `_Z`, `__Z` (C++, legacy Rust) or `_R` (Rust v0)
//! are demangled ([`demangle`]); the raw symbol is kept too. Frames of
//! runtime code (sanitizer runtime, libc start-up and abort, C++ and Rust
//! unwinding and panic machinery, signal trampolines, see
//! [`is_runtime_function`]) are kept but flagged [`RawFrame::runtime`]:
//! they are outside the program and never produce a warning. Frames that
//! ran inside a signal handler (inner of gdb's `<signal handler called>`,
//! lldb's `_sigtramp`) are dropped with a note: the control-flow graph
//! cannot model signal delivery, so the stack is taken from where the
//! signal arrived (the handler's own code is then labelled as if the
//! handler had not run after the fault: the note says so).

use crate::error::FormatError;
use postmortem_core::locate::{Locator, PathMap, SourceFrame, SourceLoc};
use postmortem_core::{FuncId, Icfg};
use std::path::Path;

mod gdb;
mod lldb;
mod rust;
mod sanitizer;

use gdb::*;
use lldb::*;
use rust::*;
use sanitizer::*;

/// The format a backtrace was written in.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BacktraceFormat {
    /// gdb's `bt` (or `thread apply all bt`).
    Gdb,
    /// lldb's `bt` (or `bt all`).
    Lldb,
    /// An AddressSanitizer, UndefinedBehaviorSanitizer, ThreadSanitizer
    /// or MemorySanitizer report.
    Sanitizer,
    /// A Rust panic message with its backtrace.
    RustPanic,
}

impl BacktraceFormat {
    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            BacktraceFormat::Gdb => "gdb",
            BacktraceFormat::Lldb => "lldb",
            BacktraceFormat::Sanitizer => "sanitizer",
            BacktraceFormat::RustPanic => "rust-panic",
        }
    }
}

/// One frame as the backtrace printed it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawFrame {
    /// The frame number as printed (`#3`, `frame #3`, `3:`).
    pub index: Option<u32>,
    /// The function, demangled, without the argument values a debugger
    /// prints (C++ parameter types stay).
    pub function: Option<String>,
    /// The raw symbol, when the printed name was mangled.
    pub symbol: Option<String>,
    /// The source file.
    pub file: Option<String>,
    /// The 1-based source line.
    pub line: Option<u32>,
    /// The 1-based source column.
    pub column: Option<u32>,
    /// The binary or library (`prog`, `/lib/x86_64-linux-gnu/libc.so.6`).
    pub module: Option<String>,
    /// The program counter.
    pub address: Option<u64>,
    /// Runtime code (see [`is_runtime_function`]): outside the program.
    pub runtime: bool,
    /// From a core: the call instruction before this frame's return
    /// address is a direct call of the function of the frame above (no
    /// sibling call hid a frame between them; see
    /// [`SourceFrame::direct_call`]).
    pub direct_call: bool,
    /// After [`merge_inlined`]: the frames merged into this one, innermost
    /// first, each with its own location (this frame's location is the
    /// first one's).
    pub inlined: Vec<RawFrame>,
    /// After [`merge_inlined`]: where each of `inlined` was called,
    /// innermost first: the next inlined frame's location, and last this
    /// physical frame's own (see [`SourceFrame::sites`]).
    pub sites: Vec<SourceLoc>,
}

impl RawFrame {
    /// How messages name the frame: ``frame #2 `foo` (a.c:12:5)``.
    pub fn label(&self) -> String {
        let prefix = match self.index {
            Some(i) => format!("frame #{i}"),
            None => "frame".to_string(),
        };
        let mut s = SourceFrame::describe(
            &prefix,
            Some(self.function.as_deref().unwrap_or("??")),
            self.file.as_deref(),
            self.line,
            self.column,
        );
        if self.file.is_none() {
            if let Some(m) = &self.module {
                s.push_str(&format!(" in {m}"));
            }
        }
        s
    }

    /// The frame as [`postmortem_core::locate`] takes it.
    pub fn to_source_frame(&self) -> SourceFrame {
        SourceFrame {
            function: self.function.clone(),
            symbol: self.symbol.clone(),
            file: self.file.clone(),
            line: self.line,
            column: self.column,
            runtime: self.runtime,
            library: self.module.as_deref().is_some_and(is_shared_library),
            label: self.label(),
            sites: self.sites.clone(),
            inlined: self.inlined.iter().map(RawFrame::to_source_frame).collect(),
            direct_call: self.direct_call,
        }
    }
}

/// A parsed backtrace: the crashing thread's frames, innermost first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backtrace {
    /// The detected format.
    pub format: BacktraceFormat,
    /// Every frame of the crashing stack, innermost first, runtime frames
    /// included (flagged).
    pub frames: Vec<RawFrame>,
    /// What the parser left out and why (other threads, other stacks,
    /// frames inside a signal handler), one line each.
    pub notes: Vec<String>,
}

impl Backtrace {
    /// The frames that are not runtime code, innermost first.
    pub fn program_frames(&self) -> impl Iterator<Item = &RawFrame> + '_ {
        self.frames.iter().filter(|f| !f.runtime)
    }

    /// All frames as [`postmortem_core::locate::Locator::locate_stack`]
    /// takes them.
    pub fn source_frames(&self) -> Vec<SourceFrame> {
        self.frames.iter().map(RawFrame::to_source_frame).collect()
    }
}

/// A [`Locator`] for `g` that also knows the demangled names of the
/// graph's mangled functions (see [`graph_aliases`]) and of the mangled
/// library callees named in call notes.
pub fn locator(g: &Icfg, paths: PathMap) -> Locator<'_> {
    let mut loc = Locator::new(g, paths);
    for (f, name) in graph_aliases(g) {
        loc.add_alias(f, &name);
    }
    let callees: Vec<(String, String)> = loc
        .external_callee_names()
        .filter_map(|n| demangle(n).map(|d| (n.to_string(), d)))
        .collect();
    for (name, d) in callees {
        loc.add_callee_alias(&name, &d);
    }
    loc
}

/// The demangled names of the graph's functions whose names are mangled
/// (C++ or Rust symbols), so that frames printed demangled find them.
pub fn graph_aliases(g: &Icfg) -> Vec<(FuncId, String)> {
    g.functions()
        .iter()
        .enumerate()
        .filter_map(|(i, f)| demangle(&f.name).map(|d| (FuncId::new(i), d)))
        .collect()
}

/// Demangles a C++ (Itanium) or Rust (legacy or v0) symbol; `None` if
/// `name` is not a mangled symbol. Rust names come without their hash.
pub fn demangle(name: &str) -> Option<String> {
    if !(name.starts_with("_Z") || name.starts_with("__Z") || name.starts_with("_R"))
        || name.len() > 4096
    {
        return None;
    }
    if let Ok(d) = rustc_demangle::try_demangle(name) {
        let s = format!("{d:#}");
        if !s.is_empty() && s != name {
            return Some(s);
        }
    }
    let raw = name
        .strip_prefix('_')
        .filter(|r| r.starts_with("_Z"))
        .unwrap_or(name);
    let parse = cpp_demangle::ParseOptions::default().recursion_limit(256);
    let sym = cpp_demangle::Symbol::new_with_options(raw.as_bytes(), &parse).ok()?;
    let opts = cpp_demangle::DemangleOptions::new().recursion_limit(256);
    sym.demangle_with_options(&opts)
        .ok()
        .filter(|s| !s.is_empty() && s != name)
}

/// Is `name` a function of the runtime rather than of the program:
/// sanitizer runtimes and interceptors, libc start-up, `abort` and
/// assertion machinery, `exit` and the exit-handler machinery, thread
/// start, C++ exception and termination
/// machinery, Rust panic and start-up machinery, signal trampolines?
pub fn is_runtime_function(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "_start",
        "__libc_start_main",
        "__libc_start_call_main",
        "__libc_start_main_impl",
        "__libc_start_main_alias_2",
        "raise",
        "__GI_raise",
        "abort",
        "__GI_abort",
        "__pthread_kill_implementation",
        "__pthread_kill_internal",
        "__pthread_kill",
        "pthread_kill",
        "__GI___pthread_kill",
        "__assert_fail",
        "__assert_fail_base",
        "__GI___assert_fail",
        "__assert_rtn",
        "__assert",
        "__stack_chk_fail",
        "__fortify_fail",
        "__chk_fail",
        "__libc_message",
        "__libc_message_impl",
        "__libc_fatal",
        "malloc_printerr",
        "__restore_rt",
        "__kernel_rt_sigreturn",
        "_sigtramp",
        "__sigtramp",
        "exit",
        "__GI_exit",
        "__run_exit_handlers",
        "__libc_csu_fini",
        "_dl_fini",
        "__cxa_finalize",
        "quick_exit",
        "start_thread",
        "clone",
        "clone3",
        "__clone",
        "__clone3",
        "__clone_internal",
        "thread_start",
        "_pthread_start",
        "__cxa_throw",
        "__cxa_rethrow",
        "__cxa_call_unexpected",
        "__cxa_pure_virtual",
        "__gxx_personality_v0",
        "rust_begin_unwind",
        "rust_panic",
        "main_thread_start",
    ];
    const PREFIXES: &[&str] = &[
        "__asan_",
        "__asan::",
        "__sanitizer_",
        "__sanitizer::",
        "__ubsan_",
        "__ubsan::",
        "__msan_",
        "__msan::",
        "__tsan_",
        "__tsan::",
        "__lsan_",
        "__lsan::",
        "__hwasan_",
        "__hwasan::",
        "__interceptor_",
        "___interceptor_",
        "__interception::",
        "_Unwind_",
        "__cxxabiv1::",
        "__gnu_cxx::__verbose_terminate_handler",
        "std::terminate",
        "std::__terminate",
        "std::panicking::",
        "core::panicking::",
        "std::panic::",
        "core::panic::",
        "std::rt::",
        "std::sys_common::backtrace::",
        "std::sys::backtrace::",
        "std::backtrace_rs::",
        "std::backtrace::",
        "__rustc::",
        "__rust_",
        "core::result::unwrap_failed",
        "core::option::unwrap_failed",
        "core::option::expect_failed",
        "core::cell::panic_already",
    ];
    let name = name.trim();
    EXACT.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Is this module a shared library (rather than the program's binary)?
fn is_shared_library(module: &str) -> bool {
    let base = module.rsplit(['/', '\\']).next().unwrap_or(module);
    base.ends_with(".so")
        || base.contains(".so.")
        || base.ends_with(".dylib")
        || base.ends_with(".dll")
        || base == "dyld"
        || base.starts_with("libsystem_")
        || base.starts_with("linux-vdso")
}

/// Reads and parses a backtrace file (see [`parse_backtrace`]).
pub fn read_backtrace_path(path: &Path) -> Result<Backtrace, FormatError> {
    read_backtrace_path_limited(path, crate::input::DEFAULT_TEXT_LIMIT)
}

/// [`read_backtrace_path`], refusing a file of more than `limit` bytes,
/// and devices (see [`crate::input`]).
pub fn read_backtrace_path_limited(path: &Path, limit: u64) -> Result<Backtrace, FormatError> {
    let name = path.display().to_string();
    let limit = crate::input::Limit::new(limit, "backtrace", "--max-input-size");
    let bytes = crate::input::read_bounded(path, &limit)?;
    let text = String::from_utf8_lossy(&bytes);
    parse_backtrace(&text, &name).map_err(|e| json_hint(&text, &name).unwrap_or(e))
}

/// A "backtrace" that is JSON: a report or a Sentry event, which
/// `--report` reads. The error says what it looks like.
fn json_hint(text: &str, name: &str) -> Option<FormatError> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let what = match v.is_object().then(|| crate::report_kind::detect(&v)) {
        Some(crate::report_kind::ReportKind::Sentry) => "a Sentry event",
        Some(crate::report_kind::ReportKind::Postmortem) => "a postmortem JSON report",
        Some(crate::report_kind::ReportKind::Grissom) => "a JSON failure report",
        None => "JSON",
    };
    Some(FormatError::text(
        name,
        &format!("not a backtrace: this is {what}; pass it with --report"),
    ))
}

/// Parses a backtrace, detecting its format (see the module docs).
/// `source_name` names the input in errors.
pub fn parse_backtrace(text: &str, source_name: &str) -> Result<Backtrace, FormatError> {
    if text.trim().is_empty() {
        return Err(FormatError::empty(source_name));
    }
    let format = detect(text).ok_or_else(|| {
        FormatError::text(
            source_name,
            "no stack frame found: not a gdb or lldb backtrace, a sanitizer report or a Rust panic backtrace",
        )
    })?;
    let mut bt = match format {
        BacktraceFormat::Gdb => parse_gdb(text),
        BacktraceFormat::Lldb => parse_lldb(text),
        BacktraceFormat::Sanitizer => parse_sanitizer(text),
        BacktraceFormat::RustPanic => Ok(parse_rust(text)),
    }
    .map_err(|e| FormatError::text(source_name, &e.to_string()))?;
    for f in &mut bt.frames {
        finish_frame(f);
    }
    merge_inlined(&mut bt);
    cut_signal_handler(&mut bt);
    if bt.frames.is_empty() {
        return Err(FormatError::text(
            source_name,
            &format!("{} backtrace without any stack frame", format.as_str()),
        ));
    }
    Ok(bt)
}

/// Removes Rust crate disambiguators: `std[e28293b1aa0f68bd]::rt` ->
/// `std::rt` (as `RUST_BACKTRACE=full` prints v0 names).
pub fn strip_crate_hashes(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(i) = rest.find('[') {
        let after = &rest[i + 1..];
        let hash_len = after.find(']').filter(|&n| {
            (1..=16).contains(&n) && after[..n].bytes().all(|b| b.is_ascii_hexdigit())
        });
        let ident_before = rest[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        match hash_len {
            Some(n) if ident_before && after[n + 1..].starts_with("::") => {
                out.push_str(&rest[..i]);
                rest = &after[n + 1..];
            }
            _ => {
                out.push_str(&rest[..=i]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Demangles, and flags runtime frames.
fn finish_frame(f: &mut RawFrame) {
    if let Some(name) = &f.function {
        if let Some(d) = demangle(name) {
            f.symbol = Some(name.clone());
            f.function = Some(d);
        } else if name.contains('[') {
            f.function = Some(strip_crate_hashes(name));
        }
    }
    let runtime_module = f.module.as_deref().is_some_and(|m| {
        let base = m.rsplit(['/', '\\']).next().unwrap_or(m);
        base == "dyld"
            || base.starts_with("libclang_rt.")
            || base.contains("san.so")
            || base.contains("san_")
    });
    f.runtime |= f.function.as_deref().is_some_and(is_runtime_function)
        || f.symbol.as_deref().is_some_and(is_runtime_function);
    // A frame of the sanitizer runtime library without a name.
    f.runtime |= runtime_module && f.file.is_none();
}

fn is_trampoline(f: &RawFrame) -> bool {
    matches!(
        f.function.as_deref(),
        Some("<signal handler called>" | "_sigtramp" | "__sigtramp" | "__restore_rt")
    )
}

/// Merges each inlined frame into the frame it is inlined in. An inlined
/// call is no call in the program's graph: its code is part of the
/// caller's function, so a frame for it would ask for a call edge that
/// does not exist. The merged frame is the physical one (function, module,
/// address) located where the innermost of its inlined frames stopped.
///
/// Inlined frames are recognised where the format shows them: gdb prints
/// the program counter only on the innermost frame of a physical frame's
/// chain of inlined calls, so a frame other than `#0` without an address
/// has the frame inside it inlined in it (`#0 0x.. in deref`, `#1 mid`,
/// `#2 outer`, `#3 0x.. in caller`: deref and mid are inlined in outer); a
/// sanitizer prints an inlined frame with the program counter of the
/// frame it is inlined in. (lldb's `outer [inlined] inner` frames are
/// read as `inner` already.)
///
/// Equal addresses alone do not make frames inlined: the activations of a
/// directly recursive function all return to the same call site, so a
/// sanitizer prints them with one address. One return address has one
/// chain of inlined frames (the DWARF inline records at that address), so
/// a run of frames with the same address is that chain repeated, once per
/// physical frame: the run is cut into its shortest repeating period (a
/// chain of one frame for plain recursion), and only frames inside one
/// period are merged.
fn merge_inlined(bt: &mut Backtrace) {
    merge_inlined_with(bt, false);
}

/// [`merge_inlined`] on frames that give every frame of one physical frame
/// the same address and the same [`RawFrame::index`], the physical frame's
/// number (the frames a core is unwound into, `crate::image::native::unwind`,
/// whose inline chains come from the DWARF inline records at each return
/// address): frames of different physical frames are never merged,
/// whatever their addresses. Frames without an index are told apart as in
/// a sanitizer report. Returns the merged frames and the note, if any frame
/// was merged.
pub fn merge_inlined_by_address(frames: Vec<RawFrame>) -> (Vec<RawFrame>, Option<String>) {
    let mut bt = Backtrace {
        format: BacktraceFormat::Sanitizer,
        frames,
        notes: Vec::new(),
    };
    merge_inlined_with(&mut bt, true);
    (bt.frames, bt.notes.pop())
}

/// Whether two frames name the same place (function and source location).
fn same_place(a: &RawFrame, b: &RawFrame) -> bool {
    a.function == b.function
        && a.file == b.file
        && a.line == b.line
        && a.column == b.column
        && a.module == b.module
}

/// For each frame, whether it is inlined in the next one (see
/// [`merge_inlined`]).
fn inlined_flags(bt: &Backtrace, by_index: bool) -> Vec<bool> {
    let frames = &bt.frames;
    let n = frames.len();
    let mut out = vec![false; n];
    let eligible = |i: usize| {
        let (f, outer) = (&frames[i], &frames[i + 1]);
        !(f.runtime || outer.runtime || f.function.is_none())
    };
    match bt.format {
        BacktraceFormat::Gdb => {
            for (i, o) in out.iter_mut().enumerate().take(n.saturating_sub(1)) {
                let outer = &frames[i + 1];
                *o = eligible(i)
                    && outer.address.is_none()
                    && outer.file.is_some()
                    && outer.function.is_some();
            }
        }
        BacktraceFormat::Sanitizer => {
            let mut i = 0;
            while i < n {
                let a = frames[i].address;
                let mut j = i + 1;
                while a.is_some() && j < n && frames[j].address == a {
                    j += 1;
                }
                let run = &frames[i..j];
                if by_index && run.iter().any(|f| f.index.is_some()) {
                    for k in i..j - 1 {
                        out[k] = eligible(k) && frames[k].index == frames[k + 1].index;
                    }
                } else {
                    // The shortest period of the run: one inline chain per
                    // physical frame.
                    let len = run.len();
                    let p = (1..=len)
                        .find(|&p| {
                            len.is_multiple_of(p)
                                && (0..len - p).all(|k| same_place(&run[k], &run[k + p]))
                        })
                        .unwrap_or(len);
                    for (k, o) in out.iter_mut().enumerate().take(j - 1).skip(i) {
                        *o = eligible(k) && !(k - i + 1).is_multiple_of(p);
                    }
                }
                i = j;
            }
        }
        _ => {}
    }
    out
}

fn merge_inlined_with(bt: &mut Backtrace, by_index: bool) {
    let n = bt.frames.len();
    if n < 2 {
        return;
    }
    let inlined = inlined_flags(bt, by_index);
    if !inlined.contains(&true) {
        return;
    }
    let frames = std::mem::take(&mut bt.frames);
    let mut merged: Vec<RawFrame> = Vec::with_capacity(n);
    let mut names: Vec<String> = Vec::new();
    // `pending`: a run of inlined frames, innermost first, waiting for
    // the physical frame they are inlined in.
    let mut pending: Vec<RawFrame> = Vec::new();
    let loc = |f: &RawFrame| SourceLoc {
        file: f.file.clone(),
        line: f.line,
        column: f.column,
    };
    for (f, &is_inlined) in frames.iter().zip(&inlined) {
        if is_inlined {
            names.push(f.label());
            pending.push(f.clone());
            continue;
        }
        let mut out = f.clone();
        if let Some(inner) = pending.first() {
            out.file = inner.file.clone();
            out.line = inner.line;
            out.column = inner.column;
            out.sites = pending[1..].iter().map(loc).collect();
            out.sites.push(loc(f));
            out.inlined = std::mem::take(&mut pending);
        }
        merged.push(out);
    }
    bt.notes.push(format!(
        "{} inlined frame{} (each a frame of its own where the graph calls its function from its inline site, as a graph built before inlining does; else merged into the frame it was inlined in): {}",
        names.len(),
        if names.len() == 1 { "" } else { "s" },
        listed(&names, 6)
    ));
    bt.frames = merged;
}

/// The first `most` of `names`, then how many more (a deep recursion has
/// hundreds).
fn listed(names: &[String], most: usize) -> String {
    let mut s = names[..names.len().min(most)].join(", ");
    if names.len() > most {
        s += &format!(" and {} more", names.len() - most);
    }
    s
}

/// [`cut_signal_handler`] on a core's unwound frames (the unwinder marks
/// a signal frame `<signal handler called>`, as gdb does): the frames from
/// where the signal arrived, and the note.
pub fn cut_signal_handler_frames(frames: Vec<RawFrame>) -> (Vec<RawFrame>, Option<String>) {
    let mut bt = Backtrace {
        format: BacktraceFormat::Sanitizer,
        frames,
        notes: Vec::new(),
    };
    cut_signal_handler(&mut bt);
    (bt.frames, bt.notes.pop())
}

/// Drops the frames that ran inside a signal handler.
fn cut_signal_handler(bt: &mut Backtrace) {
    let Some(t) = bt.frames.iter().rposition(is_trampoline) else {
        return;
    };
    let handler = &bt.frames[..t];
    if handler.iter().any(|f| !f.runtime) || t + 1 < bt.frames.len() {
        let names: Vec<String> = handler.iter().map(RawFrame::label).collect();
        bt.notes.push(format!(
            "{} frame{} ran in a signal handler, which a control-flow graph cannot model: the stack is taken from where the signal arrived, and the labels of the handler's code do not account for its run{}{}",
            handler.len(),
            if handler.len() == 1 { "" } else { "s" },
            if names.is_empty() { "" } else { ": left out " },
            names.join(", ")
        ));
    }
    bt.frames.drain(..=t);
}

// ---------------------------------------------------------------- detection

fn frame_number(line: &str) -> Option<(u32, &str)> {
    let rest = line.strip_prefix('#')?;
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    if end == 0 {
        return None;
    }
    let n: u32 = rest[..end].parse().ok()?;
    let after = &rest[end..];
    if !after.is_empty() && !after.starts_with([' ', '\t']) {
        return None;
    }
    Some((n, after.trim_start()))
}

fn detect(text: &str) -> Option<BacktraceFormat> {
    let lines = || text.lines().map(str::trim);
    if lines().any(|l| lldb_frame_start(l).is_some()) {
        return Some(BacktraceFormat::Lldb);
    }
    let sanitizer_marker = lines().any(|l| {
        (l.contains("ERROR: ") && l.contains("Sanitizer"))
            || (l.contains("WARNING: ") && l.contains("Sanitizer"))
            || l.contains(": runtime error: ")
    });
    if sanitizer_marker {
        return Some(BacktraceFormat::Sanitizer);
    }
    if lines().any(|l| l == "stack backtrace:" || rust_panic_line(l).is_some()) {
        return Some(BacktraceFormat::RustPanic);
    }
    let (mut gdb, mut san) = (0usize, 0usize);
    for l in lines() {
        let Some((_, rest)) = frame_number(l) else {
            continue;
        };
        if rest.starts_with("<signal handler called>")
            || rest.contains(") at ")
            || rest.contains(") from ")
        {
            gdb += 1;
        } else if rest.starts_with("0x")
            && (rest.contains("+0x") || sanitizer_location(last_token(rest)).is_some())
        {
            san += 1;
        } else if rest.ends_with(')') {
            gdb += 1;
        }
    }
    if gdb == 0 && san == 0 {
        None
    } else if san > gdb {
        Some(BacktraceFormat::Sanitizer)
    } else {
        Some(BacktraceFormat::Gdb)
    }
}

// ------------------------------------------------------------------ helpers

fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Splits a leading hexadecimal address token (`0x...`) off `s`.
fn leading_address(s: &str) -> (Option<u64>, &str) {
    match s.split_whitespace().next() {
        Some(tok) => match hex(tok) {
            Some(a) => (Some(a), s[tok.len()..].trim_start()),
            None => (None, s),
        },
        None => (None, s),
    }
}

fn hex(s: &str) -> Option<u64> {
    let h = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
    if h.is_empty() || h.len() > 16 {
        return None;
    }
    u64::from_str_radix(h, 16).ok()
}

/// `path:line` or `path:line:col`.
fn parse_location(s: &str) -> Option<(String, u32, Option<u32>)> {
    let s = s.trim();
    let (head, last) = s.rsplit_once(':')?;
    let last = digits(last)?;
    if let Some((path, mid)) = head.rsplit_once(':') {
        if let Some(line) = digits(mid) {
            if !path.is_empty() {
                return Some((path.to_string(), line, Some(last)));
            }
        }
    }
    if head.is_empty() {
        return None;
    }
    Some((head.to_string(), last, None))
}

fn last_token(s: &str) -> &str {
    s.rsplit([' ', '\t']).next().unwrap_or(s)
}

/// A sanitizer frame's location token: `path:line[:col]`, or a bare
/// absolute path.
fn sanitizer_location(tok: &str) -> Option<(String, Option<u32>, Option<u32>)> {
    if let Some((p, l, c)) = parse_location(tok) {
        return Some((p, Some(l), c));
    }
    if tok.starts_with('/') && tok.len() > 1 && !tok.ends_with(')') {
        return Some((tok.to_string(), None, None));
    }
    None
}

/// Splits `name (args)` or `name(args)` at the last top-level
/// parenthesised group when it ends the text. Quotes (`"..."`, `'...'`)
/// are skipped.
fn split_trailing_group(s: &str) -> (&str, Option<&str>) {
    let s = s.trim_end();
    if !s.ends_with(')') {
        return (s, None);
    }
    let mut depth = 0usize;
    let mut start = None;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' if depth > 0 => quote = Some('"'),
            '\'' if depth > 0 && s[i + 1..].chars().nth(1) == Some('\'') => quote = Some('\''),
            '(' => {
                if depth == 0 {
                    start = Some(i);
                }
                depth += 1;
            }
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    match start {
        Some(i) if depth == 0 && i > 0 => (s[..i].trim_end(), Some(&s[i..])),
        _ => (s, None),
    }
}

/// Are the parentheses of a gdb frame line still open (a wrapped line)?
fn parens_open(s: &str) -> bool {
    let mut depth = 0i64;
    let mut quote = false;
    let mut escaped = false;
    for c in s.chars() {
        if quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                quote = false;
            }
            continue;
        }
        match c {
            '"' => quote = true,
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
    }
    depth > 0
}

fn clean_name(name: &str) -> Option<String> {
    let name = name.trim();
    if name.is_empty() || name == "??" || name == "<unknown>" {
        None
    } else {
        Some(name.to_string())
    }
}

/// Why a backtrace of a detected format is refused (the parsers' error,
/// which [`parse_backtrace`] prefixes with the input's name).
#[derive(Debug, thiserror::Error)]
pub(super) enum ParseError {
    /// A LeakSanitizer report.
    #[error(
        "a LeakSanitizer report: its stacks say where leaked memory was allocated, not where the program failed"
    )]
    Leak,
    /// Several threads' stacks and no sign of which one crashed.
    #[error(
        "{stacks} {what} stacks and nothing says which thread crashed: keep only the crashing thread's backtrace"
    )]
    NoCrashingThread {
        /// How many stacks.
        stacks: usize,
        /// What they are (`gdb thread`).
        what: &'static str,
    },
}

/// A stack of frames with the thread it belongs to.
struct Stack {
    thread: Option<u32>,
    frames: Vec<RawFrame>,
}

/// Chooses the crashing stack among several.
fn choose(
    stacks: Vec<Stack>,
    crashing: Option<u32>,
    what: &'static str,
    notes: &mut Vec<String>,
) -> Result<Vec<RawFrame>, ParseError> {
    let mut stacks: Vec<Stack> = stacks
        .into_iter()
        .filter(|s| !s.frames.is_empty())
        .collect();
    match stacks.len() {
        0 => Ok(Vec::new()),
        1 => Ok(stacks.pop().expect("one").frames),
        n => {
            // The last stack of that thread: a debugger prints the stop
            // location first and the full `bt` after it.
            let pick = crashing.and_then(|t| stacks.iter().rposition(|s| s.thread == Some(t)));
            match pick {
                Some(i) => {
                    let t = crashing.unwrap_or(0);
                    let others = stacks.iter().filter(|s| s.thread != Some(t)).count();
                    if others > 0 {
                        notes.push(format!(
                            "{others} other thread stack{} left out: thread {t} crashed",
                            if others == 1 { "" } else { "s" },
                        ));
                    }
                    Ok(stacks.swap_remove(i).frames)
                }
                None => Err(ParseError::NoCrashingThread { stacks: n, what }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The errors say what they said as strings (issue 38).
    #[test]
    fn parse_errors_keep_their_messages() {
        assert_eq!(
            ParseError::Leak.to_string(),
            "a LeakSanitizer report: its stacks say where leaked memory was allocated, not where the program failed"
        );
        assert_eq!(
            ParseError::NoCrashingThread {
                stacks: 2,
                what: "gdb thread"
            }
            .to_string(),
            "2 gdb thread stacks and nothing says which thread crashed: keep only the crashing thread's backtrace"
        );
    }

    fn parse(text: &str) -> Backtrace {
        parse_backtrace(text, "bt.txt").unwrap()
    }

    /// The inline chains of `inl.c`'s frames are kept: deref and mid
    /// inlined into outer, each called at the next one's line, and
    /// outer's own line last; top inlined into main, which called it on
    /// line 6.
    fn chain_kept(bt: &Backtrace) {
        let outer = &bt.frames[0];
        let inlined: Vec<&str> = outer
            .inlined
            .iter()
            .map(|f| f.function.as_deref().unwrap())
            .collect();
        assert_eq!(inlined, ["deref", "mid"]);
        let sites: Vec<Option<u32>> = outer.sites.iter().map(|s| s.line).collect();
        assert_eq!(sites, [Some(3), Some(4)]);
        assert_eq!(bt.frames[1].inlined.len(), 1);
        assert_eq!(bt.frames[1].sites[0].line, Some(6));
    }

    #[test]
    fn inlined_frames_are_merged_into_their_physical_frame() {
        // gdb: the pc only on the innermost frame of each inline chain.
        let gdb = "Program received signal SIGSEGV, Segmentation fault.\n\
#0  0x0000555555555160 in deref (p=0x0) at inl.c:2\n\
#1  mid (p=0x0) at inl.c:3\n\
#2  outer (p=0x0) at inl.c:4\n\
#3  0x00005555555551f6 in top (p=0x0) at inl.c:5\n\
#4  main (argc=1, argv=0x7fffffffe7f8) at inl.c:6\n";
        let bt = parse(gdb);
        let got: Vec<(&str, Option<u32>)> = bt
            .frames
            .iter()
            .map(|f| (f.function.as_deref().unwrap(), f.line))
            .collect();
        // outer, located where deref stopped; main, where top called outer.
        assert_eq!(got, [("outer", Some(2)), ("main", Some(5))]);
        chain_kept(&bt);
        assert!(
            bt.notes.iter().any(|n| n.starts_with("3 inlined frames")),
            "{:?}",
            bt.notes
        );
        // A breakpoint's #0 has no address either, but #1 has one: nothing
        // is inlined.
        let plain = "#0  f (x=1) at a.c:3\n#1  0x0000555555555160 in main () at a.c:9\n";
        assert_eq!(parse(plain).frames.len(), 2);
        // A sanitizer gives an inlined frame the pc of its physical frame.
        let asan = "==1==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000000\n\
    #0 0x555555555160 in deref inl.c:2:66\n\
    #1 0x555555555160 in mid inl.c:3:70\n\
    #2 0x555555555160 in outer inl.c:4:55\n\
    #3 0x5555555551f6 in top inl.c:5:62\n\
    #4 0x5555555551f6 in main inl.c:6:60\n";
        let bt = parse(asan);
        let got: Vec<(&str, Option<u32>)> = bt
            .frames
            .iter()
            .map(|f| (f.function.as_deref().unwrap(), f.line))
            .collect();
        assert_eq!(got, [("outer", Some(2)), ("main", Some(5))]);
        chain_kept(&bt);
    }

    /// Direct recursion returns to one call site: equal addresses, but
    /// no frame inlined in another.
    #[test]
    fn recursive_frames_with_one_return_address_are_not_inlined() {
        let plain = "==1==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000000\n\
    #0 0x555555555150 in rec r.c:7:10\n\
    #1 0x555555555160 in rec r.c:8:3\n\
    #2 0x555555555160 in rec r.c:8:3\n\
    #3 0x555555555160 in rec r.c:8:3\n\
    #4 0x555555555170 in main r.c:12:3\n";
        let bt = parse(plain);
        assert_eq!(names(&bt), ["rec", "rec", "rec", "rec", "main"]);
        assert!(bt.notes.is_empty(), "{:?}", bt.notes);
        // Each activation with `helper` inlined at its call: the chain
        // (helper, rec) repeats once per physical frame.
        let chain = "==1==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000000\n\
    #0 0x555555555150 in deref r.c:2:5\n\
    #1 0x5555555551a0 in helper r.c:4:5\n\
    #2 0x5555555551a0 in rec r.c:9:3\n\
    #3 0x5555555551a0 in helper r.c:4:5\n\
    #4 0x5555555551a0 in rec r.c:9:3\n\
    #5 0x5555555551f0 in main r.c:12:3\n";
        let bt = parse(chain);
        let got: Vec<(&str, Option<u32>)> = bt
            .frames
            .iter()
            .map(|f| (f.function.as_deref().unwrap(), f.line))
            .collect();
        assert_eq!(
            got,
            [
                ("deref", Some(2)),
                ("rec", Some(4)),
                ("rec", Some(4)),
                ("main", Some(12))
            ]
        );
        // A core's frames: numbered by physical frame, merged only within
        // one number.
        let f = |name: &str, line: u32, addr: u64, index: u32| RawFrame {
            index: Some(index),
            function: Some(name.to_string()),
            file: Some("r.c".to_string()),
            line: Some(line),
            address: Some(addr),
            ..RawFrame::default()
        };
        let frames = vec![
            f("rec", 7, 0x150, 0),
            f("rec", 8, 0x160, 1),
            f("rec", 8, 0x160, 2),
            f("helper", 4, 0x1a0, 3),
            f("main", 12, 0x1a0, 3),
        ];
        let (merged, note) = merge_inlined_by_address(frames);
        let got: Vec<(&str, Option<u32>)> = merged
            .iter()
            .map(|f| (f.function.as_deref().unwrap(), f.line))
            .collect();
        assert_eq!(
            got,
            [
                ("rec", Some(7)),
                ("rec", Some(8)),
                ("rec", Some(8)),
                ("main", Some(4))
            ]
        );
        assert!(note.unwrap().starts_with("1 inlined frame "));
    }

    fn names(bt: &Backtrace) -> Vec<&str> {
        bt.frames
            .iter()
            .map(|f| f.function.as_deref().unwrap_or("??"))
            .collect()
    }

    #[test]
    fn gdb_frames_with_and_without_addresses_and_sources() {
        let bt = parse(
            "#0  0x0000555555555149 in foo (x=1, s=0x5555 \"a (b\") at src/a.c:12\n\
             #1  0x00005555555551a0 in main () at a.c:30\n\
             #2  0x00007ffff7829d90 in __libc_start_call_main () from /lib/x86_64-linux-gnu/libc.so.6\n",
        );
        assert_eq!(bt.format, BacktraceFormat::Gdb);
        assert_eq!(names(&bt), vec!["foo", "main", "__libc_start_call_main"]);
        assert_eq!(bt.frames[0].file.as_deref(), Some("src/a.c"));
        assert_eq!(bt.frames[0].line, Some(12));
        assert_eq!(bt.frames[0].address, Some(0x5555_5555_5149));
        assert_eq!(bt.frames[1].address, Some(0x5555_5555_51a0));
        assert_eq!(
            bt.frames[2].module.as_deref(),
            Some("/lib/x86_64-linux-gnu/libc.so.6")
        );
        assert!(bt.frames[2].runtime);
        assert!(bt.frames[2].to_source_frame().library);
    }

    #[test]
    fn gdb_cpp_names_keep_their_parentheses() {
        let bt = parse(
            "#0  0x0000555555555200 in std::function<void ()>::operator()() const (this=0x7fffffffe0b0) at /usr/include/c++/11/bits/std_function.h:590\n\
             #1  0x0000555555555300 in (anonymous namespace)::run (n=3) at x.cc:7\n",
        );
        assert_eq!(
            names(&bt),
            vec![
                "std::function<void ()>::operator()() const",
                "(anonymous namespace)::run"
            ]
        );
    }

    #[test]
    fn gdb_wrapped_lines_are_joined() {
        let bt = parse("#0  0x0000000000401136 in process (ctx=0x4052a0,\n    data=0x7fffffffe010) at main.c:42\n#1  0x00000000004011a2 in main () at main.c:50\n");
        assert_eq!(names(&bt), vec!["process", "main"]);
        assert_eq!(bt.frames[0].line, Some(42));
    }

    #[test]
    fn gdb_threads_need_to_know_which_one_crashed() {
        let two = "Thread 2 (Thread 0x7ffff7d8a640 (LWP 11)):\n#0  worker () at w.c:5\n\nThread 1 (Thread 0x7ffff7d8b740 (LWP 10)):\n#0  main () at m.c:9\n";
        let e = parse_backtrace(two, "bt.txt").unwrap_err().to_string();
        assert!(e.starts_with("bt.txt: 2 gdb thread stacks"), "{e}");
        let bt = parse(&format!(
            "Thread 2 \"prog\" received signal SIGSEGV, Segmentation fault.\n{two}"
        ));
        assert_eq!(names(&bt), vec!["worker"]);
        assert_eq!(bt.notes.len(), 1);
    }

    #[test]
    fn gdb_stop_location_on_core_load_is_not_an_earlier_backtrace() {
        // `gdb -batch -ex bt ./prog core`: the stop location, its source
        // line, then the `bt`.
        let core = "[New LWP 4242]\nCore was generated by `./prog 9'.\nProgram terminated with signal SIGSEGV, Segmentation fault.\n#0  0x0000555555555183 in crash (msg=0x555555556004 \"big\") at crash.c:16\n16\t    p[0] = 'x';\n#0  0x0000555555555183 in crash (msg=0x555555556004 \"big\") at crash.c:16\n#1  0x00005555555551c1 in report (n=9) at crash.c:21\n#2  0x0000555555555236 in main (argc=2, argv=0x7fffffffe0b8) at crash.c:34\n";
        let bt = parse(core);
        assert_eq!(names(&bt), vec!["crash", "report", "main"]);
        assert!(bt.notes.is_empty(), "{:?}", bt.notes);
        // The same before `thread apply all bt`.
        let threads = core.replace(
            "#0  0x0000555555555183 in crash (msg=0x555555556004 \"big\") at crash.c:16\n#1",
            "[Current thread is 1 (LWP 4242)]\nThread 1 (LWP 4242):\n#0  0x0000555555555183 in crash (msg=0x555555556004 \"big\") at crash.c:16\n#1",
        );
        let bt = parse(&threads);
        assert_eq!(names(&bt), vec!["crash", "report", "main"]);
        assert!(bt.notes.is_empty(), "{:?}", bt.notes);
        // A lone `#0` elsewhere than the later stack's is an earlier
        // backtrace of the session.
        let bt = parse(&core.replacen("crash.c:16", "crash.c:15", 1));
        assert_eq!(names(&bt), vec!["crash", "report", "main"]);
        assert_eq!(bt.notes.len(), 1, "{:?}", bt.notes);
        assert!(bt.notes[0].contains("1 earlier backtrace left out"));
    }

    #[test]
    fn signal_handler_frames_are_dropped() {
        let bt = parse("#0  handler (sig=11) at h.c:3\n#1  <signal handler called>\n#2  0x0000555555555150 in foo () at a.c:8\n#3  0x0000555555555190 in main () at a.c:20\n");
        assert_eq!(names(&bt), vec!["foo", "main"]);
        assert!(bt.notes[0].contains("signal handler"), "{:?}", bt.notes);
    }

    #[test]
    fn mangled_names_are_demangled() {
        assert_eq!(demangle("_Z3fooi").as_deref(), Some("foo(int)"));
        assert_eq!(
            demangle("_ZN2ns3BarC2Ev").as_deref(),
            Some("ns::Bar::Bar()")
        );
        assert_eq!(
            demangle("_ZN5myapp7compute17h0123456789abcdefE").as_deref(),
            Some("myapp::compute")
        );
        assert_eq!(
            demangle("_RNvCs1234_5myapp7compute").as_deref(),
            Some("myapp::compute")
        );
        assert_eq!(demangle("main"), None);
        assert_eq!(demangle("_Zgarbage!"), None);
        let bt = parse("#0  0x0000000000401136 in _Z3fooi () at a.cc:3\n");
        assert_eq!(bt.frames[0].function.as_deref(), Some("foo(int)"));
        assert_eq!(bt.frames[0].symbol.as_deref(), Some("_Z3fooi"));
    }

    /// A template function's mangling encodes its return type, which the
    /// demangled name starts with and gdb's frame leaves out: the frame
    /// must still find the function by name (nlohmann/json's crash frame
    /// on the `{` line of a coverage build, where no node is, was left
    /// unconstrained).
    #[test]
    fn template_functions_are_found_by_the_name_gdb_prints() {
        use postmortem_core::{IcfgBuilder, NodeKind, NodeSpec};
        let mut b = IcfgBuilder::new();
        let main = b.function("main");
        // void ns::apply<int>(int)
        let apply = b.function("_ZN2ns5applyIiEEvT_");
        let mut add = |id: &str, kind, func| {
            b.add_node(NodeSpec {
                ext_id: id,
                kind,
                func,
                label: id,
                lines: &[1],
            })
            .unwrap()
        };
        let (me, ae) = (
            add("me", NodeKind::Entry, main),
            add("ae", NodeKind::Entry, apply),
        );
        let (mx, ax) = (
            add("mx", NodeKind::Exit, main),
            add("ax", NodeKind::Exit, apply),
        );
        b.add_flow_edge(me, mx);
        b.add_flow_edge(ae, ax);
        b.set_start(me);
        let g = b.build().unwrap();
        let loc = locator(&g, PathMap::default());
        let bt = parse("#0  ns::apply<int> (x=1) at a.cc:3\n");
        let name = bt.frames[0].function.clone().unwrap();
        assert_eq!(name, "ns::apply<int>");
        assert_eq!(loc.functions_named(&name), vec![apply]);
    }

    #[test]
    fn runtime_names() {
        for n in [
            "__asan_report_load4",
            "__interceptor_strlen",
            "__libc_start_main",
            "_start",
            "__GI_raise",
            "abort",
            "std::panicking::begin_panic",
            "core::panicking::panic_fmt",
            "rust_begin_unwind",
            "__sanitizer::Die()",
        ] {
            assert!(is_runtime_function(n), "{n}");
        }
        for n in ["main", "foo", "strlen", "myapp::main", "abort_handler"] {
            assert!(!is_runtime_function(n), "{n}");
        }
    }

    #[test]
    fn lldb_frames() {
        let bt = parse(
            "* thread #1, name = 'prog', stop reason = signal SIGSEGV: invalid address (fault address: 0x0)\n  \
             * frame #0: 0x0000555555555131 prog`foo(p=0x0000000000000000) at a.c:3:6\n    \
             frame #1: 0x0000555555555153 prog`main at a.c:8:3\n    \
             frame #2: 0x00007ffff7c29d90 libc.so.6`__libc_start_call_main(main=(prog`main at a.c:6), argc=1, argv=0x00007fffffffe0b8) at libc_start_call_main.h:58:16\n    \
             frame #3: 0x00007ffff7c29e40 libc.so.6`__libc_start_main_impl + 128\n",
        );
        assert_eq!(bt.format, BacktraceFormat::Lldb);
        assert_eq!(
            names(&bt),
            vec![
                "foo",
                "main",
                "__libc_start_call_main",
                "__libc_start_main_impl"
            ]
        );
        assert_eq!((bt.frames[0].line, bt.frames[0].column), (Some(3), Some(6)));
        assert_eq!(bt.frames[1].module.as_deref(), Some("prog"));
        assert!(bt.frames[3].runtime);
    }

    #[test]
    fn sanitizer_frames() {
        let bt = parse(
            "==1==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000014\n\
             READ of size 4 at 0x602000000014 thread T0\n    \
             #0 0x4f2b3c in foo /path/a.c:12:5\n    \
             #1 0x4f2c7d in main /path/a.c:30\n    \
             #2 0x7f1e2c5c0b96 in __libc_start_main (/lib/x86_64-linux-gnu/libc.so.6+0x21b96) (BuildId: 69389d485a9793dbe873f0ea2c93e02efaa9aa3d)\n    \
             #3 0x41b2e9 (/path/bin+0x41b2e9)\n\n\
             allocated by thread T0 here:\n    #0 0x4bd0b3 in malloc (/path/bin+0x4bd0b3)\n",
        );
        assert_eq!(bt.format, BacktraceFormat::Sanitizer);
        assert_eq!(names(&bt), vec!["foo", "main", "__libc_start_main", "??"]);
        assert_eq!(bt.frames[0].column, Some(5));
        assert_eq!(bt.frames[1].column, None);
        assert_eq!(
            bt.frames[2].module.as_deref(),
            Some("/lib/x86_64-linux-gnu/libc.so.6")
        );
        assert_eq!(bt.frames[3].module.as_deref(), Some("/path/bin"));
        assert_eq!(bt.notes.len(), 1);
    }

    #[test]
    fn ubsan_without_a_stack_gives_the_error_location() {
        let bt = parse(
            "a.c:12:5: runtime error: signed integer overflow: 2147483647 + 1 cannot be represented in type 'int'\n",
        );
        assert_eq!(bt.frames.len(), 1);
        assert_eq!(
            (
                bt.frames[0].file.as_deref(),
                bt.frames[0].line,
                bt.frames[0].column
            ),
            (Some("a.c"), Some(12), Some(5))
        );
    }

    #[test]
    fn leak_reports_are_refused() {
        let e = parse_backtrace(
            "==1==ERROR: LeakSanitizer: detected memory leaks\n    #0 0x1 in malloc (/x+0x1)\n",
            "l.txt",
        );
        assert!(e.unwrap_err().to_string().contains("LeakSanitizer"));
    }

    #[test]
    fn rust_panics() {
        let bt = parse(
            "thread 'main' panicked at src/main.rs:10:5:\nindex out of bounds: the len is 3 but the index is 5\nstack backtrace:\n   \
             0: rust_begin_unwind\n             at /rustc/abc/library/std/src/panicking.rs:578:5\n   \
             1: core::panicking::panic_bounds_check\n             at /rustc/abc/library/core/src/panicking.rs:162:5\n   \
             2: myapp::compute\n             at ./src/main.rs:10:5\n   \
             3: myapp::main\n             at ./src/main.rs:4:5\n   \
             4: core::ops::function::FnOnce::call_once\n             at /rustc/abc/library/core/src/ops/function.rs:250:5\n\
             note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.\n",
        );
        assert_eq!(bt.format, BacktraceFormat::RustPanic);
        assert_eq!(
            names(&bt),
            vec![
                "rust_begin_unwind",
                "core::panicking::panic_bounds_check",
                "myapp::compute",
                "myapp::main",
                "core::ops::function::FnOnce::call_once"
            ]
        );
        assert!(bt.frames[0].runtime && bt.frames[1].runtime && !bt.frames[2].runtime);
        assert_eq!(bt.frames[2].file.as_deref(), Some("./src/main.rs"));
        assert_eq!(bt.frames[2].column, Some(5));
        let short = parse(
            "thread 'main' panicked at 'boom', src/lib.rs:7:9\nnote: run with `RUST_BACKTRACE=1`\n",
        );
        assert_eq!(short.frames[0].line, Some(7));
    }

    #[test]
    fn rust_crate_hashes_and_thread_ids() {
        assert_eq!(
            strip_crate_hashes("std[e28293b1aa0f68bd]::rt::lang_start_internal"),
            "std::rt::lang_start_internal"
        );
        assert_eq!(
            strip_crate_hashes("<core[c1f1]::fmt::rt::Argument>::fmt"),
            "<core::fmt::rt::Argument>::fmt"
        );
        assert_eq!(
            strip_crate_hashes("std::vector<int>::operator[](unsigned long)"),
            "std::vector<int>::operator[](unsigned long)"
        );
        assert_eq!(strip_crate_hashes("a[b]c[12]::d"), "a[b]c::d");
        assert_eq!(
            rust_panic_line("thread 'main' (19348) panicked at src/main.rs:2:5:"),
            Some("src/main.rs:2:5:")
        );
        assert_eq!(
            rust_panic_line("thread '<unnamed>' panicked at x.rs:1:1:"),
            Some("x.rs:1:1:")
        );
        assert_eq!(rust_panic_line("thread 'main' exited"), None);
    }

    #[test]
    fn unknown_text_is_an_error() {
        let e = parse_backtrace("hello\nworld\n", "x.txt").unwrap_err();
        assert!(
            e.to_string().starts_with("x.txt: no stack frame found"),
            "{e}"
        );
        assert!(matches!(
            parse_backtrace("  \n", "x.txt"),
            Err(FormatError::Empty { .. })
        ));
    }
}
