//! Variables whose value in a crashed process is evidence about its path
//! (the front-end's [`VarMap`]), and the constraints a value gives
//! ([`constraints`]).
//!
//! The LLVM front-end lists every scalar variable (integer, `bool`, enum
//! or pointer) that only direct stores can write: a defined global or
//! function-`static` whose address is used by nothing but loads and stores
//! (not passed to a call, stored, cast or indexed), and a local (`alloca`
//! with its `llvm.dbg.declare`) with the same property. For each, the
//! nodes that store to it, each with the net effect of its instructions
//! ([`Written`]: the last store of the node), and for a global its initial
//! value. A struct or array whose fields are only accessed by constant
//! offsets gives one such variable per stored field ([`Var::offset`]).
//! What it leaves out is counted by reason.
//!
//! A value read from memory then says (see [`postmortem_core::LastWrite`])
//! that the last of those nodes on the path (for a local: of those nodes
//! and its function's entry, a new activation) is one that can have
//! written it; for a global whose initial value differs, that one ran.
//!
//! Most stores write a computed value (`rc = f()`), which says nothing
//! that way; but such variables are tested. The front-end also lists,
//! per variable, the branches that test a load of it ([`Test`]; the
//! argument is in the LLVM front-end's `branch_tests.rs`): a test after
//! which no store to the variable runs saw the final value, so it went
//! where the value sends it ([`Test::target`]: the comparison evaluated
//! at the load's width, through its casts). [`constraints`] adds them to
//! the value's `LastWrite` (tests whose branch is a crash candidate left
//! out: the crash may have stopped the block before its branch).

use postmortem_core::report::{BranchTest, FrameValue, LastWrite, NodeSet};
use postmortem_core::{Icfg, NodeId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a node leaves in a variable: the value of its last store to it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Written {
    /// This constant (zero-extended to 64 bits; null pointers are 0).
    Const(u64),
    /// Some non-null address (of a global or a function).
    NonNull,
    /// A value not known statically.
    Unknown,
}

impl Written {
    /// Whether the store can have left `value` (compared on `bytes`
    /// bytes).
    pub fn can_leave(self, value: u64, bytes: u32) -> bool {
        let mask = if bytes >= 8 {
            u64::MAX
        } else {
            (1u64 << (8 * bytes)) - 1
        };
        match self {
            Written::Const(c) => c & mask == value & mask,
            Written::NonNull => value & mask != 0,
            Written::Unknown => true,
        }
    }

    fn show(self) -> String {
        match self {
            Written::Const(c) => c.to_string(),
            Written::NonNull => "an address".into(),
            Written::Unknown => "a computed value".into(),
        }
    }
}

/// Where a variable lives.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum VarScope {
    /// A global or function-`static` variable: its symbol in the binary
    /// (clang names a function's static `func.name`).
    Global {
        /// The IR name, which is the symbol's.
        symbol: String,
        /// The initial value, when it is a known constant.
        init: Option<u64>,
    },
    /// A local variable or parameter of a function.
    Local {
        /// The function's IR (linkage) name.
        function: String,
        /// The declaration line.
        line: u32,
        /// The function's entry node.
        entry: u32,
        /// For a variable of a function inlined into this one, the call
        /// it was inlined at (line, column), which tells its copies
        /// apart when the function is inlined twice (`always_inline`
        /// functions are, at `-O0` too).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        inlined_at: Option<(u32, u32)>,
    },
}

/// A variable only direct stores write.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Var {
    /// The source name; for a field of a struct or an array, the
    /// variable's name and the field's path, by position (the IR has no
    /// field names): `s.1` (the second field), `a[3]`, `s.0[2]`.
    pub name: String,
    /// Global or local.
    pub scope: VarScope,
    /// The field's byte offset in the variable (0 for a scalar variable):
    /// the value is read at the variable's address plus this.
    #[serde(default)]
    pub offset: u32,
    /// Its size in bytes (1, 2, 4 or 8).
    pub bytes: u32,
    /// Whether it is a pointer.
    pub pointer: bool,
    /// Every node that stores to it, with what it leaves (one entry per
    /// node).
    pub writes: Vec<(u32, Written)>,
    /// The branches that test a load of it (see [`Test`]).
    #[serde(default)]
    pub tests: Vec<Test>,
    /// Where the value of a write came from, for the writes whose value
    /// is another variable's or a call's result (see [`Origin`]): (node,
    /// origin), the node's last store as in `writes`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub from: Vec<(u32, Origin)>,
    /// The nodes that load it, when known (sorted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads: Option<Vec<u32>>,
}

/// Where a stored or returned value came from, unchanged (issue 36: the
/// slice follows a bad value back through copies and calls).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Origin {
    /// The result of a direct call of this function (IR name): one of its
    /// [`VarMap::returns`], when the module defines it.
    Call(String),
    /// The function's parameter of this index (from 0): one of the
    /// values its callers pass there ([`VarMap::calls`]).
    Arg(u32),
    /// A load of this variable (index in [`VarMap::vars`]; one past them,
    /// from a corrupt map, is not followed) just before: its value at that
    /// point.
    Copy(u32),
    /// A value computed from this variable's own earlier value (`x = x -
    /// y`, `x -= n`, `p += n`; index in [`VarMap::vars`]): not the same
    /// value, but it came from where that earlier value came from; with
    /// the parameter's index when that earlier value is the function's
    /// parameter, stored in the same block (the prologue's store, which
    /// the update's own store hides in the node's origin); and with where
    /// the other operand came from (`n`), when it is known: the value
    /// came from there too.
    Update(u32, Option<u32>, Option<Box<Origin>>),
    /// One of a `phi`'s incoming values (`c ? p : f(x)`), each with its
    /// origin where it is known (none: a value computed there).
    Either(Vec<Option<Origin>>),
    /// The address of an array's element at this variable's value plus a
    /// constant (`&t->array[key - 1]`; index in [`VarMap::vars`]): not
    /// copied from anywhere, but the branches that compared the index
    /// with its bound ([`VarMap::bounds`]) let it be made.
    Element(u32),
    /// A load of a local whose address was passed to calls (index in
    /// [`VarMap::out_locals`]): one of its stores, or a store through the
    /// parameter of a call that took its address.
    OutLocal(u32),
    /// What this function (IR name) stored through its pointer parameter
    /// of this index (`*out = v`, [`VarMap::param_writes`]), if anything.
    Through(String, u32),
    /// A load of a struct's field through a pointer: the field's key
    /// (``struct.EState.17``: the struct type and the constant indices),
    /// one of [`VarMap::fields`]'s writes, or a write the front-end does
    /// not see. An array's elements are one field: `t->a[i]` is `a`'s
    /// key, `g_words[i]` of a global array ``g_words[]``.
    Field(String),
}

/// A store to a struct's field through a pointer ([`VarMap::fields`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldWrite {
    /// The store's node.
    pub node: u32,
    /// What it stores.
    pub written: Written,
    /// Where that came from.
    #[serde(default)]
    pub from: Option<Origin>,
    /// A store to an element of an array at an index that is no constant
    /// (`t->a[i] = v`): one element, perhaps not the one read.
    #[serde(default)]
    pub indexed: bool,
    /// The function of the program whose address it stores (a callback,
    /// a hook: `p->init = init_stream`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
}

/// A memory access, a division or an indirect call whose pointer (divisor,
/// callee) comes,
/// unchanged but for constant offsets, from a struct's field or a call
/// ([`VarMap::derefs`]): the faulting operand, when the crash is there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deref {
    /// The node of the access.
    pub node: u32,
    /// Where the pointer or divisor came from.
    pub from: Origin,
    /// A division (its divisor), not a memory access.
    #[serde(default)]
    pub div: bool,
    /// An indirect call (its callee), not a memory access.
    #[serde(default)]
    pub call: bool,
}

/// An access (a load or a store) at an index that is a variable's value
/// plus a constant, `a[i + 1]` ([`VarMap::indexes`]): the address is
/// computed from the variable as loaded in the access's block.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexUse {
    /// The access's node.
    pub node: u32,
    /// The variable (index in [`VarMap::vars`]).
    pub var: u32,
    /// The constant added to it.
    pub offset: i64,
}

/// A branch on a comparison of a variable with another value that is
/// no constant, `i < n` ([`VarMap::bounds`]): for `why`, the bound that
/// let an index through (no evidence about the path: it says nothing of
/// which way the branch went).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoundTest {
    /// The branch's node.
    pub branch: u32,
    /// The variable compared (index in [`VarMap::vars`]).
    pub var: u32,
    /// What it was compared with: another variable's copy, a field, a
    /// parameter.
    pub bound: Origin,
}

/// A direct call of a function: its call site's node and, per argument,
/// what it passes and where that came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallArgs {
    /// The call site's node.
    pub site: u32,
    /// Per argument, in order.
    pub args: Vec<(Written, Option<Origin>)>,
    /// Per argument, the node of the load that gave it, when one did
    /// (its line may not be the call's: an argument on a line of its
    /// own); empty when not known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arg_nodes: Vec<Option<u32>>,
}

/// One way a function returns a value: the node where the returned value
/// is decided (the `ret`, or the store to the function's return slot),
/// what it leaves, and where that came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Return {
    /// The node.
    pub node: u32,
    /// What it returns.
    pub written: Written,
    /// Where that came from, when it is another variable or a call.
    #[serde(default)]
    pub from: Option<Origin>,
}

/// A conversion of the loaded value on its way to the branch (LLVM's
/// `sext`, `zext`, `trunc`), to this many bits.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Cast {
    /// Sign extension.
    Sext(u32),
    /// Zero extension.
    Zext(u32),
    /// Truncation.
    Trunc(u32),
}

/// An integer comparison (LLVM's `icmp` predicates).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Pred {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// unsigned `>`
    Ugt,
    /// unsigned `>=`
    Uge,
    /// unsigned `<`
    Ult,
    /// unsigned `<=`
    Ule,
    /// signed `>`
    Sgt,
    /// signed `>=`
    Sge,
    /// signed `<`
    Slt,
    /// signed `<=`
    Sle,
}

/// What a branch does with the (converted) loaded value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TestKind {
    /// `br i1 (icmp pred v, constant)`, or `icmp pred constant, v` when
    /// `swapped`; a `bool` branched on directly is `v != 0` after a
    /// truncation to 1 bit. The first nodes of the `then` and `else`
    /// successors.
    Cmp {
        /// The predicate.
        pred: Pred,
        /// The constant (null is 0), at the compared width.
        constant: u64,
        /// Whether the constant is the left operand.
        swapped: bool,
        /// First node of the successor when the comparison holds.
        then_node: u32,
        /// First node of the other successor.
        else_node: u32,
    },
    /// `switch v`: each case's value and its successor's first node, and
    /// the default successor's first node.
    Switch {
        /// (case value, first node).
        cases: Vec<(u64, u32)>,
        /// First node of the default successor.
        default: u32,
    },
}

/// A branch on a load of the variable: the load is in the branch's block,
/// with no store and no call between it and the branch (see the LLVM
/// front-end's `values.rs` for the argument and what is left out).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Test {
    /// The branch's node (the last node of its block).
    pub branch: u32,
    /// The width of the load, in bits.
    pub load_bits: u32,
    /// The conversions from the load to the compared value, in order.
    pub casts: Vec<Cast>,
    /// The comparison and the successors.
    pub kind: TestKind,
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// `v` as a signed number of `bits` bits.
pub(crate) fn signed(v: u64, bits: u32) -> i64 {
    sign_extend(v, bits)
}

fn sign_extend(v: u64, bits: u32) -> i64 {
    if bits == 0 || bits >= 64 {
        return v as i64;
    }
    let shift = 64 - bits;
    ((v << shift) as i64) >> shift
}

impl Pred {
    /// The comparison of `a` and `b`, both `bits` wide.
    pub fn eval(self, a: u64, b: u64, bits: u32) -> bool {
        let (a, b) = (a & mask(bits), b & mask(bits));
        let (sa, sb) = (sign_extend(a, bits), sign_extend(b, bits));
        match self {
            Pred::Eq => a == b,
            Pred::Ne => a != b,
            Pred::Ugt => a > b,
            Pred::Uge => a >= b,
            Pred::Ult => a < b,
            Pred::Ule => a <= b,
            Pred::Sgt => sa > sb,
            Pred::Sge => sa >= sb,
            Pred::Slt => sa < sb,
            Pred::Sle => sa <= sb,
        }
    }
}

#[cfg(test)]
impl Test {
    /// A comparison at branch node 0, its `then` successor node 1, `else`
    /// node 2 (for tests).
    pub(crate) fn cmp(
        load_bits: u32,
        casts: Vec<Cast>,
        pred: Pred,
        constant: u64,
        swapped: bool,
    ) -> Test {
        Test {
            branch: 0,
            load_bits,
            casts,
            kind: TestKind::Cmp {
                pred,
                constant,
                swapped,
                then_node: 1,
                else_node: 2,
            },
        }
    }
}

impl Test {
    /// The value the branch compares, from the variable's `value` (its
    /// low `load_bits` bits are what the load read), and its width.
    pub fn compared(&self, value: u64) -> (u64, u32) {
        let (mut v, mut bits) = (value & mask(self.load_bits), self.load_bits);
        for c in &self.casts {
            match *c {
                Cast::Sext(to) => {
                    v = sign_extend(v, bits) as u64 & mask(to);
                    bits = to;
                }
                Cast::Zext(to) => bits = to,
                Cast::Trunc(to) => {
                    v &= mask(to);
                    bits = to;
                }
            }
        }
        (v, bits)
    }

    /// The first node of the successor the branch takes with the
    /// variable's `value`.
    pub fn target(&self, value: u64) -> u32 {
        let (v, bits) = self.compared(value);
        match &self.kind {
            TestKind::Cmp {
                pred,
                constant,
                swapped,
                then_node,
                else_node,
            } => {
                let holds = if *swapped {
                    pred.eval(*constant, v, bits)
                } else {
                    pred.eval(v, *constant, bits)
                };
                if holds {
                    *then_node
                } else {
                    *else_node
                }
            }
            TestKind::Switch { cases, default } => cases
                .iter()
                .find(|(c, _)| c & mask(bits) == v)
                .map_or(*default, |&(_, n)| n),
        }
    }

    /// The constants the test compares with.
    pub fn constants(&self) -> Vec<u64> {
        match &self.kind {
            TestKind::Cmp { constant, .. } => vec![*constant],
            TestKind::Switch { cases, .. } => cases.iter().map(|c| c.0).collect(),
        }
    }

    /// The first nodes of every successor, sorted, deduplicated.
    pub fn successors(&self) -> Vec<u32> {
        let mut s = match &self.kind {
            TestKind::Cmp {
                then_node,
                else_node,
                ..
            } => vec![*then_node, *else_node],
            TestKind::Switch { cases, default } => {
                cases.iter().map(|c| c.1).chain([*default]).collect()
            }
        };
        s.sort_unstable();
        s.dedup();
        s
    }
}

/// The values of a variable of width `m` (its mask) at which
/// comparisons with `constants` ([`Test`]s through sign and zero
/// extensions, equalities) can change their outcome: 0, 1, the ends of
/// the signed half, the largest value, and each constant and its
/// neighbours, also cut to the width. A set of values such comparisons
/// admit together is a union of intervals (in the unsigned order, the
/// signed half split at its end), each starting at one of these, so it is
/// empty iff none of them lies in it: the witness check's conjunctions
/// (`witness_check`) and the classes a variable's tests tell apart
/// (`correlate`) are decided on them.
pub fn boundary_points(constants: impl IntoIterator<Item = u64>, m: u64) -> Vec<u64> {
    let mut points: Vec<u64> = vec![0, 1, m, m >> 1, (m >> 1).wrapping_add(1)];
    for c in constants {
        points.extend([c, c.wrapping_add(1), c.wrapping_sub(1)]);
        // A constant compared after a sign extension, seen at the
        // variable's width.
        points.extend([c & m, c.wrapping_add(1) & m, c.wrapping_sub(1) & m]);
    }
    points.sort_unstable();
    points.dedup();
    points
}

/// The variables of a module (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VarMap {
    /// The variables kept.
    pub vars: Vec<Var>,
    /// Variables left out, counted by reason.
    pub left_out: BTreeMap<String, usize>,
    /// For each defined function (IR name) that returns a value, every way
    /// it can return one ([`Return`]); a function missing here is not
    /// followed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub returns: BTreeMap<String, Vec<Return>>,
    /// For each function (IR name), its direct calls with their
    /// arguments ([`CallArgs`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub calls: BTreeMap<String, Vec<CallArgs>>,
    /// The accesses at an index that is a variable's value plus a
    /// constant (`a[i + 1]`, `p[i]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub indexes: Vec<IndexUse>,
    /// The branches that compare a variable with another value (a loop's
    /// bound, `i < n`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bounds: Vec<BoundTest>,
    /// The branches that test a struct field for NULL (or 0): `if
    /// (p->f != NULL)`, by branch node and field key.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub field_tests: Vec<(u32, String)>,
    /// The calls through a pointer, with their arguments: which function
    /// one called is known only from a crash stack that shows it
    /// ([`crate::origins::Tracer::entered_by`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub indirect: Vec<CallArgs>,
    /// The stores to each struct field through a pointer, by field key
    /// (see [`Origin::Field`]). Not every write of a field: `memset`,
    /// `memcpy`, a zeroing allocation or a store through another type
    /// write it unseen.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, Vec<FieldWrite>>,
    /// The accesses and divisions whose operand comes from a field or a
    /// call ([`Deref`]), by node.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub derefs: Vec<Deref>,
    /// The locals whose address the program passes to direct calls and
    /// nowhere else: out-parameters ([`OutLocal`], [`Origin::OutLocal`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub out_locals: Vec<OutLocal>,
    /// For each function (IR name), its stores through a pointer
    /// parameter (`*out = v`), as [`Origin::Through`] follows them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub param_writes: BTreeMap<String, Vec<ParamWrite>>,
}

/// A local scalar whose address its function passes to direct calls and
/// uses in no other way (`get(&x)`: an out-parameter): not a variable of
/// the map (a callee writes it unseen, and may keep its address), but
/// `why` follows a value loaded from it to its stores and to the calls
/// that took its address.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutLocal {
    /// Its function (IR name).
    pub function: String,
    /// Its source name.
    pub name: String,
    /// Its function's entry node (where its activation starts).
    pub entry: u32,
    /// Its own stores: (node, what, where that came from).
    pub stores: Vec<(u32, Written, Option<Origin>)>,
    /// The calls that take its address: (site, the stores through that
    /// parameter of the callee, [`Origin::Through`]).
    pub passed: Vec<(u32, Origin)>,
}

/// A store through a function's pointer parameter (`*out = v`): the
/// caller's out-parameter, when it passed a local's address there; or a
/// direct call that passes the pointer on (`lua_tolstring(L, i, len)`),
/// which may store through it in turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParamWrite {
    /// The parameter (from 0).
    pub param: u32,
    /// The store's node (the call site's, for a call).
    pub node: u32,
    /// What it stores (unknown, for a call).
    pub written: Written,
    /// Where that came from.
    #[serde(default)]
    pub from: Option<Origin>,
    /// For a call that passes the pointer on: the stores through the
    /// callee's parameter ([`Origin::Through`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed_on: Option<Origin>,
}

impl Var {
    /// The nodes that store a parameter's incoming value into it (the
    /// prologue's stores, in the entry block: before any statement of the
    /// function can read it). Empty for a variable that is no parameter.
    pub fn parameter_stores(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.from
            .iter()
            .filter(|(_, o)| matches!(o, Origin::Arg(_)))
            .map(|&(n, _)| NodeId::new(n as usize))
    }

    /// Whether the step from branch `b` to its successor `s` cannot be
    /// taken while the variable holds `value`: `b` tests it and `value`
    /// sends it to another successor (for walks back from a read over
    /// which the variable keeps its value: `origins.rs`, [`guards`]).
    pub fn value_cuts(&self, value: u64, b: NodeId, s: NodeId) -> bool {
        self.tests.iter().any(|t| {
            t.branch as usize == b.index()
                && t.target(value) as usize != s.index()
                && t.successors().contains(&(s.index() as u32))
        })
    }

    /// The variable's own source name (without a field's path), by which
    /// the debug information knows it.
    pub fn base_name(&self) -> &str {
        self.name.split(['.', '[']).next().unwrap_or(&self.name)
    }
}

/// A variable map's node index past the end of its graph
/// ([`VarMap::check`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("variable `{var}`: node {node} out of range (graph of {nodes} nodes)")]
pub struct NodeOutOfRange {
    /// The variable.
    pub var: String,
    /// The index.
    pub node: u32,
    /// The graph's nodes.
    pub nodes: usize,
}

impl VarMap {
    /// Checks every node index against a graph of `n` nodes.
    pub fn check(&self, n: usize) -> Result<(), NodeOutOfRange> {
        for v in &self.vars {
            let entry = match v.scope {
                VarScope::Local { entry, .. } => Some(entry),
                VarScope::Global { .. } => None,
            };
            let tests = v
                .tests
                .iter()
                .flat_map(|t| std::iter::once(t.branch).chain(t.successors()));
            let from = v.from.iter().map(|f| f.0);
            let reads = v.reads.iter().flatten().copied();
            for x in v
                .writes
                .iter()
                .map(|w| w.0)
                .chain(entry)
                .chain(tests)
                .chain(from)
                .chain(reads)
            {
                if x as usize >= n {
                    return Err(NodeOutOfRange {
                        var: v.name.clone(),
                        node: x,
                        nodes: n,
                    });
                }
            }
        }
        // The flows' nodes (`flows.rs`), each with what names it.
        let fields = self
            .fields
            .values()
            .flatten()
            .map(|w| (w.node, "a field's store".to_string()));
        let derefs = self
            .derefs
            .iter()
            .map(|d| (d.node, "an access".to_string()));
        let calls = self
            .calls
            .iter()
            .flat_map(|(f, cs)| cs.iter().map(move |c| (c.site, format!("a call of `{f}`"))));
        let returns = self.returns.iter().flat_map(|(f, rs)| {
            rs.iter()
                .map(move |r| (r.node, format!("the return value of `{f}`")))
        });
        let arguments = self
            .calls
            .values()
            .flatten()
            .chain(&self.indirect)
            .flat_map(|c| {
                std::iter::once(c.site)
                    .chain(c.arg_nodes.iter().flatten().copied())
                    .map(|x| (x, "a call's argument".to_string()))
            });
        let indexes = self
            .indexes
            .iter()
            .map(|i| (i.node, "an indexed access".to_string()));
        let bounds = self
            .bounds
            .iter()
            .map(|b| (b.branch, "a bound's test".to_string()))
            .chain(
                self.field_tests
                    .iter()
                    .map(|t| (t.0, "a field's test".to_string())),
            );
        let outs = self.out_locals.iter().flat_map(|o| {
            let what = format!("`{}` of `{}`", o.name, o.function);
            std::iter::once(o.entry)
                .chain(o.stores.iter().map(|s| s.0))
                .chain(o.passed.iter().map(|p| p.0))
                .map(move |x| (x, what.clone()))
        });
        let through = self.param_writes.iter().flat_map(|(f, ws)| {
            ws.iter()
                .map(move |w| (w.node, format!("a store through a parameter of `{f}`")))
        });
        for (x, var) in fields
            .chain(outs)
            .chain(through)
            .chain(derefs)
            .chain(calls)
            .chain(returns)
            .chain(arguments)
            .chain(indexes)
            .chain(bounds)
        {
            if x as usize >= n {
                return Err(NodeOutOfRange {
                    var,
                    node: x,
                    nodes: n,
                });
            }
        }
        Ok(())
    }

    /// The global variables, by symbol.
    pub fn globals(&self) -> impl Iterator<Item = (usize, &Var, &str)> {
        self.vars
            .iter()
            .enumerate()
            .filter_map(|(i, v)| match &v.scope {
                VarScope::Global { symbol, .. } => Some((i, v, symbol.as_str())),
                VarScope::Local { .. } => None,
            })
    }

    /// The local variables of the function `function` (IR name).
    pub fn locals_of<'a>(
        &'a self,
        function: &'a str,
    ) -> impl Iterator<Item = (usize, &'a Var, u32)> + 'a {
        self.vars
            .iter()
            .enumerate()
            .filter_map(move |(i, v)| match &v.scope {
                VarScope::Local {
                    function: f, line, ..
                } if f == function => Some((i, v, *line)),
                _ => None,
            })
    }
}

/// A variable's value as read from the process's memory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Observed {
    /// Index in [`VarMap::vars`].
    pub var: usize,
    /// The value (zero-extended).
    pub value: u64,
    /// Where it was read: `global`, or the frame (``#2 `handle` ``).
    pub place: String,
    /// For a local, the physical frame it was read from, numbered as
    /// `native::unwind` numbers the binary's frames (0 = innermost).
    pub frame: Option<u32>,
    /// Where in the process's memory it was read.
    #[serde(skip)]
    pub address: Option<u64>,
}

/// What became of one observed value.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ValueUse {
    /// The variable's source name.
    pub name: String,
    /// Where it was read.
    pub place: String,
    /// The value.
    pub value: u64,
    /// The constraint's index in the report's `values`, if one was made.
    pub constraint: Option<usize>,
    /// For a recursive function's local: the activation (a Local frame,
    /// numbered as the JSON's `frames[].frame`) whose Local labels alone
    /// it constrains (index `local` in the report's `frame_values`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame: Option<usize>,
    /// Its index in the report's `frame_values`, if it constrains a frame.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local: Option<usize>,
    /// Stores (`file:line` when known, else node ids) that cannot have
    /// left the value.
    pub ruled_out: Vec<String>,
    /// Stores that can have.
    pub kept: Vec<String>,
    /// Branch tests used: ``file:line goes to line M`` (the branch, and
    /// the first line of the successor the value sends it to).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tests: Vec<String>,
    /// Why no constraint was made, if none was.
    pub unused: Option<String>,
    /// Where the HTML report shows it (not in the JSON): see [`Shown`].
    #[serde(skip_serializing)]
    pub shown: Shown,
    /// The ways its value can have been made, for the question of its
    /// cause ([`postmortem_core::cause`]; not in the JSON). None when
    /// that cannot be asked: stored where the program crashed, or a local
    /// of a function that may be active twice.
    #[serde(skip_serializing)]
    pub cause: Option<postmortem_core::cause::Variable>,
    /// Its index in the [`VarMap`] (not in the JSON).
    #[serde(skip_serializing)]
    pub var: usize,
    /// Where in the process's memory it was read (not in the JSON).
    #[serde(skip_serializing)]
    pub address: Option<u64>,
}

/// What the HTML report needs to show a value where it belongs: beside
/// its frame, on its declaration line, in its own notation. Display only:
/// nothing here is evidence.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shown {
    /// Its size in bytes.
    pub bytes: u32,
    /// Whether it is a pointer (shown in hex).
    pub pointer: bool,
    /// For a local: its function's entry node and its declaration line.
    pub decl: Option<(NodeId, u32)>,
    /// For a local: the activation it was read from, numbered as
    /// [`postmortem_core::local::FrameLabels::frame`] (0 the outermost
    /// frame of the report's stack, the stack's length the crash frame),
    /// when the core's frames are the report's one for one.
    pub activation: Option<usize>,
    /// The nodes that store to it.
    pub stores: Vec<NodeId>,
}

impl ValueUse {
    /// The value in C's notation: a pointer in hex, an integer in decimal
    /// (and, when its sign bit is set, what it is as a signed integer).
    pub fn value_text(&self) -> String {
        if self.shown.pointer {
            return format!("{:#x}", self.value);
        }
        let bits = 8 * self.shown.bytes.clamp(1, 8);
        let sign = 1u64 << (bits - 1);
        if self.value & sign == 0 {
            return self.value.to_string();
        }
        let signed = if bits == 64 {
            self.value as i64
        } else {
            (self.value | !((sign << 1) - 1)) as i64
        };
        format!("{} ({signed})", self.value)
    }
}

/// What [`constraints`] makes of the observed values.
#[derive(Clone, Debug, Default)]
pub struct Constraints {
    /// For the report's `values` (the whole run).
    pub values: Vec<LastWrite>,
    /// For the report's `frame_values` (one activation each).
    pub frame_values: Vec<FrameValue>,
    /// What became of each observed value, in order.
    pub uses: Vec<ValueUse>,
}

/// Turns observed values into report constraints. `crash` is the report's
/// crash set: a variable stored by a crash candidate is left out (the
/// crash may have stopped the node before or after the store). A local
/// of a function that may be active twice at once (recursion) says
/// nothing about the whole run (its stores in a nested call are to
/// another variable): it constrains its own activation's Local labels
/// only, the Local frame `local_frame` gives for it (a
/// [`FrameValue`]), and is left out when that is None (the frame it was
/// read from is not known to be one of the report's). A value that no
/// store can leave, and for a global not its initial value either, is
/// memory the graph cannot explain (a wild write): left out, and said.
pub fn constraints(
    g: &Icfg,
    map: &VarMap,
    observed: &[Observed],
    crash: Option<&NodeSet>,
    local_frame: &dyn Fn(&Observed) -> Option<usize>,
) -> Constraints {
    let mut out = Vec::new();
    let mut frame_values = Vec::new();
    let mut uses = Vec::new();
    let mut recursive_memo: BTreeMap<u32, bool> = BTreeMap::new();
    for o in observed {
        let v = &map.vars[o.var];
        let mut u = value_use(v, o, local_frame);
        let Some(w) = last_write(g, v, o, crash, &mut u, &mut recursive_memo) else {
            uses.push(u);
            continue;
        };
        match u.frame {
            Some(frame) => {
                u.local = Some(frame_values.len());
                frame_values.push(FrameValue { frame, value: w });
            }
            None => {
                u.constraint = Some(out.len());
                out.push(w);
            }
        }
        uses.push(u);
    }
    Constraints {
        values: out,
        frame_values,
        uses,
    }
}

/// What is known of the observed value `o` of `v` before it is used:
/// its name, place and value, and how to show it.
fn value_use(v: &Var, o: &Observed, local_frame: &dyn Fn(&Observed) -> Option<usize>) -> ValueUse {
    ValueUse {
        name: v.name.clone(),
        place: o.place.clone(),
        value: o.value,
        constraint: None,
        frame: None,
        local: None,
        ruled_out: Vec::new(),
        kept: Vec::new(),
        tests: Vec::new(),
        unused: None,
        cause: None,
        var: o.var,
        address: o.address,
        shown: Shown {
            bytes: v.bytes,
            pointer: v.pointer,
            decl: match v.scope {
                VarScope::Local { entry, line, .. } => Some((NodeId::new(entry as usize), line)),
                VarScope::Global { .. } => None,
            },
            activation: o.frame.and_then(|_| local_frame(o)),
            stores: v
                .writes
                .iter()
                .map(|&(x, _)| NodeId::new(x as usize))
                .collect(),
        },
    }
}

/// The constraint the observed value `o` of `v` makes (see
/// [`constraints`]), with the stores it keeps and rules out, its branch
/// tests and, for a local of a recursive function, its frame, in `u`.
/// None, with the reason in `u.unused`, when it makes none.
/// `recursive_memo` remembers which functions (by entry) may reenter.
fn last_write(
    g: &Icfg,
    v: &Var,
    o: &Observed,
    crash: Option<&NodeSet>,
    u: &mut ValueUse,
    recursive_memo: &mut BTreeMap<u32, bool>,
) -> Option<LastWrite> {
    let node = |x: u32| NodeId::new(x as usize);
    let show = |x: u32, w: Written| format!("{} ({})", where_is(g, node(x)), w.show());
    if let Some(c) = crash {
        if v.writes.iter().any(|&(x, _)| c.contains(node(x))) {
            u.unused = Some("stored where the program crashed".into());
            u.cause = parameter_at_crash(g, v, c, o);
            return None;
        }
    }
    let (start, init) = match v.scope {
        VarScope::Global { init, .. } => (None, init),
        VarScope::Local { entry, .. } => {
            let rec = *recursive_memo
                .entry(entry)
                .or_insert_with(|| reenters(g, node(entry)));
            if rec {
                match u.shown.activation {
                    Some(k) => u.frame = Some(k),
                    None => {
                        u.unused = Some(
                            "its function may be active twice (recursion), and its frame is not one of the report's stack"
                                .into(),
                        );
                        return None;
                    }
                }
            }
            (Some(entry), None)
        }
    };
    let mut bad = Vec::new();
    let mut good = 0usize;
    for &(x, w) in &v.writes {
        if w.can_leave(o.value, v.bytes) {
            good += 1;
            u.kept.push(show(x, w));
        } else {
            bad.push(node(x));
            u.ruled_out.push(show(x, w));
        }
    }
    let init_ok = match (start, init) {
        (Some(_), _) => true, // uninitialised: anything
        (None, Some(i)) => Written::Const(i).can_leave(o.value, v.bytes),
        (None, None) => true,
    };
    if u.frame.is_none() {
        u.cause = cause_of(v, o, start, init_ok);
    }
    if good == 0 && !(start.is_none() && init_ok) {
        u.unused = Some(if start.is_some() {
            // A local: also what a slot holds when no store to it ran
            // in this activation (a block-scoped local whose block did
            // not run), which cannot be told apart from a wild write.
            "no store of the program can leave this value: not stored in this activation (uninitialised), or memory overwritten by something the graph does not show (a wild write?)"
        } else {
            "no store of the program can leave this value: memory overwritten by something the graph does not show (a wild write?)"
        }
        .into());
        return None;
    }
    let need = start.is_none() && !init_ok;
    let tests = branch_tests(g, v, o.value, crash, u);
    if bad.is_empty() && !need && tests.is_empty() {
        u.unused = Some(if v.tests.is_empty() {
            "every store can have left it, and no branch tests it".into()
        } else {
            "every store can have left it, and every branch on it is where the program crashed"
                .into()
        });
        return None;
    }
    let writes = write_nodes(v, start);
    bad.sort_unstable();
    bad.dedup();
    Some(LastWrite {
        writes: NodeSet::new(writes).expect("a store or an entry"),
        bad,
        need,
        what: format!("{} = {} ({})", v.name, o.value, o.place),
        tests,
    })
}

/// The cause of the value `o` of `v` when the one crash node `c` holds
/// its write: when that write is its parameter's store (`from` says
/// `Origin::Arg`; clang stores the parameters first in the entry block,
/// before any other instruction of the node, so a crash at another one
/// of them came after it, and the entry block runs once per activation:
/// the store made the value: the node must be the function's first,
/// reached only from its entry, so that no other store of the activation
/// comes between). None otherwise: the crash may have come before the
/// node's store.
fn parameter_at_crash(
    g: &Icfg,
    v: &Var,
    c: &NodeSet,
    o: &Observed,
) -> Option<postmortem_core::cause::Variable> {
    let [n] = c.nodes() else {
        return None;
    };
    let mut preds = g.preds(*n);
    let first = preds.len() == 1
        && preds
            .next()
            .is_some_and(|(p, _)| g.kind(p) == postmortem_core::NodeKind::Entry);
    if !first {
        return None;
    }
    let param = v
        .from
        .iter()
        .any(|(x, f)| *x as usize == n.index() && matches!(f, Origin::Arg(_)));
    let local = matches!(v.scope, VarScope::Local { .. });
    (param && local).then(|| postmortem_core::cause::Variable {
        writes: NodeSet::one(*n),
        candidates: vec![postmortem_core::cause::Definition::Store(*n)],
        what: format!("{} ({})", v.name, o.place),
    })
}

/// The nodes that write `v`: its stores, and `start` (a local's function
/// entry, where its activation starts).
fn write_nodes(v: &Var, start: Option<u32>) -> Vec<NodeId> {
    v.writes
        .iter()
        .map(|w| w.0)
        .chain(start)
        .map(|x| NodeId::new(x as usize))
        .collect()
}

/// The ways the value `o` of `v` can have been made: the stores that can
/// leave it, the uninitialised slot of a local (`start`: its function's
/// entry), a global's initial value when it can be the value.
fn cause_of(
    v: &Var,
    o: &Observed,
    start: Option<u32>,
    init_ok: bool,
) -> Option<postmortem_core::cause::Variable> {
    use postmortem_core::cause::Definition;
    let node = |x: u32| NodeId::new(x as usize);
    let mut candidates: Vec<Definition> = v
        .writes
        .iter()
        .filter(|&&(_, w)| w.can_leave(o.value, v.bytes))
        .map(|&(x, _)| Definition::Store(node(x)))
        .collect();
    match start {
        Some(entry) => candidates.push(Definition::Uninitialised(node(entry))),
        None if init_ok => candidates.push(Definition::Initial),
        None => {}
    }
    candidates.dedup();
    let writes = write_nodes(v, start);
    Some(postmortem_core::cause::Variable {
        writes: NodeSet::new(writes)?,
        candidates,
        what: format!("{} ({})", v.name, o.place),
    })
}

/// The walk back from the crash over the crash frame's function for a
/// local `u` of that frame ([`crash_walk`]), shared by
/// [`frame_reaching`] and [`guards`].
pub struct CrashWalk {
    /// The variable's writes met (sorted), and whether its function's
    /// entry was.
    writes: Vec<NodeId>,
    entry: Option<NodeId>,
    /// Every node passed (sorted).
    passed: Vec<NodeId>,
}

/// Walks back from each crash node over the function of `u`, a local of
/// the crash frame (`frame #0`), to its writes
/// ([`postmortem_core::cause::reaching_writes`]), without the steps its
/// branch tests take only with another value. None when `u` is not such
/// a local or the crash is not in its function.
pub fn crash_walk(
    g: &Icfg,
    map: &VarMap,
    u: &ValueUse,
    crash: &NodeSet,
    labels: &[postmortem_core::Label],
) -> Option<CrashWalk> {
    if !u.place.starts_with("frame #0 ") {
        return None;
    }
    let v = map.vars.get(u.var)?;
    let VarScope::Local { entry, .. } = v.scope else {
        return None;
    };
    let entry = NodeId::new(entry as usize);
    let f = g.func_of(entry);
    if crash.nodes().iter().any(|&c| g.func_of(c) != f) {
        return None;
    }
    let writes: Vec<NodeId> = v.writes.iter().map(|w| NodeId::new(w.0 as usize)).collect();
    let cut = |b: NodeId, s: NodeId| v.value_cuts(u.value, b, s);
    let mut out = CrashWalk {
        writes: Vec::new(),
        entry: None,
        passed: Vec::new(),
    };
    for &c in crash.nodes() {
        let r = postmortem_core::cause::reaching_writes(g, labels, c, &writes, &cut);
        out.writes.extend(r.writes);
        out.passed.extend(r.passed);
        if r.entry {
            out.entry = Some(entry);
        }
    }
    for x in [&mut out.writes, &mut out.passed] {
        x.sort_unstable();
        x.dedup();
    }
    Some(out)
}

/// `v` (the cause of a local of the crash frame) without the candidates
/// its [`crash_walk`] did not meet: a store no way back from the crash
/// within the activation reaches before another write, the uninitialised
/// slot when every way back meets a write. Those cannot have left the
/// value: the checks of [`postmortem_core::cause::reaching`] need not
/// ask (a whole check can take seconds on a large program).
pub fn within_frame(
    v: &postmortem_core::cause::Variable,
    walk: &CrashWalk,
) -> postmortem_core::cause::Variable {
    use postmortem_core::cause::Definition;
    let mut v = v.clone();
    v.candidates.retain(|d| match d {
        Definition::Store(n) => walk.writes.binary_search(n).is_ok(),
        Definition::Uninitialised(_) => walk.entry.is_some(),
        Definition::Initial => true,
    });
    v
}

/// The definitions of `u`'s value when it is a local of the crash frame
/// that [`postmortem_core::cause::reaching`] cannot be asked about (its
/// function may be active twice, so a global "last write" would mix
/// activations; or code runs asynchronously): within the crash frame's
/// activation, the writes the [`crash_walk`] met that can have left the
/// value, and its uninitialised slot when the function's entry was met.
/// Made on every execution when only one is left.
pub fn frame_reaching(
    map: &VarMap,
    u: &ValueUse,
    walk: &CrashWalk,
) -> Vec<(
    postmortem_core::cause::Definition,
    postmortem_core::cause::Made,
)> {
    use postmortem_core::cause::{Definition, Made};
    let Some(v) = map.vars.get(u.var) else {
        return Vec::new();
    };
    let mut defs: Vec<Definition> = walk
        .writes
        .iter()
        .copied()
        .filter(|n| {
            v.writes
                .iter()
                .any(|&(x, w)| x as usize == n.index() && w.can_leave(u.value, v.bytes))
        })
        .map(Definition::Store)
        .collect();
    defs.extend(walk.entry.map(Definition::Uninitialised));
    let made = if defs.len() == 1 {
        Made::Every
    } else {
        Made::Some
    };
    defs.into_iter().map(|d| (d, made)).collect()
}

/// Where a faulting operand that is no variable came from
/// ([`crate::image::fault::OperandSuspect`]): the definitions along its
/// origin ([`crate::origins::Tracer::from_origin`]); for a field, its
/// stores that did not run, in functions that ran, that would have set
/// another value, each with the branch that kept it from running.
pub fn operand_cause(
    g: &Icfg,
    map: &VarMap,
    o: &crate::image::fault::OperandSuspect,
    labels: &[postmortem_core::Label],
) -> crate::image::fault::Cause {
    use postmortem_core::Label;
    let t = crate::origins::Tracer {
        g,
        map,
        labels,
        value: o.value,
        bytes: o.bytes,
        entered_by: &[],
        any_value: false,
    };
    let (_, made_by) = t.from_origin(o.node, &o.from);
    let mut not_run = Vec::new();
    let mut skipped_by = Vec::new();
    let mut may_skip = Vec::new();
    if let Origin::Field(k) = &o.from {
        for w in map.fields.get(k).into_iter().flatten() {
            let n = NodeId::new(w.node as usize);
            let entry = g.function(g.func_of(n)).entry;
            let fn_label = entry.and_then(|e| labels.get(e.index()));
            // A store of this very value would not have set another.
            let same =
                matches!(w.written, Written::Const(_)) && w.written.can_leave(o.value, o.bytes);
            // A store that may not have run (in a function that may have)
            // counts when it cannot have left the value: had it been the
            // last write, the value would differ.
            let label = labels.get(n.index());
            let may_not = label == Some(&Label::Maybe)
                && fn_label.is_some_and(|l| *l != Label::No)
                && !w.written.can_leave(o.value, o.bytes);
            let not = label == Some(&Label::No) && fn_label == Some(&Label::Yes);
            if !(not || may_not) || same {
                continue;
            }
            let store = format!("the store at {}", where_is(g, n));
            let branch = postmortem_core::cause::skipped_by(g, labels, n).map(|b| {
                crate::image::fault::Skipped {
                    store: store.clone(),
                    branch: format!("the branch at {}", where_is(g, b)),
                    ran: match labels.get(b.index()) {
                        Some(Label::Yes) => "yes",
                        _ => "maybe",
                    }
                    .into(),
                    branch_node: Some(b),
                }
            });
            if may_not {
                may_skip.extend(branch);
            } else {
                skipped_by.extend(branch);
                not_run.push(store);
            }
        }
    }
    let freed_by = if o.dangling {
        let mut f = freed_by(g, map, &o.from, labels);
        f.extend(freed_before(g, map, &made_by, labels));
        f
    } else {
        Vec::new()
    };
    crate::image::fault::Cause {
        variable: o.shown.clone(),
        made_by,
        not_run,
        skipped_by,
        may_skip,
        freed_by,
        guards: Vec::new(),
        carriers_first: false,
    }
}

/// The branches that compared `u` (a local of the crash frame used as
/// an index by an access of the crash's function, [`VarMap::indexes`])
/// with another value, not a constant (a loop's bound, `i < n`), in one
/// loop with such an access, and that are not No: the bounds that let
/// the index reach its value.
pub fn bound_guards(
    g: &Icfg,
    map: &VarMap,
    u: &ValueUse,
    crash: &postmortem_core::report::NodeSet,
    labels: &[postmortem_core::Label],
) -> Vec<crate::image::fault::Guard> {
    use postmortem_core::Label;
    let Some(&c) = crash.nodes().first() else {
        return Vec::new();
    };
    let func = g.func_of(c);
    let accesses: Vec<NodeId> = map
        .indexes
        .iter()
        .filter(|iu| iu.var as usize == u.var)
        .map(|iu| NodeId::new(iu.node as usize))
        .filter(|&n| g.func_of(n) == func)
        .collect();
    if !u.place.starts_with("frame #0 ") || accesses.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for b in &map.bounds {
        let n = NodeId::new(b.branch as usize);
        let label = labels.get(n.index());
        let in_loop = accesses
            .iter()
            .any(|&a| postmortem_core::cause::in_one_loop(g, labels, n, a));
        if b.var as usize != u.var || !in_loop || label == Some(&Label::No) {
            continue;
        }
        let what = match &b.bound {
            Origin::Copy(y) => match map.vars.get(*y as usize) {
                Some(v) => format!("`{}`", v.name),
                None => continue,
            },
            Origin::Field(k) => crate::origins::field_name(k),
            Origin::Arg(i) => format!("parameter {}", i + 1),
            Origin::Call(f) => format!("the result of `{f}`"),
            Origin::Update(..)
            | Origin::Either(..)
            | Origin::Element(..)
            | Origin::OutLocal(..)
            | Origin::Through(..) => continue,
        };
        out.push(crate::image::fault::Guard {
            branch: format!("the branch at {}", where_is(g, n)),
            ran: if label == Some(&Label::Yes) {
                "yes"
            } else {
                "maybe"
            }
            .into(),
            tested: None,
            bound: Some(format!("`{}` with {what}", u.name)),
            node: Some(n),
        });
    }
    out
}

/// For a NULL loaded from a field (`o`), the branches in the crash
/// stack's functions that ran (Yes), tested another field of the same
/// struct type for NULL, and decided whether the way to the crash went
/// on (the nearest branch before the stack's call in that function, or
/// before the crash, that can avoid it: [`postmortem_core::cause::skipped_by`]),
/// when no branch there tested the field that held the NULL: a check of
/// the wrong field? (`if (!p->closef)` guarding `aux_close`, which
/// calls `fclose(p->f)`).
pub fn wrong_field_checks(
    g: &Icfg,
    map: &VarMap,
    o: &crate::image::fault::OperandSuspect,
    report: &postmortem_core::Report,
    labels: &[postmortem_core::Label],
) -> Vec<crate::image::fault::Guard> {
    use postmortem_core::Label;
    let Origin::Field(k) = &o.from else {
        return Vec::new();
    };
    let Some((ty, _)) = k.rsplit_once('.') else {
        return Vec::new();
    };
    if o.value != 0 || ty.is_empty() {
        return Vec::new();
    }
    let mut funcs: Vec<postmortem_core::FuncId> = report
        .stack
        .iter()
        .filter_map(|f| f.entry.nodes().first().map(|&n| g.func_of(n)))
        .collect();
    funcs.extend(
        report
            .crash
            .iter()
            .filter_map(|c| c.nodes().first().map(|&n| g.func_of(n))),
    );
    let on_stack = |n: NodeId| funcs.contains(&g.func_of(n));
    // The stack's calls (each frame's call is in the frame above's
    // function) and the crash: the places the way to the crash went on.
    let mut ways: Vec<NodeId> = report
        .stack
        .iter()
        .flat_map(|f| f.call.nodes().iter().copied())
        .collect();
    ways.extend(report.crash.iter().flat_map(|c| c.nodes().iter().copied()));
    // Which way each branch went is not asked: the one whose other
    // successor could have avoided the call.
    let unknown = vec![Label::Maybe; labels.len()];
    let deciders: Vec<NodeId> = ways
        .iter()
        .filter_map(|&w| postmortem_core::cause::skipped_by(g, &unknown, w))
        .collect();
    let tested = map.field_tests.iter().any(|(b, f)| {
        let b = NodeId::new(*b as usize);
        f == k && on_stack(b) && labels.get(b.index()) != Some(&Label::No)
    });
    if tested {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (b, other) in &map.field_tests {
        let n = NodeId::new(*b as usize);
        let sibling = other.rsplit_once('.').is_some_and(|(t, _)| t == ty);
        if other == k
            || !sibling
            || !deciders.contains(&n)
            || labels.get(n.index()) != Some(&Label::Yes)
        {
            continue;
        }
        out.push(crate::image::fault::Guard {
            branch: format!("the branch at {}", where_is(g, n)),
            ran: "yes".into(),
            tested: Some((
                crate::origins::field_name(other),
                crate::origins::field_name(k),
            )),
            bound: None,
            node: Some(n),
        });
    }
    out
}

/// The calls that may have freed what a pointer from `origin` points to
/// ([`crate::image::fault::Cause::freed_by`]): each call, not No, of a
/// release function (`free`, `realloc`, `munmap`, a name with "free" or
/// "release") or through a pointer (a `BZFREE`-like hook), one of whose
/// arguments is a load of the same field, or a copy of the same
/// variable. Only for an access that faulted at an address no longer
/// mapped ([`crate::image::fault::Fault::dangling`]).
pub fn freed_by(
    g: &Icfg,
    map: &VarMap,
    origin: &Origin,
    labels: &[postmortem_core::Label],
) -> Vec<crate::image::fault::Freed> {
    use postmortem_core::Label;
    let direct = map
        .calls
        .iter()
        .filter(|(name, _)| releases(name))
        .map(|(name, calls)| (format!("`{name}`"), calls));
    let through = std::iter::once(("a function through a pointer".to_string(), &map.indirect));
    let mut out = Vec::new();
    for (callee, calls) in direct.chain(through) {
        for c in calls {
            let n = NodeId::new(c.site as usize);
            let label = labels.get(n.index());
            if label == Some(&Label::No) || !c.args.iter().any(|(_, o)| o.as_ref() == Some(origin))
            {
                continue;
            }
            out.push(crate::image::fault::Freed {
                call: format!("the call at {}", where_is(g, n)),
                callee: callee.clone(),
                ran: if label == Some(&Label::Yes) {
                    "yes"
                } else {
                    "maybe"
                }
                .into(),
                node: Some(n),
                before: None,
            });
        }
    }
    out
}

/// Whether a function of this name releases memory: `free`, `realloc`,
/// `munmap`, a name with "free" or "release".
fn releases(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("free") || n.contains("release") || n == "realloc" || n == "munmap"
}

/// The most calls named per call that passed a dangling pointer on
/// ([`freed_before`]).
const MAX_FREED_BEFORE: usize = 2;

/// For a dangling pointer whose way to the crash passed through calls
/// (`made_by`: the call sites that passed it on, on every execution the
/// report allows), the calls that may have run just before each of them
/// in its function and may free memory ([`releases`], directly or
/// through the calls they make, calls through pointers included as the
/// graph resolves them): when the memory was freed between where the
/// pointer was taken and where it was used, by a call that does not take
/// the pointer itself (`lua_closeslot(L, -1)` closing the buffer's box
/// before `lua_pushlstring(L, B->b, B->n)`), one of those is likely it.
/// Nearest first, at most [`MAX_FREED_BEFORE`] per call.
pub fn freed_before(
    g: &Icfg,
    map: &VarMap,
    made_by: &[crate::image::fault::MadeBy],
    labels: &[postmortem_core::Label],
) -> Vec<crate::image::fault::Freed> {
    use postmortem_core::{FuncId, Label, NodeKind};
    fn passed_on(ms: &[crate::image::fault::MadeBy], g: &Icfg, out: &mut Vec<NodeId>) {
        for m in ms {
            if let Some(n) = m.node.filter(|&n| {
                m.on == "every" && g.kind(n) == NodeKind::CallSite && !out.contains(&n)
            }) {
                out.push(n);
            }
            passed_on(&m.from, g, out);
        }
    }
    let mut sites = Vec::new();
    passed_on(made_by, g, &mut sites);
    if sites.is_empty() {
        return Vec::new();
    }
    // The calls of a releasing function outside the program, by site.
    let external: std::collections::HashMap<usize, &str> = map
        .calls
        .iter()
        .filter(|(name, _)| releases(name))
        .flat_map(|(name, calls)| calls.iter().map(move |c| (c.site as usize, name.as_str())))
        .collect();
    // The functions that may free: those with such a call, those named
    // so, and their callers, transitively.
    let nf = g.functions().len();
    let mut frees = vec![false; nf];
    let mut callers: Vec<Vec<FuncId>> = vec![Vec::new(); nf];
    for n in g.nodes().filter(|&n| g.kind(n) == NodeKind::CallSite) {
        let h = g.func_of(n);
        if external.contains_key(&n.index()) {
            frees[h.index()] = true;
        }
        for c in g.callees(n) {
            callers[c.index()].push(h);
        }
    }
    for (i, f) in g.functions().iter().enumerate() {
        if releases(&f.name) {
            frees[i] = true;
        }
    }
    let mut stack: Vec<usize> = (0..nf).filter(|&i| frees[i]).collect();
    while let Some(f) = stack.pop() {
        for &h in &callers[f] {
            if !frees[h.index()] {
                frees[h.index()] = true;
                stack.push(h.index());
            }
        }
    }
    let may_free = |n: NodeId| {
        !sites.contains(&n)
            && (external.contains_key(&n.index()) || g.callees(n).any(|c| frees[c.index()]))
    };
    let mut out: Vec<crate::image::fault::Freed> = Vec::new();
    for &site in &sites {
        for n in postmortem_core::cause::calls_before(g, labels, site, &may_free, MAX_FREED_BEFORE)
        {
            let call = format!("the call at {}", where_is(g, n));
            if out.iter().any(|f| f.call == call) {
                continue;
            }
            let callee = match (external.get(&n.index()), g.callees(n).next()) {
                (Some(name), _) => format!("`{name}`"),
                (None, Some(c)) if g.callees(n).nth(1).is_none() => {
                    format!("`{}`", g.function(c).name)
                }
                _ => "a function through a pointer".to_string(),
            };
            out.push(crate::image::fault::Freed {
                call,
                callee,
                ran: if labels.get(n.index()) == Some(&Label::Yes) {
                    "yes"
                } else {
                    "maybe"
                }
                .into(),
                node: Some(n),
                before: Some(format!("the call at {}", where_is(g, site))),
            });
        }
    }
    out
}

/// The branches that tested `u`'s variable (a local of the crash frame)
/// while it already held the value and went on toward the crash: its
/// tests whose branch the [`crash_walk`] passed (the walk goes back from
/// the crash to the variable's writes, without the steps its tests take
/// only with another value), with two ways at least, not No. A check
/// that let the bad value through, when the check is the bug
/// (`if (n < 0)` for `n <= 0`). (No walk for a global: a call on the
/// way may write it.)
pub fn guards(
    g: &Icfg,
    map: &VarMap,
    u: &ValueUse,
    walk: &CrashWalk,
    labels: &[postmortem_core::Label],
) -> Vec<crate::image::fault::Guard> {
    let Some(v) = map.vars.get(u.var) else {
        return Vec::new();
    };
    let passed = &walk.passed;
    let mut out: Vec<crate::image::fault::Guard> = Vec::new();
    for t in &v.tests {
        let b = NodeId::new(t.branch as usize);
        let label = labels.get(b.index()).copied();
        if t.successors().len() < 2
            || passed.binary_search(&b).is_err()
            || label == Some(postmortem_core::Label::No)
            || out.iter().any(|o| o.node == Some(b))
        {
            continue;
        }
        out.push(crate::image::fault::Guard {
            branch: format!("the branch at {}", where_is(g, b)),
            ran: if label == Some(postmortem_core::Label::Yes) {
                "yes"
            } else {
                "maybe"
            }
            .into(),
            tested: None,
            bound: None,
            node: Some(b),
        });
    }
    out
}

/// Checks of another variable (a guess at a wrong-variable check: `x =
/// getenv(..); if (name != NULL) use(x);`). For `u`, a NULL pointer of
/// the crash frame that is, through copies, the result of a call (the
/// chain `p = envbase`, `envbase = getenv(...)`): the branches that test
/// another pointer of the function for NULL between that call's store
/// and the crash (walking back from the crash over nodes not No) and
/// that may have run. The value's own variables were tested nowhere on
/// that way (else the check let it through: [`guards`]). A heuristic for
/// the ranking only: such a branch did not make the value.
pub fn wrong_checks(
    g: &Icfg,
    map: &VarMap,
    u: &ValueUse,
    crash: &NodeSet,
    labels: &[postmortem_core::Label],
) -> Vec<crate::image::fault::Guard> {
    use postmortem_core::Label;
    let Some(v) = map.vars.get(u.var) else {
        return Vec::new();
    };
    let VarScope::Local { entry, .. } = v.scope else {
        return Vec::new();
    };
    if u.value != 0 || !v.pointer || !u.place.starts_with("frame #0 ") {
        return Vec::new();
    }
    // The value's variables, through copies (the function's only).
    let mut chain = vec![u.var];
    let mut i = 0;
    while i < chain.len() && chain.len() < 8 {
        let Some(w) = map.vars.get(chain[i]) else {
            break;
        };
        for (_, o) in &w.from {
            if let Origin::Copy(k) = o {
                if !chain.contains(&(*k as usize)) {
                    chain.push(*k as usize);
                }
            }
        }
        i += 1;
    }
    // The stores of a call's result that can have carried the NULL.
    let mut roots: Vec<NodeId> = Vec::new();
    let mut holder = String::new();
    for &k in &chain {
        let Some(w) = map.vars.get(k) else { continue };
        for (n, o) in &w.from {
            let n = NodeId::new(*n as usize);
            if matches!(o, Origin::Call(_)) && labels.get(n.index()) != Some(&Label::No) {
                roots.push(n);
                holder = w.name.clone();
            }
        }
    }
    if roots.is_empty() {
        return Vec::new();
    }
    let mut passed: Vec<NodeId> = Vec::new();
    for &c in crash.nodes() {
        if g.func_of(c) != g.func_of(NodeId::new(entry as usize)) {
            return Vec::new();
        }
        passed.extend(
            postmortem_core::cause::reaching_writes(g, labels, c, &roots, &|_, _| false).passed,
        );
    }
    passed.sort_unstable();
    passed.dedup();
    let on_way = |b: NodeId| passed.binary_search(&b).is_ok();
    // The value's own variables tested on the way: not this guess.
    let tested_itself = chain.iter().filter_map(|&k| map.vars.get(k)).any(|w| {
        w.tests
            .iter()
            .any(|t| on_way(NodeId::new(t.branch as usize)))
    });
    if tested_itself {
        return Vec::new();
    }
    let mut out: Vec<crate::image::fault::Guard> = Vec::new();
    for (k, w) in map.vars.iter().enumerate() {
        let same_fn = matches!(w.scope, VarScope::Local { entry: e, .. } if e == entry);
        if chain.contains(&k) || !w.pointer || !same_fn {
            continue;
        }
        for t in &w.tests {
            let b = NodeId::new(t.branch as usize);
            let null_test = matches!(
                t.kind,
                TestKind::Cmp {
                    pred: Pred::Eq | Pred::Ne,
                    constant: 0,
                    ..
                }
            );
            let label = labels.get(b.index()).copied();
            if !null_test
                || t.successors().len() < 2
                || !on_way(b)
                || label == Some(Label::No)
                || out.iter().any(|o| o.node == Some(b))
            {
                continue;
            }
            out.push(crate::image::fault::Guard {
                branch: format!("the branch at {}", where_is(g, b)),
                ran: if label == Some(Label::Yes) {
                    "yes"
                } else {
                    "maybe"
                }
                .into(),
                tested: Some((w.name.clone(), holder.clone())),
                bound: None,
                node: Some(b),
            });
        }
    }
    out
}

/// The activations of the crash stack from the crash frame's outwards,
/// each as its function and the calls that entered it, for a local `u`
/// of the crash frame ([`crate::origins::Tracer::entered_by`]). The chain
/// ends where frames may be missing (a gap), where a frame's calls are
/// not all in one function, where a frame does not enter its callee's
/// function, and at the outermost frame's caller (entered by the start).
/// Empty for a value of another frame.
pub fn entered_by(
    g: &Icfg,
    report: &postmortem_core::Report,
    u: &ValueUse,
) -> Vec<(postmortem_core::FuncId, Vec<NodeId>)> {
    let gap = |i: usize| report.stack_gaps.contains(&i) || report.sibling_gaps.contains(&i);
    let mut out = Vec::new();
    let Some(crash) = report.crash.as_ref() else {
        return out;
    };
    if !u.place.starts_with("frame #0 ") {
        return out;
    }
    let one_func = |nodes: &[NodeId]| {
        let f = g.func_of(*nodes.first()?);
        nodes.iter().all(|&n| g.func_of(n) == f).then_some(f)
    };
    // The activation being entered, and what it must be entered at.
    let Some(mut func) = one_func(crash.nodes()) else {
        return out;
    };
    for i in (0..report.stack.len()).rev() {
        let frame = &report.stack[i];
        if gap(i + 1) || one_func(frame.entry.nodes()) != Some(func) {
            break;
        }
        out.push((func, frame.call.nodes().to_vec()));
        match one_func(frame.call.nodes()) {
            Some(caller) => func = caller,
            None => break,
        }
    }
    out
}

/// `made` (the definitions of `u`'s value) without "uninitialised" for
/// a parameter: the prologue stores every parameter first, in the entry
/// block, before any statement of the function can read it, so only a
/// crash in the prologue itself (a stack overflow at the call: the crash
/// at the entry node or at a node of a parameter's store) leaves the
/// slot unwritten. What is left alone is then the definition on every
/// execution.
pub fn without_unwritten_parameter(
    map: &VarMap,
    u: &ValueUse,
    crash: &[NodeId],
    made: Vec<(
        postmortem_core::cause::Definition,
        postmortem_core::cause::Made,
    )>,
) -> Vec<(
    postmortem_core::cause::Definition,
    postmortem_core::cause::Made,
)> {
    use postmortem_core::cause::{Definition, Made};
    let Some(v) = map.vars.get(u.var) else {
        return made;
    };
    let stores: Vec<NodeId> = v.parameter_stores().collect();
    let VarScope::Local { entry, .. } = v.scope else {
        return made;
    };
    let in_prologue = crash
        .iter()
        .any(|c| c.as_u32() == entry || stores.contains(c));
    if stores.is_empty() || in_prologue {
        return made;
    }
    let mut out: Vec<_> = made
        .into_iter()
        .filter(|(d, _)| !matches!(d, Definition::Uninitialised(_)))
        .collect();
    if let [(_, m)] = out.as_mut_slice() {
        *m = Made::Every;
    }
    out
}

/// What [`postmortem_core::cause::reaching`] found for the value `u`, as
/// the writers show it: each definition's place (`kv.c:35`, or what it
/// is) and whether it made the value on every execution the report
/// allows. `entered_by`: the call sites that entered `u`'s activation and
/// its callers', as far as the stack says ([`entered_by`]).
pub fn cause(
    g: &Icfg,
    u: &ValueUse,
    made: &[(
        postmortem_core::cause::Definition,
        postmortem_core::cause::Made,
    )],
    labels: &[postmortem_core::Label],
    map: Option<&VarMap>,
    entered_by: &[(postmortem_core::FuncId, Vec<NodeId>)],
) -> crate::image::fault::Cause {
    use postmortem_core::cause::{Definition, Made};
    let entered_by: Vec<(postmortem_core::FuncId, &[NodeId])> =
        entered_by.iter().map(|(f, s)| (*f, s.as_slice())).collect();
    let tracer = map.map(|map| crate::origins::Tracer {
        g,
        map,
        labels,
        value: u.value,
        bytes: u.shown.bytes,
        entered_by: &entered_by,
        any_value: false,
    });
    let stores: Vec<NodeId> = u
        .cause
        .iter()
        .flat_map(|v| v.writes.nodes().iter().copied())
        .filter(|&n| {
            g.kind(n) != postmortem_core::NodeKind::Entry
                && labels.get(n.index()) == Some(&postmortem_core::Label::No)
        })
        .collect();
    let store_at = |n: NodeId| format!("the store at {}", where_is(g, n));
    let not_run = stores.iter().map(|&n| store_at(n)).collect();
    let skipped_by = stores
        .iter()
        .filter_map(|&n| {
            let b = postmortem_core::cause::skipped_by(g, labels, n)?;
            let ran = match labels.get(b.index()) {
                Some(postmortem_core::Label::Yes) => "yes",
                _ => "maybe",
            };
            Some(crate::image::fault::Skipped {
                store: store_at(n),
                branch: format!("the branch at {}", where_is(g, b)),
                ran: ran.to_string(),
                branch_node: Some(b),
            })
        })
        .collect();
    crate::image::fault::Cause {
        not_run,
        skipped_by,
        may_skip: Vec::new(),
        guards: Vec::new(),
        freed_by: Vec::new(),
        carriers_first: false,
        variable: format!("`{}` = {} ({})", u.name, u.value_text(), u.place),
        made_by: made
            .iter()
            .map(|&(d, m)| {
                let at = match (d, map.and_then(|m| m.vars.get(u.var))) {
                    (Definition::Store(n), Some(v)) => write_at(g, v, n),
                    (Definition::Store(n), None) => format!("the store at {}", where_is(g, n)),
                    (Definition::Uninitialised(_), _) => {
                        "no store in its activation (uninitialised)".to_string()
                    }
                    (Definition::Initial, _) => "its initial value".to_string(),
                };
                let how = match m {
                    Made::Every => "every",
                    Made::Some => "some",
                };
                let node = match d {
                    Definition::Store(n) | Definition::Uninitialised(n) => Some(n),
                    Definition::Initial => None,
                };
                // A constant that can leave the value is it.
                let exact = match (d, map.and_then(|m| m.vars.get(u.var))) {
                    (Definition::Store(n), Some(v)) => v
                        .writes
                        .iter()
                        .any(|&(x, w)| x as usize == n.index() && matches!(w, Written::Const(_))),
                    (Definition::Initial, Some(v)) => {
                        matches!(v.scope, VarScope::Global { init: Some(_), .. })
                    }
                    _ => false,
                };
                let (via, from) = match (&tracer, d) {
                    (Some(t), Definition::Store(n)) => t
                        .from_store(u.var, n, m == Made::Every)
                        .map_or((None, Vec::new()), |(via, from)| (Some(via), from)),
                    _ => (None, Vec::new()),
                };
                crate::image::fault::MadeBy {
                    at,
                    on: how.to_string(),
                    node,
                    via,
                    from,
                    exact,
                    ..Default::default()
                }
            })
            .collect(),
    }
}

/// At most this many branch tests per value (the first ones): its
/// automaton has 3 states per test (see `LastWrite::step`). Leaving tests
/// out is sound.
const MAX_TESTS: usize = 32;

/// The branch tests of `v` with the value `value`: for each, the
/// successor the value sends the branch to. A test whose branch is a
/// crash candidate is left out (the crash may have stopped the block
/// before its branch). Each used test is listed in `u`.
fn branch_tests(
    g: &Icfg,
    v: &Var,
    value: u64,
    crash: Option<&NodeSet>,
    u: &mut ValueUse,
) -> Vec<BranchTest> {
    let node = |x: u32| NodeId::new(x as usize);
    let mut out: Vec<BranchTest> = Vec::new();
    for t in &v.tests {
        let branch = node(t.branch);
        if crash.is_some_and(|c| c.contains(branch)) || out.iter().any(|b| b.branch == branch) {
            continue;
        }
        if out.len() == MAX_TESTS {
            break;
        }
        let taken = t.target(value);
        let others = t
            .successors()
            .into_iter()
            .filter(|&s| s != taken)
            .map(node)
            .collect();
        let to = g.lines(node(taken)).first().map_or_else(
            || format!("node {}", g.ext_id(node(taken))),
            |l| format!("line {l}"),
        );
        u.tests
            .push(format!("{} goes to {to}", where_is(g, branch)));
        out.push(BranchTest {
            branch,
            taken: node(taken),
            others,
        });
    }
    out
}

/// `file:line` of a node, else its id.
/// How a write `n` of `v` reads in the chain: ``the store at kv.c:30``,
/// or, for the store of a parameter's value on entry (clang puts it in
/// the node of the function's first statement), ``the parameter `e` at
/// kv.c:20`` (its declaration).
pub(crate) fn write_at(g: &Icfg, v: &Var, n: NodeId) -> String {
    let param = v
        .from
        .iter()
        .any(|(x, o)| *x as usize == n.index() && matches!(o, Origin::Arg(_)));
    match (&v.scope, param) {
        (VarScope::Local { line, .. }, true) if *line != 0 => {
            let at = where_is(g, n);
            let file = at.rsplit_once(':').map_or(at.as_str(), |(f, _)| f);
            format!("the parameter `{}` at {file}:{line}", v.name)
        }
        _ => format!("the store at {}", where_is(g, n)),
    }
}

pub(crate) fn where_is(g: &Icfg, n: NodeId) -> String {
    let file = g.file_of(n).map(|f| g.file_path(f)).unwrap_or("?");
    let file = file.rsplit('/').next().unwrap_or(file);
    match g.lines(n).first() {
        Some(l) => format!("{file}:{l}"),
        None => format!("node {}", g.ext_id(n)),
    }
}

/// Whether the function entered at `entry` may be active twice at once
/// (see [`reenters`]).
pub(crate) fn may_reenter(g: &Icfg, entry: NodeId) -> bool {
    reenters(g, entry)
}

/// Whether a function's activation may start another one before it ends:
/// its entry reaches itself over flow and call edges (not returns), and
/// from a call site to its return sites.
fn reenters(g: &Icfg, entry: NodeId) -> bool {
    use postmortem_core::icfg::EdgeKind;
    let mut seen = vec![false; g.num_nodes()];
    let mut stack = vec![entry];
    while let Some(v) = stack.pop() {
        let next = g
            .succs(v)
            .filter(|&(_, k)| k != EdgeKind::Return)
            .map(|(t, _)| t)
            .chain(g.return_sites(v));
        for w in next {
            if w == entry {
                return true;
            }
            if !seen[w.index()] {
                seen[w.index()] = true;
                stack.push(w);
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only the candidates the crash frame's walk met are checked: a
    /// store it did not reach and, when every way back met a write, the
    /// uninitialised slot are dropped; a global's initial value stays.
    #[test]
    fn the_candidates_outside_the_frames_walk_are_dropped() {
        use postmortem_core::cause::{Definition, Variable};
        use postmortem_core::report::NodeSet;
        let n = NodeId::new;
        let v = Variable {
            writes: NodeSet::new(vec![n(1), n(2), n(3)]).unwrap(),
            candidates: vec![
                Definition::Store(n(2)),
                Definition::Store(n(3)),
                Definition::Uninitialised(n(1)),
                Definition::Initial,
            ],
            what: "x".into(),
        };
        let walk = |writes: Vec<NodeId>, entry: Option<NodeId>| CrashWalk {
            writes,
            entry,
            passed: Vec::new(),
        };
        assert_eq!(
            within_frame(&v, &walk(vec![n(3)], None)).candidates,
            vec![Definition::Store(n(3)), Definition::Initial]
        );
        assert_eq!(
            within_frame(&v, &walk(vec![n(2), n(3)], Some(n(1)))).candidates,
            v.candidates
        );
    }

    /// The error says what it said as a string (issue 38).
    #[test]
    fn node_out_of_range_keeps_its_message() {
        let e = NodeOutOfRange {
            var: "count".into(),
            node: 9,
            nodes: 4,
        };
        assert_eq!(
            e.to_string(),
            "variable `count`: node 9 out of range (graph of 4 nodes)"
        );
    }

    /// The front-end's records for `why` (indexed accesses, bounds, field
    /// tests, calls' argument nodes, calls through pointers) are checked
    /// against the graph like the variables' nodes: a corrupt cache is an
    /// error, not a panic later.
    #[test]
    fn why_records_are_checked_against_the_graph() {
        let ok = VarMap::default();
        assert!(ok.check(4).is_ok());
        let call = CallArgs {
            site: 1,
            args: Vec::new(),
            arg_nodes: vec![Some(9)],
        };
        let cases = [
            VarMap {
                indexes: vec![IndexUse {
                    node: 9,
                    var: 0,
                    offset: 0,
                }],
                ..VarMap::default()
            },
            VarMap {
                bounds: vec![BoundTest {
                    branch: 9,
                    var: 0,
                    bound: Origin::Arg(0),
                }],
                ..VarMap::default()
            },
            VarMap {
                field_tests: vec![(9, "struct.s.0".into())],
                ..VarMap::default()
            },
            VarMap {
                indirect: vec![call.clone()],
                ..VarMap::default()
            },
            VarMap {
                calls: [("f".to_string(), vec![call])].into(),
                ..VarMap::default()
            },
        ];
        for m in cases {
            let e = m.check(4).expect_err("node 9 of 4");
            assert_eq!(e.node, 9, "{e}");
        }
    }

    fn cmp(load_bits: u32, casts: Vec<Cast>, pred: Pred, constant: u64, swapped: bool) -> Test {
        Test::cmp(load_bits, casts, pred, constant, swapped)
    }

    /// What the HTML report needs of a value (its notation, its frame,
    /// its declaration) is kept beside it, and is not in the JSON.
    #[test]
    fn values_keep_where_the_html_shows_them() {
        use postmortem_core::{IcfgBuilder, NodeKind, NodeSpec};
        let mut b = IcfgBuilder::new();
        let f = b.function("f");
        b.set_function_file(f, "f.c");
        let mut n = Vec::new();
        for (id, kind, line) in [("e", NodeKind::Entry, 1u32), ("s", NodeKind::Statement, 2)] {
            n.push(
                b.add_node(NodeSpec {
                    ext_id: id,
                    kind,
                    func: f,
                    label: "",
                    lines: &[line],
                })
                .unwrap(),
            );
        }
        b.add_flow_edge(n[0], n[1]);
        let g = b.build().unwrap();
        let var = |name: &str, scope: VarScope, pointer: bool| Var {
            name: name.into(),
            scope,
            offset: 0,
            bytes: if pointer { 8 } else { 4 },
            pointer,
            writes: vec![(n[1].index() as u32, Written::Const(1))],
            tests: vec![],
            from: vec![],
            reads: None,
        };
        let map = VarMap {
            vars: vec![
                var(
                    "p",
                    VarScope::Local {
                        function: "f".into(),
                        line: 7,
                        entry: n[0].index() as u32,
                        inlined_at: None,
                    },
                    true,
                ),
                var(
                    "g",
                    VarScope::Global {
                        symbol: "g".into(),
                        init: Some(0),
                    },
                    false,
                ),
            ],
            left_out: BTreeMap::new(),
            returns: BTreeMap::new(),
            calls: BTreeMap::new(),
            indirect: Vec::new(),
            indexes: Vec::new(),
            bounds: Vec::new(),
            field_tests: Vec::new(),
            fields: BTreeMap::new(),
            derefs: Vec::new(),
            out_locals: Vec::new(),
            param_writes: BTreeMap::new(),
        };
        let observed = [
            Observed {
                var: 0,
                value: 0,
                place: "frame #0 `f`".into(),
                frame: Some(0),
                address: None,
            },
            Observed {
                var: 1,
                value: 0xffff_fffe,
                place: "global".into(),
                frame: None,
                address: None,
            },
        ];
        let made = constraints(&g, &map, &observed, None, &|o| o.frame.map(|_| 3));
        let u = &made.uses;
        assert_eq!(
            u[0].shown,
            Shown {
                bytes: 8,
                pointer: true,
                decl: Some((n[0], 7)),
                activation: Some(3),
                stores: vec![n[1]],
            }
        );
        assert_eq!(u[0].value_text(), "0x0");
        assert_eq!(u[1].shown.decl, None);
        assert_eq!(u[1].shown.activation, None);
        assert_eq!(u[1].value_text(), "4294967294 (-2)");
        let mut small = u[1].clone();
        small.value = 5;
        assert_eq!(small.value_text(), "5");
        small.shown.bytes = 8;
        small.value = u64::MAX;
        assert_eq!(small.value_text(), "18446744073709551615 (-1)");
        let json = serde_json::to_string(&made.uses).unwrap();
        assert!(
            !json.contains("\"shown\"") && !json.contains("\"decl\""),
            "{json}"
        );
    }

    /// A parameter's slot is written by the prologue before any
    /// statement reads it: "uninitialised" is dropped and the store is
    /// the definition on every execution, unless the crash is in the
    /// prologue (the entry node, or the node of the parameter's store).
    #[test]
    fn a_parameter_is_never_read_unwritten_after_its_prologue() {
        use postmortem_core::cause::{Definition, Made};
        let (entry, store, crash) = (NodeId::new(0), NodeId::new(1), NodeId::new(5));
        let param = |from: Vec<(u32, Origin)>| VarMap {
            vars: vec![Var {
                name: "word".into(),
                scope: VarScope::Local {
                    function: "put".into(),
                    line: 7,
                    entry: 0,
                    inlined_at: None,
                },
                offset: 0,
                bytes: 8,
                pointer: true,
                writes: vec![(1, Written::Unknown)],
                tests: vec![],
                from,
                reads: None,
            }],
            ..VarMap::default()
        };
        let u = ValueUse {
            name: "word".into(),
            place: "frame #0 `put`".into(),
            ..ValueUse::default()
        };
        let made = vec![
            (Definition::Store(store), Made::Some),
            (Definition::Uninitialised(entry), Made::Some),
        ];
        let map = param(vec![(1, Origin::Arg(0))]);
        assert_eq!(
            without_unwritten_parameter(&map, &u, &[crash], made.clone()),
            [(Definition::Store(store), Made::Every)]
        );
        for at in [entry, store] {
            assert_eq!(
                without_unwritten_parameter(&map, &u, &[at], made.clone()),
                made
            );
        }
        // Not a parameter: a local may be read before any store.
        let local = param(vec![]);
        assert_eq!(
            without_unwritten_parameter(&local, &u, &[crash], made.clone()),
            made
        );
    }

    #[test]
    fn comparisons_follow_the_loads_width_and_casts() {
        // `signed char c = -1; if (c < 0)`: loaded i8 0xff, sext to i32.
        let t = cmp(8, vec![Cast::Sext(32)], Pred::Slt, 0, false);
        assert_eq!(t.target(0xff), 1);
        assert_eq!(t.target(0x7f), 2);
        // The same byte zero-extended is 255, not negative.
        let t = cmp(8, vec![Cast::Zext(32)], Pred::Slt, 0, false);
        assert_eq!(t.target(0xff), 2);
        // Bits above the load's width are not the variable's.
        let t = cmp(32, vec![], Pred::Eq, 0, false);
        assert_eq!(t.target(0xdead_0000_0000), 1);
        // `if (b)` on a bool: trunc to i1, `!= 0`.
        let t = cmp(8, vec![Cast::Trunc(1)], Pred::Ne, 0, false);
        assert_eq!((t.target(1), t.target(0), t.target(2)), (1, 2, 2));
        // `0 < n` (constant on the left), signed 64-bit.
        let t = cmp(64, vec![], Pred::Slt, 0, true);
        assert_eq!((t.target(5), t.target(u64::MAX)), (1, 2));
        // Unsigned: -1 is the largest.
        let t = cmp(32, vec![], Pred::Ugt, 10, false);
        assert_eq!(t.target(0xffff_ffff), 1);
        // A pointer against null.
        let t = cmp(64, vec![], Pred::Eq, 0, false);
        assert_eq!((t.target(0), t.target(0x5555_0000)), (1, 2));
    }

    #[test]
    fn switches_pick_the_case_or_the_default() {
        let t = Test {
            branch: 0,
            load_bits: 32,
            casts: vec![],
            kind: TestKind::Switch {
                cases: vec![(0, 3), (1, 4), (0xffff_ffff, 5)],
                default: 6,
            },
        };
        assert_eq!(t.target(1), 4);
        assert_eq!(t.target(0xffff_ffff), 5);
        assert_eq!(t.target(7), 6);
        assert_eq!(t.successors(), vec![3, 4, 5, 6]);
    }
}
