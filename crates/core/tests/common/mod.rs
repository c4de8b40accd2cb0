//! What the two `suggest` test files share: the case count, line labels,
//! and the lines an analysis with one observation added decides.

use postmortem_core::suggest::{analysis, observe, Observation};
use postmortem_core::summary::by_line;
use postmortem_core::{Icfg, Label, NodeId, Report, Solver};
use std::collections::BTreeMap;

pub fn cases() -> u64 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300)
}

pub fn line_labels(g: &Icfg, labels: &[Label]) -> BTreeMap<(u32, u32), Label> {
    by_line(g, labels)
        .into_iter()
        .flat_map(|fl| {
            let f = fl.file.index() as u32;
            fl.lines.into_iter().map(move |(l, lab)| ((f, l), lab))
        })
        .collect()
}

/// Base-Maybe lines the analysis with the observation decides; `None` if
/// the observation is impossible.
pub fn decided(
    s: &(dyn Solver + Sync),
    g: &Icfg,
    report: &Report,
    base: &[Label],
    n: NodeId,
    o: Observation,
) -> Option<usize> {
    decided_lines(s, g, report, base, n, o).map(|lines| lines.len())
}

/// The lines `n`'s observation `o` decides (Maybe in `base`), with their
/// new labels; `None` when the observation is impossible.
pub fn decided_lines(
    s: &(dyn Solver + Sync),
    g: &Icfg,
    report: &Report,
    base: &[Label],
    n: NodeId,
    o: Observation,
) -> Option<Vec<(String, Label)>> {
    let labels = analysis(s, g, &observe(report, n, o)).expect("no limit on small graphs")?;
    let before = line_labels(g, base);
    let after = line_labels(g, &labels);
    Some(
        before
            .iter()
            .filter(|(k, &l)| l == Label::Maybe && after[k] != Label::Maybe)
            .map(|(k, _)| (format!("{k:?}"), after[k]))
            .collect(),
    )
}

/// The labels before the Local lift of a report without values and
/// residue (`suggest::Crash::first`, as `postmortem suggest` gives it),
/// on odd seeds; `None` (recovered where needed) otherwise.
#[allow(dead_code)] // not every test file bounds
pub fn first(s: &(dyn Solver + Sync), g: &Icfg, report: &Report, seed: u64) -> Option<Vec<Label>> {
    if seed.is_multiple_of(2) || !report.values.is_empty() || !report.residue.is_empty() {
        return None;
    }
    let how = postmortem_core::staged::Staging::default();
    let (_, _, mut before) = postmortem_core::staged::recover_lifted_keeping(s, g, report, how)
        .expect("feasible: its analysis was");
    postmortem_core::concurrency::mark_ran_somewhere(g, report, &mut before).ok()?;
    Some(before)
}
