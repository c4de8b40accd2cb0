//! The inputs every analysis command takes: a graph, the failure data
//! (a report, a backtrace, a log), and how to read them.
//!
//! The failure data are combined into one report by
//! [`postmortem_formats::failure::assemble`] (which says in what order);
//! this module only turns arguments into its inputs and prints what it
//! tells on the way (`postmortem: warning: ...`, `postmortem: note: ...`).

use crate::exit::{ms, Failure};
use crate::graph::load_graph_with_maps;
use clap::Args;
use postmortem_core::locate::{PathMap, PathMapError};
use postmortem_core::{Icfg, Report};
use postmortem_formats::failure::{
    assemble, assemble_prepared, prepare, AssembleError, Diagnostic, FailureFiles, FailureOptions,
    ResidueInfo,
};
use postmortem_formats::input::DEFAULT_TEXT_LIMIT;
use postmortem_formats::logs::{write_explain, LogConfig, LogStream, Logger};
use postmortem_formats::vars::ValueUse;
use postmortem_formats::write::output::Timings;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Reads a csi-grissom failure report against a graph.
pub fn load_report(path: &Path, g: &Icfg) -> Result<Report, Failure> {
    postmortem_formats::report_json::read_report_path(path, g).map_err(Failure::input)
}

fn path_map_rule(s: &str) -> Result<(String, String), PathMapError> {
    let mut m = PathMap::new();
    m.push_spec(s)?;
    Ok(m.rules()[0].clone())
}

/// The inputs of an analysis (`analyze`, `query`, `suggest`), as clap
/// parses them. What is derived from them is a method:
/// [`Inputs::report_name`], [`Inputs::path_map`], and the
/// [`assemble`] inputs [`Inputs::files`] and [`Inputs::options`].
#[derive(Args)]
#[command(group(clap::ArgGroup::new("failure").required(true).multiple(true).args(["report", "backtrace", "core", "minidump", "sancov_flags"])))]
pub struct Inputs {
    /// The control-flow graph: LLVM IR from clang-14 -g (`.ll`, `.bc`), a
    /// graph cache (`.pmcfg`), or csi-cc GraphML (optionally gzip-compressed).
    #[arg(long, value_name = "GRAPH")]
    pub cfg: PathBuf,
    /// The failure report: postmortem's own JSON (`stack`, `ran`,
    /// `not_ran`, `log`, by function, file and line), a Sentry event
    /// (`exception.values[].stacktrace.frames` as the stack, `breadcrumbs`
    /// messages as log lines) or the PLDI 2017 paper's csi-grissom JSON
    /// (see the README); the format is told by its keys.
    #[arg(long = "report", id = "report", value_name = "REPORT")]
    pub report_file: Option<PathBuf>,
    /// A backtrace of the crash, for the crash location and the stack:
    /// gdb or lldb `bt`, an AddressSanitizer / UBSan report, or a Rust
    /// panic backtrace (the format is detected).
    #[arg(long, value_name = "FILE")]
    pub backtrace: Option<PathBuf>,
    /// A core dump of the crash (ELF, Linux) of the program --binary: gives
    /// the crash stack (frame-pointer walk, unless --backtrace is given)
    /// and, for a build with -fsanitize-coverage=func|bb,inline-bool-flag,pc-table,
    /// the coverage flags (--cfg must then be that build's .ll/.bc). A
    /// minidump given here is recognised by its magic and read as with
    /// --minidump.
    #[arg(long, value_name = "CORE", requires = "binary")]
    pub core: Option<PathBuf>,
    /// A minidump of the crash (Breakpad / Crashpad format, Linux x86-64)
    /// of the program --binary, read like a core: the crashing thread's
    /// stack, its registers and whatever memory the dump holds (the flags
    /// and variables only where it holds them); its module's build id must
    /// be the binary's.
    #[arg(
        long,
        value_name = "FILE",
        requires = "binary",
        conflicts_with = "core"
    )]
    pub minidump: Option<PathBuf>,
    /// The crashed program's ELF binary (for --core, --minidump and
    /// --sancov-flags).
    #[arg(long, value_name = "PROG")]
    pub binary: Option<PathBuf>,
    /// Where the libraries of the machine that crashed are, for a core or
    /// minidump from another machine: a library the crashed process
    /// mapped as /lib/x/libc.so.6 is read from DIR/lib/x/libc.so.6, else
    /// DIR/libc.so.6 (as gdb's `set sysroot`). Its build id must be the
    /// crashed process's. Libraries unwind the frames of a crash in the C
    /// library and the callers of a callback (`qsort`'s comparison); by
    /// default they are read from this machine's paths.
    #[arg(long, value_name = "DIR")]
    pub sysroot: Option<PathBuf>,
    /// The coverage flags as raw bytes (one byte per flag, the memory of
    /// __start___sancov_bools..__stop___sancov_bools), for crash pipelines
    /// that keep no core; --cfg must be the instrumented .ll/.bc. With
    /// --binary, the flag order is checked against its pc table.
    #[arg(long = "sancov-flags", id = "sancov_flags", value_name = "FILE")]
    pub sancov_flags: Option<PathBuf>,
    /// The program's log (one printed line per line): each line is matched
    /// to the calls of printf-like functions whose constant format string
    /// can print it, and the lines form one ordered trace.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Rewrite path prefix FROM into TO before comparing paths of the
    /// backtrace or report with the graph's, and before reading sources
    /// (repeatable; the longest matching FROM wins).
    #[arg(long, value_name = "FROM=TO", value_parser = path_map_rule)]
    pub path_map: Vec<(String, String)>,
    /// Also treat NAME as a printf-like logging function whose format
    /// string is argument ARG (counting from 1), for --log (repeatable).
    #[arg(long, value_name = "NAME:ARG", value_parser = Logger::parse_spec)]
    pub log_function: Vec<Logger>,
    /// Which output --log holds: `any` (the default: any stream, or
    /// both mixed, as with `2>&1`), `stdout`, `stderr`, `global:NAME`
    /// (what the program wrote to the `FILE *` in global NAME) or
    /// `fn:NAME` (what calls of logging function NAME printed). Only the
    /// calls that may write there are matched: `printf` and `puts` write
    /// to stdout; `perror`, `err`, `warn` to stderr; `fprintf`, `fputs`
    /// and `dprintf` where their stream or descriptor argument says, and
    /// to any stream when it is not a global or a constant (a `FILE *`
    /// parameter may be stderr).
    #[arg(long, value_name = "STREAM", value_parser = LogStream::parse, default_value = "any")]
    pub log_stream: LogStream,
    /// Print which log line matched which call sites to stderr.
    #[arg(long)]
    pub explain_log: bool,
    /// Use only the crash and the stack; ignore what was seen to run or
    /// not to run (coverage, log lines: a report's obsYes and obsNo;
    /// grissom's -stackonly).
    #[arg(long)]
    pub stack_only: bool,
    /// Do not use the values of variables read from --core or --minidump
    /// as evidence.
    /// By default, a global or a local of a frame on the stack whose
    /// address never escapes, and that only constant or computed direct
    /// stores write, constrains the path: its last store must be one that
    /// can have left the value found (see README, "Values from a core").
    #[arg(long)]
    pub no_values: bool,
    /// Split each variable whose value is not known into the classes of
    /// values its branch tests tell apart, so that a variable (as for
    /// values: its address never escapes) tested by two branches with
    /// nothing that writes it between goes the same way at both: each
    /// class is recovered in a stage of its own, within the evidence
    /// stages' time budget, and what every class that can hold says is
    /// kept (README, "Branch correlations"). By default only without
    /// --core and --minidump, whose values decide what the cases would
    /// (on the harness's crashes: 1.5% more lines decided from bzip2's
    /// backtraces, none from its cores). --no-values turns it off too.
    #[arg(long, conflicts_with = "no_correlations")]
    pub correlations: bool,
    /// Never split variables into cases (see --correlations).
    #[arg(long)]
    pub no_correlations: bool,
    /// Do not use stack residue from --core or --minidump as evidence.
    /// By default, a return address that a call which has since returned
    /// left on the crashing thread's stack, found and checked as the
    /// README's "Stack residue" says, shows that the call ran.
    #[arg(long)]
    pub no_residue: bool,
    /// Analyse even when --binary is not of the graph's build (a warning
    /// instead of exit code 2). By default, with --core, --minidump or
    /// --sancov-flags, the binary's DWARF line table is compared with the
    /// graph: a line with code in the binary that the graph has no
    /// statement on, or a function the graph lacks, means the source
    /// changed between the two builds, and the labels would be wrong.
    #[arg(long)]
    pub no_build_check: bool,
    /// The most a report, a backtrace or a log may hold, in bytes or with
    /// a suffix K, M, G (e.g. `256M`). Default: 64M, or --max-memory if
    /// that is less. A larger file, or a pipe that gives more, is refused
    /// (exit code 2), as is a device given as any input. The graph is
    /// bounded by --max-memory, a flag dump by the graph's flag count.
    #[arg(long, value_name = "BYTES", value_parser = crate::solvers::parse_bytes,
          allow_hyphen_values = true)]
    pub max_input_size: Option<usize>,
}

impl Inputs {
    /// How messages name the failure data: the report, backtrace, core,
    /// minidump, flag dump and log files given, joined with ` + `.
    pub fn report_name(&self) -> PathBuf {
        let names: Vec<String> = [
            &self.report_file,
            &self.backtrace,
            &self.core,
            &self.minidump,
            &self.sancov_flags,
            &self.log,
        ]
        .into_iter()
        .flatten()
        .map(|p| p.display().to_string())
        .collect();
        PathBuf::from(names.join(" + "))
    }

    /// The `--path-map` rules.
    pub fn path_map(&self) -> PathMap {
        let mut path_map = PathMap::new();
        for (from, to) in &self.path_map {
            path_map.push(from, to);
        }
        path_map
    }

    /// The failure files, for [`assemble`].
    pub fn files(&self) -> FailureFiles<'_> {
        FailureFiles {
            cfg: Some(&self.cfg),
            report: self.report_file.as_deref(),
            backtrace: self.backtrace.as_deref(),
            core: self.core.as_deref(),
            minidump: self.minidump.as_deref(),
            binary: self.binary.as_deref(),
            sancov_flags: self.sancov_flags.as_deref(),
            log: self.log.as_deref(),
        }
    }

    /// How [`assemble`] reads the failure files: a report, backtrace or
    /// log is bounded by `--max-input-size`, or else by the lesser of
    /// 64 MiB and `max_memory` (`--max-memory`).
    pub fn options(&self, max_memory: usize) -> FailureOptions {
        let mut log_config = LogConfig::default();
        for l in &self.log_function {
            log_config.add(l.clone());
        }
        log_config.stream = self.log_stream.clone();
        FailureOptions {
            path_map: self.path_map(),
            log_config,
            stack_only: self.stack_only,
            no_values: self.no_values,
            correlations: match (self.correlations, self.no_correlations) {
                (true, _) => Some(true),
                (_, true) => Some(false),
                _ => None,
            },
            no_residue: self.no_residue,
            build_check: !self.no_build_check,
            max_input: self
                .max_input_size
                .map(|n| n as u64)
                .unwrap_or(DEFAULT_TEXT_LIMIT.min(max_memory as u64)),
            sysroot: self.sysroot.clone(),
        }
    }
}

pub struct Loaded {
    pub graph: Icfg,
    pub report: Report,
    pub timings: Timings,
    /// What became of every variable's value read from a core.
    pub values: Vec<ValueUse>,
    /// The front-end's variables, for following a value back
    /// ([`postmortem_formats::origins`]).
    pub vars: Option<postmortem_formats::vars::VarMap>,
    /// What the core's stack residue gave.
    pub residue: Option<ResidueInfo>,
    /// Every log (`--log`, a report's log lines) as it was matched to the
    /// program's print statements (for the HTML report).
    pub logs: Vec<postmortem_formats::logs::LogMatch>,
    /// What killed the process, when a core or minidump says.
    pub fault: Option<postmortem_formats::image::fault::Fault>,
    /// Lines the optimiser moved, lines without code in the binary.
    pub line_notes: postmortem_core::line_notes::LineNotes,
    /// What to say when the report turns out impossible (a Sentry
    /// event's frames that look listed crash first).
    pub impossible_hint: Option<String>,
}

/// Reads the graph and assembles the report from every failure input
/// ([`postmortem_formats::failure::assemble`]), printing its warnings and
/// notes to stderr as they come. Reading is bounded by `max_memory`
/// (`--max-memory`): the graph by it, a report, backtrace or log by
/// `--max-input-size` or else the lesser of 64 MiB and it.
pub fn load(inputs: &Inputs, max_memory: usize) -> Result<Loaded, Failure> {
    let t = Instant::now();
    let (files, options) = (inputs.files(), inputs.options(max_memory));
    // What the binary and core give without the graph is read beside
    // the graph's loading (`prepare`); the graph's errors come first.
    let native = files.binary.is_some()
        && (files.core.is_some() || files.minidump.is_some() || files.sancov_flags.is_some());
    let (graph, pre) = std::thread::scope(|scope| {
        let pre = native.then(|| scope.spawn(|| prepare(&files, &options)));
        let graph = load_graph_with_maps(&inputs.cfg, max_memory as u64);
        // A thread that panicked leaves it all to `assemble_prepared`.
        let pre = pre.and_then(|h| h.join().ok()).unwrap_or_default();
        (graph, pre)
    });
    let (graph, sancov, vars) = graph?;
    let parse_graph_ms = ms(t);
    let t = Instant::now();
    let found = assemble_prepared(
        &graph,
        sancov.as_ref(),
        vars.as_ref(),
        &files,
        &options,
        pre,
    )
    .map_err(assemble_failure)?;
    print_diagnostics(&found.diagnostics, "");
    for (source, matched) in &found.logs {
        if inputs.explain_log {
            eprintln!("postmortem: log matches for {source}:");
            // Explaining is best effort: a closed stderr is not an error.
            let _ = write_explain(&mut std::io::stderr().lock(), &graph, matched);
        }
    }
    let parse_report_ms = ms(t);
    let line_notes = postmortem_core::line_notes::LineNotes::new(
        &graph,
        found.no_code.as_deref().unwrap_or(&[]),
    );
    Ok(Loaded {
        line_notes,
        graph,
        report: found.report,
        timings: Timings {
            parse_graph_ms,
            parse_report_ms,
            recover_ms: 0.0,
        },
        values: found.values,
        vars,
        residue: found.residue,
        logs: found.logs.into_iter().map(|(_, m)| m).collect(),
        impossible_hint: found.impossible_hint,
        fault: found.fault,
    })
}

/// Warnings and notes on stderr, each prefixed with `prefix`.
fn print_diagnostics(diagnostics: &[Diagnostic], prefix: &str) {
    for d in diagnostics {
        match d {
            Diagnostic::Warning(w) => eprintln!("postmortem: warning: {prefix}{w}"),
            Diagnostic::Note(n) => eprintln!("postmortem: note: {prefix}{n}"),
        }
    }
}

/// An [`AssembleError`] as the command reports it.
fn assemble_failure(e: AssembleError) -> Failure {
    match e {
        e @ AssembleError::NotTheBuild(..) => Failure::input(e),
        AssembleError::Input(m) => Failure::input(m),
        AssembleError::Impossible(m) => Failure::impossible(m),
    }
}

/// Another crash of the same program for a group (`suggest --also`): a
/// report (a `.json` or `.json.gz` file: csi-grissom, postmortem's own or
/// a Sentry event) or else a backtrace, read with the same options as the
/// main inputs (path map, log functions, `--stack-only`; no values, no
/// coverage map). Warnings go to stderr, naming the file.
pub fn load_other(
    inputs: &Inputs,
    g: &Icfg,
    path: &Path,
    max_memory: usize,
) -> Result<Report, Failure> {
    let name = path.display().to_string();
    let is_report = name.ends_with(".json") || name.ends_with(".json.gz");
    let files = FailureFiles {
        cfg: Some(&inputs.cfg),
        report: is_report.then_some(path),
        backtrace: (!is_report).then_some(path),
        ..FailureFiles::default()
    };
    let opts = FailureOptions {
        no_values: true,
        no_residue: true,
        ..inputs.options(max_memory)
    };
    let found = assemble(g, None, None, &files, &opts).map_err(assemble_failure)?;
    print_diagnostics(&found.diagnostics, &format!("{name}: "));
    Ok(found.report)
}

/// What checking `witness` against the program's data finds
/// ([`postmortem_formats::witness_check`]): the front-end's variables,
/// and the values read from the core that became evidence (a value no
/// store can have left, a wild write's, is not one). None without the
/// front-end's variables (a graph not from LLVM IR).
pub fn check_witness(
    loaded: &Loaded,
    witness: &[postmortem_core::NodeId],
) -> Option<postmortem_formats::witness_check::Verdict> {
    let map = loaded.vars.as_ref()?;
    let at_crash: Vec<postmortem_formats::witness_check::AtCrash> = loaded
        .values
        .iter()
        .filter(|u| u.place.starts_with("frame #0 ") || u.place == "global")
        .filter(|u| u.constraint.is_some())
        .map(|u| postmortem_formats::witness_check::AtCrash {
            var: u.var,
            value: u.value,
        })
        .collect();
    Some(postmortem_formats::witness_check::check(
        &loaded.graph,
        map,
        witness,
        &at_crash,
    ))
}

/// The example path the HTML report shows: the solver's witness, checked
/// against the program's data ([`check_witness`]); while the check finds
/// it infeasible, another is asked for under a query that leaves out the
/// paths with the same contradictions (`witness_check::exclusion`), at
/// most [`WITNESS_TRIES`] in all: one more at least, then while the
/// searches so far took less than [`WITNESS_SEEK`]. Returns the witness
/// shown (the first with no contradiction found, else the first), its
/// verdict, and the reasons the earlier ones were set aside.
pub fn checked_witness(s: &dyn postmortem_core::Solver, loaded: &Loaded) -> Sought {
    let first = s
        .check(&loaded.graph, &loaded.report, None)
        .ok()
        .and_then(|c| c.witness);
    match first {
        Some(first) => seek_witness(s, loaded, None, first),
        None => (None, None, Vec::new()),
    }
}

/// [`checked_witness`] from the witness `first` of `question` (a query's:
/// the witnesses sought after it answer the question too).
pub fn seek_witness(
    s: &dyn postmortem_core::Solver,
    loaded: &Loaded,
    question: Option<&postmortem_core::solver::Query>,
    first: Vec<postmortem_core::NodeId>,
) -> Sought {
    use postmortem_formats::witness_check::{exclusion, Verdict};
    let start = std::time::Instant::now();
    // The question as an automaton, built when a second witness is sought.
    let mut asked = None;
    let verdict = check_witness(loaded, &first);
    let mut chains = Vec::new();
    let mut set_aside = Vec::new();
    let mut last = verdict.clone();
    while let Some(Verdict::Infeasible {
        reason,
        chain: Some(chain),
    }) = last
    {
        // One more search at least; then while they took less than
        // WITNESS_SEEK in all.
        let late = !set_aside.is_empty() && start.elapsed() > WITNESS_SEEK;
        if set_aside.len() + 1 >= WITNESS_TRIES || late {
            break;
        }
        set_aside.push(reason);
        chains.push(chain);
        let Some(dfa) = exclusion(&chains, 1 << 12) else {
            break;
        };
        // The question's paths that the checks so far do not rule out.
        let dfa = match question {
            None => dfa,
            Some(q) => match asked.get_or_insert_with(|| question_dfa(q)) {
                Some(q) => match q.intersect(&dfa, 1 << 14) {
                    Some(d) => d,
                    None => break,
                },
                None => break,
            },
        };
        let query = postmortem_core::solver::Query::Language(dfa);
        let next = s
            .check(&loaded.graph, &loaded.report, Some(&query))
            .ok()
            .and_then(|c| c.witness);
        let Some(w) = next else {
            break;
        };
        last = check_witness(loaded, &w);
        if !matches!(last, Some(Verdict::Infeasible { .. })) {
            return (Some(w), last, set_aside);
        }
    }
    (Some(first), verdict, Vec::new())
}

/// A query's question as an automaton over paths (`None` when it has
/// none: a "did not run" of more nodes than one automaton holds).
fn question_dfa(q: &postmortem_core::solver::Query) -> Option<postmortem_core::automaton::Dfa> {
    use postmortem_core::automaton::Dfa;
    use postmortem_core::solver::Query;
    use postmortem_core::{NodeSet, Origin};
    match q {
        Query::Language(d) => Some(d.clone()),
        Query::MayRun(n) => Some(Dfa::subsequence(Origin::Query, &[NodeSet::one(*n)])),
        Query::MaySkip(n) => Dfa::not_all(Origin::Query, &NodeSet::one(*n)),
        Query::Trace(t) => Some(Dfa::subsequence(Origin::Query, t)),
        _ => None,
    }
}

/// A witness sought ([`checked_witness`]): the one shown, its verdict,
/// and why the ones before it were set aside.
pub type Sought = (
    Option<Vec<postmortem_core::NodeId>>,
    Option<postmortem_formats::witness_check::Verdict>,
    Vec<String>,
);

/// The most witnesses [`checked_witness`] asks for.
pub const WITNESS_TRIES: usize = 8;
/// After this long, [`checked_witness`] asks for no other witness.
pub const WITNESS_SEEK: std::time::Duration = std::time::Duration::from_secs(2);
