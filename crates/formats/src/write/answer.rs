//! Writers for query answers (`postmortem query`): the answer, the
//! weakenings, the witness and the explanation, as text for people or one
//! JSON object for tools.

use crate::write::output::witness_lines;
use postmortem_core::solver::Checked;
use postmortem_core::{Icfg, NodeId, NodeSet, Origin, Report};
use serde_json::{json, Value};
use std::io::{self, Write};

/// One answered query, as the writers show it.
pub struct QueryAnswer<'a> {
    /// The graph.
    pub graph: &'a Icfg,
    /// The report the query was asked against.
    pub report: &'a Report,
    /// The question, as the user asked it.
    pub question: &'a str,
    /// The solver's name.
    pub solver: &'a str,
    /// The answer, its weakenings and its witness; none when the search
    /// gave up at a limit with no sound fallback (the answer is `unknown`).
    pub checked: Option<&'a Checked>,
    /// Why there is no answer, when there is none.
    pub gave_up: Option<&'a str>,
    /// Whether the report alone is possible.
    pub report_possible: bool,
    /// When it is not: the constraint from which it is impossible.
    pub culprit: Option<Origin>,
    /// When the answer is impossible and an explanation was asked for: a
    /// minimal set of constraints (the query's included) that is
    /// impossible.
    pub explanation: Option<&'a [Origin]>,
    /// The time the answer took, in milliseconds.
    pub time_ms: f64,
    /// What checking the witness against the program's data found
    /// ([`crate::witness_check`]), when there is a witness and the graph
    /// came with the front-end's variables.
    pub witness_check: Option<&'a crate::witness_check::Verdict>,
    /// Why the witnesses found before the one shown were set aside (the
    /// check found them infeasible), in order.
    pub witness_set_aside: &'a [String],
}

/// What a constraint of the report says, in the graph's node ids.
pub fn describe(g: &Icfg, r: &Report, o: Origin, question: &str) -> String {
    let ids = |s: &NodeSet| {
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
        Origin::Value(i) => format!("value[{i}]: {}", r.values[i].what),
        Origin::Residue(i) => format!("residue[{i}]: {} ran (stack residue)", ids(&r.residue[i])),
        Origin::ResidueSomewhere(i) => format!(
            "residue_somewhere[{i}]: {} ran in some thread (stack residue)",
            g.ext_id(r.residue_somewhere[i])
        ),
        Origin::Lift => "lift: nodes Local labels proved ran".into(),
        Origin::Query => format!("query: {question}"),
    }
}

/// Writes the answer for people: `possible` or `impossible` first, then
/// the question, a note when the report itself is impossible, the
/// weakenings, the witness (one line per step, repeats folded), the
/// explanation and the time.
pub fn write_query_text(out: &mut dyn Write, a: &QueryAnswer<'_>) -> io::Result<()> {
    let g = a.graph;
    writeln!(out, "{}", answer_str(a))?;
    writeln!(out, "question: {}", a.question)?;
    if let Some(why) = a.gave_up {
        writeln!(
            out,
            "gave up: {why} (raise the limit, or ask a question the utl solver supports)"
        )?;
    }
    if let Some(c) = a.culprit {
        writeln!(
            out,
            "note: the report itself is impossible (from constraint {c} on)"
        )?;
    }
    for w in a.checked.iter().flat_map(|c| &c.weakened) {
        writeln!(out, "weakened {}: {}", w.origin, w.how)?;
    }
    if let Some(w) = a.checked.and_then(|c| c.witness.as_ref()) {
        writeln!(out, "witness ({} nodes):", w.len())?;
        for line in witness_lines(g, w) {
            writeln!(out, "  {line}")?;
        }
        if let Some(v) = a.witness_check {
            writeln!(out, "witness check: {}", v.line())?;
        }
        for (i, why) in a.witness_set_aside.iter().enumerate() {
            writeln!(out, "  set aside: witness {} before it: {why}", i + 1)?;
        }
    }
    if let Some(ex) = a.explanation {
        writeln!(
            out,
            "explanation: these {} constraints are already impossible together:",
            ex.len()
        )?;
        for &o in ex {
            writeln!(out, "  {}", describe(g, a.report, o, a.question))?;
        }
    }
    writeln!(out, "time: {:.1} ms", a.time_ms)
}

/// `possible`, `impossible`, or `unknown` when the search gave up.
fn answer_str(a: &QueryAnswer<'_>) -> &'static str {
    a.checked.map_or("unknown", |c| c.answer.as_str())
}

/// The answer as one JSON object: `answer`, `question`, `solver`,
/// `report_possible`, `culprit`, `weakened`, `time_ms`, and when there
/// are, `witness` (input node ids) and `explanation`.
pub fn query_json(a: &QueryAnswer<'_>) -> Value {
    let g = a.graph;
    let ids = |w: &[NodeId]| {
        w.iter()
            .map(|&n| g.ext_id(n).to_string())
            .collect::<Vec<_>>()
    };
    let mut v = json!({
        "answer": answer_str(a),
        "question": a.question,
        "solver": a.solver,
        "report_possible": a.report_possible,
        "culprit": a.culprit.map(|c| c.to_string()),
        "weakened": a.checked.iter().flat_map(|c| &c.weakened).map(|w| json!({"constraint": w.origin.to_string(), "how": w.how})).collect::<Vec<_>>(),
        "time_ms": a.time_ms,
    });
    if let Some(w) = a.checked.and_then(|c| c.witness.as_ref()) {
        v["witness"] = json!(ids(w));
        if let Some(c) = a.witness_check {
            v["witness_check"] = json!(c);
        }
        if !a.witness_set_aside.is_empty() {
            v["witness_set_aside"] = json!(a.witness_set_aside);
        }
    }
    if let Some(why) = a.gave_up {
        v["gave_up"] = json!(why);
    }
    if let Some(ex) = a.explanation {
        v["explanation"] = ex
            .iter()
            .map(|&o| json!({"constraint": o.to_string(), "what": describe(g, a.report, o, a.question)}))
            .collect();
    }
    v
}
