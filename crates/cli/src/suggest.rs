//! `postmortem suggest`: the points whose observation would decide the
//! most Maybe lines ([`postmortem_core::suggest`]).

use crate::analyze::pipeline_failure;
use crate::exit::{ms, write_out, Failure};
use crate::inputs::{load, load_other, Inputs};
use crate::render::{self, AnalyzeFormat, OutputArgs};
use crate::solvers::SolverArgs;
use clap::{Args, ValueEnum};
use postmortem_core::suggest::{suggest_group, Crash, Limits, Method};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// `postmortem help suggest`, before the options.
pub const LONG_ABOUT: &str = "\
Which single program point, had it been observed (a log line, a coverage
flag, a breakpoint in a reproduction), would decide the most source lines
that are still Maybe? Lists the top k points (file:line and function) with
a guarantee for the solver used: the Maybe lines decided if the point is
observed to have run, if it is observed not to have run, and the worst
case of the two. An exact count comes from running the analysis again
with that observation added; on a large program (--method bounds, the
default past 400 candidate points) every point is first ranked by a
proven lower bound from dominator trees, the best are then confirmed by
re-running, and a count not confirmed within the limits is printed as
'>=N' (a proven lower bound).

Takes the same inputs as `analyze`. Points on exactly the same paths (a
straight chain of statements) are one point. The search stops at --budget
or --max-analyses with the best points found so far and says so.

Example:
  postmortem suggest --cfg prog.bc --backtrace bt.txt --log prog.log -k 5";

#[derive(Copy, Clone, ValueEnum, PartialEq, Eq, Debug)]
pub enum SuggestFormat {
    /// A table: point, lines decided if it ran, if not, worst case.
    Text,
    /// One JSON object with the list of points.
    Json,
    /// The HTML report of `analyze`, with a "What to observe next"
    /// section, in the directory given by -o.
    Html,
}

#[derive(Copy, Clone, ValueEnum, PartialEq, Eq, Debug)]
pub enum MethodArg {
    /// `exact` up to 400 candidate points, else `bounds`.
    Auto,
    /// Re-run the analysis for every point: the exact top k.
    Exact,
    /// Dominator lower bounds for every point, the best confirmed.
    Bounds,
}

#[derive(Args)]
pub struct SuggestArgs {
    #[command(flatten)]
    inputs: Inputs,
    #[command(flatten)]
    solver: SolverArgs,
    /// How many points to list.
    #[arg(short = 'k', value_name = "N", default_value_t = 10)]
    k: usize,
    /// The most time the search may take, in seconds (the reading and the
    /// first analysis not counted); past it, the best points found so far
    /// are listed and the output says the list is incomplete. Each search
    /// of the solver is bounded by --timeout as for `analyze`.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0,
          value_parser = crate::solvers::parse_timeout)]
    budget: f64,
    /// The most analyses the search may run (one per observation tried).
    #[arg(long, value_name = "N")]
    max_analyses: Option<usize>,
    /// Analyses run at once (default: the number of CPUs, at most 4).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    threads: Option<u16>,
    /// Another crash of the same program (repeatable): a report (.json,
    /// .json.gz) or a backtrace. With it, points are ranked by their worst
    /// case summed over all the crashes (the main inputs' and these), and
    /// `if ran` / `if not` are sums too.
    #[arg(long, value_name = "FILE")]
    also: Vec<PathBuf>,
    /// How to rank the points: `exact` runs the analysis again for every
    /// point (branch and bound: the exact top k, slow on large programs);
    /// `bounds` ranks every point by a proven lower bound from dominator
    /// trees in one pass, then confirms the best by re-running; `auto`
    /// is `exact` up to 400 candidate points, else `bounds`.
    #[arg(long, value_enum, default_value_t = MethodArg::Auto)]
    method: MethodArg,
    /// Output format.
    #[arg(long, value_enum, default_value_t = SuggestFormat::Text)]
    format: SuggestFormat,
    /// The directory `--format html` writes its pages to.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "DIR",
        required_if_eq("format", "html")
    )]
    output: Option<PathBuf>,
}

pub fn run(a: SuggestArgs) -> Result<(), Failure> {
    // --timeout: one deadline for the whole run.
    let deadline = a.solver.deadline();
    postmortem_core::budget::with_deadline(deadline, || run_within(a))
}

/// The search's limits from the arguments; `recover_ms`: what the base
/// analysis took (each confirmation is expected to cost as much).
fn limits(a: &SuggestArgs, recover_ms: f64) -> Limits {
    let threads = a.threads.map(usize::from).unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get().min(4))
            .unwrap_or(1)
    });
    Limits {
        k: a.k,
        budget: Some(Duration::from_secs_f64(a.budget)),
        max_analyses: a.max_analyses,
        threads,
        method: match a.method {
            MethodArg::Auto => Method::Auto,
            MethodArg::Exact => Method::Exact,
            MethodArg::Bounds => Method::Bounds,
        },
        analysis_time: Some(Duration::from_secs_f64(recover_ms / 1e3)),
    }
}

fn run_within(a: SuggestArgs) -> Result<(), Failure> {
    let html = OutputArgs {
        format: AnalyzeFormat::Html,
        output: a.output.clone(),
    };
    if a.format == SuggestFormat::Html {
        html.prepare()?;
    } else if a.output.is_some() {
        eprintln!(
            "postmortem: warning: -o is only used by --format html; writing to standard output"
        );
    }
    let mut loaded = load(&a.inputs, a.solver.memory_budget())?;
    // Each candidate's analysis would stage every case again: only when
    // asked for.
    if !a.inputs.correlations {
        loaded.report.cases.clear();
    }
    let s = a.solver.build(a.solver.solver);
    let t = Instant::now();
    // What `analyze` labels, and the labels before the lift (the bounds'
    // graph); every value staged (no --value-budget): the guarantees
    // compare analyses, which a time budget would make depend on the load.
    let staging = postmortem_core::staged::Staging {
        value_budget: None,
        ..a.solver
            .staging(crate::analyze::stage_threads(&loaded.report))
    };
    let an = postmortem_core::pipeline::analyse(&*s, &loaded.graph, &loaded.report, staging)
        .map_err(|e| pipeline_failure(e, &a.inputs.report_name(), &loaded.graph, &loaded.report))?;
    loaded.timings.recover_ms = ms(t);
    let limits = limits(&a, loaded.timings.recover_ms);
    let threads = limits.threads;
    // The group's other crashes and their base labels.
    let mut others = Vec::new();
    for p in &a.also {
        let r = load_other(&a.inputs, &loaded.graph, p, a.solver.memory_budget())?;
        let o = postmortem_core::pipeline::analyse(&*s, &loaded.graph, &r, staging)
            .map_err(|e| pipeline_failure(e, p, &loaded.graph, &r))?;
        let first = o.first(&loaded.graph, &r);
        others.push((r, o.rec.labels, first));
    }
    let t = Instant::now();
    let first = an.first(&loaded.graph, &loaded.report);
    let mut crashes = vec![Crash {
        report: &loaded.report,
        base: &an.rec.labels,
        first: first.as_deref(),
    }];
    crashes.extend(others.iter().map(|(report, base, first)| Crash {
        report,
        base,
        first: first.as_deref(),
    }));
    let sug = suggest_group(&*s, &loaded.graph, &crashes, &limits);
    eprintln!(
        "postmortem: note: suggest took {:.0} ms ({} analyses, {} thread{})",
        ms(t),
        sug.analyses,
        threads,
        if threads == 1 { "" } else { "s" }
    );
    let g = &loaded.graph;
    match a.format {
        SuggestFormat::Text => write_out(|out| {
            postmortem_formats::write::suggest::write_text(out, g, &sug, s.name(), &loaded.logs)
        }),
        SuggestFormat::Json => write_out(|out| {
            serde_json::to_writer_pretty(
                &mut *out,
                &postmortem_formats::write::suggest::to_json(g, &sug, s.name(), &loaded.logs),
            )?;
            writeln!(out)
        }),
        SuggestFormat::Html => {
            let cfg_path = a.inputs.cfg.display().to_string();
            let report_path = a.inputs.report_name().display().to_string();
            let view = crate::analyze::view(
                &loaded,
                &an,
                s.name(),
                &cfg_path,
                &report_path,
                a.inputs.stack_only,
            );
            let (witness, witness_check, set_aside) = crate::inputs::checked_witness(&*s, &loaded);
            write_out(|out| {
                render::write_analysis_as(
                    out,
                    &html,
                    &a.inputs,
                    &loaded.report,
                    &render::HtmlExtras {
                        witness: witness.as_deref(),
                        witness_check: witness_check.as_ref(),
                        witness_set_aside: &set_aside,
                        why: &postmortem_core::why::Why::default(),
                        suggestions: Some(&sug),
                        logs: &loaded.logs,
                    },
                    &view,
                )
            })
        }
    }
}
