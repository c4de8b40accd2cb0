//! `postmortem query`: one question, with a witness or an explanation
//! (written by `postmortem_formats::write::answer`).

use crate::analyze::solve_failure;
use crate::exit::{ms, write_out, Failure};
use crate::inputs::{load, Inputs};
use crate::solvers::{SolverArgs, SolverName};
use clap::{Args, ValueEnum};
use postmortem_core::{
    query as lang, solver::Checked, Answer, Icfg, NodeId, Origin, Query, Report, SolveError,
    Solver, Weakening,
};
use postmortem_formats::write::answer::{query_json, write_query_text, QueryAnswer};
use std::time::Instant;

const QUERY_HELP: &str = "\
QUERY LANGUAGE
  Selectors:  NODE-ID (as in the graph), fn:NAME (NAME was entered),
              call:NAME (a call site calling NAME), FILE:LINE (any node on
              that line of a file whose path ends with FILE).
  Formulas:   ran(S)        S happened
              not ran(S)    S never happened
              A then B      A happened, later B happened
              A and B, A or B, not A, (A)
  --regex:    a regular expression over selectors, one node per step:
              . (any node), S, !S (a node not in S), juxtaposition, |, *, +, ?,
              parentheses; quote a selector holding operator characters.

EXAMPLES (PLDI 2017)
  Is it possible that init() did not run?
      postmortem query --cfg G --report R 'not ran(fn:init)'
  Could x have been used at line 30 before being initialized at line 12?
      postmortem query --cfg G --report R --solver fsa --regex '(!a.c:12)* a.c:30 .*'
  Was lock called twice with no unlock in between?
      postmortem query --cfg G --report R --solver fsa --regex '.* call:lock (!call:unlock)* call:lock .*'

The first output line is `possible`, `impossible` or `unknown`. When a limit
(--max-states, --timeout, --max-memory) stops the search, the answer is utl's
(its constraints are weaker: `impossible` stays sound, `possible` lists the
limit among its weakenings), or `unknown` for a question utl cannot ask
(JSON \"gave_up\" says why); the exit code is 0 either way. When possible, it comes
with a witness: a complete path from the start to the crash that satisfies
everything the solver checked (JSON: \"witness\", input node ids; with utl,
the report as weakened, the weakenings listed; with cs and best, only a path
that matches calls with returns and the stack, else none). When impossible,
--explain (or --format json) gives a minimal set of report constraints, plus
the query, that is already impossible (every member is needed; found with
O(k log n) checks for k members out of n constraints, so it takes longer
than the answer on large reports).";

#[derive(Args)]
#[command(after_long_help = QUERY_HELP)]
#[command(group(clap::ArgGroup::new("question").required(true).args(["formula", "regex", "may_run", "may_skip"])))]
pub struct QueryArgs {
    #[command(flatten)]
    inputs: Inputs,
    #[command(flatten)]
    solver: SolverArgs,
    /// A formula of the query language (see below), e.g. `not ran(fn:init)`.
    #[arg(value_name = "QUERY")]
    formula: Option<String>,
    /// A regular expression over selectors (see below).
    #[arg(long, value_name = "REGEX")]
    regex: Option<String>,
    /// May this node (id as in the input graph) have run?
    #[arg(long, value_name = "NODE")]
    may_run: Option<String>,
    /// May this node (id as in the input graph) not have run?
    #[arg(long, value_name = "NODE")]
    may_skip: Option<String>,
    /// When impossible, compute a minimal impossible set of constraints.
    #[arg(long)]
    explain: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = QueryFormat::Text)]
    format: QueryFormat,
}

#[derive(Copy, Clone, ValueEnum, PartialEq, Eq)]
enum QueryFormat {
    Text,
    Json,
}

/// The answer when the chosen solver gave up at a limit: UTL's (its
/// constraints are weaker, so its `impossible` is sound and its `possible`
/// lists what it weakened), with the limit named as a weakening of the
/// query; or, when UTL cannot ask this question (a formula or regex it
/// does not support), no answer (`unknown`) and why.
fn degrade(
    q: &QueryArgs,
    g: &Icfg,
    report: &Report,
    question: &Query,
    solver: &str,
    why: &str,
) -> Result<(Option<Checked>, Option<String>), Failure> {
    let gave_up = format!("the {solver} search gave up: {why}");
    if q.solver.solver == SolverName::Utl {
        return Ok((None, Some(gave_up)));
    }
    match q
        .solver
        .build(SolverName::Utl)
        .check(g, report, Some(question))
    {
        Ok(mut c) => {
            c.weakened.insert(
                0,
                Weakening {
                    origin: Origin::Query,
                    how: format!("{gave_up}; answered by utl, whose constraints are weaker"),
                },
            );
            Ok((Some(c), None))
        }
        Err(SolveError::Infeasible { culprit }) => Err(solve_failure(
            SolveError::Infeasible { culprit },
            &q.inputs.report_name(),
            g,
            report,
        )),
        Err(_) => Ok((None, Some(gave_up))),
    }
}

fn node_arg(g: &Icfg, id: &str) -> Result<NodeId, Failure> {
    g.lookup(id).ok_or_else(|| {
        Failure::input(format!(
            "unknown node id `{id}`: no such node in the control-flow graph"
        ))
    })
}

pub fn run(q: QueryArgs) -> Result<(), Failure> {
    // --timeout: one deadline for the whole run.
    let deadline = q.solver.deadline();
    postmortem_core::budget::with_deadline(deadline, || run_within(q))
}

fn run_within(q: QueryArgs) -> Result<(), Failure> {
    let loaded = load(&q.inputs, q.solver.memory_budget())?;
    let g = &loaded.graph;
    let bad = |e: lang::QueryError| Failure::input(format!("query: {e}"));
    let (question, what) = if let Some(f) = &q.formula {
        (
            Query::Language(lang::compile(g, f).map_err(bad)?),
            f.clone(),
        )
    } else if let Some(r) = &q.regex {
        (
            Query::Language(lang::compile_regex(g, r).map_err(bad)?),
            format!("regex {r}"),
        )
    } else if let Some(n) = &q.may_run {
        (Query::MayRun(node_arg(g, n)?), format!("may {n} have run?"))
    } else if let Some(n) = &q.may_skip {
        (
            Query::MaySkip(node_arg(g, n)?),
            format!("may {n} have been skipped?"),
        )
    } else {
        unreachable!("clap requires one question")
    };
    let s: Box<dyn Solver> = q.solver.build(q.solver.solver);
    let fail = |e| solve_failure(e, &q.inputs.report_name(), g, &loaded.report);
    let t = Instant::now();
    let (checked, gave_up) = match s.check(g, &loaded.report, Some(&question)) {
        Ok(c) => (Some(c), None),
        Err(SolveError::Limit(why)) => degrade(&q, g, &loaded.report, &question, s.name(), &why)?,
        Err(e) => return Err(fail(e)),
    };
    // A possible answer shows the report is possible; otherwise ask (a
    // search that gives up claims nothing: the report is taken as
    // possible unless UTL's weaker constraints already rule it out).
    let possible = checked.as_ref().map(|c| c.answer) == Some(Answer::Possible)
        || match s.possible(g, &loaded.report, None) {
            Ok(a) => a == Answer::Possible,
            Err(SolveError::Limit(_)) => !matches!(
                q.solver
                    .build(SolverName::Utl)
                    .possible(g, &loaded.report, None),
                Ok(Answer::Impossible)
            ),
            Err(e) => return Err(fail(e)),
        };
    let elapsed = ms(t);
    let culprit = if possible {
        None
    } else {
        s.culprit(g, &loaded.report)
    };
    let impossible = checked.as_ref().map(|c| c.answer) == Some(Answer::Impossible);
    let explanation = if impossible && (q.explain || q.format == QueryFormat::Json) {
        s.explain(g, &loaded.report, Some(&question))
    } else {
        None
    };
    // The witness checked against the program's data; while the check
    // finds it infeasible, another that answers the question is sought.
    let mut checked = checked;
    let mut witness_check = None;
    let mut set_aside = Vec::new();
    if let Some(c) = checked.as_mut() {
        if let Some(first) = c.witness.take() {
            let (w, verdict, aside) =
                crate::inputs::seek_witness(&*s, &loaded, Some(&question), first);
            c.witness = w;
            witness_check = verdict;
            set_aside = aside;
        }
    }
    let answer = QueryAnswer {
        graph: g,
        report: &loaded.report,
        question: &what,
        solver: s.name(),
        checked: checked.as_ref(),
        gave_up: gave_up.as_deref(),
        report_possible: possible,
        culprit,
        explanation: explanation.as_deref(),
        time_ms: elapsed,
        witness_check: witness_check.as_ref(),
        witness_set_aside: &set_aside,
    };
    write_out(|out| match q.format {
        QueryFormat::Text => write_query_text(out, &answer),
        QueryFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, &query_json(&answer))?;
            writeln!(out)
        }
    })?;
    match culprit {
        Some(c) => {
            let mut f = crate::analyze::infeasible(c, &q.inputs.report_name(), g, &loaded.report);
            if let Some(hint) = &loaded.impossible_hint {
                f.message = format!("{}; {hint}", f.message);
            }
            Err(Failure { code: 3, ..f })
        }
        None => Ok(()),
    }
}
