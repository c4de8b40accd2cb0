//! Reading a `--report` file of any format: telling csi-grissom JSON,
//! postmortem's own report ([`crate::pmreport`]) and a Sentry event
//! ([`crate::sentry`]) apart by their keys ([`detect`]), and handing the
//! text to that format's reader. A file that is not JSON at all gets an
//! error naming the option it was probably meant for.

use crate::error::FormatError;
use crate::logs::LogConfig;
use crate::pmreport::{parse_pmreport, Mapped};
pub use crate::report_kind::{detect, ReportKind};
use postmortem_core::locate::PathMap;
use postmortem_core::Icfg;
use serde_json::Value;
use std::path::Path;

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
    // gdb's first line is often `[New LWP 1234]`, `[Thread debugging ...`:
    // a `[` then a word is no JSON array.
    let word_in_brackets = start
        .strip_prefix('[')
        .map(str::trim_start)
        .and_then(|r| r.chars().next())
        .is_some_and(|c| c.is_ascii_alphabetic() && !matches!(c, 't' | 'f' | 'n'));
    if (start.starts_with('{') || start.starts_with('[')) && !word_in_brackets {
        return None; // JSON, broken: the syntax error says where
    }
    if let Some(hint) = crate::input::kind_hint(text.as_bytes()) {
        return Some(FormatError::text(
            name,
            &format!("not a JSON report: this looks like {hint}"),
        ));
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
                    impossible_hint: None,
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
