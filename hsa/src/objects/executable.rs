//! Code-object readers, executables and their symbols, by handle (`api::executable` makes,
//! loads, queries and destroys them).

use std::sync::{Arc, Mutex};

use crate::table::Table;

/// A symbol of an executable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SymbolKind {
    /// A kernel: its descriptor and segment sizes.
    Kernel {
        /// Descriptor address.
        object: u64,
        /// Kernarg bytes.
        kernarg_size: u32,
        /// Kernarg alignment.
        kernarg_align: u32,
        /// Static LDS bytes.
        group_size: u32,
        /// Scratch bytes per work-item.
        private_size: u32,
        /// Whether its call stack is dynamic (scratch beyond the static size).
        dynamic_stack: bool,
    },
    /// A device variable.
    Variable {
        /// Its address.
        address: u64,
        /// Its size.
        size: u64,
    },
    /// A device function.
    Function {
        /// Its address.
        address: u64,
    },
}

/// An executable symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    /// Its name as HSA shows it (kernels with `.kd`).
    pub name: String,
    /// The agent (index).
    pub agent: usize,
    /// What it is.
    pub kind: SymbolKind,
}

/// An executable.
#[derive(Debug, Default)]
pub struct HsaExecutable {
    /// Whether `hsa_executable_freeze` was called.
    pub frozen: bool,
    /// The code objects loaded, by agent.
    pub loaded: Vec<(usize, aqueduct::Executable)>,
    /// Its symbols' handles.
    pub symbols: Vec<u64>,
    /// The loader's own copy of each loaded code object (parallel to `loaded`), which the
    /// loader extension reports as its storage (`loader_extension`).
    pub code_objects: Vec<Arc<Vec<u8>>>,
}

/// Readers, executables and symbols.
#[derive(Debug, Default)]
pub struct Executables {
    /// Code-object readers (and deserialised code objects): the bytes.
    pub readers: Table<Arc<Vec<u8>>>,
    /// Executables.
    pub executables: Table<Arc<Mutex<HsaExecutable>>>,
    /// Symbols of every executable.
    pub symbols: Table<Symbol>,
}

impl Executables {
    /// Drop everything.
    pub fn close(&self) {
        drop(self.symbols.drain());
        drop(self.executables.drain());
        drop(self.readers.drain());
    }
}
