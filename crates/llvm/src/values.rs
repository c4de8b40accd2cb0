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
//! A struct or array (local or global) is kept field by field when its
//! every use is a `getelementptr` with constant indices within its bounds
//! (after a first index 0), itself used only as the address of loads and
//! stores of a scalar field (or by more such `getelementptr`s): each
//! stored field is a variable of its own (`s.1`, `a[3]`, by position) at
//! its byte offset ([`layout`]: x86-64, no packed structs, floats or
//! vectors). Any other use leaves the whole aggregate out.
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

/// The store instructions' nodes (by instruction address), each defined
/// function's entry node and blocks' node ranges, and the graph, from the
/// lowering.
pub(crate) struct Lowered<'a> {
    pub store_nodes: &'a HashMap<*const Instruction, NodeId>,
    /// The call site node of every `call` that is one.
    pub call_nodes: &'a HashMap<*const Instruction, NodeId>,
    /// The node of every `load`.
    pub load_nodes: &'a HashMap<*const Instruction, NodeId>,
    pub entries: &'a HashMap<String, NodeId>,
    pub block_nodes: &'a crate::sancov::BlockNodes,
    pub icfg: &'a postmortem_core::Icfg,
}

/// Builds the variable map of a module.
pub(crate) fn scan(m: &Module, declared: &DeclaredVars, low: &Lowered<'_>) -> VarMap {
    let mut out = VarMap::default();
    let mut left = |why: &str, out: &mut VarMap| {
        *out.left_out.entry(why.to_string()).or_insert(0) += 1;
    };
    let mut gtests = global_tests(m, low);
    globals(m, low, &mut gtests, &mut out, &mut left);
    for f in &m.functions {
        let Some(&entry) = low.entries.get(&f.name) else {
            continue;
        };
        locals(m, f, declared.get(&f.name), entry, low, &mut out, &mut left);
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
pub(crate) fn written(op: &Operand) -> Written {
    match op {
        Operand::ConstantOperand(c) => written_const(c),
        _ => Written::Unknown,
    }
}

/// What a constant is, through pointer casts (`(char *)-1` is
/// `inttoptr (i64 -1)`): a 64-bit `inttoptr` keeps the integer.
fn written_const(c: &Constant) -> Written {
    match c {
        Constant::Int { bits, value } if *bits <= 64 => Written::Const(*value),
        Constant::Null(_) | Constant::AggregateZero(_) => Written::Const(0),
        Constant::GlobalReference { .. } => Written::NonNull,
        Constant::BitCast(b) => written_const(&b.operand),
        // An address within a global (a string literal's first byte):
        // `inbounds` keeps it within the object, so not null.
        Constant::GetElementPtr(g) if g.in_bounds => match written_const(&g.address) {
            Written::NonNull => Written::NonNull,
            _ => Written::Unknown,
        },
        Constant::IntToPtr(i) => match i.operand.as_ref() {
            Constant::Int { bits: 64, value } => Written::Const(*value),
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
    /// `inst` stores what `w` says.
    fn add(&mut self, inst: &Instruction, w: Written, low: &Lowered<'_>) {
        match low.store_nodes.get(&(inst as *const Instruction)) {
            Some(n) => {
                self.by_node.insert(n.as_u32(), w);
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

/// Branch tests per variable (see [`crate::branch_tests`]).
type TestMap = HashMap<crate::branch_tests::Key, Vec<postmortem_formats::vars::Test>>;

/// The branch tests of loads of globals (a global or a constant
/// `getelementptr` into one), by global and offset, over every function.
fn global_tests(m: &Module, low: &Lowered<'_>) -> TestMap {
    let roots: HashMap<String, llvm_ir::TypeRef> = m
        .global_vars
        .iter()
        .filter_map(|g| match g.ty.as_ref() {
            Type::PointerType { pointee_type, .. } => {
                Some((name_str(&g.name), pointee_type.clone()))
            }
            _ => None,
        })
        .collect();
    let places = Aggregates::new(m, roots);
    let resolve = |op: &Operand| match op {
        Operand::ConstantOperand(c) => match places.const_place(c) {
            Some(Some(p)) => Some((p.root, p.offset)),
            _ => None,
        },
        _ => None,
    };
    let mut out = TestMap::new();
    for f in &m.functions {
        let tests =
            crate::branch_tests::tests_of(f, low.block_nodes.get(&f.name), low.icfg, &resolve);
        for (k, t) in tests {
            out.entry(k).or_default().extend(t);
        }
    }
    out
}

/// The tests of the variable `key`, `bytes` wide.
fn take_tests(
    tests: &mut TestMap,
    key: (&str, u64),
    bytes: u32,
) -> Vec<postmortem_formats::vars::Test> {
    let mut t = tests
        .remove(&(key.0.to_string(), key.1))
        .unwrap_or_default();
    for x in &mut t {
        x.load_bits = bytes * 8;
    }
    t
}

/// A scalar global's size in bytes, whether it is a pointer, and its
/// initial value when it is a known integer.
type GlobalScalar = (u32, bool, Option<u64>);

/// An aggregate global's type and initializer.
type GlobalAggregate = (llvm_ir::TypeRef, Option<llvm_ir::ConstantRef>);

/// The globals [`globals`] may keep, by name: defined, mutable, not
/// thread-local, scalar (the first map) or of structs and arrays whose
/// fields may be kept (the second); `left` counts the others it cannot.
fn global_candidates(
    m: &Module,
    out: &mut VarMap,
    left: &mut impl FnMut(&str, &mut VarMap),
) -> (
    HashMap<String, GlobalScalar>,
    HashMap<String, GlobalAggregate>,
) {
    let mut candidates: HashMap<String, GlobalScalar> = HashMap::new();
    let mut agg_roots: HashMap<String, GlobalAggregate> = HashMap::new();
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
            if aggregate(m, pointee_type) {
                agg_roots.insert(name, (pointee_type.clone(), g.initializer.clone()));
            } else {
                left("global that is not a scalar", out);
            }
            continue;
        };
        let init = g.initializer.as_ref().and_then(|c| match c.as_ref() {
            Constant::Int { bits, value } if *bits <= 64 => Some(*value),
            Constant::Null(_) | Constant::AggregateZero(_) => Some(0),
            _ => None,
        });
        candidates.insert(name, (bytes, pointer, init));
    }
    (candidates, agg_roots)
}

/// How the module uses the scalar globals of `candidates`: those whose
/// address escapes (any reference other than a load's or store's
/// address, in an initializer or an instruction), and the stores to each.
fn global_uses(
    m: &Module,
    candidates: &HashMap<String, GlobalScalar>,
    low: &Lowered<'_>,
) -> (HashSet<String>, HashMap<String, Writes>) {
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
                                writes
                                    .entry(k)
                                    .or_default()
                                    .add(inst, written(&s.value), low);
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
    (escaped, writes)
}

/// Globals: defined, mutable, not thread-local, scalar, address used by
/// loads and stores only.
fn globals(
    m: &Module,
    low: &Lowered<'_>,
    tests: &mut TestMap,
    out: &mut VarMap,
    left: &mut impl FnMut(&str, &mut VarMap),
) {
    let (candidates, agg_roots) = global_candidates(m, out, left);
    let (escaped, mut writes) = global_uses(m, &candidates, low);
    aggregate_globals(m, agg_roots, low, tests, out, left);
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
            offset: 0,
            bytes,
            pointer,
            writes: w.by_node.into_iter().collect(),
            tests: take_tests(tests, (name, 0), bytes),
            from: Vec::new(),
            reads: None,
        });
    }
}

/// A declared scalar alloca: its variable, size in bytes and whether it
/// is a pointer.
type DeclaredScalar<'d> = (&'d crate::dbgvars::Declared, u32, bool);

/// The allocas of one function with a declared variable, by name.
struct Allocas<'d> {
    /// Of one scalar.
    allocas: HashMap<String, DeclaredScalar<'d>>,
    /// Of one struct or array, whose fields may be kept: its type.
    agg_roots: HashMap<String, llvm_ir::TypeRef>,
    /// Of one struct or array: its variable.
    agg_decl: HashMap<String, &'d crate::dbgvars::Declared>,
}

/// The allocas of `f` with a variable in `declared` (by block and
/// instruction), of one scalar or of one struct or array; `left` counts
/// the others.
fn declared_allocas<'d>(
    f_module: &Module,
    f: &llvm_ir::Function,
    declared: &'d HashMap<(usize, usize), crate::dbgvars::Declared>,
    out: &mut VarMap,
    left: &mut impl FnMut(&str, &mut VarMap),
) -> Allocas<'d> {
    let mut allocas: HashMap<String, DeclaredScalar<'d>> = HashMap::new();
    let mut agg_roots: HashMap<String, llvm_ir::TypeRef> = HashMap::new();
    let mut agg_decl: HashMap<String, &'d crate::dbgvars::Declared> = HashMap::new();
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
                None if one && aggregate(f_module, &a.allocated_type) => {
                    agg_roots.insert(name_str(&a.dest), a.allocated_type.clone());
                    agg_decl.insert(name_str(&a.dest), d);
                }
                _ => left("local that is not a scalar", out),
            }
        }
    }
    Allocas {
        allocas,
        agg_roots,
        agg_decl,
    }
}

/// How `f` uses its scalar `allocas`: those whose address escapes (any
/// use other than a load's or store's address), and the stores to each.
fn local_uses(
    f: &llvm_ir::Function,
    allocas: &HashMap<String, DeclaredScalar<'_>>,
    low: &Lowered<'_>,
) -> (HashSet<String>, HashMap<String, Writes>) {
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
                    let address_of_local = local(&s.value);
                    if let Some(n) = local(&s.address) {
                        // The address of a stack variable is never null.
                        let w = match address_of_local {
                            Some(_) => Written::NonNull,
                            None => written(&s.value),
                        };
                        writes.entry(n).or_default().add(inst, w, low);
                    }
                    if let Some(n) = address_of_local {
                        escaped.insert(n);
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
    (escaped, writes)
}

/// The scope of a local of `f` declared as `d`, `entry` its entry node.
fn local_scope(f: &llvm_ir::Function, d: &crate::dbgvars::Declared, entry: NodeId) -> VarScope {
    VarScope::Local {
        function: f.name.clone(),
        line: d.line,
        entry: entry.as_u32(),
        inlined_at: d.inlined_at,
    }
}

/// Locals of one function: allocas of one scalar with a declared variable,
/// address used by loads and stores only.
fn locals(
    f_module: &Module,
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
    let Allocas {
        allocas,
        agg_roots,
        agg_decl,
    } = declared_allocas(f_module, f, declared, out, left);
    // The loads a branch tests, by alloca (or field) when its function's
    // locals keep them (see `branch_tests`).
    let setjmp = crate::branch_tests::calls_setjmp(f);
    let mut agg = Aggregates::new(f_module, agg_roots.clone());
    if !agg_roots.is_empty() {
        agg.scan(&[f], low);
    }
    let mut tests = if setjmp {
        TestMap::new()
    } else {
        let resolve = |op: &Operand| match op {
            Operand::LocalOperand { name, .. } if allocas.contains_key(&name_str(name)) => {
                Some((name_str(name), 0))
            }
            Operand::LocalOperand { .. } => match agg.place(op) {
                Some(Some(p)) => Some((p.root, p.offset)),
                _ => None,
            },
            _ => None,
        };
        crate::branch_tests::tests_of(f, low.block_nodes.get(&f.name), low.icfg, &resolve)
    };
    if !agg_roots.is_empty() {
        let mut names: Vec<String> = agg_decl.keys().cloned().collect();
        names.sort();
        for name in names {
            let d = agg_decl[&name];
            match agg.fields_of(&name) {
                Err(why) => left(&format!("local struct or array whose {why}"), out),
                Ok(fields) => {
                    for (path, offset, bytes, pointer, writes) in fields {
                        out.vars.push(Var {
                            name: format!("{}{path}", d.name),
                            scope: local_scope(f, d, entry),
                            offset,
                            bytes,
                            pointer,
                            writes,
                            tests: take_tests(&mut tests, (&name, u64::from(offset)), bytes),
                            from: Vec::new(),
                            reads: None,
                        });
                    }
                }
            }
        }
    }
    if allocas.is_empty() {
        return;
    }
    let (escaped, mut writes) = local_uses(f, &allocas, low);
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
            scope: local_scope(f, d, entry),
            offset: 0,
            bytes,
            pointer,
            writes: w.by_node.into_iter().collect(),
            tests: take_tests(&mut tests, (name, 0), bytes),
            from: Vec::new(),
            reads: None,
        });
    }
}

/// Size and alignment in bytes of a type laid out in memory by the
/// x86-64 data layout (`e-m:e-...-i64:64-...-n8:16:32:64-S128`): integers
/// of 8 to 64 bits and pointers aligned to their size, arrays of their
/// element, structs (not packed) with each field at its alignment and the
/// size rounded up to the largest. None for anything else (floats,
/// vectors, packed or opaque structs, `i1`...): not laid out with
/// certainty, so not read.
fn layout(m: &Module, t: &Type, depth: u32) -> Option<(u64, u64)> {
    if depth > 32 {
        return None;
    }
    match t {
        Type::IntegerType { bits } if matches!(bits, 8 | 16 | 32 | 64) => {
            Some((u64::from(*bits / 8), u64::from(*bits / 8)))
        }
        Type::PointerType { .. } => Some((8, 8)),
        Type::ArrayType {
            element_type,
            num_elements,
        } => {
            let (s, a) = layout(m, element_type, depth + 1)?;
            Some((s.checked_mul(*num_elements as u64)?, a))
        }
        Type::StructType {
            element_types,
            is_packed: false,
        } => {
            let (mut off, mut align) = (0u64, 1u64);
            for e in element_types {
                let (s, a) = layout(m, e, depth + 1)?;
                off = off.checked_next_multiple_of(a)?.checked_add(s)?;
                align = align.max(a);
            }
            Some((off.checked_next_multiple_of(align)?, align))
        }
        Type::NamedStructType { name } => match m.types.named_struct_def(name)? {
            llvm_ir::types::NamedStructDef::Defined(t) => layout(m, t, depth + 1),
            llvm_ir::types::NamedStructDef::Opaque => None,
        },
        _ => None,
    }
}

/// Whether `t` is a struct or an array that [`layout`] lays out.
fn aggregate(m: &Module, t: &Type) -> bool {
    matches!(
        t,
        Type::ArrayType { .. } | Type::StructType { .. } | Type::NamedStructType { .. }
    ) && layout(m, t, 0).is_some()
}

/// The struct's field types (a named struct resolved).
fn struct_fields<'t>(m: &'t Module, t: &'t Type) -> Option<&'t [llvm_ir::TypeRef]> {
    match t {
        Type::StructType {
            element_types,
            is_packed: false,
        } => Some(element_types),
        Type::NamedStructType { name } => match m.types.named_struct_def(name)? {
            llvm_ir::types::NamedStructDef::Defined(t) => struct_fields(m, t),
            llvm_ir::types::NamedStructDef::Opaque => None,
        },
        _ => None,
    }
}

/// A place inside an aggregate variable: the variable (its IR name), the
/// byte offset, the type there and the field's path (`.1[2]`).
#[derive(Clone)]
struct Place {
    root: String,
    offset: u64,
    ty: llvm_ir::TypeRef,
    path: String,
}

/// The place a `getelementptr` with constant `indices` (None: one is not
/// a constant integer) over the pointer to `at` reaches: the first index
/// must be 0 (the object itself), each next one a field of a struct or an
/// element of an array within its bounds. None when it leaves the
/// variable or is not laid out.
fn step(m: &Module, at: &Place, indices: &[Option<u64>]) -> Option<Place> {
    let (first, rest) = indices.split_first()?;
    if *first != Some(0) {
        return None;
    }
    let mut p = at.clone();
    for i in rest {
        let i = (*i)?;
        let next = match p.ty.as_ref() {
            Type::ArrayType {
                element_type,
                num_elements,
            } => {
                if i >= *num_elements as u64 {
                    return None;
                }
                let (s, _) = layout(m, element_type, 0)?;
                p.path += &format!("[{i}]");
                (
                    p.offset.checked_add(s.checked_mul(i)?)?,
                    element_type.clone(),
                )
            }
            t => {
                let fields = struct_fields(m, t)?;
                let i = usize::try_from(i).ok()?;
                if i >= fields.len() {
                    return None;
                }
                let mut off = 0u64;
                for (k, f) in fields.iter().enumerate() {
                    let (s, a) = layout(m, f, 0)?;
                    off = off.checked_next_multiple_of(a)?;
                    if k == i {
                        break;
                    }
                    off += s;
                }
                p.path += &format!(".{i}");
                (p.offset.checked_add(off)?, fields[i].clone())
            }
        };
        (p.offset, p.ty) = next;
    }
    Some(p)
}

fn const_index(c: &Constant) -> Option<u64> {
    match c {
        Constant::Int { value, .. } => Some(*value),
        _ => None,
    }
}

fn op_index(op: &Operand) -> Option<u64> {
    match op {
        Operand::ConstantOperand(c) => const_index(c),
        _ => None,
    }
}

/// A stored field: its path, size, pointer-ness and writes.
type FieldWrites = (String, u32, bool, Writes);

/// The fields of the aggregate variables of one scope (the globals of the
/// module, or the locals of one function) being collected.
struct Aggregates<'m> {
    m: &'m Module,
    /// The candidates: IR name -> type.
    roots: HashMap<String, llvm_ir::TypeRef>,
    /// Locals (`getelementptr` results) that are places in a candidate.
    derived: HashMap<String, Place>,
    /// Candidates used otherwise than by loads and stores of their
    /// scalar fields by constant offsets.
    escaped: HashSet<String>,
    /// The stored fields of each candidate by offset: path, size,
    /// pointer-ness, writes.
    fields: HashMap<String, BTreeMap<u64, FieldWrites>>,
}

impl<'m> Aggregates<'m> {
    fn new(m: &'m Module, roots: HashMap<String, llvm_ir::TypeRef>) -> Self {
        Aggregates {
            m,
            roots,
            derived: HashMap::new(),
            escaped: HashSet::new(),
            fields: HashMap::new(),
        }
    }

    /// The place `op` addresses, when it is one (Some(None): it refers to
    /// a candidate, but not at a place known statically).
    fn place(&self, op: &Operand) -> Option<Option<Place>> {
        match op {
            Operand::LocalOperand { name, .. } => {
                let k = name_str(name);
                if let Some(p) = self.derived.get(&k) {
                    return Some(Some(p.clone()));
                }
                self.roots.get(&k).map(|t| {
                    Some(Place {
                        root: k,
                        offset: 0,
                        ty: t.clone(),
                        path: String::new(),
                    })
                })
            }
            Operand::ConstantOperand(c) => self.const_place(c),
            Operand::MetadataOperand => None,
        }
    }

    fn const_place(&self, c: &Constant) -> Option<Option<Place>> {
        match c {
            Constant::GlobalReference { name, .. } => {
                let k = name_str(name);
                self.roots.get(&k).map(|t| {
                    Some(Place {
                        root: k,
                        offset: 0,
                        ty: t.clone(),
                        path: String::new(),
                    })
                })
            }
            Constant::GetElementPtr(g) => {
                let at = self.const_place(&g.address)?;
                let idx: Vec<Option<u64>> = g.indices.iter().map(|i| const_index(i)).collect();
                Some(at.and_then(|at| step(self.m, &at, &idx)))
            }
            _ => None,
        }
    }

    /// Every candidate `op` mentions escapes.
    fn escape(&mut self, op: &Operand) {
        match op {
            Operand::LocalOperand { .. } => {
                if let Some(Some(p)) = self.place(op) {
                    self.escaped.insert(p.root);
                }
            }
            Operand::ConstantOperand(c) => self.escape_const(c),
            Operand::MetadataOperand => {}
        }
    }

    fn escape_const(&mut self, c: &llvm_ir::ConstantRef) {
        let mut hit = Vec::new();
        walk_constant(c, &mut |c| {
            if let Constant::GlobalReference { name, .. } = c {
                let k = name_str(name);
                if self.roots.contains_key(&k) {
                    hit.push(k);
                }
            }
        });
        self.escaped.extend(hit);
    }

    /// `op` used as the address of a load (`store`: None) or of a store
    /// of `store`: a scalar field by a known place, else an escape.
    fn access(&mut self, op: &Operand, store: Option<(&Instruction, &Operand)>, low: &Lowered<'_>) {
        match self.place(op) {
            None => self.escape(op),
            Some(None) => self.escape(op),
            Some(Some(p)) => match scalar(&p.ty) {
                Some((bytes, pointer)) => {
                    if let Some((inst, value)) = store {
                        self.fields
                            .entry(p.root)
                            .or_default()
                            .entry(p.offset)
                            .or_insert_with(|| (p.path, bytes, pointer, Writes::default()))
                            .3
                            .add(inst, written(value), low);
                    }
                }
                None => {
                    self.escaped.insert(p.root);
                }
            },
        }
    }

    /// Scans `functions`: first the `getelementptr` instructions over the
    /// candidates (to a fixpoint, so that the order of blocks does not
    /// matter), then every use.
    fn scan(&mut self, functions: &[&llvm_ir::Function], low: &Lowered<'_>) {
        for f in functions {
            // A `getelementptr`'s result is a local of its function.
            self.derived.clear();
            self.scan_function(f, low);
        }
    }

    fn scan_function(&mut self, f: &llvm_ir::Function, low: &Lowered<'_>) {
        loop {
            let mut grew = false;
            for bb in &f.basic_blocks {
                for inst in &bb.instrs {
                    let Instruction::GetElementPtr(g) = inst else {
                        continue;
                    };
                    let k = name_str(&g.dest);
                    if self.derived.contains_key(&k) {
                        continue;
                    }
                    let Some(at) = self.place(&g.address) else {
                        continue;
                    };
                    let idx: Vec<Option<u64>> = g.indices.iter().map(op_index).collect();
                    let same_type = at.as_ref().is_some_and(|p| p.ty == g.source_element_type);
                    match at.and_then(|p| step(self.m, &p, &idx)) {
                        Some(p) if same_type => {
                            self.derived.insert(k, p);
                            grew = true;
                        }
                        _ => self.escape(&g.address),
                    }
                }
            }
            if !grew {
                break;
            }
        }
        for bb in &f.basic_blocks {
            for inst in &bb.instrs {
                match inst {
                    Instruction::Load(l) => self.access(&l.address, None, low),
                    Instruction::Store(s) => {
                        self.escape(&s.value);
                        self.access(&s.address, Some((inst, &s.value)), low);
                    }
                    Instruction::GetElementPtr(g)
                        if self.derived.contains_key(&name_str(&g.dest)) =>
                    {
                        for i in &g.indices {
                            self.escape(i);
                        }
                    }
                    _ => instruction_operands(inst, &mut |op| self.escape(op)),
                }
            }
            terminator_operands(&bb.term, &mut |op| self.escape(op));
        }
    }

    /// The kept fields of the candidate `root`: (path, offset, bytes,
    /// pointer, writes), or why it is left out.
    #[allow(clippy::type_complexity)]
    fn fields_of(
        &mut self,
        root: &str,
    ) -> Result<Vec<(String, u32, u32, bool, Vec<(u32, Written)>)>, &'static str> {
        if self.escaped.contains(root) {
            return Err("address escapes");
        }
        let fields = self.fields.remove(root).unwrap_or_default();
        if fields.values().any(|f| f.3.unmapped) {
            return Err("stored by instructions without a node");
        }
        Ok(fields
            .into_iter()
            .filter_map(|(off, (path, bytes, pointer, w))| {
                Some((
                    path,
                    u32::try_from(off).ok()?,
                    bytes,
                    pointer,
                    w.by_node.into_iter().collect(),
                ))
            })
            .collect())
    }
}

/// The fields of the aggregate globals `roots` (name -> type, initializer)
/// kept as variables of their own.
fn aggregate_globals(
    m: &Module,
    roots: HashMap<String, (llvm_ir::TypeRef, Option<llvm_ir::ConstantRef>)>,
    low: &Lowered<'_>,
    tests: &mut TestMap,
    out: &mut VarMap,
    left: &mut impl FnMut(&str, &mut VarMap),
) {
    if roots.is_empty() {
        return;
    }
    let mut agg = Aggregates::new(
        m,
        roots
            .iter()
            .map(|(k, (t, _))| (k.clone(), t.clone()))
            .collect(),
    );
    let functions: Vec<&llvm_ir::Function> = m.functions.iter().collect();
    agg.scan(&functions, low);
    for g in &m.global_vars {
        if let Some(init) = &g.initializer {
            agg.escape_const(init);
        }
    }
    let mut names: Vec<&String> = roots.keys().collect();
    names.sort();
    for name in names {
        let (ty, init) = &roots[name];
        match agg.fields_of(name) {
            Err(why) => left(&format!("global struct or array whose {why}"), out),
            Ok(fields) => {
                let source = name.rsplit('.').next().unwrap_or(name);
                for (path, offset, bytes, pointer, writes) in fields {
                    let init = init
                        .as_ref()
                        .and_then(|c| init_at(m, c, ty, u64::from(offset), 0));
                    out.vars.push(Var {
                        name: format!("{source}{path}"),
                        scope: VarScope::Global {
                            symbol: name.clone(),
                            init,
                        },
                        offset,
                        bytes,
                        pointer,
                        writes,
                        tests: take_tests(tests, (name, u64::from(offset)), bytes),
                        from: Vec::new(),
                        reads: None,
                    });
                }
            }
        }
    }
}

/// The initial value of the scalar at byte `offset` of a constant `c` of
/// type `t`, when it is a known integer (or null).
fn init_at(m: &Module, c: &Constant, t: &Type, offset: u64, depth: u32) -> Option<u64> {
    if depth > 32 {
        return None;
    }
    match c {
        Constant::AggregateZero(_) | Constant::Null(_) => Some(0),
        Constant::Int { bits, value } if *bits <= 64 && offset == 0 => Some(*value),
        Constant::Array { elements, .. } => {
            let Type::ArrayType { element_type, .. } = t else {
                return None;
            };
            let (s, _) = layout(m, element_type, 0)?;
            let i = usize::try_from(offset / s).ok()?;
            init_at(m, elements.get(i)?, element_type, offset % s, depth + 1)
        }
        Constant::Struct {
            values,
            is_packed: false,
            ..
        } => {
            let fields = struct_fields(m, t)?;
            let mut off = 0u64;
            for (f, v) in fields.iter().zip(values) {
                let (s, a) = layout(m, f, 0)?;
                off = off.checked_next_multiple_of(a)?;
                if offset >= off && offset < off + s {
                    return init_at(m, v, f, offset - off, depth + 1);
                }
                off += s;
            }
            None
        }
        _ => None,
    }
}
