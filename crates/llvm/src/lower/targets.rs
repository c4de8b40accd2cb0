//! Which functions a function pointer may hold: the address-taken
//! functions of a compatible type, or, where every value of a pointer is
//! traced to function constants, just those (sound for C, which casts
//! function pointers freely; see the crate docs).

use super::index::{FnInfo, ModuleIndex};
use super::FnId;
use crate::operands::instruction_operands;
use llvm_ir::function::ParameterAttribute;
use llvm_ir::{Function, Instruction, Operand, Terminator, Type, TypeRef};
use std::collections::HashMap;
use std::rc::Rc;

/// The arguments of a call.
pub(super) type Args = [(Operand, Vec<ParameterAttribute>)];

/// The signature of an indirect call, as the cache key of its targets.
#[derive(PartialEq, Eq, Hash)]
pub(super) struct CallSig {
    ret: TypeRef,
    args: Vec<TypeRef>,
    var_arg: bool,
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

/// Direct calls of each defined function: (calling function, the call's
/// arguments).
type Callers<'m> = HashMap<FnId, Vec<(&'m Function, &'m Args)>>;

/// The resolver of function pointers, with its caches.
pub(super) struct Targets<'a, 'm> {
    ix: &'a ModuleIndex<'m>,
    /// The targets of each signature.
    indirect: HashMap<CallSig, Rc<[FnId]>>,
    /// Built on first use (see [`Targets::callers`]).
    callers: Option<Callers<'m>>,
}

impl<'a, 'm> Targets<'a, 'm> {
    pub(super) fn new(ix: &'a ModuleIndex<'m>) -> Self {
        Targets {
            ix,
            indirect: HashMap::new(),
            callers: None,
        }
    }

    /// The signature of the function `arg` points to, if its type is a
    /// pointer to a function.
    pub(super) fn pointee_sig(&self, arg: &Operand) -> Option<CallSig> {
        let ty = self.ix.m.types.type_of(arg);
        let Type::PointerType { pointee_type, .. } = ty.as_ref() else {
            return None;
        };
        let Type::FuncType {
            result_type,
            param_types,
            is_var_arg,
        } = pointee_type.as_ref()
        else {
            return None;
        };
        Some(CallSig {
            ret: result_type.clone(),
            args: param_types.clone(),
            var_arg: *is_var_arg,
        })
    }

    /// The address-taken functions an indirect call may reach: same number
    /// of parameters (or enough for a variadic callee) and compatible
    /// parameter and return types.
    pub(super) fn indirect_targets(
        &mut self,
        callee_op: Option<&Operand>,
        args: &Args,
    ) -> Rc<[FnId]> {
        let types = &self.ix.m.types;
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

    /// The address-taken functions whose type fits `sig`.
    pub(super) fn targets_for(&mut self, sig: CallSig) -> Rc<[FnId]> {
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
        let t: Rc<[FnId]> = self
            .ix
            .address_taken
            .iter()
            .copied()
            .filter(|&i| fits(self.ix.info(i)))
            .collect();
        self.indirect.insert(sig, t.clone());
        t
    }

    /// The address-taken functions of a signal handler's type (`void
    /// (int)` or `void (int, ptr, ptr)`), for `sigaction`, whose handler
    /// travels in a structure.
    pub(super) fn signal_handlers(&self) -> Vec<FnId> {
        self.ix
            .address_taken
            .iter()
            .copied()
            .filter(|&t| {
                let f = self.ix.info(t);
                let int = |p: &&TypeRef| matches!(p.as_ref(), Type::IntegerType { bits: 32 });
                let ptr = |p: &&TypeRef| matches!(p.as_ref(), Type::PointerType { .. });
                matches!(f.ret.as_ref(), Type::VoidType)
                    && match f.params.as_slice() {
                        [a] => int(a),
                        [a, b, c] => int(a) && ptr(b) && ptr(c),
                        _ => false,
                    }
            })
            .collect()
    }

    /// The functions a function-pointer operand of `f` can hold, when every
    /// value it can have is traced to a function constant; `None` when it
    /// cannot be (the caller then falls back to every compatible
    /// address-taken function). Follows, up to `depth` steps, the shapes
    /// clang emits at `-O0`: casts, a load of a local slot whose every
    /// use is a load or a store (each stored value traced in turn), and a
    /// parameter of a function that is only called directly (the argument
    /// of every call traced in its caller).
    pub(super) fn pointer_sources(
        &mut self,
        f: &'m Function,
        op: &'m Operand,
        depth: u32,
    ) -> Option<Vec<FnId>> {
        if let Some(i) = self.ix.direct(op) {
            return Some(vec![i]);
        }
        if depth == 0 {
            return None;
        }
        let Operand::LocalOperand { name, .. } = op else {
            return None;
        };
        if let Some(pos) = f.parameters.iter().position(|p| &p.name == name) {
            let fi = self.ix.by_name(&f.name)?;
            if self.ix.address_taken.contains(&fi) {
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
    fn callers(&mut self) -> &Callers<'m> {
        if self.callers.is_none() {
            let mut map: Callers<'m> = HashMap::new();
            for f in &self.ix.m.functions {
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
                        if let Some(i) = callee.and_then(|op| self.ix.direct(op)) {
                            if self.ix.info(i).def.is_some() {
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
}
