//! Floating-point kernels of the corpus on simulated gfx90a and gfx942, checked bit-exactly
//! against Rust's IEEE arithmetic (or within the ISA's stated precision for the transcendental
//! approximations).
//!
//! The checks live in `tests/kernels/checks/float.rs`, shared with the safe-API suite.

mod shader_support;

#[path = "../../tests/kernels/checks/float.rs"]
mod checks;
