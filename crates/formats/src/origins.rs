//! Following a faulting value back through copies, calls, parameters
//! and struct fields (issue 36, the slice's next steps): the store that
//! made `e` wrote `find(k)`'s
//! result, so `find`'s returns that can have returned the value made it;
//! `return p;` returned a copy of `p`, so `p`'s stores that can have left
//! it made it; a parameter's value is what one of its function's calls
//! passed (each call's argument followed in the caller); a load of a
//! struct's field, what the field's stores (anywhere: by struct type and
//! field) wrote, an array's elements being one field; and so on, along
//! the front-end's [`Origin`]s. A store to one element per pass of a loop
//! (`a[i] = f(i)`) names the loop's exit branch too ([`MadeBy::bound`]):
//! an element the loop did not reach keeps another value, unless some
//! store of the array can only have left the value itself. A store that
//! updated a variable from its own earlier value (`len = len - 1`,
//! `Origin::Update`) is followed to where that earlier value came from,
//! with every definition then kept whatever it wrote (the value is
//! another from there on).
//!
//! The value is the same at every step (a copy or a call result does not
//! change it), so each step keeps only definitions that can leave it
//! ([`Written::can_leave`]) and that ran on some execution the report
//! allows (their node is not No). For a copy of a local, only the stores
//! that reach the read over the function's graph
//! ([`postmortem_core::cause::reaching_writes`]), without the steps that
//! a branch testing the variable takes only with another value (the
//! variable's tests, [`crate::vars::Test::target`]): `return e;` inside
//! `for (e = head; e; e = e->next)` cannot return NULL.
//!
//! Sound as the labels are: every definition that can have made the
//! value is listed (the front-end lists every write of a variable and
//! every return of a function). A step is made on every execution the
//! report allows when the step before it was and it is the only
//! definition left; what a step cannot list (a parameter's value from a
//! call the front-end does not list, an indirect one; the start
//! function's or an asynchronous function's arguments; a field's writes
//! the front-end does not see, [`UNSEEN`]) is listed as a definition not
//! followed, so that no other one is taken for the only one, and none is
//! ruled out for want of others. The walk stops after
//! [`MAX_DEPTH`] steps, at a definition already on the way (a cycle),
//! and after following [`MAX_DEFS`] definitions in all.

use crate::image::fault::MadeBy;
use crate::vars::{Origin, VarMap, VarScope, Written};
use postmortem_core::{Icfg, Label, NodeId};

/// The most steps followed back from a suspect's store.
pub const MAX_DEPTH: usize = 16;
/// The most branches named for skipping a field's stores, per load of
/// the field ([`MadeBy::skipped`]).
pub const MAX_SKIPPED: usize = 3;
/// The most definitions followed in all, per suspect (each step lists
/// all of its own).
pub const MAX_DEFS: usize = 32;

/// The walk back from one suspect's value.
#[derive(Clone, Copy)]
pub struct Tracer<'a> {
    /// The graph.
    pub g: &'a Icfg,
    /// The front-end's variables and returns.
    pub map: &'a VarMap,
    /// The analysis's labels.
    pub labels: &'a [Label],
    /// The value, as read from the core.
    pub value: u64,
    /// Its width in bytes.
    pub bytes: u32,
    /// The activations of the crash stack from the suspect's outwards,
    /// each as its function and the call sites that entered it (empty:
    /// not known; it ends at the first frame whose caller is not known):
    /// a parameter of such an activation holds what *that* call passed,
    /// not what any call of its function passed, and the caller's values
    /// it passed are those of the next activation.
    pub entered_by: &'a [(postmortem_core::FuncId, &'a [NodeId])],
    /// Past a step that changed the value (`Origin::Update`): any value
    /// can have been made (every write can leave it, none is exact).
    pub any_value: bool,
}

impl Tracer<'_> {
    /// Where the value written at `node` (a store of variable `var`, one
    /// of the suspect's definitions) came from: how (``the result of
    /// `find` ``) and the definitions that can have made it there, each
    /// followed further. `every`: whether `node` made the value on every
    /// execution the report allows. None when the write has no origin.
    pub fn from_store(
        &self,
        var: usize,
        node: NodeId,
        every: bool,
    ) -> Option<(String, Vec<MadeBy>)> {
        let o = self.origin_of(var, node)?;
        let mut left = MAX_DEFS;
        let mut on_way = vec![(node, o as *const Origin)];
        let step = self.follow(node, o, (1, Some(0)), &mut on_way, &mut left);
        let mut defs = step.defs;
        mark(&mut defs, every);
        Some((step.via, defs))
    }

    /// Where a value that reached node `at` along `o` came from (the
    /// faulting operand of an access at `at`: [`crate::vars::Deref`]):
    /// how, and the definitions that can have made it, each followed.
    pub fn from_origin(&self, at: NodeId, o: &Origin) -> (String, Vec<MadeBy>) {
        let mut left = MAX_DEFS;
        let mut on_way = vec![(at, o as *const Origin)];
        let step = self.follow(at, o, (1, Some(0)), &mut on_way, &mut left);
        let mut defs = step.defs;
        mark(&mut defs, false);
        (step.via, defs)
    }

    /// The origin of variable `var`'s write at `node`, if any.
    fn origin_of(&self, var: usize, node: NodeId) -> Option<&Origin> {
        let v = self.map.vars.get(var)?;
        v.from
            .iter()
            .find(|(n, _)| *n as usize == node.index())
            .map(|(_, o)| o)
    }

    fn not_no(&self, n: NodeId) -> bool {
        self.labels.get(n.index()) != Some(&Label::No)
    }

    fn can_leave(&self, w: Written) -> bool {
        self.any_value || w.can_leave(self.value, self.bytes)
    }

    /// Whether a definition that can leave the value can leave only it.
    fn exact(&self, w: Written) -> bool {
        !self.any_value && exact(w)
    }

    /// One step back along `o`, which gave the value written at `at`.
    /// `frame`: `at` is in this activation of [`Tracer::entered_by`]
    /// (the steps so far were copies of locals and parameters passed by
    /// the calls the stack names), when known.
    fn follow(
        &self,
        at: NodeId,
        o: &Origin,
        (depth, frame): (usize, Option<usize>),
        on_way: &mut Vec<(NodeId, *const Origin)>,
        left: &mut usize,
    ) -> Step {
        // (definition, its node, its own origin to follow: (variable or
        // none for a return, origin)).
        // (definition, its node, its own origin, whether it can only
        // have made this value).
        if let Origin::Update(k, param, with) = o {
            // The value changed at this step: where the earlier value
            // came from, whatever it was, then the definitions of what
            // changed it (`n` of `p += n`), one step back only (any value
            // can have come from anywhere behind them: followed further,
            // they would crowd out the rest).
            let t = Tracer {
                any_value: true,
                ..*self
            };
            let earlier = match param {
                Some(i) => Origin::Arg(*i),
                None => Origin::Copy(*k),
            };
            let name = |k: u32| {
                self.map
                    .vars
                    .get(k as usize)
                    .map_or("?".to_string(), |v| format!("`{}`", v.name))
            };
            let mut step = t.follow(at, &earlier, (depth, frame), on_way, left);
            if let Some(w) = with.as_deref() {
                let by = t.follow(at, w, (MAX_DEPTH - 1, frame), on_way, left);
                step.defs.extend(by.defs);
                step.complete &= by.complete;
            }
            step.via = match with.as_deref() {
                Some(Origin::Copy(j)) => format!(
                    "a value computed from the earlier value of {} and {}",
                    name(*k),
                    name(*j)
                ),
                Some(Origin::Field(f)) => format!(
                    "a value computed from the earlier value of {} and {}",
                    name(*k),
                    field_name(f)
                ),
                Some(Origin::Call(f)) => format!(
                    "a value computed from the earlier value of {} and the result of `{f}`",
                    name(*k)
                ),
                _ => format!("a value computed from the earlier value of {}", name(*k)),
            };
            return step;
        }
        if let Origin::Either(incoming) = o {
            // Each incoming value's definitions; one computed there is a
            // definition not followed.
            let mut step = Step {
                via: "one of the values a condition chose between".into(),
                defs: Vec::new(),
                complete: true,
            };
            for i in incoming {
                match i {
                    Some(i) => {
                        let s = self.follow(at, i, (depth, frame), on_way, left);
                        step.defs.extend(s.defs);
                        step.complete &= s.complete;
                    }
                    None => {
                        step.defs.push(MadeBy {
                            at: COMPUTED.into(),
                            ..MadeBy::default()
                        });
                        step.complete = false;
                    }
                }
            }
            return step;
        }
        if let Origin::Element(k) = o {
            let name = self
                .map
                .vars
                .get(*k as usize)
                .map_or("?", |v| v.name.as_str());
            return Step::ended(format!(
                "the address of an array's element at index `{name}` (plus a constant)"
            ));
        }
        let mut defs: Vec<Def<'_>> = Vec::new();
        // The definitions are the calls the stack names as entering this
        // activation: they are in the next one.
        let mut via_stack = false;
        // For a field: the branches that may have kept its stores from
        // running, leaving what the unseen write wrote.
        let mut unseen_after = Vec::new();
        // The stores to one element of an array in a loop, by node.
        let mut indexed: Vec<NodeId> = Vec::new();
        let via = match o {
            // Handled above.
            Origin::Update(..) | Origin::Either(..) | Origin::Element(..) => {
                return Step::ended(String::new())
            }
            Origin::Call(f) => {
                let Some(returns) = self.map.returns.get(f) else {
                    return Step::ended(format!("the result of `{f}` {OUTSIDE}"));
                };
                for r in returns {
                    defs.extend(self.def_at("return", r.node, r.written, r.from.as_ref()));
                }
                format!("the result of `{f}`")
            }
            Origin::Arg(i) => {
                let f = self.g.func_of(at);
                let name = &*self.g.function(f).name;
                let direct = self.map.calls.get(name).map_or(&[][..], |c| c.as_slice());
                // Every call that may enter `f` must be one of `calls`:
                // not the program's start (its arguments come from the
                // system), no call site the map does not list (an
                // indirect call, a call outside the module's code).
                // The suspect's own activation's parameter (the first
                // step): the stack names the call that made it, which may
                // be a call through a pointer.
                let stack = frame
                    .and_then(|k| self.entered_by.get(k))
                    .filter(|(func, _)| *func == f)
                    .map(|(_, sites)| *sites);
                via_stack = stack.is_some();
                let calls: Vec<&crate::vars::CallArgs> = match stack {
                    Some(sites) => direct
                        .iter()
                        .chain(&self.map.indirect)
                        .filter(|c| sites.contains(&NodeId::new(c.site as usize)))
                        .collect(),
                    None => direct.iter().collect(),
                };
                let listed: std::collections::HashSet<usize> =
                    calls.iter().map(|c| c.site as usize).collect();
                if let Some(sites) = stack {
                    if sites.iter().any(|s| !listed.contains(&s.index())) {
                        defs.push((UNLISTED_CALL.into(), None, None, false));
                    }
                }
                let unlisted = self.g.nodes().any(|s| {
                    self.g.kind(s) == postmortem_core::NodeKind::CallSite
                        && !listed.contains(&s.index())
                        && self.g.callees(s).any(|c| c == f)
                        && self.not_no(s)
                });
                // What the listed calls do not cover is a definition too,
                // one that is not followed.
                if stack.is_some() {
                } else if self.g.async_functions().contains(&f) {
                    defs.push((ASYNC_CALL.into(), None, None, false));
                } else if self.g.function(f).entry == Some(self.g.start()) {
                    defs.push((PROGRAM_ARGS.into(), None, None, false));
                } else if unlisted {
                    defs.push((UNLISTED_CALL.into(), None, None, false));
                }
                for c in calls {
                    let n = NodeId::new(c.site as usize);
                    let Some((w, from)) = c.args.get(*i as usize) else {
                        continue;
                    };
                    // An argument loaded on a line of its own is named
                    // there, with its call.
                    let call = crate::vars::where_is(self.g, n);
                    let arg = c
                        .arg_nodes
                        .get(*i as usize)
                        .copied()
                        .flatten()
                        .map(|a| crate::vars::where_is(self.g, NodeId::new(a as usize)))
                        .filter(|a| *a != call && !a.starts_with("node "));
                    if self.can_leave(*w) && self.not_no(n) {
                        defs.push((
                            match arg {
                                Some(a) => format!("the argument at {a} of the call at {call}"),
                                None => format!("the call at {call}"),
                            },
                            Some(n),
                            from.as_ref(),
                            self.exact(*w),
                        ));
                    }
                }
                format!("what the calls of `{name}` passed (argument {})", i + 1)
            }
            Origin::Field(k) => {
                for w in self.map.fields.get(k).into_iter().flatten() {
                    if let Some(d) = self.def_at("store", w.node, w.written, w.from.as_ref()) {
                        if w.indexed {
                            indexed.extend(d.1);
                        }
                        defs.push(d);
                    }
                }
                // A store of this very value to the array explains it
                // better than an element the loop did not reach.
                if defs.iter().any(|d| d.3) {
                    indexed.clear();
                }
                // Never all of them: no definition is the only one, and
                // none is ruled out for want of others.
                defs.push((UNSEEN.into(), None, None, false));
                if self.value == 0 && !self.any_value {
                    unseen_after = self.skipped_field_stores(k);
                }
                format!("a load of {}", field_name(k))
            }
            Origin::OutLocal(i) => {
                let Some(ol) = self.map.out_locals.get(*i as usize) else {
                    return Step::ended("a load of a local not in the map");
                };
                // Back from the load to its own stores; a call that took
                // its address on the way may have written it, or not.
                let stores: Vec<NodeId> = ol
                    .stores
                    .iter()
                    .map(|s| NodeId::new(s.0 as usize))
                    .collect();
                let reached = postmortem_core::cause::reaching_writes(
                    self.g,
                    self.labels,
                    at,
                    &stores,
                    &|_, _| false,
                );
                let mut called = false;
                for (x, through) in &ol.passed {
                    let n = NodeId::new(*x as usize);
                    if reached.passed.binary_search(&n).is_ok() && self.not_no(n) {
                        called = true;
                        defs.push((
                            format!("the call at {}", crate::vars::where_is(self.g, n)),
                            Some(n),
                            Some(through),
                            false,
                        ));
                    }
                }
                for n in reached.writes {
                    if let Some((x, w, from)) = ol.stores.iter().find(|s| s.0 as usize == n.index())
                    {
                        defs.extend(self.def_at("store", *x, *w, from.as_ref()));
                    }
                }
                if reached.entry {
                    // With a call on the way that took the address, that
                    // the call wrote nothing is what its own step names.
                    let at = if called {
                        UNSET
                    } else {
                        "no store in its activation (uninitialised)"
                    };
                    defs.push((at.into(), None, None, false));
                }
                // Never the only one: a callee may keep the address and
                // write through it later.
                defs.push((UNSEEN.into(), None, None, false));
                format!("a load of `{}`, whose address was passed to calls", ol.name)
            }
            Origin::Through(callee, i) => {
                let writes: Vec<&crate::vars::ParamWrite> = self
                    .map
                    .param_writes
                    .get(callee)
                    .into_iter()
                    .flatten()
                    .filter(|w| w.param == *i)
                    .collect();
                for w in &writes {
                    match &w.passed_on {
                        // A call that passed the pointer on: what its
                        // callee stored through it.
                        Some(on) => {
                            let n = NodeId::new(w.node as usize);
                            if self.not_no(n) {
                                defs.push((
                                    format!("the call at {}", crate::vars::where_is(self.g, n)),
                                    Some(n),
                                    Some(on),
                                    false,
                                ));
                            }
                        }
                        None => {
                            defs.extend(self.def_at("store", w.node, w.written, w.from.as_ref()))
                        }
                    }
                }
                // It may have stored nothing there: the caller's earlier
                // value stays, and what kept its stores from running is
                // a suspect.
                let nodes: Vec<NodeId> = writes
                    .iter()
                    .map(|w| NodeId::new(w.node as usize))
                    .collect();
                unseen_after = self.skipped_stores(&nodes).into_iter().collect();
                defs.push((NOT_WRITTEN.into(), None, None, false));
                format!(
                    "what `{callee}` stored through its parameter {} (the address of the caller's variable)",
                    i + 1
                )
            }
            Origin::Copy(k) => {
                let Some(v) = self.map.vars.get(*k as usize) else {
                    return Step::ended("a copy of a variable not in the map");
                };
                let origin = |n: NodeId| {
                    v.from
                        .iter()
                        .find(|(x, _)| *x as usize == n.index())
                        .map(|(_, o)| o)
                };
                let store_at = |n: NodeId| crate::vars::write_at(self.g, v, n);
                match &v.scope {
                    VarScope::Local { .. } => {
                        let writes: Vec<NodeId> =
                            v.writes.iter().map(|w| NodeId::new(w.0 as usize)).collect();
                        let cut = |b: NodeId, s: NodeId| {
                            !self.any_value && v.value_cuts(self.value, b, s)
                        };
                        let mut reached = postmortem_core::cause::reaching_writes(
                            self.g,
                            self.labels,
                            at,
                            &writes,
                            &cut,
                        );
                        // A parameter stored in `at` itself: the prologue
                        // stores it (in the entry block, which nothing
                        // enters again) before the node reads it.
                        if v.parameter_stores().any(|n| n == at) {
                            reached.writes = vec![at];
                            reached.entry = false;
                        }
                        for n in reached.writes {
                            let w = v.writes.iter().find(|w| w.0 as usize == n.index());
                            if let Some(&(_, w)) = w.filter(|w| self.can_leave(w.1)) {
                                if self.not_no(n) {
                                    defs.push((store_at(n), Some(n), origin(n), self.exact(w)));
                                }
                            }
                        }
                        if reached.entry {
                            defs.push((
                                "no store in its activation (uninitialised)".into(),
                                None,
                                None,
                                false,
                            ));
                        }
                    }
                    VarScope::Global { init, .. } => {
                        for &(x, w) in &v.writes {
                            let n = NodeId::new(x as usize);
                            if self.can_leave(w) && self.not_no(n) {
                                defs.push((store_at(n), Some(n), origin(n), self.exact(w)));
                            }
                        }
                        if init.is_none_or(|i| self.can_leave(Written::Const(i))) {
                            let exact = init.is_some() && !self.any_value;
                            defs.push(("its initial value".into(), None, None, exact));
                        }
                    }
                }
                format!("a copy of `{}`", v.name)
            }
        };
        // The definitions of a copy of a local are in the same activation.
        let copy_of_local = match o {
            Origin::Copy(k) => self
                .map
                .vars
                .get(*k as usize)
                .is_some_and(|v| matches!(v.scope, VarScope::Local { .. })),
            _ => false,
        };
        let next_frame = match (copy_of_local, via_stack) {
            (true, _) => frame,
            (false, true) => frame.map(|k| k + 1),
            (false, false) => None,
        };
        let mut out = Vec::new();
        let mut complete = true;
        for (at, node, next, exact) in defs {
            // Every definition is listed (the others' `on` counts them);
            // only [`MAX_DEFS`] of them in all are followed.
            let mut m = MadeBy {
                at,
                node,
                exact,
                ..MadeBy::default()
            };
            if let Some(n) = node {
                m.chosen_by = self.chosen_by(n);
            }
            if m.at == UNSEEN || m.at == NOT_WRITTEN {
                m.skipped = std::mem::take(&mut unseen_after);
            }
            if let Some(n) = node.filter(|n| indexed.contains(n)) {
                m.bound = postmortem_core::cause::loop_exit(self.g, self.labels, n)
                    .map(|b| self.skipped(m.at.clone(), b));
            }
            if let (Some(n), Some(o)) = (node, next) {
                // A cycle: this definition, along this origin, is already
                // on the way (one node may hold a parameter's store and a
                // copy of it: two steps).
                if *left == 0 || depth >= MAX_DEPTH || on_way.contains(&(n, o as *const Origin)) {
                    complete = false;
                } else {
                    *left -= 1;
                    on_way.push((n, o as *const Origin));
                    let step = self.follow(n, o, (depth + 1, next_frame), on_way, left);
                    on_way.pop();
                    complete &= step.complete;
                    if step.complete && step.defs.is_empty() {
                        // Nothing can have made the value there: this
                        // definition did not make it.
                        continue;
                    }
                    m.via = Some(step.via);
                    m.from = step.defs;
                    if let Origin::Element(k) = o {
                        m.index_bounds = self.index_bounds(n, *k, &m.at);
                    }
                }
            }
            out.push(m);
        }
        Step {
            via,
            defs: out,
            complete,
        }
    }
}

/// A definition as a step lists it: where (``the store at kv.c:30``),
/// its node, its own origin, and whether it can only have made the value.
type Def<'o> = (String, Option<NodeId>, Option<&'o Origin>, bool);

impl Tracer<'_> {
    /// The `kind` (`store`, `return`) at `node`, which wrote `w` from
    /// `from`, as a definition: when it can leave the value and is not No.
    fn def_at<'o>(
        &self,
        kind: &str,
        node: u32,
        w: Written,
        from: Option<&'o Origin>,
    ) -> Option<Def<'o>> {
        let n = NodeId::new(node as usize);
        (self.can_leave(w) && self.not_no(n)).then(|| {
            (
                format!("the {kind} at {}", crate::vars::where_is(self.g, n)),
                Some(n),
                from,
                self.exact(w),
            )
        })
    }

    /// Branch `b`, named for `store` (what it kept from running, or the
    /// definition it let through), and whether it ran.
    fn skipped(&self, store: String, b: NodeId) -> crate::image::fault::Skipped {
        crate::image::fault::Skipped {
            store,
            branch: format!("the branch at {}", crate::vars::where_is(self.g, b)),
            ran: match self.labels.get(b.index()) {
                Some(Label::Yes) => "yes",
                _ => "maybe",
            }
            .into(),
            branch_node: Some(b),
        }
    }

    /// The branch that may have kept `stores` (of one function) from
    /// running, when some of them are not Yes and their function may have
    /// run ([`postmortem_core::cause::skipped_all`]).
    fn skipped_stores(&self, stores: &[NodeId]) -> Option<crate::image::fault::Skipped> {
        let f = self.g.func_of(*stores.first()?);
        let entry = self.g.function(f).entry?;
        if !self.not_no(entry)
            || stores
                .iter()
                .all(|n| self.labels.get(n.index()) == Some(&Label::Yes))
        {
            return None;
        }
        let b = postmortem_core::cause::skipped_all(self.g, self.labels, stores)?;
        let places: Vec<String> = stores
            .iter()
            .map(|&n| crate::vars::where_is(self.g, n))
            .collect();
        let store = match places.as_slice() {
            [one] => format!("the store at {one}"),
            more => format!("the stores at {}", more.join(", ")),
        };
        Some(self.skipped(store, b))
    }

    /// For a definition at `n` of an element's address at variable `k`'s
    /// index ([`Origin::Element`]), when the value is no small offset from
    /// NULL: the branches of its function, not No, that compared `k` with
    /// a bound ([`crate::vars::VarMap::bounds`]), at most [`MAX_SKIPPED`]:
    /// the check that let a wild index through.
    fn index_bounds(&self, n: NodeId, k: u32, at: &str) -> Vec<crate::image::fault::Skipped> {
        if !self.any_value && self.value < 4096 {
            return Vec::new();
        }
        let f = self.g.func_of(n);
        let mut out: Vec<crate::image::fault::Skipped> = Vec::new();
        for b in &self.map.bounds {
            let branch = NodeId::new(b.branch as usize);
            if b.var != k
                || self.g.func_of(branch) != f
                || !self.not_no(branch)
                || out.iter().any(|s| s.branch_node == Some(branch))
            {
                continue;
            }
            out.push(self.skipped(at.to_string(), branch));
            if out.len() == MAX_SKIPPED {
                break;
            }
        }
        out
    }

    /// For a field (key `k`) whose value is 0 and whose stores may not
    /// have run: per function that may have run with such stores (not
    /// Yes, not to one element of an array, not of this very constant:
    /// stores that would have set it), the branch that may have kept them
    /// all from running ([`postmortem_core::cause::skipped_all`]), at
    /// most [`MAX_SKIPPED`] of them (the functions that surely ran
    /// first). A store that did not run leaves the field as a write the
    /// front-end does not see left it (a zeroing allocation, a `memset`):
    /// the classic skipped initialisation.
    fn skipped_field_stores(&self, k: &str) -> Vec<crate::image::fault::Skipped> {
        let mut by_func: std::collections::BTreeMap<postmortem_core::FuncId, Vec<NodeId>> =
            Default::default();
        for w in self.map.fields.get(k).into_iter().flatten() {
            let n = NodeId::new(w.node as usize);
            let this_constant = exact(w.written) && w.written.can_leave(self.value, self.bytes);
            if !w.indexed && !this_constant && self.labels.get(n.index()) != Some(&Label::Yes) {
                by_func.entry(self.g.func_of(n)).or_default().push(n);
            }
        }
        let entry_label = |f: postmortem_core::FuncId| {
            self.g
                .function(f)
                .entry
                .and_then(|e| self.labels.get(e.index()).copied())
        };
        let mut found: Vec<(bool, crate::image::fault::Skipped)> = by_func
            .into_iter()
            .filter_map(|(f, stores)| {
                Some((
                    entry_label(f) == Some(Label::Yes),
                    self.skipped_stores(&stores)?,
                ))
            })
            .collect();
        found.sort_by_key(|(surely, _)| !surely);
        found
            .into_iter()
            .take(MAX_SKIPPED)
            .map(|(_, k)| k)
            .collect()
    }

    /// When `n`'s function is entered only through pointers (no direct
    /// call of it that is not No, not the program's start), the stores of
    /// its address into fields, not No, as definitions of what chose it
    /// ([`MadeBy::chosen_by`]).
    fn chosen_by(&self, n: NodeId) -> Vec<MadeBy> {
        let f = self.g.func_of(n);
        let func = self.g.function(f);
        let name = &*func.name;
        let direct = self.map.calls.get(name).is_some_and(|calls| {
            calls
                .iter()
                .any(|c| self.not_no(NodeId::new(c.site as usize)))
        });
        if direct || func.entry == Some(self.g.start()) {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (k, writes) in &self.map.fields {
            for w in writes {
                let s = NodeId::new(w.node as usize);
                if w.function.as_deref() != Some(name) || !self.not_no(s) {
                    continue;
                }
                out.push(MadeBy {
                    at: format!("the store at {}", crate::vars::where_is(self.g, s)),
                    on: "some".into(),
                    node: Some(s),
                    via: Some(format!("the address of `{name}` in {}", field_name(k))),
                    ..MadeBy::default()
                });
            }
        }
        out
    }
}

/// A parameter's value from a call the front-end does not list.
pub const UNLISTED_CALL: &str = "a call the front-end does not list (an indirect call)";
/// A parameter's value from an asynchronous function's caller.
pub const ASYNC_CALL: &str = "an asynchronous call (a signal handler's or a thread's start)";
/// A parameter's value from the start function's caller.
pub const PROGRAM_ARGS: &str = "the program's arguments (from the system)";

/// Whether `at` names a definition the walk lists but cannot follow
/// ([`UNSEEN`], [`UNLISTED_CALL`], [`ASYNC_CALL`], [`PROGRAM_ARGS`]): no
/// statement of the program.
pub fn not_followed(at: &str) -> bool {
    [
        UNSEEN,
        UNLISTED_CALL,
        ASYNC_CALL,
        PROGRAM_ARGS,
        COMPUTED,
        NOT_WRITTEN,
        UNSET,
    ]
    .contains(&at)
}

/// The definition that stands for a value a condition chose that was
/// computed there (one of [`Origin::Either`]'s, not followed; not a
/// suspect: `chain.rs` leaves it out).
pub const COMPUTED: &str = "a value computed where a condition chose it";

/// The definition that stands for a callee that stored nothing through
/// the parameter its caller passed a local's address to (an early
/// return: the caller's earlier value stays; not a suspect, its
/// [`MadeBy::skipped`] branches are).
pub const NOT_WRITTEN: &str =
    "no store through the parameter (the caller's variable kept its earlier value)";

/// The definition that stands for an out-parameter local's slot that
/// nothing wrote although calls that took its address ran on the way
/// (not a suspect: what kept those calls from writing is).
pub const UNSET: &str =
    "no store in its activation, and no call that took its address wrote it (uninitialised)";

/// How a step that ends at a call of a function outside the program (the
/// C library's `malloc`, `getenv`) ends its `via`.
pub const OUTSIDE: &str = "(not followed: not defined in the program)";

/// The definition that stands for a field's writes the front-end does
/// not see (not a suspect: `chain.rs` leaves it out).
pub const UNSEEN: &str =
    "a write the front-end does not see (memset, memcpy, a zeroing allocation, a store through another type)";

/// A field key as a reader knows it: ``field 17 of `EState` ``
/// (``struct.EState.17``; nested fields ``field 2.1``).
pub fn field_name(key: &str) -> String {
    let key = key.strip_prefix("struct.").unwrap_or(key);
    match key.split_once('.') {
        Some((ty, path)) => format!("field {path} of `{ty}`"),
        None => format!("`{key}`"),
    }
}

/// Whether a definition that can leave the value can leave only it: a
/// constant.
fn exact(w: Written) -> bool {
    matches!(w, Written::Const(_))
}

/// One step back: how the value came (``the result of `find` ``), the
/// definitions that can have made it, and whether they are all of them
/// (no limit cut the walk short below).
struct Step {
    via: String,
    defs: Vec<MadeBy>,
    complete: bool,
}

impl Step {
    /// A step that lists no definition and may have missed some (the
    /// walk ends there): not evidence that nothing made the value.
    fn ended(via: impl Into<String>) -> Step {
        Step {
            via: via.into(),
            defs: Vec::new(),
            complete: false,
        }
    }
}

/// Sets `on` down the tree: a definition made the value on every
/// execution the report allows when the one it reached did (`every`) and
/// it is the only one left there.
fn mark(defs: &mut [MadeBy], every: bool) {
    let only = every && defs.len() == 1;
    for d in defs {
        d.on = if only { "every" } else { "some" }.into();
        mark(&mut d.from, only);
    }
}
