//! Where the values of the variable map's writes came from, and what each
//! function returns ([`Origin`], [`Return`]): the edges along which the
//! question "why was this value bad?" (issue 36) follows a value back
//! from the variable that held it at the crash, unchanged, through copies
//! and call results.
//!
//! A write's value has an origin when the stored operand is, through
//! `bitcast`s only (the value is unchanged):
//! * the result of a direct call (`Origin::Call`): then it is one of the
//!   callee's returns;
//! * a load of a variable of the map (`Origin::Copy`), in the block of
//!   the use with no store to the variable between: then it is that
//!   variable's value at the load, which one of its writes (or its
//!   initial or uninitialised value) made;
//! * a parameter of the function (`Origin::Arg`): then it is what one of
//!   the function's callers passed, and [`VarMap::calls`] lists, for
//!   each direct call (a `call` with a call site node), what each
//!   argument passes and where that came from.
//!
//! A function's returns are found from each `ret` of a value:
//! * a constant: that constant, at the `ret`'s node;
//! * a call's result or a load of a variable of the map: unknown, at the
//!   `ret`'s node, with that origin;
//! * a load of an alloca that is no variable (clang's return slot at
//!   `-O0`, where `return x;` stores to the slot and every `return` jumps
//!   to one `ret`), whose address is used by nothing but direct loads and
//!   stores: each store to the slot is a return, at its node, with what
//!   it stores and its origin; and when some path from the function's
//!   start reaches the load without a store to the slot (a path that
//!   falls off the end of a non-void function), an unknown return at the
//!   `ret`'s node;
//! * anything else: unknown, at the `ret`'s node.
//!
//! A function with a `ret` whose node is not known is left out of
//! [`VarMap::returns`] (not followed), as is one with no `ret` of a
//! value.
//!
//! For `why`'s other suspects, also: the faulting operands' origins
//! (`Deref`: a load's or store's pointer, a divisor, an indirect call's
//! callee); each call's argument nodes (the load that gave each one);
//! an array's elements as one field (`field_key_indexed`), with stores
//! of a function's address marked; accesses at a variable's index plus a
//! constant (`IndexUse`); branches comparing a variable with another
//! value (`BoundTest`) and testing a pointer field for null. None of
//! these is evidence about the path.

use crate::values::{written, Lowered};
use llvm_ir::{Constant, Function, Instruction, Module, Name, Operand, Terminator, Type};
use postmortem_core::NodeKind;
use postmortem_formats::vars::{
    BoundTest, CallArgs, Deref, FieldWrite, IndexUse, Origin, OutLocal, ParamWrite, Return, VarMap,
    VarScope, Written,
};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Adds the writes' origins and the functions' returns to `map`, made by
/// [`crate::values::scan`] for `m`.
pub(crate) fn add(
    m: &Module,
    declared: &crate::dbgvars::DeclaredVars,
    low: &Lowered<'_>,
    map: &mut VarMap,
) {
    let globals = global_vars(m, map);
    let mut from: BTreeMap<usize, BTreeMap<u32, Option<Origin>>> = BTreeMap::new();
    // The nodes that load each variable of `globals` and the functions'
    // locals (the others' reads are not known).
    let mut reads: BTreeMap<usize, Vec<u32>> = globals
        .values()
        .map(|&i| (i as usize, Vec::new()))
        .collect();
    for f in &m.functions {
        if !low.entries.contains_key(&f.name) {
            continue;
        }
        let locals = local_vars(f, declared.get(&f.name), map);
        let outs = out_locals(f, declared.get(&f.name), &locals, low);
        let first = map.out_locals.len() as u32;
        let cx = FnCx {
            f,
            types: &m.types,
            defs: defs(f),
            outs: outs
                .iter()
                .enumerate()
                .map(|(k, o)| (o.alloca.clone(), first + k as u32))
                .collect(),
            locals,
            globals: &globals,
        };
        cx.add_out_locals(&outs, low, map);
        let writes = cx.param_writes(low);
        if !writes.is_empty() {
            map.param_writes.insert(f.name.clone(), writes);
        }
        // The origins of the writes of the map's scalar variables.
        for &i in cx.locals.values() {
            reads.entry(i as usize).or_default();
        }
        for (bi, bb) in f.basic_blocks.iter().enumerate() {
            map.bounds.extend(cx.bound_tests(bi, low));
            map.field_tests.extend(cx.field_test(bi, low));
            for (ii, inst) in bb.instrs.iter().enumerate() {
                if let Instruction::Load(l) = inst {
                    if let (Some(var), Some(n)) = (
                        cx.var_at(&l.address),
                        low.load_nodes.get(&(inst as *const Instruction)),
                    ) {
                        reads.entry(var as usize).or_default().push(n.as_u32());
                    }
                }
                if let Some(d) = cx.deref(inst, low) {
                    map.derefs.push(d);
                }
                if let Some(u) = cx.index_use(inst, low) {
                    map.indexes.push(u);
                }
                if let Instruction::Call(c) = inst {
                    if let Some(site) = low.call_nodes.get(&(inst as *const Instruction)) {
                        let args = c
                            .arguments
                            .iter()
                            .map(|(op, _)| (cx.written_of(op), cx.origin(op, (bi, ii))))
                            .collect();
                        let arg_nodes = c
                            .arguments
                            .iter()
                            .map(|(op, _)| match cx.def_of(op) {
                                Some((_, _, load @ Instruction::Load(_))) => low
                                    .load_nodes
                                    .get(&(load as *const Instruction))
                                    .map(|n| n.as_u32()),
                                _ => None,
                            })
                            .collect();
                        let call = CallArgs {
                            site: site.as_u32(),
                            args,
                            arg_nodes,
                        };
                        match direct_callee(c) {
                            Some(callee) => map.calls.entry(callee).or_default().push(call),
                            None if c.function.is_right() => map.indirect.push(call),
                            None => {}
                        }
                    }
                }
                let Instruction::Store(s) = inst else {
                    continue;
                };
                let Some(node) = low.store_nodes.get(&(inst as *const Instruction)) else {
                    continue;
                };
                if let Some((k, indexed)) = cx.field_key_indexed(&s.address) {
                    // The address of a function of the program.
                    let function =
                        direct_callee_of(&s.value).filter(|name| low.entries.contains_key(name));
                    map.fields.entry(k).or_default().push(FieldWrite {
                        node: node.as_u32(),
                        written: cx.written_of(&s.value),
                        from: cx.origin(&s.value, (bi, ii)),
                        indexed,
                        function,
                    });
                }
                let Some(var) = cx.var_at(&s.address) else {
                    continue;
                };
                // The node's last store wins, as in its `writes`. An
                // update first: `p += n` is no element of another array.
                let origin = cx
                    .update_of(&s.value, var, (bi, ii))
                    .or_else(|| cx.origin(&s.value, (bi, ii)));
                from.entry(var as usize)
                    .or_default()
                    .insert(node.as_u32(), origin);
            }
        }
        if let Some(r) = cx.returns(low) {
            if !r.is_empty() {
                map.returns.insert(f.name.clone(), r);
            }
        }
    }
    for (var, mut nodes) in reads {
        nodes.sort_unstable();
        nodes.dedup();
        map.vars[var].reads = Some(nodes);
    }
    for (var, nodes) in from {
        map.vars[var].from = nodes
            .into_iter()
            .filter_map(|(n, o)| Some((n, o?)))
            .collect();
    }
}

/// The map's scalar globals (a whole scalar global, not a field of an
/// aggregate), by symbol.
fn global_vars(m: &Module, map: &VarMap) -> HashMap<String, u32> {
    let scalar: HashSet<String> = m
        .global_vars
        .iter()
        .filter(|g| match g.ty.as_ref() {
            Type::PointerType { pointee_type, .. } => matches!(
                pointee_type.as_ref(),
                Type::IntegerType { .. } | Type::PointerType { .. }
            ),
            _ => false,
        })
        .map(|g| name_str(&g.name))
        .collect();
    map.globals()
        .filter(|(_, v, symbol)| v.offset == 0 && scalar.contains(*symbol))
        .map(|(i, _, symbol)| (symbol.to_string(), i as u32))
        .collect()
}

/// The map's scalar locals of `f`, by alloca: an alloca declared as a
/// variable with one element of a scalar type whose (name, line) names
/// exactly one variable of the map and one declared alloca of `f`.
fn local_vars(
    f: &Function,
    declared: Option<&HashMap<(usize, usize), crate::dbgvars::Declared>>,
    map: &VarMap,
) -> HashMap<String, u32> {
    let Some(declared) = declared else {
        return HashMap::new();
    };
    // A function inlined twice declares its variables once per copy:
    // the copy's call site tells them apart.
    type Key<'k> = (&'k str, u32, Option<(u32, u32)>);
    let mut by_decl: HashMap<Key<'_>, Vec<String>> = HashMap::new();
    for (bi, bb) in f.basic_blocks.iter().enumerate() {
        for (ii, inst) in bb.instrs.iter().enumerate() {
            if let (Instruction::Alloca(a), Some(d)) = (inst, declared.get(&(bi, ii))) {
                let scalar = matches!(
                    a.allocated_type.as_ref(),
                    Type::IntegerType { .. } | Type::PointerType { .. }
                );
                if scalar {
                    by_decl
                        .entry((d.name.as_str(), d.line, d.inlined_at))
                        .or_default()
                        .push(name_str(&a.dest));
                }
            }
        }
    }
    let mut vars: HashMap<Key<'_>, Vec<u32>> = HashMap::new();
    for (i, v, line) in map.locals_of(&f.name) {
        let inlined_at = match &v.scope {
            VarScope::Local { inlined_at, .. } => *inlined_at,
            VarScope::Global { .. } => None,
        };
        if v.offset == 0 {
            vars.entry((v.name.as_str(), line, inlined_at))
                .or_default()
                .push(i as u32);
        }
    }
    by_decl
        .into_iter()
        .filter_map(|(k, allocas)| match (allocas.as_slice(), vars.get(&k)) {
            ([a], Some(v)) if v.len() == 1 => Some((a.clone(), v[0])),
            _ => None,
        })
        .collect()
}

fn name_str(n: &Name) -> String {
    match n {
        Name::Name(s) => s.to_string(),
        Name::Number(k) => k.to_string(),
    }
}

/// A constant integer operand's value.
fn const_int(op: &Operand) -> Option<u64> {
    match op {
        Operand::ConstantOperand(c) => match c.as_ref() {
            Constant::Int { value, .. } => Some(*value),
            _ => None,
        },
        _ => None,
    }
}

/// The function a call calls directly, by IR name.
fn direct_callee(c: &llvm_ir::instruction::Call) -> Option<String> {
    direct_callee_of(c.function.as_ref().right()?)
}

/// The global `op` names, when it is a reference to one (a function's
/// address, through no cast).
fn direct_callee_of(op: &Operand) -> Option<String> {
    match op {
        Operand::ConstantOperand(k) => match k.as_ref() {
            Constant::GlobalReference { name, .. } => Some(name_str(name)),
            _ => None,
        },
        _ => None,
    }
}

/// Each instruction's result, by name, with its place (block and
/// instruction index).
fn defs(f: &Function) -> HashMap<&Name, Def<'_>> {
    let mut out = HashMap::new();
    for (bi, bb) in f.basic_blocks.iter().enumerate() {
        for (ii, i) in bb.instrs.iter().enumerate() {
            if let Some(n) = i.try_get_result() {
                out.insert(n, (bi, ii, i));
            }
        }
    }
    out
}

/// What computes a value.
enum Source<'a> {
    /// An instruction.
    Inst(Def<'a>),
    /// The function's parameter of this index.
    Param(u32),
}

/// An instruction and its place: (block, index in the block, it).
type Def<'a> = (usize, usize, &'a Instruction);

/// Where a value is used: (block, index of the using instruction; the
/// block's length for its terminator).
type Use = (usize, usize);

/// One function, as the origins need it.
struct FnCx<'a> {
    f: &'a Function,
    types: &'a llvm_ir::types::Types,
    defs: HashMap<&'a Name, Def<'a>>,
    locals: HashMap<String, u32>,
    /// Its out-parameter locals ([`out_locals`]): alloca name to index in
    /// [`VarMap::out_locals`].
    outs: HashMap<String, u32>,
    globals: &'a HashMap<String, u32>,
}

/// A local of `f` whose address `f` passes to direct calls and uses in no
/// other way ([`postmortem_formats::vars::OutLocal`]), as found.
struct FoundOut<'a> {
    alloca: String,
    name: String,
    entry: u32,
    /// Its stores: (block, index, the store).
    stores: Vec<(usize, usize, &'a llvm_ir::instruction::Store)>,
    /// The calls that take its address: (site, callee, argument index).
    passed: Vec<(u32, String, u32)>,
}

/// The scalar locals of `f` (declared allocas of one integer or pointer,
/// not variables of the map) whose address is used only as the address
/// of loads and stores and as an argument of direct calls with a node,
/// passed to one call at least; stores with no node leave one out.
fn out_locals<'a>(
    f: &'a Function,
    declared: Option<&HashMap<(usize, usize), crate::dbgvars::Declared>>,
    locals: &HashMap<String, u32>,
    low: &Lowered<'_>,
) -> Vec<FoundOut<'a>> {
    let (Some(declared), Some(entry)) = (declared, low.entries.get(&f.name)) else {
        return Vec::new();
    };
    let mut found: Vec<FoundOut<'a>> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (bi, bb) in f.basic_blocks.iter().enumerate() {
        for (ii, inst) in bb.instrs.iter().enumerate() {
            let (Instruction::Alloca(a), Some(d)) = (inst, declared.get(&(bi, ii))) else {
                continue;
            };
            let one = matches!(&a.num_elements, Operand::ConstantOperand(c)
                if matches!(c.as_ref(), Constant::Int { value: 1, .. }));
            let scalar = matches!(
                a.allocated_type.as_ref(),
                Type::IntegerType { .. } | Type::PointerType { .. }
            );
            let k = name_str(&a.dest);
            if one && scalar && !locals.contains_key(&k) {
                index.insert(k.clone(), found.len());
                found.push(FoundOut {
                    alloca: k,
                    name: d.name.clone(),
                    entry: entry.as_u32(),
                    stores: Vec::new(),
                    passed: Vec::new(),
                });
            }
        }
    }
    let mut bad = vec![false; found.len()];
    let which = |op: &Operand| match op {
        Operand::LocalOperand { name, .. } => index.get(&name_str(name)).copied(),
        _ => None,
    };
    for (bi, bb) in f.basic_blocks.iter().enumerate() {
        for (ii, inst) in bb.instrs.iter().enumerate() {
            match inst {
                Instruction::Load(l) if which(&l.address).is_some() => {}
                Instruction::Store(s)
                    if which(&s.address).is_some() && which(&s.value).is_none() =>
                {
                    let k = which(&s.address).expect("an out-local");
                    if low.store_nodes.contains_key(&(inst as *const Instruction)) {
                        found[k].stores.push((bi, ii, s));
                    } else {
                        bad[k] = true;
                    }
                }
                Instruction::Call(c) => {
                    let site = low.call_nodes.get(&(inst as *const Instruction));
                    for (j, (op, _)) in c.arguments.iter().enumerate() {
                        let Some(k) = which(op) else { continue };
                        match (direct_callee(c), site) {
                            (Some(callee), Some(site)) => {
                                found[k].passed.push((site.as_u32(), callee, j as u32))
                            }
                            _ => bad[k] = true,
                        }
                    }
                    if let Some(k) = c.function.as_ref().right().and_then(which) {
                        bad[k] = true;
                    }
                }
                Instruction::Alloca(_) => {}
                _ => crate::operands::instruction_operands(inst, &mut |op| {
                    if let Some(k) = which(op) {
                        bad[k] = true;
                    }
                }),
            }
        }
        crate::operands::terminator_operands(&bb.term, &mut |op| {
            if let Some(k) = which(op) {
                bad[k] = true;
            }
        });
    }
    found
        .into_iter()
        .zip(bad)
        .filter(|(o, bad)| !bad && !o.passed.is_empty())
        .map(|(o, _)| o)
        .collect()
}

impl<'a> FnCx<'a> {
    /// Adds `outs`, the function's out-parameter locals, to `map`, in
    /// order (their indices are [`FnCx::outs`]'s).
    fn add_out_locals(&self, outs: &[FoundOut<'_>], low: &Lowered<'_>, map: &mut VarMap) {
        for o in outs {
            let stores = o
                .stores
                .iter()
                .filter_map(|&(bi, ii, s)| {
                    let inst = &self.f.basic_blocks[bi].instrs[ii];
                    let node = low.store_nodes.get(&(inst as *const Instruction))?;
                    Some((
                        node.as_u32(),
                        self.written_of(&s.value),
                        self.origin(&s.value, (bi, ii)),
                    ))
                })
                .collect();
            let passed = o
                .passed
                .iter()
                .map(|(site, callee, j)| (*site, Origin::Through(callee.clone(), *j)))
                .collect();
            map.out_locals.push(OutLocal {
                function: self.f.name.clone(),
                name: o.name.clone(),
                entry: o.entry,
                stores,
                passed,
            });
        }
    }

    /// The function's stores through a pointer parameter (`*out = v`: a
    /// store whose address is a load of an alloca that holds the
    /// parameter, the prologue's slot: stored once, from the parameter,
    /// and otherwise only loaded).
    fn param_writes(&self, low: &Lowered<'_>) -> Vec<ParamWrite> {
        // The slots: alloca name to parameter index.
        let mut stored: HashMap<String, Vec<Option<u32>>> = HashMap::new();
        let mut other_use: HashSet<String> = HashSet::new();
        let slot_of = |op: &Operand| match op {
            Operand::LocalOperand { name, .. }
                if matches!(self.defs.get(name), Some((_, _, Instruction::Alloca(_)))) =>
            {
                Some(name_str(name))
            }
            _ => None,
        };
        for bb in &self.f.basic_blocks {
            for inst in &bb.instrs {
                match inst {
                    Instruction::Load(l) if slot_of(&l.address).is_some() => {}
                    Instruction::Store(s) if slot_of(&s.address).is_some() => {
                        let param = match self.source(&s.value) {
                            Some(Source::Param(i)) => Some(i),
                            _ => None,
                        };
                        stored
                            .entry(slot_of(&s.address).expect("a slot"))
                            .or_default()
                            .push(param);
                        if let Some(k) = slot_of(&s.value) {
                            other_use.insert(k);
                        }
                    }
                    Instruction::Alloca(_) => {}
                    _ => crate::operands::instruction_operands(inst, &mut |op| {
                        if let Some(k) = slot_of(op) {
                            other_use.insert(k);
                        }
                    }),
                }
            }
        }
        let slots: HashMap<String, u32> = stored
            .into_iter()
            .filter(|(k, _)| !other_use.contains(k))
            .filter_map(|(k, ps)| match ps.as_slice() {
                [Some(i)] => Some((k, *i)),
                _ => None,
            })
            .collect();
        let mut out = Vec::new();
        // The parameter whose pointer `op` is: a load of its slot.
        let param_of = |op: &Operand| match self.def_of(op) {
            Some((_, _, Instruction::Load(l))) => {
                slot_of(&l.address).and_then(|k| slots.get(&k).copied())
            }
            _ => None,
        };
        for (bi, bb) in self.f.basic_blocks.iter().enumerate() {
            for (ii, inst) in bb.instrs.iter().enumerate() {
                let key = inst as *const Instruction;
                match inst {
                    Instruction::Store(s) => {
                        let (Some(node), Some(param)) =
                            (low.store_nodes.get(&key), param_of(&s.address))
                        else {
                            continue;
                        };
                        out.push(ParamWrite {
                            param,
                            node: node.as_u32(),
                            written: self.written_of(&s.value),
                            from: self.origin(&s.value, (bi, ii)),
                            passed_on: None,
                        });
                    }
                    Instruction::Call(c) => {
                        let (Some(site), Some(callee)) =
                            (low.call_nodes.get(&key), direct_callee(c))
                        else {
                            continue;
                        };
                        for (j, (op, _)) in c.arguments.iter().enumerate() {
                            let pointer = matches!(
                                llvm_ir::types::Typed::get_type(op, self.types).as_ref(),
                                Type::PointerType { .. }
                            );
                            if let Some(param) = param_of(op).filter(|_| pointer) {
                                out.push(ParamWrite {
                                    param,
                                    node: site.as_u32(),
                                    written: Written::Unknown,
                                    from: None,
                                    passed_on: Some(Origin::Through(callee.clone(), j as u32)),
                                });
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        out
    }

    /// The map's variable at the address `op`, when it is one.
    fn var_at(&self, op: &Operand) -> Option<u32> {
        match op {
            Operand::LocalOperand { name, .. } => self.locals.get(&name_str(name)).copied(),
            Operand::ConstantOperand(c) => match c.as_ref() {
                Constant::GlobalReference { name, .. } => {
                    self.globals.get(&name_str(name)).copied()
                }
                _ => None,
            },
            Operand::MetadataOperand => None,
        }
    }

    /// The out-parameter local at the address `op`, when it is one.
    fn out_at(&self, op: &Operand) -> Option<u32> {
        match op {
            Operand::LocalOperand { name, .. } => self.outs.get(&name_str(name)).copied(),
            _ => None,
        }
    }

    /// The instruction that computes `op`, through `bitcast`s, and its
    /// place.
    fn def_of(&self, op: &Operand) -> Option<Def<'a>> {
        match self.source(op)? {
            Source::Inst(d) => Some(d),
            Source::Param(_) => None,
        }
    }

    /// What computes `op`, through `bitcast`s: an instruction or a
    /// parameter of the function.
    fn source(&self, op: &Operand) -> Option<Source<'a>> {
        let mut op = op.clone();
        for _ in 0..8 {
            let Operand::LocalOperand { name, .. } = &op else {
                return None;
            };
            match self.defs.get(name) {
                Some((_, _, Instruction::BitCast(b))) => op = b.operand.clone(),
                Some(&d) => return Some(Source::Inst(d)),
                None => {
                    let i = self.f.parameters.iter().position(|p| &p.name == name)?;
                    return Some(Source::Param(i as u32));
                }
            }
        }
        None
    }

    /// Where the value `op`, used at `at`, came from, unchanged. A load
    /// is a copy of its variable only in the block of the use with no
    /// store to the variable between them (so that the variable's value
    /// at the use is the one loaded: a walk back from the use meets the
    /// stores that can have made it).
    fn origin(&self, op: &Operand, at: Use) -> Option<Origin> {
        self.origin_in(op, at, true)
    }

    /// [`FnCx::origin`], with `phis`: whether a `phi` is followed to its
    /// incoming values (one level: not a `phi`'s incoming `phi`).
    fn origin_in(&self, op: &Operand, at: Use, phis: bool) -> Option<Origin> {
        let def = match self.source(op)? {
            Source::Param(i) => return Some(Origin::Arg(i)),
            Source::Inst(d) => d,
        };
        match def {
            (_, _, Instruction::Call(c)) => direct_callee(c).map(Origin::Call),
            (_, _, Instruction::Load(l)) if self.field_key(&l.address).is_some() => {
                self.field_key(&l.address).map(Origin::Field)
            }
            (bi, ii, Instruction::Load(l))
                if bi == at.0 && ii < at.1 && self.out_at(&l.address).is_some() =>
            {
                self.out_at(&l.address).map(Origin::OutLocal)
            }
            (bi, ii, Instruction::Load(l)) => {
                let var = self.var_at(&l.address)?;
                if bi != at.0 || ii >= at.1 {
                    return None;
                }
                let stored = self.f.basic_blocks[bi].instrs[ii + 1..at.1].iter().any(
                    |i| matches!(i, Instruction::Store(s) if self.var_at(&s.address) == Some(var)),
                );
                (!stored).then_some(Origin::Copy(var))
            }
            // `&p->first`, `&a[0]`: the same address as `p`.
            (_, _, Instruction::GetElementPtr(g))
                if g.indices.iter().all(|i| const_int(i) == Some(0)) =>
            {
                self.origin_in(&g.address, at, phis)
            }
            // `&a[i + 1]`: an element the index chose.
            (bi, _, Instruction::GetElementPtr(g)) => {
                let mut varying = g.indices.iter().filter(|i| const_int(i).is_none());
                match (varying.next(), varying.next()) {
                    (Some(i), None) => self.var_offset(i, bi).map(|(v, _)| Origin::Element(v)),
                    _ => None,
                }
            }
            (_, _, Instruction::Phi(p)) if phis => {
                let incoming: Vec<Option<Origin>> = p
                    .incoming_values
                    .iter()
                    .map(|(v, from)| {
                        let b = self.f.basic_blocks.iter().position(|bb| &bb.name == from)?;
                        let end = self.f.basic_blocks[b].instrs.len();
                        self.origin_in(v, (b, end), false)
                    })
                    .collect();
                incoming
                    .iter()
                    .any(Option::is_some)
                    .then_some(Origin::Either(incoming))
            }
            _ => None,
        }
    }

    /// `op` as a variable's value loaded in block `bi` plus a constant
    /// (through `sext`, `zext`, `trunc`, and additions and subtractions
    /// of constants in that block): the variable and the constant.
    fn var_offset(&self, op: &Operand, bi: usize) -> Option<(u32, i64)> {
        let mut op = op.clone();
        let mut offset: i64 = 0;
        for _ in 0..8 {
            let (b, _, def) = self.def_of(&op)?;
            if b != bi {
                return None;
            }
            op = match def {
                Instruction::SExt(x) => x.operand.clone(),
                Instruction::ZExt(x) => x.operand.clone(),
                Instruction::Trunc(x) => x.operand.clone(),
                Instruction::Add(a) => {
                    let (v, k) = match (const_int(&a.operand0), const_int(&a.operand1)) {
                        (None, Some(k)) => (&a.operand0, k),
                        (Some(k), None) => (&a.operand1, k),
                        _ => return None,
                    };
                    offset = offset.checked_add(i64::try_from(k).ok().filter(|k| *k < 1 << 31)?)?;
                    v.clone()
                }
                Instruction::Sub(a) => {
                    let k = const_int(&a.operand1).filter(|k| *k < 1 << 31)?;
                    offset = offset.checked_sub(k as i64)?;
                    a.operand0.clone()
                }
                Instruction::Load(l) => return Some((self.var_at(&l.address)?, offset)),
                _ => return None,
            };
        }
        None
    }

    /// `op` through `sext`, `zext` and `trunc`: the value converted.
    fn uncast(&self, op: &Operand) -> Operand {
        let mut op = op.clone();
        for _ in 0..8 {
            op = match self.def_of(&op) {
                Some((_, _, Instruction::SExt(x))) => x.operand.clone(),
                Some((_, _, Instruction::ZExt(x))) => x.operand.clone(),
                Some((_, _, Instruction::Trunc(x))) => x.operand.clone(),
                _ => break,
            };
        }
        op
    }

    /// `Origin::Update(var)` when `op`, stored to `var` at `at`, is an
    /// integer operation on `var`'s own value loaded in that block with
    /// no store to it between (`x = x - y`, `x -= n`, through `sext`,
    /// `zext`, `trunc`), or a pointer's step by a variable amount (`p +=
    /// n`: a `getelementptr` of one index that is no constant); with the
    /// other operand's origin.
    fn update_of(&self, op: &Operand, var: u32, at: Use) -> Option<Origin> {
        let (b, _, inst) = self.def_of(op)?;
        if b != at.0 {
            return None;
        }
        let (x, y) = match inst {
            Instruction::GetElementPtr(g)
                if g.indices.len() == 1 && const_int(&g.indices[0]).is_none() =>
            {
                (&g.address, &g.indices[0])
            }
            Instruction::Add(i) => (&i.operand0, &i.operand1),
            Instruction::Sub(i) => (&i.operand0, &i.operand1),
            Instruction::Mul(i) => (&i.operand0, &i.operand1),
            Instruction::Shl(i) => (&i.operand0, &i.operand1),
            Instruction::LShr(i) => (&i.operand0, &i.operand1),
            Instruction::AShr(i) => (&i.operand0, &i.operand1),
            Instruction::And(i) => (&i.operand0, &i.operand1),
            Instruction::Or(i) => (&i.operand0, &i.operand1),
            Instruction::Xor(i) => (&i.operand0, &i.operand1),
            _ => return None,
        };
        let own = |op: &Operand| self.origin(&self.uncast(op), at) == Some(Origin::Copy(var));
        let other = match (own(x), own(y)) {
            (true, _) => y,
            (false, true) => x,
            (false, false) => return None,
        };
        let with = self
            .origin(&self.uncast(other), at)
            .filter(|o| *o != Origin::Copy(var))
            .map(Box::new);
        // The earlier value: a parameter when the block's last store to
        // the variable before the update stored one (the prologue).
        let mut stores = self.f.basic_blocks[at.0].instrs[..at.1]
            .iter()
            .filter_map(|i| match i {
                Instruction::Store(s) if self.var_at(&s.address) == Some(var) => Some(&s.value),
                _ => None,
            });
        let param = match stores.next_back().map(|v| self.source(v)) {
            Some(Some(Source::Param(i))) => Some(i),
            _ => None,
        };
        Some(Origin::Update(var, param, with))
    }

    /// What the value `op` is, as [`written`] says, and for a pointer
    /// computed by an `inbounds` `getelementptr` whose first index (the
    /// element step: `p + 1`, `s->next_in++`) is a nonzero constant and
    /// whose other indices are constants: not null (`NULL` plus such an
    /// offset is a small nonzero address on the machine, and poison in
    /// LLVM).
    fn written_of(&self, op: &Operand) -> Written {
        let w = written(op);
        if w != Written::Unknown {
            return w;
        }
        match self.def_of(op) {
            Some((_, _, Instruction::GetElementPtr(g)))
                if g.in_bounds
                    && g.indices.iter().all(|i| const_int(i).is_some())
                    && g.indices
                        .first()
                        .and_then(const_int)
                        .is_some_and(|k| k != 0) =>
            {
                Written::NonNull
            }
            // The address of a stack slot.
            Some((_, _, Instruction::Alloca(_))) => Written::NonNull,
            _ => Written::Unknown,
        }
    }

    /// The key of the struct field at address `op` (``struct.EState.17``:
    /// the innermost named struct the constant indices step into, and the
    /// field's index in it, so that `bzf->strm.next_in` and
    /// `s->strm->next_in` are one field), when `op` is such a
    /// `getelementptr` (through `bitcast`s).
    fn field_key(&self, op: &Operand) -> Option<String> {
        self.field_key_indexed(op).map(|(k, _)| k)
    }

    /// [`Self::field_key`], and whether an array's index on the way is not
    /// a constant (an element of an array, `t->a[i]`, `g_words[i]`: the
    /// array's field, or a global array ``g_words[]``, with every element
    /// one field).
    fn field_key_indexed(&self, op: &Operand) -> Option<(String, bool)> {
        let (_, _, Instruction::GetElementPtr(g)) = self.def_of(op)? else {
            return None;
        };
        let (first, rest) = g.indices.split_first()?;
        if rest.is_empty() || const_int(first) != Some(0) {
            return None;
        }
        let mut ty = g.source_element_type.clone();
        let mut field: Option<(String, u64)> = None;
        let mut indexed = false;
        for i in rest {
            if let Type::ArrayType { element_type, .. } = ty.as_ref() {
                indexed |= const_int(i).is_none();
                ty = element_type.clone();
                continue;
            }
            let k = const_int(i)?;
            let (name, elements) = match ty.as_ref() {
                Type::NamedStructType { name } => match self.types.named_struct_def(name)? {
                    llvm_ir::types::NamedStructDef::Defined(t) => match t.as_ref() {
                        Type::StructType { element_types, .. } => {
                            (Some(name.clone()), element_types.clone())
                        }
                        _ => return None,
                    },
                    llvm_ir::types::NamedStructDef::Opaque => return None,
                },
                Type::StructType { element_types, .. } => (None, element_types.clone()),
                Type::ArrayType { element_type, .. } => {
                    ty = element_type.clone();
                    continue;
                }
                _ => return None,
            };
            let next = elements.get(usize::try_from(k).ok()?)?.clone();
            // An anonymous struct keeps the named one's field.
            if let Some(n) = name {
                field = Some((n, k));
            }
            ty = next;
        }
        // A union is a struct of one member, reached through a cast: its
        // field is the whole union (`uv->v.p` and `uv->v.offset` are one).
        if let Some((n, k)) = field {
            return Some((format!("{n}.{k}"), indexed));
        }
        // An element of an array that is itself a field, or a global.
        if !matches!(g.source_element_type.as_ref(), Type::ArrayType { .. }) {
            return None;
        }
        match &g.address {
            Operand::ConstantOperand(k) => match k.as_ref() {
                Constant::GlobalReference { name, .. } => {
                    Some((format!("{}[]", name_str(name)), indexed))
                }
                _ => None,
            },
            a => self
                .field_key_indexed(a)
                .map(|(k, inner)| (k, inner || indexed)),
        }
    }

    /// The access or division of `inst` whose pointer or divisor comes
    /// from a field or a call (through `getelementptr`s: the faulting
    /// instruction's base register holds that pointer, the offsets folded
    /// into it).
    fn deref(&self, inst: &Instruction, low: &Lowered<'_>) -> Option<Deref> {
        let key = inst as *const Instruction;
        let (op, div, node) = match inst {
            Instruction::Load(l) => (&l.address, false, low.load_nodes.get(&key)?),
            Instruction::Store(s) => (&s.address, false, low.store_nodes.get(&key)?),
            Instruction::UDiv(d) => (&d.operand1, true, low.load_nodes.get(&key)?),
            Instruction::SDiv(d) => (&d.operand1, true, low.load_nodes.get(&key)?),
            Instruction::URem(d) => (&d.operand1, true, low.load_nodes.get(&key)?),
            Instruction::SRem(d) => (&d.operand1, true, low.load_nodes.get(&key)?),
            // An indirect call: its callee, loaded from a field or returned.
            Instruction::Call(c) if direct_callee(c).is_none() => {
                let f = c.function.as_ref().right()?;
                let d = self.deref_of(f, false, low.call_nodes.get(&key)?)?;
                return Some(Deref { call: true, ..d });
            }
            _ => return None,
        };
        self.deref_of(op, div, node)
    }

    /// The access of `inst` (a load or a store) at an index that is a
    /// variable's value, loaded in the access's block, plus a constant:
    /// the address is a `getelementptr` whose only index that is no
    /// constant is that value, through `sext`, `zext`, `trunc` and the
    /// addition or subtraction of constants.
    fn index_use(&self, inst: &Instruction, low: &Lowered<'_>) -> Option<IndexUse> {
        let key = inst as *const Instruction;
        let (addr, node) = match inst {
            Instruction::Load(l) => (&l.address, low.load_nodes.get(&key)?),
            Instruction::Store(s) => (&s.address, low.store_nodes.get(&key)?),
            _ => return None,
        };
        let (bi, _, Instruction::GetElementPtr(g)) = self.def_of(addr)? else {
            return None;
        };
        let mut varying = g.indices.iter().filter(|i| const_int(i).is_none());
        let (Some(op), None) = (varying.next(), varying.next()) else {
            return None;
        };
        let (var, offset) = self.var_offset(op, bi)?;
        Some(IndexUse {
            node: node.as_u32(),
            var,
            offset,
        })
    }

    /// The field that block `bi` branches on testing it for NULL: `icmp
    /// eq/ne (load field), null` (through C's truth values), with the
    /// branch's node.
    fn field_test(&self, bi: usize, low: &Lowered<'_>) -> Option<(u32, String)> {
        let bb = &self.f.basic_blocks[bi];
        let Terminator::CondBr(br) = &bb.term else {
            return None;
        };
        let range = low.block_nodes.get(&self.f.name)?.get(bi)?;
        let branch = range.end.checked_sub(1).filter(|&n| n >= range.start)?;
        let (cond, _) = crate::branch_tests::peel(&bb.instrs, &br.condition);
        let (b, _, Instruction::ICmp(c)) = self.def_of(&cond)? else {
            return None;
        };
        if b != bi
            || !matches!(
                c.predicate,
                llvm_ir::IntPredicate::EQ | llvm_ir::IntPredicate::NE
            )
        {
            return None;
        }
        let zero = |op: &Operand| matches!(op, Operand::ConstantOperand(k) if matches!(k.as_ref(), Constant::Null(_)));
        let other = match (zero(&c.operand0), zero(&c.operand1)) {
            (false, true) => &c.operand0,
            (true, false) => &c.operand1,
            _ => return None,
        };
        let (x, _, Instruction::Load(l)) = self.def_of(other)? else {
            return None;
        };
        (x == bi).then_some(())?;
        Some((branch, self.field_key(&l.address)?))
    }

    /// The comparisons of a variable with another value that is no
    /// constant on which block `bi` branches (each side that is a
    /// variable's load, with the other side's origin).
    fn bound_tests(&self, bi: usize, low: &Lowered<'_>) -> Vec<BoundTest> {
        let mut out = Vec::new();
        let bb = &self.f.basic_blocks[bi];
        let Terminator::CondBr(br) = &bb.term else {
            return out;
        };
        let Some(range) = low.block_nodes.get(&self.f.name).and_then(|r| r.get(bi)) else {
            return out;
        };
        let Some(branch) = range.end.checked_sub(1).filter(|&n| n >= range.start) else {
            return out;
        };
        let (cond, _) = crate::branch_tests::peel(&bb.instrs, &br.condition);
        let Some((b, ci, Instruction::ICmp(c))) = self.def_of(&cond) else {
            return out;
        };
        if b != bi {
            return out;
        }
        // Through the conversions and constant steps: the value compared
        // as it was loaded (`i < n`, `key - 1 < limit`).
        let (a, b) = (self.uncast(&c.operand0), self.uncast(&c.operand1));
        for (this, other) in [(&a, &b), (&b, &a)] {
            let var = self.var_offset(this, bi).map(|(v, _)| v);
            let (Some(var), Some(bound)) = (var, self.origin(other, (bi, ci))) else {
                continue;
            };
            out.push(BoundTest { branch, var, bound });
        }
        out
    }

    /// The access at `node` of the pointer (divisor) `op`: where that came
    /// from, through constant offsets.
    fn deref_of(&self, op: &Operand, div: bool, node: &postmortem_core::NodeId) -> Option<Deref> {
        let mut op = op.clone();
        for _ in 0..8 {
            match self.def_of(&op)? {
                (_, _, Instruction::GetElementPtr(g)) if !div => op = g.address.clone(),
                (_, _, Instruction::Call(c)) => {
                    return Some(Deref {
                        node: node.as_u32(),
                        from: Origin::Call(direct_callee(c)?),
                        div,
                        call: false,
                    })
                }
                (_, _, Instruction::Load(l)) => {
                    let from = match self.out_at(&l.address) {
                        Some(k) => Origin::OutLocal(k),
                        None => Origin::Field(self.field_key(&l.address)?),
                    };
                    return Some(Deref {
                        node: node.as_u32(),
                        from,
                        div,
                        call: false,
                    });
                }
                _ => return None,
            }
        }
        None
    }

    /// Every way the function returns a value (see the module docs); None
    /// when a `ret`'s node is not known.
    fn returns(&self, low: &Lowered<'_>) -> Option<Vec<Return>> {
        let blocks = low.block_nodes.get(&self.f.name)?;
        let mut out = Vec::new();
        for (bi, bb) in self.f.basic_blocks.iter().enumerate() {
            let Terminator::Ret(r) = &bb.term else {
                continue;
            };
            let Some(op) = &r.return_operand else {
                continue;
            };
            let range = blocks.get(bi)?;
            let node = range.end.checked_sub(1).filter(|&n| n >= range.start)?;
            let leaves = low
                .icfg
                .succs(postmortem_core::NodeId::new(node as usize))
                .any(|(s, _)| low.icfg.kind(s) == NodeKind::Exit);
            if !leaves {
                return None;
            }
            let at_ret = |written, from| Return {
                node,
                written,
                from,
            };
            if let Operand::ConstantOperand(_) = op {
                out.push(at_ret(written(op), None));
                continue;
            }
            let at = (bi, bb.instrs.len());
            match self.def_of(op) {
                Some((_, _, Instruction::Load(l))) if self.var_at(&l.address).is_none() => {
                    match self.slot_returns(&l.address, bi, low) {
                        Some((stores, maybe_unset)) => {
                            out.extend(stores);
                            if maybe_unset {
                                out.push(at_ret(Written::Unknown, None));
                            }
                        }
                        None => out.push(at_ret(Written::Unknown, None)),
                    }
                }
                _ => out.push(at_ret(Written::Unknown, self.origin(op, at))),
            }
        }
        Some(out)
    }

    /// For a return slot `addr` loaded in block `load_block` (at its
    /// `ret`): the stores to it as returns, and whether some path from
    /// the function's start reaches the load with no store to it. None
    /// when `addr` is not an alloca of `f` used by nothing but direct
    /// loads and stores, or a store to it has no node.
    fn slot_returns(
        &self,
        addr: &Operand,
        load_block: usize,
        low: &Lowered<'_>,
    ) -> Option<(Vec<Return>, bool)> {
        let Operand::LocalOperand { name: slot, .. } = addr else {
            return None;
        };
        if !matches!(self.defs.get(slot), Some((_, _, Instruction::Alloca(_)))) {
            return None;
        }
        let is_slot =
            |op: &Operand| matches!(op, Operand::LocalOperand { name, .. } if name == slot);
        let mut stores = Vec::new();
        let mut stored_in = vec![false; self.f.basic_blocks.len()];
        for (bi, bb) in self.f.basic_blocks.iter().enumerate() {
            for (ii, inst) in bb.instrs.iter().enumerate() {
                match inst {
                    Instruction::Load(l) if is_slot(&l.address) => {}
                    Instruction::Store(s) if is_slot(&s.address) && !is_slot(&s.value) => {
                        let node = low.store_nodes.get(&(inst as *const Instruction))?;
                        stores.push(Return {
                            node: node.as_u32(),
                            written: self.written_of(&s.value),
                            from: self.origin(&s.value, (bi, ii)),
                        });
                        stored_in[bi] = true;
                    }
                    Instruction::Alloca(a) if &a.dest == slot => {}
                    _ => {
                        let mut uses = false;
                        crate::operands::instruction_operands(inst, &mut |op| {
                            uses |= is_slot(op);
                        });
                        if uses {
                            return None;
                        }
                    }
                }
            }
            let mut uses = false;
            crate::operands::terminator_operands(&bb.term, &mut |op| uses |= is_slot(op));
            if uses {
                return None;
            }
        }
        // The load is the `ret` block's; a store in that block before it
        // sets the slot on every path through it.
        let before_load = self.f.basic_blocks[load_block]
            .instrs
            .iter()
            .any(|i| matches!(i, Instruction::Store(s) if is_slot(&s.address)));
        let maybe_unset = !before_load && self.unset_path(load_block, &stored_in);
        Some((stores, maybe_unset))
    }

    /// Whether some path from the first block reaches block `to` through
    /// blocks none of which stores to the slot (`stored_in`).
    fn unset_path(&self, to: usize, stored_in: &[bool]) -> bool {
        let index = crate::sancov::block_index(self.f);
        let mut seen = vec![false; self.f.basic_blocks.len()];
        let mut stack = vec![0usize];
        while let Some(b) = stack.pop() {
            if seen[b] {
                continue;
            }
            seen[b] = true;
            if b == to {
                return true;
            }
            if stored_in[b] {
                continue;
            }
            for s in crate::sancov::successors(&self.f.basic_blocks[b].term) {
                if let Some(&i) = index.get(s) {
                    stack.push(i);
                }
            }
        }
        false
    }
}
