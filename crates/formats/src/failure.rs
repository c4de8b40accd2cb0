//! One [`Report`] from every failure input: a report file, a backtrace, a
//! core dump with its binary, a raw coverage-flag dump, and a log.
//!
//! [`assemble`] is what every analysis command runs between reading the
//! graph and solving. The inputs combine in a fixed order:
//!
//! 1. the report file (csi-grissom JSON, postmortem's JSON or a Sentry
//!    event, told apart by their keys) gives the base report;
//! 2. a core's (or a minidump's) unwound stack (when no backtrace is given) replaces its
//!    crash and stack; a core's or a dump's coverage flags add `obsYes`
//!    and `obsNo` constraints (when the core has several threads, a set
//!    flag may be another thread's: it only adds its node to
//!    `ran_somewhere`, Yes after recovery, no constraint on the path);
//!    a core's variables add `values` and its stack residue `residue`
//!    (with several threads, `residue_somewhere`: like a set flag, but
//!    dropped where the labels contradict it);
//! 3. a backtrace replaces the crash and stack (with a warning when the
//!    report had them);
//! 4. a log adds one ordered trace;
//! 5. `stack_only` then drops every observation.
//!
//! Frames, selectors and log lines that match nothing are warnings
//! ([`Diagnostic::Warning`]), never errors: their constraints are left
//! out or widened, so answers stay sound. [`assemble`] returns them in
//! order with the report ([`Assembled`]).

use crate::any_report::read_any_report_limited;
use crate::backtrace::{locator, read_backtrace_path_limited};
use crate::image::buildcheck::BuildMismatch;
use crate::image::open::{Found, Prepared};
use crate::image::residue;
use crate::image::sancov::SancovMap;
use crate::input::{read_bounded, Limit};
use crate::logs::{LogConfig, LogMatch, LogMatcher, LogWarning};
use crate::vars::{ValueUse, VarMap};
use postmortem_core::locate::{Located, PathMap};
use postmortem_core::report::NodeSet;
use postmortem_core::{Icfg, NodeId, Report};
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// The failure inputs, as files. At least one of them should be given;
/// with none, the report is empty (every path to any node is consistent).
#[derive(Clone, Copy, Default)]
pub struct FailureFiles<'a> {
    /// The graph's file, only to name it in messages.
    pub cfg: Option<&'a Path>,
    /// A report: csi-grissom JSON, postmortem JSON or a Sentry event.
    pub report: Option<&'a Path>,
    /// A backtrace (gdb, lldb, sanitizer, Rust panic).
    pub backtrace: Option<&'a Path>,
    /// A core dump of the crash (needs `binary`); a minidump given here
    /// is told by its magic and read as one.
    pub core: Option<&'a Path>,
    /// A minidump of the crash (Breakpad or Crashpad format; needs
    /// `binary`): read into the same view as a core (see
    /// [`crate::image::minidump`]).
    pub minidump: Option<&'a Path>,
    /// The crashed program's ELF binary.
    pub binary: Option<&'a Path>,
    /// SanitizerCoverage flags as raw bytes, one per flag.
    pub sancov_flags: Option<&'a Path>,
    /// The program's log.
    pub log: Option<&'a Path>,
}

/// How the failure inputs are read.
#[derive(Clone)]
pub struct FailureOptions {
    /// Path prefix rewrites between the failure data and the graph.
    pub path_map: PathMap,
    /// The printf-like logging functions, for the log.
    pub log_config: LogConfig,
    /// Keep only the crash and the stack (grissom's `-stackonly`).
    pub stack_only: bool,
    /// Do not use variables' values from a core (`--no-values`).
    pub no_values: bool,
    /// Split the variables whose value the report does not give into the
    /// cases their branch tests tell apart (see [`crate::correlate`]):
    /// `Some(true)` (`--correlations`), `Some(false)`
    /// (`--no-correlations`), or `None`: only when there is no core or
    /// minidump (whose values decide what the cases would, at a cost).
    /// Never with `no_values`.
    pub correlations: Option<bool>,
    /// Do not use a core's stack residue (`--no-residue`; see
    /// [`crate::image::residue`]).
    pub no_residue: bool,
    /// Refuse a `--binary` that is not of the graph's build (see
    /// [`crate::image::buildcheck`]); false (`--no-build-check`): only warn.
    pub build_check: bool,
    /// The most bytes a report, a backtrace or a log may have
    /// ([`crate::input::DEFAULT_TEXT_LIMIT`] by default).
    pub max_input: u64,
    /// Where the crashed machine's libraries are (`--sysroot`; see
    /// [`crate::image::native::Core::sysroot`]).
    pub sysroot: Option<std::path::PathBuf>,
}

impl Default for FailureOptions {
    fn default() -> FailureOptions {
        FailureOptions {
            path_map: PathMap::default(),
            log_config: LogConfig::default(),
            stack_only: false,
            no_values: false,
            correlations: Some(false),
            no_residue: false,
            build_check: true,
            max_input: crate::input::DEFAULT_TEXT_LIMIT,
            sysroot: None,
        }
    }
}

/// Something [`assemble_with`] finds on the way ([`assemble`] collects
/// them into an [`Assembled`]).
pub(crate) enum Event<'a> {
    /// A part of the input that was left out or widened.
    Warning(String),
    /// Information (how many coverage flags were set).
    Note(String),
    /// What became of every variable's value read from the core (see
    /// [`crate::vars::constraints`]).
    Values(&'a [ValueUse]),
    /// What the core's stack residue gave (see [`crate::image::residue`]).
    Residue(&'a ResidueInfo),
    /// A log (or a report's log) was matched against the graph's logging
    /// calls: `source` names it (for `--explain-log`-style output).
    LogMatched {
        /// The file the log came from.
        source: &'a str,
        /// The match.
        matched: &'a LogMatch,
    },
    /// What to add to an answer that the report is impossible.
    ImpossibleHint(&'a str),
    /// What killed the process, with the variables that held the bad
    /// value.
    Fault(&'a crate::image::fault::Fault),
    /// The graph's lines on which the binary has no code.
    NoCode(&'a [(postmortem_core::FileId, u32)]),
}

pub use crate::error::Diagnostic;

/// What [`assemble`] found: the report, and what the writers show beside
/// the labels.
#[derive(Clone, Debug, Default)]
pub struct Assembled {
    /// The report over the graph.
    pub report: Report,
    /// What became of every variable's value read from the core.
    pub values: Vec<ValueUse>,
    /// What the core's stack residue gave.
    pub residue: Option<ResidueInfo>,
    /// Every log matched (its source's name, the match).
    pub logs: Vec<(String, LogMatch)>,
    /// Warnings and notes, in order.
    pub diagnostics: Vec<Diagnostic>,
    /// What to add to an answer that the report is impossible (the
    /// likely cause the inputs show).
    pub impossible_hint: Option<String>,
    /// What killed the process, when a core or minidump says
    /// ([`crate::image::fault`]).
    pub fault: Option<crate::image::fault::Fault>,
    /// The graph's lines on which `--binary` has no code (None: no
    /// binary's line table read; [`crate::image::no_code`]).
    pub no_code: Option<Vec<(postmortem_core::FileId, u32)>>,
}

fn image_files<'a>(files: &FailureFiles<'a>) -> crate::image::open::ImageFiles<'a> {
    crate::image::open::ImageFiles {
        cfg: files.cfg,
        binary: files.binary,
        core: files.core,
        minidump: files.minidump,
        sancov_flags: files.sancov_flags,
        backtrace_given: files.backtrace.is_some(),
    }
}

fn image_options(opts: &FailureOptions) -> crate::image::open::ImageOptions<'_> {
    crate::image::open::ImageOptions {
        path_map: &opts.path_map,
        build_check: opts.build_check,
        no_residue: opts.no_residue,
        sysroot: opts.sysroot.as_deref(),
    }
}

/// Why [`assemble`] gave no report.
#[derive(Debug)]
pub enum AssembleError {
    /// Unreadable, malformed or mismatched input (a core of another
    /// binary, a graph without a flag map, ...).
    Input(String),
    /// The inputs contradict the graph: a coverage flag is set in code the
    /// graph says cannot run.
    Impossible(String),
    /// The binary (`--binary`, named) is not of the graph's build.
    NotTheBuild(String, BuildMismatch),
}

impl fmt::Display for AssembleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AssembleError::Input(m) | AssembleError::Impossible(m) => f.write_str(m),
            AssembleError::NotTheBuild(binary, m) => write!(f, "{binary}: {m}"),
        }
    }
}

impl std::error::Error for AssembleError {}

fn input(e: impl fmt::Display) -> AssembleError {
    AssembleError::Input(e.to_string())
}

/// How many warnings of one kind (unmatched log lines) are passed on.
const MAX_SIMILAR: usize = 20;

/// Reads every failure input given in `files` against the graph `g` and
/// combines them into one report, in the order the module doc gives.
/// `flag_map` is the graph's coverage flag map (from the LLVM front-end),
/// needed for coverage flags. Returns the report with what else was found
/// ([`Assembled`]: values, residue, logs, warnings and notes in order, a
/// hint for an impossible answer).
pub fn assemble(
    g: &Icfg,
    flag_map: Option<&SancovMap>,
    var_map: Option<&VarMap>,
    files: &FailureFiles<'_>,
    opts: &FailureOptions,
) -> Result<Assembled, AssembleError> {
    assemble_prepared(g, flag_map, var_map, files, opts, Prepared::default())
}

/// What [`assemble`] reads of `files` without the graph (the binary, its
/// line tables, the core's stack residue): to read while the graph loads,
/// then give to [`assemble_prepared`]. Nothing when there is no binary.
pub fn prepare(files: &FailureFiles<'_>, opts: &FailureOptions) -> Prepared {
    Prepared::read(&image_files(files), &image_options(opts))
}

/// [`assemble`], with what [`prepare`] read of the same files.
pub fn assemble_prepared(
    g: &Icfg,
    flag_map: Option<&SancovMap>,
    var_map: Option<&VarMap>,
    files: &FailureFiles<'_>,
    opts: &FailureOptions,
    pre: Prepared,
) -> Result<Assembled, AssembleError> {
    let mut out = Assembled::default();
    let mut sink = |e: Event<'_>| match e {
        Event::Warning(w) => out.diagnostics.push(Diagnostic::Warning(w)),
        Event::Note(n) => out.diagnostics.push(Diagnostic::Note(n)),
        Event::Values(v) => out.values = v.to_vec(),
        Event::Residue(r) => out.residue = Some(r.clone()),
        Event::LogMatched { source, matched } => {
            out.logs.push((source.to_string(), matched.clone()))
        }
        Event::ImpossibleHint(h) => out.impossible_hint = Some(h.to_string()),
        Event::Fault(f) => out.fault = Some(f.clone()),
        Event::NoCode(v) => out.no_code = Some(v.to_vec()),
    };
    let report = assemble_with(g, flag_map, var_map, files, opts, pre, &mut sink)?;
    out.report = report;
    Ok(out)
}

/// [`assemble`], what it finds sent to `sink` as it goes.
fn assemble_with(
    g: &Icfg,
    flag_map: Option<&SancovMap>,
    var_map: Option<&VarMap>,
    files: &FailureFiles<'_>,
    opts: &FailureOptions,
    pre: Prepared,
    sink: &mut dyn FnMut(Event<'_>),
) -> Result<Report, AssembleError> {
    let mut report = match files.report {
        Some(path) => report_file(g, path, opts, sink)?,
        None => Report::default(),
    };
    let vars = if opts.no_values { None } else { var_map };
    let native = open_image(g, flag_map, vars, files, opts, pre, sink)?;
    let image_name = files
        .core
        .or(files.minidump)
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    // The core's stack, when it is the report's: each report frame's
    // callee as a position in the core's frames.
    let mut core_callees: Option<Vec<Option<usize>>> = None;
    if let (Some(frames), None) = (&native.frames, files.backtrace) {
        let located = locator(g, opts.path_map.clone()).locate_stack(frames);
        if !located.report.stack.is_empty() {
            core_callees = Some(located.callee_frames.clone());
        }
        take_stack(&mut report, located, &image_name, false, sink);
    }
    if let Some(c) = native.flags {
        report.obs_yes.extend(c.ran);
        report.obs_no.extend(c.not_ran);
        report.ran_somewhere.extend(c.ran_somewhere);
        report.ran_somewhere.sort_unstable();
        report.ran_somewhere.dedup();
    }
    if let Some(path) = files.backtrace {
        let bt = read_backtrace_path_limited(path, opts.max_input).map_err(input)?;
        let name = path.display().to_string();
        for n in &bt.notes {
            sink(Event::Warning(format!("{name}: {n}")));
        }
        let located = locator(g, opts.path_map.clone()).locate_stack(&bt.source_frames());
        take_stack(&mut report, located, &name, true, sink);
    }
    if let Some(path) = files.log {
        if let Some(t) = log_file(g, path, opts, sink)? {
            report.obs_yes.push(t);
        }
    }
    // The values read from the core, and what became of them.
    let mut read: Vec<ValueUse> = Vec::new();
    if let (Some(map), Some(observed)) = (vars, &native.values) {
        let local_frame = |o: &crate::vars::Observed| {
            local_frame(
                &native.frame_phys,
                &native.walked,
                core_callees.as_deref()?,
                o.frame?,
            )
        };
        let made = crate::vars::constraints(g, map, observed, report.crash.as_ref(), &local_frame);
        values_events(&image_name, map, observed.len(), &made, sink);
        report.values = made.values;
        report.frame_values = made.frame_values;
        read = made.uses;
    }
    // The variables whose value is not known, split into cases.
    let correlations = opts
        .correlations
        .unwrap_or(files.core.is_none() && files.minidump.is_none());
    if let (Some(map), true) = (vars, correlations) {
        let known: Vec<usize> = native.values.iter().flatten().map(|o| o.var).collect();
        report.cases = crate::correlate::cases(g, map, &known, report.crash.as_ref());
        if !report.cases.is_empty() {
            let name = files
                .cfg
                .map_or("the graph".into(), |p| p.display().to_string());
            sink(Event::Note(format!(
                "{name}: {} variables whose value is not known split into the cases their branch tests tell apart (those a test the labels decide leads to are staged; --no-correlations: off)",
                report.cases.len()
            )));
        }
    }
    if let Some(v) = &native.no_code {
        sink(Event::NoCode(v));
    }
    if let Some(mut f) = native.fault.clone() {
        f.operands = operand_suspects(g, &f, vars, report.crash.as_ref());
        (
            f.suspects,
            f.suspect_values,
            (f.index_values, f.bound_values),
        ) = suspects(g, &f, &read, vars, report.crash.as_ref());
        f.suspects
            .extend(f.operands.iter().map(|o| o.shown.clone()));
        // The copies of a function inlined more than once hold a
        // variable each, read apart, that read the same: named once
        // (each still traced: `suspect_values` keeps them all).
        let mut seen = std::collections::HashSet::new();
        f.suspects.retain(|s| seen.insert(s.clone()));
        sink(Event::Fault(&f));
    }
    if let Some(found) = &native.residue {
        let (sets, somewhere, info) = residue_sets(g, opts, found);
        sink(Event::Note(residue_note(
            &image_name,
            &info,
            found.threads,
            sets.len(),
            somewhere.len(),
        )));
        report.residue = sets;
        report.residue_somewhere = somewhere;
        sink(Event::Residue(&info));
    }
    if opts.stack_only {
        report = report.stack_only();
    }
    Ok(report)
}

/// [`crate::image::open::Image::open`] on the failure's files, its
/// diagnostics told.
fn open_image(
    g: &Icfg,
    flag_map: Option<&SancovMap>,
    vars: Option<&VarMap>,
    files: &FailureFiles<'_>,
    opts: &FailureOptions,
    pre: Prepared,
    sink: &mut dyn FnMut(Event<'_>),
) -> Result<crate::image::open::Image, AssembleError> {
    use crate::image::open::{Image, ImageError};
    let (image, diagnostics) = Image::open_prepared(
        g,
        flag_map,
        vars,
        &image_files(files),
        &image_options(opts),
        pre,
    )
    .map_err(|e| match e {
        ImageError::Input(m) => AssembleError::Input(m),
        ImageError::Impossible(m) => AssembleError::Impossible(m),
        ImageError::NotTheBuild(n, m) => AssembleError::NotTheBuild(n, m),
    })?;
    for d in diagnostics {
        sink(match d {
            Diagnostic::Warning(w) => Event::Warning(w),
            Diagnostic::Note(n) => Event::Note(n),
        });
    }
    Ok(image)
}

/// A `--report` file read into a report over `g`, its warnings and log
/// matches told.
fn report_file(
    g: &Icfg,
    path: &Path,
    opts: &FailureOptions,
    sink: &mut dyn FnMut(Event<'_>),
) -> Result<Report, AssembleError> {
    let (_, mapped) =
        read_any_report_limited(path, opts.max_input, g, &opts.path_map, &opts.log_config)
            .map_err(input)?;
    let name = path.display().to_string();
    if let Some(h) = &mapped.impossible_hint {
        sink(Event::ImpossibleHint(h));
    }
    for w in &mapped.warnings {
        sink(Event::Warning(format!("{name}: {w}")));
    }
    for w in &mapped.notes {
        sink(Event::Warning(format!("{name}: {w}")));
    }
    if let Some(m) = &mapped.log {
        log_events(sink, &name, m);
    }
    Ok(mapped.report)
}

/// A `--log` file matched against `g`'s logging calls: its trace, if any
/// line matched.
fn log_file(
    g: &Icfg,
    path: &Path,
    opts: &FailureOptions,
    sink: &mut dyn FnMut(Event<'_>),
) -> Result<Option<postmortem_core::Trace>, AssembleError> {
    let name = path.display().to_string();
    let limit = Limit::new(opts.max_input, "log", "--max-input-size");
    let bytes = read_bounded(path, &limit).map_err(input)?;
    // A file of another slot: binary data is refused, text that looks
    // like a backtrace or source is only warned about (a log may hold
    // such lines).
    let head = &bytes[..bytes.len().min(4096)];
    if let Some(hint) = crate::input::kind_hint(head) {
        if crate::input::is_binary_kind(head) {
            return Err(input(format!("{name}: not a log: this looks like {hint}")));
        }
        sink(Event::Warning(format!(
            "{name}: this log looks like {hint}; it is matched as a log"
        )));
    }
    if let Some(w) = buffering_warning(&bytes) {
        sink(Event::Warning(format!("{name}: {w}")));
    }
    let text = String::from_utf8_lossy(&bytes);
    if let crate::logs::LogStream::Function(f) = &opts.log_config.stream {
        if !opts.log_config.loggers.iter().any(|l| &l.name == f) {
            return Err(input(format!(
                "--log-stream fn:{f}: `{f}` is not a logging function (name it with --log-function {f}:ARG, ARG its format argument counting from 1)"
            )));
        }
    }
    let m = LogMatcher::new(g, &opts.log_config).match_text(&text);
    log_events(sink, &name, &m);
    Ok(m.trace)
}

/// The note on the values read from the image `name`, the warnings on
/// wild writes, and the values' fates.
fn values_events(
    name: &str,
    map: &VarMap,
    read: usize,
    made: &crate::vars::Constraints,
    sink: &mut dyn FnMut(Event<'_>),
) {
    let used = made.values.len() + made.frame_values.len();
    sink(Event::Note(format!(
        "{name}: {read} variable values read, {used} used as evidence ({} variables left out by the front-end: {})",
        map.left_out.values().sum::<usize>(),
        map.left_out
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    )));
    // One note per text: the copies of a function inlined more than once
    // hold a variable each.
    let mut said = std::collections::HashSet::new();
    for u in &made.uses {
        if let Some(why) = &u.unused {
            if why.contains("wild write") {
                let line = format!(
                    "{name}: `{}` = {} ({}): {why}; its value is not used",
                    u.name, u.value, u.place
                );
                if !said.insert(line.clone()) {
                    continue;
                }
                // A global's value no store and not its initial value
                // can leave is memory changed behind the program's
                // back; a local's may only be uninitialised.
                sink(if u.place == "global" {
                    Event::Warning(line)
                } else {
                    Event::Note(line)
                });
            }
        }
    }
    sink(Event::Values(&made.uses));
}

/// The note on what the stack residue of the image `name` gave.
fn residue_note(
    name: &str,
    info: &ResidueInfo,
    threads: usize,
    sets: usize,
    somewhere: usize,
) -> String {
    match &info.off {
        Some(why) => format!("{name}: stack residue not used: {why}"),
        None if info.some_thread => format!(
            "{name}: stack residue: {} words matched after-call addresses; {threads} threads, so each of the {somewhere} call sites used says only that it ran in some thread",
            info.matched
        ),
        None => format!(
            "{name}: stack residue: {} words matched after-call addresses, {sets} call sites used as evidence",
            info.matched
        ),
    }
}

/// Puts a located stack (from a core, a minidump or a backtrace named
/// `name`) in place of the report's crash and stack: the stack when it
/// found one (or the report had none), the crash when it found one.
/// `warn` says so when something the report file gave is replaced.
fn take_stack(
    report: &mut Report,
    located: Located,
    name: &str,
    warn: bool,
    sink: &mut dyn FnMut(Event<'_>),
) {
    for w in &located.warnings {
        sink(Event::Warning(format!("{name}: {w}")));
    }
    let new = located.report;
    let replaced = (!new.stack.is_empty() && !report.stack.is_empty())
        || (new.crash.is_some() && report.crash.is_some());
    if warn && replaced {
        sink(Event::Warning(format!(
            "the crash and stack of the report are replaced by those of the backtrace {name}"
        )));
    }
    if !new.stack.is_empty() || report.stack.is_empty() {
        report.stack = new.stack;
        report.stack_gaps = new.stack_gaps;
        report.sibling_gaps = new.sibling_gaps;
    }
    if new.crash.is_some() {
        report.crash = new.crash;
    }
}

/// What an empty log, or one that does not end with a newline, suggests:
/// the program's output went to a file or a pipe, so it was fully
/// buffered, and the crash lost what was still in the buffer (all of it,
/// for a short run) — not "its last lines".
pub fn buffering_warning(log: &[u8]) -> Option<String> {
    const FIX: &str = "run the program as `stdbuf -oL ./prog > out.log` (line-buffered output) to keep every line printed before the crash";
    if log.is_empty() {
        Some(format!(
            "the log is empty: output to a file or a pipe is fully buffered, and a crash loses all of it that was not yet written; {FIX}"
        ))
    } else if !log.ends_with(b"\n") {
        Some(format!(
            "the log does not end with a newline: its last line may be cut short (it is left out), and the lines printed after it were lost with the output buffer at the crash; {FIX}"
        ))
    } else {
        None
    }
}

/// A log's warnings (at most [`MAX_SIMILAR`] unmatched lines, then their
/// count) and the match itself.
fn log_events(sink: &mut dyn FnMut(Event<'_>), source: &str, m: &LogMatch) {
    let mut unmatched = 0;
    for w in &m.warnings {
        if matches!(w, LogWarning::Unmatched { .. }) {
            unmatched += 1;
            if unmatched > MAX_SIMILAR {
                continue;
            }
        }
        sink(Event::Warning(format!("{source}: {w}")));
    }
    if unmatched > MAX_SIMILAR {
        sink(Event::Warning(format!(
            "{source}: {} more log lines match no format string (see --explain-log)",
            unmatched - MAX_SIMILAR
        )));
    }
    let summary = m.summary();
    if summary.lines > 0 {
        sink(Event::Note(format!(
            "{source}: log ({}): {summary}",
            m.stream
        )));
    }
    sink(Event::LogMatched { source, matched: m });
}

/// The Local frame (numbered as `postmortem_core::local::FrameLabels`)
/// of the core's physical frame `phys`, given each report frame's callee
/// position in the core's frames (`callees`), each core frame's physical
/// number and function (`frame_phys`) and those of the frames whose
/// locals were read (`walked`). Only when the frames whose
/// locals were read are, one for one, the unwound frames of the same
/// numbers and functions, and `phys` is one frame there: a value is never
/// put in another activation's frame.
fn local_frame(
    frame_phys: &[Option<(u32, String)>],
    walked: &[(u32, String)],
    callees: &[Option<usize>],
    phys: u32,
) -> Option<usize> {
    let position = |p: u32| -> Option<usize> {
        let mut at = frame_phys
            .iter()
            .enumerate()
            .filter(|(_, x)| x.as_ref().is_some_and(|x| x.0 == p));
        match (at.next(), at.next()) {
            (Some((i, _)), None) => Some(i),
            _ => None,
        }
    };
    let aligned = walked.iter().all(|(p, func)| {
        position(*p).is_some_and(|i| frame_phys[i].as_ref().is_some_and(|x| &x.1 == func))
    });
    if !aligned {
        return None;
    }
    let i = position(phys)?;
    if let Some(j) = callees.iter().position(|&k| k == Some(i)) {
        return Some(j + 1);
    }
    (callees.first().copied().flatten().map(|k| k + 1) == Some(i)).then_some(0)
}

/// What the stack residue gave, for the JSON output's `residue` section.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ResidueInfo {
    /// Why no residue was used at all, if so.
    pub off: Option<String>,
    /// Call instructions decoded in the binary.
    pub calls_decoded: usize,
    /// After-call addresses usable as evidence.
    pub usable_addresses: usize,
    /// Call sites of the binary left out, per reason.
    pub excluded_sites: BTreeMap<String, usize>,
    /// Stack words read.
    pub words: usize,
    /// Stack words equal to a usable after-call address.
    pub matched: usize,
    /// Matched words not used, per reason.
    pub dropped_words: BTreeMap<String, usize>,
    /// Each distinct after-call address found: its call site and what
    /// became of it.
    pub sites: Vec<ResidueSite>,
    /// A multi-threaded process: each call site used only "ran in some
    /// thread" (`Report::residue_somewhere`), not a constraint on the
    /// crashing path.
    pub some_thread: bool,
}

/// One after-call address found on the stack.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ResidueSite {
    /// The return address (file vaddr of the binary), hex.
    pub address: String,
    /// The stack slot it was found in, hex.
    pub slot: String,
    /// What the call calls.
    pub callee: String,
    /// The call's location.
    pub at: String,
    /// The graph's call nodes it may be (one of them ran), empty if
    /// unused.
    pub nodes: Vec<String>,
    /// Why it is not used, if so.
    pub unused: Option<String>,
}

/// The residue's node sets ("one of these ran") and its account. In a
/// multi-threaded process (see `residue`'s guard 7), the call sites of
/// one node each as "ran in some thread" (the second list) instead, and
/// those of several nodes left out.
fn residue_sets(
    g: &Icfg,
    opts: &FailureOptions,
    f: &Found,
) -> (Vec<NodeSet>, Vec<NodeId>, ResidueInfo) {
    let some_thread = f.threads > 1;
    let mut info = ResidueInfo {
        some_thread,
        off: f.scan.off.clone(),
        calls_decoded: f.sites.calls,
        usable_addresses: f.sites.usable(),
        excluded_sites: f
            .sites
            .excluded
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
        words: f.scan.words,
        matched: f.scan.matched,
        dropped_words: f
            .scan
            .dropped
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
        sites: Vec::new(),
    };
    let loc = locator(g, opts.path_map.clone());
    let mut sets = Vec::new();
    let mut somewhere = Vec::new();
    for (h, frames) in &f.hits {
        let (program, library) = match &h.callee {
            residue::Callee::Program(n) => (Some(n.as_str()), None),
            residue::Callee::Library(n) => (None, Some(n.as_str())),
            residue::Callee::Indirect | residue::Callee::Unknown => (None, None),
        };
        let mut site = ResidueSite {
            address: format!("{:#x}", h.after),
            slot: format!("{:#x}", h.slot),
            callee: match &h.callee {
                residue::Callee::Program(n) => n.clone(),
                residue::Callee::Library(n) => format!("{n} (library)"),
                residue::Callee::Indirect => "(indirect)".into(),
                residue::Callee::Unknown => "(unknown)".into(),
            },
            at: frames.first().map(|fr| fr.label()).unwrap_or_default(),
            nodes: Vec::new(),
            unused: None,
        };
        site.unused = if frames.len() != 1 {
            Some("the call is in inlined code".into())
        } else if h.callee == residue::Callee::Unknown {
            Some("the call's target is no function of the binary nor a PLT stub".into())
        } else {
            let nodes = loc.residue_call_sites(&frames[0].to_source_frame(), program, library);
            match NodeSet::new(nodes) {
                Some(set) if some_thread && set.single().is_none() => Some(format!(
                    "{} threads: only a call site of one node says which node ran in some thread, and this is one of {}",
                    f.threads,
                    set.nodes().len()
                )),
                Some(set) => {
                    site.nodes = set
                        .nodes()
                        .iter()
                        .map(|&n| g.ext_id(n).to_string())
                        .collect();
                    match set.single() {
                        Some(n) if some_thread => somewhere.push(n),
                        _ => sets.push(set),
                    }
                    None
                }
                None => Some(
                    "no call node of the graph on that line and column calls that callee".into(),
                ),
            }
        };
        info.sites.push(site);
    }
    somewhere.sort_unstable();
    somewhere.dedup();
    (sets, somewhere, info)
}

/// The variables of the crash frame, and the globals, whose value the
/// faulting instruction's operand registers hold: pointers for a memory
/// access, integers for a divisor. By value alone, so "may be": another
/// variable, or a value computed from one, can hold the same.
/// The crash statement's accesses (divisions, for a division fault)
/// whose pointer (divisor) came from a struct field or a call
/// ([`crate::vars::VarMap::derefs`]), with the value the faulting
/// instruction used: its memory operand's base register, or the divisor.
fn operand_suspects(
    g: &Icfg,
    f: &crate::image::fault::Fault,
    vars: Option<&crate::vars::VarMap>,
    crash: Option<&postmortem_core::report::NodeSet>,
) -> Vec<crate::image::fault::OperandSuspect> {
    let (Some(map), Some(crash)) = (vars, crash) else {
        return Vec::new();
    };
    let mut out: Vec<crate::image::fault::OperandSuspect> = Vec::new();
    if f.null_in_library() {
        // The crash statement's calls' arguments that come from a field
        // or a call: one of them may be the NULL.
        for (callee, calls) in &map.calls {
            for c in calls {
                let n = postmortem_core::NodeId::new(c.site as usize);
                if !crash.contains(n) {
                    continue;
                }
                for (i, (_, from)) in c.args.iter().enumerate() {
                    let what = match from {
                        Some(crate::vars::Origin::Field(k)) => {
                            format!("a load of {}", crate::origins::field_name(k))
                        }
                        Some(crate::vars::Origin::Call(c)) => format!("the result of `{c}`"),
                        _ => continue,
                    };
                    let from = from.clone().expect("a field or a call");
                    if out.iter().any(|o| o.from == from) {
                        continue;
                    }
                    out.push(crate::image::fault::OperandSuspect {
                        node: n,
                        from,
                        value: 0,
                        bytes: 8,
                        shown: format!(
                            "{what} = 0x0 (argument {} of `{callee}` at {})",
                            i + 1,
                            crate::vars::where_is(g, n)
                        ),
                        dangling: false,
                    });
                }
            }
        }
        return out;
    }
    let Some(ins) = f.instruction.as_ref() else {
        return Vec::new();
    };
    let div = f.signal == "SIGFPE";
    let call = ins.target.is_some();
    let (value, bytes) = match (div, ins.divisor, ins.target, ins.registers.first()) {
        (true, Some(d), _, _) => (d, 4),
        (false, _, Some(t), _) => (t, 8),
        (false, _, _, Some(r)) => (r.1, 8),
        _ => return Vec::new(),
    };
    for d in &map.derefs {
        let n = postmortem_core::NodeId::new(d.node as usize);
        if d.div != div
            || d.call != call
            || !crash.contains(n)
            || out.iter().any(|o| o.from == d.from)
        {
            continue;
        }
        let what = match &d.from {
            crate::vars::Origin::Field(k) => {
                format!("a load of {}", crate::origins::field_name(k))
            }
            crate::vars::Origin::Call(c) => format!("the result of `{c}`"),
            crate::vars::Origin::OutLocal(i) => match map.out_locals.get(*i as usize) {
                Some(o) => format!("`{}`", o.name),
                None => continue,
            },
            _ => continue,
        };
        let shown = if div {
            format!(
                "{what} = {value} (the divisor at {})",
                crate::vars::where_is(g, n)
            )
        } else if call {
            format!(
                "{what} = {value:#x} (the function pointer called at {})",
                crate::vars::where_is(g, n)
            )
        } else {
            format!(
                "{what} = {value:#x} (the pointer at {})",
                crate::vars::where_is(g, n)
            )
        };
        out.push(crate::image::fault::OperandSuspect {
            node: n,
            from: d.from.clone(),
            value,
            bytes,
            shown,
            dangling: f.dangling() == Some(value),
        });
    }
    out
}

/// Of the suspects' values ([`crate::image::fault::Fault::suspect_values`]):
/// those that are indexes past an array's end, and those that are their
/// bounds.
type IndexRoles = (Vec<usize>, Vec<usize>);

fn suspects(
    g: &Icfg,
    f: &crate::image::fault::Fault,
    uses: &[ValueUse],
    vars: Option<&crate::vars::VarMap>,
    crash: Option<&postmortem_core::report::NodeSet>,
) -> (Vec<String>, Vec<usize>, IndexRoles) {
    // In a library at an address near 0: a NULL the program passed, held
    // by a pointer the crash statement (the call) loads.
    let want = f.operand_values();
    let divides = f.signal == "SIGFPE";
    // In a library: a pointer the program passed, within a page below the
    // faulting address (NULL for an address near 0, `NULL + 1`, a buffer
    // read past its end).
    // A divisor read from memory: the variable read from that very
    // address, when one was (`idiv dword ptr [rbp-7Ch]`, a local's slot),
    // not another that holds the same value by chance.
    let divisor_at = f
        .instruction
        .as_ref()
        .and_then(|o| o.divisor_address)
        .filter(|&a| divides && uses.iter().any(|u| u.address == Some(a)));
    let matches = |u: &ValueUse| match f.library_fault() {
        Some(a) => u.shown.pointer && u.value <= a && a - u.value < 4096,
        None if divisor_at.is_some() => u.address == divisor_at,
        None => u.shown.pointer != divides && want.contains(&u.value),
    };
    // A variable the crash's statement does not load did not give the
    // faulting instruction its operand (an unoptimised build loads a
    // variable in each statement that uses it): another variable that
    // holds the same value by chance. Kept when its reads are not known.
    // A crash at a call (in the library it calls) loaded the arguments
    // just before, in the node before the call on its line.
    let at_crash = |n: postmortem_core::NodeId, c: &postmortem_core::report::NodeSet| {
        c.contains(n)
            || c.nodes().iter().any(|&k| {
                g.kind(k) == postmortem_core::NodeKind::CallSite
                    && g.preds(k).any(|(p, _)| p == n)
                    && g.lines(n).iter().any(|l| g.lines(k).contains(l))
            })
    };
    let read_at_crash = |u: &ValueUse| {
        let reads = vars.and_then(|m| m.vars.get(u.var)?.reads.as_ref());
        match (reads, crash) {
            (Some(r), Some(c)) => r
                .iter()
                .any(|&n| at_crash(postmortem_core::NodeId::new(n as usize), c)),
            _ => true,
        }
    };
    let mut out: Vec<(String, usize)> = uses
        .iter()
        .enumerate()
        .filter(|(_, u)| u.place.starts_with("frame #0 ") || u.place == "global")
        .filter(|(_, u)| matches(u))
        .filter(|(_, u)| read_at_crash(u))
        .map(|(i, u)| {
            (
                format!("`{}` = {} ({})", u.name, u.value_text(), u.place),
                i,
            )
        })
        .collect();
    // In a library, past a block: a size the crash statement passed that
    // no block has (negative as a signed number, or beyond any address
    // space: a length computed the wrong way round).
    if f.library_fault().is_some_and(|a| a >= 4096) {
        for (i, u) in uses.iter().enumerate() {
            let bits = 8 * u.shown.bytes;
            let absurd = crate::vars::signed(u.value, bits) < 0 || u.value > 1 << 48;
            if u.shown.pointer
                || bits < 32
                || !absurd
                || !u.place.starts_with("frame #0 ")
                || !read_at_crash(u)
                || out.iter().any(|(_, k)| *k == i)
            {
                continue;
            }
            out.push((
                format!(
                    "`{}` = {} ({}, a size passed to the library that no block has: {} as a signed number)",
                    u.name,
                    u.value_text(),
                    u.place,
                    crate::vars::signed(u.value, bits)
                ),
                i,
            ));
        }
    }
    let (mut indexes, mut bounds) = (Vec::new(), Vec::new());
    if let (Some(map), Some(c)) = (vars, crash) {
        for (s, i, index) in index_suspects(g, f, uses, map, &|n| at_crash(n, c)) {
            if out.iter().any(|(_, k)| *k == i) {
                continue;
            }
            if index {
                indexes.push(i);
            } else {
                bounds.push(i);
            }
            out.push((s, i));
        }
    }
    out.dedup_by(|a, b| a.0 == b.0);
    let (shown, values) = out.into_iter().unzip();
    (shown, values, (indexes, bounds))
}

/// The indexes of the crash statement's accesses, as suspects: for a
/// memory fault in the program through a pointer into the core's
/// memory, a variable of the crash frame whose value (plus the access's
/// constant) is not 0 and one of the faulting operand's registers holds,
/// an index past an array's end; for a fault in a library near NULL, the
/// index of an element the crash statement loaded (an element past the
/// filled ones, passed on). Each with the variables that the bounds of
/// the index in the access's loop compared it with (`i < n`: `n`, whose
/// value may be the wrong one), unless the pointer came from a field or
/// a call (a block allocated at run time, whose size is as likely wrong
/// as the bound). (text, use, whether an index rather than a bound.)
fn index_suspects(
    g: &Icfg,
    f: &crate::image::fault::Fault,
    uses: &[ValueUse],
    map: &crate::vars::VarMap,
    at_crash: &dyn Fn(postmortem_core::NodeId) -> bool,
) -> Vec<(String, usize, bool)> {
    let memory = f.instruction.as_ref().filter(|o| {
        matches!(f.signal.as_str(), "SIGSEGV" | "SIGBUS")
            && o.target.is_none()
            && o.divisor.is_none()
            && !o.base_unmapped
    });
    let regs: Vec<u64> = memory
        .map(|o| o.registers.iter().map(|r| r.1).collect())
        .unwrap_or_default();
    if memory.is_none() && !f.null_in_library() {
        return Vec::new();
    }
    let allocated = memory.is_some() && !f.operands.is_empty();
    // Before the analysis: every node may have run.
    let unknown = vec![postmortem_core::Label::Maybe; g.num_nodes()];
    let frame0 = |var: u32| {
        uses.iter()
            .enumerate()
            .filter(move |(_, u)| u.var == var as usize && u.place.starts_with("frame #0 "))
    };
    let mut out: Vec<(String, usize, bool)> = Vec::new();
    for iu in &map.indexes {
        let n = postmortem_core::NodeId::new(iu.node as usize);
        if !at_crash(n) {
            continue;
        }
        for (i, u) in frame0(iu.var) {
            let index = crate::vars::signed(u.value, 8 * u.shown.bytes).wrapping_add(iu.offset);
            let held = index != 0 && regs.contains(&(index as u64));
            if (memory.is_some() && !held) || out.iter().any(|(_, k, _)| *k == i) {
                continue;
            }
            out.push((
                format!(
                    "`{}` = {} ({}, the index at {})",
                    u.name,
                    u.value_text(),
                    u.place,
                    crate::vars::where_is(g, n)
                ),
                i,
                true,
            ));
            if allocated {
                continue;
            }
            for b in &map.bounds {
                let at = postmortem_core::NodeId::new(b.branch as usize);
                let crate::vars::Origin::Copy(y) = b.bound else {
                    continue;
                };
                if b.var != iu.var || !postmortem_core::cause::in_one_loop(g, &unknown, at, n) {
                    continue;
                }
                for (j, w) in frame0(y) {
                    if out.iter().any(|(_, k, _)| *k == j) {
                        continue;
                    }
                    out.push((
                        format!(
                            "`{}` = {} ({}, the bound of `{}` at {})",
                            w.name,
                            w.value_text(),
                            w.place,
                            u.name,
                            crate::vars::where_is(g, at)
                        ),
                        j,
                        false,
                    ));
                }
            }
        }
    }
    out
}
