//! fork(): the child cannot use what it inherited (a clear error, never the parent's kernel
//! state), can open the driver afresh, and leaves the parent's state untouched. One test in
//! its own binary, so no other test thread is forked mid-operation.

mod common;

use std::sync::Arc;
use std::time::Duration;

use amdgpu_sim::{Machine, MachineConfig};
use common::{aql_queue, open};
use kfd::ioctl::calls as ioctls;
use kfd::{Allocation, Errno, Error, Kfd, MemoryKind, Sys, WaitStatus};
use test_support::fork;

/// How long the forked child may take before its watchdog fails it.
const CHILD_TIMEOUT: Duration = Duration::from_secs(60);

fn forked_child<T: std::fmt::Debug>(result: kfd::Result<T>, what: &str) -> Result<(), String> {
    match result {
        Err(Error::ForkedChild { parent, child }) if parent != child => Ok(()),
        other => Err(format!("{what}: expected ForkedChild, got {other:?}")),
    }
}

/// What the child checks; any failure is returned as text.
fn child_checks(sys: &Arc<dyn Sys>, machine: &Machine, inherited: &Arc<Kfd>) -> Result<(), String> {
    let gpu = inherited.gpus()[0].gpu_id();
    forked_child(
        inherited.allocate(gpu, Allocation::new(MemoryKind::GttFine, 4096)),
        "allocate",
    )?;
    forked_child(inherited.create_signal_event(false), "create_event")?;
    forked_child(aql_queue(inherited, gpu), "create a queue")?;
    forked_child(inherited.available_memory(gpu), "available_memory")?;
    // The kernel's own answer on the inherited fd.
    match ioctls::get_version(sys.as_ref(), inherited.kfd_fd()) {
        Err(err) if err.errno == Errno::EBADF => {}
        other => return Err(format!("GET_VERSION on the inherited fd: {other:?}")),
    }
    // The child opens its own driver and uses it fully.
    let own = open(sys).map_err(|e| format!("open in the child: {e}"))?;
    // (The fd number may be the same: the inherited copy was closed first.)
    if Arc::ptr_eq(&own, inherited) || own.binding().pid() != std::process::id() as i32 {
        return Err("the child got the parent's driver".to_owned());
    }
    common::exercise(&own);
    drop(own);
    let me = std::process::id() as i32;
    let counts = machine.process_counts(me);
    if counts != common::binding_only(1) {
        return Err(format!("child's kernel state after close: {counts:?}"));
    }
    Ok(())
}

#[test]
fn a_fork_child_gets_a_clear_error_and_opens_afresh() {
    let machine = Machine::new(
        MachineConfig::mi210()
            .with_compute_units(8)
            .with_vram(1 << 30),
    )
    .unwrap();
    let sys: Arc<dyn Sys> = Arc::new(machine.clone());
    let kfd = open(&sys).unwrap();
    let gpu = kfd.gpus()[0].gpu_id();
    let bo = kfd
        .allocate(gpu, Allocation::new(MemoryKind::GttFine, 4096))
        .unwrap();
    let mapping = bo.map_to(&[gpu]).unwrap();
    bo.write(0, b"parent").unwrap();
    let event = kfd.create_signal_event(false).unwrap();
    let queue = aql_queue(&kfd, gpu).unwrap();
    let parent = std::process::id() as i32;
    let before = machine.process_counts(parent);

    // The child runs only this thread's code; the simulator re-initialises its locks in the
    // child (pthread_atfork) and the driver's registry lock is not held here. The closure runs
    // only in the child, so only the child takes the handles out of `held` and drops them.
    let mut held = Some((queue, event, mapping, bo));
    fork::assert_child_passes(CHILD_TIMEOUT, || {
        let (queue, event, mapping, bo) = held.take().ok_or("no handles")?;
        child_checks(&sys, &machine, &kfd)?;
        // What the child inherited fails cleanly too...
        forked_child(bo.write(0, b"child"), "write through the mapping")?;
        forked_child(event.set(), "set_event")?;
        forked_child(queue.update(100, 7), "update_queue")?;
        // ...and dropping it issues no ioctl (one would fail with EBADF and be recorded as a
        // drop error).
        drop((queue, event, mapping, bo));
        match kfd.take_drop_errors() {
            errors if errors.is_empty() => Ok(()),
            errors => Err(format!("dropping inherited objects: {errors:?}")),
        }
    });

    // The parent's state is intact and usable.
    let (queue, event, mapping, bo) = held.take().expect("the parent keeps its handles");
    assert_eq!(machine.process_counts(parent), before);
    let mut back = [0u8; 6];
    bo.read(0, &mut back).unwrap();
    assert_eq!(&back, b"parent");
    event.set().unwrap();
    assert_eq!(
        event.wait(Some(Duration::ZERO)).unwrap().status,
        WaitStatus::Complete
    );
    queue.update(100, 7).unwrap();
    drop((queue, event, mapping, bo));
    let weak = Arc::downgrade(&kfd);
    drop(kfd);
    assert!(weak.upgrade().is_none());
    let after = machine.process_counts(parent);
    assert_eq!(
        (after.buffer_objects, after.queues, after.events),
        (1, 0, 0)
    );
}
