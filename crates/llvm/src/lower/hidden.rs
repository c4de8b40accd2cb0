//! Pass 4: the control flow that no call instruction shows (see the
//! crate docs, "Control flow that no call instruction shows"), from what
//! pass 3 found about calls ([`CallFacts`]).

use super::bodies::CallFacts;
use super::ends::Ends;
use super::index::ModuleIndex;
use super::{add_node, FnId};
use crate::{FrontendReport, LlvmError};
use postmortem_core::{FuncId, IcfgBuilder, NodeId, NodeKind};
use std::collections::HashSet;

/// Pass 4: adds to `b` the flow of non-local jumps, external code, the
/// `<program>` start, and marks the asynchronous functions.
pub(super) struct HiddenFlow<'a, 'm> {
    pub(super) index: &'a ModuleIndex<'m>,
    pub(super) ends: &'a Ends,
    pub(super) b: &'a mut IcfgBuilder,
    pub(super) facts: &'a CallFacts,
    pub(super) path: &'a str,
    pub(super) report: &'a mut FrontendReport,
}

impl HiddenFlow<'_, '_> {
    fn node(
        &mut self,
        id: &str,
        kind: NodeKind,
        func: FuncId,
        label: &str,
        lines: &[u32],
    ) -> Result<NodeId, LlvmError> {
        add_node(self.b, self.path, id, kind, func, label, lines)
    }

    /// Adds the control flow that is not in any function body:
    ///
    /// * **Non-local jumps.** Every `longjmp`-like call site gets a flow
    ///   edge to the resume point (the flow successors) of every
    ///   `setjmp`-like call site: a cross-function `Local` edge. Without
    ///   tracking jump buffers any `setjmp` may be the target
    ///   (context-insensitively sound; a context-sensitive solver can keep
    ///   only the sites of pending frames).
    /// * **External code.** Code outside the program may call back any
    ///   function whose address escaped (every address-taken function) and
    ///   may `longjmp`. One synthetic function, `<external code>`, models
    ///   it: its entry flows to a dispatch node, which may call every
    ///   address-taken function (any number of times, in any order), jump
    ///   to every `setjmp` resume point, or flow to its exit. Every call
    ///   that may run unknown code (a declaration that is not a known
    ///   inert C library function, an unresolved indirect call) also calls
    ///   it, and keeps its fall-through.
    /// * **Exit handlers.** When the program registers them (`atexit`,
    ///   ...), a synthetic start function `<program>` calls `main` and then
    ///   `<external code>`, which runs them after `main` returns (`exit`
    ///   already calls it as unknown code).
    pub(super) fn add(&mut self) -> Result<(), LlvmError> {
        let resumes = self.jump_resumes();
        self.report.setjmp_sites = self.facts.setjmp_sites.len();
        self.mark_async_roots();
        for &l in &self.facts.longjmp_sites {
            for &r in &resumes {
                self.b.add_flow_edge(l, r);
                self.report.longjmp_edges += 1;
            }
        }
        let external_entry = self.external_code(&resumes)?;
        let handlers = external_entry.filter(|_| self.facts.exit_handlers);
        self.program_start(handlers)
    }

    /// The resume points of the `setjmp`-like call sites (their flow
    /// successors), sorted; none when nothing may jump to them.
    fn jump_resumes(&self) -> Vec<NodeId> {
        let jump_sources =
            !self.facts.longjmp_sites.is_empty() || !self.facts.unknown_code_sites.is_empty();
        if self.facts.setjmp_sites.is_empty() || !jump_sources {
            return Vec::new();
        }
        let sites: HashSet<NodeId> = self.facts.setjmp_sites.iter().copied().collect();
        let mut r: Vec<NodeId> = self
            .b
            .flow_edges()
            .filter(|(a, _)| sites.contains(a))
            .map(|(_, b)| b)
            .collect();
        r.sort_unstable();
        r.dedup();
        r
    }

    /// Marks the asynchronous functions (signal handlers, thread start
    /// routines) with the call sites that register them.
    fn mark_async_roots(&mut self) {
        let mut roots: Vec<(FnId, NodeId)> = self.facts.async_roots.iter().copied().collect();
        roots.sort_unstable();
        for &(i, site) in &roots {
            let func = self.b.function(self.index.info(i).name);
            self.b.mark_async(func, site);
        }
        roots.dedup_by_key(|r| r.0);
        self.report.async_functions = roots.len();
    }

    /// The `<external code>` function, when some call may run unknown code
    /// (or the program registers exit handlers) and that code may call a
    /// function or jump somewhere: its entry, if made.
    fn external_code(&mut self, resumes: &[NodeId]) -> Result<Option<NodeId>, LlvmError> {
        let escaping: Vec<FnId> = self
            .index
            .address_taken
            .iter()
            .copied()
            .filter(|&i| self.ends.entry(i).is_some())
            .collect();
        let needs_external = (!self.facts.unknown_code_sites.is_empty()
            || self.facts.exit_handlers)
            && (!escaping.is_empty() || !resumes.is_empty());
        if !needs_external {
            return Ok(None);
        }
        let func = self.b.function("<external code>");
        let label = "code outside the program";
        let entry = self.node("<external>:entry", NodeKind::Entry, func, label, &[])?;
        let dispatch = self.node("<external>:dispatch", NodeKind::Statement, func, label, &[])?;
        let exit = self.node("<external>:exit", NodeKind::Exit, func, label, &[])?;
        self.b.add_flow_edge(entry, dispatch);
        self.b.add_flow_edge(dispatch, exit);
        for &i in &escaping {
            let name = self.index.info(i).name;
            let site = self.node(
                &format!("<external>:calls:{name}"),
                NodeKind::CallSite,
                func,
                &format!("call {name}"),
                &[],
            )?;
            self.b.add_flow_edge(dispatch, site);
            self.b.add_flow_edge(site, dispatch);
            self.b
                .add_call_edge(site, self.ends.entry(i).expect("filtered"));
        }
        for &r in resumes {
            self.b.add_flow_edge(dispatch, r);
            self.report.longjmp_edges += 1;
        }
        for &site in &self.facts.unknown_code_sites {
            self.b.add_call_edge(site, entry);
        }
        self.report.external_code_sites = self.facts.unknown_code_sites.len();
        self.report.external_code_targets = escaping.len();
        Ok(Some(entry))
    }

    /// The `<program>` start function, when there are constructors,
    /// destructors or exit handlers (the entry of `<external code>`) and a
    /// `main`: it calls the constructors, `main`, the exit handlers and the
    /// destructors in turn.
    fn program_start(&mut self, handlers: Option<NodeId>) -> Result<(), LlvmError> {
        let ctors: Vec<FnId> = self
            .index
            .ctors
            .iter()
            .copied()
            .filter(|&i| self.ends.entry(i).is_some())
            .collect();
        let dtors: Vec<FnId> = self
            .index
            .dtors
            .iter()
            .copied()
            .filter(|&i| self.ends.entry(i).is_some())
            .collect();
        if handlers.is_none() && ctors.is_empty() && dtors.is_empty() {
            return Ok(());
        }
        let Some(main) = self.index.by_name("main").and_then(|i| self.ends.entry(i)) else {
            return Ok(());
        };
        // The process: constructors, main, then exit handlers and
        // destructors (which `exit` also runs: it calls unknown code).
        let func = self.b.function("<program>");
        let label = "the process: constructors, main, exit handlers, destructors";
        let start = self.node("<program>:entry", NodeKind::Entry, func, label, &[])?;
        let mut calls: Vec<(String, String, NodeId)> = Vec::new();
        for &i in &ctors {
            let name = self.index.info(i).name;
            let entry = self.ends.entry(i).expect("filtered");
            calls.push((
                format!("<program>:ctor:{name}"),
                format!("call constructor {name}"),
                entry,
            ));
        }
        calls.push(("<program>:main".into(), "call main".into(), main));
        if let Some(entry) = handlers {
            calls.push((
                "<program>:exit-handlers".into(),
                "call exit handlers".into(),
                entry,
            ));
        }
        for &i in &dtors {
            let name = self.index.info(i).name;
            let entry = self.ends.entry(i).expect("filtered");
            calls.push((
                format!("<program>:dtor:{name}"),
                format!("call destructor {name}"),
                entry,
            ));
        }
        let mut last = start;
        for (key, text, callee) in calls {
            let site = self.node(&key, NodeKind::CallSite, func, &text, &[])?;
            self.b.add_flow_edge(last, site);
            self.b.add_call_edge(site, callee);
            last = site;
        }
        let end = self.node("<program>:exit", NodeKind::Exit, func, label, &[])?;
        self.b.add_flow_edge(last, end);
        self.b.set_start(start);
        self.report.constructors = ctors.len() + dtors.len();
        Ok(())
    }
}
