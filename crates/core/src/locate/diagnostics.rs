//! What could not be matched, and the sound weakening applied instead.

use crate::report::Report;
use std::fmt;

/// What could not be matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// Nothing in the graph matches the frame's function or file: code
    /// outside the program (a library).
    NotInProgram,
    /// The frame names no function and no known file (`??`), or names a
    /// file of the program but a line with no node and no known function.
    Unplaceable,
    /// The function was found but has no node on this line.
    NoNodeOnLine(u32),
    /// The frame's location is in another file (named) than its
    /// function's: code inlined from there, or a binary of another build.
    OtherFile(String),
    /// No call site on the line may call the frame above (call sites
    /// merged by the optimiser: the call carries another line, or none).
    NoCallOfCalleeOnLine(u32),
    /// The line has nodes but no call site.
    NoCallSiteOnLine(u32),
    /// The function has no entry node in the graph.
    NoEntryNode,
    /// A selector matches nothing in the graph.
    NoMatch,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::NotInProgram => write!(
                f,
                "matches no function or file of the program (library code?)"
            ),
            Problem::Unplaceable => write!(f, "cannot be placed in the program"),
            Problem::NoNodeOnLine(l) => write!(f, "its function has no statement on line {l}"),
            Problem::OtherFile(file) => write!(
                f,
                "its location is in {file}, not in its function's file (inlined code, or a binary of another build than the graph's)"
            ),
            Problem::NoCallOfCalleeOnLine(l) => write!(
                f,
                "no call on line {l} may call the frame above it (calls merged by the optimiser?)"
            ),
            Problem::NoCallSiteOnLine(l) => write!(f, "line {l} has no call site"),
            Problem::NoEntryNode => write!(f, "its function has no entry node in the graph"),
            Problem::NoMatch => write!(f, "matches nothing in the graph"),
        }
    }
}

/// What was done about a [`Problem`] (always a sound weakening).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// The crash is placed at the call its caller frame was executing.
    CrashAtCaller {
        /// The caller frame's label.
        caller: String,
    },
    /// The crash set is every node of the function(s) (`count` nodes).
    CrashInFunction {
        /// Size of the crash set.
        count: usize,
    },
    /// The crash location is left unconstrained.
    CrashUnconstrained,
    /// The call is one of all `count` call sites of the function(s).
    CallAnywhereInFunction {
        /// Size of the call set.
        count: usize,
    },
    /// These report frames (stack positions, outermost first) were left
    /// out of the stack.
    FramesDropped {
        /// How many report frames were dropped.
        count: usize,
    },
    /// The selector is left out of the report.
    Dropped,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::CrashAtCaller { caller } => {
                write!(f, "the crash is placed at the call in {caller}")
            }
            Action::CrashInFunction { count } => {
                write!(
                    f,
                    "the crash is taken as anywhere in the function ({count} nodes)"
                )
            }
            Action::CrashUnconstrained => write!(f, "the crash location is left unconstrained"),
            Action::CallAnywhereInFunction { count } => {
                write!(
                    f,
                    "the call is taken as any call site of the function ({count})"
                )
            }
            Action::FramesDropped { count } => write!(
                f,
                "{count} stack frame{} left out of the stack constraint (a weaker constraint)",
                if *count == 1 { "" } else { "s" }
            ),
            Action::Dropped => write!(f, "it is left out of the report (a weaker constraint)"),
        }
    }
}

/// A diagnostic of the mapping: what could not be matched and the sound
/// weakening applied instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocateWarning {
    /// The frame or selector, as the input named it.
    pub subject: String,
    /// What could not be matched.
    pub problem: Problem,
    /// What was done about it.
    pub action: Action,
}

impl fmt::Display for LocateWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}; {}", self.subject, self.problem, self.action)
    }
}

/// A report built from source locations, with its diagnostics.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Located {
    /// The report (stack and crash for a backtrace).
    pub report: Report,
    /// What could not be matched, and what was weakened instead.
    pub warnings: Vec<LocateWarning>,
    /// For a located stack: for each frame of `report.stack` (outermost
    /// first), the position in the input frames (innermost first) of its
    /// callee, the activation that frame's call started (the caller of
    /// the first frame is at that position + 1); `None` for a callee
    /// restored from an inline chain (no physical frame of its own, see
    /// [`SourceFrame::inlined`](super::SourceFrame::inlined)).
    pub callee_frames: Vec<Option<usize>>,
}
