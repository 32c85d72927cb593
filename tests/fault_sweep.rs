//! The fault sweep: the quickstart path (open → load → queue → launch → wait → teardown) runs
//! once on the simulator to record every call it makes through the `Sys` seam, then once per
//! recorded call with that call failing, with an errno the kernel returns there, and once more
//! per ioctl with it interrupted (EINTR), which the driver must restart.
//!
//! Each run must end in a correct result or a clear error that carries the injected errno: no
//! panic, no hang. Afterwards the simulated kernel holds nothing of the process but its binding
//! (cleanly bound, or not bound at all, never half), a fresh open runs the path to a correct
//! result, and once the binding is released and the process' KFD state is gone the process
//! holds exactly the files and mappings it held before the run. A release the kernel refuses
//! (a FREE, UNMAP or DESTROY failing) leaves what it refused in the kernel, as on hardware: that
//! run must report the error and leave nothing else.
//!
//! One test in its own binary, so nothing else in the process moves the fd and mapping counts.

mod fault_sweep_plan;
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use aqueduct::kfd::{Errno, Sys};
use aqueduct::sim::{CallKind, FaultingSys, Machine, ResourceCounts, SeamCall};
use aqueduct::{Condition, Device, MemoryOrder};
use fault_sweep_plan::{
    Expect, RUN_DEADLINE, check_outcome, expectation, footprint, names_errno, plans, run_path,
};
use support::{binding_only, machine, pid};

/// `a - b`, field by field (negative: fewer than the binding).
fn minus(a: ResourceCounts, b: ResourceCounts) -> [i64; 6] {
    let f = |c: ResourceCounts| {
        [
            c.processes,
            c.buffer_objects,
            c.queues,
            c.events,
            c.cpu_mappings,
            c.open_files,
        ]
    };
    let (a, b) = (f(a), f(b));
    std::array::from_fn(|i| a[i] as i64 - b[i] as i64)
}

struct Sweep {
    machine: Machine,
    faulting: Arc<FaultingSys>,
    sys: Arc<dyn Sys>,
}

/// What one run did, and what the kernel holds of the process after it.
#[derive(Debug)]
struct RunReport {
    outcome: fault_sweep_plan::Outcome,
    after_run: ResourceCounts,
}

impl Sweep {
    fn new() -> Self {
        let machine = machine();
        let faulting = Arc::new(FaultingSys::new(Arc::new(machine.clone())));
        let sys: Arc<dyn Sys> = faulting.clone();
        Self {
            machine,
            faulting,
            sys,
        }
    }

    /// One run failing `fault` (none: record), with a deadline.
    fn run(&self, fault: Option<(&SeamCall, Errno)>) -> RunReport {
        let outcome = run_path(&self.faulting, &self.sys, fault);
        RunReport {
            outcome,
            after_run: self.machine.process_counts(pid()),
        }
    }

    /// Release the binding and the process' KFD state, as the end of the process would.
    fn forget_process(&self) {
        aqueduct::kfd::release_simulated_bindings();
        let _ = self.machine.exit_process(pid());
    }
}

#[test]
fn every_seam_call_of_the_quickstart_can_fail_cleanly() {
    // No new malloc arenas from here on: one appearing when threads contend (timing) would
    // move the mapping count the sweep compares.
    // SAFETY: mallopt only changes the allocator's tuning; M_ARENA_MAX takes any positive
    // count.
    unsafe { libc::mallopt(libc::M_ARENA_MAX, 1) };
    let sweep = Sweep::new();
    // The recording run, from an unbound process.
    let recording = sweep.run(None);
    assert_eq!(recording.outcome.result, Ok(()));
    assert!(recording.outcome.elapsed < RUN_DEADLINE);
    let calls = sweep.faulting.calls();
    assert_eq!(recording.after_run, binding_only(1));
    sweep.forget_process();
    // A second clean run settles lazily made process state (thread stacks, allocator pools,
    // the shader core's decode cache, which holds the last code object run).
    assert_eq!(sweep.run(None).outcome.result, Ok(()));
    sweep.forget_process();
    let baseline = footprint();

    let plans = plans(&calls);
    let started = Instant::now();
    let (mut errors, mut succeeded, mut not_reached) = (0, 0, Vec::new());
    for (call, errno) in &plans {
        let label = format!("{call} failing with {errno}");
        let expect = expectation(&call.kind, *errno);
        match expect {
            Expect::Restarted | Expect::Failed => {
                let report = sweep.run(Some((call, *errno)));
                if !report.outcome.delivered {
                    // A call whose occurrence depends on timing (a wait that found its
                    // signal set already).
                    not_reached.push(label.clone());
                }
                match &report.outcome.result {
                    Ok(()) => succeeded += 1,
                    Err(_) => errors += 1,
                }
                check_outcome(call, *errno, &report.outcome, &calls);
                // Cleanly bound (some of the binding made, never anything else) or unbound.
                let left = minus(report.after_run, binding_only(1));
                assert!(
                    left.iter().all(|&n| n <= 0),
                    "{label}: the kernel holds more than the binding: {:?}",
                    report.after_run
                );
                let fresh = sweep.run(None);
                assert_eq!(
                    fresh.outcome.result,
                    Ok(()),
                    "{label}: a fresh open after it"
                );
                assert_eq!(
                    fresh.after_run,
                    binding_only(1),
                    "{label}: after a fresh run"
                );
            }
            Expect::Refused | Expect::QueueKept => {
                // What the kernel keeps, it keeps for the life of the process: each of these
                // runs in a process of its own (a fork child, unbound like this one now).
                errors += 1;
                test_support::fork::assert_child_passes(RUN_DEADLINE * 4, || {
                    refused_release(&sweep, call, *errno, expect);
                    Ok(())
                });
            }
        }
        sweep.forget_process();
        let now = footprint();
        assert_eq!(now, baseline, "{label}: the process' files and mappings");
    }
    eprintln!(
        "fault sweep: {} of {} runs clean ({} seam calls recorded; {} runs reached their fault; \
         {errors} ended in a clear error, {succeeded} in a correct result; not reached: \
         {not_reached:?}) in {:?}",
        plans.len(),
        plans.len(),
        calls.len(),
        plans.len() - not_reached.len(),
        started.elapsed()
    );
    assert!(
        not_reached.len() * 10 <= plans.len(),
        "too many faults not reached: {not_reached:?}"
    );
    a_store_whose_wake_up_failed_still_ends_a_wait(&sweep);
}

/// A run whose release the kernel refuses, in a process of its own: the error says so, the
/// kernel keeps what it refused and nothing else, and the device still opens and runs (twice,
/// with nothing building up); once the process' KFD state is gone, it holds the files it held
/// before.
fn refused_release(sweep: &Sweep, call: &SeamCall, errno: Errno, expect: Expect) {
    let label = format!("{call} failing with {errno}");
    let before = footprint();
    let report = sweep.run(Some((call, errno)));
    check_outcome(call, errno, &report.outcome, &[]);
    let fresh = sweep.run(None);
    assert_eq!(
        fresh.outcome.result,
        Ok(()),
        "{label}: a fresh open after it"
    );
    let kept = minus(fresh.after_run, binding_only(1));
    // A refused munmap keeps no object in the kernel (a buffer's was freed first), at most
    // the mapping itself (the doorbell page's); every other refusal keeps its object there.
    let as_expected = if call.kind == CallKind::Munmap {
        kept[1..4] == [0; 3] && kept[4] <= 1
    } else {
        kept != [0; 6]
    };
    assert!(
        kept.iter().all(|&n| n >= 0) && kept[0] == 0 && kept[5] == 0 && as_expected,
        "{label}: kept {:?}",
        fresh.after_run
    );
    assert_eq!(
        kept[2],
        i64::from(expect == Expect::QueueKept),
        "{label}: queues kept: {:?}",
        fresh.after_run
    );
    let again = sweep.run(None);
    assert_eq!(
        again.outcome.result,
        Ok(()),
        "{label}: a second fresh open after it"
    );
    assert_eq!(
        again.after_run, fresh.after_run,
        "{label}: what was kept changed"
    );
    if expect == Expect::QueueKept {
        // The queue's memory, and with it the open driver, stays for the process' life.
        return;
    }
    sweep.forget_process();
    let after = footprint();
    assert_eq!(after.fds, before.fds, "{label}: open files");
    // Mappings are not compared here: a fork child's first threads make malloc arenas of
    // their own, which moves the count. (A refused FREE or UNMAP keeps the buffer's range
    // reserved, a refused munmap keeps the pages until closing the driver unmaps the address
    // space whole.)
}

/// A waiter asleep in the kernel on a signal, whose value is then stored with the wake-up
/// (SET_EVENT) failing: the store reports the failure and the waiter still returns, long
/// before its timeout (waits sleep in slices and look again).
fn a_store_whose_wake_up_failed_still_ends_a_wait(sweep: &Sweep) {
    const TIMEOUT: Duration = Duration::from_secs(20);
    sweep.faulting.start_run(None);
    let device = Device::open_on(Arc::clone(&sweep.sys)).unwrap();
    let signal = device.signal(1).unwrap();
    let waiter = {
        let signal = signal.clone();
        std::thread::spawn(move || {
            let started = Instant::now();
            let seen = signal.wait(Condition::Eq, 0, Some(TIMEOUT));
            (seen, started.elapsed())
        })
    };
    let wait_events =
        |call: &SeamCall| call.kind.kfd_request_name() == Some("AMDKFD_IOC_WAIT_EVENTS");
    test_support::wait::assert_until(TIMEOUT, "the waiter sleeping in WAIT_EVENTS", || {
        sweep.faulting.calls().iter().any(wait_events)
    });
    let set_event = SeamCall {
        kind: CallKind::Ioctl {
            file: "/dev/kfd".into(),
            request: request_of("AMDKFD_IOC_SET_EVENT"),
        },
        occurrence: 1,
    };
    sweep
        .faulting
        .start_run(Some((set_event.clone(), Errno::EINVAL)));
    let stored = signal.store(0, MemoryOrder::Release);
    assert!(
        sweep.faulting.delivered(),
        "the store issued no {set_event}"
    );
    let error = stored.unwrap_err();
    assert!(names_errno(&error, Errno::EINVAL), "{error}");
    let (seen, waited) =
        test_support::watchdog::within(TIMEOUT * 2, move || waiter.join()).unwrap();
    assert_eq!(seen.unwrap(), 0);
    assert!(waited < TIMEOUT / 2, "the wait took {waited:?}");

    // And a wait whose sleep in the kernel fails ends at once with that error.
    let wait_events = SeamCall {
        kind: CallKind::Ioctl {
            file: "/dev/kfd".into(),
            request: request_of("AMDKFD_IOC_WAIT_EVENTS"),
        },
        occurrence: 1,
    };
    sweep
        .faulting
        .start_run(Some((wait_events.clone(), Errno::EFAULT)));
    let started = Instant::now();
    let error = signal
        .wait(Condition::Eq, 5, Some(TIMEOUT))
        .expect_err("a wait on a value never stored");
    assert!(
        sweep.faulting.delivered(),
        "the wait issued no {wait_events}"
    );
    assert!(names_errno(&error, Errno::EFAULT), "{error}");
    assert!(started.elapsed() < TIMEOUT / 2, "{:?}", started.elapsed());
    drop(signal);
    device.shutdown().unwrap();
}

/// The request number of the KFD request named `name`.
fn request_of(name: &str) -> u32 {
    aqueduct::kfd::ioctl::requests::ALL
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no request {name}"))
        .opcode
        .raw()
}
