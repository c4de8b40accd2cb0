//! The analysis every command runs on one failure: `analyze`, `batch`,
//! `suggest` (its base, and each observation it tries) and the HTML
//! report's page all take their labels from [`analyse`], so that they
//! agree by construction.
//!
//! 1. [`crate::staged::recover_lifted_keeping`]: the report without
//!    values (and with the stack residue it keeps), the values in stages,
//!    then the Local lift (nodes some frame's Local labels prove ran, fed
//!    back);
//! 2. [`crate::concurrency::mark_ran_somewhere`]: coverage flags set in
//!    some thread, and return addresses left on the stack by some thread,
//!    marked Yes where the labels allow it (a residue word they rule out
//!    is dropped and listed; a flag they rule out makes the report
//!    impossible);
//! 3. [`crate::local::frame_labels`]: the Local labels of each stack frame.

use crate::icfg::Icfg;
use crate::ids::NodeId;
use crate::local::FrameLabels;
use crate::report::{Origin, Report};
use crate::solver::{Label, Recovery, SolveError, Solver, Weakening};
use crate::staged::{Lift, Staging};

/// What [`analyse`] found.
#[derive(Clone, Debug)]
pub struct Analysed {
    /// The labels (lifted, flags set in some thread marked), what was
    /// weakened, the solver's counters.
    pub rec: Recovery,
    /// What the Local lift fed back.
    pub lift: Lift,
    /// The labels before the lift ([`Analysed::first`] makes `suggest`'s
    /// bounds' labels of them).
    pub before_lift: Vec<Label>,
    /// The Local labels of each stack frame.
    pub frames: Vec<FrameLabels>,
}

/// Why [`analyse`] gave no labels.
#[derive(Clone, Debug)]
pub enum Failed {
    /// The solver failed, or found the report impossible.
    Solve(SolveError),
    /// A node whose coverage flag some thread set is labelled No: no
    /// execution consistent with the rest of the report runs it.
    RanSomewhere(NodeId),
}

impl From<SolveError> for Failed {
    fn from(e: SolveError) -> Failed {
        Failed::Solve(e)
    }
}

impl Failed {
    /// Whether the report is impossible for the program (no execution
    /// satisfies it), rather than the solver failing.
    pub fn impossible(&self) -> bool {
        matches!(
            self,
            Failed::RanSomewhere(_) | Failed::Solve(SolveError::Infeasible { .. })
        )
    }
}

/// The analysis of `report` (see the module docs), its stages run as
/// `how` says.
pub fn analyse(
    s: &(dyn Solver + Sync),
    g: &Icfg,
    report: &Report,
    how: Staging,
) -> Result<Analysed, Failed> {
    let (mut rec, lift, before_lift, lift_frames) =
        crate::staged::recover_lifted_framed(s, g, report, how)?;
    let marked = crate::concurrency::mark_ran_somewhere(g, report, &mut rec.labels)
        .map_err(Failed::RanSomewhere)?;
    for n in marked.dropped {
        let i = report
            .residue_somewhere
            .iter()
            .position(|&r| r == n)
            .expect("a member");
        rec.weakened.push(Weakening {
            origin: Origin::ResidueSomewhere(i),
            how: format!(
                "node {} (`{}`): its return address on the stack is not used: no execution consistent with the rest of the report runs it (a word that only looked like one?)",
                g.ext_id(n),
                g.function(g.func_of(n)).name
            ),
        });
    }
    let frames =
        crate::local::frame_labels_reusing(g, report, &rec.labels, &before_lift, &lift_frames);
    Ok(Analysed {
        rec,
        lift,
        before_lift,
        frames,
    })
}

impl Analysed {
    /// For a report without values and residue, the labels before the
    /// lift with the flags set in some thread marked in them too:
    /// `suggest`'s bounds are computed on them (see
    /// [`crate::suggest::Crash::first`]); `None` otherwise. Only
    /// `suggest` asks, so `analyse` does not mark them.
    pub fn first(&self, g: &Icfg, report: &Report) -> Option<Vec<Label>> {
        if !(report.values.is_empty() && report.residue.is_empty()) {
            return None;
        }
        let mut first = self.before_lift.clone();
        crate::concurrency::mark_ran_somewhere(g, report, &mut first).ok()?;
        Some(first)
    }
}
