//! Reading a `--report` file of any format: telling csi-grissom JSON,
//! postmortem's own report ([`crate::pmreport`]) and a Sentry event
//! ([`crate::sentry`]) apart by their keys ([`detect`]), and handing the
//! text to that format's reader. A file that is not JSON at all gets an
//! error naming the option it was probably meant for.

use crate::error::FormatError;
use crate::logs::LogConfig;
use crate::pmreport::{parse_pmreport, Mapped};
use postmortem_core::locate::PathMap;
use postmortem_core::Icfg;
use serde_json::Value;
use std::path::Path;

/// The two report formats `--report` accepts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ReportKind {
    /// csi-grissom JSON (`crash`, `crashstack`, `obsYes`, `obsNo`, and
    /// `stack` of `{call, entry}` frames).
    Grissom,
    /// This module's format.
    Postmortem,
    /// A Sentry event ([`crate::sentry`]): an `exception` key.
    Sentry,
}

/// Tells the formats apart: `exception` means [`ReportKind::Sentry`]; `ran`, `not_ran`, `log`, or a `stack` of
/// frames with `function`/`file` keys mean [`ReportKind::Postmortem`];
/// anything else (including invalid JSON) is left to the csi-grissom
/// reader.
pub fn detect(v: &Value) -> ReportKind {
    let Some(obj) = v.as_object() else {
        return ReportKind::Grissom;
    };
    if crate::sentry::is_sentry(v) {
        return ReportKind::Sentry;
    }
    if ["crash", "crashstack", "obsYes", "obsNo"]
        .iter()
        .any(|k| obj.contains_key(*k))
    {
        return ReportKind::Grissom;
    }
    if ["ran", "not_ran", "log"]
        .iter()
        .any(|k| obj.contains_key(*k))
    {
        return ReportKind::Postmortem;
    }
    let ours = obj
        .get("stack")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(Value::as_object)
        .is_some_and(|f| {
            ["function", "file", "line", "column"]
                .iter()
                .any(|k| f.contains_key(*k))
        });
    if ours {
        ReportKind::Postmortem
    } else {
        ReportKind::Grissom
    }
}

/// Reads a report file of any format (plain or gzip-compressed JSON):
/// csi-grissom reports resolve node ids against `g`, postmortem reports
/// are mapped through a [`crate::backtrace::locator`] of `g` with `paths`
/// (built only for them).
pub fn read_any_report(
    path: &Path,
    g: &Icfg,
    paths: &PathMap,
    logs: &LogConfig,
) -> Result<(ReportKind, Mapped), FormatError> {
    read_any_report_limited(path, crate::input::DEFAULT_TEXT_LIMIT, g, paths, logs)
}

/// [`read_any_report`], refusing a file (or its decompressed content) of
/// more than `limit` bytes, and devices (see [`crate::input`]).
pub fn read_any_report_limited(
    path: &Path,
    limit: u64,
    g: &Icfg,
    paths: &PathMap,
    logs: &LogConfig,
) -> Result<(ReportKind, Mapped), FormatError> {
    let limit = crate::input::Limit::new(limit, "report", "--max-input-size");
    let (name, text) = crate::report_json::read_json_text(path, &limit)?;
    read_any_report_str(&text, &name, g, paths, logs).map_err(|e| match e {
        FormatError::JsonSyntax { .. } => not_json_hint(&text, &name).unwrap_or(e),
        e => e,
    })
}

/// A report that is not JSON at all: if it is a backtrace or a log, an
/// error that says so and names the option for it.
fn not_json_hint(text: &str, name: &str) -> Option<FormatError> {
    let start = text.trim_start();
    if start.starts_with('{') || start.starts_with('[') {
        return None; // JSON, broken: the syntax error says where
    }
    let what = match crate::backtrace::parse_backtrace(text, name) {
        Ok(bt) if !bt.frames.is_empty() => "a backtrace; pass it with --backtrace",
        _ if start.is_empty() => return None,
        _ => "plain text, not JSON (a log? pass it with --log; a backtrace: --backtrace)",
    };
    Some(FormatError::text(
        name,
        &format!("not a JSON report: this looks like {what}"),
    ))
}

/// [`read_any_report`] on text.
pub fn read_any_report_str(
    text: &str,
    source_name: &str,
    g: &Icfg,
    paths: &PathMap,
    logs: &LogConfig,
) -> Result<(ReportKind, Mapped), FormatError> {
    let kind = serde_json::from_str::<Value>(text).map_or(ReportKind::Grissom, |v| detect(&v));
    match kind {
        ReportKind::Grissom => {
            let report = crate::report_json::read_report_str(text, source_name, g)?;
            Ok((
                kind,
                Mapped {
                    report,
                    warnings: Vec::new(),
                    log: None,
                    notes: Vec::new(),
                },
            ))
        }
        ReportKind::Sentry => {
            let v: Value = serde_json::from_str(text)
                .map_err(|e| FormatError::json_syntax(source_name, &e.to_string()))?;
            let event = crate::sentry::parse_sentry(&v, source_name)?;
            Ok((kind, event.to_report(g, paths, logs)))
        }
        ReportKind::Postmortem => {
            let parsed = parse_pmreport(text, source_name)?;
            let loc = crate::backtrace::locator(g, paths.clone());
            Ok((kind, parsed.to_report(&loc, logs)))
        }
    }
}
