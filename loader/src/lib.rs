//! `amdgpu-loader`: a pure loader for AMDGPU HSA code objects (V4, V5, V6).
//!
//! It takes code-object bytes and a destination (a byte slice plus the GPU address it will
//! have) and does no I/O and no GPU allocation:
//!
//! ```
//! use amdgpu_loader::{CodeObject, NoExternals, TargetId};
//!
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/kernels/bin/gfx90a/vector_add.co5");
//! let bytes = std::fs::read(path)?;                        // a code object compiled for gfx90a
//! let code_object = CodeObject::parse(&bytes)?;            // validated: never panics
//! let agent = TargetId::parse("gfx90a:sramecc+:xnack-")?;
//! code_object.target().runs_on(&agent)?;
//! // The destination: here host memory standing in for a GPU allocation at this address.
//! let gpu_address = 0x7f00_0000_0000;
//! assert_eq!(gpu_address % code_object.image_align(), 0);
//! let mut memory = vec![0u8; code_object.image_size() as usize];
//! let image = code_object.load(&mut memory, gpu_address, &NoExternals)?;
//! let kernel = image.kernel("vector_add").expect("kernel"); // or "vector_add.kd"
//! assert_eq!(kernel.descriptor_address % 64, 0);
//! println!("kernel_object {:#x}, kernarg {} bytes", kernel.descriptor_address, kernel.kernarg_size);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Offload bundles and host fat binaries are opened with [`FatBinary`]; `aqueduct inspect`
//! prints what this crate reads.

pub mod bundle;
pub mod code_object;
pub mod dynamic;
pub mod elf_file;
pub mod error;
pub mod global_symbol;
pub mod hash;
pub mod image;
mod image_info;
pub mod implicit_args;
pub mod kernel;
pub mod kernel_descriptor;
pub mod metadata;
mod msgpack;
pub mod note;
pub mod relocation;
pub mod segment;
pub mod symbol;
#[cfg(feature = "synth")]
pub mod synth;
pub mod target;

pub use bundle::{BundleEntry, FatBinary};
pub use code_object::CodeObject;
pub use elf_file::CodeObjectVersion;
pub use error::{Error, Result};
pub use global_symbol::{Function, FunctionSymbol, Variable, VariableSymbol};
pub use image::{ExternalDefinitions, LoadedImage};
pub use implicit_args::{ImplicitArgs, ImplicitLayout};
pub use kernel::{Kernel, KernelSymbol};
pub use kernel_descriptor::KernelDescriptor;
pub use metadata::{HiddenArg, KernelArg, KernelMetadata, Metadata, ValueKind};
pub use relocation::{ExternalSymbols, NoExternals};
pub use target::{FeatureSetting, Processor, TargetId};
