//! Kernels: a kernel descriptor symbol (`name.kd`), the descriptor it points to, the entry
//! point(s) it implies, and the kernel's metadata (code-objects.md §4, §5, §8).

use crate::implicit_args::ImplicitArgs;
use crate::kernel_descriptor::{KERNEL_DESCRIPTOR_SIZE, KernelDescriptor};
use crate::metadata::{KernelArg, KernelMetadata};

/// Bytes of the compatibility prologue before the real entry of a kernel with preloaded
/// kernel arguments (firmware that preloads adds 256 to the entry offset).
pub const PRELOAD_PROLOGUE_SIZE: u64 = 256;

/// The kernarg alignment reported when the metadata gives none or less (ROCr reports 16; the
/// kernarg buffer must be at least 16-byte aligned).
pub const MIN_KERNARG_ALIGN: u32 = 16;

/// A kernel of a code object, with virtual addresses of the code object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelSymbol {
    /// The link name (the descriptor symbol without `.kd`), e.g. `add` or `_Z3addPiS_`.
    pub name: String,
    /// The descriptor symbol, e.g. `add.kd`.
    pub descriptor_symbol: String,
    /// Virtual address of the descriptor.
    pub descriptor_vaddr: u64,
    /// Virtual address of the first instruction (descriptor + signed entry offset).
    pub entry_vaddr: u64,
    /// The decoded descriptor.
    pub descriptor: KernelDescriptor,
    /// Whether the descriptor symbol is exported.
    pub exported: bool,
    /// The kernel's entry in `amdhsa.kernels`, if the object has metadata.
    pub metadata: Option<KernelMetadata>,
    /// Where the hidden arguments are, if the kernel has any.
    pub implicit_args: Option<ImplicitArgs>,
}

impl KernelSymbol {
    /// The second entry point of a kernel with preloaded kernel arguments: where firmware that
    /// preloads starts it (entry + 256), and what a PM4 dispatcher must program.
    pub fn preload_entry_vaddr(&self) -> Option<u64> {
        (self.descriptor.kernarg_preload_length() != 0)
            .then(|| self.entry_vaddr + PRELOAD_PROLOGUE_SIZE)
    }

    /// Bytes of kernarg segment: the descriptor's `kernarg_size`, or the metadata's when the
    /// descriptor leaves it 0 (unspecified).
    pub fn kernarg_size(&self) -> u32 {
        match (self.descriptor.kernarg_size, &self.metadata) {
            (0, Some(m)) => m.kernarg_segment_size,
            (size, _) => size,
        }
    }

    /// Alignment the kernarg buffer needs: the metadata's `.kernarg_segment_align`, at least 16.
    pub fn kernarg_align(&self) -> u32 {
        self.metadata
            .as_ref()
            .map_or(MIN_KERNARG_ALIGN, |m| m.kernarg_segment_align)
            .max(MIN_KERNARG_ALIGN)
    }

    /// The explicit and hidden arguments (empty without metadata).
    pub fn args(&self) -> &[KernelArg] {
        self.metadata.as_ref().map_or(&[], |m| &m.args)
    }

    /// The name that reads best: the metadata's `.name` if present, else the link name.
    pub fn source_name(&self) -> &str {
        self.metadata.as_ref().map_or(&self.name, |m| &m.name)
    }
}

/// A kernel of a loaded image, with GPU addresses: everything a dispatcher needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kernel<'a> {
    /// The link name.
    pub name: &'a str,
    /// The descriptor symbol (`name.kd`).
    pub descriptor_symbol: &'a str,
    /// GPU address of the 64-byte descriptor: the AQL packet's `kernel_object`.
    pub descriptor_address: u64,
    /// GPU address of the first instruction (256-aligned).
    pub entry_address: u64,
    /// For preloaded kernel arguments: the entry firmware that preloads uses, entry + 256.
    pub preload_entry_address: Option<u64>,
    /// The decoded descriptor.
    pub descriptor: &'a KernelDescriptor,
    /// Bytes of kernarg segment (explicit and hidden arguments).
    pub kernarg_size: u32,
    /// Alignment of the kernarg buffer (at least 16).
    pub kernarg_align: u32,
    /// Static LDS bytes (`group_segment_fixed_size`), without dynamic LDS.
    pub group_segment_size: u32,
    /// Scratch bytes per work-item (`private_segment_fixed_size`), without dynamic stack.
    pub private_segment_size: u32,
    /// 32 or 64.
    pub wavefront_size: u32,
    /// Whether the kernel may use a dynamic call stack beyond `private_segment_size`.
    pub uses_dynamic_stack: bool,
    /// The arguments from the metadata, explicit and hidden, in order.
    pub args: &'a [KernelArg],
    /// Where the hidden arguments go.
    pub implicit_args: Option<ImplicitArgs>,
    /// The full metadata entry.
    pub metadata: Option<&'a KernelMetadata>,
}

impl<'a> Kernel<'a> {
    pub(crate) fn new(symbol: &'a KernelSymbol, delta: u64) -> Self {
        Self {
            name: &symbol.name,
            descriptor_symbol: &symbol.descriptor_symbol,
            descriptor_address: symbol.descriptor_vaddr.wrapping_add(delta),
            entry_address: symbol.entry_vaddr.wrapping_add(delta),
            preload_entry_address: symbol.preload_entry_vaddr().map(|v| v.wrapping_add(delta)),
            descriptor: &symbol.descriptor,
            kernarg_size: symbol.kernarg_size(),
            kernarg_align: symbol.kernarg_align(),
            group_segment_size: symbol.descriptor.group_segment_fixed_size,
            private_segment_size: symbol.descriptor.private_segment_fixed_size,
            wavefront_size: symbol.descriptor.wavefront_size(),
            uses_dynamic_stack: symbol.descriptor.uses_dynamic_stack(),
            args: symbol.args(),
            implicit_args: symbol.implicit_args,
            metadata: symbol.metadata.as_ref(),
        }
    }

    /// The explicit arguments (those the caller supplies).
    pub fn explicit_args(&self) -> impl Iterator<Item = &'a KernelArg> + use<'a> {
        self.args.iter().filter(|a| !a.value_kind.is_hidden())
    }
}

const _: () = assert!(KERNEL_DESCRIPTOR_SIZE == 64);
