//! The `postmortem` binary: argument handling, loading, exit codes. All
//! analysis lives in the library crates.
//!
//! Exit codes: 0 success; 1 internal error; 2 bad usage or unreadable /
//! malformed input; 3 the report is impossible for this program; 4 a
//! solver comparison failed.

mod analyze;
mod batch;
mod bench;
mod exit;
mod frontend;
mod graph;
mod inputs;
mod query;
mod render;
mod solvers;
mod suggest;
mod why;

use clap::{Parser, Subcommand};
use exit::{ms, write_out, Failure};
use graph::load_graph;
use render::Format;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// mimalloc: with two `batch` jobs, glibc's per-thread arenas were
/// trimmed and regrown between crashes (10x the page faults of one job:
/// 23.5M against 2.2M on 1,000 crashes), which cost the second core's
/// throughput. See [`tune_allocator`].
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's defaults keep freed memory for a while and commit arenas
/// eagerly: best for `batch`, whose crashes reuse it, but they double a
/// single analysis's peak (SQLite-sized UTL: 31 MB with glibc, 58 MB). For
/// every other command, arenas are committed as used and freed memory
/// goes back after [`PURGE_MS`]. Option numbers from mimalloc.h
/// (`mi_option_e`, the same in v2 and v3).
fn tune_allocator() {
    const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
    const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    /// Milliseconds freed memory stays before it goes back. At 0 the
    /// value stages' two threads each gave back and faulted in again the
    /// same pages (a TLB shootdown on the other core at each give-back:
    /// a fifth of the stages' time on bzip2's plain core). Paired whole
    /// process runs, 5 against 0: bzip2's plain core 0.046 s against
    /// 0.056 s, peak 22.0 MiB against 18.3; SQLite's 0.44 s against
    /// 0.47 s, peak 108 MiB against 107; the bundled `replace` failure
    /// 3% faster, peak 13.1 MiB against 12.4.
    const PURGE_MS: std::os::raw::c_long = 5;
    if std::env::args_os().nth(1).is_some_and(|c| c == "batch") {
        return;
    }
    // SAFETY: called first in `main`, before any other thread exists.
    unsafe {
        libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0);
        libmimalloc_sys::mi_option_set(PURGE_DELAY, PURGE_MS);
    }
    // Transparent huge pages: memory freed at once comes back as 2 MiB
    // pages, each zeroed whole when touched again. Off, a bzip2 core's
    // analysis peaks at half the memory (36 MB against 19 MB) in the
    // same time (issue 35).
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_THP_DISABLE takes no pointers.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// Tell what a crashed program did before it died.
///
/// postmortem reads a program's interprocedural control-flow graph and a
/// failure report (crash location, crash stack, coverage observations) and
/// labels every statement Yes (ran on every execution consistent with the
/// report), No (ran on none) or Maybe. Answers are sound: imprecision only
/// ever produces Maybe.
#[derive(Parser)]
#[command(name = "postmortem", version, after_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

const EXIT_CODES: &str =
    "Exit codes: 0 success, 1 internal error, 2 bad usage or unreadable input, \
3 the report is impossible for this program, 4 a solver comparison failed.";

#[derive(Subcommand)]
enum Command {
    /// Label every statement and source line Yes (surely ran), No (surely
    /// did not run) or Maybe.
    #[command(long_about = analyze::LONG_ABOUT, after_long_help = analyze::AFTER_LONG_HELP)]
    Analyze(analyze::AnalyzeArgs),
    /// Analyse many crashes (a manifest or a directory) in parallel, each
    /// graph built once: one JSON line per crash, then one per group of
    /// crashes with one signature.
    #[command(long_about = batch::LONG_ABOUT, after_long_help = batch::AFTER_LONG_HELP)]
    Batch(batch::BatchArgs),
    /// Ask one question: may a node have run, or may it have been skipped?
    Query(query::QueryArgs),
    /// Why it crashed: from the faulting value back to the statements that
    /// made it (a core or minidump), ranked.
    #[command(long_about = why::LONG_ABOUT)]
    Why(why::WhyArgs),
    /// What to observe next: the points whose observation (ran / did not
    /// run) would decide the most Maybe lines, each with a guarantee.
    #[command(long_about = suggest::LONG_ABOUT)]
    Suggest(suggest::SuggestArgs),
    /// Inspect a control-flow graph.
    #[command(subcommand)]
    Cfg(CfgCommand),
    /// Time parsing and recovery on the bundled data and a synthetic
    /// gcc-sized program, and print a table.
    Bench(bench::BenchArgs),
    /// Write a synthetic program (GraphML) and a failure report from a
    /// simulated run of it.
    Synth(bench::SynthArgs),
}

#[derive(Subcommand)]
enum CfgCommand {
    /// Parse the graph only and print its node, edge, function and
    /// call-site counts (the baseline for the cost of parsing).
    Stats {
        /// The control-flow graph: csi-cc GraphML, LLVM IR from clang-14
        /// (.ll or .bc) or a graph cache (.pmcfg).
        #[arg(long, value_name = "GRAPH")]
        cfg: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Build the graph of a program (LLVM IR .ll/.bc, or any graph file)
    /// once and write it as a binary graph cache (.pmcfg) that every
    /// --cfg option loads fast.
    Build {
        /// The program: LLVM IR from `clang-14 -g -O0 -emit-llvm` (.ll or
        /// .bc; link several files first with llvm-link-14), or GraphML.
        #[arg(value_name = "INPUT")]
        input: PathBuf,
        /// Where to write the cache.
        #[arg(short, long, value_name = "FILE.pmcfg")]
        output: PathBuf,
    },
}

fn main() -> ExitCode {
    tune_allocator();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Analyze(a) => analyze::run(a),
        Command::Batch(b) => batch::run(b),
        Command::Query(q) => query::run(q),
        Command::Why(w) => why::run(w),
        Command::Suggest(a) => suggest::run(a),
        Command::Cfg(CfgCommand::Stats { cfg, format }) => cfg_stats(&cfg, format),
        Command::Cfg(CfgCommand::Build { input, output }) => graph::build_cache(&input, &output),
        Command::Bench(b) => bench::run(b),
        Command::Synth(s) => bench::synth(s),
    };
    exit::exit_code(result)
}

fn cfg_stats(path: &Path, format: Format) -> Result<(), Failure> {
    let t = Instant::now();
    let g = load_graph(path)?;
    let parse = ms(t);
    let calls = g
        .nodes()
        .flat_map(|n| g.succs(n))
        .filter(|e| e.1 == postmortem_core::EdgeKind::Call)
        .count();
    let stats = [
        ("nodes", g.num_nodes()),
        ("edges", g.num_edges()),
        ("call_edges", calls),
        ("functions", g.functions().len()),
        ("call_sites", g.num_call_sites()),
        ("files", g.num_files()),
        ("heap_bytes", g.heap_bytes()),
    ];
    write_out(|out| {
        match format {
            Format::Text => {
                for (k, v) in stats {
                    writeln!(out, "{k:<11} {v}")?;
                }
                writeln!(out, "start       {}", g.ext_id(g.start()))?;
                writeln!(out, "parse_ms    {parse:.1}")?;
            }
            Format::Json => {
                let mut m: serde_json::Map<String, serde_json::Value> = stats
                    .iter()
                    .map(|(k, v)| (k.to_string(), (*v).into()))
                    .collect();
                m.insert("start".into(), g.ext_id(g.start()).into());
                m.insert("parse_ms".into(), parse.into());
                serde_json::to_writer_pretty(&mut *out, &m)?;
                writeln!(out)?;
            }
        }
        Ok(())
    })
}
