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

/// Most constant strings one argument may stand for ([`Strings::choices`]).
const MAX_CHOICES: usize = 16;

impl<'m> Strings<'_, 'm> {
    /// The constant strings an argument may be: its string, or, for a
    /// `select` or `phi` (as `-O2` makes when it merges two calls that
    /// differ in their format string), the strings of every operand,
    /// when every operand is one (through up to 4 such choices). `defs`:
    /// the function's instructions by result name.
    pub(super) fn choices(
        &mut self,
        op: &'m Operand,
        defs: &HashMap<&'m llvm_ir::Name, &'m llvm_ir::Instruction>,
    ) -> Option<Vec<Rc<[u8]>>> {
        let mut out = Vec::new();
        self.collect(op, defs, 4, &mut out)?;
        out.dedup();
        Some(out)
    }

    fn collect(
        &mut self,
        op: &'m Operand,
        defs: &HashMap<&'m llvm_ir::Name, &'m llvm_ir::Instruction>,
        depth: u32,
        out: &mut Vec<Rc<[u8]>>,
    ) -> Option<()> {
        if let Some(s) = self.arg(op) {
            out.push(s);
            return (out.len() <= MAX_CHOICES).then_some(());
        }
        let Operand::LocalOperand { name, .. } = op else {
            return None;
        };
        if depth == 0 {
            return None;
        }
        match defs.get(name)? {
            llvm_ir::Instruction::Select(s) => {
                self.collect(&s.true_value, defs, depth - 1, out)?;
                self.collect(&s.false_value, defs, depth - 1, out)
            }
            llvm_ir::Instruction::Phi(p) => {
                for (v, _) in &p.incoming_values {
                    self.collect(v, defs, depth - 1, out)?;
                }
                Some(())
            }
            llvm_ir::Instruction::BitCast(c) => self.collect(&c.operand, defs, depth - 1, out),
            _ => None,
        }
    }
}

/// Where an argument comes from, for [`postmortem_core::CallNote::arg_sources`]:
/// the name of the global variable it was loaded from (`stderr`), or a
/// constant integer (`#2`).
pub(super) fn arg_source(
    op: &Operand,
    defs: &HashMap<&llvm_ir::Name, &llvm_ir::Instruction>,
) -> Option<String> {
    match op {
        Operand::ConstantOperand(c) => match c.as_ref() {
            Constant::Int { value, .. } => Some(format!("#{value}")),
            _ => None,
        },
        Operand::LocalOperand { name, .. } => match defs.get(name)? {
            llvm_ir::Instruction::Load(l) => match &l.address {
                Operand::ConstantOperand(c) => match strip_casts(c) {
                    Constant::GlobalReference { name, .. } => Some(name_str(name)),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        },
        Operand::MetadataOperand => None,
    }
}
