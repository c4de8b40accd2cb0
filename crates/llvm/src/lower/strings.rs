//! Constant C-string arguments of calls (how log lines are matched to
//! `printf`-like call sites), read from constant globals and cached.

use super::name_str;
use llvm_ir::module::GlobalVariable;
use llvm_ir::{Constant, Operand, Type};
use std::collections::HashMap;
use std::rc::Rc;

use crate::operands::strip_casts;

/// The strings of the module's constant globals, read on first use.
pub(super) struct Strings<'a, 'm> {
    globals: &'a HashMap<String, &'m GlobalVariable>,
    cache: HashMap<String, Option<Rc<[u8]>>>,
}

impl<'a, 'm> Strings<'a, 'm> {
    pub(super) fn new(globals: &'a HashMap<String, &'m GlobalVariable>) -> Self {
        Strings {
            globals,
            cache: HashMap::new(),
        }
    }

    /// The constant C string an argument points to, if any: a constant
    /// global `[N x i8]` (through `getelementptr 0, k` or directly).
    pub(super) fn arg(&mut self, op: &Operand) -> Option<Rc<[u8]>> {
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
        let bytes = match self.cache.get(&key) {
            Some(b) => b.clone(),
            None => {
                let b = self.globals.get(&key).and_then(|g| global_string(g));
                self.cache.insert(key, b.clone());
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
fn global_string(g: &GlobalVariable) -> Option<Rc<[u8]>> {
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
