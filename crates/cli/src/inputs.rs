//! The inputs every analysis command takes: a graph, a report, and how to
//! read them.

use crate::graph::load_graph;
use crate::Failure;
use clap::{Args, ValueEnum};
use postmortem_core::{Icfg, Report};
use postmortem_formats::output::Timings;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Reads a failure report against a graph.
pub fn load_report(path: &Path, g: &Icfg) -> Result<Report, Failure> {
    postmortem_formats::report_json::read_report_path(path, g).map_err(Failure::input)
}

#[derive(Args)]
pub struct Inputs {
    /// The control-flow graph: csi-cc GraphML (optionally gzip-compressed).
    #[arg(long, value_name = "GRAPH")]
    pub cfg: PathBuf,
    /// The failure report: csi-grissom JSON (`stack`+`crash` or
    /// `crashstack`, `obsYes`, `obsNo`).
    #[arg(long, value_name = "REPORT")]
    pub report: PathBuf,
    /// Use only the crash and the stack; ignore obsYes and obsNo
    /// (grissom's -stackonly).
    #[arg(long)]
    pub stack_only: bool,
    /// The solver. `utl`: unreliable trace languages over the
    /// context-insensitive ICFG (PLDI 2017, section 4.2).
    #[arg(long, value_enum, default_value_t = SolverName::Utl)]
    pub solver: SolverName,
}

#[derive(Copy, Clone, ValueEnum)]
pub enum SolverName {
    /// Unreliable trace languages (polynomial, one pass for all nodes).
    Utl,
}

pub struct Loaded {
    pub graph: Icfg,
    pub report: Report,
    pub timings: Timings,
}

pub fn load(inputs: &Inputs) -> Result<Loaded, Failure> {
    let t = Instant::now();
    let graph = load_graph(&inputs.cfg)?;
    let parse_graph_ms = crate::ms(t);
    let t = Instant::now();
    let mut report = load_report(&inputs.report, &graph)?;
    if inputs.stack_only {
        report = report.stack_only();
    }
    let parse_report_ms = crate::ms(t);
    Ok(Loaded { graph, report, timings: Timings { parse_graph_ms, parse_report_ms, recover_ms: 0.0 } })
}

