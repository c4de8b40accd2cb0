//! SanitizerCoverage `inline-bool-flag` flags mapped to ICFG nodes: the
//! map the LLVM front-end (`postmortem-llvm`, whose `sancov` module
//! documents how each flag is mapped) builds from an instrumented module,
//! and the report constraints a flag dump gives. Kept here, apart from
//! the front-end, so that the `postmortem` binary uses the map without
//! linking LLVM (the front-end runs as its own process, see
//! [`crate::frontend`]).

use postmortem_core::NodeId;

/// The section of the flag arrays.
pub const BOOLS_SECTION: &str = "__sancov_bools";

/// The section of the pc tables (`-fsanitize-coverage=pc-table`).
pub const PCS_SECTION: &str = "__sancov_pcs";

/// One `__sancov_gen_` flag array: the flags of one function.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SancovArray {
    /// The global's IR name (`__sancov_gen_.4`).
    pub global: String,
    /// The function whose blocks it covers (the one storing into it); None
    /// when no store into it was found.
    pub function: Option<String>,
    /// Number of flags.
    pub len: usize,
    /// Index of its first flag in [`SancovMap::flags`].
    pub first_flag: usize,
}

/// One flag, in section order, and what it says about the graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SancovFlag {
    /// Index into [`SancovMap::arrays`].
    pub array: usize,
    /// The function of the covered block.
    pub function: String,
    /// The IR name of the covered block (`L` above; the store's block in
    /// the fallback).
    pub block: String,
    /// Set flag: this node surely ran. None when no store sets the flag
    /// (a flag the program can never set).
    pub ran: Option<NodeId>,
    /// Clear flag: none of these nodes ran.
    pub not_ran: Vec<NodeId>,
    /// Whether the flag matched the exact clang pattern (else fallback).
    pub exact: bool,
}

/// The flags of a module, in section order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SancovMap {
    /// The flag arrays, in section order (module order grouped by comdat).
    pub arrays: Vec<SancovArray>,
    /// Every flag of every array, in the same order as the bytes of
    /// `__start___sancov_bools..__stop___sancov_bools`.
    pub flags: Vec<SancovFlag>,
    /// Flags whose store did not match the clang pattern (clear says
    /// nothing for them).
    pub inexact: usize,
    /// Flags with no store in the module, or more than one.
    pub unmapped: usize,
}

impl SancovMap {
    /// One line for the user.
    pub fn summary(&self) -> String {
        format!(
            "sancov: {} flags in {} arrays ({} not exact, {} unmapped)",
            self.flags.len(),
            self.arrays.len(),
            self.inexact,
            self.unmapped
        )
    }
}

/// What a flag dump says, as report constraints.
#[derive(Clone, Debug, Default)]
pub struct FlagConstraints {
    /// One unordered "ran" observation per set flag (an unreliable trace
    /// of one node), in flag order.
    pub ran: Vec<postmortem_core::report::Trace>,
    /// Flag index of each element of `ran` (or of `ran_somewhere`, which
    /// replaces `ran` for a multi-threaded process).
    pub ran_flags: Vec<usize>,
    /// The nodes of the set flags when they say only that their block ran
    /// in *some* thread of the process (a core with several threads; see
    /// [`postmortem_core::Report::ran_somewhere`]): then `ran` is empty.
    pub ran_somewhere: Vec<NodeId>,
    /// "Never ran" singletons, one per node of the blocks of clear flags
    /// (each node once).
    pub not_ran: Vec<postmortem_core::report::NodeSet>,
    /// Set and clear flags.
    pub set: usize,
    /// Clear flags.
    pub clear: usize,
    /// Flags left out, whatever their value: those of pc-table slots that
    /// were never relocated (their block has no code in the binary).
    pub unknown: usize,
}

/// Why a flag dump does not fit the graph's flags
/// ([`SancovMap::constraints`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FlagsError {
    /// The dump has another number of flags than the graph's module.
    #[error(
        "{dump} coverage flags, but the graph's module has {graph}: not the flags of this program's instrumented build"
    )]
    Count {
        /// Flags in the dump.
        dump: usize,
        /// Flags in the graph's module.
        graph: usize,
    },
    /// A flag is neither 0 nor 1.
    #[error(
        "flag {index} has value {value}: a coverage flag is 0 or 1 (not a dump of __sancov_bools)"
    )]
    Value {
        /// The flag's index.
        index: usize,
        /// Its value.
        value: u8,
    },
}

impl SancovMap {
    /// The constraints of a flag dump: `flags` holds one byte per flag,
    /// in section order (the bytes of
    /// `__start___sancov_bools..__stop___sancov_bools`), 0 or 1. An error
    /// (one line) when its length or a value does not fit.
    pub fn constraints(&self, flags: &[u8]) -> Result<FlagConstraints, FlagsError> {
        self.constraints_except(flags, &[])
    }

    /// [`SancovMap::constraints`] without the flags at the indices in
    /// `unknown` (sorted): they are evidence of nothing, set or clear
    /// (the flags of pc-table slots that were never relocated, see
    /// `native::unrelocated_slots`).
    pub fn constraints_except(
        &self,
        flags: &[u8],
        unknown: &[usize],
    ) -> Result<FlagConstraints, FlagsError> {
        use postmortem_core::report::{NodeSet, Trace};
        if flags.len() != self.flags.len() {
            return Err(FlagsError::Count {
                dump: flags.len(),
                graph: self.flags.len(),
            });
        }
        if let Some(i) = flags.iter().position(|&b| b > 1) {
            return Err(FlagsError::Value {
                index: i,
                value: flags[i],
            });
        }
        let mut out = FlagConstraints::default();
        let mut seen = std::collections::HashSet::new();
        for (i, (f, &b)) in self.flags.iter().zip(flags).enumerate() {
            if unknown.binary_search(&i).is_ok() {
                out.unknown += 1;
            } else if b == 1 {
                out.set += 1;
                if let Some(n) = f.ran {
                    out.ran.push(Trace {
                        reliable: false,
                        entries: vec![NodeSet::one(n)],
                    });
                    out.ran_flags.push(i);
                }
            } else {
                out.clear += 1;
                for &n in &f.not_ran {
                    if seen.insert(n) {
                        out.not_ran.push(NodeSet::one(n));
                    }
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The errors say what they said as strings (issue 38).
    #[test]
    fn flags_errors_keep_their_messages() {
        assert_eq!(
            FlagsError::Count { dump: 3, graph: 5 }.to_string(),
            "3 coverage flags, but the graph's module has 5: not the flags of this program's instrumented build"
        );
        assert_eq!(
            FlagsError::Value { index: 2, value: 7 }.to_string(),
            "flag 2 has value 7: a coverage flag is 0 or 1 (not a dump of __sancov_bools)"
        );
    }
}
