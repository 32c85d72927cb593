//! Helpers shared by aqueduct's test suites, so that a test fails where it should:
//!
//! - [`cargo_build`]: build a workspace cdylib a test loads, from the same build;
//! - [`corpus`]: the argument types the shared corpus checks use;
//! - [`fork`]: run checks in a forked child whose panic, error, hang or death by signal fails
//!   the test (under libtest a child that panics would otherwise exit 0);
//! - [`hardware`]: skip a hardware test visibly, or fail it where hardware is required;
//! - [`rng`]: deterministic pseudo-random test inputs;
//! - [`wait`]: wait for a state with a deadline instead of sleeping and hoping;
//! - [`watchdog`]: turn a test that can only fail by hanging into one that fails.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod cargo_build;
pub mod corpus;
pub mod fork;
pub mod hardware;
pub mod rng;
pub mod wait;
pub mod watchdog;
