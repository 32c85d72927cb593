//! The fault sweep of `tests/fault_sweep.rs` over the real system-call path: `kfd::Linux`
//! wrapped in `FaultingSys`, on `/dev/kfd`. CI runs it under the LD_PRELOAD simulator
//! (`sim/preload/run-under.sh --hardware-tests`); where there is no `/dev/kfd` it says so and
//! passes, unless `AQUEDUCT_REQUIRE_HW` is set.
//!
//! The real kernel keeps a process' binding until the process ends, so every faulted run has a
//! process of its own: a fork child, which drops the binding it inherits and binds afresh, as
//! a new process would. Each must end as in the simulator's sweep (a clear error carrying the
//! errno, or a correct result where that is allowed; no panic, no hang), a fresh open in the
//! same child must compute the right result, and the child must then hold as many files as
//! before (its own binding's in place of the inherited one's). What the kernel holds is not
//! visible from here: the in-process sweep checks that.

mod fault_sweep_plan;

use std::path::Path;
use std::sync::Arc;

use aqueduct::kfd::Sys;
use aqueduct::sim::FaultingSys;
use fault_sweep_plan::{RUN_DEADLINE, check_outcome, footprint, plans, run_path};
use test_support::hardware;

#[test]
fn every_seam_call_of_the_quickstart_can_fail_cleanly_on_the_linux_path() {
    const TEST: &str = "every_seam_call_of_the_quickstart_can_fail_cleanly_on_the_linux_path";
    if !Path::new(aqueduct::kfd::abi::sysfs::KFD_DEVICE_PATH).exists() {
        hardware::skip(TEST, "no /dev/kfd on this machine");
        return;
    }
    let faulting = Arc::new(FaultingSys::new(Arc::new(aqueduct::kfd::Linux)));
    let sys: Arc<dyn Sys> = faulting.clone();
    // The recording, from an unbound process.
    let recording = run_path(&faulting, &sys, None);
    assert_eq!(recording.result, Ok(()));
    let calls = faulting.calls();
    let plans = plans(&calls);
    let mut not_reached = 0;
    for (call, errno) in &plans {
        let label = format!("{call} failing with {errno}");
        let reached = test_support::fork::run_in_child(RUN_DEADLINE * 4, || {
            let before = footprint();
            let outcome = run_path(&faulting, &sys, Some((call, *errno)));
            check_outcome(call, *errno, &outcome, &calls);
            let fresh = run_path(&faulting, &sys, None);
            assert_eq!(fresh.result, Ok(()), "{label}: a fresh open after it");
            let after = footprint();
            assert_eq!(
                after.fds.len(),
                before.fds.len(),
                "{label}: open files {:?} before, {:?} after",
                before.fds,
                after.fds
            );
            if outcome.delivered {
                Ok(())
            } else {
                Err("not reached".to_owned())
            }
        });
        match reached {
            Ok(()) => {}
            Err(test_support::fork::ChildFailure::Failed(why)) if why == "not reached" => {
                not_reached += 1;
            }
            Err(failure) => panic!("{label}: {failure}"),
        }
    }
    eprintln!(
        "fault sweep over the Linux path: {} of {} runs clean ({} seam calls recorded; {} runs \
         reached their fault)",
        plans.len(),
        plans.len(),
        calls.len(),
        plans.len() - not_reached
    );
    assert!(
        not_reached * 10 <= plans.len(),
        "{not_reached} faults not reached"
    );
}
