//! What a code object's loaded images share with it: the target, the layout, the kernels,
//! variables and functions, and the index that finds them by name. [`CodeObject`] builds it
//! once at parse; every [`LoadedImage`] holds it and adds only its base address.
//!
//! [`CodeObject`]: crate::CodeObject
//! [`LoadedImage`]: crate::LoadedImage

use std::hash::BuildHasher as _;

use crate::elf_file::CodeObjectVersion;
use crate::global_symbol::{FunctionSymbol, VariableSymbol};
use crate::kernel::KernelSymbol;
use crate::metadata::Metadata;
use crate::segment::ImageLayout;
use crate::target::TargetId;

/// What a name finds in a code object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SymbolRef {
    Kernel(u32),
    Variable(u32),
    Function(u32),
}

/// Everything a loaded image needs, owned and shared between the code object and its images.
#[derive(Debug)]
pub(crate) struct ImageInfo {
    pub version: CodeObjectVersion,
    pub target: TargetId,
    pub layout: ImageLayout,
    pub kernels: Vec<KernelSymbol>,
    pub variables: Vec<VariableSymbol>,
    pub functions: Vec<FunctionSymbol>,
    pub by_name: NameIndex,
    /// The metadata without its kernels (those are in `kernels`).
    pub metadata: Option<Metadata>,
}

impl ImageInfo {
    pub fn lookup(&self, name: &str) -> Option<SymbolRef> {
        let names = Names {
            kernels: &self.kernels,
            variables: &self.variables,
            functions: &self.functions,
        };
        self.by_name.get(&names, name)
    }
}

/// Which of an entity's names an index entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NameOf {
    /// A kernel's link name, a variable's or a function's name.
    Plain,
    /// A kernel's descriptor symbol (`name.kd`).
    Descriptor,
    /// A kernel's metadata `.name`.
    Source,
}

/// Name lookup in O(1) without copying the names: a hash table of (entity, which name) entries
/// whose names are read from the entities themselves. The first claim on a name wins: kernels
/// (link name, `.kd` name, metadata name), then exported variables and functions, then local
/// ones.
#[derive(Debug, Default)]
pub(crate) struct NameIndex {
    hasher: hashbrown::DefaultHashBuilder,
    table: hashbrown::HashTable<(SymbolRef, NameOf)>,
}

impl NameIndex {
    pub(crate) fn build(
        kernels: &[KernelSymbol],
        variables: &[VariableSymbol],
        functions: &[FunctionSymbol],
    ) -> Self {
        let mut index = Self {
            hasher: hashbrown::DefaultHashBuilder::default(),
            table: hashbrown::HashTable::with_capacity(
                kernels.len() * 3 + variables.len() + functions.len(),
            ),
        };
        let names = Names {
            kernels,
            variables,
            functions,
        };
        for i in 0..kernels.len() {
            let r = SymbolRef::Kernel(i as u32);
            for which in [NameOf::Plain, NameOf::Descriptor, NameOf::Source] {
                index.insert(&names, r, which);
            }
        }
        for exported in [true, false] {
            for (i, v) in variables.iter().enumerate() {
                if v.exported == exported {
                    index.insert(&names, SymbolRef::Variable(i as u32), NameOf::Plain);
                }
            }
            for (i, f) in functions.iter().enumerate() {
                if f.exported == exported {
                    index.insert(&names, SymbolRef::Function(i as u32), NameOf::Plain);
                }
            }
        }
        index
    }

    fn insert(&mut self, names: &Names<'_>, r: SymbolRef, which: NameOf) {
        let Some(name) = names.get(r, which) else {
            return;
        };
        let hasher = &self.hasher;
        let hash = hasher.hash_one(name);
        let entry = self.table.entry(
            hash,
            |&(other, other_which)| names.get(other, other_which) == Some(name),
            |&(other, other_which)| {
                hasher.hash_one(names.get(other, other_which).unwrap_or_default())
            },
        );
        if let hashbrown::hash_table::Entry::Vacant(slot) = entry {
            slot.insert((r, which));
        }
    }

    pub(crate) fn get(&self, names: &Names<'_>, name: &str) -> Option<SymbolRef> {
        let hash = self.hasher.hash_one(name);
        self.table
            .find(hash, |&(r, which)| names.get(r, which) == Some(name))
            .map(|&(r, _)| r)
    }
}

/// The entities whose names a [`NameIndex`] refers to.
pub(crate) struct Names<'a> {
    pub kernels: &'a [KernelSymbol],
    pub variables: &'a [VariableSymbol],
    pub functions: &'a [FunctionSymbol],
}

impl Names<'_> {
    fn get(&self, r: SymbolRef, which: NameOf) -> Option<&str> {
        match (r, which) {
            (SymbolRef::Kernel(i), NameOf::Plain) => Some(&self.kernels[i as usize].name),
            (SymbolRef::Kernel(i), NameOf::Descriptor) => {
                Some(&self.kernels[i as usize].descriptor_symbol)
            }
            (SymbolRef::Kernel(i), NameOf::Source) => self.kernels[i as usize]
                .metadata
                .as_ref()
                .map(|m| m.name.as_str()),
            (SymbolRef::Variable(i), _) => Some(&self.variables[i as usize].name),
            (SymbolRef::Function(i), _) => Some(&self.functions[i as usize].name),
        }
    }
}
