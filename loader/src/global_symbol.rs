//! Variables (`STT_OBJECT`) and functions (`STT_FUNC`, kernels' entry symbols excluded) of a
//! code object (code-objects.md §4.1, §9). Functions are what ROCr never exposes: their
//! addresses let a program build function pointers and call device functions indirectly.

/// A variable of a code object, at a virtual address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariableSymbol {
    /// The name.
    pub name: String,
    /// Virtual address.
    pub vaddr: u64,
    /// `st_size`.
    pub size: u64,
    /// Whether other code objects and the host may see it (global or weak, default or protected
    /// visibility). Local variables come from `.symtab` only.
    pub exported: bool,
}

/// A device function of a code object, at a virtual address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionSymbol {
    /// The name.
    pub name: String,
    /// Virtual address of its first instruction (not necessarily 256-aligned).
    pub vaddr: u64,
    /// `st_size`: bytes of code.
    pub size: u64,
    /// Whether it is exported (local functions come from `.symtab` only).
    pub exported: bool,
}

/// A variable of a loaded image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variable<'a> {
    /// The name.
    pub name: &'a str,
    /// GPU address.
    pub address: u64,
    /// Bytes.
    pub size: u64,
    /// Whether it is exported.
    pub exported: bool,
}

/// A function of a loaded image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Function<'a> {
    /// The name.
    pub name: &'a str,
    /// GPU address of its first instruction: a value for a device function pointer.
    pub address: u64,
    /// Bytes of code.
    pub size: u64,
    /// Whether it is exported.
    pub exported: bool,
}

impl VariableSymbol {
    pub(crate) fn at(&self, delta: u64) -> Variable<'_> {
        Variable {
            name: &self.name,
            address: self.vaddr.wrapping_add(delta),
            size: self.size,
            exported: self.exported,
        }
    }
}

impl FunctionSymbol {
    pub(crate) fn at(&self, delta: u64) -> Function<'_> {
        Function {
            name: &self.name,
            address: self.vaddr.wrapping_add(delta),
            size: self.size,
            exported: self.exported,
        }
    }
}
