//! Global atomics of the corpus on simulated gfx90a and gfx942: real atomics on the backing
//! memory, across waves, workgroups and worker threads.
//!
//! The checks live in `tests/kernels/checks/atomics.rs`, shared with the safe-API suite.

mod shader_support;

#[path = "../../tests/kernels/checks/atomics.rs"]
mod checks;
