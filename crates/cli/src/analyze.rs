//! `postmortem analyze`: label every node, with one solver or comparing two.

use crate::exit::{ms, write_out, Failure};
use crate::inputs::{load, Inputs};
use crate::render;
use crate::solvers::{SolverArgs, SolverName};
use clap::{Args, ValueEnum};
use postmortem_core::why::{self, Why};
use postmortem_core::{Label, Origin, Recovery, SolveError};
use postmortem_formats::write::output::Analysis;
use std::path::Path;
use std::time::{Duration, Instant};

/// `postmortem help analyze`: what the labels mean and two examples,
/// before the options.
pub const LONG_ABOUT: &str = "\
Label every statement of a crashed program, and every source line, with
what the program did before it died:

  Yes    it surely ran: it ran on every execution of the program that fits
         the failure data (the crash, its stack, coverage, the log)
  No     it surely did not run: it ran on no such execution
  Maybe  not decided: some such executions ran it, some did not (or a
         limit was reached)

Answers are sound: when unsure, postmortem says Maybe, never a wrong Yes or
No. The text output gives the counts, then each file's Yes, No and Maybe
lines; --format html -o DIR writes pages that start from the crash.

Example 1, from a core dump (the program built from its own LLVM IR):
  clang-14 -g -O0 -emit-llvm -c prog.c -o prog.bc
  clang-14 -g -O0 prog.bc -o prog
  ulimit -c unlimited; ./prog ARGS        # crashes and writes a core
  postmortem analyze --cfg prog.bc --core core --binary prog

Example 2, from a backtrace and the program's log:
  ./prog ARGS 2> prog.log                 # crashes; the lines it printed
  gdb -batch -ex bt ./prog core > bt.txt  # or the crash handler's backtrace
  postmortem analyze --cfg prog.bc --backtrace bt.txt --log prog.log --format html -o report";

/// `postmortem help analyze`, after the options.
pub const AFTER_LONG_HELP: &str = "\
Getting a core: run `ulimit -c unlimited` in the shell that starts the
program (/proc/sys/kernel/core_pattern says where the core goes; `core`
writes ./core); with systemd-coredump, `coredumpctl dump PROG -o core`;
from a debugger, `gdb -batch -ex run -ex generate-core-file ./prog ARGS`.
A minidump (Breakpad, Crashpad) is read the same way: --minidump crash.dmp
--binary prog (or given to --core); the flags and variables only where the
dump holds their memory.

LLVM IR (--cfg prog.bc or .ll) is read by a second executable,
postmortem-llvm: the one named by the environment variable POSTMORTEM_LLVM,
else the one next to postmortem, else the one on the PATH. `cargo build -p
postmortem` builds it next to postmortem (`cargo run` does not), `cargo
install --path crates/cli` installs both. For a large program, build the
graph once: `postmortem cfg build prog.bc -o prog.pmcfg`, then --cfg
prog.pmcfg.

Limits. Past one, the answers stay sound (what is not decided is Maybe) and
the output says which limit was reached:
  --max-states N          the most states one search of the program's paths
                          may build (default 4000000)
  --timeout SECONDS       the most time the whole run may take, as
                          timeout(1) means it (default: none)
  --max-memory BYTES      the memory the whole run may use (default: a
                          quarter of the RAM, at most 4G, at most a third
                          of ulimit -v); also the largest graph file
  --max-input-size BYTES  the largest report, backtrace or log (default 64M);
                          a larger one is refused (exit code 2)

Exit codes:
  0  the labels were written
  1  internal error (a bug in postmortem)
  2  bad usage, or an input that cannot be read or is malformed (one line
     naming the file)
  3  the failure data is impossible for this program: no execution fits it
     (another build of the program? frames in the wrong order?); the
     message names the first piece of data that made it so
  4  --compare: the two solvers' labels do not relate as --expect says";

#[derive(Args)]
pub struct AnalyzeArgs {
    #[command(flatten)]
    inputs: Inputs,
    #[command(flatten)]
    solver: SolverArgs,
    #[command(flatten)]
    output: render::OutputArgs,
    /// Run two solvers, A,B (e.g. `utl,fsa`), and check how their answers
    /// relate (see --expect) instead of printing labels.
    #[arg(long, value_name = "A,B", value_delimiter = ',')]
    compare: Vec<SolverName>,
    /// With --compare: `eq` the same labels; `gt` A is at least as precise
    /// as B (A's Maybe nodes are Maybe for B, A's Yes and No include B's);
    /// `lt` the reverse. A violation exits with code 4 and names the first
    /// differing node.
    #[arg(long, value_enum, default_value_t = Expect::Eq, requires = "compare")]
    expect: Expect,
}

#[derive(Copy, Clone, ValueEnum, PartialEq, Eq)]
enum Expect {
    Eq,
    Gt,
    Lt,
}

/// The exit for an impossible report; the culprit is named in program
/// terms from the report it indexes.
pub fn infeasible(
    culprit: Origin,
    report_path: &Path,
    g: &postmortem_core::Icfg,
    report: &postmortem_core::Report,
) -> Failure {
    let what = report
        .describe(g, culprit)
        .map(|w| format!(" ({w})"))
        .unwrap_or_default();
    Failure {
        code: 3,
        message: format!(
            "{}: no execution of this program satisfies this report, so it is not a crash this program can have; \
             it became impossible with constraint {culprit}{what} (constraints taken in order: crash, stack frames, obsYes, obsNo, bursty, values)",
            report_path.display()
        ),
    }
}

/// The exit for a solver error on `report` over `g`.
pub fn solve_failure(
    e: SolveError,
    report_path: &Path,
    g: &postmortem_core::Icfg,
    report: &postmortem_core::Report,
) -> Failure {
    match e {
        SolveError::Infeasible { culprit } => infeasible(culprit, report_path, g, report),
        SolveError::Unsupported(_) => Failure::input(e),
        SolveError::Limit(_) => Failure::internal(e),
    }
}

/// Threads for the value stages: two where there are two cores and
/// values to stage (asking how many cores there are reads the cgroup's
/// files: not for a report without values).
pub fn stage_threads(report: &postmortem_core::Report) -> usize {
    if report.values.is_empty() {
        return 1;
    }
    std::thread::available_parallelism().map_or(1, |n| n.get().min(2))
}

/// The failure of [`postmortem_core::pipeline::analyse`] as the command
/// reports it.
pub fn pipeline_failure(
    e: postmortem_core::pipeline::Failed,
    report_path: &Path,
    g: &postmortem_core::Icfg,
    report: &postmortem_core::Report,
) -> Failure {
    match e {
        postmortem_core::pipeline::Failed::Solve(e) => solve_failure(e, report_path, g, report),
        postmortem_core::pipeline::Failed::RanSomewhere(n) => Failure::impossible(format!(
            "{}: node {} (`{}`) ran in some thread (its coverage flag is set), but no execution consistent with the rest of the report runs it: the graph misses control flow that reaches it (threads, signal handlers, callbacks), or the flags are not of this program",
            report_path.display(),
            g.ext_id(n),
            g.function(g.func_of(n)).name
        )),
    }
}

/// The analysis of a loaded failure as the writers take it.
pub fn view<'a>(
    loaded: &'a crate::inputs::Loaded,
    an: &'a postmortem_core::pipeline::Analysed,
    solver: &'a str,
    cfg_path: &'a str,
    report_path: &'a str,
    stack_only: bool,
) -> Analysis<'a> {
    Analysis {
        graph: &loaded.graph,
        labels: &an.rec.labels,
        weakened: &an.rec.weakened,
        undecided: &an.rec.undecided,
        solver,
        solver_stats: &an.rec.stats,
        cfg_path,
        report_path,
        stack_only,
        timings: loaded.timings,
        values: &loaded.values,
        residue: loaded.residue.as_ref(),
        frames: &an.frames,
        lift: Some(&an.lift),
        stack_len: loaded.report.stack.len(),
        logs: &loaded.logs,
        fault: loaded.fault.as_ref(),
        line_notes: Some(&loaded.line_notes),
        log_decided: None,
        report: Some(&loaded.report),
    }
}

pub fn run(a: AnalyzeArgs) -> Result<(), Failure> {
    // --timeout: one deadline for the whole run.
    let deadline = a.solver.deadline();
    postmortem_core::budget::with_deadline(deadline, || run_within(a))
}

fn run_within(a: AnalyzeArgs) -> Result<(), Failure> {
    let started = std::time::Instant::now();
    if !a.compare.is_empty() && a.compare.len() != 2 {
        return Err(Failure::input(
            "--compare takes exactly two solvers, e.g. --compare utl,fsa",
        ));
    }
    // A bad -o is found before the work, not after.
    a.output.prepare()?;
    let mut loaded = load(&a.inputs, a.solver.memory_budget())?;
    if !a.compare.is_empty() {
        return compare(&a, &loaded.graph, &loaded.report);
    }
    let s = a.solver.build(a.solver.solver);
    let t = Instant::now();
    // Values (from a core) in stages: see `postmortem_core::staged`; the
    // value stages two at a time where there are two cores (each stage
    // may use the solver's whole memory budget; `batch` runs them one by
    // one, its crashes already use every core). Then the nodes Local
    // labels prove ran, fed back (the Local lift).
    let staging = postmortem_core::staged::Staging {
        started: Some(started),
        ..a.solver.staging(stage_threads(&loaded.report))
    };
    let an = postmortem_core::pipeline::analyse(&*s, &loaded.graph, &loaded.report, staging)
        .map_err(|e| {
            let mut f = pipeline_failure(e, &a.inputs.report_name(), &loaded.graph, &loaded.report);
            if let (3, Some(hint)) = (f.code, &loaded.impossible_hint) {
                f.message = format!("{}; {hint}", f.message);
            }
            f
        })?;
    loaded.timings.recover_ms = ms(t);
    let log_decided = decided_by_logs(&*s, &loaded, &an, staging);
    let causes = causes(&*s, &loaded, &an.rec.labels);
    if let Some(f) = loaded.fault.as_mut() {
        f.causes = causes;
    }
    let cfg_path = a.inputs.cfg.display().to_string();
    let report_path = a.inputs.report_name().display().to_string();
    let mut view = view(
        &loaded,
        &an,
        s.name(),
        &cfg_path,
        &report_path,
        a.inputs.stack_only,
    );
    view.log_decided = log_decided;
    // The HTML page shows one concrete execution (every solver builds
    // witnesses); a failed or limited search just leaves it out.
    let (witness, witness_check, set_aside) = if a.output.format == render::AnalyzeFormat::Html {
        crate::inputs::checked_witness(&*s, &loaded)
    } else {
        (None, None, Vec::new())
    };
    let why = if a.output.format == render::AnalyzeFormat::Html {
        explain_lines(
            &a,
            &loaded.graph,
            &loaded.report,
            &an.rec.labels,
            loaded.timings.recover_ms,
        )
    } else {
        Why::default()
    };
    write_out(|out| {
        render::write_analysis_as(
            out,
            &a.output,
            &a.inputs,
            &loaded.report,
            &render::HtmlExtras {
                witness: witness.as_deref(),
                witness_check: witness_check.as_ref(),
                witness_set_aside: &set_aside,
                why: &why,
                suggestions: None,
                logs: &loaded.logs,
            },
            &view,
        )
    })
}

/// Where the values that faulted were made ([`postmortem_core::cause`]):
/// for each suspect of the fault with a variable the front-end tracks
/// completely, the definitions that can reach the crash on an execution
/// the report allows, one check each, within [`causes_budget`] in all (a
/// check the deadline stops counts as possible); in a program with code that may
/// run asynchronously (a handler's or a thread's stores), only the crash
/// frame's locals within its activation, and the faulting operands that
/// are no variable ([`postmortem_formats::vars::operand_cause`]).
pub fn causes(
    s: &(dyn postmortem_core::Solver + Sync),
    loaded: &crate::inputs::Loaded,
    labels: &[Label],
) -> Vec<postmortem_formats::image::fault::Cause> {
    causes_of(
        s,
        &Evidence {
            graph: &loaded.graph,
            report: &loaded.report,
            values: &loaded.values,
            vars: loaded.vars.as_ref(),
            fault: loaded.fault.as_ref(),
            budget: causes_budget(loaded.timings.recover_ms),
        },
        labels,
    )
}

/// The causes' checks' time: four times the analysis's, at least 0.5 s,
/// at most 5 s (a check the deadline stops counts as possible).
pub fn causes_budget(recover_ms: f64) -> Duration {
    Duration::from_secs_f64(4.0 * recover_ms / 1000.0)
        .clamp(Duration::from_millis(500), Duration::from_secs(5))
}

/// What [`causes_of`] reads: the graph, the report, the values read from
/// the core, the front-end's variables and what killed the process.
pub struct Evidence<'a> {
    pub graph: &'a postmortem_core::Icfg,
    pub report: &'a postmortem_core::Report,
    pub values: &'a [postmortem_formats::vars::ValueUse],
    pub vars: Option<&'a postmortem_formats::vars::VarMap>,
    pub fault: Option<&'a postmortem_formats::image::fault::Fault>,
    /// The time the checks may take ([`causes_budget`]).
    pub budget: Duration,
}

/// [`causes`] from its parts (`batch` has no [`crate::inputs::Loaded`]).
pub fn causes_of(
    s: &(dyn postmortem_core::Solver + Sync),
    e: &Evidence<'_>,
    labels: &[Label],
) -> Vec<postmortem_formats::image::fault::Cause> {
    let Some(f) = e.fault else {
        return Vec::new();
    };
    // With code that may run asynchronously (a handler's or a thread's
    // stores off the crashing path), no "last write" over the whole run
    // is asked; a local of the crash frame is still traced within its
    // activation, and the faulting operands' fields and calls (never
    // claimed to be the only definition) are.
    let async_code = !e.graph.async_functions().is_empty();
    let deadline = Instant::now() + e.budget;
    let mut out: Vec<postmortem_formats::image::fault::Cause> =
        postmortem_core::budget::with_deadline(Some(deadline), || {
            f.suspect_values
                .iter()
                .filter_map(|&i| {
                    let u = e.values.get(i)?;
                    // The crash frame's walk, for a local of it.
                    let walk = e
                        .vars
                        .zip(e.report.crash.as_ref())
                        .and_then(|(map, crash)| {
                            postmortem_formats::vars::crash_walk(e.graph, map, u, crash, labels)
                        });
                    let made = match (&u.cause, &walk) {
                        (Some(v), Some(w)) if !async_code => {
                            let v = postmortem_formats::vars::within_frame(v, w);
                            postmortem_core::cause::reaching(s, e.graph, e.report, &v, Some(labels))
                        }
                        (Some(v), _) if !async_code => {
                            postmortem_core::cause::reaching(s, e.graph, e.report, v, Some(labels))
                        }
                        // A local of a function that may be active twice (or
                        // any, with asynchronous code): within the crash
                        // frame's activation, from the graph.
                        (_, Some(w)) => postmortem_formats::vars::frame_reaching(e.vars?, u, w),
                        _ => return None,
                    };
                    let made = match (e.vars, e.report.crash.as_ref()) {
                        (Some(map), Some(crash)) => {
                            postmortem_formats::vars::without_unwritten_parameter(
                                map,
                                u,
                                crash.nodes(),
                                made,
                            )
                        }
                        _ => made,
                    };
                    if made.is_empty() {
                        return None;
                    }
                    let entered_by = postmortem_formats::vars::entered_by(e.graph, e.report, u);
                    let mut c = postmortem_formats::vars::cause(
                        e.graph,
                        u,
                        &made,
                        labels,
                        e.vars,
                        &entered_by,
                    );
                    if let (Some(map), Some(w)) = (e.vars, &walk) {
                        c.guards = postmortem_formats::vars::guards(e.graph, map, u, w, labels);
                    }
                    // An index past the end: its bounds are the suspects,
                    // not how it counted up.
                    if f.index_values.contains(&i) {
                        c.made_by.clear();
                    }
                    c.carriers_first = f.bound_values.contains(&i);
                    if let Some(map) = e.vars.filter(|_| f.dangles(u.value)) {
                        let copy = postmortem_formats::vars::Origin::Copy(u.var as u32);
                        c.freed_by =
                            postmortem_formats::vars::freed_by(e.graph, map, &copy, labels);
                        c.freed_by.extend(postmortem_formats::vars::freed_before(
                            e.graph, map, &c.made_by, labels,
                        ));
                    }
                    if let (Some(map), Some(crash)) = (e.vars, e.report.crash.as_ref()) {
                        c.guards.extend(postmortem_formats::vars::wrong_checks(
                            e.graph, map, u, crash, labels,
                        ));
                        c.guards.extend(postmortem_formats::vars::bound_guards(
                            e.graph, map, u, crash, labels,
                        ));
                    }
                    Some(c)
                })
                .collect()
        });
    if let Some(map) = e.vars {
        out.extend(f.operands.iter().map(|o| {
            let mut c = postmortem_formats::vars::operand_cause(e.graph, map, o, labels);
            c.guards =
                postmortem_formats::vars::wrong_field_checks(e.graph, map, o, e.report, labels);
            c
        }));
    }
    out
}

/// How many more nodes the analysis `an` decided (Yes or No) with the
/// logs' traces than without them: the same analysis again without them,
/// within the first one's time (at least 0.25 s, at most 2 s): a figure
/// for the reader, not evidence, so it may cost little.
/// None without a log, or when that second analysis did not finish
/// within its budget (it would count what the limits left undecided).
fn decided_by_logs(
    s: &(dyn postmortem_core::Solver + Sync),
    loaded: &crate::inputs::Loaded,
    an: &postmortem_core::pipeline::Analysed,
    staging: postmortem_core::staged::Staging,
) -> Option<usize> {
    let traces: Vec<_> = loaded
        .logs
        .iter()
        .filter_map(|m| m.trace.as_ref())
        .collect();
    if traces.is_empty() {
        return None;
    }
    let mut without = loaded.report.clone();
    without.obs_yes.retain(|t| !traces.contains(&t));
    let budget = Duration::from_secs_f64(loaded.timings.recover_ms / 1000.0)
        .clamp(Duration::from_millis(250), Duration::from_secs(2));
    let other = postmortem_core::budget::with_deadline(Some(Instant::now() + budget), || {
        postmortem_core::pipeline::analyse(s, &loaded.graph, &without, staging)
    })
    .ok()?;
    if postmortem_core::budget::past_deadline()
        || other.rec.undecided.len() > an.rec.undecided.len()
    {
        return None;
    }
    let decided = |l: &[Label]| l.iter().filter(|&&x| x != Label::Maybe).count();
    Some(decided(&an.rec.labels).saturating_sub(decided(&other.rec.labels)))
}

/// The most the HTML report spends on saying why lines are Yes or No.
const WHY_BUDGET: Duration = Duration::from_secs(3);

/// Why decided lines are decided ([`postmortem_core::why`]), for the HTML
/// report: with utl first (cheap), then fsa, then the chosen solver (cs
/// and best decide lines that only they can explain, at a cost of one
/// search per check), each check limited to a tenth of the budget, the
/// stack's functions first. The budget is twenty times the recovery's
/// time, at least 0.25 s and at most [`WHY_BUDGET`] (one explanation
/// already started runs to its end).
fn explain_lines(
    a: &AnalyzeArgs,
    g: &postmortem_core::Icfg,
    report: &postmortem_core::Report,
    labels: &[Label],
    recover_ms: f64,
) -> Why {
    let budget = Duration::from_secs_f64(recover_ms * 20.0 / 1000.0)
        .clamp(Duration::from_millis(250), WHY_BUDGET);
    let deadline = Instant::now() + budget;
    let mut quick = a.solver.clone();
    quick.timeout = Some(
        quick
            .timeout
            .unwrap_or(f64::MAX)
            .min(budget.as_secs_f64() / 10.0),
    );
    let mut names = vec![SolverName::Utl, SolverName::Fsa];
    if !names.contains(&a.solver.solver) {
        names.push(a.solver.solver);
    }
    let solvers: Vec<_> = names.into_iter().map(|n| quick.build(n)).collect();
    let refs: Vec<&dyn postmortem_core::Solver> = solvers.iter().map(|s| &**s as _).collect();
    let nodes = why::representatives(g, report, labels);
    let found = why::explain_labels(&refs, g, report, labels, &nodes, deadline);
    if found.left > 0 {
        eprintln!(
            "postmortem: note: why {} of {} decided lines are decided was not worked out in {:.2} s (the HTML report says why for the others)",
            found.left,
            nodes.len(),
            budget.as_secs_f64()
        );
    }
    found
}

/// Checks `expect` between two label vectors; the first violating node.
fn violation(expect: Expect, a: &[Label], b: &[Label]) -> Option<usize> {
    let at_least = |x: Label, y: Label| x == y || y == Label::Maybe; // x at least as precise as y
    (0..a.len()).find(|&i| match expect {
        Expect::Eq => a[i] != b[i],
        Expect::Gt => !at_least(a[i], b[i]),
        Expect::Lt => !at_least(b[i], a[i]),
    })
}

fn compare(
    a: &AnalyzeArgs,
    g: &postmortem_core::Icfg,
    report: &postmortem_core::Report,
) -> Result<(), Failure> {
    let (na, nb) = (a.compare[0], a.compare[1]);
    let run = |name: SolverName| -> Result<(Recovery, f64), Failure> {
        let s = a.solver.build(name);
        let t = Instant::now();
        let mut r = s
            .recover(g, report)
            .map_err(|e| solve_failure(e, &a.inputs.report_name(), g, report))?;
        postmortem_core::concurrency::mark_ran_somewhere(g, report, &mut r.labels).map_err(
            |n| {
                pipeline_failure(
                    postmortem_core::pipeline::Failed::RanSomewhere(n),
                    &a.inputs.report_name(),
                    g,
                    report,
                )
            },
        )?;
        Ok((r, ms(t)))
    };
    let ((ra, ta), (rb, tb)) = (run(na)?, run(nb)?);
    let bad = violation(a.expect, &ra.labels, &rb.labels);
    let name = |n: SolverName| format!("{n:?}").to_lowercase();
    let expect = match a.expect {
        Expect::Eq => "eq",
        Expect::Gt => "gt",
        Expect::Lt => "lt",
    };
    write_out(|out| {
        for (n, r, t) in [(na, &ra, ta), (nb, &rb, tb)] {
            let c = postmortem_core::summary::Counts::of(&r.labels);
            writeln!(
                out,
                "{:<4} yes {:>7}  no {:>7}  maybe {:>7}  ({t:.1} ms)",
                name(n),
                c.yes,
                c.no,
                c.maybe
            )?;
        }
        match bad {
            None => writeln!(out, "ok: {} {expect} {}", name(na), name(nb)),
            Some(_) => writeln!(out, "violated: {} {expect} {}", name(na), name(nb)),
        }?;
        Ok(())
    })?;
    match bad {
        None => Ok(()),
        Some(i) => Err(Failure {
            code: 4,
            message: format!(
                "{} {expect} {} does not hold: first differing node {} is {} for {} and {} for {}",
                name(na),
                name(nb),
                g.ext_id(postmortem_core::NodeId::new(i)),
                ra.labels[i].as_str(),
                name(na),
                rb.labels[i].as_str(),
                name(nb)
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Label::*;

    #[test]
    fn precision_relations() {
        assert_eq!(violation(Expect::Eq, &[Yes, No], &[Yes, No]), None);
        assert_eq!(violation(Expect::Eq, &[Yes, No], &[Yes, Maybe]), Some(1));
        assert_eq!(
            violation(Expect::Gt, &[Yes, No, Maybe], &[Maybe, No, Maybe]),
            None
        );
        assert_eq!(violation(Expect::Gt, &[Maybe, No], &[Yes, No]), Some(0));
        assert_eq!(violation(Expect::Lt, &[Maybe, No], &[Yes, No]), None);
        assert_eq!(violation(Expect::Gt, &[Yes], &[No]), Some(0));
    }
}
