//! Typed dense ids. Every entity of the model is a `u32` newtype; side tables
//! are vectors indexed by it (the Cranelift / regex-automata style).

macro_rules! entity_id {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
        pub struct $name(pub(crate) u32);

        impl $name {
            /// Builds an id from its dense index.
            ///
            /// # Panics
            /// If `index` does not fit in a `u32`.
            #[inline]
            pub fn new(index: usize) -> Self {
                Self(u32::try_from(index).expect("entity index overflows u32"))
            }
            /// The dense index of this id.
            #[inline]
            pub fn index(self) -> usize {
                self.0 as usize
            }
            /// The raw `u32` value.
            #[inline]
            pub fn as_u32(self) -> u32 {
                self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}{}", stringify!($name), self.0)
            }
        }
    };
}

entity_id!(
    /// A node of the ICFG (a statement, call site, entry or exit).
    NodeId
);
entity_id!(
    /// A function (procedure) of the program.
    FuncId
);
entity_id!(
    /// An interned source file path.
    FileId
);
