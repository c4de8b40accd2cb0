//! Which failure format a JSON document is, by its keys alone: what the
//! `--report` dispatcher ([`crate::any_report`]) hands the text to, and
//! what the backtrace reader names when it is given JSON. Below every
//! reader, so that none of them imports another to tell them apart.

use serde_json::Value;

/// Whether `v` is a Sentry event: an object with an `exception` key.
pub fn is_sentry(v: &Value) -> bool {
    v.as_object().is_some_and(|o| o.contains_key("exception"))
}

/// The report formats `--report` accepts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ReportKind {
    /// csi-grissom JSON (`crash`, `crashstack`, `obsYes`, `obsNo`, and
    /// `stack` of `{call, entry}` frames).
    Grissom,
    /// postmortem's own report ([`crate::pmreport`]).
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
    if is_sentry(v) {
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
