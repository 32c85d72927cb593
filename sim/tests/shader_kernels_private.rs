//! Scratch (private segment) kernels of the corpus on simulated gfx90a (MUBUF on the private
//! segment buffer) and gfx942 (architected flat scratch): private arrays, VGPR spills, calls
//! with stack frames, indirect calls with a dynamic stack.
//!
//! The checks live in `tests/kernels/checks/private.rs`, shared with the safe-API suite.

mod shader_support;

#[path = "../../tests/kernels/checks/private.rs"]
mod checks;
