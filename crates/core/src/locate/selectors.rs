//! "This ran" / "this did not run" selectors of hand-written reports.

use super::{Action, LocateWarning, Locator, Problem};
use crate::report::NodeSet;
use std::fmt;

/// What a selector of a hand-written report names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selector {
    /// A function (by name, as for frames).
    Function(String),
    /// A source line of a file (suffix-matched path).
    Line {
        /// The file.
        file: String,
        /// The 1-based line.
        line: u32,
    },
    /// The calls of a function (in the program, or a library function
    /// named in call notes).
    Call(String),
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Selector::Function(n) => write!(f, "function `{n}`"),
            Selector::Line { file, line } => write!(f, "line {file}:{line}"),
            Selector::Call(n) => write!(f, "calls of `{n}`"),
        }
    }
}

impl Locator<'_> {
    /// The `obsYes` element for "`sel` ran": one node, or "one of these".
    pub fn ran(&self, sel: &Selector) -> Result<NodeSet, LocateWarning> {
        let nodes = match sel {
            Selector::Function(name) => self.entries(&self.functions_named(name)),
            Selector::Line { file, line } => {
                self.nodes_on_line(&self.functions_in(&self.files_matching(file)), *line)
            }
            Selector::Call(name) => self.call_sites_of(name),
        };
        NodeSet::new(nodes).ok_or_else(|| self.no_match(sel))
    }

    /// The `obsNo` sets for "`sel` did not run": a function's entry (one
    /// set, "one of these" only if the name is ambiguous), one singleton
    /// per node of a line, one singleton per call site of a callee.
    pub fn not_ran(&self, sel: &Selector) -> Result<Vec<NodeSet>, LocateWarning> {
        let sets: Vec<NodeSet> = match sel {
            Selector::Function(name) => NodeSet::new(self.entries(&self.functions_named(name)))
                .into_iter()
                .collect(),
            Selector::Line { .. } | Selector::Call(_) => match self.ran(sel) {
                Ok(s) => s.nodes().iter().map(|&n| NodeSet::one(n)).collect(),
                Err(_) => Vec::new(),
            },
        };
        if sets.is_empty() {
            Err(self.no_match(sel))
        } else {
            Ok(sets)
        }
    }

    fn no_match(&self, sel: &Selector) -> LocateWarning {
        LocateWarning {
            subject: sel.to_string(),
            problem: Problem::NoMatch,
            action: Action::Dropped,
        }
    }
}
