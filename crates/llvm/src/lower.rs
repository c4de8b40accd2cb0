//! Lowering of one `llvm-ir` module into an [`Icfg`]. See the crate docs
//! for the mapping; this file follows it in three passes:
//!
//! 1. index functions, declarations, aliases and constant globals, and find
//!    the address-taken functions (every reference to a function other
//!    than as the callee of a direct call, in instructions and in global
//!    initializers);
//! 2. give every defined function its entry and exit nodes (so that call
//!    edges can be added in any order);
//! 3. lower each function body block by block;
//! 4. add the control flow that no call instruction shows
//!    ([`Lowering::hidden_flow`]): `longjmp` to every `setjmp` resume point,
//!    the `external code` function that calls back every address-taken
//!    function, and exit handlers after `main` returns.

use crate::decls::DeclAttributes;
use crate::libc;
use crate::operands::{
    callee, instruction_operands, opcode, strip_casts, term_opcode, terminator_operands,
    walk_constant,
};
use crate::{FrontendReport, LlvmError, NORETURN_NAMES};
use llvm_ir::function::{FunctionAttribute, FunctionDeclaration};
use llvm_ir::instruction::Call;
use llvm_ir::{
    BasicBlock, Constant, DebugLoc, Function, Instruction, Module, Name, Operand, Terminator, Type,
    TypeRef,
};
use postmortem_core::{FuncId, Icfg, IcfgBuilder, NodeId, NodeKind, NodeSpec};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// One function of the module, defined or declared.
struct FnInfo<'m> {
    name: &'m str,
    def: Option<&'m Function>,
    ret: &'m TypeRef,
    params: Vec<&'m TypeRef>,
    var_arg: bool,
    noreturn: bool,
    /// `setjmp` and its family: may return a second time.
    returns_twice: bool,
    /// `nounwind`: cannot throw (definitions only; declarations unknown).
    nounwind: bool,
    intrinsic: bool,
    entry: Option<NodeId>,
    exit: Option<NodeId>,
}

/// Attributes of a function that matter for its calls.
struct Traits {
    noreturn: bool,
    returns_twice: bool,
}

/// What a call instruction is for the graph.
enum CallClass {
    /// `llvm.dbg.*`: dropped.
    Skip,
    /// Inline assembly or another intrinsic: an ordinary instruction.
    Plain,
    /// A call site with a known callee.
    Direct(usize),
    /// A call site through a pointer.
    Indirect,
    /// An `invoke` or `callbr` of inline assembly or an intrinsic: a call
    /// site (it has two successors) whose callee is outside the program.
    Opaque,
}

/// The signature of an indirect call, as the cache key of its targets.
#[derive(PartialEq, Eq, Hash)]
struct CallSig {
    ret: TypeRef,
    args: Vec<TypeRef>,
    var_arg: bool,
}

/// A run of ordinary instructions of one block on one source line.
struct Group {
    line: u32,
    col: u32,
    label: String,
    ops: usize,
    last_op: &'static str,
}

/// Per-block lowering state: the block's first node and the node control
/// falls through from (None after a `noreturn` call).
struct BlockState {
    first: Option<NodeId>,
    prev: Option<NodeId>,
}

/// The lowering state of one block (see [`Lowering::lower_block`]).
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
}

/// How a block ends: its last node, the blocks that may run next, and
/// whether any block of the function may (`callbr`).
struct BlockEnd<'m> {
    last: NodeId,
    succs: Vec<&'m Name>,
    to_every_block: bool,
}

/// The source position of an instruction, if it has one in its function's
/// file: (line, column).
type Pos = Option<(u32, u32)>;

pub(crate) struct Lowering<'m> {
    m: &'m Module,
    b: IcfgBuilder,
    infos: Vec<FnInfo<'m>>,
    by_name: HashMap<String, usize>,
    aliases: HashMap<String, usize>,
    globals: HashMap<String, &'m llvm_ir::module::GlobalVariable>,
    strings: HashMap<String, Option<Rc<[u8]>>>,
    address_taken: Vec<usize>,
    indirect: HashMap<CallSig, Rc<[usize]>>,
    decl_attrs: &'m DeclAttributes,
    report: FrontendReport,
    path: String,
    /// Whether some function has a personality (C++ exception handling):
    /// only then can a call unwind into a frame that catches.
    has_eh: bool,
    /// Call sites of `setjmp`-like functions.
    setjmp_sites: Vec<NodeId>,
    /// Call sites of `longjmp`-like functions.
    longjmp_sites: Vec<NodeId>,
    /// Call sites that may run unknown external code (they call the
    /// `external code` function, see [`Lowering::hidden_flow`]).
    unknown_code_sites: Vec<NodeId>,
    /// Whether the program registers exit handlers (`atexit`, ...).
    exit_handlers: bool,
    /// Defined functions of `llvm.global_ctors` and `llvm.global_dtors`,
    /// in the order they run (by priority, then as listed).
    ctors: Vec<usize>,
    dtors: Vec<usize>,
    /// Functions registered to run asynchronously (signal handlers,
    /// thread start routines), with the call site that registers them.
    async_roots: HashSet<(usize, NodeId)>,
    /// Direct calls of each defined function (see [`Lowering::callers`]).
    #[allow(clippy::type_complexity)]
    callers: Option<
        HashMap<
            usize,
            Vec<(
                &'m Function,
                &'m [(Operand, Vec<llvm_ir::function::ParameterAttribute>)],
            )>,
        >,
    >,
    /// The nodes each block produced (for `sancov.rs`).
    pub(crate) block_nodes: crate::sancov::BlockNodes,
    /// The node of every `store` instruction (for `values.rs`).
    store_nodes: HashMap<*const Instruction, NodeId>,
}

/// What the lowering gives besides the graph and its report.
pub(crate) struct Extras {
    /// The nodes each block produced (for `sancov.rs`).
    pub block_nodes: crate::sancov::BlockNodes,
    /// The node of every `store` instruction (by address in the module).
    pub store_nodes: HashMap<*const Instruction, NodeId>,
    /// Each defined function's entry node.
    pub entries: HashMap<String, NodeId>,
}

/// Globals that hold function addresses for the tool chain, not for
/// calls: `llvm.used`, `llvm.compiler.used`, the constructor and
/// destructor lists, and SanitizerCoverage's pc table.
fn is_tool_table(g: &llvm_ir::module::GlobalVariable) -> bool {
    let name = name_str(&g.name);
    matches!(
        name.as_str(),
        "llvm.used" | "llvm.compiler.used" | "llvm.global_ctors" | "llvm.global_dtors"
    ) || g.section.as_deref() == Some(crate::sancov::PCS_SECTION)
}

fn name_str(n: &Name) -> String {
    match n {
        Name::Name(s) => s.to_string(),
        Name::Number(k) => k.to_string(),
    }
}

/// A debug-info file as clang wrote it: directory + filename (or the
/// filename alone when it is absolute).
fn file_of(loc: &DebugLoc) -> String {
    match &loc.directory {
        Some(d) if !d.is_empty() && !loc.filename.starts_with('/') => {
            format!("{d}/{}", loc.filename)
        }
        _ => loc.filename.clone(),
    }
}

fn same_file(a: &DebugLoc, b: &DebugLoc) -> bool {
    a.filename == b.filename && a.directory == b.directory
}

/// Loose, sound compatibility of two types for calls through pointers: C
/// converts between pointer types freely and calls through mismatched
/// pointer types in practice, so all pointers match; integers match by
/// width, floats by kind, aggregates with aggregates.
fn compatible(a: &Type, b: &Type) -> bool {
    use Type as T;
    let aggregate = |t: &Type| {
        matches!(
            t,
            T::ArrayType { .. } | T::StructType { .. } | T::NamedStructType { .. }
        )
    };
    match (a, b) {
        (T::PointerType { .. }, T::PointerType { .. }) => true,
        (T::IntegerType { bits: x }, T::IntegerType { bits: y }) => x == y,
        (T::FPType(x), T::FPType(y)) => x == y,
        (T::VectorType { .. }, T::VectorType { .. }) => true,
        _ if aggregate(a) && aggregate(b) => true,
        _ => a == b,
    }
}

impl<'m> Lowering<'m> {
    pub(crate) fn new(m: &'m Module, decl_attrs: &'m DeclAttributes, path: &str) -> Self {
        Lowering {
            m,
            b: IcfgBuilder::new(),
            infos: Vec::new(),
            by_name: HashMap::new(),
            aliases: HashMap::new(),
            globals: HashMap::new(),
            strings: HashMap::new(),
            address_taken: Vec::new(),
            indirect: HashMap::new(),
            decl_attrs,
            report: FrontendReport::default(),
            path: path.to_string(),
            has_eh: false,
            setjmp_sites: Vec::new(),
            longjmp_sites: Vec::new(),
            unknown_code_sites: Vec::new(),
            exit_handlers: false,
            ctors: Vec::new(),
            dtors: Vec::new(),
            async_roots: HashSet::new(),
            callers: None,
            block_nodes: Default::default(),
            store_nodes: HashMap::new(),
        }
    }

    pub(crate) fn run(mut self) -> Result<(Icfg, FrontendReport, Extras), LlvmError> {
        self.index();
        self.find_address_taken();
        self.entries_and_exits()?;
        let m = self.m;
        for f in &m.functions {
            self.lower_function(f)?;
        }
        self.hidden_flow()?;
        let path = self.path.clone();
        let g = self
            .b
            .build()
            .map_err(|source| LlvmError::Graph { path, source })?;
        let mut report = self.report;
        report.nodes = g.num_nodes();
        report.edges = g.num_edges();
        report.call_sites = g.num_call_sites();
        let entries = self
            .infos
            .iter()
            .filter(|i| i.def.is_some())
            .filter_map(|i| Some((i.name.to_string(), i.entry?)))
            .collect();
        let extras = Extras {
            block_nodes: self.block_nodes,
            store_nodes: self.store_nodes,
            entries,
        };
        Ok((g, report, extras))
    }

    // ---- pass 1: indexing ------------------------------------------------

    fn index(&mut self) {
        let m = self.m;
        for f in &m.functions {
            let attrs = &f.function_attributes;
            self.add_info(
                &f.name,
                Some(f),
                &f.return_type,
                f.parameters.iter().map(|p| &p.ty).collect(),
                f.is_var_arg,
                Traits {
                    noreturn: attrs.contains(&FunctionAttribute::NoReturn),
                    returns_twice: attrs.contains(&FunctionAttribute::ReturnsTwice),
                },
            );
            let last = self.infos.len() - 1;
            self.infos[last].nounwind = attrs.contains(&FunctionAttribute::NoUnwind);
            self.has_eh |= f.personality_function.is_some();
        }
        for d in &m.func_declarations {
            let FunctionDeclaration {
                name,
                return_type,
                parameters,
                is_var_arg,
                ..
            } = d;
            self.add_info(
                name,
                None,
                return_type,
                parameters.iter().map(|p| &p.ty).collect(),
                *is_var_arg,
                Traits {
                    noreturn: self.decl_attrs.noreturn.contains(name.as_str()),
                    returns_twice: self.decl_attrs.returns_twice.contains(name.as_str()),
                },
            );
        }
        for a in &m.global_aliases {
            if let Constant::GlobalReference { name, .. } = strip_casts(&a.aliasee) {
                if let Some(&i) = self.by_name.get(&name_str(name)) {
                    self.aliases.insert(name_str(&a.name), i);
                }
            }
        }
        for g in &m.global_vars {
            self.globals.insert(name_str(&g.name), g);
        }
        self.report.functions = m.functions.len();
        self.report.declarations = m
            .func_declarations
            .iter()
            .filter(|d| !d.name.starts_with("llvm."))
            .count();
    }

    fn add_info(
        &mut self,
        name: &'m str,
        def: Option<&'m Function>,
        ret: &'m TypeRef,
        params: Vec<&'m TypeRef>,
        var_arg: bool,
        traits: Traits,
    ) {
        // The names lists describe the C library: they apply to
        // declarations only, never to a program's own function of that name.
        let noreturn = traits.noreturn || (def.is_none() && NORETURN_NAMES.contains(&name));
        let returns_twice =
            traits.returns_twice || (def.is_none() && libc::SETJMP_NAMES.contains(&name));
        self.by_name.insert(name.to_string(), self.infos.len());
        self.infos.push(FnInfo {
            name,
            def,
            ret,
            params,
            var_arg,
            noreturn,
            returns_twice,
            nounwind: false,
            intrinsic: name.starts_with("llvm."),
            entry: None,
            exit: None,
        });
    }

    /// The function a global name denotes (through aliases).
    fn function_named(&self, n: &Name) -> Option<usize> {
        let s = name_str(n);
        self.by_name
            .get(&s)
            .or_else(|| self.aliases.get(&s))
            .copied()
    }

    /// The function a callee operand denotes, if the call is direct.
    fn direct(&self, op: &Operand) -> Option<usize> {
        match op {
            Operand::ConstantOperand(c) => match strip_casts(c) {
                Constant::GlobalReference { name, .. } => self.function_named(name),
                _ => None,
            },
            _ => None,
        }
    }

    fn find_address_taken(&mut self) {
        let m = self.m;
        let mut taken = vec![false; self.infos.len()];
        {
            let mut mark = |op: &Operand| {
                if let Operand::ConstantOperand(c) = op {
                    walk_constant(c, &mut |k| {
                        if let Constant::GlobalReference { name, .. } = k {
                            if let Some(i) = self.function_named(name) {
                                taken[i] = true;
                            }
                        }
                    });
                }
            };
            for f in &m.functions {
                for bb in &f.basic_blocks {
                    for inst in &bb.instrs {
                        if let Instruction::Call(c) = inst {
                            if let Some(op) =
                                callee(&c.function).filter(|op| self.direct(op).is_none())
                            {
                                mark(op);
                            }
                        }
                        instruction_operands(inst, &mut mark);
                    }
                    let callee_op = match &bb.term {
                        Terminator::Invoke(x) => callee(&x.function),
                        Terminator::CallBr(x) => callee(&x.function),
                        _ => None,
                    };
                    if let Some(op) = callee_op.filter(|op| self.direct(op).is_none()) {
                        mark(op);
                    }
                    terminator_operands(&bb.term, &mut mark);
                }
            }
            for g in &m.global_vars {
                // Constructors and destructors are called by the start-up
                // and exit code (the `<program>` start, see `hidden_flow`),
                // not by any library call; `llvm.used` and SanitizerCoverage's
                // pc table keep a function's address for tools, not for calls.
                if is_tool_table(g) {
                    continue;
                }
                if let Some(init) = &g.initializer {
                    mark(&Operand::ConstantOperand(init.clone()));
                }
            }
        }
        for (list, name) in [
            (&mut self.ctors, "llvm.global_ctors"),
            (&mut self.dtors, "llvm.global_dtors"),
        ] {
            let Some(g) = m.global_vars.iter().find(|g| name_str(&g.name) == name) else {
                continue;
            };
            let Some(init) = &g.initializer else { continue };
            let mut found: Vec<(u64, usize)> = Vec::new();
            if let Constant::Array { elements, .. } = strip_casts(init) {
                for e in elements {
                    let Constant::Struct { values, .. } = strip_casts(e) else {
                        continue;
                    };
                    let prio = match values.first().map(|v| strip_casts(v)) {
                        Some(Constant::Int { value, .. }) => *value,
                        _ => u64::MAX,
                    };
                    if let Some(Constant::GlobalReference { name, .. }) =
                        values.get(1).map(|v| strip_casts(v))
                    {
                        if let Some(i) = self.by_name.get(name_str(name).as_str()).copied() {
                            if self.infos[i].def.is_some() {
                                found.push((prio, i));
                            }
                        }
                    }
                }
            }
            // Stable: equal priorities run in the order listed.
            found.sort_by_key(|&(p, _)| p);
            list.extend(found.into_iter().map(|(_, i)| i));
        }
        // Destructors run in the reverse order.
        self.dtors.reverse();
        for (i, t) in taken.into_iter().enumerate() {
            if t && !self.infos[i].intrinsic {
                self.address_taken.push(i);
                if self.infos[i].def.is_some() {
                    self.report.address_taken += 1;
                }
            }
        }
    }

    // ---- pass 2: entries and exits ---------------------------------------

    fn entries_and_exits(&mut self) -> Result<(), LlvmError> {
        for i in 0..self.infos.len() {
            let Some(f) = self.infos[i].def else { continue };
            let func = self.b.function(&f.name);
            let mut lines = Vec::new();
            match &f.debugloc {
                Some(loc) => {
                    self.b.set_function_file(func, &file_of(loc));
                    if loc.line != 0 {
                        lines.push(loc.line);
                    }
                }
                None => self.report.functions_without_debug_info += 1,
            }
            let label = format!("entry: {}", f.name);
            let entry = self.node(
                &format!("{}:entry", f.name),
                NodeKind::Entry,
                func,
                &label,
                &lines,
            )?;
            // The exit's lines: where the function returns.
            let mut ret_lines = Vec::new();
            let mut ret_col = 0;
            for bb in &f.basic_blocks {
                if let Terminator::Ret(r) = &bb.term {
                    if let Some((line, col)) = self.position(f, r.debugloc.as_ref(), false) {
                        ret_lines.push(line);
                        if ret_col == 0 {
                            ret_col = col;
                        }
                    }
                }
            }
            ret_lines.sort_unstable();
            ret_lines.dedup();
            let label = format!("exit: {}", f.name);
            let exit = self.node(
                &format!("{}:exit", f.name),
                NodeKind::Exit,
                func,
                &label,
                &ret_lines,
            )?;
            if ret_col != 0 {
                self.b.set_column(exit, ret_col);
            }
            self.infos[i].entry = Some(entry);
            self.infos[i].exit = Some(exit);
        }
        Ok(())
    }

    fn node(
        &mut self,
        id: &str,
        kind: NodeKind,
        func: FuncId,
        label: &str,
        lines: &[u32],
    ) -> Result<NodeId, LlvmError> {
        self.b
            .add_node(NodeSpec {
                ext_id: id,
                kind,
                func,
                label,
                lines,
            })
            .map_err(|source| LlvmError::Graph {
                path: self.path.clone(),
                source,
            })
    }

    // ---- pass 3: bodies --------------------------------------------------

    fn lower_function(&mut self, f: &'m Function) -> Result<(), LlvmError> {
        let func = self.b.function(&f.name);
        let info = &self.infos[self.by_name[&f.name]];
        let (entry, exit) = (
            info.entry.expect("made in pass 2"),
            info.exit.expect("made in pass 2"),
        );
        let mut block_first: Vec<Option<NodeId>> = vec![None; f.basic_blocks.len()];
        let mut pending: Vec<(NodeId, &Name)> = Vec::new();
        let mut all_blocks_from: Vec<NodeId> = Vec::new();
        let mut ids: HashMap<(u32, u32), u32> = HashMap::new();
        let mut lower = BodyCtx {
            f,
            func,
            exit,
            ids: &mut ids,
        };

        let mut ranges = Vec::with_capacity(f.basic_blocks.len());
        for (bi, bb) in f.basic_blocks.iter().enumerate() {
            let block_start = self.b.num_nodes() as u32;
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
        };
        for inst in &bb.instrs {
            self.lower_instruction(cx, &mut blk, inst)?;
        }
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
            Instruction::Call(c) => self.classify(c.function.as_ref().right()),
            _ => CallClass::Plain,
        };
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
                if let Instruction::Store(_) = inst {
                    // The group's node is made when it is flushed, before
                    // any other node: it gets the next id.
                    let next = NodeId::new(self.b.num_nodes());
                    self.store_nodes.insert(inst as *const Instruction, next);
                }
            }
            CallClass::Direct(_) | CallClass::Indirect | CallClass::Opaque => {
                self.flush(cx, &mut blk.st, &mut blk.group)?;
                let Instruction::Call(c) = inst else {
                    unreachable!("only calls are classified as sites")
                };
                let (site, noreturn) = self.call_site(cx, class, c_parts(c), pos)?;
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
        let borrowed = match term {
            Terminator::Br(_) => !blk.located,
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
                let class = self.site_class(x.function.as_ref().right());
                let parts = CallParts {
                    callee: x.function.as_ref().right(),
                    args: &x.arguments,
                    attrs: &x.function_attributes,
                    kw: "invoke",
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
                let class = self.site_class(x.function.as_ref().right());
                self.report.callbr += 1;
                let parts = CallParts {
                    callee: x.function.as_ref().right(),
                    args: &x.arguments,
                    attrs: &x.function_attributes,
                    kw: "callbr",
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

    /// The class of an `invoke`'s or `callbr`'s callee: a call site even
    /// when a `call` of it would not be one.
    fn site_class(&self, callee_op: Option<&Operand>) -> CallClass {
        match self.classify(callee_op) {
            CallClass::Skip | CallClass::Plain => CallClass::Opaque,
            c => c,
        }
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

    /// (line, column) of a location in `f`'s own file; None for no
    /// location, line 0 (compiler-generated code) or another file (counted
    /// when `count`).
    fn position(&mut self, f: &Function, loc: Option<&DebugLoc>, count: bool) -> Pos {
        let loc = loc?;
        if loc.line == 0 {
            return None;
        }
        match &f.debugloc {
            Some(fl) if same_file(fl, loc) => Some((loc.line, loc.col.unwrap_or(0))),
            _ => {
                if count {
                    self.report.foreign_locations += 1;
                }
                None
            }
        }
    }

    fn classify(&self, callee_op: Option<&Operand>) -> CallClass {
        let Some(op) = callee_op else {
            return CallClass::Plain;
        };
        match self.direct(op) {
            Some(i) if self.infos[i].intrinsic => {
                if self.infos[i].name.starts_with("llvm.dbg.") {
                    CallClass::Skip
                } else {
                    CallClass::Plain
                }
            }
            Some(i) => CallClass::Direct(i),
            None => CallClass::Indirect,
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
        });
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
        link(&mut self.b, st, n);
        st.prev = Some(n);
        Ok(Some(n))
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
        let label = match &class {
            CallClass::Direct(i) => format!("{} {}", parts.kw, self.infos[*i].name),
            CallClass::Opaque => match parts.callee.and_then(|op| self.direct(op)) {
                Some(i) => format!("{} {}", parts.kw, self.infos[i].name),
                None => format!("{} asm", parts.kw),
            },
            _ => format!("{} (indirect)", parts.kw),
        };
        let lines: &[u32] = if line != 0 { &[line] } else { &[] };
        let site = self.node(&id, NodeKind::CallSite, cx.func, &label, lines)?;
        if col != 0 {
            self.b.set_column(site, col);
        }
        for (arg, _) in parts.args {
            if let Some(s) = self.string_arg(arg) {
                self.b.add_string_arg(site, &String::from_utf8_lossy(&s));
            }
        }
        let mut noreturn = parts.attrs.contains(&FunctionAttribute::NoReturn);
        let mut may_throw = !parts.attrs.contains(&FunctionAttribute::NoUnwind);
        if parts.attrs.contains(&FunctionAttribute::ReturnsTwice) {
            self.setjmp_sites.push(site);
        }
        match class {
            CallClass::Direct(i) => {
                self.report.direct_calls += 1;
                noreturn |= self.infos[i].noreturn;
                may_throw &= !self.infos[i].nounwind;
                match self.infos[i].entry {
                    Some(e) => self.b.add_call_edge(site, e),
                    None => {
                        self.report.external_calls += 1;
                        self.b.add_external_callee(site);
                        let name = self.infos[i].name;
                        self.b.add_external_callee_name(site, name);
                        self.callbacks(site, parts.args);
                        self.external_effects(i, site, cx.f, parts.args);
                    }
                }
            }
            CallClass::Indirect => {
                self.report.indirect_calls += 1;
                let targets = self.indirect_targets(parts.callee, parts.args);
                let mut external = false;
                for &t in targets.iter() {
                    match self.infos[t].entry {
                        Some(e) => {
                            self.b.add_call_edge(site, e);
                            self.report.indirect_edges += 1;
                        }
                        None => {
                            external = true;
                            let name = self.infos[t].name;
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
                            self.infos[t].def.is_some() || libc::is_inert(self.infos[t].name)
                        });
                    if !all_inert {
                        self.unknown_code_sites.push(site);
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
        if self.has_eh && parts.kw == "call" && may_throw {
            self.b.add_flow_edge(site, cx.exit);
            self.report.unwind_edges += 1;
        }
        Ok((site, noreturn))
    }

    /// What a call to the declaration `i` does beyond returning: resume a
    /// `setjmp`, jump to one, register an asynchronous root, or run
    /// unknown code (see the [`libc`] module).
    fn external_effects(
        &mut self,
        i: usize,
        site: NodeId,
        caller: &'m Function,
        args: &'m [(Operand, Vec<llvm_ir::function::ParameterAttribute>)],
    ) {
        let name = self.infos[i].name;
        if self.infos[i].returns_twice {
            if self.setjmp_sites.last() != Some(&site) {
                self.setjmp_sites.push(site);
            }
        } else if libc::LONGJMP_NAMES.contains(&name) {
            self.longjmp_sites.push(site);
        } else if libc::ASYNC_REGISTRARS.contains(&name) {
            self.async_registration(name, site, caller, args);
        } else if libc::EXIT_REGISTRARS.contains(&name) {
            self.exit_handlers = true;
        } else if !libc::is_inert(name) && !libc::SYNC_CALLBACK.contains(&name) {
            self.unknown_code_sites.push(site);
        }
    }

    /// Records the functions a signal or thread registration may run
    /// asynchronously: the function pointers it is passed (a variable: the
    /// functions it is traced to by [`Lowering::pointer_sources`], else
    /// every compatible address-taken function); for `sigaction`, whose
    /// handler travels in a structure, every address-taken function that
    /// has a handler's type.
    fn async_registration(
        &mut self,
        name: &str,
        site: NodeId,
        caller: &'m Function,
        args: &'m [(Operand, Vec<llvm_ir::function::ParameterAttribute>)],
    ) {
        let before = self.async_roots.len();
        for (arg, _) in args {
            if let Some(sources) = self.pointer_sources(caller, arg, 4) {
                if !sources.is_empty() {
                    self.async_roots
                        .extend(sources.into_iter().map(|t| (t, site)));
                    continue;
                }
            }
            let ty = self.m.types.type_of(arg);
            let Type::PointerType { pointee_type, .. } = ty.as_ref() else {
                continue;
            };
            let Type::FuncType {
                result_type,
                param_types,
                is_var_arg,
            } = pointee_type.as_ref()
            else {
                continue;
            };
            let t = self.targets_for(CallSig {
                ret: result_type.clone(),
                args: param_types.clone(),
                var_arg: *is_var_arg,
            });
            self.async_roots.extend(t.iter().map(|&t| (t, site)));
        }
        if name == "sigaction" {
            let handlers: Vec<usize> = self
                .address_taken
                .iter()
                .copied()
                .filter(|&t| {
                    let f = &self.infos[t];
                    let int = |p: &&TypeRef| matches!(p.as_ref(), Type::IntegerType { bits: 32 });
                    let ptr = |p: &&TypeRef| matches!(p.as_ref(), Type::PointerType { .. });
                    matches!(f.ret.as_ref(), Type::VoidType)
                        && match f.params.as_slice() {
                            [a] => int(a),
                            [a, b, c] => int(a) && ptr(b) && ptr(c),
                            _ => false,
                        }
                })
                .collect();
            self.async_roots
                .extend(handlers.into_iter().map(|t| (t, site)));
        }
        self.async_roots
            .retain(|&(t, _)| self.infos[t].def.is_some());
        if self.async_roots.len() > before {
            self.report.async_registrations += 1;
        }
    }

    /// The address-taken functions an indirect call may reach: same number
    /// of parameters (or enough for a variadic callee) and compatible
    /// parameter and return types.
    fn indirect_targets(
        &mut self,
        callee_op: Option<&Operand>,
        args: &[(Operand, Vec<llvm_ir::function::ParameterAttribute>)],
    ) -> Rc<[usize]> {
        let types = &self.m.types;
        let ret = match callee_op.map(|op| types.type_of(op)) {
            Some(t) => match t.as_ref() {
                Type::PointerType { pointee_type, .. } => match pointee_type.as_ref() {
                    Type::FuncType { result_type, .. } => Some(result_type.clone()),
                    _ => None,
                },
                _ => None,
            },
            None => None,
        };
        let Some(ret) = ret else {
            return Rc::from(Vec::new());
        };
        let sig = CallSig {
            ret,
            args: args.iter().map(|(a, _)| types.type_of(a)).collect(),
            var_arg: false,
        };
        self.targets_for(sig)
    }

    fn targets_for(&mut self, sig: CallSig) -> Rc<[usize]> {
        if let Some(t) = self.indirect.get(&sig) {
            return t.clone();
        }
        let fits = |f: &FnInfo<'_>| {
            let ret_ok = matches!(sig.ret.as_ref(), Type::VoidType)
                || matches!(f.ret.as_ref(), Type::VoidType)
                || compatible(&sig.ret, f.ret);
            let count_ok = if sig.var_arg {
                f.params.len() >= sig.args.len() || f.var_arg
            } else if f.var_arg {
                sig.args.len() >= f.params.len()
            } else {
                sig.args.len() == f.params.len()
            };
            ret_ok
                && count_ok
                && f.params
                    .iter()
                    .zip(&sig.args)
                    .all(|(p, a)| compatible(p, a))
        };
        let t: Rc<[usize]> = self
            .address_taken
            .iter()
            .copied()
            .filter(|&i| fits(&self.infos[i]))
            .collect();
        self.indirect.insert(sig, t.clone());
        t
    }

    /// Library calls that receive a function pointer may call it back:
    /// give the call site call edges to the function passed (or, for a
    /// pointer variable, to every compatible address-taken function). The
    /// site keeps its fall-through edge (the library may also not call it).
    fn callbacks(
        &mut self,
        site: NodeId,
        args: &[(Operand, Vec<llvm_ir::function::ParameterAttribute>)],
    ) {
        let mut any = false;
        for (arg, _) in args {
            let ty = self.m.types.type_of(arg);
            let Type::PointerType { pointee_type, .. } = ty.as_ref() else {
                continue;
            };
            let Type::FuncType {
                result_type,
                param_types,
                is_var_arg,
            } = pointee_type.as_ref()
            else {
                continue;
            };
            let targets: Rc<[usize]> = match self.direct(arg) {
                Some(i) => Rc::from(vec![i]),
                None => self.targets_for(CallSig {
                    ret: result_type.clone(),
                    args: param_types.clone(),
                    var_arg: *is_var_arg,
                }),
            };
            for &t in targets.iter() {
                if let Some(e) = self.infos[t].entry {
                    self.b.add_call_edge(site, e);
                    any = true;
                }
            }
        }
        if any {
            self.report.callback_sites += 1;
        }
    }

    /// The functions a function-pointer operand of `f` can hold, when every
    /// value it can have is traced to a function constant; `None` when it
    /// cannot be (the caller then falls back to every compatible
    /// address-taken function). Follows, up to `depth` steps, the shapes
    /// clang emits at `-O0`: casts, a load of a local slot whose every
    /// use is a load or a store (each stored value traced in turn), and a
    /// parameter of a function that is only called directly (the argument
    /// of every call traced in its caller).
    fn pointer_sources(
        &mut self,
        f: &'m Function,
        op: &'m Operand,
        depth: u32,
    ) -> Option<Vec<usize>> {
        if let Some(i) = self.direct(op) {
            return Some(vec![i]);
        }
        if depth == 0 {
            return None;
        }
        let Operand::LocalOperand { name, .. } = op else {
            return None;
        };
        if let Some(pos) = f.parameters.iter().position(|p| &p.name == name) {
            let fi = *self.by_name.get(&f.name)?;
            if self.address_taken.contains(&fi) {
                return None;
            }
            let callers = self.callers().get(&fi).cloned().unwrap_or_default();
            let mut out = Vec::new();
            for (caller, args) in callers {
                let (arg, _) = args.get(pos)?;
                out.extend(self.pointer_sources(caller, arg, depth - 1)?);
            }
            return Some(out);
        }
        let def = f
            .basic_blocks
            .iter()
            .flat_map(|bb| &bb.instrs)
            .find(|i| i.try_get_result() == Some(name))?;
        match def {
            Instruction::BitCast(c) => self.pointer_sources(f, &c.operand, depth - 1),
            Instruction::Load(l) => {
                let Operand::LocalOperand { name: slot, .. } = &l.address else {
                    return None;
                };
                let mut stored: Vec<&'m Operand> = Vec::new();
                for inst in f.basic_blocks.iter().flat_map(|bb| &bb.instrs) {
                    let mut other_use = false;
                    let is_slot = |o: &Operand| matches!(o, Operand::LocalOperand { name, .. } if name == slot);
                    match inst {
                        Instruction::Load(x) if is_slot(&x.address) => {}
                        Instruction::Store(x) if is_slot(&x.address) => {
                            if is_slot(&x.value) {
                                return None;
                            }
                            stored.push(&x.value);
                        }
                        _ => instruction_operands(inst, &mut |o| other_use |= is_slot(o)),
                    }
                    if other_use {
                        return None;
                    }
                }
                let mut out = Vec::new();
                for v in stored {
                    out.extend(self.pointer_sources(f, v, depth - 1)?);
                }
                Some(out)
            }
            _ => None,
        }
    }

    /// Direct calls of each defined function: (calling function, the
    /// call's arguments). Built on first use.
    #[allow(clippy::type_complexity)]
    fn callers(
        &mut self,
    ) -> &HashMap<
        usize,
        Vec<(
            &'m Function,
            &'m [(Operand, Vec<llvm_ir::function::ParameterAttribute>)],
        )>,
    > {
        if self.callers.is_none() {
            let mut map: HashMap<usize, Vec<_>> = HashMap::new();
            for f in &self.m.functions {
                for bb in &f.basic_blocks {
                    let calls = bb.instrs.iter().filter_map(|i| match i {
                        Instruction::Call(c) => {
                            Some((c.function.as_ref().right(), &c.arguments[..]))
                        }
                        _ => None,
                    });
                    let invoke = match &bb.term {
                        Terminator::Invoke(x) => {
                            Some((x.function.as_ref().right(), &x.arguments[..]))
                        }
                        _ => None,
                    };
                    for (callee, args) in calls.chain(invoke) {
                        if let Some(i) = callee.and_then(|op| self.direct(op)) {
                            if self.infos[i].def.is_some() {
                                map.entry(i).or_default().push((f, args));
                            }
                        }
                    }
                }
            }
            self.callers = Some(map);
        }
        self.callers.as_ref().expect("just built")
    }

    // ---- pass 4: control flow no call instruction shows -------------------

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
    fn hidden_flow(&mut self) -> Result<(), LlvmError> {
        let resumes = self.jump_resumes();
        self.report.setjmp_sites = self.setjmp_sites.len();
        self.mark_async_roots();
        for &l in &self.longjmp_sites {
            for &r in &resumes {
                self.b.add_flow_edge(l, r);
                self.report.longjmp_edges += 1;
            }
        }
        let external_entry = self.external_code(&resumes)?;
        let handlers = external_entry.filter(|_| self.exit_handlers);
        self.program_start(handlers)
    }

    /// The resume points of the `setjmp`-like call sites (their flow
    /// successors), sorted; none when nothing may jump to them.
    fn jump_resumes(&self) -> Vec<NodeId> {
        let jump_sources = !self.longjmp_sites.is_empty() || !self.unknown_code_sites.is_empty();
        if self.setjmp_sites.is_empty() || !jump_sources {
            return Vec::new();
        }
        let sites: HashSet<NodeId> = self.setjmp_sites.iter().copied().collect();
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
        let mut roots: Vec<(usize, NodeId)> = self.async_roots.iter().copied().collect();
        roots.sort_unstable();
        for &(i, site) in &roots {
            let func = self.b.function(self.infos[i].name);
            self.b.mark_async(func, site);
        }
        roots.dedup_by_key(|r| r.0);
        self.report.async_functions = roots.len();
    }

    /// The `<external code>` function, when some call may run unknown code
    /// (or the program registers exit handlers) and that code may call a
    /// function or jump somewhere: its entry, if made.
    fn external_code(&mut self, resumes: &[NodeId]) -> Result<Option<NodeId>, LlvmError> {
        let escaping: Vec<usize> = self
            .address_taken
            .iter()
            .copied()
            .filter(|&i| self.infos[i].entry.is_some())
            .collect();
        let needs_external = (!self.unknown_code_sites.is_empty() || self.exit_handlers)
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
            let name = self.infos[i].name;
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
                .add_call_edge(site, self.infos[i].entry.expect("filtered"));
        }
        for &r in resumes {
            self.b.add_flow_edge(dispatch, r);
            self.report.longjmp_edges += 1;
        }
        for &site in &self.unknown_code_sites {
            self.b.add_call_edge(site, entry);
        }
        self.report.external_code_sites = self.unknown_code_sites.len();
        self.report.external_code_targets = escaping.len();
        Ok(Some(entry))
    }

    /// The `<program>` start function, when there are constructors,
    /// destructors or exit handlers (the entry of `<external code>`) and a
    /// `main`: it calls the constructors, `main`, the exit handlers and the
    /// destructors in turn.
    fn program_start(&mut self, handlers: Option<NodeId>) -> Result<(), LlvmError> {
        let ctors: Vec<usize> = self
            .ctors
            .iter()
            .copied()
            .filter(|&i| self.infos[i].entry.is_some())
            .collect();
        let dtors: Vec<usize> = self
            .dtors
            .iter()
            .copied()
            .filter(|&i| self.infos[i].entry.is_some())
            .collect();
        if handlers.is_none() && ctors.is_empty() && dtors.is_empty() {
            return Ok(());
        }
        let Some(main) = self.by_name.get("main").and_then(|&i| self.infos[i].entry) else {
            return Ok(());
        };
        // The process: constructors, main, then exit handlers and
        // destructors (which `exit` also runs: it calls unknown code).
        let func = self.b.function("<program>");
        let label = "the process: constructors, main, exit handlers, destructors";
        let start = self.node("<program>:entry", NodeKind::Entry, func, label, &[])?;
        let mut calls: Vec<(String, String, NodeId)> = Vec::new();
        for &i in &ctors {
            let name = self.infos[i].name;
            let entry = self.infos[i].entry.expect("filtered");
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
            let name = self.infos[i].name;
            let entry = self.infos[i].entry.expect("filtered");
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

    /// The constant C string an argument points to, if any: a constant
    /// global `[N x i8]` (through `getelementptr 0, k` or directly).
    fn string_arg(&mut self, op: &Operand) -> Option<Rc<[u8]>> {
        let Operand::ConstantOperand(c) = op else {
            return None;
        };
        let (name, offset) = match strip_casts(c) {
            Constant::GlobalReference { name, .. } => (name, 0usize),
            Constant::GetElementPtr(gep) => {
                let Constant::GlobalReference { name, .. } = strip_casts(&gep.address) else {
                    return None;
                };
                let mut idx = gep.indices.iter().map(|i| match i.as_ref() {
                    Constant::Int { value, .. } => Some(*value),
                    _ => None,
                });
                let offset = match (idx.next(), idx.next(), idx.next()) {
                    (Some(Some(0)), None, None) => 0,
                    (Some(Some(0)), Some(Some(k)), None) => usize::try_from(k).ok()?,
                    _ => return None,
                };
                (name, offset)
            }
            _ => return None,
        };
        let key = name_str(name);
        let bytes = match self.strings.get(&key) {
            Some(b) => b.clone(),
            None => {
                let b = self.globals.get(&key).and_then(|g| global_string(g));
                self.strings.insert(key, b.clone());
                b
            }
        }?;
        if offset > bytes.len() {
            return None;
        }
        Some(Rc::from(&bytes[offset..]))
    }
}

/// The bytes of a constant global `[N x i8]` up to its first NUL.
fn global_string(g: &llvm_ir::module::GlobalVariable) -> Option<Rc<[u8]>> {
    if !g.is_constant {
        return None;
    }
    match g.initializer.as_ref()?.as_ref() {
        Constant::Array {
            element_type,
            elements,
        } if matches!(element_type.as_ref(), Type::IntegerType { bits: 8 }) => {
            let mut out = Vec::with_capacity(elements.len());
            for e in elements {
                match e.as_ref() {
                    Constant::Int { value: 0, .. } => break,
                    Constant::Int { value, .. } => out.push(*value as u8),
                    _ => return None,
                }
            }
            Some(Rc::from(out))
        }
        Constant::AggregateZero(t) => match t.as_ref() {
            Type::ArrayType { element_type, .. }
                if matches!(element_type.as_ref(), Type::IntegerType { bits: 8 }) =>
            {
                Some(Rc::from(Vec::new()))
            }
            _ => None,
        },
        _ => None,
    }
}

/// The parts of a call or invoke the call-site maker needs.
struct CallParts<'m> {
    callee: Option<&'m Operand>,
    args: &'m [(Operand, Vec<llvm_ir::function::ParameterAttribute>)],
    attrs: &'m [FunctionAttribute],
    kw: &'static str,
}

fn c_parts(c: &Call) -> CallParts<'_> {
    CallParts {
        callee: c.function.as_ref().right(),
        args: &c.arguments,
        attrs: &c.function_attributes,
        kw: "call",
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
}

impl BodyCtx<'_, '_> {
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
