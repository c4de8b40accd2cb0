//! The failure report: what the field told us about one failing run,
//! independent of any file format.
//!
//! Every element of a report becomes one or more *constraints* on the
//! execution path. Constraints are numbered in **report order**, which is
//! the order used to name the culprit of an impossible report:
//!
//! 1. the crash (where the run stopped);
//! 2. the stack frames, outermost first;
//! 3. the `obsYes` traces, in input order;
//! 4. the `obsNo` sets, in input order.

use crate::ids::NodeId;

/// A non-empty set of nodes meaning "one of these" (sorted, deduplicated).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NodeSet(Vec<NodeId>);

impl NodeSet {
    /// Builds a set; returns `None` if `nodes` is empty.
    pub fn new(mut nodes: Vec<NodeId>) -> Option<NodeSet> {
        if nodes.is_empty() {
            return None;
        }
        nodes.sort_unstable();
        nodes.dedup();
        Some(NodeSet(nodes))
    }
    /// A one-node set.
    pub fn one(n: NodeId) -> NodeSet {
        NodeSet(vec![n])
    }
    /// The members, sorted.
    pub fn nodes(&self) -> &[NodeId] {
        &self.0
    }
    /// The only member, if there is exactly one.
    pub fn single(&self) -> Option<NodeId> {
        match self.0.as_slice() {
            [n] => Some(*n),
            _ => None,
        }
    }
    /// Membership.
    pub fn contains(&self, n: NodeId) -> bool {
        self.0.binary_search(&n).is_ok()
    }
}

/// One frame still on the stack at the crash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The call site(s) in the caller.
    pub call: NodeSet,
    /// The entry node(s) of the callee.
    pub entry: NodeSet,
}

/// An ordered observation: these statements were seen in this order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    /// `true` if the trace holds *every* occurrence of the traced nodes
    /// (a complete call trace), `false` if it is a subsequence.
    pub reliable: bool,
    /// The observed elements, in order; each is "one of these".
    pub entries: Vec<NodeSet>,
}

/// A failure report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Frames on the stack at the crash, outermost first.
    pub stack: Vec<Frame>,
    /// Where the run stopped: one of these nodes was the last executed.
    pub crash: Option<NodeSet>,
    /// Ordered observations.
    pub obs_yes: Vec<Trace>,
    /// Each set: at least one of these nodes never executed.
    pub obs_no: Vec<NodeSet>,
}

/// Where a constraint came from in the report.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Origin {
    /// The crash location.
    Crash,
    /// Stack frame `i` (0 = outermost).
    Frame(usize),
    /// `obsYes[i]`.
    ObsYes(usize),
    /// `obsNo[i]`.
    ObsNo(usize),
    /// The query being asked.
    Query,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Crash => write!(f, "crash"),
            Origin::Frame(i) => write!(f, "stack[{i}]"),
            Origin::ObsYes(i) => write!(f, "obsYes[{i}]"),
            Origin::ObsNo(i) => write!(f, "obsNo[{i}]"),
            Origin::Query => write!(f, "query"),
        }
    }
}

impl Report {
    /// The report without `obsYes` and `obsNo` (grissom's `-stackonly`).
    pub fn stack_only(&self) -> Report {
        Report { stack: self.stack.clone(), crash: self.crash.clone(), obs_yes: vec![], obs_no: vec![] }
    }

    /// Every constraint origin, in report order.
    pub fn origins(&self) -> Vec<Origin> {
        let mut v = Vec::with_capacity(1 + self.stack.len() + self.obs_yes.len() + self.obs_no.len());
        if self.crash.is_some() {
            v.push(Origin::Crash);
        }
        v.extend((0..self.stack.len()).map(Origin::Frame));
        v.extend((0..self.obs_yes.len()).map(Origin::ObsYes));
        v.extend((0..self.obs_no.len()).map(Origin::ObsNo));
        v
    }

    /// The sub-report holding only the constraints in `keep`.
    ///
    /// Frames are kept as a prefix of the stack (a stack without its
    /// outer frames is a weaker stack), so `keep` must name frames `0..k`
    /// for some `k`; other frames are ignored.
    pub fn restrict(&self, keep: &[Origin]) -> Report {
        let mut r = Report::default();
        for o in keep {
            match *o {
                Origin::Crash => r.crash = self.crash.clone(),
                Origin::Frame(i) => {
                    if i == r.stack.len() {
                        r.stack.push(self.stack[i].clone())
                    }
                }
                Origin::ObsYes(i) => r.obs_yes.push(self.obs_yes[i].clone()),
                Origin::ObsNo(i) => r.obs_no.push(self.obs_no[i].clone()),
                Origin::Query => {}
            }
        }
        r
    }

    /// Every node the report mentions (for validation and display).
    pub fn mentioned_nodes(&self) -> impl Iterator<Item = NodeId> + '_ {
        let frames = self.stack.iter().flat_map(|f| f.call.nodes().iter().chain(f.entry.nodes()));
        let crash = self.crash.iter().flat_map(|c| c.nodes());
        let yes = self.obs_yes.iter().flat_map(|t| t.entries.iter().flat_map(|e| e.nodes()));
        let no = self.obs_no.iter().flat_map(|s| s.nodes());
        frames.chain(crash).chain(yes).chain(no).copied()
    }
}
