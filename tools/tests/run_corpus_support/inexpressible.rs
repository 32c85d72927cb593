//! The corpus checks that `aqueduct run` cannot express, each with the reason, and the
//! unwinding that takes such a check out of its `for_each_build` closure as a visible skip.
//!
//! A check lands here only when a user of the command line could not run it either: one
//! `aqueduct run` loads the code object afresh, fills each `buf=` argument from its own file
//! into its own device buffer, and lives in its own process, so device addresses and device
//! state do not carry from one call to the next.

use std::panic::{self, AssertUnwindSafe};

/// Kernels of the shared checks whose check cannot be expressed on the command line.
pub const INEXPRESSIBLE: &[(&str, &str)] = &[
    (
        "bss",
        "a .bss counter that must persist across dispatches of one load; every `aqueduct run` \
         loads the code object afresh",
    ),
    (
        "global_ptr",
        "the check needs a program variable's device address, which exists only inside the \
         `aqueduct` process that loaded it",
    ),
    (
        "linked_list",
        "its nodes buffer holds device pointers into itself; the CLI places each buffer at an \
         address the caller learns only afterwards",
    ),
    (
        "ptr64",
        "it passes a pointer into the middle of a buffer and checks the device addresses the \
         kernel computes from it",
    ),
];

/// Corpus kernels that neither a shared check nor `tools/tests/run_corpus.rs` runs, and where
/// they are proven instead.
pub const NOT_IN_THE_SHARED_CHECKS: &[(&str, &str)] = &[
    (
        "extern_sym",
        "references an external symbol the caller defines at load: tests/executables.rs",
    ),
    (
        "init_fini",
        "its init and fini kernels run at load and unload: tests/executables.rs",
    ),
    (
        "illegal_insn",
        "ends in a fault, not a result: tests/launches.rs and sim/tests/shader_errors.rs",
    ),
];

/// The unwinding payload of a skipped check.
struct Inexpressible {
    kernel: &'static str,
    reason: &'static str,
}

/// If `kernel` is on [`INEXPRESSIBLE`], leave the running check (no panic message: the
/// payload is not a panic) so that [`run_unless_inexpressible`] reports the skip.
pub fn skip_if_inexpressible(kernel: &str) {
    if let Some(&(kernel, reason)) = INEXPRESSIBLE.iter().find(|(k, _)| *k == kernel) {
        panic::resume_unwind(Box::new(Inexpressible { kernel, reason }));
    }
}

/// Run one (target, version) pass of a check; a pass that reached an inexpressible kernel is
/// reported on stderr and counts as skipped, any other panic goes on.
pub fn run_unless_inexpressible(context: &str, pass: impl FnOnce()) {
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(pass)) {
        match payload.downcast::<Inexpressible>() {
            Ok(skip) => eprintln!(
                "skipped {context}: `{}` cannot be run from the command line: {}",
                skip.kernel, skip.reason
            ),
            Err(other) => panic::resume_unwind(other),
        }
    }
}
