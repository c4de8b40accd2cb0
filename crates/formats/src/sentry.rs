//! Sentry event JSON as a failure report (`--report event.json`, detected
//! by its `exception` key).
//!
//! ```text
//! { "event_id": "...", "platform": "native",
//!   "exception": { "values": [ { "type": "SIGFPE",
//!       "stacktrace": { "frames": [            // caller to callee
//!         { "function": "main", "filename": "calc.c", "abs_path": "/src/calc.c",
//!           "lineno": 82, "colno": 13, "in_app": true },
//!         { "function": "apply", "filename": "calc.c", "lineno": 39, "in_app": true } ] } } ] },
//!   "breadcrumbs": { "values": [ { "message": "depth 1" }, ... ] } }
//! ```
//!
//! * The crash stack is the `stacktrace.frames` of the **last** value of
//!   `exception.values` that has frames (Sentry lists chained exceptions
//!   oldest first; a native crash has one). Frames are ordered caller to
//!   callee: the last frame is the crash. `function`, `abs_path` (else
//!   `filename`), `lineno`, `colno` locate a frame exactly like a
//!   backtrace frame ([`crate::backtrace::RawFrame`], then
//!   [`postmortem_core::locate`]); `in_app: false` marks a runtime or
//!   library frame (without `in_app`, the backtrace reader's list of
//!   runtime functions decides). `instruction_addr` and `package` are kept
//!   as the frame's address and module.
//! * `breadcrumbs.values[].message` (or a bare `breadcrumbs` array), in
//!   order, are log lines matched like `--log` ([`crate::logs`]);
//!   breadcrumbs without a message are skipped.
//! * Everything else of the event is ignored. The fields read are checked:
//!   a wrong type, a non-positive line or column, no frames at all is one
//!   error with its JSON path.

use crate::backtrace::{is_runtime_function, locator, RawFrame};
use crate::error::FormatError;
use crate::logs::{LogConfig, LogMatcher};
use crate::pmreport::Mapped;
use postmortem_core::locate::{PathMap, SourceFrame};
use postmortem_core::{FuncId, Icfg};
use serde_json::Value;
use std::collections::HashSet;

pub use crate::report_kind::is_sentry;

/// A Sentry event's crash stack and log.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SentryEvent {
    /// The crash stack, innermost first (as backtraces are).
    pub frames: Vec<RawFrame>,
    /// The breadcrumbs' messages, in order.
    pub log: Vec<String>,
}

impl SentryEvent {
    /// The frames as the locator takes them.
    pub fn source_frames(&self) -> Vec<SourceFrame> {
        self.frames.iter().map(RawFrame::to_source_frame).collect()
    }

    /// Maps the event to a report over `g`: the stack like a backtrace,
    /// the breadcrumbs like a log.
    pub fn to_report(&self, g: &Icfg, paths: &PathMap, logs: &LogConfig) -> Mapped {
        let loc = locator(g, paths.clone());
        let located = loc.locate_stack(&self.source_frames());
        let mut report = located.report;
        let log = if self.log.is_empty() {
            None
        } else {
            let m = LogMatcher::new(g, logs).match_lines(self.log.iter().map(String::as_str));
            if let Some(t) = &m.trace {
                report.obs_yes.push(t.clone());
            }
            Some(m)
        };
        let crash_first = self.looks_crash_first(g);
        let notes = if crash_first {
            vec![CRASH_FIRST.to_string()]
        } else {
            Vec::new()
        };
        Mapped {
            report,
            warnings: located.warnings,
            log,
            notes,
            impossible_hint: crash_first.then(|| CRASH_FIRST.to_string()),
        }
    }

    /// Whether the frames look listed crash first (callee to caller, as
    /// some exporters write them) rather than Sentry's caller to callee:
    /// among the frames whose function is in the graph, some frame's
    /// function does not call the next inner one's, while in the reverse
    /// order each does.
    pub fn looks_crash_first(&self, g: &Icfg) -> bool {
        // Innermost first, as parsed (the event's last frame first).
        let funcs: Vec<FuncId> = self
            .frames
            .iter()
            .filter(|f| !f.runtime)
            .filter_map(|f| g.function_by_name(f.function.as_deref()?))
            .collect();
        if funcs.len() < 2 {
            return false;
        }
        let mut calls: HashSet<(FuncId, FuncId)> = HashSet::new();
        for n in g.nodes() {
            for callee in g.callees(n) {
                calls.insert((g.func_of(n), callee));
            }
        }
        let pairs = funcs.windows(2);
        let as_given = pairs.clone().all(|w| calls.contains(&(w[1], w[0])));
        let reversed = pairs.clone().all(|w| calls.contains(&(w[0], w[1])));
        !as_given && reversed
    }
}

/// The warning for frames that look listed crash first (see
/// [`SentryEvent::looks_crash_first`]); the analysis appends it to the
/// message of an impossible report.
pub const CRASH_FIRST: &str = "the event's stack frames look listed crash first (callee to caller): \
in that order some frame's function does not call the next one's, in the reverse order each does. \
Sentry lists frames caller to callee, the crash last; if an exporter reversed them, reverse them back, \
e.g. jq '.exception.values[].stacktrace.frames |= reverse' EVENT.json > fixed.json";

/// Reads a Sentry event (see the module doc). `name` names it in errors.
pub fn parse_sentry(v: &Value, name: &str) -> Result<SentryEvent, FormatError> {
    let (path, frames) = crash_frames(v, name)?;
    let mut out = SentryEvent::default();
    let n = frames.len();
    for (i, f) in frames.iter().enumerate().rev() {
        let at = format!("{path}[{i}]");
        out.frames
            .push(parse_frame(f, &at, (n - 1 - i) as u32, name)?);
    }
    out.log = breadcrumbs(v, name)?;
    Ok(out)
}

/// The `stacktrace.frames` of the last value of `exception.values` that
/// has frames, with their JSON path.
fn crash_frames<'v>(v: &'v Value, name: &str) -> Result<(String, &'v [Value]), FormatError> {
    let err = |path: &str, msg: &str| FormatError::json(name, path, msg);
    let values = v
        .get("exception")
        .and_then(|e| e.get("values"))
        .ok_or_else(|| err("$.exception", "expected an object with `values`"))?
        .as_array()
        .ok_or_else(|| err("$.exception.values", "expected an array"))?;
    let mut chosen = None;
    for (i, e) in values.iter().enumerate() {
        if !e.is_object() {
            return Err(err(
                &format!("$.exception.values[{i}]"),
                "expected an object",
            ));
        }
        match e.get("stacktrace") {
            None | Some(Value::Null) => {}
            Some(st) => {
                let path = format!("$.exception.values[{i}].stacktrace.frames");
                let frames = st
                    .get("frames")
                    .and_then(Value::as_array)
                    .ok_or_else(|| err(&path, "expected an array of frames"))?;
                if !frames.is_empty() {
                    chosen = Some((path, &frames[..]));
                }
            }
        }
    }
    chosen.ok_or_else(|| {
        err(
            "$.exception.values",
            "no exception has stacktrace frames: no crash stack",
        )
    })
}

/// The fields of one frame object at JSON path `at`, read with their
/// paths for errors.
struct FrameFields<'a> {
    o: &'a serde_json::Map<String, Value>,
    at: &'a str,
    name: &'a str,
}

impl FrameFields<'_> {
    fn err(&self, k: &str, msg: &str) -> FormatError {
        FormatError::json(self.name, &format!("{}.{k}", self.at), msg)
    }

    fn string(&self, k: &str) -> Result<Option<String>, FormatError> {
        match self.o.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(self.err(k, "expected a string")),
        }
    }

    fn positive(&self, k: &str) -> Result<Option<u32>, FormatError> {
        match self.o.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(x) => x
                .as_u64()
                .filter(|&l| l >= 1)
                .and_then(|l| u32::try_from(l).ok())
                .map(Some)
                .ok_or_else(|| self.err(k, &format!("expected a positive integer, found {x}"))),
        }
    }

    fn in_app(&self) -> Result<Option<bool>, FormatError> {
        match self.o.get("in_app") {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(self.err("in_app", "expected true or false")),
        }
    }

    /// `instruction_addr`, a `0x` hex string.
    fn address(&self) -> Result<Option<u64>, FormatError> {
        match self.string("instruction_addr")? {
            None => Ok(None),
            Some(a) => a
                .strip_prefix("0x")
                .and_then(|h| u64::from_str_radix(h, 16).ok())
                .map(Some)
                .ok_or_else(|| {
                    self.err(
                        "instruction_addr",
                        &format!("expected a hex address, found {a:?}"),
                    )
                }),
        }
    }
}

/// One frame object at JSON path `at`, `index` frames from the crash.
fn parse_frame(f: &Value, at: &str, index: u32, name: &str) -> Result<RawFrame, FormatError> {
    let o = f
        .as_object()
        .ok_or_else(|| FormatError::json(name, at, "expected a frame object"))?;
    let fields = FrameFields { o, at, name };
    let in_app = fields.in_app()?;
    let function = fields.string("function")?;
    let file = match fields.string("abs_path")? {
        Some(p) => Some(p),
        None => fields.string("filename")?,
    };
    let (line, column) = (fields.positive("lineno")?, fields.positive("colno")?);
    if column.is_some() && line.is_none() {
        return Err(fields.err("colno", "a column needs `lineno`"));
    }
    let address = fields.address()?;
    let runtime = match in_app {
        Some(b) => !b,
        None => function.as_deref().is_some_and(is_runtime_function),
    };
    Ok(RawFrame {
        index: Some(index),
        function,
        symbol: fields
            .string("symbol")?
            .filter(|s| s.starts_with("_Z") || s.starts_with("_R")),
        file,
        line,
        column,
        module: fields.string("package")?,
        address,
        runtime,
        ..RawFrame::default()
    })
}

/// The breadcrumbs' messages, in order.
fn breadcrumbs(v: &Value, name: &str) -> Result<Vec<String>, FormatError> {
    let err = |path: &str, msg: &str| FormatError::json(name, path, msg);
    let crumbs = match v.get("breadcrumbs") {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) => Some(("$.breadcrumbs", a)),
        Some(b) => match b.get("values") {
            Some(Value::Array(a)) => Some(("$.breadcrumbs.values", a)),
            _ => {
                return Err(err(
                    "$.breadcrumbs",
                    "expected an array or an object with a `values` array",
                ))
            }
        },
    };
    let mut log = Vec::new();
    if let Some((path, crumbs)) = crumbs {
        for (i, c) in crumbs.iter().enumerate() {
            match c.get("message") {
                None | Some(Value::Null) => {}
                Some(Value::String(m)) => log.push(m.clone()),
                Some(_) => return Err(err(&format!("{path}[{i}].message"), "expected a string")),
            }
        }
    }
    Ok(log)
}
