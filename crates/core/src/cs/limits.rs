//! The limits of the context-sensitive solver, read by every part of it
//! (below them all).

/// Limits of the context-sensitive part. Past any of them the base
/// solver's labels are kept, with a weakening that says which.
#[derive(Clone, Debug)]
pub struct CsLimits {
    /// Maximum number of (node, stack segment) states of the frame graph.
    pub max_states: usize,
    /// Maximum wall-clock time of one frame-graph exploration.
    pub timeout: Option<std::time::Duration>,
    /// Memory budget of the frame graph, in bytes (estimated at
    /// 96 bytes per state).
    pub max_memory: usize,
    /// Most states of the bulk pass's exploration ([`super::bulk`]). Past it with
    /// the report's automata, the pass explores again without them; past
    /// it without them, the pass is skipped (the labels stay sound either
    /// way, and the output says so). 0 skips it.
    pub bulk_states: usize,
    /// Bulk recovery hands the base solver the frame graph's labels of
    /// its first labels ([`crate::Solver::recover_beside`]), so that it
    /// need not make exact the Maybe nodes the frame graph decides
    /// (issue 25). The labels are the same either way, or more decided.
    pub beside: bool,
    /// The bulk pass's must pass examines only the candidates on a few
    /// accepting derivations of its exploration (one of an accepting
    /// state, one through each node known to run): no other candidate
    /// can be proved (see `bulk::Flow::provable`), so the labels are the
    /// same, or more decided where the budget then reaches further.
    pub must_filter: bool,
    /// The must filter runs only with more candidates than this: up to
    /// 64 they fit one word per state, and the must pass takes them all
    /// in one go, as fast as fewer (the filter was a sixth of bzip2's
    /// value stages). 0: always (the filter's tests).
    pub must_filter_over: usize,
    /// The bulk pass's exploration shares a callee's invocations among
    /// the entry states of the automata that cannot tell them apart, and
    /// skips unreported calls that cannot reach the segment's end (see
    /// `product`'s "Shared invocations"): the same accepted paths, fewer
    /// states.
    pub lean: bool,
}

impl Default for CsLimits {
    fn default() -> Self {
        CsLimits {
            max_states: 4_000_000,
            timeout: None,
            max_memory: 4 << 30,
            bulk_states: 1 << 20,
            beside: true,
            must_filter: true,
            must_filter_over: 64,
            lean: true,
        }
    }
}
