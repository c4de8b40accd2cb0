//! Typed dense ids. Every entity of the model is a `u32` newtype; side tables
//! are vectors indexed by it (the Cranelift / regex-automata style).

macro_rules! entity_id {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
        pub struct $name(pub(crate) u32);

        // Not every id uses all of its methods.
        #[allow(dead_code)]
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
            #[allow(dead_code)]
            pub fn as_u32(self) -> u32 {
                self.0
            }
        }

        impl $crate::ids::EntityId for $name {
            #[inline]
            fn new(index: usize) -> Self {
                Self::new(index)
            }
            #[inline]
            fn index(self) -> usize {
                self.index()
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

pub(crate) use entity_id;

/// A dense id: a `u32` newtype made by `entity_id!`.
pub trait EntityId: Copy {
    /// Builds an id from its dense index (panics past `u32`).
    fn new(index: usize) -> Self;
    /// The dense index of this id.
    fn index(self) -> usize;
}

/// A vector indexed by a typed id (cranelift's `PrimaryMap`): `push`
/// returns the new element's id, and only that id type indexes it.
#[derive(Clone, Debug)]
pub(crate) struct IdVec<I, T> {
    items: Vec<T>,
    _id: std::marker::PhantomData<fn(I) -> I>,
}

impl<I: EntityId, T> IdVec<I, T> {
    pub(crate) fn new() -> Self {
        IdVec {
            items: Vec::new(),
            _id: std::marker::PhantomData,
        }
    }

    /// Room for `n` more elements without reallocating.
    pub(crate) fn reserve(&mut self, n: usize) {
        self.items.reserve(n);
    }

    /// Appends `item`; its id.
    pub(crate) fn push(&mut self, item: T) -> I {
        let id = I::new(self.items.len());
        self.items.push(item);
        id
    }

    /// The id the next `push` returns.
    pub(crate) fn next_id(&self) -> I {
        I::new(self.items.len())
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// The ids, in order.
    pub(crate) fn ids(&self) -> impl DoubleEndedIterator<Item = I> + ExactSizeIterator {
        (0..self.items.len()).map(I::new)
    }

    /// The elements, in id order.
    pub(crate) fn values(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    /// The ids and their elements, in id order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (I, &T)> {
        self.items.iter().enumerate().map(|(i, x)| (I::new(i), x))
    }

    /// `len` copies of `value`: a side table over the ids `0..len`.
    pub(crate) fn filled(len: usize, value: T) -> Self
    where
        T: Clone,
    {
        IdVec {
            items: vec![value; len],
            _id: std::marker::PhantomData,
        }
    }
}

impl<I: EntityId, T> FromIterator<T> for IdVec<I, T> {
    fn from_iter<It: IntoIterator<Item = T>>(iter: It) -> Self {
        IdVec {
            items: iter.into_iter().collect(),
            _id: std::marker::PhantomData,
        }
    }
}

impl<I: EntityId, T> Default for IdVec<I, T> {
    fn default() -> Self {
        IdVec::new()
    }
}

impl<I: EntityId, T> std::ops::Index<I> for IdVec<I, T> {
    type Output = T;
    #[inline]
    fn index(&self, id: I) -> &T {
        &self.items[id.index()]
    }
}

impl<I: EntityId, T> std::ops::IndexMut<I> for IdVec<I, T> {
    #[inline]
    fn index_mut(&mut self, id: I) -> &mut T {
        &mut self.items[id.index()]
    }
}
