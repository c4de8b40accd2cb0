//! The `postmortem` binary: argument handling, loading, exit codes. All
//! analysis lives in the library crates.
//!
//! Exit codes: 0 success; 1 internal error; 2 bad usage or unreadable /
//! malformed input; 3 the report is impossible for this program; 4 a
//! solver comparison failed.

mod bench;
mod graph;
mod inputs;
mod render;

use clap::{Args, Parser, Subcommand};
use graph::load_graph;
use inputs::{load, Inputs, SolverName};
use render::Format;
use postmortem_core::utl::Utl;
use postmortem_core::{Answer, Icfg, NodeId, Query, SolveError, Solver};
use postmortem_formats::output::Analysis;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

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

const EXIT_CODES: &str = "Exit codes: 0 success, 1 internal error, 2 bad usage or unreadable input, \
3 the report is impossible for this program, 4 a solver comparison failed.";

#[derive(Subcommand)]
enum Command {
    /// Label every node and source line Yes / No / Maybe (bulk recovery).
    Analyze(AnalyzeArgs),
    /// Ask one question: may a node have run, or may it have been skipped?
    Query(QueryArgs),
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

#[derive(Args)]
struct AnalyzeArgs {
    #[command(flatten)]
    inputs: Inputs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Args)]
#[command(group(clap::ArgGroup::new("question").required(true).args(["may_run", "may_skip"])))]
struct QueryArgs {
    #[command(flatten)]
    inputs: Inputs,
    /// May this node (id as in the input graph) have run?
    #[arg(long, value_name = "NODE")]
    may_run: Option<String>,
    /// May this node (id as in the input graph) not have run?
    #[arg(long, value_name = "NODE")]
    may_skip: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Subcommand)]
enum CfgCommand {
    /// Parse the graph only and print its node, edge, function and
    /// call-site counts (the baseline for the cost of parsing).
    Stats {
        /// The control-flow graph.
        #[arg(long, value_name = "GRAPH")]
        cfg: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
}

/// A failure with its exit code and a message for stderr.
pub struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    fn input(message: impl std::fmt::Display) -> Failure {
        Failure { code: 2, message: message.to_string() }
    }
    fn internal(message: impl std::fmt::Display) -> Failure {
        Failure { code: 1, message: message.to_string() }
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Failure {
        Failure::internal(format!("cannot write output: {e}"))
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Analyze(a) => analyze(a),
        Command::Query(q) => query(q),
        Command::Cfg(CfgCommand::Stats { cfg, format }) => cfg_stats(&cfg, format),
        Command::Bench(b) => bench::run(b),
        Command::Synth(s) => bench::synth(s),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            // A closed pipe (`postmortem ... | head`) is not an error.
            if !f.message.is_empty() {
                eprintln!("postmortem: {}", f.message);
            }
            ExitCode::from(f.code)
        }
    }
}

/// Milliseconds since `since`.
pub fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}


fn solver(name: SolverName) -> Box<dyn Solver> {
    match name {
        SolverName::Utl => Box::new(Utl::default()),
    }
}

fn infeasible(culprit: postmortem_core::Origin, report_path: &Path) -> Failure {
    Failure {
        code: 3,
        message: format!(
            "{}: no execution of this program satisfies this report, so it is not a crash this program can have; \
             it became impossible with constraint {culprit} (constraints taken in order: crash, stack frames, obsYes, obsNo)",
            report_path.display()
        ),
    }
}

fn write_out(f: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<(), Failure> {
    let stdout = std::io::stdout();
    let mut lock = std::io::BufWriter::new(stdout.lock());
    match f(&mut lock).and_then(|_| lock.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Failure { code: 0, message: String::new() }),
        Err(e) => Err(e.into()),
    }
}

fn analyze(a: AnalyzeArgs) -> Result<(), Failure> {
    let mut loaded = load(&a.inputs)?;
    let s = solver(a.inputs.solver);
    let t = Instant::now();
    let rec = match s.recover(&loaded.graph, &loaded.report) {
        Ok(r) => r,
        Err(SolveError::Infeasible { culprit }) => return Err(infeasible(culprit, &a.inputs.report)),
    };
    loaded.timings.recover_ms = ms(t);
    let cfg_path = a.inputs.cfg.display().to_string();
    let report_path = a.inputs.report.display().to_string();
    let view = Analysis {
        graph: &loaded.graph,
        labels: &rec.labels,
        weakened: &rec.weakened,
        undecided: &rec.undecided,
        solver: s.name(),
        solver_stats: &rec.stats,
        cfg_path: &cfg_path,
        report_path: &report_path,
        stack_only: a.inputs.stack_only,
        timings: loaded.timings,
    };
    write_out(|out| render::write_analysis(out, a.format, &view))
}

fn node_arg(g: &Icfg, id: &str) -> Result<NodeId, Failure> {
    g.lookup(id).ok_or_else(|| Failure::input(format!("unknown node id `{id}`: no such node in the control-flow graph")))
}

fn query(q: QueryArgs) -> Result<(), Failure> {
    let loaded = load(&q.inputs)?;
    let g = &loaded.graph;
    let (question, what) = match (&q.may_run, &q.may_skip) {
        (Some(n), _) => (Query::MayRun(node_arg(g, n)?), format!("may {n} have run?")),
        (None, Some(n)) => (Query::MaySkip(node_arg(g, n)?), format!("may {n} have been skipped?")),
        (None, None) => unreachable!("clap requires one question"),
    };
    let s = solver(q.inputs.solver);
    let t = Instant::now();
    let base = s.check(g, &loaded.report, None);
    let checked = s.check(g, &loaded.report, Some(&question));
    let elapsed = ms(t);
    let report_possible = base.answer == Answer::Possible;
    let culprit = if report_possible { None } else { s.culprit(g, &loaded.report) };
    write_out(|out| {
        match q.format {
            Format::Text => {
                writeln!(out, "{}", checked.answer.as_str())?;
                writeln!(out, "question: {what}")?;
                if let Some(c) = culprit {
                    writeln!(out, "note: the report itself is impossible (from constraint {c} on)")?;
                }
                for w in &checked.weakened {
                    writeln!(out, "weakened {}: {}", w.origin, w.how)?;
                }
                writeln!(out, "time: {elapsed:.1} ms")?;
            }
            Format::Json => {
                let v = serde_json::json!({
                    "answer": checked.answer.as_str(),
                    "question": what,
                    "solver": s.name(),
                    "report_possible": report_possible,
                    "culprit": culprit.map(|c| c.to_string()),
                    "weakened": checked.weakened.iter().map(|w| serde_json::json!({"constraint": w.origin.to_string(), "how": w.how})).collect::<Vec<_>>(),
                    "time_ms": elapsed,
                });
                serde_json::to_writer_pretty(&mut *out, &v)?;
                writeln!(out)?;
            }
        }
        Ok(())
    })?;
    match culprit {
        Some(c) => Err(Failure { code: 3, ..infeasible(c, &q.inputs.report) }),
        None => Ok(()),
    }
}

fn cfg_stats(path: &Path, format: Format) -> Result<(), Failure> {
    let t = Instant::now();
    let g = load_graph(path)?;
    let parse = ms(t);
    let calls = g.nodes().flat_map(|n| g.succs(n)).filter(|e| e.1 == postmortem_core::EdgeKind::Call).count();
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
                let mut m: serde_json::Map<String, serde_json::Value> = stats.iter().map(|(k, v)| (k.to_string(), (*v).into())).collect();
                m.insert("start".into(), g.ext_id(g.start()).into());
                m.insert("parse_ms".into(), parse.into());
                serde_json::to_writer_pretty(&mut *out, &m)?;
                writeln!(out)?;
            }
        }
        Ok(())
    })
}
