//! The simulator scenarios on a real GPU, through `/dev/kfd`. Where there is none, every test
//! says so on stderr and passes without doing anything, unless `AQUEDUCT_REQUIRE_HW` is set
//! (any non-empty value): then every such skip fails. The tests share one process binding
//! and run one at a time (one of them forks).

mod common;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use common::{aql_queue, close, open};
use kfd::abi::EventType;
use kfd::ioctl::calls as ioctls;
use kfd::queue::FULL_PERCENTAGE;
use kfd::{Allocation, Errno, Error, EventWait, Linux, MemoryKind, QueueConfig, Sys, WaitStatus};
use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
use test_support::{fork, hardware, watchdog};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A SIGUSR1 handler that does nothing: the signal only interrupts system calls.
extern "C" fn ignore(_: libc::c_int) {}

/// How long the forked child may take before its watchdog fails it.
const CHILD_TIMEOUT: Duration = Duration::from_secs(60);

/// The real kernel, or `None` (after saying why, or failing where hardware is required:
/// `AQUEDUCT_REQUIRE_HW`) where there is no GPU.
fn hardware(test: &str) -> Option<(MutexGuard<'static, ()>, Arc<dyn Sys>)> {
    if !Path::new(kfd::abi::sysfs::KFD_DEVICE_PATH).exists() {
        hardware::skip(test, "no /dev/kfd on this machine");
        return None;
    }
    let guard = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    Some((guard, Arc::new(Linux)))
}

#[test]
fn hardware_open_use_close_and_reopen_leak_nothing() {
    let Some((_guard, sys)) = hardware("hardware_open_use_close_and_reopen_leak_nothing") else {
        return;
    };
    let kfd = open(&sys).unwrap();
    let render_fds: Vec<i32> = kfd.gpus().iter().map(kfd::Gpu::render_fd).collect();
    let page = kfd.event_page_address();
    common::exercise(&kfd);
    close(kfd);
    let fds = common::open_fds();
    for round in 0..5 {
        let kfd = open(&sys).unwrap_or_else(|e| panic!("reopen {round}: {e}"));
        let again: Vec<i32> = kfd.gpus().iter().map(kfd::Gpu::render_fd).collect();
        assert_eq!(again, render_fds);
        assert_eq!(kfd.event_page_address(), page);
        common::exercise(&kfd);
        close(kfd);
        assert_eq!(common::open_fds(), fds, "round {round}");
    }
}

#[test]
fn hardware_peer_mappings() {
    let Some((_guard, sys)) = hardware("hardware_peer_mappings") else {
        return;
    };
    let kfd = open(&sys).unwrap();
    let ids: Vec<u32> = kfd.gpus().iter().map(kfd::Gpu::gpu_id).collect();
    if ids.len() < 2 {
        hardware::skip("hardware_peer_mappings", "one GPU only");
        close(kfd);
        return;
    }
    let bo = kfd
        .allocate(ids[0], Allocation::new(MemoryKind::VramPrivate, 1 << 20))
        .unwrap();
    let both = bo.map_to(&ids[..2]).unwrap();
    assert_eq!(bo.mapped_gpus().len(), 2);
    both.unmap().unwrap();
    drop(bo);
    assert_eq!(kfd.live_objects(), kfd::LiveObjects::default());
    close(kfd);
}

#[test]
fn hardware_kernel_errors_reach_the_caller() {
    let Some((_guard, sys)) = hardware("hardware_kernel_errors_reach_the_caller") else {
        return;
    };
    let kfd = open(&sys).unwrap();
    let gpu = kfd.gpus()[0].gpu_id();
    let vram = kfd.gpus()[0].node().vram_bytes();
    let err = kfd
        .allocate(
            gpu,
            Allocation::new(MemoryKind::VramPrivate, vram.saturating_mul(4)),
        )
        .unwrap_err();
    assert_eq!(err.errno(), Some(Errno::ENOMEM), "{err}");
    let err = ioctls::free_memory_of_gpu(sys.as_ref(), kfd.kfd_fd(), kfd.event_page_handle())
        .unwrap_err();
    assert_eq!(err.errno, Errno::EPERM);
    let err = kfd
        .allocate_queue_memory(gpu, common::RING_BYTES, MemoryKind::GttUncached)
        .and_then(|m| {
            m.create_aql_queue(&QueueConfig {
                read_pointer_offset: common::READ_DISPATCH_ID,
                write_pointer_offset: common::WRITE_DISPATCH_ID,
                priority: 16,
                percentage: FULL_PERCENTAGE,
            })
        })
        .unwrap_err();
    assert_eq!(err.errno(), Some(Errno::EINVAL), "{err}");
    let queue = aql_queue(&kfd, gpu).unwrap();
    assert_eq!(
        kfd.set_xnack_mode(true).unwrap_err().errno(),
        Some(Errno::EBUSY)
    );
    drop(queue);
    let memory = kfd.create_event(EventType::MEMORY, false, 0).unwrap();
    assert_eq!(memory.set().unwrap_err().errno(), Some(Errno::EINVAL));
    drop(memory);
    close(kfd);
}

#[test]
fn hardware_events() {
    let Some((_guard, sys)) = hardware("hardware_events") else {
        return;
    };
    let kfd = open(&sys).unwrap();
    let auto = kfd.create_signal_event(true).unwrap();
    let poll = Some(Duration::ZERO);
    assert_eq!(auto.wait(poll).unwrap().status, WaitStatus::Timeout);
    auto.set().unwrap();
    assert_eq!(auto.wait(poll).unwrap().status, WaitStatus::Complete);
    assert_eq!(auto.wait(poll).unwrap().status, WaitStatus::Timeout);
    if kfd.binding().has_minor(kfd::abi::MINOR_EVENT_AGE) {
        auto.set().unwrap();
        let mut wait = [EventWait::since(&auto, kfd::event::INITIAL_EVENT_AGE)];
        let outcome = kfd.wait_events(&mut wait, true, poll).unwrap();
        assert_eq!(outcome.status, WaitStatus::Complete);
        assert!(wait[0].last_age > kfd::event::INITIAL_EVENT_AGE);
    }
    // Real signals (kfdtest's SignalHandling) interrupt the wait again and again; it is
    // restarted with the time that remains and still times out, not earlier and not never.
    let action = SigAction::new(
        SigHandler::Handler(ignore),
        SaFlags::empty(),
        SigSet::empty(),
    );
    // SAFETY: the handler does nothing, so it is async-signal-safe.
    unsafe { sigaction(Signal::SIGUSR1, &action) }.unwrap();
    // SAFETY: pthread_self has no preconditions.
    let waiter = unsafe { libc::pthread_self() };
    let done = AtomicBool::new(false);
    let started = Instant::now();
    let _watchdog = watchdog::arm(
        watchdog::HANG_DEADLINE,
        "the interrupted 300 ms wait to time out",
    );
    let status = std::thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(20));
                // SAFETY: the waiting thread outlives this scope.
                unsafe { libc::pthread_kill(waiter, libc::SIGUSR1) };
            }
        });
        let status = auto
            .wait(Some(Duration::from_millis(300)))
            .map(|o| o.status);
        done.store(true, Ordering::Release);
        status
    });
    assert_eq!(status.unwrap(), WaitStatus::Timeout);
    assert!(started.elapsed() >= Duration::from_millis(250));
    drop(auto);
    close(kfd);
}

#[test]
fn hardware_fork_child_opens_afresh() {
    let Some((_guard, sys)) = hardware("hardware_fork_child_opens_afresh") else {
        return;
    };
    let kfd = open(&sys).unwrap();
    let gpu = kfd.gpus()[0].gpu_id();
    let bo = kfd
        .allocate(gpu, Allocation::new(MemoryKind::GttFine, 4096))
        .unwrap();
    // This test holds the lock every other test of this binary takes first, so no other
    // thread of ours is inside the driver when it forks.
    fork::assert_child_passes(CHILD_TIMEOUT, || {
        match kfd.allocate(gpu, Allocation::new(MemoryKind::GttFine, 4096)) {
            Err(Error::ForkedChild { .. }) => {}
            other => return Err(format!("allocate on the inherited driver: {other:?}")),
        }
        match bo.write(0, b"x") {
            Err(Error::ForkedChild { .. }) => {}
            other => return Err(format!("write to an inherited buffer: {other:?}")),
        }
        let own = open(&sys).map_err(|e| format!("open in the child: {e}"))?;
        // Its assertions fail the test through the helper's panic report.
        common::exercise(&own);
        Ok(())
    });
    bo.write(0, b"parent").unwrap();
    drop(bo);
    close(kfd);
}
