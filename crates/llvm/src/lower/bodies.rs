//! Pass 3: function bodies, block by block: ordinary instructions grouped
//! into one statement node per source line per block, one node per call
//! site with its call edges, and the flow edges between blocks. It
//! records the node range of every block (for `sancov.rs`), the node of
//! every store (for `values.rs`), and, in [`CallFacts`], the calls whose
//! effects no call edge shows (pass 4 adds them).

use super::ends::Ends;
use super::index::{CallClass, ModuleIndex};
use super::strings::Strings;
use super::targets::{Args, Targets};
use super::{add_node, locate, FnId, Located, Pos};
use crate::libc;
use crate::operands::{opcode, term_opcode};
use crate::{FrontendReport, LlvmError};
use llvm_ir::function::FunctionAttribute;
use llvm_ir::instruction::Call;
use llvm_ir::{BasicBlock, DebugLoc, Function, Instruction, Name, Operand, Terminator};
use postmortem_core::{FuncId, IcfgBuilder, NodeId, NodeKind};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// What pass 3 found about calls that pass 4 turns into control flow.
#[derive(Default)]
pub(super) struct CallFacts {
    /// Call sites of `setjmp`-like functions.
    pub(super) setjmp_sites: Vec<NodeId>,
    /// Call sites of `longjmp`-like functions.
    pub(super) longjmp_sites: Vec<NodeId>,
    /// Call sites that may run unknown external code (they call the
    /// `external code` function, see `hidden.rs`).
    pub(super) unknown_code_sites: Vec<NodeId>,
    /// Whether the program registers exit handlers (`atexit`, ...).
    pub(super) exit_handlers: bool,
    /// Functions registered to run asynchronously (signal handlers,
    /// thread start routines), with the call site that registers them.
    pub(super) async_roots: HashSet<(FnId, NodeId)>,
}

/// The output of pass 3.
pub(super) struct Lowered {
    /// The graph so far, for pass 4.
    pub(super) builder: IcfgBuilder,
    pub(super) facts: CallFacts,
    /// The nodes each block produced (for `sancov.rs`).
    pub(super) block_nodes: crate::sancov::BlockNodes,
    /// The node of every `store` instruction (for `values.rs`).
    pub(super) store_nodes: HashMap<*const Instruction, NodeId>,
    /// The call site node of every `call` that is one (for `flows.rs`).
    pub(super) call_nodes: HashMap<*const Instruction, NodeId>,
    /// The node of every `load` (for `flows.rs`).
    pub(super) load_nodes: HashMap<*const Instruction, NodeId>,
}

/// A run of ordinary instructions of one block on one source line.
struct Group {
    line: u32,
    col: u32,
    label: String,
    ops: usize,
    last_op: &'static str,
    /// Weak lines of its instructions (see [`speculable`]).
    weak: Vec<u32>,
    /// The columns of its located instructions (unoptimised functions
    /// only: see `Icfg::instruction_columns`).
    cols: Vec<u32>,
}

/// Per-block lowering state: the block's first node and the node control
/// falls through from (None after a `noreturn` call).
struct BlockState {
    first: Option<NodeId>,
    prev: Option<NodeId>,
}

/// The lowering state of one block (see [`Bodies::lower_block`]).
struct BlockLowering<'m> {
    st: BlockState,
    /// The statement being gathered.
    group: Option<Group>,
    /// Values of SanitizerCoverage instrumentation in this block.
    instrumentation: HashSet<&'m Name>,
    /// Whether an instruction of this block has a location.
    located: bool,
    /// Weak lines (see `IcfgBuilder::add_weak_line`) of the
    /// instrumentation at the block's head.
    head_weak: Vec<u32>,
    /// Whether this is the function's entry block.
    entry: bool,
    /// The index of the instruction being lowered.
    ii: usize,
}

/// How a block ends: its last node, the blocks that may run next, and
/// whether any block of the function may (`callbr`).
struct BlockEnd<'m> {
    last: NodeId,
    succs: Vec<&'m Name>,
    to_every_block: bool,
}

/// The parts of a call or invoke the call-site maker needs.
struct CallParts<'m> {
    callee: Option<&'m Operand>,
    args: &'m Args,
    attrs: &'m [FunctionAttribute],
    kw: &'static str,
    /// LLVM's `tail` or `musttail` marker: the call may be compiled as a
    /// jump (a sibling call).
    tail: bool,
}

fn c_parts(c: &Call) -> CallParts<'_> {
    CallParts {
        callee: c.function.as_ref().right(),
        args: &c.arguments,
        attrs: &c.function_attributes,
        kw: "call",
        tail: c.is_tail_call,
    }
}

/// Node ids of one function: `FUNC:LINE:COL`, then `#2`, `#3`, ... for
/// further nodes at the same position.
struct BodyCtx<'a, 'm> {
    f: &'m Function,
    func: FuncId,
    /// The function's exit node (where an exception leaves it).
    exit: NodeId,
    ids: &'a mut HashMap<(u32, u32), u32>,
    /// The inline chains of the function's instructions, and the index of
    /// the block being lowered.
    chains: Option<&'a crate::dbgvars::Chains>,
    bi: usize,
    /// The function may have been optimised (see [`optimised`]).
    optimised: bool,
    /// The function's instructions by result name (where a call's
    /// argument comes from: its stream, its choices of format string).
    defs: HashMap<&'m Name, &'m Instruction>,
    /// Lines (of the function's file) of its own instructions, and of
    /// instructions inlined into it (see `IcfgBuilder::add_inlined_line`).
    own_lines: HashSet<u32>,
    inlined_lines: HashSet<u32>,
}

impl BodyCtx<'_, '_> {
    /// Notes the lines of instruction `ii` of the current block (the
    /// terminator's index is the instruction count): with an inline
    /// chain, its own line and every call site of the chain but the
    /// outermost (in the function itself) are inlined code; else its line
    /// is the function's own.
    fn line_of(&mut self, ii: usize, loc: Option<&DebugLoc>) {
        let line = match locate(self.f, loc) {
            Located::At(line, _) => Some(line),
            _ => None,
        };
        let chain = self.chains.and_then(|c| c.get(&(self.bi, ii)));
        let Some((outer, inner)) = chain.and_then(|c| c.split_last()) else {
            self.own_lines.extend(line);
            return;
        };
        let own_file = |file: &str| self.f.debugloc.as_ref().is_some_and(|d| d.filename == file);
        for (file, l) in inner {
            if own_file(file) {
                self.inlined_lines.insert(*l);
            }
        }
        if own_file(&outer.0) {
            self.own_lines.insert(outer.1);
        }
        self.inlined_lines.extend(line);
    }

    fn next_id(&mut self, b: &IcfgBuilder, line: u32, col: u32) -> String {
        let k = self.ids.entry((line, col)).or_insert(0);
        loop {
            *k += 1;
            let id = if *k == 1 {
                format!("{}:{line}:{col}", self.f.name)
            } else {
                format!("{}:{line}:{col}#{k}", self.f.name)
            };
            // Another function's name could in theory spell this id.
            if b.lookup(&id).is_none() {
                return id;
            }
        }
    }
}

/// Pass 3 at work: the earlier passes' outputs, the graph being built,
/// the resolvers, and what it records.
pub(super) struct Bodies<'a, 'm> {
    ix: &'a ModuleIndex<'m>,
    ends: &'a Ends,
    b: IcfgBuilder,
    path: &'a str,
    report: &'a mut FrontendReport,
    targets: Targets<'a, 'm>,
    strings: Strings<'a, 'm>,
    facts: CallFacts,
    block_nodes: crate::sancov::BlockNodes,
    store_nodes: HashMap<*const Instruction, NodeId>,
    call_nodes: HashMap<*const Instruction, NodeId>,
    load_nodes: HashMap<*const Instruction, NodeId>,
    /// The inline chains of the module's instructions.
    inlined: &'a crate::dbgvars::InlinedAt,
}

impl<'a, 'm> Bodies<'a, 'm> {
    /// Lowers every function body of the module into `b`.
    pub(super) fn lower(
        ix: &'a ModuleIndex<'m>,
        ends: &'a Ends,
        b: IcfgBuilder,
        path: &'a str,
        report: &'a mut FrontendReport,
        inlined: &'a crate::dbgvars::InlinedAt,
    ) -> Result<Lowered, LlvmError> {
        let mut pass = Bodies {
            inlined,
            ix,
            ends,
            b,
            path,
            report,
            targets: Targets::new(ix),
            strings: Strings::new(&ix.globals),
            facts: CallFacts::default(),
            block_nodes: Default::default(),
            store_nodes: HashMap::new(),
            call_nodes: HashMap::new(),
            load_nodes: HashMap::new(),
        };
        for f in &ix.m.functions {
            pass.lower_function(f)?;
        }
        pass.inlined_copies();
        Ok(Lowered {
            builder: pass.b,
            facts: pass.facts,
            block_nodes: pass.block_nodes,
            store_nodes: pass.store_nodes,
            call_nodes: pass.call_nodes,
            load_nodes: pass.load_nodes,
        })
    }

    fn node(
        &mut self,
        id: &str,
        kind: NodeKind,
        func: FuncId,
        label: &str,
        lines: &[u32],
    ) -> Result<NodeId, LlvmError> {
        add_node(&mut self.b, self.path, id, kind, func, label, lines)
    }

    fn lower_function(&mut self, f: &'m Function) -> Result<(), LlvmError> {
        let func = self.b.function(&f.name);
        let (entry, exit) = self
            .ix
            .by_name(&f.name)
            .and_then(|i| self.ends.of(i))
            .expect("made in pass 2");
        let mut block_first: Vec<Option<NodeId>> = vec![None; f.basic_blocks.len()];
        let mut pending: Vec<(NodeId, &Name)> = Vec::new();
        let mut all_blocks_from: Vec<NodeId> = Vec::new();
        let mut ids: HashMap<(u32, u32), u32> = HashMap::new();
        let mut lower = BodyCtx {
            f,
            func,
            exit,
            ids: &mut ids,
            chains: self.inlined.get(&f.name),
            bi: 0,
            optimised: optimised(f),
            defs: f
                .basic_blocks
                .iter()
                .flat_map(|bb| &bb.instrs)
                .filter_map(|i| Some((i.try_get_result()?, i)))
                .collect(),
            own_lines: HashSet::new(),
            inlined_lines: HashSet::new(),
        };

        let mut ranges = Vec::with_capacity(f.basic_blocks.len());
        for (bi, bb) in f.basic_blocks.iter().enumerate() {
            let block_start = self.b.num_nodes() as u32;
            lower.bi = bi;
            let (first, end) = self.lower_block(&mut lower, bb)?;
            for s in end.succs {
                pending.push((end.last, s));
            }
            if end.to_every_block {
                all_blocks_from.push(end.last);
            }
            block_first[bi] = first;
            ranges.push(block_start..self.b.num_nodes() as u32);
        }
        self.block_nodes.insert(f.name.clone(), ranges);
        let mut inlined: Vec<u32> = lower
            .inlined_lines
            .difference(&lower.own_lines)
            .copied()
            .collect();
        inlined.sort_unstable();
        for l in inlined {
            self.b.add_inlined_line(func, l);
        }
        self.connect_blocks(f, entry, &block_first, pending, all_blocks_from);
        Ok(())
    }

    /// Lowers block `bb`: its instructions (grouped into statements and
    /// call sites), then its terminator. Returns the block's first node
    /// and how it ends.
    fn lower_block(
        &mut self,
        cx: &mut BodyCtx<'_, 'm>,
        bb: &'m BasicBlock,
    ) -> Result<(Option<NodeId>, BlockEnd<'m>), LlvmError> {
        let mut blk = BlockLowering {
            st: BlockState {
                first: None,
                prev: None,
            },
            group: None,
            instrumentation: HashSet::new(),
            located: false,
            head_weak: Vec::new(),
            entry: cx
                .f
                .basic_blocks
                .first()
                .is_some_and(|b| std::ptr::eq(b, bb)),
            ii: 0,
        };
        for inst in &bb.instrs {
            self.lower_instruction(cx, &mut blk, inst)?;
            blk.ii += 1;
        }
        // The terminator's inline chain: weak lines of the block's head.
        let chain = self.chain_lines(cx, blk.ii);
        blk.head_weak.extend(chain);
        let (end, term_weak) = self.lower_terminator(cx, &mut blk, &bb.term)?;
        if let Some(l) = term_weak {
            self.b.add_weak_line(end.last, l);
        }
        if let Some(first) = blk.st.first {
            for l in blk.head_weak {
                self.b.add_weak_line(first, l);
            }
        }
        Ok((blk.st.first, end))
    }

    /// Adds one instruction of a block: to the current statement, or as a
    /// call site.
    fn lower_instruction(
        &mut self,
        cx: &mut BodyCtx<'_, 'm>,
        blk: &mut BlockLowering<'m>,
        inst: &'m Instruction,
    ) -> Result<(), LlvmError> {
        let f = cx.f;
        let class = match inst {
            Instruction::Call(c) => self.ix.classify(c.function.as_ref().right()),
            _ => CallClass::Plain,
        };
        if !matches!(class, CallClass::Skip) {
            cx.line_of(blk.ii, inst_loc(inst));
        }
        let pos = match class {
            CallClass::Skip => None,
            // Instrumentation carries a borrowed location (see
            // `is_instrumentation`): a weak line only. Except the entry
            // block's flag check: SanitizerCoverage gives it the
            // function's scope line (the opening `{`) at column 0, its
            // own location, not a borrowed one: it runs when the function
            // is entered.
            _ if is_instrumentation(inst, &mut blk.instrumentation) => {
                match self.position(f, inst_loc(inst), false) {
                    Some((line, 0)) if blk.entry => Some((line, 0)),
                    Some((line, _)) => {
                        blk.head_weak.push(line);
                        None
                    }
                    None => None,
                }
            }
            _ => self.position(f, inst_loc(inst), true),
        };
        // In optimised code, an instruction that may have been hoisted or
        // speculated gives its line only weakly (see `speculable`).
        let plain = matches!(class, CallClass::Plain);
        let (pos, weak) = if cx.optimised && plain && speculable(inst) {
            (None, pos.map(|(l, _)| l))
        } else {
            (pos, None)
        };
        let mut weak: Vec<u32> = weak.into_iter().collect();
        weak.extend(self.chain_lines(cx, blk.ii));
        blk.located |= pos.is_some();
        match class {
            CallClass::Skip => {}
            CallClass::Plain => {
                if let Instruction::Call(c) = inst {
                    if c.function.is_left() {
                        self.report.inline_asm += 1;
                    }
                }
                self.add_to_group(cx, &mut blk.st, &mut blk.group, pos, opcode(inst))?;
                if let Some(g) = blk.group.as_mut() {
                    g.weak.extend(&weak);
                }
                // The group's node is made when it is flushed, before any
                // other node: it gets the next id.
                let next = NodeId::new(self.b.num_nodes());
                match inst {
                    Instruction::Store(_) => {
                        self.store_nodes.insert(inst as *const Instruction, next);
                    }
                    Instruction::Load(_)
                    | Instruction::UDiv(_)
                    | Instruction::SDiv(_)
                    | Instruction::URem(_)
                    | Instruction::SRem(_) => {
                        self.load_nodes.insert(inst as *const Instruction, next);
                    }
                    _ => {}
                }
            }
            CallClass::Direct(_) | CallClass::Indirect | CallClass::Opaque => {
                self.flush(cx, &mut blk.st, &mut blk.group)?;
                let Instruction::Call(c) = inst else {
                    unreachable!("only calls are classified as sites")
                };
                let (site, noreturn) = self.call_site(cx, class, c_parts(c), pos)?;
                self.call_nodes.insert(inst as *const Instruction, site);
                for &l in &weak {
                    if pos.is_none_or(|(line, _)| line != l) {
                        self.b.add_weak_line(site, l);
                    }
                }
                link(&mut self.b, &mut blk.st, site);
                blk.st.prev = if noreturn { None } else { Some(site) };
            }
        }
        Ok(())
    }

    /// Lowers a block's terminator. Returns how the block ends and the
    /// terminator's weak line, if its location is borrowed.
    ///
    /// An unconditional branch alone in its block (nothing else located:
    /// a `case` label that falls through, an empty loop latch, the
    /// covered part of a coverage flag's split) carries the location of
    /// whatever statement clang emitted last, often another line's
    /// `break;`; so does the branch on a coverage flag. Neither gives a
    /// line, only a weak one: the branch is an instruction of that line,
    /// and for a loop's entry branch (`for(;;)` entered, left at once) the
    /// only one that ran, so the line must not be No while it may have.
    fn lower_terminator(
        &mut self,
        cx: &mut BodyCtx<'_, 'm>,
        blk: &mut BlockLowering<'m>,
        term: &'m Terminator,
    ) -> Result<(BlockEnd<'m>, Option<u32>), LlvmError> {
        let f = cx.f;
        cx.line_of(blk.ii, term_loc(term));
        let borrowed = match term {
            // In optimised code any lone branch may be another line's
            // (blocks merged, code hoisted out of it).
            Terminator::Br(_) => !blk.located || cx.optimised,
            Terminator::CondBr(x) => matches!(
                &x.condition,
                Operand::LocalOperand { name, .. } if blk.instrumentation.contains(name)
            ),
            _ => false,
        };
        let term_weak = if borrowed {
            self.position(f, term_loc(term), false).map(|(l, _)| l)
        } else {
            None
        };
        let pos = if borrowed {
            None
        } else {
            self.position(f, term_loc(term), true)
        };
        let end = match term {
            Terminator::Invoke(x) => {
                self.flush(cx, &mut blk.st, &mut blk.group)?;
                let class = self.ix.site_class(x.function.as_ref().right());
                let parts = CallParts {
                    callee: x.function.as_ref().right(),
                    args: &x.arguments,
                    attrs: &x.function_attributes,
                    kw: "invoke",
                    tail: false,
                };
                let (site, noreturn) = self.call_site(cx, class, parts, pos)?;
                link(&mut self.b, &mut blk.st, site);
                let mut succs = vec![&x.exception_label];
                if !noreturn {
                    succs.push(&x.return_label);
                }
                BlockEnd {
                    last: site,
                    succs,
                    to_every_block: false,
                }
            }
            Terminator::CallBr(x) => {
                self.flush(cx, &mut blk.st, &mut blk.group)?;
                let class = self.ix.site_class(x.function.as_ref().right());
                self.report.callbr += 1;
                let parts = CallParts {
                    callee: x.function.as_ref().right(),
                    args: &x.arguments,
                    attrs: &x.function_attributes,
                    kw: "callbr",
                    tail: false,
                };
                let (site, _) = self.call_site(cx, class, parts, pos)?;
                link(&mut self.b, &mut blk.st, site);
                // llvm-ir does not expose the indirect destinations of
                // `callbr` (asm goto): any block of the function may be
                // one (sound over-approximation).
                BlockEnd {
                    last: site,
                    succs: vec![&x.return_label],
                    to_every_block: true,
                }
            }
            _ => {
                self.add_to_group(cx, &mut blk.st, &mut blk.group, pos, term_opcode(term))?;
                let last = self
                    .flush(cx, &mut blk.st, &mut blk.group)?
                    .expect("group just filled");
                BlockEnd {
                    last,
                    succs: self.successors(term, last, cx.exit),
                    to_every_block: false,
                }
            }
        };
        Ok((end, term_weak))
    }

    /// The successor blocks of a terminator other than `invoke` and
    /// `callbr`, whose statement is `last`; adds the flow edge to the
    /// function's `exit` where control leaves the function.
    fn successors(&mut self, term: &'m Terminator, last: NodeId, exit: NodeId) -> Vec<&'m Name> {
        let leaves = match term {
            Terminator::Ret(_) | Terminator::Resume(_) => true,
            Terminator::CleanupRet(x) => x.unwind_dest.is_none(),
            Terminator::CatchSwitch(x) => x.default_unwind_dest.is_none(),
            Terminator::Invoke(_) | Terminator::CallBr(_) => {
                unreachable!("handled by lower_terminator")
            }
            _ => false,
        };
        if leaves {
            self.b.add_flow_edge(last, exit);
        }
        crate::sancov::successors(term)
    }

    /// Adds the flow edges between the blocks of `f`: from the entry to the
    /// first block, from each block's end to its successors (`pending`;
    /// a branch to no block is counted as bad), and from each `callbr` to
    /// every block but the first.
    fn connect_blocks(
        &mut self,
        f: &'m Function,
        entry: NodeId,
        block_first: &[Option<NodeId>],
        pending: Vec<(NodeId, &'m Name)>,
        all_blocks_from: Vec<NodeId>,
    ) {
        let block_index = crate::sancov::block_index(f);
        if let Some(Some(first)) = block_first.first() {
            self.b.add_flow_edge(entry, *first);
        }
        for (from, to) in pending {
            match block_index.get(to).and_then(|&i| block_first[i]) {
                Some(t) => self.b.add_flow_edge(from, t),
                None => self.report.bad_branches += 1,
            }
        }
        for from in all_blocks_from {
            for t in block_first.iter().skip(1).flatten() {
                self.b.add_flow_edge(from, *t);
            }
        }
    }

    /// Adds an ordinary instruction to the current group, flushing the
    /// group first if the instruction is on another line.
    fn add_to_group(
        &mut self,
        cx: &mut BodyCtx<'_, 'm>,
        st: &mut BlockState,
        group: &mut Option<Group>,
        pos: Pos,
        op: &'static str,
    ) -> Result<(), LlvmError> {
        if let (Some(g), Some((line, _))) = (group.as_ref(), pos) {
            if g.line != 0 && g.line != line {
                self.flush(cx, st, group)?;
            }
        }
        let g = group.get_or_insert_with(|| Group {
            line: 0,
            col: 0,
            label: String::new(),
            ops: 0,
            last_op: "",
            weak: Vec::new(),
            cols: Vec::new(),
        });
        if let (Some((_, col)), false) = (pos, cx.optimised) {
            if col != 0 && !g.cols.contains(&col) {
                g.cols.push(col);
            }
        }
        if g.line == 0 {
            if let Some((line, col)) = pos {
                g.line = line;
                g.col = col;
            }
        }
        if g.last_op != op {
            g.ops += 1;
            if g.ops <= 4 {
                if !g.label.is_empty() {
                    g.label.push(' ');
                }
                g.label.push_str(op);
            } else if g.ops == 5 {
                g.label.push_str(" …");
            }
            g.last_op = op;
        }
        Ok(())
    }

    /// Turns the current group into a statement node.
    fn flush(
        &mut self,
        cx: &mut BodyCtx<'_, 'm>,
        st: &mut BlockState,
        group: &mut Option<Group>,
    ) -> Result<Option<NodeId>, LlvmError> {
        let Some(g) = group.take() else {
            return Ok(None);
        };
        let id = cx.next_id(&self.b, g.line, g.col);
        let lines: &[u32] = if g.line != 0 { &[g.line] } else { &[] };
        let n = self.node(&id, NodeKind::Statement, cx.func, &g.label, lines)?;
        if g.col != 0 {
            self.b.set_column(n, g.col);
        }
        for &l in &g.weak {
            if l != g.line {
                self.b.add_weak_line(n, l);
            }
        }
        for &c in &g.cols {
            self.b.add_instruction_column(n, c);
        }
        link(&mut self.b, st, n);
        st.prev = Some(n);
        Ok(Some(n))
    }

    /// A call site's label: `call f`, `call asm`, `call (indirect)`.
    fn call_label(&self, class: &CallClass, parts: &CallParts<'m>) -> String {
        match class {
            CallClass::Direct(i) => format!("{} {}", parts.kw, self.ix.info(*i).name),
            CallClass::Opaque => match parts.callee.and_then(|op| self.ix.direct(op)) {
                Some(i) => format!("{} {}", parts.kw, self.ix.info(i).name),
                None => format!("{} asm", parts.kw),
            },
            _ => format!("{} (indirect)", parts.kw),
        }
    }

    /// The call note of `site`'s arguments: its constant strings (with
    /// their choices, see `Strings::choices`) and where its first
    /// arguments come from (a printing call's stream or descriptor is
    /// among its first four: `fwrite`'s is the fourth).
    fn note_args(&mut self, cx: &BodyCtx<'_, 'm>, site: NodeId, args: &'m Args) {
        for (i, (arg, _)) in args.iter().enumerate() {
            let i = i as u32;
            for s in self.strings.choices(arg, &cx.defs).unwrap_or_default() {
                self.b
                    .add_string_arg_at(site, i, &String::from_utf8_lossy(&s));
            }
            if i < 4 {
                if let Some(src) = super::strings::arg_source(arg, &cx.defs) {
                    self.b.add_arg_source(site, i, &src);
                }
            }
        }
    }

    /// Makes the call-site node of a call or invoke, with its call edges,
    /// external callee names and string arguments. Returns the node and
    /// whether the call never returns.
    fn call_site(
        &mut self,
        cx: &mut BodyCtx<'_, 'm>,
        class: CallClass,
        parts: CallParts<'m>,
        pos: Pos,
    ) -> Result<(NodeId, bool), LlvmError> {
        let (line, col) = pos.unwrap_or((0, 0));
        let id = cx.next_id(&self.b, line, col);
        let label = self.call_label(&class, &parts);
        let lines: &[u32] = if line != 0 { &[line] } else { &[] };
        let site = self.node(&id, NodeKind::CallSite, cx.func, &label, lines)?;
        if col != 0 {
            self.b.set_column(site, col);
            if !cx.optimised {
                self.b.add_instruction_column(site, col);
            }
        }
        if parts.tail {
            self.b.mark_tail_call(site);
            self.report.tail_calls += 1;
        }
        self.note_args(cx, site, parts.args);
        let mut noreturn = parts.attrs.contains(&FunctionAttribute::NoReturn);
        let mut may_throw = !parts.attrs.contains(&FunctionAttribute::NoUnwind);
        if parts.attrs.contains(&FunctionAttribute::ReturnsTwice) {
            self.facts.setjmp_sites.push(site);
        }
        match class {
            CallClass::Direct(i) => {
                self.report.direct_calls += 1;
                noreturn |= self.ix.info(i).noreturn;
                may_throw &= !self.ix.info(i).nounwind;
                match self.ends.entry(i) {
                    Some(e) => self.b.add_call_edge(site, e),
                    None => {
                        self.report.external_calls += 1;
                        self.b.add_external_callee(site);
                        let name = self.ix.info(i).name;
                        self.b.add_external_callee_name(site, name);
                        self.callbacks(site, parts.args);
                        self.external_effects(i, site, cx.f, parts.args);
                    }
                }
            }
            CallClass::Indirect => {
                self.report.indirect_calls += 1;
                let targets = self.targets.indirect_targets(parts.callee, parts.args);
                let mut external = false;
                for &t in targets.iter() {
                    match self.ends.entry(t) {
                        Some(e) => {
                            self.b.add_call_edge(site, e);
                            self.report.indirect_edges += 1;
                        }
                        None => {
                            external = true;
                            let name = self.ix.info(t).name;
                            self.b.add_external_callee_name(site, name);
                        }
                    }
                }
                if targets.is_empty() {
                    self.report.indirect_unresolved += 1;
                    external = true;
                } else {
                    self.report.indirect_resolved += 1;
                }
                if external {
                    self.b.add_external_callee(site);
                    self.callbacks(site, parts.args);
                    let all_inert = !targets.is_empty()
                        && targets.iter().all(|&t| {
                            self.ix.info(t).def.is_some() || libc::is_inert(self.ix.info(t).name)
                        });
                    if !all_inert {
                        self.facts.unknown_code_sites.push(site);
                    }
                }
            }
            CallClass::Opaque => {
                self.report.opaque_calls += 1;
                self.b.add_external_callee(site);
            }
            CallClass::Skip | CallClass::Plain => unreachable!("not a call site"),
        }
        if noreturn {
            self.report.noreturn_calls += 1;
        }
        // C++: an exception thrown by (or through) a plain call leaves this
        // function at once, up to the nearest landing pad of a caller
        // (an `invoke` keeps its unwind edge instead).
        if self.ix.has_eh && parts.kw == "call" && may_throw {
            self.b.add_flow_edge(site, cx.exit);
            self.report.unwind_edges += 1;
        }
        Ok((site, noreturn))
    }

    /// Functions inlined into others: a statement of an inlined copy may
    /// leave no instruction there (`return p;` of an inlined callee whose
    /// value flows on as a register) while the function's own body keeps
    /// one, and running the copy does not run the body's node. So each
    /// defined function `F` whose line range (its first line to its last
    /// own line) holds the line of code inlined into another function `G`
    /// (same file) gives all its own lines as weak lines of `G`'s entry
    /// node: none is No while `G` may have run (sound, and blunt: it only
    /// keeps lines from No).
    fn inlined_copies(&mut self) {
        // (file, first line, last own line, own lines) of each defined
        // function, by file.
        type Range = (u32, u32, Vec<u32>);
        let mut ranges: HashMap<&str, Vec<Range>> = HashMap::new();
        for f in &self.ix.m.functions {
            let Some(fl) = f.debugloc.as_ref() else {
                continue;
            };
            let chains = self.inlined.get(&f.name);
            let mut own: Vec<u32> = Vec::new();
            for (bi, bb) in f.basic_blocks.iter().enumerate() {
                let locs = bb
                    .instrs
                    .iter()
                    .map(inst_loc)
                    .chain(std::iter::once(term_loc(&bb.term)));
                for (ii, loc) in locs.enumerate() {
                    let inlined = chains.is_some_and(|c| c.contains_key(&(bi, ii)));
                    if let (false, Located::At(line, _)) = (inlined, locate(f, loc)) {
                        own.push(line);
                    }
                }
            }
            // Its entry node's line (the declaration) too: an inlined copy
            // has no entry node.
            own.push(fl.line);
            own.sort_unstable();
            own.dedup();
            if let Some(&last) = own.last() {
                if last >= fl.line {
                    ranges
                        .entry(fl.filename.as_str())
                        .or_default()
                        .push((fl.line, last, own));
                }
            }
        }
        for f in &self.ix.m.functions {
            let Some(chains) = self.inlined.get(&f.name) else {
                continue;
            };
            let Some(entry) = self.ix.by_name(&f.name).and_then(|i| self.ends.entry(i)) else {
                continue;
            };
            let mut weak: Vec<u32> = Vec::new();
            for (bi, bb) in f.basic_blocks.iter().enumerate() {
                let locs = bb
                    .instrs
                    .iter()
                    .map(inst_loc)
                    .chain(std::iter::once(term_loc(&bb.term)));
                for (ii, loc) in locs.enumerate() {
                    let Some(loc) = loc.filter(|_| chains.contains_key(&(bi, ii))) else {
                        continue;
                    };
                    for (start, last, own) in
                        ranges.get(loc.filename.as_str()).into_iter().flatten()
                    {
                        if (*start..=*last).contains(&loc.line) {
                            weak.extend(own);
                        }
                    }
                }
            }
            weak.sort_unstable();
            weak.dedup();
            for l in weak {
                self.b.add_weak_line(entry, l);
            }
        }
    }

    /// The lines of `f`'s own file that instruction `ii` of the current
    /// block was inlined at (its `inlinedAt` chain): the inlined call's
    /// statement ran if this code did, though it may have kept no
    /// instruction of its own, so they are weak lines of its node.
    fn chain_lines(&self, cx: &BodyCtx<'_, 'm>, ii: usize) -> Vec<u32> {
        let (Some(chains), Some(fl)) = (cx.chains, cx.f.debugloc.as_ref()) else {
            return Vec::new();
        };
        chains
            .get(&(cx.bi, ii))
            .map(|c| {
                c.iter()
                    .filter(|(file, _)| *file == fl.filename)
                    .map(|&(_, line)| line)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// (line, column) of a location in `f`'s own file; None for no
    /// location, line 0 (compiler-generated code) or another file (counted
    /// when `count`).
    fn position(&mut self, f: &Function, loc: Option<&DebugLoc>, count: bool) -> Pos {
        match locate(f, loc) {
            Located::At(line, col) => Some((line, col)),
            Located::Nowhere => None,
            Located::Foreign => {
                if count {
                    self.report.foreign_locations += 1;
                }
                None
            }
        }
    }

    /// What a call to the declaration `i` does beyond returning: resume a
    /// `setjmp`, jump to one, register an asynchronous root, or run
    /// unknown code (see the [`libc`] module).
    fn external_effects(&mut self, i: FnId, site: NodeId, caller: &'m Function, args: &'m Args) {
        let name = self.ix.info(i).name;
        if self.ix.info(i).returns_twice {
            if self.facts.setjmp_sites.last() != Some(&site) {
                self.facts.setjmp_sites.push(site);
            }
        } else if libc::LONGJMP_NAMES.contains(&name) {
            self.facts.longjmp_sites.push(site);
        } else if libc::ASYNC_REGISTRARS.contains(&name) {
            self.async_registration(name, site, caller, args);
        } else if libc::EXIT_REGISTRARS.contains(&name) {
            self.facts.exit_handlers = true;
        } else if !libc::is_inert(name) && !libc::SYNC_CALLBACK.contains(&name) {
            self.facts.unknown_code_sites.push(site);
        }
    }

    /// Records the functions a signal or thread registration may run
    /// asynchronously: the function pointers it is passed (a variable: the
    /// functions it is traced to by [`Targets::pointer_sources`], else
    /// every compatible address-taken function); for `sigaction`, whose
    /// handler travels in a structure, every address-taken function that
    /// has a handler's type.
    fn async_registration(
        &mut self,
        name: &str,
        site: NodeId,
        caller: &'m Function,
        args: &'m Args,
    ) {
        let roots = &mut self.facts.async_roots;
        let before = roots.len();
        for (arg, _) in args {
            if let Some(sources) = self.targets.pointer_sources(caller, arg, 4) {
                if !sources.is_empty() {
                    roots.extend(sources.into_iter().map(|t| (t, site)));
                    continue;
                }
            }
            let Some(sig) = self.targets.pointee_sig(arg) else {
                continue;
            };
            let t = self.targets.targets_for(sig);
            roots.extend(t.iter().map(|&t| (t, site)));
        }
        if name == "sigaction" {
            roots.extend(
                self.targets
                    .signal_handlers()
                    .into_iter()
                    .map(|t| (t, site)),
            );
        }
        roots.retain(|&(t, _)| self.ix.info(t).def.is_some());
        if roots.len() > before {
            self.report.async_registrations += 1;
        }
    }

    /// Library calls that receive a function pointer may call it back:
    /// give the call site call edges to the function passed (or, for a
    /// pointer variable, to every compatible address-taken function). The
    /// site keeps its fall-through edge (the library may also not call it).
    fn callbacks(&mut self, site: NodeId, args: &Args) {
        let mut any = false;
        for (arg, _) in args {
            let Some(sig) = self.targets.pointee_sig(arg) else {
                continue;
            };
            let targets: Rc<[FnId]> = match self.ix.direct(arg) {
                Some(i) => Rc::from(vec![i]),
                None => self.targets.targets_for(sig),
            };
            for &t in targets.iter() {
                if let Some(e) = self.ends.entry(t) {
                    self.b.add_call_edge(site, e);
                    any = true;
                }
            }
        }
        if any {
            self.report.callback_sites += 1;
        }
    }
}

/// Whether `inst` is SanitizerCoverage instrumentation: a load or store of
/// a `__sancov_gen_` flag, or a comparison of such a load (recorded in
/// `values`). Its debug location is the first instruction's of the block
/// it covers, which for an empty block (a fall-through `case` label) is
/// borrowed from an unrelated statement: attributing it to that line would
/// make the line "run" whenever the flag is set.
fn is_instrumentation<'m>(inst: &'m Instruction, values: &mut HashSet<&'m Name>) -> bool {
    let is_flag = |op: &Operand| {
        crate::sancov::flag_ref(op)
            .is_some_and(|(n, _)| matches!(n, Name::Name(s) if s.starts_with("__sancov_gen_")))
    };
    let local = |op: &Operand, values: &HashSet<&Name>| matches!(op, Operand::LocalOperand { name, .. } if values.contains(name));
    match inst {
        Instruction::Load(l) if is_flag(&l.address) => {
            values.insert(&l.dest);
            true
        }
        Instruction::Store(s) => is_flag(&s.address),
        Instruction::ICmp(c) if local(&c.operand0, values) || local(&c.operand1, values) => {
            values.insert(&c.dest);
            true
        }
        _ => false,
    }
}

/// Adds `n` after the block's previous node.
fn link(b: &mut IcfgBuilder, st: &mut BlockState, n: NodeId) {
    match (st.first, st.prev) {
        (None, _) => st.first = Some(n),
        (Some(_), Some(p)) if p != n => b.add_flow_edge(p, n),
        _ => {}
    }
}

fn inst_loc(inst: &Instruction) -> Option<&DebugLoc> {
    use llvm_ir::HasDebugLoc;
    inst.get_debug_loc().as_ref()
}

fn term_loc(t: &Terminator) -> Option<&DebugLoc> {
    use llvm_ir::HasDebugLoc;
    t.get_debug_loc().as_ref()
}

/// Whether an instruction of optimised code may run where its source
/// statement would not have: hoisted out of a loop (LICM), speculated
/// into a predecessor (SimplifyCFG), merged with another copy (GVN), all
/// keeping their debug location; or emit no machine instruction of its
/// line at all (an address computation folded into a load). Such an
/// instruction gives its line only as a weak line of its node: running
/// it does not prove the line ran, but the line must not be No while it
/// may have. Only what cannot be speculated anchors a line: stores,
/// atomics, fences and volatile loads (and, elsewhere, call sites and
/// conditional branches).
fn speculable(inst: &Instruction) -> bool {
    match inst {
        Instruction::Store(_)
        | Instruction::AtomicRMW(_)
        | Instruction::CmpXchg(_)
        | Instruction::Fence(_) => false,
        Instruction::Load(l) => !l.volatile,
        _ => true,
    }
}

/// Whether `f` may have been optimised: it is not `optnone`, which clang
/// puts on every function at `-O0`, and it comes from a compiler (it has
/// the string attributes every front-end writes, `"frame-pointer"`,
/// `"target-cpu"`...; hand-written IR, read as written, has none). Then
/// [`speculable`] instructions give weak lines only.
pub(crate) fn optimised(f: &Function) -> bool {
    !f.function_attributes.contains(&FunctionAttribute::OptNone)
        && f.function_attributes
            .iter()
            .any(|a| matches!(a, FunctionAttribute::StringAttribute { .. }))
}
