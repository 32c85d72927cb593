//! The shader core: a GFX9 (gfx90a, gfx942) wave64 interpreter that executes the kernels' real
//! machine code.
//!
//! - [`isa`]: opcodes, operand signatures and the decoded instruction;
//! - [`decode`]: machine words to instructions, one module per encoding family;
//! - [`disasm`]: instructions to text in `llvm-objdump` syntax (the decoder's oracle check and
//!   error messages).

pub mod decode;
pub mod disasm;
pub mod isa;
