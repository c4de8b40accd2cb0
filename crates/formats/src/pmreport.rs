//! postmortem's own failure report: JSON a person can write, naming code
//! by function, file and line instead of node ids.
//!
//! ```text
//! {
//!   "stack":   [ {"function": "main", "file": "a.c", "line": 30, "column": 5},
//!                {"function": "parse", "file": "a.c", "line": 12} ],
//!   "ran":     [ {"function": "init"}, {"file": "a.c", "line": 14}, {"call": "lock"} ],
//!   "not_ran": [ {"function": "cleanup"}, {"file": "b.c", "line": 7}, {"call": "unlock"} ],
//!   "log":     [ "starting", "Processed 3 items" ]
//! }
//! ```
//!
//! Every field is optional, but the report must hold at least one.
//!
//! * `stack`: the crash stack, **outermost frame first; the last frame is
//!   the crash location**. A frame has a `function`, a `file`, or both;
//!   `line` (1-based) and `column` (1-based, needs `line`) narrow it. A
//!   frame needs a `function`, or a `file` with a `line`. Frames are mapped
//!   like backtrace frames ([`postmortem_core::locate`]): the crash is the
//!   nodes of the last frame on its line, each other frame gives the call
//!   sites on its line and the callee's entry.
//! * `ran`: things that surely ran, each one selector:
//!   `{"function": F}` (its entry ran), `{"file": P, "line": L}` (a
//!   statement of that line ran: "one of these nodes"), or `{"call": F}`
//!   (some call of `F` ran: "one of these call sites"; `F` may be a library
//!   function named in call notes). Each becomes its own `obsYes` trace of
//!   one element, with no order between them.
//! * `not_ran`: things that surely did not run, same selectors, as
//!   `obsNo`: a function's entry did not run (one set), *no* statement of
//!   the line ran (one set per node), *no* call of `F` ran (one set per
//!   call site).
//! * `log`: log lines in order, matched to call sites like a log file
//!   ([`crate::logs`]): one unreliable trace.
//!
//! Paths match by suffix and go through the path map. The reader is
//! strict: unknown fields, wrong types, zero or negative lines are errors
//! with the JSON path of the offending value. A selector or frame that
//! matches nothing in the graph is a warning, and its constraint is left
//! out (a weaker report).
//!
//! [`crate::any_report::read_any_report`] reads this format, csi-grissom's
//! ([`crate::report_json`]) or a Sentry event ([`crate::sentry`]), telling
//! them apart by their keys.

use crate::error::FormatError;
use crate::logs::{LogConfig, LogMatch, LogMatcher};
use postmortem_core::locate::{LocateWarning, Locator, Selector, SourceFrame};
use postmortem_core::{Report, Trace};
use serde_json::{Map, Value};

/// One frame of the `stack`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PmFrame {
    /// The function.
    pub function: Option<String>,
    /// The file.
    pub file: Option<String>,
    /// The 1-based line.
    pub line: Option<u32>,
    /// The 1-based column.
    pub column: Option<u32>,
}

/// A parsed report, before mapping to a graph.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PmReport {
    /// The stack, outermost first (the last frame is the crash).
    pub stack: Vec<PmFrame>,
    /// Selectors of things that ran.
    pub ran: Vec<Selector>,
    /// Selectors of things that did not run.
    pub not_ran: Vec<Selector>,
    /// Log lines, in order.
    pub log: Vec<String>,
}

/// A report mapped to a graph, with its diagnostics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapped {
    /// The report.
    pub report: Report,
    /// Frames and selectors that could not be matched exactly.
    pub warnings: Vec<LocateWarning>,
    /// The matching of the `log` lines, if there were any.
    pub log: Option<LogMatch>,
    /// Other warnings about the report as a whole (a Sentry event's
    /// frames that look listed crash first).
    pub notes: Vec<String>,
    /// What to say if the report turns out impossible (a Sentry event's
    /// frames that look listed crash first: the likely cause).
    pub impossible_hint: Option<String>,
}

/// Parses this format's JSON text. `source_name` names the input in
/// errors.
pub fn parse_pmreport(text: &str, source_name: &str) -> Result<PmReport, FormatError> {
    if text.trim().is_empty() {
        return Err(FormatError::empty(source_name));
    }
    let v: Value = serde_json::from_str(text)
        .map_err(|e| FormatError::json_syntax(source_name, &e.to_string()))?;
    from_value(&v, source_name)
}

fn show(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(60) {
        Some((cut, _)) => format!("{}...", &s[..cut]),
        None => s,
    }
}

struct P<'a> {
    file: &'a str,
}

impl P<'_> {
    fn err(&self, path: &str, msg: &str) -> FormatError {
        FormatError::json(self.file, path, msg)
    }

    fn object<'v>(
        &self,
        v: &'v Value,
        path: &str,
        allowed: &[&str],
        what: &str,
    ) -> Result<&'v Map<String, Value>, FormatError> {
        let obj = v
            .as_object()
            .ok_or_else(|| self.err(path, &format!("expected {what}, found {}", show(v))))?;
        for k in obj.keys() {
            if !allowed.contains(&k.as_str()) {
                return Err(self.err(
                    &format!("{path}.{k}"),
                    &format!(
                        "unknown field {} (expected one of: {})",
                        show(&Value::String(k.clone())),
                        allowed.join(", ")
                    ),
                ));
            }
        }
        Ok(obj)
    }

    fn array<'v>(&self, v: &'v Value, path: &str) -> Result<&'v [Value], FormatError> {
        v.as_array()
            .map(Vec::as_slice)
            .ok_or_else(|| self.err(path, &format!("expected an array, found {}", show(v))))
    }

    fn string(
        &self,
        obj: &Map<String, Value>,
        key: &str,
        path: &str,
    ) -> Result<Option<String>, FormatError> {
        match obj.get(key) {
            None => Ok(None),
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
            Some(v) => Err(self.err(
                &format!("{path}.{key}"),
                &format!("expected a non-empty string, found {}", show(v)),
            )),
        }
    }

    fn number(
        &self,
        obj: &Map<String, Value>,
        key: &str,
        path: &str,
    ) -> Result<Option<u32>, FormatError> {
        match obj.get(key) {
            None => Ok(None),
            Some(v) => match v.as_u64() {
                Some(n) if n >= 1 && n <= u64::from(u32::MAX) => Ok(Some(n as u32)),
                _ => Err(self.err(
                    &format!("{path}.{key}"),
                    &format!("expected a positive integer, found {}", show(v)),
                )),
            },
        }
    }

    fn selector(&self, v: &Value, path: &str) -> Result<Selector, FormatError> {
        const WHAT: &str =
            "a selector ({\"function\": F}, {\"file\": P, \"line\": L} or {\"call\": F})";
        let obj = self.object(v, path, &["function", "file", "line", "call"], WHAT)?;
        let function = self.string(obj, "function", path)?;
        let file = self.string(obj, "file", path)?;
        let line = self.number(obj, "line", path)?;
        let call = self.string(obj, "call", path)?;
        match (function, file, line, call) {
            (Some(f), None, None, None) => Ok(Selector::Function(f)),
            (None, Some(file), Some(line), None) => Ok(Selector::Line { file, line }),
            (None, None, None, Some(c)) => Ok(Selector::Call(c)),
            _ => Err(self.err(path, &format!("expected {WHAT}, found {}", show(v)))),
        }
    }

    fn frame(&self, v: &Value, path: &str) -> Result<PmFrame, FormatError> {
        let obj = self.object(
            v,
            path,
            &["function", "file", "line", "column"],
            "a frame object",
        )?;
        let f = PmFrame {
            function: self.string(obj, "function", path)?,
            file: self.string(obj, "file", path)?,
            line: self.number(obj, "line", path)?,
            column: self.number(obj, "column", path)?,
        };
        if f.function.is_none() && (f.file.is_none() || f.line.is_none()) {
            return Err(self.err(
                path,
                &format!(
                    "a frame needs a \"function\", or a \"file\" and a \"line\"; found {}",
                    show(v)
                ),
            ));
        }
        if f.column.is_some() && f.line.is_none() {
            return Err(self.err(&format!("{path}.column"), "a \"column\" needs a \"line\""));
        }
        Ok(f)
    }
}

fn from_value(v: &Value, file: &str) -> Result<PmReport, FormatError> {
    let p = P { file };
    let obj = p.object(
        v,
        "$",
        &["stack", "ran", "not_ran", "log"],
        "a report object",
    )?;
    if obj.is_empty() {
        return Err(p.err(
            "$",
            "the report is empty: give at least one of stack, ran, not_ran, log",
        ));
    }
    let mut r = PmReport::default();
    if let Some(s) = obj.get("stack") {
        for (i, f) in p.array(s, "$.stack")?.iter().enumerate() {
            r.stack.push(p.frame(f, &format!("$.stack[{i}]"))?);
        }
    }
    for (key, out) in [("ran", &mut r.ran), ("not_ran", &mut r.not_ran)] {
        if let Some(s) = obj.get(key) {
            for (i, sel) in p.array(s, &format!("$.{key}"))?.iter().enumerate() {
                out.push(p.selector(sel, &format!("$.{key}[{i}]"))?);
            }
        }
    }
    if let Some(s) = obj.get("log") {
        for (i, l) in p.array(s, "$.log")?.iter().enumerate() {
            match l {
                Value::String(s) => r.log.push(s.clone()),
                v => {
                    return Err(p.err(
                        &format!("$.log[{i}]"),
                        &format!("expected a string, found {}", show(v)),
                    ))
                }
            }
        }
    }
    Ok(r)
}

impl PmReport {
    /// The stack as [`Locator::locate_stack`] takes it (innermost first).
    pub fn source_frames(&self) -> Vec<SourceFrame> {
        let n = self.stack.len();
        self.stack
            .iter()
            .enumerate()
            .rev()
            .map(|(i, f)| SourceFrame {
                function: f.function.clone(),
                symbol: None,
                file: f.file.clone(),
                line: f.line,
                column: f.column,
                runtime: false,
                library: false,
                label: SourceFrame::describe(
                    &format!("$.stack[{i}]{}", if i + 1 == n { " (crash)" } else { "" }),
                    f.function.as_deref(),
                    f.file.as_deref(),
                    f.line,
                    f.column,
                ),
                ..SourceFrame::default()
            })
            .collect()
    }

    /// Maps the report to the graph (see the module docs). Report order:
    /// crash and frames from `stack`; `obsYes`: one trace per `ran`
    /// selector, then the `log` trace; `obsNo`: the `not_ran` sets.
    pub fn to_report(&self, loc: &Locator<'_>, logs: &LogConfig) -> Mapped {
        let located = loc.locate_stack(&self.source_frames());
        let mut report = located.report;
        let mut warnings = located.warnings;
        for (i, sel) in self.ran.iter().enumerate() {
            match loc.ran(sel) {
                Ok(set) => report.obs_yes.push(Trace {
                    reliable: false,
                    entries: vec![set],
                }),
                Err(mut w) => {
                    w.subject = format!("$.ran[{i}] {}", w.subject);
                    warnings.push(w);
                }
            }
        }
        let log = if self.log.is_empty() {
            None
        } else {
            let m =
                LogMatcher::new(loc.graph(), logs).match_lines(self.log.iter().map(String::as_str));
            if let Some(t) = &m.trace {
                report.obs_yes.push(t.clone());
            }
            Some(m)
        };
        for (i, sel) in self.not_ran.iter().enumerate() {
            match loc.not_ran(sel) {
                Ok(sets) => report.obs_no.extend(sets),
                Err(mut w) => {
                    w.subject = format!("$.not_ran[{i}] {}", w.subject);
                    warnings.push(w);
                }
            }
        }
        Mapped {
            report,
            warnings,
            log,
            notes: Vec::new(),
            impossible_hint: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::any_report::{detect, read_any_report_str, ReportKind};
    use crate::logs::LogConfig;
    use postmortem_core::locate::{PathMap, Problem};
    use postmortem_core::{Frame, Icfg, IcfgBuilder, NodeId, NodeKind, NodeSet, NodeSpec};

    /// main (a.c): entry, call of f on line 30 (col 5), a printf("hello %d\n")
    /// on line 31; f (a.c): entry, two statements on line 12, a call of
    /// lock (external) on line 13.
    fn graph() -> (Icfg, Vec<NodeId>) {
        let mut b = IcfgBuilder::new();
        let main = b.function("main");
        let f = b.function("f");
        b.set_function_file(main, "/src/a.c");
        b.set_function_file(f, "/src/a.c");
        let add = |b: &mut IcfgBuilder, id: &str, kind, func, line: u32| {
            b.add_node(NodeSpec {
                ext_id: id,
                kind,
                func,
                label: id,
                lines: &[line],
            })
            .unwrap()
        };
        let me = add(&mut b, "me", NodeKind::Entry, main, 29);
        let c30 = add(&mut b, "c30", NodeKind::CallSite, main, 30);
        let p31 = add(&mut b, "p31", NodeKind::CallSite, main, 31);
        let mx = add(&mut b, "mx", NodeKind::Exit, main, 32);
        let fe = add(&mut b, "fe", NodeKind::Entry, f, 11);
        let s12a = add(&mut b, "s12a", NodeKind::Statement, f, 12);
        let s12b = add(&mut b, "s12b", NodeKind::Statement, f, 12);
        let l13 = add(&mut b, "l13", NodeKind::CallSite, f, 13);
        let fx = add(&mut b, "fx", NodeKind::Exit, f, 14);
        for (x, y) in [
            (me, c30),
            (c30, p31),
            (p31, mx),
            (fe, s12a),
            (s12a, s12b),
            (s12b, l13),
            (l13, fx),
        ] {
            b.add_flow_edge(x, y);
        }
        b.add_call_edge(c30, fe);
        b.set_column(c30, 5);
        b.add_external_callee(l13);
        b.add_external_callee_name(l13, "lock");
        b.add_external_callee(p31);
        b.add_external_callee_name(p31, "printf");
        b.add_string_arg(p31, "hello %d\n");
        (
            b.build().unwrap(),
            vec![me, c30, p31, mx, fe, s12a, s12b, l13, fx],
        )
    }

    const SAMPLE: &str = r#"{
        "stack": [{"function": "main", "file": "a.c", "line": 30, "column": 5},
                  {"function": "f", "file": "a.c", "line": 12}],
        "ran": [{"function": "f"}, {"file": "a.c", "line": 12}, {"call": "lock"}],
        "not_ran": [{"function": "f"}, {"file": "a.c", "line": 12}, {"call": "lock"}],
        "log": ["hello 5", "bye"]
    }"#;

    #[test]
    fn a_report_maps_to_stack_crash_traces_and_sets() {
        let (g, n) = graph();
        let [_me, c30, p31, _mx, fe, s12a, s12b, l13, _fx] = n[..] else {
            unreachable!()
        };
        let loc = Locator::new(&g, PathMap::new());
        let logs = LogConfig::default();
        let r = parse_pmreport(SAMPLE, "r.json").unwrap();
        assert_eq!(r.stack.len(), 2);
        let m = r.to_report(&loc, &logs);
        assert_eq!(m.report.crash, NodeSet::new(vec![s12a, s12b]));
        assert_eq!(
            m.report.stack,
            vec![Frame {
                call: NodeSet::one(c30),
                entry: NodeSet::one(fe)
            }]
        );
        let yes: Vec<Vec<Vec<NodeId>>> = m
            .report
            .obs_yes
            .iter()
            .map(|t| t.entries.iter().map(|e| e.nodes().to_vec()).collect())
            .collect();
        assert_eq!(
            yes,
            vec![
                vec![vec![fe]],
                vec![vec![s12a, s12b]],
                vec![vec![l13]],
                vec![vec![p31]]
            ]
        );
        let no: Vec<Vec<NodeId>> = m.report.obs_no.iter().map(|s| s.nodes().to_vec()).collect();
        assert_eq!(no, vec![vec![fe], vec![s12a], vec![s12b], vec![l13]]);
        let log = m.log.unwrap();
        assert_eq!(log.warnings.len(), 1, "{:?}", log.warnings);
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    }

    #[test]
    fn unmatched_selectors_are_warnings_and_are_left_out() {
        let (g, _) = graph();
        let loc = Locator::new(&g, PathMap::new());
        let logs = LogConfig::default();
        let r = parse_pmreport(
            r#"{"ran": [{"function": "nope"}], "not_ran": [{"file": "a.c", "line": 99}]}"#,
            "r.json",
        )
        .unwrap();
        let m = r.to_report(&loc, &logs);
        assert!(m.report.obs_yes.is_empty() && m.report.obs_no.is_empty());
        assert_eq!(m.warnings.len(), 2);
        assert_eq!(m.warnings[0].problem, Problem::NoMatch);
        assert!(
            m.warnings[0]
                .to_string()
                .starts_with("$.ran[0] function `nope`"),
            "{}",
            m.warnings[0]
        );
        assert!(
            m.warnings[1]
                .to_string()
                .starts_with("$.not_ran[0] line a.c:99"),
            "{}",
            m.warnings[1]
        );
    }

    #[test]
    fn errors_name_the_json_path() {
        let bad = [
            (
                r#"{"stack": [{"function": "main", "lin": 3}]}"#,
                "r.json: $.stack[0].lin: unknown field",
            ),
            (
                r#"{"stack": [{"file": "a.c"}]}"#,
                "r.json: $.stack[0]: a frame needs",
            ),
            (
                r#"{"stack": [{"function": "f", "line": 0}]}"#,
                "r.json: $.stack[0].line: expected a positive integer",
            ),
            (
                r#"{"stack": [{"function": "f", "column": 3}]}"#,
                "r.json: $.stack[0].column: a \"column\" needs",
            ),
            (
                r#"{"ran": [{"function": "f", "call": "g"}]}"#,
                "r.json: $.ran[0]: expected a selector",
            ),
            (
                r#"{"ran": [{"file": "a.c"}]}"#,
                "r.json: $.ran[0]: expected a selector",
            ),
            (
                r#"{"not_ran": "f"}"#,
                "r.json: $.not_ran: expected an array",
            ),
            (r#"{"log": [1]}"#, "r.json: $.log[0]: expected a string"),
            (r#"{}"#, "r.json: $: the report is empty"),
            (r#"[]"#, "r.json: $: expected a report object"),
            (r#"{"ran": [}"#, "r.json: invalid JSON"),
            ("", "r.json: empty file"),
        ];
        for (text, want) in bad {
            let e = parse_pmreport(text, "r.json").unwrap_err().to_string();
            assert!(e.starts_with(want), "{text}: {e}");
            assert!(!e.contains('\n'));
        }
    }

    #[test]
    fn both_formats_are_read_and_told_apart() {
        let (g, n) = graph();
        let logs = LogConfig::default();
        let (k, m) = read_any_report_str(
            r#"{"crash": ["s12a"], "stack": [{"call": ["c30"], "entry": ["fe"]}]}"#,
            "g.json",
            &g,
            &PathMap::new(),
            &logs,
        )
        .unwrap();
        assert_eq!(k, ReportKind::Grissom);
        assert_eq!(m.report.crash, Some(NodeSet::one(n[5])));
        let (k, _) = read_any_report_str(SAMPLE, "p.json", &g, &PathMap::new(), &logs).unwrap();
        assert_eq!(k, ReportKind::Postmortem);
        let (k, m) = read_any_report_str(
            r#"{"stack": [{"function": "f"}]}"#,
            "p.json",
            &g,
            &PathMap::new(),
            &logs,
        )
        .unwrap();
        assert_eq!(k, ReportKind::Postmortem);
        assert_eq!(m.report.crash.unwrap().nodes().len(), 5);
        // Errors of the grissom reader come through.
        let e = read_any_report_str(r#"{"crash": ["zz"]}"#, "g.json", &g, &PathMap::new(), &logs)
            .unwrap_err();
        assert!(e.to_string().contains("unknown node id"), "{e}");
        assert_eq!(
            detect(&serde_json::json!({"stack": []})),
            ReportKind::Grissom
        );
    }
}
