//! The variables whose values in a crashed process are evidence about its
//! path ([`VarMap`], see `postmortem_formats::vars`): scalar globals and
//! locals that nothing but direct loads and stores touches, with the node
//! of every store and what it leaves.
//!
//! A variable is left out (and counted by reason) when:
//! * its address escapes: any use other than the address of a `load` or a
//!   `store` (passed to a call, `memcpy`/`memset`, stored, cast, indexed by
//!   a `getelementptr`, compared, atomics, a global initializer), since a
//!   store through a pointer could then write it unseen;
//! * it is not a scalar (integer of 8 to 64 bits, or a pointer);
//! * a store to it has no node (instrumentation);
//! * for a local: no `llvm.dbg.declare` names it;
//! * for a global: it is constant, thread-local, or has no definition in
//!   the module.
//!
//! Stores by code that may run in another thread or a signal handler are
//! handled where the constraints are solved (`ProcessWide` drops a value
//! whose stores may run off the crashing path).

use crate::dbgvars::DeclaredVars;
use crate::operands::{instruction_operands, terminator_operands, walk_constant};
use llvm_ir::{Constant, Instruction, Module, Name, Operand, Type};
use postmortem_core::NodeId;
use postmortem_formats::vars::{Var, VarMap, VarScope, Written};
use std::collections::{BTreeMap, HashMap, HashSet};

/// The store instructions' nodes (by instruction address) and each defined
/// function's entry node, from the lowering.
pub(crate) struct Lowered<'a> {
    pub store_nodes: &'a HashMap<*const Instruction, NodeId>,
    pub entries: &'a HashMap<String, NodeId>,
}

/// Builds the variable map of a module.
pub(crate) fn scan(m: &Module, declared: &DeclaredVars, low: &Lowered<'_>) -> VarMap {
    let mut out = VarMap::default();
    let mut left = |why: &str, out: &mut VarMap| {
        *out.left_out.entry(why.to_string()).or_insert(0) += 1;
    };
    globals(m, low, &mut out, &mut left);
    for f in &m.functions {
        let Some(&entry) = low.entries.get(&f.name) else {
            continue;
        };
        locals(f, declared.get(&f.name), entry, low, &mut out, &mut left);
    }
    out
}

/// Size in bytes and pointer-ness of a scalar type.
fn scalar(t: &Type) -> Option<(u32, bool)> {
    match t {
        Type::IntegerType { bits } if matches!(bits, 8 | 16 | 32 | 64) => Some((bits / 8, false)),
        Type::PointerType { .. } => Some((8, true)),
        _ => None,
    }
}

/// What a stored operand leaves.
fn written(op: &Operand) -> Written {
    match op {
        Operand::ConstantOperand(c) => match c.as_ref() {
            Constant::Int { bits, value } if *bits <= 64 => Written::Const(*value),
            Constant::Null(_) | Constant::AggregateZero(_) => Written::Const(0),
            Constant::GlobalReference { .. } => Written::NonNull,
            _ => Written::Unknown,
        },
        _ => Written::Unknown,
    }
}

/// Per variable being collected: its writes by node (the last store of a
/// node wins: instructions are visited in order).
#[derive(Default)]
struct Writes {
    by_node: BTreeMap<u32, Written>,
    unmapped: bool,
}

impl Writes {
    fn add(&mut self, inst: &Instruction, value: &Operand, low: &Lowered<'_>) {
        match low.store_nodes.get(&(inst as *const Instruction)) {
            Some(n) => {
                self.by_node.insert(n.as_u32(), written(value));
            }
            None => self.unmapped = true,
        }
    }
}

fn global_name(op: &Operand) -> Option<&Name> {
    match op {
        Operand::ConstantOperand(c) => match c.as_ref() {
            Constant::GlobalReference { name, .. } => Some(name),
            _ => None,
        },
        _ => None,
    }
}

fn name_str(n: &Name) -> String {
    match n {
        Name::Name(s) => s.to_string(),
        Name::Number(k) => k.to_string(),
    }
}

/// Globals: defined, mutable, not thread-local, scalar, address used by
/// loads and stores only.
fn globals(
    m: &Module,
    low: &Lowered<'_>,
    out: &mut VarMap,
    left: &mut impl FnMut(&str, &mut VarMap),
) {
    let mut candidates: HashMap<String, (u32, bool, Option<u64>)> = HashMap::new();
    for g in &m.global_vars {
        let name = name_str(&g.name);
        if g.initializer.is_none()
            || name.starts_with("llvm.")
            || name.starts_with("__sancov")
            || name.starts_with('.')
        {
            continue;
        }
        if g.is_constant {
            continue;
        }
        if g.thread_local_mode != llvm_ir::module::ThreadLocalMode::NotThreadLocal {
            left("thread-local global", out);
            continue;
        }
        let Type::PointerType { pointee_type, .. } = g.ty.as_ref() else {
            continue;
        };
        let Some((bytes, pointer)) = scalar(pointee_type) else {
            left("global that is not a scalar", out);
            continue;
        };
        let init = g.initializer.as_ref().and_then(|c| match c.as_ref() {
            Constant::Int { bits, value } if *bits <= 64 => Some(*value),
            Constant::Null(_) | Constant::AggregateZero(_) => Some(0),
            _ => None,
        });
        candidates.insert(name, (bytes, pointer, init));
    }
    // Escapes: any reference other than a load's or store's address.
    let mut escaped: HashSet<String> = HashSet::new();
    let mark = |c: &Constant, escaped: &mut HashSet<String>| {
        if let Constant::GlobalReference { name, .. } = c {
            let k = name_str(name);
            if candidates.contains_key(&k) {
                escaped.insert(k);
            }
        }
    };
    for g in &m.global_vars {
        if let Some(init) = &g.initializer {
            walk_constant(init, &mut |c| mark(c, &mut escaped));
        }
    }
    let mut writes: HashMap<String, Writes> = HashMap::new();
    for f in &m.functions {
        for bb in &f.basic_blocks {
            for inst in &bb.instrs {
                let others = |op: &Operand, escaped: &mut HashSet<String>| {
                    if let Operand::ConstantOperand(c) = op {
                        walk_constant(c, &mut |c| mark(c, escaped));
                    }
                };
                match inst {
                    Instruction::Load(l) if global_name(&l.address).is_some() => {}
                    Instruction::Store(s) => {
                        others(&s.value, &mut escaped);
                        if let Some(n) = global_name(&s.address) {
                            let k = name_str(n);
                            if candidates.contains_key(&k) {
                                writes.entry(k).or_default().add(inst, &s.value, low);
                            }
                        } else {
                            others(&s.address, &mut escaped);
                        }
                    }
                    _ => instruction_operands(inst, &mut |op| others(op, &mut escaped)),
                }
            }
            terminator_operands(&bb.term, &mut |op| {
                if let Operand::ConstantOperand(c) = op {
                    walk_constant(c, &mut |c| mark(c, &mut escaped));
                }
            });
        }
    }
    let mut names: Vec<&String> = candidates.keys().collect();
    names.sort();
    for name in names {
        let (bytes, pointer, init) = candidates[name];
        if escaped.contains(name) {
            left("global whose address escapes", out);
            continue;
        }
        let w = writes.remove(name).unwrap_or_default();
        if w.unmapped {
            left("global stored by instructions without a node", out);
            continue;
        }
        let symbol = name.clone();
        let source = symbol.rsplit('.').next().unwrap_or(&symbol).to_string();
        out.vars.push(Var {
            name: source,
            scope: VarScope::Global { symbol, init },
            bytes,
            pointer,
            writes: w.by_node.into_iter().collect(),
        });
    }
}

/// Locals of one function: allocas of one scalar with a declared variable,
/// address used by loads and stores only.
fn locals(
    f: &llvm_ir::Function,
    declared: Option<&HashMap<(usize, usize), crate::dbgvars::Declared>>,
    entry: NodeId,
    low: &Lowered<'_>,
    out: &mut VarMap,
    left: &mut impl FnMut(&str, &mut VarMap),
) {
    let Some(declared) = declared else {
        return;
    };
    // The declared allocas: name -> (declared, bytes, pointer).
    let mut allocas: HashMap<String, (&crate::dbgvars::Declared, u32, bool)> = HashMap::new();
    for (bi, bb) in f.basic_blocks.iter().enumerate() {
        for (ii, inst) in bb.instrs.iter().enumerate() {
            let Instruction::Alloca(a) = inst else {
                continue;
            };
            let Some(d) = declared.get(&(bi, ii)) else {
                continue;
            };
            let one = matches!(&a.num_elements, Operand::ConstantOperand(c)
                if matches!(c.as_ref(), Constant::Int { value: 1, .. }));
            match scalar(&a.allocated_type) {
                Some((bytes, pointer)) if one => {
                    allocas.insert(name_str(&a.dest), (d, bytes, pointer));
                }
                _ => left("local that is not a scalar", out),
            }
        }
    }
    if allocas.is_empty() {
        return;
    }
    let local = |op: &Operand| match op {
        Operand::LocalOperand { name, .. } => {
            let k = name_str(name);
            allocas.contains_key(&k).then_some(k)
        }
        _ => None,
    };
    let mut escaped: HashSet<String> = HashSet::new();
    let mut writes: HashMap<String, Writes> = HashMap::new();
    for bb in &f.basic_blocks {
        for inst in &bb.instrs {
            match inst {
                Instruction::Load(l) if local(&l.address).is_some() => {}
                Instruction::Store(s) => {
                    if let Some(n) = local(&s.value) {
                        escaped.insert(n);
                    }
                    if let Some(n) = local(&s.address) {
                        writes.entry(n).or_default().add(inst, &s.value, low);
                    }
                }
                _ => instruction_operands(inst, &mut |op| {
                    if let Some(n) = local(op) {
                        escaped.insert(n);
                    }
                }),
            }
        }
        terminator_operands(&bb.term, &mut |op| {
            if let Some(n) = local(op) {
                escaped.insert(n);
            }
        });
    }
    let mut names: Vec<&String> = allocas.keys().collect();
    names.sort();
    for name in names {
        let (d, bytes, pointer) = allocas[name];
        if escaped.contains(name) {
            left("local whose address escapes", out);
            continue;
        }
        let w = writes.remove(name).unwrap_or_default();
        if w.unmapped {
            left("local stored by instructions without a node", out);
            continue;
        }
        out.vars.push(Var {
            name: d.name.clone(),
            scope: VarScope::Local {
                function: f.name.clone(),
                line: d.line,
                entry: entry.as_u32(),
            },
            bytes,
            pointer,
            writes: w.by_node.into_iter().collect(),
        });
    }
}
