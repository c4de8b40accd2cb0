//! `postmortem query`: one question, with a witness or an explanation.

use crate::analyze::solve_failure;
use crate::inputs::{load, Inputs};
use crate::solvers::SolverArgs;
use crate::{ms, write_out, Failure};
use clap::{Args, ValueEnum};
use postmortem_core::{query as lang, Answer, Icfg, NodeId, Origin, Query, Report, Solver};
use postmortem_formats::output::witness_lines;
use serde_json::json;
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

The first output line is `possible` or `impossible`. When possible, it comes
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

fn node_arg(g: &Icfg, id: &str) -> Result<NodeId, Failure> {
    g.lookup(id).ok_or_else(|| {
        Failure::input(format!(
            "unknown node id `{id}`: no such node in the control-flow graph"
        ))
    })
}

/// What a constraint of the report says, for explanations.
fn describe(g: &Icfg, r: &Report, o: Origin, query: &str) -> String {
    let ids = |s: &postmortem_core::NodeSet| {
        s.nodes()
            .iter()
            .map(|&n| g.ext_id(n).to_string())
            .collect::<Vec<_>>()
            .join("|")
    };
    match o {
        Origin::Crash => format!(
            "crash: stopped at {}",
            r.crash.as_ref().map(ids).unwrap_or_default()
        ),
        Origin::Frame(i) => format!(
            "stack[{i}]: call {} entering {}",
            ids(&r.stack[i].call),
            ids(&r.stack[i].entry)
        ),
        Origin::ObsYes(i) => format!(
            "obsYes[{i}]: {}ran {}",
            if r.obs_yes[i].reliable {
                "(reliable) "
            } else {
                ""
            },
            r.obs_yes[i]
                .entries
                .iter()
                .map(ids)
                .collect::<Vec<_>>()
                .join(" then ")
        ),
        Origin::ObsNo(i) => format!("obsNo[{i}]: {} did not run", ids(&r.obs_no[i])),
        Origin::Bursty(i) => format!("bursty[{i}]: {} bursts", r.bursty[i].bursts.len()),
        Origin::Query => format!("query: {query}"),
    }
}

pub fn run(q: QueryArgs) -> Result<(), Failure> {
    let loaded = load(&q.inputs)?;
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
    let fail = |e| solve_failure(e, &q.inputs.report);
    let t = Instant::now();
    let checked = s.check(g, &loaded.report, Some(&question)).map_err(fail)?;
    // A possible answer shows the report is possible; otherwise ask.
    let report_possible = checked.answer == Answer::Possible
        || s.possible(g, &loaded.report, None).map_err(fail)? == Answer::Possible;
    let elapsed = ms(t);
    let culprit = if report_possible {
        None
    } else {
        s.culprit(g, &loaded.report)
    };
    let explanation =
        if checked.answer == Answer::Impossible && (q.explain || q.format == QueryFormat::Json) {
            s.explain(g, &loaded.report, Some(&question))
        } else {
            None
        };
    let ids = |w: &[NodeId]| {
        w.iter()
            .map(|&n| g.ext_id(n).to_string())
            .collect::<Vec<_>>()
    };
    write_out(|out| {
        match q.format {
            QueryFormat::Text => {
                writeln!(out, "{}", checked.answer.as_str())?;
                writeln!(out, "question: {what}")?;
                if let Some(c) = culprit {
                    writeln!(
                        out,
                        "note: the report itself is impossible (from constraint {c} on)"
                    )?;
                }
                for w in &checked.weakened {
                    writeln!(out, "weakened {}: {}", w.origin, w.how)?;
                }
                if let Some(w) = &checked.witness {
                    writeln!(out, "witness ({} nodes):", w.len())?;
                    for line in witness_lines(g, w) {
                        writeln!(out, "  {line}")?;
                    }
                }
                if let Some(ex) = &explanation {
                    writeln!(
                        out,
                        "explanation: these {} constraints are already impossible together:",
                        ex.len()
                    )?;
                    for &o in ex {
                        writeln!(out, "  {}", describe(g, &loaded.report, o, &what))?;
                    }
                }
                writeln!(out, "time: {elapsed:.1} ms")?;
            }
            QueryFormat::Json => {
                let mut v = json!({
                    "answer": checked.answer.as_str(),
                    "question": what,
                    "solver": s.name(),
                    "report_possible": report_possible,
                    "culprit": culprit.map(|c| c.to_string()),
                    "weakened": checked.weakened.iter().map(|w| json!({"constraint": w.origin.to_string(), "how": w.how})).collect::<Vec<_>>(),
                    "time_ms": elapsed,
                });
                if let Some(w) = &checked.witness {
                    v["witness"] = json!(ids(w));
                }
                if let Some(ex) = &explanation {
                    v["explanation"] = ex
                        .iter()
                        .map(|&o| json!({"constraint": o.to_string(), "what": describe(g, &loaded.report, o, &what)}))
                        .collect();
                }
                serde_json::to_writer_pretty(&mut *out, &v)?;
                writeln!(out)?;
            }
        }
        Ok(())
    })?;
    match culprit {
        Some(c) => Err(Failure {
            code: 3,
            ..crate::analyze::infeasible(c, &q.inputs.report)
        }),
        None => Ok(()),
    }
}
