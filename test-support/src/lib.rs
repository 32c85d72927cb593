//! Helpers shared by aqueduct's test suites, so that a test fails where it should:
//!
//! - [`cargo_build`]: build a workspace cdylib a test loads, from the same build;
//! - [`corpus`]: the argument types the shared corpus checks use;
//! - [`fork`]: run checks in a forked child whose panic, error, hang or death by signal fails
//!   the test (under libtest a child that panics would otherwise exit 0);
//! - [`hardware`]: skip a hardware test visibly, or fail it where hardware is required;
//! - [`process`]: run a child process with a deadline, killing it and failing by name after;
//! - [`rng`]: deterministic pseudo-random test inputs;
//! - [`task`]: whether another thread is asleep in the kernel (`/proc/self/task`);
//! - [`wait`]: wait for a state with a deadline instead of sleeping and hoping;
//! - [`watchdog`]: turn a test that can only fail by hanging into one that fails.
//!
//! Every wait in a test has a time limit: on a state ([`wait`]), a child process
//! ([`process`]), a forked child ([`fork`]), or anything else ([`watchdog`]).
#![deny(unsafe_op_in_unsafe_fn)]

pub mod cargo_build;
pub mod corpus;
pub mod cpu_time;
pub mod fork;
pub mod hardware;
pub mod process;
pub mod rng;
pub mod task;
pub mod wait;
pub mod watchdog;
