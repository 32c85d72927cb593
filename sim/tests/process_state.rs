//! The KFD process belongs to the process, not to the file: close and reopen keep everything,
//! ACQUIRE_VM binds a render file once, the event page is set once, a forked child gets EBADF
//! on inherited fds and can open its own process.

mod common;

use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use amdgpu_sim::Machine;
use common::{Session, open_kfd, open_render, recording_session, small_config};
use kfd::Errno;
use kfd::abi::mmap_offset::{self, MmapType};
use kfd::abi::{AllocFlags, CreateEventArgs, EventType};
use kfd::ioctl::calls as ioctls;
use kfd::sys::{OFlag, Sys};
use test_support::{fork, wait};

/// How long a forked child may take before its watchdog fails it.
const CHILD_TIMEOUT: Duration = Duration::from_secs(30);

fn pid() -> i32 {
    std::process::id() as i32
}

#[test]
fn closing_and_reopening_kfd_keeps_every_object() {
    let (s, engine) = recording_session();
    let bo = s.gtt(8192);
    let (_page, first) = s.event_page();
    let buffers = s.queue_buffers(4096);
    let mut q = s.queue_args(&buffers);
    s.create_queue(&mut q).unwrap();
    let before = s.machine.process_counts(pid());
    assert_eq!(before.queues, 1);
    assert!(before.buffer_objects >= 6);
    assert_eq!(before.events, 1);

    s.machine.close(s.kfd).unwrap();
    // Nothing was destroyed: not the queue (its processor still runs), not a BO, not an event.
    let closed = s.machine.process_counts(pid());
    assert_eq!(
        (closed.queues, closed.buffer_objects, closed.events),
        (1, before.buffer_objects, 1)
    );
    assert!(!engine.queues.lock().unwrap()[0].lock().unwrap().stopped);
    assert_eq!(closed.open_files, before.open_files - 1);

    // A second open finds the same process: the old handles and ids work through the new fd.
    let kfd = open_kfd(&s.machine);
    ioctls::acquire_vm(&s.machine, kfd, s.render, s.gpu_id).expect("same file again: 0");
    ioctls::destroy_queue(&s.machine, kfd, q.queue_id).unwrap();
    assert!(engine.queues.lock().unwrap()[0].lock().unwrap().stopped);
    ioctls::destroy_event(&s.machine, kfd, first.event_id).unwrap();
    let mut done = 0;
    ioctls::unmap_memory_from_gpu(&s.machine, kfd, bo.handle, &[s.gpu_id], &mut done).unwrap();
    ioctls::free_memory_of_gpu(&s.machine, kfd, bo.handle).unwrap();
    let after = s.machine.process_counts(pid());
    assert_eq!((after.queues, after.events), (0, 0));
    assert_eq!(after.buffer_objects, before.buffer_objects - 1);
}

#[test]
fn acquire_vm_binds_one_drm_file_per_gpu() {
    let m = Machine::new(small_config()).unwrap();
    let gpu_id = m.gpus()[0].gpu_id;
    let kfd = open_kfd(&m);
    let render = open_render(&m, 128);

    // A number that is no fd, a host file, and the kfd file itself are no amdgpu files.
    assert_eq!(
        ioctls::acquire_vm(&m, kfd, -1, gpu_id).unwrap_err().errno,
        Errno::EINVAL
    );
    let null = std::fs::File::open("/dev/null").unwrap();
    assert_eq!(
        ioctls::acquire_vm(&m, kfd, null.as_raw_fd(), gpu_id)
            .unwrap_err()
            .errno,
        Errno::EINVAL
    );
    assert_eq!(
        ioctls::acquire_vm(&m, kfd, kfd, gpu_id).unwrap_err().errno,
        Errno::EINVAL
    );
    // An unknown GPU.
    assert_eq!(
        ioctls::acquire_vm(&m, kfd, render, gpu_id ^ 0x8000)
            .unwrap_err()
            .errno,
        Errno::EINVAL
    );
    // Before ACQUIRE_VM the GPU is not bound: allocating on it is ENODEV.
    let s_unbound = kfd::abi::AllocMemoryOfGpuArgs {
        size: 4096,
        gpu_id,
        flags: AllocFlags::GTT.bits(),
        ..Default::default()
    };
    let mut args = s_unbound;
    assert_eq!(
        common::ioctl::<kfd::ioctl::requests::AllocMemoryOfGpu>(&m, kfd, &mut args),
        Err(Errno::ENODEV)
    );

    ioctls::acquire_vm(&m, kfd, render, gpu_id).unwrap();
    // The same file again (and a dup of it, the same open file) is a no-op.
    ioctls::acquire_vm(&m, kfd, render, gpu_id).unwrap();
    // SAFETY: dup of an fd this test owns.
    let dup = unsafe { libc::dup(render) };
    assert!(dup >= 0);
    ioctls::acquire_vm(&m, kfd, dup, gpu_id).unwrap();
    // A new open of the same render node is a different file: EBUSY.
    let other = open_render(&m, 128);
    assert_eq!(
        ioctls::acquire_vm(&m, kfd, other, gpu_id)
            .unwrap_err()
            .errno,
        Errno::EBUSY
    );
    // Even a non-amdgpu fd gets EBUSY once the GPU is bound (the bound check comes first).
    assert_eq!(
        ioctls::acquire_vm(&m, kfd, null.as_raw_fd(), gpu_id)
            .unwrap_err()
            .errno,
        Errno::EBUSY
    );
    let mut args = s_unbound;
    common::ioctl::<kfd::ioctl::requests::AllocMemoryOfGpu>(&m, kfd, &mut args).unwrap();
    // SAFETY: closing the dup made above.
    unsafe { libc::close(dup) };
    m.close(other).unwrap();
}

#[test]
fn a_render_file_can_be_one_compute_vm_only() {
    let m = Machine::new(small_config().with_gpu_count(2)).unwrap();
    let gpus = m.gpus();
    let kfd = open_kfd(&m);
    let render = open_render(&m, gpus[0].render_minor);
    ioctls::acquire_vm(&m, kfd, render, gpus[0].gpu_id).unwrap();
    // The same DRM file is already a compute VM: it cannot become GPU 1's as well.
    assert_eq!(
        ioctls::acquire_vm(&m, kfd, render, gpus[1].gpu_id)
            .unwrap_err()
            .errno,
        Errno::EINVAL
    );
    // Any amdgpu render file will do, even another GPU's (the kernel does not check).
    let other = open_render(&m, gpus[0].render_minor);
    ioctls::acquire_vm(&m, kfd, other, gpus[1].gpu_id).unwrap();
}

#[test]
fn the_event_page_is_set_once() {
    let s = Session::small();
    let (page, first) = s.event_page();
    assert_eq!(first.event_id, 1);
    assert_eq!(first.event_slot_index, 1);
    assert_eq!(first.event_page_offset, MmapType::Events.bits());
    // The kernel filled the page with UNSIGNALED slots.
    assert_eq!(page.word(8).load(Ordering::Relaxed), u64::MAX);
    let second = s.gtt(32 << 10);
    let mut args = CreateEventArgs {
        event_page_offset: second.handle,
        event_type: EventType::SIGNAL.0,
        ..CreateEventArgs::default()
    };
    assert_eq!(
        ioctls::create_event(&s.machine, s.kfd, &mut args)
            .unwrap_err()
            .errno,
        Errno::EINVAL
    );
    // The failed call returns the struct as it was (no event, the handle still there).
    assert_eq!(args.event_page_offset, second.handle);
    // The page cannot be freed (even once unmapped): EPERM.
    s.unmap_gpu(&page, &[s.gpu_id]).unwrap();
    assert_eq!(s.free(&page), Err(Errno::EPERM));
    // After a reopen the page is still set.
    s.machine.close(s.kfd).unwrap();
    let kfd = open_kfd(&s.machine);
    let mut again = CreateEventArgs {
        event_page_offset: second.handle,
        event_type: EventType::SIGNAL.0,
        ..CreateEventArgs::default()
    };
    assert_eq!(
        ioctls::create_event(&s.machine, kfd, &mut again)
            .unwrap_err()
            .errno,
        Errno::EINVAL
    );
}

#[test]
fn a_kernel_allocated_event_page_also_counts_as_set() {
    let s = Session::small();
    // A first signal event without a page makes the kernel allocate one (APU path).
    let first = s.create_event(EventType::SIGNAL, false).unwrap();
    assert_eq!(first.event_page_offset, MmapType::Events.bits());
    let page = s.gtt(32 << 10);
    let mut args = CreateEventArgs {
        event_page_offset: page.handle,
        event_type: EventType::SIGNAL.0,
        ..CreateEventArgs::default()
    };
    assert_eq!(
        ioctls::create_event(&s.machine, s.kfd, &mut args)
            .unwrap_err()
            .errno,
        Errno::EINVAL
    );
    // That page is mapped through /dev/kfd; more than 32 KiB is refused.
    assert!(s.kfd_mmap(MmapType::Events.bits(), 32 << 10).is_ok());
    assert_eq!(
        s.kfd_mmap(MmapType::Events.bits(), 64 << 10).unwrap_err(),
        Errno::EINVAL
    );
}

#[test]
fn an_exited_process_frees_everything_and_its_files_are_dead() {
    let (s, engine) = recording_session();
    let _bo = s.gtt(4096);
    s.event_page();
    let buffers = s.queue_buffers(4096);
    let mut q = s.queue_args(&buffers);
    s.create_queue(&mut q).unwrap();
    s.machine.exit_process(pid()).unwrap();
    assert!(engine.queues.lock().unwrap()[0].lock().unwrap().stopped);
    let counts = s.machine.process_counts(pid());
    assert_eq!(
        (
            counts.processes,
            counts.buffer_objects,
            counts.queues,
            counts.events
        ),
        (0, 0, 0, 0)
    );
    assert_eq!(
        ioctls::get_version(&s.machine, s.kfd).unwrap_err().errno,
        Errno::EBADF
    );
    // A new open makes a new process; the old render file is free again.
    let kfd = open_kfd(&s.machine);
    ioctls::acquire_vm(&s.machine, kfd, s.render, s.gpu_id).unwrap();
    assert_eq!(s.machine.process_counts(pid()).processes, 1);
}

/// Child-side checks after fork; the first that fails is returned as text.
fn child_checks(
    m: &Machine,
    parent_kfd: i32,
    parent_render: i32,
    gpu_id: u32,
) -> Result<(), String> {
    // The parent's kfd fd is unusable: EBADF (lead_thread != current->group_leader).
    let version = ioctls::get_version(m, parent_kfd).map_err(|e| e.errno);
    if version != Err(Errno::EBADF) {
        return Err(format!(
            "GET_VERSION on the parent's fd: {version:?}, expected EBADF"
        ));
    }
    // No KFD process of our own yet: mmap on /dev/kfd resolves the caller's process: EINVAL.
    let doorbell = mmap_offset::encode(MmapType::Doorbell, gpu_id, 0);
    // SAFETY: a fresh mapping without MAP_FIXED replaces nothing.
    let mapped = unsafe {
        m.mmap(
            None,
            std::num::NonZeroUsize::new(8192).unwrap(),
            kfd::sys::ProtFlags::PROT_READ,
            kfd::sys::MapFlags::MAP_SHARED,
            Some(parent_kfd),
            doorbell,
        )
    };
    if mapped != Err(Errno::EINVAL) {
        return Err(format!(
            "doorbell mmap without a process: {mapped:?}, expected EINVAL"
        ));
    }
    // A fresh open is a new process, with nothing in it.
    let kfd = m
        .open(Path::new("/dev/kfd"), OFlag::O_RDWR)
        .map_err(|e| format!("open /dev/kfd in the child: {e}"))?;
    let me = nix::unistd::getpid().as_raw();
    let counts = m.process_counts(me);
    if counts.processes != 1 || counts.buffer_objects != 0 {
        return Err(format!("the child's fresh process: {counts:?}"));
    }
    // The inherited render file is the parent's compute VM already.
    let acquired = ioctls::acquire_vm(m, kfd, parent_render, gpu_id).map_err(|e| e.errno);
    if acquired != Err(Errno::EINVAL) {
        return Err(format!(
            "ACQUIRE_VM on the parent's render file: {acquired:?}, expected EINVAL"
        ));
    }
    let render = m
        .open(Path::new("/dev/dri/renderD128"), OFlag::O_RDWR)
        .map_err(|e| format!("open the render node in the child: {e}"))?;
    ioctls::acquire_vm(m, kfd, render, gpu_id)
        .map_err(|e| format!("ACQUIRE_VM on the child's own render file: {e}"))?;
    let mut args = kfd::abi::AllocMemoryOfGpuArgs {
        size: 4096,
        gpu_id,
        flags: AllocFlags::GTT.bits(),
        ..Default::default()
    };
    common::ioctl::<kfd::ioctl::requests::AllocMemoryOfGpu>(m, kfd, &mut args)
        .map_err(|e| format!("ALLOC_MEMORY_OF_GPU in the child: {e:?}"))?;
    Ok(())
}

#[test]
fn a_forked_child_gets_ebadf_and_opens_its_own_process() {
    let s = Session::small();
    let _bo = s.gtt(4096);
    let parent_bos = s.machine.process_counts(pid()).buffer_objects;
    // Another thread hammers the machine-wide tables while we fork, so a careless lock would
    // be held at the moment of the fork.
    let stop = Arc::new(AtomicBool::new(false));
    let rounds = Arc::new(AtomicU64::new(0));
    let busy = {
        let machine = s.machine.clone();
        let (stop, rounds) = (stop.clone(), rounds.clone());
        let kfd = s.kfd;
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let _ = ioctls::get_version(&machine, kfd);
                let fd = open_kfd(&machine);
                machine.close(fd).unwrap();
                let _ = machine.counts();
                rounds.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    // Fork only once the hammering is under way (however late the thread gets to run).
    assert!(wait::until(Duration::from_secs(30), || {
        rounds.load(Ordering::Relaxed) > 0
    }));
    // Each child must pass; a lock held across the fork shows as the watchdog's time-out.
    let mut outcomes = Vec::new();
    for _ in 0..5 {
        outcomes.push(fork::run_in_child(CHILD_TIMEOUT, || {
            child_checks(&s.machine, s.kfd, s.render, s.gpu_id)
        }));
    }
    stop.store(true, Ordering::Relaxed);
    wait::assert_until(
        Duration::from_secs(30),
        "the hammering thread to stop",
        || busy.is_finished(),
    );
    busy.join().unwrap();
    for (round, outcome) in outcomes.into_iter().enumerate() {
        if let Err(failure) = outcome {
            panic!("child {round}: {failure}");
        }
    }
    // The parent's process is untouched.
    assert_eq!(s.machine.process_counts(pid()).buffer_objects, parent_bos);
    ioctls::get_version(&s.machine, s.kfd).unwrap();
}
