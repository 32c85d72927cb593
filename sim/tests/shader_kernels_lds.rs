//! LDS, barriers, LDS atomics and cross-lane operations of the corpus on simulated gfx90a and
//! gfx942.
//!
//! The checks live in `tests/kernels/checks/lds.rs`, shared with the safe-API suite.

mod shader_support;

#[path = "../../tests/kernels/checks/lds.rs"]
mod checks;
