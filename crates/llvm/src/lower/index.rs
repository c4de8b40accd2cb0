//! Pass 1: the module's functions by name, with a typed [`FnId`] each, and
//! what is known about them before any body is lowered: attributes, the
//! address-taken functions, constructors and destructors.

use super::{name_str, FnId};
use crate::decls::DeclAttributes;
use crate::libc;
use crate::operands::{
    callee, instruction_operands, strip_casts, terminator_operands, walk_constant,
};
use crate::{FrontendReport, NORETURN_NAMES};
use llvm_ir::function::{FunctionAttribute, FunctionDeclaration};
use llvm_ir::module::GlobalVariable;
use llvm_ir::{Constant, Function, Instruction, Module, Name, Operand, Terminator, TypeRef};
use std::collections::HashMap;

/// One function of the module, defined or declared.
pub(super) struct FnInfo<'m> {
    pub(super) name: &'m str,
    pub(super) def: Option<&'m Function>,
    pub(super) ret: &'m TypeRef,
    pub(super) params: Vec<&'m TypeRef>,
    pub(super) var_arg: bool,
    pub(super) noreturn: bool,
    /// `setjmp` and its family: may return a second time.
    pub(super) returns_twice: bool,
    /// `nounwind`: cannot throw (definitions only; declarations unknown).
    pub(super) nounwind: bool,
    pub(super) intrinsic: bool,
}

/// Attributes of a function that matter for its calls.
struct Traits {
    noreturn: bool,
    returns_twice: bool,
}

/// What a call instruction is for the graph.
pub(super) enum CallClass {
    /// `llvm.dbg.*`: dropped.
    Skip,
    /// Inline assembly or another intrinsic: an ordinary instruction.
    Plain,
    /// A call site with a known callee.
    Direct(FnId),
    /// A call site through a pointer.
    Indirect,
    /// An `invoke` or `callbr` of inline assembly or an intrinsic: a call
    /// site (it has two successors) whose callee is outside the program.
    Opaque,
}

/// The output of pass 1.
pub(super) struct ModuleIndex<'m> {
    pub(super) m: &'m Module,
    infos: Vec<FnInfo<'m>>,
    by_name: HashMap<String, FnId>,
    aliases: HashMap<String, FnId>,
    pub(super) globals: HashMap<String, &'m GlobalVariable>,
    /// Functions whose address escapes (no intrinsics), in id order.
    pub(super) address_taken: Vec<FnId>,
    /// Defined functions of `llvm.global_ctors` and `llvm.global_dtors`,
    /// in the order they run (by priority, then as listed; destructors
    /// in the reverse order).
    pub(super) ctors: Vec<FnId>,
    pub(super) dtors: Vec<FnId>,
    /// Whether some function has a personality (C++ exception handling):
    /// only then can a call unwind into a frame that catches.
    pub(super) has_eh: bool,
}

/// Globals that hold function addresses for the tool chain, not for
/// calls: `llvm.used`, `llvm.compiler.used`, the constructor and
/// destructor lists, and SanitizerCoverage's pc table.
fn is_tool_table(g: &GlobalVariable) -> bool {
    let name = name_str(&g.name);
    matches!(
        name.as_str(),
        "llvm.used" | "llvm.compiler.used" | "llvm.global_ctors" | "llvm.global_dtors"
    ) || g.section.as_deref() == Some(crate::sancov::PCS_SECTION)
}

impl<'m> ModuleIndex<'m> {
    /// Indexes `m`; counts functions, declarations and address-taken
    /// definitions in `report`.
    pub(super) fn build(
        m: &'m Module,
        decl_attrs: &DeclAttributes,
        report: &mut FrontendReport,
    ) -> Self {
        let mut ix = ModuleIndex {
            m,
            infos: Vec::new(),
            by_name: HashMap::new(),
            aliases: HashMap::new(),
            globals: HashMap::new(),
            address_taken: Vec::new(),
            ctors: Vec::new(),
            dtors: Vec::new(),
            has_eh: false,
        };
        ix.index(decl_attrs);
        report.functions = m.functions.len();
        report.declarations = m
            .func_declarations
            .iter()
            .filter(|d| !d.name.starts_with("llvm."))
            .count();
        ix.find_address_taken(report);
        ix.ctors = ix.structors("llvm.global_ctors");
        ix.dtors = ix.structors("llvm.global_dtors");
        // Destructors run in the reverse order.
        ix.dtors.reverse();
        ix
    }

    /// The information of function `i`.
    pub(super) fn info(&self, i: FnId) -> &FnInfo<'m> {
        &self.infos[i.index()]
    }

    /// Every function id, in order.
    pub(super) fn ids(&self) -> impl Iterator<Item = FnId> {
        (0..self.infos.len()).map(FnId::new)
    }

    /// The function of this exact name (no aliases).
    pub(super) fn by_name(&self, name: &str) -> Option<FnId> {
        self.by_name.get(name).copied()
    }

    fn index(&mut self, decl_attrs: &DeclAttributes) {
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
                    noreturn: decl_attrs.noreturn.contains(name.as_str()),
                    returns_twice: decl_attrs.returns_twice.contains(name.as_str()),
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
        self.by_name
            .insert(name.to_string(), FnId::new(self.infos.len()));
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
        });
    }

    /// The function a global name denotes (through aliases).
    pub(super) fn function_named(&self, n: &Name) -> Option<FnId> {
        let s = name_str(n);
        self.by_name
            .get(&s)
            .or_else(|| self.aliases.get(&s))
            .copied()
    }

    /// The function a callee operand denotes, if the call is direct.
    pub(super) fn direct(&self, op: &Operand) -> Option<FnId> {
        match op {
            Operand::ConstantOperand(c) => match strip_casts(c) {
                Constant::GlobalReference { name, .. } => self.function_named(name),
                _ => None,
            },
            _ => None,
        }
    }

    /// What a call of `callee_op` is for the graph.
    pub(super) fn classify(&self, callee_op: Option<&Operand>) -> CallClass {
        let Some(op) = callee_op else {
            return CallClass::Plain;
        };
        match self.direct(op) {
            Some(i) if self.info(i).intrinsic => {
                if self.info(i).name.starts_with("llvm.dbg.") {
                    CallClass::Skip
                } else {
                    CallClass::Plain
                }
            }
            Some(i) => CallClass::Direct(i),
            None => CallClass::Indirect,
        }
    }

    /// The class of an `invoke`'s or `callbr`'s callee: a call site even
    /// when a `call` of it would not be one.
    pub(super) fn site_class(&self, callee_op: Option<&Operand>) -> CallClass {
        match self.classify(callee_op) {
            CallClass::Skip | CallClass::Plain => CallClass::Opaque,
            c => c,
        }
    }

    fn find_address_taken(&mut self, report: &mut FrontendReport) {
        let m = self.m;
        let mut taken = vec![false; self.infos.len()];
        {
            let mut mark = |op: &Operand| {
                if let Operand::ConstantOperand(c) = op {
                    walk_constant(c, &mut |k| {
                        if let Constant::GlobalReference { name, .. } = k {
                            if let Some(i) = self.function_named(name) {
                                taken[i.index()] = true;
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
                // and exit code (the `<program>` start, see `hidden.rs`),
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
        for (i, t) in taken.into_iter().enumerate() {
            let i = FnId::new(i);
            if t && !self.info(i).intrinsic {
                self.address_taken.push(i);
                if self.info(i).def.is_some() {
                    report.address_taken += 1;
                }
            }
        }
    }

    /// The defined functions listed in the global `name`
    /// (`llvm.global_ctors` or `llvm.global_dtors`), by priority (stable:
    /// equal priorities run in the order listed).
    fn structors(&self, name: &str) -> Vec<FnId> {
        let Some(g) = self
            .m
            .global_vars
            .iter()
            .find(|g| name_str(&g.name) == name)
        else {
            return Vec::new();
        };
        let Some(init) = &g.initializer else {
            return Vec::new();
        };
        let mut found: Vec<(u64, FnId)> = Vec::new();
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
                    if let Some(i) = self.by_name(name_str(name).as_str()) {
                        if self.info(i).def.is_some() {
                            found.push((prio, i));
                        }
                    }
                }
            }
        }
        found.sort_by_key(|&(p, _)| p);
        found.into_iter().map(|(_, i)| i).collect()
    }
}
