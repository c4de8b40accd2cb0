//! One entry to the crashed process's image ([`Image::open`]): the
//! binary (checked to be the graph's build), the core or minidump, or a
//! flag dump, read into what the failure's report takes from them: the
//! crash stack, the coverage flags, variables' values and stack residue.

use super::native::{self, Binary, Core};
use super::sancov::{FlagConstraints, SancovMap};
use super::{buildcheck, residue};
use crate::backtrace::merge_inlined_by_address;
use crate::error::Diagnostic;
use crate::input::{read_bounded, Limit};
use crate::vars::VarMap;
use postmortem_core::locate::{PathMap, SourceFrame};
use postmortem_core::Icfg;
use std::fmt;
use std::path::Path;

/// The files of a crashed process's image (see the options of
/// `postmortem analyze`).
#[derive(Clone, Copy, Debug, Default)]
pub struct ImageFiles<'a> {
    /// The graph (named in messages).
    pub cfg: Option<&'a Path>,
    /// The program's binary.
    pub binary: Option<&'a Path>,
    /// An ELF core.
    pub core: Option<&'a Path>,
    /// A minidump.
    pub minidump: Option<&'a Path>,
    /// A dump of the coverage flags alone.
    pub sancov_flags: Option<&'a Path>,
    /// A backtrace gives the stack: the core's is not unwound.
    pub backtrace_given: bool,
}

/// How [`Image::open`] reads the image.
#[derive(Clone, Copy, Debug)]
pub struct ImageOptions<'a> {
    /// Path prefixes to rewrite (the build check compares paths).
    pub path_map: &'a PathMap,
    /// Refuse a binary that is not of the graph's build (else a warning).
    pub build_check: bool,
    /// Do not look for stack residue.
    pub no_residue: bool,
    /// Where the crashed machine's libraries are (see
    /// [`super::native::Core::sysroot`]).
    pub sysroot: Option<&'a Path>,
}

/// Why [`Image::open`] gave nothing.
#[derive(Debug)]
pub enum ImageError {
    /// Unreadable, malformed or mismatched input.
    Input(String),
    /// A coverage flag is set in code the graph says cannot run.
    Impossible(String),
    /// The binary (named) is not of the graph's build.
    NotTheBuild(String, buildcheck::BuildMismatch),
}

fn input(e: impl fmt::Display) -> ImageError {
    ImageError::Input(e.to_string())
}

impl Image {
    /// Reads the image the failure's files name (`--binary` with
    /// `--core`, `--minidump` or `--sancov-flags`), with the warnings and
    /// notes on the way.
    pub fn open(
        g: &Icfg,
        map: Option<&SancovMap>,
        vars: Option<&VarMap>,
        files: &ImageFiles<'_>,
        opts: &ImageOptions<'_>,
    ) -> Result<(Image, Vec<Diagnostic>), ImageError> {
        Image::open_prepared(g, map, vars, files, opts, Prepared::default())
    }

    /// [`Image::open`], with what `pre` already read (the same files and
    /// options) taken from it instead of read again.
    pub fn open_prepared(
        g: &Icfg,
        map: Option<&SancovMap>,
        vars: Option<&VarMap>,
        files: &ImageFiles<'_>,
        opts: &ImageOptions<'_>,
        pre: Prepared,
    ) -> Result<(Image, Vec<Diagnostic>), ImageError> {
        let mut diagnostics = Vec::new();
        let image = load(g, map, vars, files, opts, pre, &mut diagnostics)?;
        Ok((image, diagnostics))
    }
}

/// What [`Image::open`] reads without the graph: the binary, its line
/// tables and the core's stack residue. `analyze` reads it on another
/// thread while the graph loads (on Lua's plain core, about 20 ms of a
/// 40 ms graph load). Only what was read without error is kept: the rest
/// (an unreadable binary, a core of another binary) is read again by
/// [`Image::open_prepared`], which tells the error in its usual order.
#[derive(Default)]
pub struct Prepared {
    bin: Option<Binary>,
    compiled: Option<buildcheck::Compiled>,
    residue: Option<Found>,
}

impl Prepared {
    /// Reads what [`Image::open`] would read of `files` without the
    /// graph, as `opts` asks.
    pub fn read(files: &ImageFiles<'_>, opts: &ImageOptions<'_>) -> Prepared {
        let mut pre = Prepared::default();
        let Some(bin) = files.binary.and_then(|p| Binary::read(p).ok()) else {
            return pre;
        };
        let dump = files.core.or(files.minidump);
        if dump.is_some() || files.sancov_flags.is_some() {
            pre.compiled = buildcheck::read_compiled(&bin).ok();
        }
        if let (Some(path), false) = (dump, opts.no_residue) {
            if let Ok(core) = Core::read(path) {
                if let Ok(base) = native::load_base(&core, &bin) {
                    pre.residue = Some(find_residue(&core, &bin, base));
                }
            }
        }
        pre.bin = Some(bin);
        pre
    }

    /// Whether the binary's line tables were read.
    pub fn has_line_tables(&self) -> bool {
        self.compiled.is_some()
    }

    /// Whether the core's stack residue was read.
    pub fn has_residue(&self) -> bool {
        self.residue.is_some()
    }
}

/// What the crashed process's image gave: the crash stack, coverage
/// flags, variables' values, stack residue ([`Image::open`]).
#[derive(Default)]
pub struct Image {
    /// The unwound crash stack, innermost first (None: no core, a
    /// backtrace was given, or the stack could not be unwound soundly).
    pub(crate) frames: Option<Vec<SourceFrame>>,
    /// The flags' constraints.
    pub(crate) flags: Option<FlagConstraints>,
    /// Variables' values read from the core.
    pub(crate) values: Option<Vec<crate::vars::Observed>>,
    /// For each frame of `frames`: its physical frame number and function
    /// symbol, when known.
    pub(crate) frame_phys: Vec<Option<(u32, String)>>,
    /// The frames whose locals were read: physical number and function.
    pub(crate) walked: Vec<(u32, String)>,
    /// The stack residue found in the core, each hit with its call's
    /// symbolized frames.
    pub(crate) residue: Option<Found>,
    /// What killed the process (a core's or minidump's signal).
    pub(crate) fault: Option<super::fault::Fault>,
    /// The graph's lines on which the binary has no code (None: no
    /// binary's line table was read; see [`super::no_code`]).
    pub(crate) no_code: Option<Vec<(postmortem_core::FileId, u32)>>,
}

fn no_map(cfg: Option<&Path>) -> ImageError {
    input(format!(
        "{}: the graph has no coverage flag map: pass the instrumented build's .ll/.bc as --cfg, or a .pmcfg that `cfg build` made from it (GraphML, and caches of other graphs, have none)",
        cfg.map(|p| p.display().to_string()).unwrap_or_else(|| "the graph".into())
    ))
}

fn arrays(map: &SancovMap) -> Vec<(Option<String>, usize)> {
    map.arrays
        .iter()
        .map(|a| (a.function.clone(), a.len))
        .collect()
}

/// Reads the core, binary and flag dump.
///
/// The flags need the graph's flag map. Before a flag is used, the
/// binary's flag order is checked against the map: one pc-table entry per
/// flag, each array's first entry a function entry at that function's
/// symbol address (see [`native::check_order`]). The flags are
/// process-wide: with several threads in the core, a set flag may be
/// another thread's, so only the clear flags constrain the path and the
/// set ones become `ran_somewhere` (a flag dump is taken to be of a
/// single-threaded run).
fn load(
    g: &Icfg,
    map: Option<&SancovMap>,
    vars: Option<&VarMap>,
    files: &ImageFiles<'_>,
    opts: &ImageOptions<'_>,
    pre: Prepared,
    sink: &mut Vec<Diagnostic>,
) -> Result<Image, ImageError> {
    let Prepared {
        bin: pre_bin,
        compiled,
        residue,
    } = pre;
    let mut out = Image::default();
    if files.core.is_some() && files.minidump.is_some() {
        return Err(input("give either --core or --minidump, not both"));
    }
    let dump = files.core.or(files.minidump);
    if dump.is_some() && files.sancov_flags.is_some() {
        return Err(input(
            "give the coverage flags either in --core / --minidump or in --sancov-flags, not both",
        ));
    }
    let bin = match (files.binary, pre_bin) {
        (Some(_), Some(bin)) => Some(bin),
        (Some(p), None) => Some(Binary::read(p).map_err(input)?),
        (None, _) => None,
    };
    if let (Some(bin), true) = (&bin, dump.is_some() || files.sancov_flags.is_some()) {
        out.no_code = check_build(g, bin, compiled, files, opts, sink)?;
    }
    if let Some(path) = files.sancov_flags {
        out.flags = Some(flag_dump(g, map, files, bin.as_ref(), path, sink)?);
    }
    if let Some(path) = dump {
        let name = path.display().to_string();
        let what = if files.minidump.is_some() {
            "a minidump"
        } else {
            "a core"
        };
        let bin = bin.as_ref().ok_or_else(|| {
            input(format!(
                "{name}: {what} needs the program's binary (--binary)"
            ))
        })?;
        let mut core = Core::read(path).map_err(input)?;
        if let Some(root) = opts.sysroot {
            if !root.is_dir() {
                return Err(input(format!(
                    "{}: --sysroot names no directory",
                    root.display()
                )));
            }
            core.sysroot = Some(root.to_path_buf());
        }
        if files.minidump.is_some() && !core.is_minidump() {
            return Err(input(format!(
                "{name}: not a minidump (no MDMP magic); an ELF core goes to --core"
            )));
        }
        let base = native::load_base(&core, bin).map_err(input)?;
        if let Some(d) = &core.minidump {
            sink.push(Diagnostic::Note(crate::image::minidump::note(&name, d)));
        }
        if let Some(c) = core_flags(g, map, files, bin, &core, &name, sink)? {
            out.flags = Some(c);
        }
        if !files.backtrace_given {
            (out.frames, out.frame_phys) = match core_stack(&core, bin, base, &name, sink) {
                Some((frames, phys)) => (Some(frames), phys),
                None => (None, Vec::new()),
            };
        }
        if let Some(vars) = vars {
            let (observed, notes) = if core.minidump.as_ref().is_some_and(|d| d.stack_sanitized) {
                sink.push(Diagnostic::Warning(format!(
                    "{name}: the writer sanitized the crashing thread's stack (its non-pointer words are 0x0defaced0defaced): local variables are not read, only globals the dump holds"
                )));
                crate::image::values::read_globals(&core, bin, base, vars)
            } else {
                let (observed, notes, walked) =
                    crate::image::values::read_with_frames(&core, bin, base, vars);
                out.walked = walked;
                (observed, notes)
            };
            for n in notes {
                sink.push(Diagnostic::Note(format!("{name}: {n}")));
            }
            out.values = Some(observed);
        }
        if !opts.no_residue {
            out.residue = Some(residue.unwrap_or_else(|| find_residue(&core, bin, base)));
        }
        out.fault = super::fault::of(&core, bin, base);
    }
    Ok(out)
}

/// Refuses a binary that is not of the graph's build (see
/// [`crate::image::buildcheck`]); with `opts.build_check` off, warns
/// instead. Gives the graph's lines the binary has no code on (when it
/// has a line table and is the graph's build).
fn check_build(
    g: &Icfg,
    bin: &Binary,
    compiled: Option<buildcheck::Compiled>,
    files: &ImageFiles<'_>,
    opts: &ImageOptions<'_>,
    sink: &mut Vec<Diagnostic>,
) -> Result<Option<Vec<(postmortem_core::FileId, u32)>>, ImageError> {
    let name = binary_name(files);
    let compiled = match compiled {
        Some(c) => c,
        None => buildcheck::read_compiled(bin).map_err(|e| input(format!("{name}: {e}")))?,
    };
    if compiled.is_empty() {
        sink.push(Diagnostic::Note(format!(
            "{name}: no DWARF line table (build with -g): not checked to be the graph's build"
        )));
        return Ok(None);
    }
    match buildcheck::compare(g, &compiled, opts.path_map) {
        Ok(checked) => {
            sink.push(Diagnostic::Note(format!("{name}: {checked}")));
            Ok(Some(super::no_code::lines_without_code(
                g,
                &compiled,
                opts.path_map,
            )))
        }
        Err(m) if opts.build_check => Err(ImageError::NotTheBuild(name, m)),
        Err(m) => {
            sink.push(Diagnostic::Warning(format!(
                "{name}: {m} (--no-build-check: analysed anyway, the labels may be wrong)"
            )));
            Ok(None)
        }
    }
}

/// The residue of a core, before it is mapped to the graph.
pub(crate) struct Found {
    pub(crate) sites: residue::Sites,
    pub(crate) scan: residue::Scan,
    /// Threads of the process (several: see `residue_sets`).
    pub(crate) threads: usize,
    /// Each hit with the frames at its call (return address - 1).
    pub(crate) hits: Vec<(residue::Hit, Vec<crate::backtrace::RawFrame>)>,
}

fn find_residue(core: &Core, bin: &Binary, base: u64) -> Found {
    let sites = residue::Sites::of(bin);
    let mut scan = residue::scan(core, base, &sites);
    if core.minidump.as_ref().is_some_and(|d| d.stack_sanitized) {
        scan.off = Some("the minidump's stack was sanitized".into());
        scan.hits.clear();
    }
    let hits = scan
        .hits
        .iter()
        .map(|h| (h.clone(), bin.symbolize(h.after - 1)))
        .collect();
    Found {
        sites,
        scan,
        threads: core.threads,
        hits,
    }
}

/// The binary's file name, for messages (empty without one).
fn binary_name(files: &ImageFiles<'_>) -> String {
    files
        .binary
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

/// The constraints of the raw flag dump at `path`, checked against the
/// binary's flag order when there is a binary.
fn flag_dump(
    g: &Icfg,
    map: Option<&SancovMap>,
    files: &ImageFiles<'_>,
    bin: Option<&Binary>,
    path: &Path,
    sink: &mut Vec<Diagnostic>,
) -> Result<FlagConstraints, ImageError> {
    let name = path.display().to_string();
    let map = map.ok_or_else(|| no_map(files.cfg))?;
    // One byte per flag: a dump cannot be longer (a device, a pipe that
    // does not end, a core given as flags are refused at that size).
    let limit = Limit {
        bytes: map.flags.len() as u64,
        what: "dump of this graph's coverage flags (one byte per flag)",
        raise: None,
    };
    let bytes = read_bounded(path, &limit).map_err(input)?;
    let mut unknown = Vec::new();
    if let Some(bin) = bin {
        let pcs = bin.pcs().ok_or_else(|| {
            input(format!(
                "{}: no {} section: build with -fsanitize-coverage=...,inline-bool-flag,pc-table",
                binary_name(files),
                native::PCS
            ))
        })?;
        native::check_order(bin, &pcs, &arrays(map)).map_err(input)?;
        unknown = native::unrelocated_slots(bin, &pcs);
    } else {
        sink.push(Diagnostic::Warning(format!(
            "{name}: the flag order is not checked against the binary (pass --binary PROG to check it)"
        )));
    }
    let c = map
        .constraints_except(&bytes, &unknown)
        .map_err(|e| input(format!("{name}: {e}")))?;
    check_reachable(g, map, &c, &name)?;
    sink.push(Diagnostic::Note(flags_note(&name, &c)));
    Ok(c)
}

/// The constraints of the coverage flags in the core `name` (None, with
/// a warning, when neither the binary nor the graph has flags). With
/// several threads, the set flags are `ran_somewhere` facts, not `ran`
/// observations.
fn core_flags(
    g: &Icfg,
    map: Option<&SancovMap>,
    files: &ImageFiles<'_>,
    bin: &Binary,
    core: &Core,
    name: &str,
    sink: &mut Vec<Diagnostic>,
) -> Result<Option<FlagConstraints>, ImageError> {
    match (bin.bools.is_some(), map) {
        (true, Some(map)) => {
            if let (true, Some((addr, size))) = (core.is_minidump(), bin.bools) {
                let base = native::load_base(core, bin).map_err(input)?;
                // A minidump holds the memory its writer chose: without
                // the flag array's, the flags are no evidence.
                if core.mem(base.wrapping_add(addr), size).is_none() {
                    sink.push(Diagnostic::Warning(format!(
                        "{name}: the minidump does not hold the coverage flags' memory ({} bytes at {:#x}): they are not used (have the crash handler add that range, e.g. minidump-writer's set_app_memory or Crashpad's extra memory ranges); only the crash stack and what else the dump holds are used",
                        size,
                        base.wrapping_add(addr)
                    )));
                    return Ok(None);
                }
            }
            let cf = native::read_flags(core, bin).map_err(input)?;
            native::check_order(bin, &cf.pcs, &arrays(map)).map_err(input)?;
            let mut c = map
                .constraints_except(&cf.flags, &cf.unrelocated)
                .map_err(|e| input(format!("{name}: {e}")))?;
            if core.threads > 1 {
                // The flags are process-wide: a set flag may be another
                // thread's, so it is no observation of the crashing
                // thread's path, only a fact about the process (its node
                // ran in some thread). A clear flag holds for every thread.
                sink.push(Diagnostic::Warning(format!(
                    "{name}: {} threads: the {} set coverage flags may have been set by other threads: they say only that their code ran in some thread (the clear ones are used as usual)",
                    core.threads, c.set
                )));
                c.ran_somewhere = c.ran.drain(..).map(|t| t.entries[0].nodes()[0]).collect();
            }
            check_reachable(g, map, &c, name)?;
            sink.push(Diagnostic::Note(flags_note(name, &c)));
            Ok(Some(c))
        }
        (true, None) => Err(no_map(files.cfg)),
        (false, Some(_)) => Err(input(format!(
            "{}: no {} section, but the graph has coverage flags: the binary is not built from --cfg's instrumented IR",
            binary_name(files),
            native::BOOLS
        ))),
        (false, None) => {
            sink.push(Diagnostic::Warning(format!(
                "{}: no coverage flags (build with -fsanitize-coverage=func,inline-bool-flag,pc-table for them); only the crash stack is used",
                binary_name(files)
            )));
            Ok(None)
        }
    }
}

/// The crash stack unwound from the core `name`, innermost first (None,
/// with a warning, when it cannot be unwound soundly).
/// The crash stack of a core, and each frame's physical frame number and
/// function symbol (by its address), when known.
type CoreStack = (Vec<SourceFrame>, Vec<Option<(u32, String)>>);

fn core_stack(
    core: &Core,
    bin: &Binary,
    base: u64,
    name: &str,
    sink: &mut Vec<Diagnostic>,
) -> Option<CoreStack> {
    match native::unwind(core, bin, base) {
        Ok(native::Unwound { frames, notes }) => {
            for n in notes {
                sink.push(Diagnostic::Warning(format!("{name}: {n}")));
            }
            // As for backtraces: an inlined call is no call in the
            // graph (the unwinder lists inlined frames with the pc
            // of the frame they are inlined in).
            let (frames, note) = merge_inlined_by_address(frames);
            if let Some(n) = note {
                sink.push(Diagnostic::Warning(format!("{name}: {n}")));
            }
            let (frames, note) = crate::backtrace::cut_signal_handler_frames(frames);
            if let Some(n) = note {
                sink.push(Diagnostic::Warning(format!("{name}: {n}")));
            }
            let phys = frames
                .iter()
                .map(|f| {
                    let func = f.address.and_then(|a| bin.func_at(a))?;
                    Some((f.index?, func.name.clone())).filter(|_| !f.runtime)
                })
                .collect();
            let frames = frames
                .into_iter()
                .enumerate()
                .map(|(i, mut f)| {
                    f.index = Some(i as u32);
                    f.to_source_frame()
                })
                .collect();
            Some((frames, phys))
        }
        Err(e) => {
            sink.push(Diagnostic::Warning(format!(
                "{e}; the crash stack is not used"
            )));
            None
        }
    }
}

fn flags_note(name: &str, c: &FlagConstraints) -> String {
    let mut s = format!("{name}: {} coverage flags set, {} clear", c.set, c.clear);
    if c.unknown > 0 {
        s += &format!(
            ", {} not used (their pc-table slots were never relocated: blocks with no code in the binary)",
            c.unknown
        );
    }
    s
}

/// A set flag in code the graph cannot reach from the start: the graph is
/// not of this program, or misses control flow. Impossible, naming the
/// flag.
fn check_reachable(
    g: &Icfg,
    map: &SancovMap,
    c: &FlagConstraints,
    name: &str,
) -> Result<(), ImageError> {
    let mut seen = vec![false; g.num_nodes()];
    let mut stack = vec![g.start()];
    seen[g.start().index()] = true;
    while let Some(n) = stack.pop() {
        for (s, _) in g.succs(n) {
            if !seen[s.index()] {
                seen[s.index()] = true;
                stack.push(s);
            }
        }
    }
    let ran = c
        .ran
        .iter()
        .map(|t| t.entries[0].nodes()[0])
        .chain(c.ran_somewhere.iter().copied());
    for (n, &i) in ran.zip(&c.ran_flags) {
        if !seen[n.index()] {
            let f = &map.flags[i];
            return Err(ImageError::Impossible(format!(
                "{name}: coverage flag {i} (function `{}`, block {}, node {}) is set, but the graph says that code cannot run: the flags are not of this program, or the graph misses control flow that reaches it (constructors, signal and atexit handlers, threads are not on the graph's paths from the start)",
                f.function,
                f.block,
                g.ext_id(n)
            )));
        }
    }
    Ok(())
}
