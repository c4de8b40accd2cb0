//! `postmortem why`: the analysis of `analyze`, then the statements that
//! made the faulting value, ranked (`postmortem_formats::write::chain`).

use crate::analyze::{causes, pipeline_failure, stage_threads};
use crate::exit::{write_out, Failure};
use crate::inputs::{load, Inputs};
use crate::solvers::SolverArgs;
use clap::{Args, ValueEnum};
use postmortem_formats::write::chain;

pub const LONG_ABOUT: &str = "Why it crashed: from the faulting value back to the statements \
that made it.

From a core (or minidump) and the binary, postmortem names the instruction that faulted \
and the value it used: a variable the crash's statement loads (`e` = 0x0 in `e->val`), a \
struct field loaded through a pointer (`s->buf`), a call's result, or, for a fault inside \
a library near address 0, a NULL the program passed. It asks which stores can have left \
that value on an execution the report allows (the same analysis as `analyze`) and follows \
each back, the value unchanged, through copies, call results (the callee's returns) and \
parameters (the callers' arguments); it names the branches that kept a store that would \
have set another value from running, and the branches that tested the bad value and let \
it through. A field is also written unseen (memset, memcpy), so its suspects are never \
Yes. The suspects are printed ranked, most likely root cause first (a heuristic order; \
the labels are sound): a constant that made the value on every such execution (Yes), the \
branches that ran (Yes), the other definitions on every execution (Yes), then those on \
some (Maybe: constants first), then branches that may have run (Maybe). The injected-bug \
benchmark (scripts/why-bench.py) measures how often the root cause comes first.";

/// `postmortem why`.
#[derive(Args)]
pub struct WhyArgs {
    #[command(flatten)]
    inputs: Inputs,
    #[command(flatten)]
    solver: SolverArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = WhyFormat::Text)]
    format: WhyFormat,
    /// At most this many suspects.
    #[arg(long, value_name = "N", default_value_t = 10)]
    max: usize,
}

#[derive(Copy, Clone, ValueEnum, PartialEq, Eq)]
enum WhyFormat {
    Text,
    Json,
}

pub fn run(a: WhyArgs) -> Result<(), Failure> {
    if a.inputs.core.is_none() && a.inputs.minidump.is_none() {
        return Err(Failure::input(
            "`why` reads the faulting value from the crash image: give --core (or \
             --minidump) and --binary",
        ));
    }
    let deadline = a.solver.deadline();
    postmortem_core::budget::with_deadline(deadline, || run_within(a))
}

fn run_within(a: WhyArgs) -> Result<(), Failure> {
    let started = std::time::Instant::now();
    let mut loaded = load(&a.inputs, a.solver.memory_budget())?;
    let s = a.solver.build(a.solver.solver);
    let staging = postmortem_core::staged::Staging {
        started: Some(started),
        ..a.solver.staging(stage_threads(&loaded.report))
    };
    let t = std::time::Instant::now();
    let an = postmortem_core::pipeline::analyse(&*s, &loaded.graph, &loaded.report, staging)
        .map_err(|e| pipeline_failure(e, &a.inputs.report_name(), &loaded.graph, &loaded.report))?;
    loaded.timings.recover_ms = t.elapsed().as_secs_f64() * 1000.0;
    let mut fault = loaded.fault.clone().unwrap_or_default();
    fault.causes = causes(&*s, &loaded, &an.rec.labels);
    let suspects = chain::suspects(&fault, a.max);
    write_out(|out| match a.format {
        WhyFormat::Text => chain::write_text(out, &fault, &suspects),
        WhyFormat::Json => chain::write_json(out, &fault, &suspects),
    })
}
