//! Reader for the csi-grissom JSON failure reports (`data.json`).
//!
//! ```text
//! { "stack":  [ {"call": [ids], "entry": [ids]}, ... ],  // optional, outermost first
//!   "crash":  [ids],                                     // required
//!   "obsYes": [ {"reliable": false, "entries": [[ids], ...]}, ... ],  // optional
//!   "obsNo":  [ [ids], ... ] }                           // optional
//! ```
//!
//! Instead of `stack` + `crash`, a report may hold `crashstack`: the frames
//! followed by a last element `{"crash": [ids]}`. Every `[ids]` is a
//! non-empty set of node ids of the graph ("one of these"). In `obsYes`,
//! `reliable` may be left out, meaning `false` (the weaker claim).
//!
//! The reader is strict, to catch typos: unknown fields, wrong types, empty
//! sets and unknown node ids are errors that give the JSON path of the
//! offending value, e.g. `data.json: $.obsYes[3].entries[0][1]: unknown
//! node id "n:-9:999"`.

use crate::error::FormatError;
use postmortem_core::{Frame, Icfg, NodeSet, Report, Trace};
use serde_json::{Map, Value};
use std::fmt;
use std::io::Read;
use std::path::Path;

/// Reads a failure report from a file (plain or gzip-compressed JSON),
/// resolving node ids against `g`.
///
/// Errors name the file by `path` as displayed.
pub fn read_report_path(path: &Path, g: &Icfg) -> Result<Report, FormatError> {
    let limit = crate::input::Limit::new(
        crate::input::DEFAULT_TEXT_LIMIT,
        "report",
        "--max-input-size",
    );
    let (name, text) = read_json_text(path, &limit)?;
    read_report_str(&text, &name, g)
}

/// A JSON file's name (as displayed) and text: gunzipped when it starts
/// with gzip's magic, and checked to be UTF-8. Shared by the report
/// readers. The file, and its decompressed content, are read up to `limit`.
pub(crate) fn read_json_text(
    path: &Path,
    limit: &crate::input::Limit,
) -> Result<(String, String), FormatError> {
    let name = path.display().to_string();
    let mut bytes = crate::input::read_bounded(path, limit).map_err(|e| {
        // Too large: a core or a binary, likely; say so.
        match crate::input::kind_hint(&crate::input::head(path, 4096)) {
            Some(hint) => {
                FormatError::text(&name, &format!("not a JSON report: this looks like {hint}"))
            }
            None => e,
        }
    })?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        let mut r = crate::input::Bounded::new(
            flate2::read::MultiGzDecoder::new(&bytes[..]),
            *limit,
            &name,
        );
        if let Err(e) = r.read_to_end(&mut out) {
            return Err(if r.exceeded() {
                r.limit_error()
            } else {
                FormatError::io(
                    &name,
                    std::io::Error::new(e.kind(), format!("corrupt gzip data: {e}")),
                )
            });
        }
        bytes = out;
    }
    let text =
        String::from_utf8(bytes).map_err(|e| match crate::input::kind_hint(e.as_bytes()) {
            Some(hint) => {
                FormatError::text(&name, &format!("not a JSON report: this looks like {hint}"))
            }
            None => FormatError::json_syntax(&name, &format!("not valid UTF-8 ({e})")),
        })?;
    Ok((name, text))
}

/// Reads a failure report from JSON text, resolving node ids against `g`.
///
/// `source_name` names the input in error messages.
pub fn read_report_str(text: &str, source_name: &str, g: &Icfg) -> Result<Report, FormatError> {
    if text.trim().is_empty() {
        return Err(FormatError::empty(source_name));
    }
    let value: Value = serde_json::from_str(text)
        .map_err(|e| FormatError::json_syntax(source_name, &e.to_string()))?;
    Walker {
        file: source_name,
        g,
    }
    .report(&value)
}

/// A JSON path, built on the stack as the walk descends.
#[derive(Clone, Copy)]
enum JPath<'a> {
    Root,
    Key(&'a JPath<'a>, &'a str),
    Index(&'a JPath<'a>, usize),
}

impl fmt::Display for JPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JPath::Root => write!(f, "$"),
            JPath::Key(parent, key) => {
                let plain = key
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if plain {
                    write!(f, "{parent}.{key}")
                } else {
                    write!(f, "{parent}[{}]", Value::String(key.to_string()))
                }
            }
            JPath::Index(parent, i) => write!(f, "{parent}[{i}]"),
        }
    }
}

/// Shows a JSON value in a message: compact JSON, cut after 60 characters.
fn show(v: &Value) -> String {
    const MAX: usize = 60;
    let s = v.to_string();
    match s.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}...", &s[..cut]),
        None => s,
    }
}

const TOP_FIELDS: [&str; 5] = ["stack", "crash", "crashstack", "obsYes", "obsNo"];

struct Walker<'a> {
    file: &'a str,
    g: &'a Icfg,
}

type WResult<T> = Result<T, FormatError>;

impl Walker<'_> {
    fn err(&self, path: &JPath<'_>, message: &str) -> FormatError {
        FormatError::json(self.file, &path.to_string(), message)
    }

    fn expected(&self, path: &JPath<'_>, what: &str, found: &Value) -> FormatError {
        self.err(path, &format!("expected {what}, found {}", show(found)))
    }

    fn object<'v>(
        &self,
        path: &JPath<'_>,
        v: &'v Value,
        allowed: &[&str],
    ) -> WResult<&'v Map<String, Value>> {
        let Value::Object(map) = v else {
            return Err(self.expected(path, "an object", v));
        };
        for key in map.keys() {
            if !allowed.contains(&key.as_str()) {
                let list = allowed
                    .iter()
                    .map(|k| format!("\"{k}\""))
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(self.err(
                    &JPath::Key(path, key),
                    &format!(
                        "unknown field {} (expected one of {list})",
                        Value::String(key.clone())
                    ),
                ));
            }
        }
        Ok(map)
    }

    fn array<'v>(&self, path: &JPath<'_>, v: &'v Value) -> WResult<&'v [Value]> {
        match v {
            Value::Array(items) => Ok(items),
            _ => Err(self.expected(path, "an array", v)),
        }
    }

    fn required<'v>(
        &self,
        path: &JPath<'_>,
        map: &'v Map<String, Value>,
        key: &str,
    ) -> WResult<&'v Value> {
        map.get(key)
            .ok_or_else(|| self.err(path, &format!("missing field \"{key}\"")))
    }

    fn node_set(&self, path: &JPath<'_>, v: &Value) -> WResult<NodeSet> {
        let items = self.array(path, v)?;
        let mut nodes = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let p = JPath::Index(path, i);
            let Value::String(id) = item else {
                return Err(self.expected(&p, "a node id string", item));
            };
            match self.g.lookup(id) {
                Some(n) => nodes.push(n),
                None => return Err(self.err(&p, &format!("unknown node id {}", show(item)))),
            }
        }
        NodeSet::new(nodes).ok_or_else(|| {
            self.err(
                path,
                "empty node set (a set must hold at least one node id)",
            )
        })
    }

    fn frame(&self, path: &JPath<'_>, v: &Value) -> WResult<Frame> {
        let map = self.object(path, v, &["call", "entry"])?;
        let call = self.required(path, map, "call")?;
        let entry = self.required(path, map, "entry")?;
        Ok(Frame {
            call: self.node_set(&JPath::Key(path, "call"), call)?,
            entry: self.node_set(&JPath::Key(path, "entry"), entry)?,
        })
    }

    fn frames(&self, path: &JPath<'_>, items: &[Value]) -> WResult<Vec<Frame>> {
        items
            .iter()
            .enumerate()
            .map(|(i, v)| self.frame(&JPath::Index(path, i), v))
            .collect()
    }

    fn trace(&self, path: &JPath<'_>, v: &Value) -> WResult<Trace> {
        let map = self.object(path, v, &["reliable", "entries"])?;
        let reliable = match map.get("reliable") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(other) => {
                return Err(self.expected(&JPath::Key(path, "reliable"), "a boolean", other))
            }
        };
        let entries_path = JPath::Key(path, "entries");
        let items = self.array(&entries_path, self.required(path, map, "entries")?)?;
        let entries = items
            .iter()
            .enumerate()
            .map(|(i, v)| self.node_set(&JPath::Index(&entries_path, i), v))
            .collect::<WResult<Vec<_>>>()?;
        Ok(Trace { reliable, entries })
    }

    fn report(&self, v: &Value) -> WResult<Report> {
        let root = JPath::Root;
        let map = self.object(&root, v, &TOP_FIELDS)?;
        let mut report = Report::default();

        if map.contains_key("crashstack") {
            let path = JPath::Key(&root, "crashstack");
            for other in ["crash", "stack"] {
                if map.contains_key(other) {
                    return Err(self.err(
                        &path,
                        &format!("both \"{other}\" and \"crashstack\" are present"),
                    ));
                }
            }
            let items = self.array(&path, &map["crashstack"])?;
            let Some((last, frames)) = items.split_last() else {
                return Err(self.err(
                    &path,
                    "empty crashstack (its last element must be {\"crash\": [...]})",
                ));
            };
            report.stack = self.frames(&path, frames)?;
            let last_path = JPath::Index(&path, frames.len());
            let last_map = self.object(&last_path, last, &["crash"])?;
            let crash = self.required(&last_path, last_map, "crash")?;
            report.crash = Some(self.node_set(&JPath::Key(&last_path, "crash"), crash)?);
        } else {
            let Some(crash) = map.get("crash") else {
                return Err(self.err(&root, "missing field \"crash\""));
            };
            report.crash = Some(self.node_set(&JPath::Key(&root, "crash"), crash)?);
            if let Some(stack) = map.get("stack") {
                let path = JPath::Key(&root, "stack");
                report.stack = self.frames(&path, self.array(&path, stack)?)?;
            }
        }

        if let Some(yes) = map.get("obsYes") {
            let path = JPath::Key(&root, "obsYes");
            let items = self.array(&path, yes)?;
            report.obs_yes = items
                .iter()
                .enumerate()
                .map(|(i, v)| self.trace(&JPath::Index(&path, i), v))
                .collect::<WResult<Vec<_>>>()?;
        }
        if let Some(no) = map.get("obsNo") {
            let path = JPath::Key(&root, "obsNo");
            let items = self.array(&path, no)?;
            report.obs_no = items
                .iter()
                .enumerate()
                .map(|(i, v)| self.node_set(&JPath::Index(&path, i), v))
                .collect::<WResult<Vec<_>>>()?;
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use postmortem_core::{IcfgBuilder, NodeKind, NodeSpec};

    fn graph() -> Icfg {
        let mut b = IcfgBuilder::new();
        let main = b.function("main");
        let f = b.function("f");
        let add = |b: &mut IcfgBuilder, id: &str, kind, func| {
            b.add_node(NodeSpec {
                ext_id: id,
                kind,
                func,
                label: id,
                lines: &[],
            })
            .unwrap()
        };
        let me = add(&mut b, "n:-1:1", NodeKind::Entry, main);
        let c = add(&mut b, "n:-1:3", NodeKind::CallSite, main);
        let r = add(&mut b, "n:-1:4", NodeKind::Statement, main);
        let mx = add(&mut b, "n:-1:2", NodeKind::Exit, main);
        let fe = add(&mut b, "n:-2:1", NodeKind::Entry, f);
        let s = add(&mut b, "n:-2:3", NodeKind::Statement, f);
        let fx = add(&mut b, "n:-2:2", NodeKind::Exit, f);
        b.add_flow_edge(me, c);
        b.add_flow_edge(c, r);
        b.add_flow_edge(r, mx);
        b.add_flow_edge(fe, s);
        b.add_flow_edge(s, fx);
        b.add_call_edge(c, fe);
        b.build().unwrap()
    }

    fn err(text: &str) -> String {
        let e = read_report_str(text, "data.json", &graph())
            .unwrap_err()
            .to_string();
        assert!(!e.contains('\n'), "{e}");
        e
    }

    #[test]
    fn reads_a_full_report() {
        let g = graph();
        let text = r#"{"stack": [{"call": ["n:-1:3"], "entry": ["n:-2:1"]}],
            "crash": ["n:-2:3", "n:-2:2"],
            "obsYes": [{"reliable": true, "entries": [["n:-1:1"], ["n:-1:3", "n:-1:4"]]}, {"entries": []}],
            "obsNo": [["n:-1:4"]]}"#;
        let r = read_report_str(text, "data.json", &g).unwrap();
        let id = |s| g.lookup(s).unwrap();
        assert_eq!(
            r.stack,
            vec![Frame {
                call: NodeSet::one(id("n:-1:3")),
                entry: NodeSet::one(id("n:-2:1"))
            }]
        );
        assert_eq!(r.crash, NodeSet::new(vec![id("n:-2:3"), id("n:-2:2")]));
        assert_eq!(r.obs_yes.len(), 2);
        assert!(r.obs_yes[0].reliable);
        assert_eq!(
            r.obs_yes[0].entries[1],
            NodeSet::new(vec![id("n:-1:4"), id("n:-1:3")]).unwrap()
        );
        assert!(!r.obs_yes[1].reliable && r.obs_yes[1].entries.is_empty());
        assert_eq!(r.obs_no, vec![NodeSet::one(id("n:-1:4"))]);
    }

    #[test]
    fn crashstack_is_frames_then_crash() {
        let g = graph();
        let a = read_report_str(
            r#"{"crashstack": [{"call": ["n:-1:3"], "entry": ["n:-2:1"]}, {"crash": ["n:-2:3"]}]}"#,
            "x",
            &g,
        )
        .unwrap();
        let b = read_report_str(
            r#"{"stack": [{"call": ["n:-1:3"], "entry": ["n:-2:1"]}], "crash": ["n:-2:3"]}"#,
            "x",
            &g,
        )
        .unwrap();
        assert_eq!(a, b);
        let only = read_report_str(r#"{"crashstack": [{"crash": ["n:-1:1"]}]}"#, "x", &g).unwrap();
        assert!(only.stack.is_empty());
        assert_eq!(only.crash, Some(NodeSet::one(g.lookup("n:-1:1").unwrap())));
    }

    #[test]
    fn errors_give_path_and_value() {
        assert_eq!(
            err(r#"{"crash": ["n:-9:999"]}"#),
            r#"data.json: $.crash[0]: unknown node id "n:-9:999""#
        );
        assert_eq!(
            err(r#"{"crash": ["n:-1:1"], "obsYes": [{"reliable": "yes", "entries": []}]}"#),
            r#"data.json: $.obsYes[0].reliable: expected a boolean, found "yes""#
        );
        assert_eq!(
            err(r#"{"obsNo": []}"#),
            r#"data.json: $: missing field "crash""#
        );
        assert_eq!(
            err(r#"{"crash": ["n:-1:1"], "obsYes": [{"entries": [["n:-1:1"], []]}]}"#),
            "data.json: $.obsYes[0].entries[1]: empty node set (a set must hold at least one node id)"
        );
        assert_eq!(
            err(
                r#"{"crash": ["n:-1:1"], "obsYes": [{"entries": [["n:-1:1"]]}, {"entries": [["n:-1:1", "n:-9:999"]]}]}"#
            ),
            r#"data.json: $.obsYes[1].entries[0][1]: unknown node id "n:-9:999""#
        );
        assert!(err(r#"{"crash": ["n:-1:1"], "stak": []}"#)
            .starts_with(r#"data.json: $.stak: unknown field "stak""#));
        assert!(err(r#"{"crash": ["n:-1:1"], "a b": []}"#)
            .starts_with(r#"data.json: $["a b"]: unknown field"#));
        assert_eq!(
            err(r#"{"crash": ["n:-1:1"], "crashstack": [{"crash": ["n:-1:1"]}]}"#),
            r#"data.json: $.crashstack: both "crash" and "crashstack" are present"#
        );
        assert_eq!(
            err(r#"[1, 2]"#),
            "data.json: $: expected an object, found [1,2]"
        );
        assert_eq!(
            err(r#"{"crash": [12]}"#),
            "data.json: $.crash[0]: expected a node id string, found 12"
        );
        assert_eq!(
            err(r#"{"crash": "n:-1:1"}"#),
            r#"data.json: $.crash: expected an array, found "n:-1:1""#
        );
        assert_eq!(
            err(r#"{"crash": ["n:-1:1"], "stack": [{"call": ["n:-1:3"]}]}"#),
            r#"data.json: $.stack[0]: missing field "entry""#
        );
        assert_eq!(
            err(r#"{"crashstack": [{"call": ["n:-1:3"], "entry": ["n:-2:1"]}, {"crash": []}]}"#),
            "data.json: $.crashstack[1].crash: empty node set (a set must hold at least one node id)"
        );
        assert!(
            err(r#"{"crashstack": []}"#).starts_with("data.json: $.crashstack: empty crashstack")
        );
        assert!(err("").starts_with("data.json: empty file"));
        assert!(err("  \n ").starts_with("data.json: empty file"));
        assert!(err("{\"crash\": [").starts_with("data.json: invalid JSON: "));
    }
}
