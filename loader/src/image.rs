//! A code object placed at a GPU address: its kernels, variables and functions with their GPU
//! addresses, found by name in O(1); and a namespace of external definitions for the next code
//! object to load.

use std::collections::HashMap;
use std::sync::Arc;

use crate::elf_file::CodeObjectVersion;
use crate::error::{Error, Result};
use crate::global_symbol::{Function, Variable};
use crate::image_info::{ImageInfo, SymbolRef};
use crate::kernel::Kernel;
use crate::relocation::ExternalSymbols;
use crate::target::TargetId;

/// A loaded image: owned, cheap to clone, and valid for as long as the memory it was loaded
/// into holds the image (which the caller owns).
#[derive(Debug, Clone)]
pub struct LoadedImage {
    info: Arc<ImageInfo>,
    base: u64,
}

impl LoadedImage {
    pub(crate) fn new(info: Arc<ImageInfo>, base: u64) -> Self {
        Self { info, base }
    }

    /// GPU address of the image's first byte.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Bytes of the image.
    pub fn size(&self) -> u64 {
        self.info.layout.size
    }

    /// The load delta: a code-object virtual address `v` is at GPU address `v + delta`
    /// (wrapping), ROCr's `LOAD_DELTA`.
    pub fn delta(&self) -> u64 {
        self.base.wrapping_sub(self.info.layout.start_vaddr)
    }

    /// The target the code object was built for.
    pub fn target(&self) -> TargetId {
        self.info.target
    }

    /// The code-object version.
    pub fn version(&self) -> CodeObjectVersion {
        self.info.version
    }

    /// The kernel called `name` or `name.kd` (or by its metadata `.name`).
    pub fn kernel(&self, name: &str) -> Option<Kernel<'_>> {
        match self.info.lookup(name)? {
            SymbolRef::Kernel(i) => Some(Kernel::new(&self.info.kernels[i as usize], self.delta())),
            _ => None,
        }
    }

    /// Every kernel, in descriptor-address order.
    pub fn kernels(&self) -> impl Iterator<Item = Kernel<'_>> {
        let delta = self.delta();
        self.info.kernels.iter().map(move |k| Kernel::new(k, delta))
    }

    /// The variable called `name` (an exported one, else a local one from `.symtab`).
    pub fn variable(&self, name: &str) -> Option<Variable<'_>> {
        match self.info.lookup(name)? {
            SymbolRef::Variable(i) => Some(self.info.variables[i as usize].at(self.delta())),
            _ => None,
        }
    }

    /// Every variable.
    pub fn variables(&self) -> impl Iterator<Item = Variable<'_>> {
        let delta = self.delta();
        self.info.variables.iter().map(move |v| v.at(delta))
    }

    /// The device function called `name` (not a kernel's entry point).
    pub fn function(&self, name: &str) -> Option<Function<'_>> {
        match self.info.lookup(name)? {
            SymbolRef::Function(i) => Some(self.info.functions[i as usize].at(self.delta())),
            _ => None,
        }
    }

    /// Every function other than kernel entry points.
    pub fn functions(&self) -> impl Iterator<Item = Function<'_>> {
        let delta = self.delta();
        self.info.functions.iter().map(move |f| f.at(delta))
    }

    /// Every exported name with its GPU address: variables, functions and kernel descriptors
    /// (as `name.kd`), what other code objects may refer to.
    pub fn exports(&self) -> impl Iterator<Item = (&str, u64)> {
        let delta = self.delta();
        let kernels = self
            .info
            .kernels
            .iter()
            .filter(|k| k.exported)
            .map(move |k| {
                (
                    k.descriptor_symbol.as_str(),
                    k.descriptor_vaddr.wrapping_add(delta),
                )
            });
        let variables = self
            .info
            .variables
            .iter()
            .filter(|v| v.exported)
            .map(move |v| (v.name.as_str(), v.vaddr.wrapping_add(delta)));
        let functions = self
            .info
            .functions
            .iter()
            .filter(|f| f.exported)
            .map(move |f| (f.name.as_str(), f.vaddr.wrapping_add(delta)));
        kernels.chain(variables).chain(functions)
    }
}

/// One namespace of external definitions, as an HSA executable has: host-defined symbols and
/// the exports of code objects already loaded. Defining a name twice is an error.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExternalDefinitions {
    symbols: HashMap<String, u64>,
}

impl ExternalDefinitions {
    /// An empty namespace.
    pub fn new() -> Self {
        Self::default()
    }

    /// Define `name` at `address` (ROCr's `hsa_executable_agent_global_variable_define`).
    pub fn define(&mut self, name: &str, address: u64) -> Result<()> {
        if self.symbols.contains_key(name) {
            return Err(Error::AlreadyDefined(name.to_owned()));
        }
        self.symbols.insert(name.to_owned(), address);
        Ok(())
    }

    /// Define every export of `image`; nothing is defined if one of its names is taken.
    pub fn define_exports(&mut self, image: &LoadedImage) -> Result<()> {
        if let Some((name, _)) = image.exports().find(|(n, _)| self.symbols.contains_key(*n)) {
            return Err(Error::AlreadyDefined(name.to_owned()));
        }
        for (name, address) in image.exports() {
            self.symbols.insert(name.to_owned(), address);
        }
        Ok(())
    }

    /// The address of `name`.
    pub fn get(&self, name: &str) -> Option<u64> {
        self.symbols.get(name).copied()
    }

    /// Number of definitions.
    pub fn len(&self) -> usize {
        self.symbols.len()
    }

    /// Whether nothing is defined.
    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }
}

impl ExternalSymbols for ExternalDefinitions {
    fn resolve(&self, name: &str) -> Option<u64> {
        self.get(name)
    }
}
