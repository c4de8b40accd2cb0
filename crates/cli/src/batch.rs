//! `postmortem batch`: many crashes in one run, in parallel, each graph
//! built once (and kept in `--cache DIR`), one JSON line per crash, then
//! one line per group of crashes with one signature.
//!
//! The crash list, shards, signatures, cache keys and groups are
//! `postmortem_formats::batch`; this module loads graphs (through the
//! cache), runs the analyses on a rayon pool and writes the lines.

use crate::analyze::pipeline_failure;
use crate::exit::{ms, Failure};
use crate::graph::{is_cache, load_graph_with_maps};
use crate::solvers::SolverArgs;
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use postmortem_core::locate::PathMap;
use postmortem_core::summary::LineIndex;
use postmortem_core::Icfg;
use postmortem_formats::batch::{self as fb, Entry, Groups, Shard};
use postmortem_formats::failure::{
    assemble, AssembleError, Diagnostic, FailureFiles, FailureOptions,
};
use postmortem_formats::frontend::{encode_loaded, Loaded};
use postmortem_formats::image::sancov::SancovMap;
use postmortem_formats::input::DEFAULT_TEXT_LIMIT;
use postmortem_formats::vars::VarMap;
use postmortem_formats::write::output::{to_json_with, Analysis, Timings};
use rayon::prelude::*;
use serde_json::Value;
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

/// `postmortem help batch`, before the options.
pub const LONG_ABOUT: &str = "\
Analyse many crashes in one run: one JSON line per crash (the document of
`analyze --format json` on one line, plus `id`, `signature`, `graph`,
`cache`, `warnings` and `status`: \"ok\", or \"failed\" with `error`;
`timings_ms` also has `local`, the Local labels, and `json`, building the
line), then one line per group of crashes with one signature.

The crashes are a JSON-lines manifest, one crash per line (paths relative
to the manifest's directory; `#` lines are comments):

  {\"id\": \"c1\", \"cfg\": \"prog.bc\", \"binary\": \"prog\", \"core\": \"cores/c1\"}
  {\"id\": \"c2\", \"cfg\": \"prog.bc\", \"backtrace\": \"bt/c2.txt\", \"log\": \"c2.log\"}

keys: id, cfg (.bc/.ll/.pmcfg/GraphML), binary, core, minidump, backtrace, event (a
Sentry event) or report (any report `analyze --report` reads),
sancov_flags, log; --cfg and --binary are the defaults for crashes that
name none. Or a directory: each subdirectory is one crash, its name the
id, its files those its crash.json names (a manifest line) or else found
by name: core (or one core.*), one *.dmp (a minidump), backtrace.txt, event.json, report.json,
sancov_flags.bin, log.txt (and cfg.* and binary, for a crash with its own
build).

A crash that fails (a missing or garbage file, an impossible report, a
panic) is a failed line; the others go on. Lines are written as crashes
finish (so not in manifest order; each has its id), each flushed at once:
after Ctrl-C every finished line is complete.

Graphs are read once per process and shared by the crashes. With --cache
DIR, a graph built from IR or GraphML is stored as DIR/KEY.pmcfg, KEY being
the binary's GNU build id, the graph file's hash and this version of
postmortem; later runs (and other processes sharing DIR, on one machine or
a shared volume) read it instead of building it. It is written to a
temporary name and renamed, so a reader never sees half a file; two
processes may both build it, harmlessly; a file that does not decode is
built again. `cache` says per crash: built, hit, or none (no --cache, or
--cfg already a .pmcfg).

Groups: the crashes analysed against one graph whose signatures (the
functions of the top --group-depth frames, innermost first) are equal.
With --group-by blame, a crash with a core or minidump whose faulting
value `postmortem why` traces has the signature `blame: ` and its first
suspect (`blame: the return at kv.c:12 in `find``), the line also has
`blame` and its fault `causes`; the others keep their stack's. With
--group-by blame-function, the blamed statement's function only
(`blame: `find``: RETracer's grouping by blamed function). A
group line (groups of at least --min-group ok crashes) has `group` (the
signature), `graph`, `crashes` (ids), `yes` and `no` (per file, the lines
Yes / No in every crash of the group) and `differ` (per file, the lines Yes
in some crashes and No in others, with the ids on each side: where two
crashes of one bug part ways).

Shards: --shard I/N takes the entries whose position in the list (from 0,
bad entries counted) is I modulo N; N shards together are the whole batch.
A shard's groups cover its own crashes only: for the groups of all of
them, run `postmortem batch --groups-from SHARD_OUTPUTS...`, which reads
crash lines and prints the group lines.

Examples:
  postmortem batch crashes.jsonl --cache /var/cache/postmortem -o out.jsonl
  postmortem batch crashes/ --cfg prog.bc --binary prog --jobs 2
  postmortem batch crashes.jsonl --shard $JOB_COMPLETION_INDEX/8 -o part.jsonl
  postmortem batch --groups-from part*.jsonl --format html -o groups";

/// What crashes are grouped by (`--group-by`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GroupBy {
    /// The functions of the top --group-depth frames.
    Stack,
    /// The first suspect of `postmortem why` (the statement and its
    /// function), which takes crashes of one bug with different stacks
    /// together.
    Blame,
    /// The function of that suspect: RETracer's grouping by blamed
    /// function (coarser: two statements of one function are one group).
    BlameFunction,
}

/// `postmortem help batch`, after the options.
pub const AFTER_LONG_HELP: &str = "\
The limits (--timeout, --max-states, --max-input-size) apply to each
crash, as in `analyze`, and --max-memory to the whole process; with
--jobs N, N analyses run at once.

Exit codes: 0 the lines were written (failed crashes included); 2 bad
usage, an unreadable manifest or directory, or an output that cannot be
written.";

/// How `batch` writes.
#[derive(Copy, Clone, ValueEnum, PartialEq, Eq, Debug)]
pub enum BatchFormat {
    /// JSON lines: the crash lines, then the group lines.
    Json,
    /// A directory (-o): crashes.jsonl, groups.jsonl, index.html and one
    /// page per group.
    Html,
}

#[derive(Args)]
pub struct BatchArgs {
    /// The crashes: a JSON-lines manifest, or a directory with one
    /// subdirectory per crash.
    #[arg(value_name = "MANIFEST|DIR", required_unless_present = "groups_from")]
    input: Option<PathBuf>,
    /// Read crash lines (earlier outputs of batch, e.g. of every shard)
    /// from these files and print only their group lines.
    #[arg(long, value_name = "FILE", num_args = 1.., conflicts_with = "input")]
    groups_from: Vec<PathBuf>,
    /// The graph of crashes whose entry names none.
    #[arg(long, value_name = "GRAPH")]
    cfg: Option<PathBuf>,
    /// The binary of crashes whose entry names none.
    #[arg(long, value_name = "PROG")]
    binary: Option<PathBuf>,
    /// A directory of built graphs, shared between runs and processes
    /// (created if needed).
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,
    /// How many crashes to analyse at once (default: every core).
    #[arg(short = 'j', long, value_name = "N")]
    jobs: Option<usize>,
    /// Where to write: a file for JSON (default: standard output), a
    /// directory for HTML.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE|DIR",
        required_if_eq("format", "html")
    )]
    output: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = BatchFormat::Json)]
    format: BatchFormat,
    /// How many frames (from the crash outwards) make a signature.
    #[arg(long, value_name = "D", default_value_t = 3)]
    group_depth: usize,
    /// What a signature is: the stack's top functions, or the statement
    /// `postmortem why` blames first for a crash with a core or minidump
    /// (the stack's signature for the others).
    #[arg(long, value_enum, default_value_t = GroupBy::Stack)]
    group_by: GroupBy,
    /// The fewest ok crashes a group must have to get its line.
    #[arg(long, value_name = "N", default_value_t = 2)]
    min_group: usize,
    /// No group lines (and no memory kept for them).
    #[arg(long)]
    no_groups: bool,
    /// Leave out the `nodes` lists (of the crash and of each frame): the
    /// node ids of every label, most of a crash line's size on a large
    /// program (3 MB of SQLite's 3.1); the lines stay.
    #[arg(long)]
    no_nodes: bool,
    /// Only the entries at positions I, I+N, I+2N, ... (from 0).
    #[arg(long, value_name = "I/N", value_parser = Shard::parse)]
    shard: Option<Shard>,
    #[command(flatten)]
    solver: SolverArgs,
    /// As for `analyze`: do not use variables' values read from cores.
    #[arg(long)]
    no_values: bool,
    /// As for `analyze`: do not use stack residue read from cores.
    #[arg(long)]
    no_residue: bool,
    /// As for `analyze`: a crash whose binary is not of its graph's build
    /// is analysed with a warning instead of failing.
    #[arg(long)]
    no_build_check: bool,
    /// As for `analyze`: where the crashed machine's libraries are.
    #[arg(long, value_name = "DIR")]
    sysroot: Option<PathBuf>,
    /// As for `analyze`: only the crash and the stack.
    #[arg(long)]
    stack_only: bool,
    /// As for `analyze`, per crash (the manifest may have the larger of
    /// this and 64M).
    #[arg(long, value_name = "BYTES", value_parser = crate::solvers::parse_bytes)]
    max_input_size: Option<usize>,
    /// As for `analyze` (repeatable).
    #[arg(long, value_name = "FROM=TO")]
    path_map: Vec<String>,
}

/// A graph with its maps, shared by the crashes of one build, and what
/// the output derives from the graph alone (derived once, here, not per
/// crash).
struct Graph {
    key: String,
    icfg: Icfg,
    sancov: Option<SancovMap>,
    vars: Option<VarMap>,
    /// How this process got it: "built", "hit" or "none".
    cache: &'static str,
    /// The graph's source lines, for each crash's line labels.
    lines: LineIndex,
}

impl Graph {
    fn new(
        key: String,
        icfg: Icfg,
        sancov: Option<SancovMap>,
        vars: Option<VarMap>,
        cache: &'static str,
    ) -> Graph {
        let lines = LineIndex::new(&icfg);
        Graph {
            key,
            icfg,
            sancov,
            vars,
            cache,
            lines,
        }
    }
}

type Cell = Arc<OnceLock<Result<Arc<Graph>, String>>>;

/// The graphs of this process: each read or built once, the first crash
/// that needs it doing the work while the others wait.
struct Graphs {
    dir: Option<PathBuf>,
    limit: u64,
    by_path: Mutex<HashMap<(PathBuf, Option<PathBuf>), Cell>>,
    by_key: Mutex<HashMap<String, Cell>>,
    built: AtomicUsize,
    hits: AtomicUsize,
    read: AtomicUsize,
}

/// What else than the graph file a cached graph depends on.
const CACHE_TAG: &str = concat!("pm", env!("CARGO_PKG_VERSION"));

impl Graphs {
    fn get(&self, cfg: &Path, binary: Option<&Path>) -> Result<Arc<Graph>, String> {
        let cell = self
            .by_path
            .lock()
            .unwrap()
            .entry((cfg.to_path_buf(), binary.map(Path::to_path_buf)))
            .or_default()
            .clone();
        cell.get_or_init(|| {
            let bid = match binary {
                Some(b) => postmortem_formats::image::native::read_build_id(b)
                    .map_err(|e| e.to_string())?,
                None => None,
            };
            let key = fb::graph_key(cfg, bid.as_deref(), CACHE_TAG)
                .map_err(|e| format!("{}: cannot read: {e}", cfg.display()))?;
            let cell = self
                .by_key
                .lock()
                .unwrap()
                .entry(key.clone())
                .or_default()
                .clone();
            cell.get_or_init(|| self.load(cfg, key).map(Arc::new))
                .clone()
        })
        .clone()
    }

    fn load(&self, cfg: &Path, key: String) -> Result<Graph, String> {
        let fail = |f: Failure| f.message;
        let dir = match &self.dir {
            Some(d) if !is_cache(cfg) => d,
            _ => {
                let (icfg, sancov, vars) = load_graph_with_maps(cfg, self.limit).map_err(fail)?;
                self.read.fetch_add(1, Ordering::Relaxed);
                return Ok(Graph::new(key, icfg, sancov, vars, "none"));
            }
        };
        let path = dir.join(format!("{key}.pmcfg"));
        if path.exists() {
            match load_graph_with_maps(&path, self.limit) {
                Ok((icfg, sancov, vars)) => {
                    self.hits.fetch_add(1, Ordering::Relaxed);
                    return Ok(Graph::new(key, icfg, sancov, vars, "hit"));
                }
                Err(e) => eprintln!("postmortem: warning: {}; building it again", e.message),
            }
        }
        let loaded = if crate::graph::is_ir(cfg) {
            crate::frontend::load_ir(cfg, self.limit).map_err(fail)?
        } else {
            let (icfg, sancov, vars) = load_graph_with_maps(cfg, self.limit).map_err(fail)?;
            Loaded {
                icfg,
                report: Default::default(),
                sancov,
                vars,
            }
        };
        store(&path, &encode_loaded(&loaded))
            .map_err(|e| format!("{}: cannot write the cache: {e}", path.display()))?;
        self.built.fetch_add(1, Ordering::Relaxed);
        Ok(Graph::new(
            key,
            loaded.icfg,
            loaded.sancov,
            loaded.vars,
            "built",
        ))
    }
}

/// Writes `bytes` to `path` atomically: to a temporary name unique to
/// this process and call in the same directory, synced, then renamed (a
/// rename within a directory replaces the file whole, so a reader sees
/// the old file, the new one, or none; a process killed before the
/// rename leaves only a `.tmp` file, which nothing reads).
fn store(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    static SEQ: AtomicUsize = AtomicUsize::new(0);
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Where the lines go, and the groups they make.
struct Sink {
    out: Box<dyn Write + Send>,
    groups: Option<Groups>,
    error: Option<std::io::Error>,
    ok: usize,
    failed: usize,
}

impl Sink {
    /// Counts `v`, adds it to its group and writes `bytes` (`v`
    /// serialised, done by the caller outside the lock), one line.
    fn line(&mut self, v: &Value, bytes: &[u8]) {
        if v["status"] == "ok" {
            self.ok += 1;
        } else {
            self.failed += 1;
        }
        if let Some(g) = &mut self.groups {
            g.add(v);
        }
        if self.error.is_some() {
            return;
        }
        let r = self
            .out
            .write_all(bytes)
            .and_then(|_| self.out.write_all(b"\n"))
            .and_then(|_| self.out.flush());
        if let Err(e) = r {
            self.error = Some(e);
        }
    }
}

fn failed(id: &str, signature: Option<&str>, error: &str) -> Value {
    fb::failed_line(id, signature, error)
}

struct Ctx<'a> {
    args: &'a BatchArgs,
    graphs: Graphs,
    opts: FailureOptions,
}

/// One crash's line (never an error: a failure is a failed line).
fn crash_line(ctx: &Ctx<'_>, e: &Entry) -> Value {
    let spec = match &e.spec {
        Ok(s) => s,
        Err((id, err)) => return failed(id, None, err),
    };
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| analyse(ctx, spec)));
    match r {
        Ok(Ok(v)) => v,
        Ok(Err((sig, err))) => failed(&spec.id, sig.as_deref(), &err),
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failed(
                &spec.id,
                None,
                &format!("internal error (a bug in postmortem): {msg}"),
            )
        }
    }
}

fn analyse(ctx: &Ctx<'_>, spec: &fb::CrashSpec) -> Result<Value, (Option<String>, String)> {
    // --timeout: one deadline for each crash's analysis.
    let deadline = ctx.args.solver.deadline();
    postmortem_core::budget::with_deadline(deadline, || analyse_within(ctx, spec))
}

/// A crash's failure inputs, named as `analyze` names them (`bt.txt +
/// out.log`).
fn inputs_named(spec: &fb::CrashSpec) -> String {
    let names: Vec<String> = [
        &spec.report,
        &spec.backtrace,
        &spec.core,
        &spec.minidump,
        &spec.sancov_flags,
        &spec.log,
    ]
    .into_iter()
    .flatten()
    .map(|p| p.display().to_string())
    .collect();
    names.join(" + ")
}

fn analyse_within(ctx: &Ctx<'_>, spec: &fb::CrashSpec) -> Result<Value, (Option<String>, String)> {
    let a = ctx.args;
    let err = |m: String| (None, m);
    let cfg = spec
        .cfg
        .as_deref()
        .or(a.cfg.as_deref())
        .ok_or_else(|| err("no graph: give `cfg` in the entry or --cfg".to_string()))?;
    let binary = spec.binary.as_deref().or(a.binary.as_deref());
    let t = Instant::now();
    let graph = ctx.graphs.get(cfg, binary).map_err(err)?;
    let parse_graph_ms = ms(t);
    let g = &graph.icfg;
    let files = FailureFiles {
        cfg: Some(cfg),
        report: spec.report.as_deref(),
        backtrace: spec.backtrace.as_deref(),
        core: spec.core.as_deref(),
        minidump: spec.minidump.as_deref(),
        binary,
        sancov_flags: spec.sancov_flags.as_deref(),
        log: spec.log.as_deref(),
    };
    let report_path = inputs_named(spec);
    let t = Instant::now();
    let found = assemble(
        g,
        graph.sancov.as_ref(),
        graph.vars.as_ref(),
        &files,
        &ctx.opts,
    )
    .map_err(|e| match e {
        e @ AssembleError::NotTheBuild(..) => err(e.to_string()),
        AssembleError::Input(m) | AssembleError::Impossible(m) => err(m),
    })?;
    let warnings: Vec<String> = found
        .diagnostics
        .iter()
        .filter_map(|d| match d {
            Diagnostic::Warning(w) => Some(w.clone()),
            Diagnostic::Note(_) => None,
        })
        .collect();
    let (report, values, residue) = (found.report, found.values, found.residue);
    let logs: Vec<_> = found.logs.into_iter().map(|(_, m)| m).collect();
    let fault = found.fault;
    let line_notes =
        postmortem_core::line_notes::LineNotes::new(g, found.no_code.as_deref().unwrap_or(&[]));
    let parse_report_ms = ms(t);
    let mut sig = fb::signature(g, &report, a.group_depth);
    let s = a.solver.build(a.solver.solver);
    let t = Instant::now();
    let named = PathBuf::from(&report_path);
    let an =
        postmortem_core::pipeline::analyse(&*s, g, &report, a.solver.staging(1)).map_err(|e| {
            (
                Some(sig.clone()),
                pipeline_failure(e, &named, g, &report).message,
            )
        })?;
    let recover_ms = ms(t);
    let mut fault = fault;
    let mut blame = None;
    let blames = matches!(a.group_by, GroupBy::Blame | GroupBy::BlameFunction);
    if let (true, Some(f)) = (blames, fault.as_mut()) {
        f.causes = crate::analyze::causes_of(
            &*s,
            &crate::analyze::Evidence {
                graph: g,
                report: &report,
                values: &values,
                vars: graph.vars.as_ref(),
                fault: Some(f),
                budget: crate::analyze::causes_budget(recover_ms),
            },
            &an.rec.labels,
        );
        if let Some(top) = postmortem_formats::write::chain::suspects(f, 1).first() {
            let func = top
                .node
                .map(|n| format!("`{}`", g.function(g.func_of(n)).name));
            let b = match &func {
                Some(func) => format!("{} in {func}", top.at),
                None => top.at.clone(),
            };
            sig = match (a.group_by, func) {
                (GroupBy::BlameFunction, Some(func)) => format!("blame: {func}"),
                _ => format!("blame: {b}"),
            };
            blame = Some(b);
        }
    }
    let cfg_path = cfg.display().to_string();
    let view = Analysis {
        graph: g,
        labels: &an.rec.labels,
        weakened: &an.rec.weakened,
        undecided: &an.rec.undecided,
        solver: s.name(),
        solver_stats: &an.rec.stats,
        cfg_path: &cfg_path,
        report_path: &report_path,
        stack_only: a.stack_only,
        timings: Timings {
            parse_graph_ms,
            parse_report_ms,
            recover_ms,
        },
        values: &values,
        residue: residue.as_ref(),
        frames: &an.frames,
        lift: Some(&an.lift),
        stack_len: report.stack.len(),
        logs: &logs,
        fault: fault.as_ref(),
        line_notes: Some(&line_notes),
        log_decided: None,
        report: Some(&report),
    };
    let t = Instant::now();
    let mut v = to_json_with(&view, !a.no_nodes, Some(&graph.lines));
    if let Some(b) = blame {
        v["blame"] = serde_json::json!(b);
    }
    let json_ms = ms(t);
    fb::ok_line(
        &mut v,
        &fb::OkLine {
            id: &spec.id,
            signature: &sig,
            graph: &graph.key,
            cache: graph.cache,
            warnings: &warnings,
            json_ms,
        },
    );
    Ok(v)
}

fn progress(n: usize) -> ProgressBar {
    if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(n as u64), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{bar:40} {pos}/{len} crashes ({per_sec}, eta {eta}) {msg}")
    {
        pb.set_style(style);
    }
    pb
}

fn open_output(a: &BatchArgs, name: &str) -> Result<Box<dyn Write + Send>, Failure> {
    let path = match (a.format, &a.output) {
        (BatchFormat::Json, None) => return Ok(Box::new(std::io::stdout())),
        (BatchFormat::Json, Some(p)) => p.clone(),
        (BatchFormat::Html, Some(d)) => {
            std::fs::create_dir_all(d)
                .map_err(|e| Failure::input(format!("{}: cannot create: {e}", d.display())))?;
            d.join(name)
        }
        (BatchFormat::Html, None) => unreachable!("clap requires -o for html"),
    };
    let f = std::fs::File::create(&path)
        .map_err(|e| Failure::input(format!("{}: cannot write: {e}", path.display())))?;
    Ok(Box::new(std::io::BufWriter::new(f)))
}

/// The crash list (this shard's) and the run's context: the graph cache,
/// the failure options.
fn setup(a: &BatchArgs) -> Result<(Vec<Entry>, Ctx<'_>), Failure> {
    let input = a.input.as_deref().expect("clap requires the input");
    let max_memory = a.solver.memory_budget();
    let max_input = a
        .max_input_size
        .map(|n| n as u64)
        .unwrap_or(DEFAULT_TEXT_LIMIT.min(max_memory as u64));
    // The list itself may be larger than one crash's inputs.
    let list_limit = max_input.max(DEFAULT_TEXT_LIMIT);
    let entries = if input.is_dir() {
        fb::read_dir(input, list_limit)
    } else {
        fb::read_manifest(input, list_limit)
    }
    .map_err(Failure::input)?;
    let entries: Vec<Entry> = entries
        .into_iter()
        .filter(|e| a.shard.is_none_or(|s| s.takes(e.index)))
        .collect();
    if let Some(d) = &a.cache {
        std::fs::create_dir_all(d).map_err(|e| {
            Failure::input(format!("{}: cannot create the cache: {e}", d.display()))
        })?;
    }
    let mut path_map = PathMap::new();
    for r in &a.path_map {
        path_map.push_spec(r).map_err(Failure::input)?;
    }
    let ctx = Ctx {
        args: a,
        graphs: Graphs {
            dir: a.cache.clone(),
            limit: max_memory as u64,
            by_path: Default::default(),
            by_key: Default::default(),
            built: AtomicUsize::new(0),
            hits: AtomicUsize::new(0),
            read: AtomicUsize::new(0),
        },
        opts: FailureOptions {
            path_map,
            stack_only: a.stack_only,
            no_values: a.no_values,
            no_residue: a.no_residue,
            build_check: !a.no_build_check,
            max_input,
            sysroot: a.sysroot.clone(),
            ..FailureOptions::default()
        },
    };
    Ok((entries, ctx))
}

pub fn run(a: BatchArgs) -> Result<(), Failure> {
    if !a.groups_from.is_empty() {
        return groups_from(&a);
    }
    let (entries, ctx) = setup(&a)?;
    let sink = Mutex::new(Sink {
        out: open_output(&a, "crashes.jsonl")?,
        groups: (!a.no_groups).then(Groups::default),
        error: None,
        ok: 0,
        failed: 0,
    });
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(j) = a.jobs {
        pool = pool.num_threads(j.max(1));
    }
    let pool = pool
        .build()
        .map_err(|e| Failure::internal(format!("cannot start the threads: {e}")))?;
    let pb = progress(entries.len());
    let t = Instant::now();
    // Nanoseconds spent serialising lines, waiting for the output and
    // writing (with the groups' bookkeeping), over all crashes.
    let (ser, wait, write) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    let add = |c: &AtomicU64, t: Instant| {
        c.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
    };
    pool.install(|| {
        entries.par_iter().for_each(|e| {
            let v = crash_line(&ctx, e);
            let t0 = Instant::now();
            let bytes = serde_json::to_vec(&v).expect("a Value always serialises");
            add(&ser, t0);
            let t1 = Instant::now();
            pb.suspend(|| {
                let mut s = sink.lock().unwrap();
                add(&wait, t1);
                let t2 = Instant::now();
                s.line(&v, &bytes);
                add(&write, t2);
            });
            pb.inc(1);
            // The line's memory is freed outside the lock too.
            drop((v, bytes));
        })
    });
    pb.finish_and_clear();
    let mut sink = sink.into_inner().unwrap();
    if let Some(e) = sink.error.take() {
        return write_error(e);
    }
    let min = a.min_group.max(1);
    let (groups, alone) = sink
        .groups
        .take()
        .map(|g| (g.lines(min), g.alone(min)))
        .unwrap_or_default();
    write_groups(&a, &mut sink.out, &groups, &alone)?;
    let g = &ctx.graphs;
    let secs = |c: &AtomicU64| c.load(Ordering::Relaxed) as f64 / 1e9;
    eprintln!(
        "postmortem: batch: serialising lines {:.2} s, waiting for the output {:.2} s, writing lines and groups {:.2} s (summed over crashes)",
        secs(&ser),
        secs(&wait),
        secs(&write)
    );
    eprintln!(
        "postmortem: batch: {} crashes ({} ok, {} failed) in {:.1} s, {} groups; graphs: {} built, {} cache hits, {} read",
        entries.len(),
        sink.ok,
        sink.failed,
        t.elapsed().as_secs_f64(),
        groups.len(),
        g.built.load(Ordering::Relaxed),
        g.hits.load(Ordering::Relaxed),
        g.read.load(Ordering::Relaxed),
    );
    Ok(())
}

fn write_error(e: std::io::Error) -> Result<(), Failure> {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Err(Failure {
            code: 0,
            message: String::new(),
        })
    } else {
        Err(Failure::input(format!("cannot write the output: {e}")))
    }
}

/// The group lines after the crash lines (JSON), or groups.jsonl and the
/// pages (HTML; `alone`: the crashes in no group, listed on the index).
fn write_groups(
    a: &BatchArgs,
    out: &mut dyn Write,
    groups: &[Value],
    alone: &[Value],
) -> Result<(), Failure> {
    let w = |out: &mut dyn Write| -> std::io::Result<()> {
        for g in groups {
            serde_json::to_writer(&mut *out, g)?;
            out.write_all(b"\n")?;
        }
        out.flush()
    };
    match (a.format, &a.output) {
        (BatchFormat::Html, Some(dir)) => {
            let mut f = open_output(a, "groups.jsonl")?;
            w(&mut f).or_else(write_error)?;
            let mut paths = PathMap::new();
            for r in &a.path_map {
                paths.push_spec(r).map_err(Failure::input)?;
            }
            let mut sources = fb::SourceFiles::new(paths);
            let written = fb::write_group_pages(dir, groups, alone, &mut sources)
                .map_err(|e| Failure::input(format!("{}: {e}", dir.display())))?;
            eprintln!(
                "postmortem: wrote {} ({} group pages)",
                dir.join("index.html").display(),
                written
            );
            Ok(())
        }
        _ => w(out).or_else(write_error),
    }
}

/// `--groups-from`: the group lines of crash lines read from files.
fn groups_from(a: &BatchArgs) -> Result<(), Failure> {
    let mut groups = Groups::default();
    for path in &a.groups_from {
        let f = std::fs::File::open(path)
            .map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
        for (no, line) in std::io::BufReader::new(f).lines().enumerate() {
            let line = line.map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
            if line.trim().is_empty() {
                continue;
            }
            let v: Value = serde_json::from_str(&line).map_err(|e| {
                Failure::input(format!(
                    "{}:{}: not a JSON line: {e}",
                    path.display(),
                    no + 1
                ))
            })?;
            groups.add(&v);
        }
    }
    let min = a.min_group.max(1);
    let (lines, alone) = (groups.lines(min), groups.alone(min));
    match a.format {
        BatchFormat::Json => write_groups(a, &mut open_output(a, "")?, &lines, &alone),
        // Writes groups.jsonl and the pages itself.
        BatchFormat::Html => write_groups(a, &mut std::io::sink(), &lines, &alone),
    }
}
