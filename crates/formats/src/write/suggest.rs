//! Writers for `postmortem suggest` ([`postmortem_core::suggest`]): a text
//! table and a JSON document. The HTML section is in [`crate::write::html`].

use crate::logs::{why_not_decided, LogMatch};
use postmortem_core::suggest::{Method, Suggestion, Suggestions};
use postmortem_core::{Icfg, NodeId};
use serde_json::{json, Value};
use std::io::{self, Write};

/// Where a point is: its file, first line and function.
pub fn place(g: &Icfg, n: NodeId) -> (String, u32, String) {
    let file = g
        .file_of(n)
        .map(|f| g.file_path(f).to_string())
        .unwrap_or_default();
    let line = g.lines(n).first().copied().unwrap_or(0);
    (file, line, g.function(g.func_of(n)).name.to_string())
}

/// The lines of a point's equivalent points other than its own, in order.
pub fn same_paths_lines(g: &Icfg, s: &Suggestion) -> Vec<u32> {
    let own = place(g, s.point).1;
    let mut v: Vec<u32> = s
        .equivalent
        .iter()
        .flat_map(|&n| g.lines(n).first().copied())
        .filter(|&l| l != own)
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// For a point that is (or is on the same paths as) a printing call: the
/// print's line and why the logs did not decide whether it ran
/// ([`why_not_decided`]).
pub fn print_note(g: &Icfg, s: &Suggestion, logs: &[LogMatch]) -> Option<(u32, String)> {
    s.equivalent
        .iter()
        .chain([&s.point])
        .find_map(|&n| Some((place(g, n).1, why_not_decided(logs, n)?)))
}

/// The places (`file:line`, distinct, in order) of a point's
/// alternatives: other points that ask the same question.
pub fn alternative_places(g: &Icfg, s: &Suggestion) -> Vec<String> {
    // Not the point's own line, nor those of its equivalents.
    let shown: Vec<(String, u32)> = s
        .equivalent
        .iter()
        .chain([&s.point])
        .map(|&n| place(g, n))
        .map(|p| (p.0, p.1))
        .collect();
    let mut v: Vec<(String, u32)> = s
        .alternatives
        .iter()
        .map(|&n| place(g, n))
        .map(|p| (p.0, p.1))
        .filter(|p| !shown.contains(p))
        .collect();
    v.sort();
    v.dedup();
    v.into_iter().map(|(f, l)| format!("{f}:{l}")).collect()
}

/// How many nodes the point's line has (its own statements and those
/// that only may carry its location): 1 when observing the line is
/// observing the point.
pub fn line_nodes(g: &Icfg, n: NodeId) -> usize {
    let (Some(file), Some(&line)) = (g.file_of(n), g.lines(n).first()) else {
        return 0;
    };
    g.nodes()
        .filter(|&m| {
            g.file_of(m) == Some(file)
                && (g.lines(m).contains(&line) || g.weak_lines(m).any(|l| l == line))
        })
        .count()
}

/// Sorted line numbers as ranges (`3-7, 9`), at most `max` of them, then
/// `...`.
pub fn ranges(lines: &[u32], max: usize) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let mut j = i;
        while j + 1 < lines.len() && lines[j + 1] == lines[j] + 1 {
            j += 1;
        }
        if out.len() == max {
            out.push("...".into());
            break;
        }
        out.push(if i == j {
            lines[i].to_string()
        } else {
            format!("{}-{}", lines[i], lines[j])
        });
        i = j + 1;
    }
    out.join(", ")
}

/// A count of a suggestion as printed: `N` when exact, `>=N` when a
/// proven lower bound.
pub fn count(s: &Suggestion, n: usize) -> String {
    if s.exact {
        n.to_string()
    } else {
        format!(">={n}")
    }
}

/// One line saying what the search did and whether it finished.
pub fn summary_line(s: &Suggestions) -> String {
    let group = if s.crashes > 1 {
        format!(" over {} crashes", s.crashes)
    } else {
        String::new()
    };
    format!(
        "{} Maybe lines{group}; {} candidate points ({} nodes), {} analyses{}",
        s.maybe_lines,
        s.classes,
        s.candidate_nodes,
        s.analyses,
        if s.method == Method::Bounds {
            format!(
                "; ranked by proven lower bounds ({}), {} of the listed confirmed by re-running{}",
                if s.utl_analyses > 0 {
                    format!("dominators, then {} UTL re-runs", s.utl_analyses)
                } else {
                    "dominators".to_string()
                },
                s.confirmed,
                if s.complete {
                    String::new()
                } else {
                    format!(
                        "; INCOMPLETE ({})",
                        s.note.as_deref().unwrap_or("limit reached")
                    )
                }
            )
        } else if s.complete {
            ": exact top list".to_string()
        } else {
            format!(
                "; INCOMPLETE, best found so far ({})",
                s.note.as_deref().unwrap_or("limit reached")
            )
        }
    )
}

/// The text table: point, lines decided if it ran, if it did not, worst
/// case.
pub fn write_text(
    out: &mut dyn Write,
    g: &Icfg,
    s: &Suggestions,
    solver: &str,
    logs: &[LogMatch],
) -> io::Result<()> {
    writeln!(out, "What to observe next ({solver}): {}", summary_line(s))?;
    if s.maybe_lines == 0 {
        return writeln!(
            out,
            "Nothing to suggest: no line is Maybe, every line is decided."
        );
    }
    if s.top.is_empty() {
        return writeln!(
            out,
            "Nothing to suggest: no single point's observation is sure to decide a Maybe line both ways."
        );
    }
    writeln!(
        out,
        "Lines decided (of the {} Maybe) if the point is observed to have run / not to have run; the worst case is guaranteed for this solver{}.",
        s.maybe_lines,
        if s.top.iter().all(|t| t.exact) {
            ""
        } else {
            " (>=N: a proven lower bound, not confirmed by re-running)"
        }
    )?;
    if s.crashes > 1 {
        writeln!(
            out,
            "Over the {} crashes: each column is a sum; worst is the sum of each crash's worst case.",
            s.crashes
        )?;
    }
    writeln!(
        out,
        "{:>3}  {:<40} {:<24} {:>7} {:>7} {:>7}",
        "#", "point", "function", "if ran", "if not", "worst"
    )?;
    for (i, t) in s.top.iter().enumerate() {
        let (file, line, func) = place(g, t.point);
        let same = same_paths_lines(g, t);
        let also = if same.is_empty() {
            String::new()
        } else {
            format!(
                "  (same as line{} {})",
                if same.len() == 1 { "" } else { "s" },
                ranges(&same, 4)
            )
        };
        writeln!(
            out,
            "{:>3}  {:<40} {:<24} {:>7} {:>7} {:>7}{also}",
            i + 1,
            format!("{file}:{line}"),
            func,
            count(t, t.if_ran),
            count(t, t.if_not),
            count(t, t.worst())
        )?;
        if let Some((line, why)) = print_note(g, t, logs) {
            writeln!(
                out,
                "     line {line}, a print the log did not decide: {why}"
            )?;
        }
        let alt = alternative_places(g, t);
        if !alt.is_empty() {
            let shown = alt.len().min(6);
            writeln!(
                out,
                "     or observe any of {}{} (the same lines decided, both ways)",
                alt[..shown].join(", "),
                if alt.len() > shown {
                    format!(" and {} more", alt.len() - shown)
                } else {
                    String::new()
                }
            )?;
        }
    }
    Ok(())
}

/// The JSON document: the search's counts and the list of points.
pub fn to_json(g: &Icfg, s: &Suggestions, solver: &str, logs: &[LogMatch]) -> Value {
    let points: Vec<Value> = s
        .top
        .iter()
        .map(|t| {
            let (file, line, func) = place(g, t.point);
            json!({
                "file": file,
                "line": line,
                "function": func,
                "node": g.ext_id(t.point),
                "if_ran": t.if_ran,
                "if_not": t.if_not,
                "worst": t.worst(),
                "exact": t.exact,
                "bound": if t.exact {
                    "rerun"
                } else if t.utl_bound {
                    "utl"
                } else {
                    "dominators"
                },
                "same_paths": t.equivalent.iter().map(|&n| g.ext_id(n)).collect::<Vec<_>>(),
                "same_paths_lines": same_paths_lines(g, t),
                "line_nodes": line_nodes(g, t.point),
                "alternatives": alternative_places(g, t),
                "log": print_note(g, t, logs).map(|(line, why)| json!({ "line": line, "why": why })),
            })
        })
        .collect();
    json!({
        "solver": solver,
        "maybe_lines": s.maybe_lines,
        "crashes": s.crashes,
        "candidate_points": s.classes,
        "candidate_nodes": s.candidate_nodes,
        "surely_decided_points": s.surely,
        "analyses": s.analyses,
        "method": match s.method {
            Method::Bounds => "bounds",
            _ => "exact",
        },
        "confirmed": s.confirmed,
        "below_bound": s.below_bound,
        "utl_analyses": s.utl_analyses,
        "complete": s.complete,
        "note": s.note,
        "suggestions": points,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn ranges_fold_and_stop() {
        assert_eq!(super::ranges(&[3, 4, 5, 7, 9, 10], 4), "3-5, 7, 9-10");
        assert_eq!(super::ranges(&[1, 3, 5, 7, 9], 2), "1, 3, ...");
        assert_eq!(super::ranges(&[], 2), "");
    }
}
