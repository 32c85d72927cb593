//! The shader core: a GFX9 (gfx90a, gfx942) wave64 interpreter that executes the kernels' real
//! machine code, as clang compiled it.
//!
//! - [`isa`]: opcodes, operand signatures and the decoded instruction;
//! - [`decode`]: machine words to instructions, one module per encoding family;
//! - [`disasm`]: instructions to text in `llvm-objdump` syntax (the decoder's oracle check and
//!   error messages);
//! - [`program`]: the decode cache (decode once per code object);
//! - [`wave`], [`launch`]: wave state and how the command processor initialises it;
//! - [`exec`]: the interpreter, one module per instruction group;
//! - [`memory`], [`lds`]: device memory through the GPU page table, and LDS;
//! - [`workgroup`], [`core`]: waves of a workgroup on one worker, workgroups on a pool;
//!   [`Gfx9ShaderCore`] implements [`crate::gpu::dispatch::ShaderCore`].

pub mod core;
pub mod decode;
pub mod disasm;
pub mod exec;
pub mod gfx11;
pub mod isa;
pub mod launch;
pub mod lds;
pub mod memory;
pub mod program;
pub mod wave;
pub mod workgroup;

pub use core::{Gfx9ShaderCore, Gfx11ShaderCore, Interpreter};
