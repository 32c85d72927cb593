//! The GFX11 (RDNA3, gfx1100) instruction side of the shader core, beside the GFX9 one: its
//! own encodings, opcode tables and llvm-objdump syntax, over the GFX9 core's operand, modifier
//! and type vocabulary.
//!
//! - [`isa`]: opcodes, table rows and the decoded instruction;
//! - [`decode`]: machine words to instructions, one module per encoding group;
//! - [`disasm`]: instructions to text as `llvm-objdump-19 -d --mcpu=gfx1100` prints them (the
//!   decoder's oracle check);
//! - [`lower`]: instructions to the GFX9 ones of the same semantics, which the shared
//!   interpreter executes; [`dpp`], [`vinterp`], [`wmma`] and [`permlane`] lower what GFX9
//!   has no twin for;
//! - `true16`: 16-bit operands as register halves, and results that keep the other half.
//!
//! `opcode.rs` and `tables.rs` are generated from LLVM by `tablegen/regenerate.sh`.

pub mod decode;
pub mod disasm;
pub mod dpp;
pub mod isa;
pub mod lower;
pub mod permlane;
pub mod vinterp;
pub mod wmma;
#[rustfmt::skip] // generated: one row a line
mod tables;
mod true16;
