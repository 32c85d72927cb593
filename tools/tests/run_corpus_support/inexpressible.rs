//! The corpus checks that `aqueduct run` cannot express, each with the reason, and the
//! unwinding that takes such a check out of its `for_each_build` closure as a visible skip.
//!
//! The skips are exact: [`SKIPPED_CHECKS`] names every check that reaches an inexpressible
//! kernel, and every pass of a listed check must skip. A new check that silently became a
//! skip fails (and must be listed, with its kernel), and so does a listed check that now runs.
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

/// The shared checks (`module::function` of `tests/kernels/checks/`, as libtest names the
/// test) that reach a kernel of [`INEXPRESSIBLE`], and that kernel: exactly the checks this
/// suite skips.
pub const SKIPPED_CHECKS: &[(&str, &str)] = &[
    ("basic::ptr64_address_math_and_loads", "ptr64"),
    ("basic::linked_list_pointer_chasing", "linked_list"),
    ("basic::bss_is_zeroed_and_kept_across_dispatches", "bss"),
    ("basic::relative64_pointer_table_is_relocated", "global_ptr"),
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

/// Run one (target, version) pass of a check. A pass that reached an inexpressible kernel
/// counts as skipped, said on stderr past libtest's capture, if [`SKIPPED_CHECKS`] lists the
/// running check with that kernel, and fails otherwise; a pass of a listed check that does not
/// skip fails too; any other panic goes on.
pub fn run_unless_inexpressible(context: &str, pass: impl FnOnce()) {
    let check = std::thread::current()
        .name()
        .unwrap_or("(a check off libtest's test threads)")
        .to_owned();
    let listed = SKIPPED_CHECKS
        .iter()
        .find(|(name, _)| *name == check)
        .map(|&(_, kernel)| kernel);
    match panic::catch_unwind(AssertUnwindSafe(pass)) {
        Ok(()) => assert!(
            listed.is_none(),
            "{check} ({context}) ran to the end, yet SKIPPED_CHECKS lists it as inexpressible: \
             take it off the list"
        ),
        Err(payload) => match payload.downcast::<Inexpressible>() {
            Ok(skip) => {
                assert_eq!(
                    listed,
                    Some(skip.kernel),
                    "{check} ({context}) reached `{}`, which the command line cannot run ({}), \
                     but SKIPPED_CHECKS does not list it with that kernel: list it, or make the \
                     check expressible",
                    skip.kernel,
                    skip.reason
                );
                let _ = std::io::Write::write_all(
                    &mut std::io::stderr(),
                    format!(
                        "skipped: {check} ({context}): `{}` cannot be run from the command \
                         line: {}\n",
                        skip.kernel, skip.reason
                    )
                    .as_bytes(),
                );
            }
            Err(other) => panic::resume_unwind(other),
        },
    }
}
