//! The driver layer on the simulated machine: the open sequence, every memory kind, GPU
//! mappings on one and two GPUs, queues, events, close and reopen, and the kernel's errors as
//! this layer reports them.

mod common;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use amdgpu_sim::queue::{QueueEngine, QueueSpec, RunningQueue};
use amdgpu_sim::vm::{Access, FaultKind, MemoryFault};
use amdgpu_sim::{InertQueueEngine, Machine, MachineConfig, ResetCause};
use common::{RING_BYTES, aql_queue, binding_only, close, open};
use kfd::abi::{EventType, exception};
use kfd::ioctl::calls as ioctls;
use kfd::queue::NORMAL_PRIORITY;
use kfd::{
    Allocation, Errno, Error, EventException, EventWait, Kfd, MemoryKind, QueueConfig, Sys,
    WaitStatus,
};
use test_support::watchdog;

const ALLOC: u8 = 0x16;
const MAP: u8 = 0x18;

fn machine(config: MachineConfig) -> (Machine, Arc<dyn Sys>) {
    let machine = Machine::new(config).expect("machine");
    let sys: Arc<dyn Sys> = Arc::new(machine.clone());
    (machine, sys)
}

fn small(gpus: usize) -> MachineConfig {
    MachineConfig::mi210()
        .with_gpu_count(gpus)
        .with_compute_units(8)
        .with_vram(1 << 30)
}

fn pid() -> i32 {
    std::process::id() as i32
}

fn errno_of<T: std::fmt::Debug>(result: kfd::Result<T>) -> (Option<&'static str>, Errno) {
    let err = result.expect_err("expected an error");
    (err.request(), err.errno().expect("an errno"))
}

#[test]
fn open_binds_every_gpu_with_the_topology_sizes() {
    let (machine, sys) = machine(small(2));
    let kfd = open(&sys).unwrap();
    assert_eq!(
        kfd.interface_version(),
        (1, amdgpu_sim::NEWEST_KFD_MINOR_VERSION)
    );
    let sim_gpus = machine.gpus();
    assert_eq!(kfd.gpus().len(), 2);
    for (gpu, sim) in kfd.gpus().iter().zip(&sim_gpus) {
        assert_eq!(gpu.gpu_id(), sim.gpu_id);
        assert_eq!(gpu.drm_render_minor(), sim.render_minor);
        assert_eq!(gpu.gfx_version().processor_name(), "gfx90a");
        assert_eq!(
            gpu.node().properties.compute_units(),
            Some(sim.compute_units)
        );
        // The formula here and the simulator's kernel model agree on what CREATE_QUEUE wants.
        let sizes = gpu.cwsr_sizes().unwrap();
        assert_eq!(sizes.ctl_stack_size, sim.queue_buffers.ctl_stack_size);
        assert_eq!(sizes.ctx_save_restore_size, sim.queue_buffers.cwsr_size);
        assert_eq!(sizes.debug_memory_size, sim.queue_buffers.debug_memory_size);
        assert_eq!(
            sizes.total_size,
            u64::from(sim.queue_buffers.cwsr_allocation())
        );
        assert_eq!(
            gpu.eop_buffer_size(),
            Some(sim.queue_buffers.eop_buffer_size)
        );
        assert!(gpu.apertures().gpuvm_base < gpu.apertures().gpuvm_limit);
        assert!(
            gpu.target_id(kfd.xnack_enabled())
                .to_string()
                .starts_with("gfx90a")
        );
    }
    assert!(kfd.hidden_gpus().is_empty());
    assert_eq!(kfd.runtime_state(), kfd::RuntimeState::Enabled);
    assert!(kfd.xnack_enabled().is_some());
    // Opening again while open hands out the same driver.
    let again = open(&sys).unwrap();
    assert!(Arc::ptr_eq(&kfd, &again));
    drop(again);
    close(kfd);
    assert_eq!(machine.process_counts(pid()), binding_only(2));
}

#[test]
fn every_memory_kind_is_one_buffer_for_cpu_and_gpu() {
    let (machine, sys) = machine(small(1));
    let kfd = open(&sys).unwrap();
    let gpu = kfd.gpus()[0].gpu_id();
    let buffers = common::allocate_every_kind(&kfd, gpu);
    assert_eq!(buffers.len(), MemoryKind::ALL.len());
    common::cpu_round_trip(&buffers);
    let vm = machine.gpu_vm(pid(), gpu).unwrap();
    for (i, bo) in buffers.iter().enumerate() {
        assert!(
            vm.translate(bo.va(), 8, Access::Read).is_err(),
            "{:?} is not mapped on the GPU yet",
            bo.kind()
        );
        let mapping = bo.map_to(&[gpu]).unwrap();
        let span = vm.translate(bo.va(), 8, Access::Read).unwrap();
        assert_eq!(span.va_start, bo.va());
        assert_eq!(span.va_end - span.va_start, bo.size());
        assert_eq!(
            span.writable,
            bo.flags().contains(kfd::abi::AllocFlags::WRITABLE)
        );
        if bo.kind().host_accessible()
            && !matches!(bo.kind(), MemoryKind::Doorbell | MemoryKind::MmioRemap)
        {
            // What the CPU wrote is what the GPU reads.
            let expected = common::pattern(i as u8, 8);
            let mut seen = [0u8; 8];
            for (k, byte) in seen.iter_mut().enumerate() {
                // SAFETY: the span covers [va, va+8) and stays alive while `span` does.
                *byte = unsafe { span.host_address(bo.va() + k as u64).read_volatile() };
            }
            assert_eq!(seen.to_vec(), expected, "{:?}", bo.kind());
        }
        drop(mapping);
        assert!(vm.translate(bo.va(), 8, Access::Read).is_err());
    }
    assert_eq!(kfd.live_objects().buffers, buffers.len());
    drop(buffers);
    assert_eq!(kfd.live_objects(), kfd::LiveObjects::default());
    assert_eq!(kfd.address_space().live_ranges(), 0);
    close(kfd);
    assert_eq!(machine.process_counts(pid()), binding_only(1));
}

#[test]
fn mappings_on_one_and_two_gpus_are_counted_per_gpu() {
    let (machine, sys) = machine(small(2));
    let kfd = open(&sys).unwrap();
    let [a, b] = [kfd.gpus()[0].gpu_id(), kfd.gpus()[1].gpu_id()];
    let (vm_a, vm_b) = (
        machine.gpu_vm(pid(), a).unwrap(),
        machine.gpu_vm(pid(), b).unwrap(),
    );
    let bo = kfd
        .allocate(a, Allocation::new(MemoryKind::VramPrivate, 1 << 20))
        .unwrap();
    let on_a = bo.map_to(&[a]).unwrap();
    let on_both = bo.map_to(&[b, a, b]).unwrap();
    assert_eq!(on_both.gpu_ids(), &[a.min(b), a.max(b)]);
    assert!(vm_a.translate(bo.va(), 4096, Access::Write).is_ok());
    assert!(vm_b.translate(bo.va(), 4096, Access::Write).is_ok());
    assert_eq!(kfd.live_objects().gpu_mappings, 2);
    drop(on_both);
    // Still needed on A by the first mapping; gone from B.
    assert!(vm_a.translate(bo.va(), 4096, Access::Read).is_ok());
    assert_eq!(
        vm_b.translate(bo.va(), 4096, Access::Read)
            .unwrap_err()
            .kind,
        FaultKind::NotPresent
    );
    drop(on_a);
    assert!(vm_a.translate(bo.va(), 4096, Access::Read).is_err());
    assert_eq!(kfd.live_objects().gpu_mappings, 0);
    // Read-only and executable mappings carry their permissions to the GPU.
    let code = kfd
        .allocate(
            b,
            Allocation::new(MemoryKind::GttCoarse, 4096)
                .executable()
                .gpu_read_only(),
        )
        .unwrap();
    let mapped = code.map_to(&[a, b]).unwrap();
    let span = vm_a.translate(code.va(), 4, Access::Execute).unwrap();
    assert!(span.executable && !span.writable);
    assert_eq!(
        vm_b.translate(code.va(), 4, Access::Write)
            .unwrap_err()
            .kind,
        FaultKind::ReadOnly
    );
    drop((mapped, code, bo));
    close(kfd);
    assert_eq!(machine.process_counts(pid()), binding_only(2));
}

#[test]
fn close_leaves_only_the_binding_and_reopen_reuses_it() {
    let (machine, sys) = machine(small(2));
    let kfd = open(&sys).unwrap();
    let render_fds: Vec<i32> = kfd.gpus().iter().map(kfd::Gpu::render_fd).collect();
    let kfd_fd = kfd.kfd_fd();
    let (page, page_handle) = (kfd.event_page_address(), kfd.event_page_handle());
    common::exercise(&kfd);
    close(kfd);
    let after_first = machine.process_counts(pid());
    assert_eq!(after_first, binding_only(2));
    for round in 0..5 {
        let kfd = open(&sys).unwrap_or_else(|e| panic!("reopen {round}: {e}"));
        // The same files (ACQUIRE_VM with a new render file would be EBUSY) and event page
        // (a second page would be EINVAL).
        assert_eq!(kfd.kfd_fd(), kfd_fd);
        let fds: Vec<i32> = kfd.gpus().iter().map(kfd::Gpu::render_fd).collect();
        assert_eq!(fds, render_fds);
        assert_eq!(kfd.event_page_address(), page);
        assert_eq!(kfd.event_page_handle(), page_handle);
        common::exercise(&kfd);
        close(kfd);
        assert_eq!(machine.process_counts(pid()), after_first, "round {round}");
    }
}

#[test]
fn the_event_page_and_another_render_file_are_what_the_kernel_says() {
    let (_machine, sys) = machine(small(1));
    let kfd = open(&sys).unwrap();
    let gpu = kfd.gpus()[0].gpu_id();
    // The kernel never frees the event page; the binding relies on that.
    let err = ioctls::free_memory_of_gpu(sys.as_ref(), kfd.kfd_fd(), kfd.event_page_handle())
        .unwrap_err();
    assert_eq!(err.errno, Errno::EPERM);
    // A second page is refused.
    let second = kfd
        .allocate(gpu, Allocation::new(MemoryKind::GttUncached, 32 << 10))
        .unwrap();
    let mut args = kfd::abi::CreateEventArgs {
        event_page_offset: second.handle(),
        ..Default::default()
    };
    let err = ioctls::create_event(sys.as_ref(), kfd.kfd_fd(), &mut args).unwrap_err();
    assert_eq!(err.errno, Errno::EINVAL);
    // ACQUIRE_VM with another render-node file is EBUSY; with the bound one it is 0.
    let other =
        drm_amdgpu::open_render_node(sys.as_ref(), kfd.gpus()[0].drm_render_minor()).unwrap();
    let err = ioctls::acquire_vm(sys.as_ref(), kfd.kfd_fd(), other, gpu).unwrap_err();
    assert_eq!(err.errno, Errno::EBUSY);
    sys.close(other).unwrap();
    ioctls::acquire_vm(sys.as_ref(), kfd.kfd_fd(), kfd.gpus()[0].render_fd(), gpu).unwrap();
    drop(second);
    close(kfd);
}

#[test]
fn a_gpu_bound_to_a_foreign_render_file_is_reported_as_ebusy() {
    let (machine, sys) = machine(small(1));
    let gpu = machine.gpus()[0].clone();
    // Another runtime in this process got there first, with its own render file.
    let kfd_fd = sys
        .open(
            std::path::Path::new("/dev/kfd"),
            kfd::sys::OFlag::O_RDWR | kfd::sys::OFlag::O_CLOEXEC,
        )
        .unwrap();
    let foreign = drm_amdgpu::open_render_node(sys.as_ref(), gpu.render_minor).unwrap();
    ioctls::acquire_vm(sys.as_ref(), kfd_fd, foreign, gpu.gpu_id).unwrap();
    let err = open(&sys).unwrap_err();
    assert_eq!(err.errno(), Some(Errno::EBUSY));
    assert_eq!(err.request(), Some("AMDKFD_IOC_ACQUIRE_VM"));
    assert!(
        err.to_string().contains("another render-node file"),
        "{err}"
    );
    // Our render file was closed again: only the foreign files and our /dev/kfd remain.
    assert_eq!(machine.process_counts(pid()).open_files, 3);
}

#[test]
fn interfaces_too_old_are_refused_by_name_and_older_features_degrade() {
    let (machine, sys) = machine(small(1).with_kfd_minor_version(5));
    let err = open(&sys).unwrap_err();
    assert!(
        matches!(
            err,
            Error::UnsupportedInterface {
                major: 1,
                minor: 5,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("1.5"), "{err}");
    assert_eq!(
        machine.process_counts(pid()).open_files,
        0,
        "the kfd fd was closed"
    );

    // Debian bookworm's Linux 6.1: 1.11, no RUNTIME_ENABLE, no event ages.
    let (_machine, sys) = machine_with_minor(11);
    let kfd = open(&sys).unwrap();
    assert_eq!(kfd.runtime_state(), kfd::RuntimeState::NotSupported);
    assert!(kfd.available_memory(kfd.gpus()[0].gpu_id()).unwrap() > 0);
    let event = kfd.create_signal_event(false).unwrap();
    let err = kfd
        .wait_events(
            &mut [EventWait::since(&event, 1)],
            true,
            Some(Duration::ZERO),
        )
        .unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)), "{err}");
    drop(event);
    close(kfd);

    // Before AVAILABLE_MEMORY (1.9).
    let (_machine, sys) = machine_with_minor(8);
    let kfd = open(&sys).unwrap();
    let err = kfd.available_memory(kfd.gpus()[0].gpu_id()).unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)), "{err}");
    common::exercise(&kfd);
    close(kfd);
}

fn machine_with_minor(minor: u32) -> (Machine, Arc<dyn Sys>) {
    machine(small(1).with_kfd_minor_version(minor))
}

#[test]
fn a_failed_open_unwinds_and_a_retry_succeeds_at_every_step() {
    // Every ioctl of the open sequence, failed once in turn. XNACK and RUNTIME_ENABLE are
    // optional: their failure must not fail the open.
    let steps: [(u8, &str, bool); 9] = [
        (0x01, "AMDKFD_IOC_GET_VERSION", true),
        (0x15, "AMDKFD_IOC_ACQUIRE_VM", true),
        (0x14, "AMDKFD_IOC_GET_PROCESS_APERTURES_NEW", true),
        (0x04, "AMDKFD_IOC_SET_MEMORY_POLICY", true),
        (0x21, "AMDKFD_IOC_SET_XNACK_MODE", false),
        (0x25, "AMDKFD_IOC_RUNTIME_ENABLE", false),
        (ALLOC, "AMDKFD_IOC_ALLOC_MEMORY_OF_GPU", true),
        (MAP, "AMDKFD_IOC_MAP_MEMORY_TO_GPU", true),
        (0x08, "AMDKFD_IOC_CREATE_EVENT", true),
    ];
    for (number, name, fatal) in steps {
        let (machine, sys) = machine(small(2));
        machine.inject().fail_ioctls(number, Errno::EIO, 1);
        let opened = open(&sys);
        assert_eq!(
            machine.inject().pending_ioctl_failures(),
            0,
            "the open sequence issued no {name}"
        );
        match opened {
            Err(err) => {
                assert!(fatal, "{name}: {err}");
                assert_eq!(err.request(), Some(name), "{err}");
                assert_eq!(err.errno(), Some(Errno::EIO));
            }
            Ok(kfd) => {
                assert!(!fatal, "{name} failing did not fail the open");
                close(kfd);
            }
        }
        let kfd = open(&sys).unwrap_or_else(|e| panic!("retry after {name}: {e}"));
        common::exercise(&kfd);
        close(kfd);
        assert_eq!(
            machine.process_counts(pid()),
            binding_only(2),
            "after {name}"
        );
    }
}

#[test]
fn interrupted_ioctls_are_restarted() {
    let (machine, sys) = machine(small(2));
    let kfd = open(&sys).unwrap();
    for number in [ALLOC, MAP, 0x19, 0x17, 0x02, 0x03, 0x08, 0x09, 0x0A] {
        machine.inject().fail_ioctls(number, Errno::EINTR, 2);
    }
    machine.inject().fail_ioctls(ALLOC, Errno::EAGAIN, 3);
    common::exercise(&kfd);
    assert_eq!(machine.inject().pending_ioctl_failures(), 0);
    close(kfd);
    assert_eq!(machine.process_counts(pid()), binding_only(2));
}

#[test]
fn allocation_errors_name_the_request_and_leave_nothing_behind() {
    let mut config = small(1);
    config.gpus[0].large_bar = false;
    let (machine, sys) = machine(config);
    let kfd = open(&sys).unwrap();
    let gpu = kfd.gpus()[0].gpu_id();
    let before = machine.process_counts(pid());

    // More VRAM than the GPU has: ENOMEM.
    let (request, errno) =
        errno_of(kfd.allocate(gpu, Allocation::new(MemoryKind::VramPrivate, 4 << 30)));
    assert_eq!(
        (request, errno),
        (Some("AMDKFD_IOC_ALLOC_MEMORY_OF_GPU"), Errno::ENOMEM)
    );
    // Host-visible VRAM on a small-BAR GPU: EINVAL.
    let err = kfd
        .allocate(gpu, Allocation::new(MemoryKind::VramHostVisible, 4096))
        .unwrap_err();
    assert_eq!(err.errno(), Some(Errno::EINVAL));
    assert!(err.to_string().contains("host-visible VRAM"), "{err}");
    // Size 0 and wrong fixed sizes are caught before the kernel.
    assert!(matches!(
        kfd.allocate(gpu, Allocation::new(MemoryKind::GttFine, 0)),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        kfd.allocate(gpu, Allocation::new(MemoryKind::MmioRemap, 8192)),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        kfd.allocate(0xdead, Allocation::new(MemoryKind::GttFine, 4096)),
        Err(Error::NoSuchGpu(0xdead))
    ));
    // Injected failures of map and unmap undo cleanly.
    let bo = kfd
        .allocate(gpu, Allocation::new(MemoryKind::GttFine, 4096))
        .unwrap();
    machine.inject().fail_ioctls(MAP, Errno::ENOMEM, 1);
    let (request, errno) = errno_of(bo.map_to(&[gpu]));
    assert_eq!(
        (request, errno),
        (Some("AMDKFD_IOC_MAP_MEMORY_TO_GPU"), Errno::ENOMEM)
    );
    assert!(bo.mapped_gpus().is_empty());
    let mapping = bo.map_to(&[gpu]).unwrap();
    machine.inject().fail_ioctls(0x19, Errno::EINVAL, 1);
    let err = mapping.unmap().unwrap_err();
    assert_eq!(err.request(), Some("AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU"));
    // The kernel still has it mapped, so freeing is refused (EBUSY) and recorded.
    drop(bo);
    let errors = kfd.take_drop_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].errno(), Some(Errno::EBUSY));
    assert_eq!(errors[0].request(), Some("AMDKFD_IOC_FREE_MEMORY_OF_GPU"));
    // That buffer stays (the kernel holds it); nothing else leaked.
    let after = machine.process_counts(pid());
    assert_eq!(after.buffer_objects, before.buffer_objects + 1);
    assert_eq!(kfd.live_objects().buffers, 0);
    assert!(kfd.available_memory(gpu).unwrap() > 0);
    close(kfd);
}

#[test]
fn user_memory_is_registered_at_its_own_address() {
    let (machine, sys) = machine(small(1));
    let kfd = open(&sys).unwrap();
    let gpu = kfd.gpus()[0].gpu_id();
    let page = 4096;
    let layout = std::alloc::Layout::from_size_align(4 * page, page).unwrap();
    // SAFETY: a non-zero-sized layout.
    let memory = unsafe { std::alloc::alloc_zeroed(layout) };
    let address = std::ptr::NonNull::new(memory).unwrap();
    // SAFETY: the allocation lives until after the buffer and its mapping are dropped below.
    let bo = unsafe { kfd.register_user_memory(gpu, address, 4 * page as u64) }.unwrap();
    assert_eq!(bo.va(), memory as u64);
    let mapping = bo.map_to(&[gpu]).unwrap();
    bo.write(8, &[7, 7, 7]).unwrap();
    let span = machine
        .gpu_vm(pid(), gpu)
        .unwrap()
        .translate(bo.va() + 8, 3, Access::Read)
        .unwrap();
    // SAFETY: the span covers the three bytes and lives while `span` does.
    let seen = unsafe { span.host_address(bo.va() + 9).read_volatile() };
    assert_eq!(seen, 7);
    drop((mapping, bo));
    // SAFETY: allocated above with this layout; nothing uses it any more.
    unsafe { std::alloc::dealloc(memory, layout) };
    // Not whole pages: refused before the kernel.
    // SAFETY: refused before anything uses the memory.
    let err = unsafe { kfd.register_user_memory(gpu, address.byte_add(1), 4096) }.unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)));
    close(kfd);
}

/// A queue engine that records what CREATE_QUEUE handed the command processor and every
/// doorbell value it was told about.
#[derive(Default)]
struct RecordingEngine {
    specs: Mutex<Vec<QueueSpec>>,
    doorbells: Arc<Mutex<Vec<u64>>>,
    running: Arc<AtomicUsize>,
}

struct RecordingQueue {
    doorbells: Arc<Mutex<Vec<u64>>>,
    running: Arc<AtomicUsize>,
}

impl RunningQueue for RecordingQueue {
    fn doorbell_rung(&self, value: u64) {
        self.doorbells.lock().unwrap().push(value);
    }
    fn update(&self, _: u64, _: u64, _: u32, _: u32) {}
    fn stop(&self) {
        self.running.fetch_sub(1, Ordering::SeqCst);
    }
}

impl QueueEngine for RecordingEngine {
    fn start(&self, spec: QueueSpec) -> Box<dyn RunningQueue> {
        self.specs.lock().unwrap().push(spec);
        self.running.fetch_add(1, Ordering::SeqCst);
        Box::new(RecordingQueue {
            doorbells: Arc::clone(&self.doorbells),
            running: Arc::clone(&self.running),
        })
    }
}

#[test]
fn queues_get_their_buffers_and_a_doorbell_the_command_processor_hears() {
    let engine = Arc::new(RecordingEngine::default());
    let (machine, sys) = machine(small(1).with_engine(engine.clone()));
    let kfd = open(&sys).unwrap();
    let gpu = kfd.gpus()[0].gpu_id();
    let first = aql_queue(&kfd, gpu).unwrap();
    let second = aql_queue(&kfd, gpu).unwrap();
    assert_ne!(first.queue_id(), second.queue_id());
    {
        let specs = engine.specs.lock().unwrap();
        assert_eq!(specs.len(), 2);
        let memory = first.queue_memory();
        let spec = &specs[0];
        assert_eq!(spec.ring_va, memory.ring().va());
        assert_eq!(spec.ring_bytes, u64::from(RING_BYTES));
        assert_eq!(
            spec.read_pointer_va,
            memory.pointer_page().va() + common::READ_DISPATCH_ID
        );
        assert_eq!(
            spec.write_pointer_va,
            memory.pointer_page().va() + common::WRITE_DISPATCH_ID
        );
        assert_eq!(spec.priority, NORMAL_PRIORITY);
        assert_eq!(spec.gpu_id, gpu);
        assert_eq!(spec.queue_id, first.queue_id());
    }
    first.doorbell().ring(41);
    second.doorbell().ring(42);
    // SAFETY: the doorbell stays mapped while `first` lives.
    assert_eq!(unsafe { first.doorbell().address().read_volatile() }, 41);
    assert_eq!(*engine.doorbells.lock().unwrap(), vec![41, 42]);
    {
        // The command processor's view of each doorbell holds what the driver stored.
        let specs = engine.specs.lock().unwrap();
        // SAFETY: the simulator's doorbell page outlives every queue (the QueueSpec contract).
        let seen = unsafe {
            [
                specs[0].doorbell.read_volatile(),
                specs[1].doorbell.read_volatile(),
            ]
        };
        assert_eq!(seen, [41, 42]);
    }
    assert_eq!(machine.process_counts(pid()).queues, 2);
    drop(first);
    second.destroy().unwrap();
    assert_eq!(engine.running.load(Ordering::SeqCst), 0);
    engine.specs.lock().unwrap().clear();
    assert_eq!(kfd.live_objects(), kfd::LiveObjects::default());
    close(kfd);
    assert_eq!(machine.process_counts(pid()), binding_only(1));
}

#[test]
fn queue_errors_are_the_kernels_and_leave_nothing_behind() {
    let (machine, sys) = machine(small(1));
    let kfd = open(&sys).unwrap();
    let gpu = kfd.gpus()[0].gpu_id();
    let baseline = machine.process_counts(pid());
    let config = |priority, percentage| QueueConfig {
        read_pointer_offset: common::READ_DISPATCH_ID,
        write_pointer_offset: common::WRITE_DISPATCH_ID,
        priority,
        percentage,
    };
    let create = |c: QueueConfig| {
        kfd.allocate_queue_memory(gpu, RING_BYTES, MemoryKind::GttUncached)
            .and_then(|m| m.create_aql_queue(&c))
    };
    for bad in [config(16, 100), config(7, 101)] {
        let (request, errno) = errno_of(create(bad));
        assert_eq!(
            (request, errno),
            (Some("AMDKFD_IOC_CREATE_QUEUE"), Errno::EINVAL)
        );
    }
    assert_eq!(
        machine.process_counts(pid()),
        baseline,
        "failed creates freed their memory"
    );
    // Checked here: a ring the kernel cannot take, a pointer outside the page.
    assert!(matches!(
        kfd.allocate_queue_memory(gpu, 3000, MemoryKind::GttUncached),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        kfd.allocate_queue_memory(gpu, 4096, MemoryKind::VramPrivate),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        create(QueueConfig {
            read_pointer_offset: 4096,
            ..config(7, 100)
        }),
        Err(Error::InvalidArgument(_))
    ));

    let queue = aql_queue(&kfd, gpu).unwrap();
    let (request, errno) = errno_of(queue.update(100, 16));
    assert_eq!(
        (request, errno),
        (Some("AMDKFD_IOC_UPDATE_QUEUE"), Errno::EINVAL)
    );
    let (request, errno) = errno_of(queue.update(101, 7));
    assert_eq!(
        (request, errno),
        (Some("AMDKFD_IOC_UPDATE_QUEUE"), Errno::EINVAL)
    );
    queue.set_cu_mask(&[0xff]).unwrap();
    let (request, errno) = errno_of(queue.set_cu_mask(&[]));
    assert_eq!(
        (request, errno),
        (Some("AMDKFD_IOC_SET_CU_MASK"), Errno::EINVAL)
    );
    // XNACK cannot change while a queue exists.
    let (request, errno) = errno_of(kfd.set_xnack_mode(true));
    assert_eq!(
        (request, errno),
        (Some("AMDKFD_IOC_SET_XNACK_MODE"), Errno::EBUSY)
    );

    // A queue the kernel will not destroy keeps its memory (the GPU may still use it).
    machine.inject().fail_ioctls(0x03, Errno::EIO, 1);
    let (request, errno) = errno_of(queue.destroy());
    assert_eq!(
        (request, errno),
        (Some("AMDKFD_IOC_DESTROY_QUEUE"), Errno::EIO)
    );
    assert_eq!(machine.process_counts(pid()).queues, 1);
    drop(kfd);
}

#[test]
fn the_per_device_queue_limit_is_enospc() {
    let (machine, sys) = machine(small(1));
    let kfd = open(&sys).unwrap();
    let gpu = kfd.gpus()[0].gpu_id();
    let limit = machine.gpus()[0].max_queues_per_process as usize;
    let mut queues = Vec::new();
    let err = loop {
        match aql_queue(&kfd, gpu) {
            Ok(q) => queues.push(q),
            Err(err) => break err,
        }
        assert!(queues.len() <= limit, "no limit after {limit} queues");
    };
    assert_eq!(queues.len(), limit);
    assert_eq!(err.errno(), Some(Errno::ENOSPC), "{err}");
    assert_eq!(err.request(), Some("AMDKFD_IOC_CREATE_QUEUE"));
    queues.pop();
    queues.push(aql_queue(&kfd, gpu).unwrap());
    drop(queues);
    close(kfd);
    assert_eq!(machine.process_counts(pid()), binding_only(1));
}

#[test]
fn xnack_changes_without_queues() {
    let (_machine, sys) = machine(small(1));
    let kfd = open(&sys).unwrap();
    // The kernel's own answer, asked with a separate ioctl (SET_XNACK_MODE with -1 queries),
    // not the value the driver remembers having set.
    let kernel = |kfd: &Kfd| ioctls::set_xnack_mode(sys.as_ref(), kfd.kfd_fd(), -1).unwrap() != 0;
    let before = kfd.xnack_enabled().unwrap();
    assert_eq!(kernel(&kfd), before);
    kfd.set_xnack_mode(!before).unwrap();
    assert_eq!(kernel(&kfd), !before);
    assert_eq!(kfd.xnack_enabled(), Some(!before));
    kfd.set_xnack_mode(before).unwrap();
    assert_eq!(kernel(&kfd), before);
    assert_eq!(kfd.xnack_enabled(), Some(before));
    close(kfd);
}

#[test]
fn signal_events_set_reset_auto_reset_and_age() {
    let (_machine, sys) = machine(small(1));
    let kfd = open(&sys).unwrap();
    let manual = kfd.create_signal_event(false).unwrap();
    let auto = kfd.create_signal_event(true).unwrap();
    let poll = Some(Duration::ZERO);
    // The kernel fills a new slot with UNSIGNALED.
    // SAFETY: the mailbox is a slot of the live event page.
    let slot = unsafe { manual.mailbox().unwrap().read_volatile() };
    assert_eq!(slot, u64::MAX);
    assert_eq!(manual.slot_index(), Some(manual.id()));
    assert_eq!(manual.trigger_data(), manual.id());

    manual.set().unwrap();
    for _ in 0..2 {
        assert_eq!(manual.wait(poll).unwrap().status, WaitStatus::Complete);
    }
    manual.reset().unwrap();
    assert_eq!(manual.wait(poll).unwrap().status, WaitStatus::Timeout);

    auto.set().unwrap();
    assert_eq!(auto.wait(poll).unwrap().status, WaitStatus::Complete);
    assert_eq!(
        auto.wait(poll).unwrap().status,
        WaitStatus::Timeout,
        "consumed"
    );

    // Any and all.
    manual.set().unwrap();
    let mut both = [EventWait::new(&manual), EventWait::new(&auto)];
    assert_eq!(
        kfd.wait_events(&mut both, false, poll).unwrap().status,
        WaitStatus::Complete
    );
    assert_eq!(
        kfd.wait_events(&mut both, true, poll).unwrap().status,
        WaitStatus::Timeout
    );

    // Ages: a fresh event still has the initial age, so waiting since it waits...
    let fresh = kfd.create_signal_event(false).unwrap();
    let mut wait = [EventWait::since(&fresh, kfd::event::INITIAL_EVENT_AGE)];
    assert_eq!(
        kfd.wait_events(&mut wait, true, poll).unwrap().status,
        WaitStatus::Timeout
    );
    drop(fresh);
    // ...and a set since the last observed age completes a wait even after a reset.
    let mut wait = [EventWait::since(&manual, kfd::event::INITIAL_EVENT_AGE)];
    assert_eq!(
        kfd.wait_events(&mut wait, true, poll).unwrap().status,
        WaitStatus::Complete
    );
    let seen = wait[0].last_age;
    assert!(
        seen > kfd::event::INITIAL_EVENT_AGE,
        "the kernel reported the age"
    );
    manual.reset().unwrap();
    let mut wait = [EventWait::since(&manual, seen)];
    assert_eq!(
        kfd.wait_events(&mut wait, true, poll).unwrap().status,
        WaitStatus::Timeout
    );
    manual.set().unwrap();
    manual.reset().unwrap();
    assert_eq!(
        kfd.wait_events(&mut wait, true, poll).unwrap().status,
        WaitStatus::Complete
    );
    assert!(wait[0].last_age > seen);

    // Only signal events can be set from the CPU.
    let memory = kfd.create_event(EventType::MEMORY, false, 0).unwrap();
    let (request, errno) = errno_of(memory.set());
    assert_eq!(
        (request, errno),
        (Some("AMDKFD_IOC_SET_EVENT"), Errno::EINVAL)
    );
    let (request, errno) = errno_of(memory.reset());
    assert_eq!(
        (request, errno),
        (Some("AMDKFD_IOC_RESET_EVENT"), Errno::EINVAL)
    );
    drop((manual, auto, memory));
    close(kfd);
}

#[test]
fn the_gpu_fires_signal_events_through_the_mailbox() {
    let (machine, sys) = machine(small(1));
    let kfd = open(&sys).unwrap();
    let gpu = kfd.gpus()[0].gpu_id();
    let event = kfd.create_signal_event(false).unwrap();
    let other = kfd.create_signal_event(false).unwrap();
    // What the CP does for an interrupt signal: the event id into the mailbox, then an
    // end-of-pipe interrupt carrying it.
    let mailbox = event.mailbox().unwrap();
    // SAFETY: the mailbox is a slot of the live event page, which the GPU may write.
    unsafe { mailbox.write_volatile(u64::from(event.trigger_data())) };
    machine
        .interrupt_sink(pid(), gpu)
        .unwrap()
        .end_of_pipe(event.trigger_data());
    let mut waits = [EventWait::new(&event), EventWait::new(&other)];
    assert_eq!(
        kfd.wait_events(&mut waits, false, Some(Duration::from_secs(10)))
            .unwrap()
            .status,
        WaitStatus::Complete
    );
    assert_eq!(
        other.wait(Some(Duration::ZERO)).unwrap().status,
        WaitStatus::Timeout
    );
    drop((event, other));
    close(kfd);
}

#[test]
fn memory_faults_and_gpu_resets_arrive_with_their_data() {
    let (machine, sys) = machine(small(1));
    let kfd = open(&sys).unwrap();
    let gpu = kfd.gpus()[0].gpu_id();
    let memory = kfd.create_event(EventType::MEMORY, false, 0).unwrap();
    let hardware = kfd.create_event(EventType::HW_EXCEPTION, false, 0).unwrap();
    let signal = kfd.create_signal_event(false).unwrap();
    machine
        .inject_vm_fault(
            pid(),
            gpu,
            MemoryFault {
                va: 0x7f12_3456_7000,
                access: Access::Write,
                kind: FaultKind::ReadOnly,
            },
        )
        .unwrap();
    let mut waits = [
        EventWait::new(&memory),
        EventWait::new(&hardware),
        EventWait::new(&signal),
    ];
    let outcome = kfd
        .wait_events(&mut waits, false, Some(Duration::from_secs(10)))
        .unwrap();
    assert_eq!(outcome.status, WaitStatus::Complete);
    let Some(EventException::Memory(data)) = outcome.exceptions[0] else {
        panic!("{outcome:?}");
    };
    assert_eq!(data.gpu_id, gpu);
    assert_eq!(data.va, 0x7f12_3456_7000);
    assert_eq!(data.failure.read_only, 1);
    assert_eq!(outcome.exceptions[1], None);

    machine.inject_gpu_reset(gpu, ResetCause::Hang).unwrap();
    let outcome = hardware.wait(Some(Duration::from_secs(10))).unwrap();
    let Some(EventException::Hardware(data)) = outcome.exceptions[0] else {
        panic!("{outcome:?}");
    };
    assert_eq!(
        (data.gpu_id, data.memory_lost, data.reset_cause),
        (gpu, 1, exception::GPU_HANG)
    );
    drop((memory, hardware, signal));
    close(kfd);
}

#[test]
fn the_signal_event_limit_is_enospc() {
    let (machine, sys) = machine(small(1));
    let kfd = open(&sys).unwrap();
    let mut events = Vec::new();
    let err = loop {
        match kfd.create_signal_event(false) {
            Ok(e) => events.push(e),
            Err(err) => break err,
        }
        assert!(events.len() < 4096, "no limit");
    };
    // 4096 slots, slot 0 reserved.
    assert_eq!(events.len(), 4095);
    assert_eq!(err.errno(), Some(Errno::ENOSPC));
    assert_eq!(err.request(), Some("AMDKFD_IOC_CREATE_EVENT"));
    // Non-signal events need no slot.
    let memory = kfd.create_event(EventType::MEMORY, false, 0).unwrap();
    events.truncate(10);
    events.push(kfd.create_signal_event(false).unwrap());
    drop((events, memory));
    assert_eq!(machine.process_counts(pid()).events, 0);
    close(kfd);
}

/// A `Sys` that forwards to a machine and records the `timeout` of every WAIT_EVENTS before
/// and after the call.
#[derive(Debug)]
struct WaitRecorder {
    machine: Machine,
    timeouts: Mutex<Vec<(u32, u32, Option<Errno>)>>,
}

impl Sys for WaitRecorder {
    fn backend(&self) -> kfd::sys::Backend {
        self.machine.backend()
    }
    fn open(&self, path: &std::path::Path, flags: kfd::sys::OFlag) -> Result<i32, Errno> {
        self.machine.open(path, flags)
    }
    fn close(&self, fd: i32) -> Result<(), Errno> {
        self.machine.close(fd)
    }
    unsafe fn ioctl(
        &self,
        fd: i32,
        request: kfd::Opcode,
        arg: *mut std::ffi::c_void,
    ) -> Result<i32, Errno> {
        let wait = request == <kfd::ioctl::requests::WaitEvents as kfd::ioctl::Ioctl>::OPCODE;
        let args = arg.cast::<kfd::abi::WaitEventsArgs>();
        // SAFETY: for WAIT_EVENTS the argument is a WaitEventsArgs (the Sys::ioctl contract).
        let before = wait.then(|| unsafe { (*args).timeout });
        // SAFETY: forwarded (the Sys::ioctl contract).
        let result = unsafe { self.machine.ioctl(fd, request, arg) };
        if let Some(before) = before {
            // SAFETY: as above.
            let after = unsafe { (*args).timeout };
            self.timeouts
                .lock()
                .unwrap()
                .push((before, after, result.err()));
        }
        result
    }
    unsafe fn mmap(
        &self,
        addr: Option<std::num::NonZeroUsize>,
        len: std::num::NonZeroUsize,
        prot: kfd::sys::ProtFlags,
        flags: kfd::sys::MapFlags,
        fd: Option<i32>,
        offset: u64,
    ) -> Result<std::ptr::NonNull<std::ffi::c_void>, Errno> {
        // SAFETY: forwarded.
        unsafe { self.machine.mmap(addr, len, prot, flags, fd, offset) }
    }
    unsafe fn munmap(
        &self,
        addr: std::ptr::NonNull<std::ffi::c_void>,
        len: usize,
    ) -> Result<(), Errno> {
        // SAFETY: forwarded.
        unsafe { self.machine.munmap(addr, len) }
    }
    unsafe fn madvise(
        &self,
        addr: std::ptr::NonNull<std::ffi::c_void>,
        len: usize,
        advice: kfd::sys::MmapAdvise,
    ) -> Result<(), Errno> {
        // SAFETY: forwarded.
        unsafe { self.machine.madvise(addr, len, advice) }
    }
    fn read_file(&self, path: &std::path::Path) -> Result<Vec<u8>, Errno> {
        self.machine.read_file(path)
    }
    fn read_dir(&self, path: &std::path::Path) -> Result<Vec<std::ffi::OsString>, Errno> {
        self.machine.read_dir(path)
    }
    fn process_id(&self) -> i32 {
        self.machine.process_id()
    }
    fn page_size(&self) -> usize {
        self.machine.page_size()
    }
    fn kernel_id(&self) -> u64 {
        self.machine.kernel_id()
    }
    fn doorbell_needs_notify(&self) -> bool {
        self.machine.doorbell_needs_notify()
    }
    fn notify_doorbell(&self, doorbell: std::ptr::NonNull<u64>, value: u64) {
        self.machine.notify_doorbell(doorbell, value);
    }
}

#[test]
fn interrupted_waits_restart_with_the_time_that_remains() {
    let machine = Machine::new(small(1).with_engine(Arc::new(InertQueueEngine))).unwrap();
    let recorder = Arc::new(WaitRecorder {
        machine: machine.clone(),
        timeouts: Mutex::new(Vec::new()),
    });
    let sys: Arc<dyn Sys> = recorder.clone();
    let kfd = open(&sys).unwrap();
    let event = kfd.create_signal_event(false).unwrap();

    // A finite wait interrupted twice: each restart asks for what the kernel said remains.
    machine
        .inject()
        .interrupt_waits(2, Duration::from_millis(30));
    let outcome = event.wait(Some(Duration::from_millis(400))).unwrap();
    assert_eq!(outcome.status, WaitStatus::Timeout);
    let calls = std::mem::take(&mut *recorder.timeouts.lock().unwrap());
    assert_eq!(calls.len(), 3, "{calls:?}");
    assert_eq!(calls[0].0, 400);
    for pair in calls.windows(2) {
        let (_, remaining, errno) = pair[0];
        assert_eq!(errno, Some(Errno::EINTR));
        assert!(remaining < 400);
        assert_eq!(pair[1].0, remaining, "restarted with the remaining time");
    }
    assert_eq!(calls[2].2, None);

    // An infinite wait interrupted stays infinite and completes when the event is set.
    machine
        .inject()
        .interrupt_waits(1, Duration::from_millis(10));
    let _watchdog = watchdog::arm(
        watchdog::HANG_DEADLINE,
        "the infinite wait to complete once the event is set",
    );
    std::thread::scope(|scope| {
        scope.spawn(|| {
            assert!(test_support::wait::until(Duration::from_secs(30), || {
                !recorder.timeouts.lock().unwrap().is_empty()
            }));
            event.set().unwrap();
        });
        let outcome = event.wait(None).unwrap(); // bounded by: the watchdog
        assert_eq!(outcome.status, WaitStatus::Complete);
    });
    let calls = recorder.timeouts.lock().unwrap().clone();
    assert!(
        calls
            .iter()
            .all(|c| c.0 == kfd::abi::KFD_EVENT_TIMEOUT_INFINITE),
        "{calls:?}"
    );
    drop(event);
    close(kfd);
    assert_eq!(machine.process_counts(pid()), binding_only(1));
}

#[test]
fn failing_waits_report_the_request() {
    let (machine, sys) = machine(small(1));
    let kfd = open(&sys).unwrap();
    let event = kfd.create_signal_event(false).unwrap();
    machine.inject().fail_ioctls(0x0C, Errno::EIO, 1);
    let (request, errno) = errno_of(event.wait(Some(Duration::ZERO)));
    assert_eq!(
        (request, errno),
        (Some("AMDKFD_IOC_WAIT_EVENTS"), Errno::EIO)
    );
    // A destroyed event (here: by a raw ioctl behind the driver's back) is EINVAL.
    ioctls::destroy_event(sys.as_ref(), kfd.kfd_fd(), event.id()).unwrap();
    let (request, errno) = errno_of(event.wait(Some(Duration::ZERO)));
    assert_eq!(
        (request, errno),
        (Some("AMDKFD_IOC_WAIT_EVENTS"), Errno::EINVAL)
    );
    drop(event);
    let errors = kfd.take_drop_errors();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].request(), Some("AMDKFD_IOC_DESTROY_EVENT"));
    assert_eq!(errors[0].errno(), Some(Errno::EINVAL));
    close(kfd);
}

#[test]
fn the_doorbell_and_mmio_buffers_map_the_kernels_pages() {
    let (_machine, sys) = machine(small(1));
    let kfd = open(&sys).unwrap();
    let gpu = kfd.gpus()[0].gpu_id();
    // The doorbell BO and the queue's doorbell page are the same slice: a ring through one is
    // visible through the other.
    let queue = aql_queue(&kfd, gpu).unwrap();
    let doorbells = kfd
        .allocate(gpu, Allocation::new(MemoryKind::Doorbell, 0))
        .unwrap();
    assert_eq!(
        doorbells.size() as usize,
        kfd.gpus()[0].doorbell_slice_size()
    );
    let offset = kfd::doorbell::split_doorbell_offset(
        queue.doorbell_offset(),
        kfd.gpus()[0].doorbell_slice_size(),
    )
    .unwrap()
    .1;
    queue.doorbell().ring(0x1234);
    let mut seen = [0u8; 8];
    doorbells.read(offset as u64, &mut seen).unwrap();
    assert_eq!(u64::from_ne_bytes(seen), 0x1234);
    let mmio = kfd
        .allocate(gpu, Allocation::new(MemoryKind::MmioRemap, 0))
        .unwrap();
    assert_eq!(mmio.size(), 4096);
    let mapping = mmio.map_to(&[gpu]).unwrap();
    drop((mapping, mmio, doorbells, queue));
    close(kfd);
}

#[test]
fn errors_display_operation_request_and_errno() {
    let (_machine, sys) = machine(small(1));
    let kfd = open(&sys).unwrap();
    let err = kfd
        .allocate(
            kfd.gpus()[0].gpu_id(),
            Allocation::new(MemoryKind::VramPrivate, 1 << 40),
        )
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("allocate"), "{text}");
    assert!(text.contains("AMDKFD_IOC_ALLOC_MEMORY_OF_GPU"), "{text}");
    assert!(text.contains("ENOMEM"), "{text}");
    close(kfd);
}

/// Opens `/dev/null` instead of a render node: what a broken opener or a non-amdgpu file
/// amounts to.
#[derive(Debug)]
struct NullRenderNodes;

impl kfd::RenderNodeOpener for NullRenderNodes {
    fn open_render_node(
        &self,
        sys: &dyn Sys,
        _minor: u32,
    ) -> Result<i32, Box<dyn std::error::Error + Send + Sync>> {
        Ok(sys.open(
            std::path::Path::new("/dev/null"),
            kfd::sys::OFlag::O_RDWR | kfd::sys::OFlag::O_CLOEXEC,
        )?)
    }
}

#[test]
fn acquire_vm_refuses_a_file_that_is_not_a_render_node() {
    let (machine, sys) = machine(small(1));
    let err = Kfd::open(&sys, &kfd::OpenOptions::new(Arc::new(NullRenderNodes))).unwrap_err();
    assert_eq!(err.request(), Some("AMDKFD_IOC_ACQUIRE_VM"));
    assert_eq!(err.errno(), Some(Errno::EINVAL));
    // The /dev/null fd was closed again; the binding's /dev/kfd stays.
    assert_eq!(machine.process_counts(pid()).open_files, 1);
    // The right opener works afterwards.
    let kfd = open(&sys).unwrap();
    close(kfd);
    assert_eq!(machine.process_counts(pid()), binding_only(1));
}

#[test]
fn a_runtime_enabled_by_someone_else_is_tolerated() {
    let (machine, sys) = machine(small(1));
    let kfd_fd = sys
        .open(
            std::path::Path::new("/dev/kfd"),
            kfd::sys::OFlag::O_RDWR | kfd::sys::OFlag::O_CLOEXEC,
        )
        .unwrap();
    ioctls::runtime_enable(
        sys.as_ref(),
        kfd_fd,
        0,
        kfd::abi::KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK,
    )
    .unwrap();
    let kfd = open(&sys).unwrap();
    assert_eq!(
        kfd.runtime_state(),
        kfd::RuntimeState::Refused(Errno::EBUSY)
    );
    common::exercise(&kfd);
    close(kfd);
    assert_eq!(machine.process_counts(pid()).open_files, 3);
}

#[test]
fn queries_pass_the_kernels_answers_through() {
    let (_machine, sys) = machine(small(1));
    let kfd = open(&sys).unwrap();
    let gpu = kfd.gpus()[0].gpu_id();
    let (request, errno) = errno_of(kfd.available_memory(0xdead));
    assert_eq!(
        (request, errno),
        (Some("AMDKFD_IOC_AVAILABLE_MEMORY"), Errno::EINVAL)
    );
    let free = kfd.available_memory(gpu).unwrap();
    let bo = kfd
        .allocate(gpu, Allocation::new(MemoryKind::VramPrivate, 64 << 20))
        .unwrap();
    assert!(kfd.available_memory(gpu).unwrap() <= free - (64 << 20));
    drop(bo);
    assert_eq!(kfd.available_memory(gpu).unwrap(), free);
    let clocks = kfd.clock_counters(gpu).unwrap();
    assert_eq!(clocks.system_clock_freq, 1_000_000_000);
    assert!(clocks.cpu_clock_counter > 0);
    // An unknown GPU is not an error for this ioctl: its GPU counter is 0.
    assert_eq!(kfd.clock_counters(0xdead).unwrap().gpu_clock_counter, 0);
    close(kfd);
}

#[test]
fn an_event_destroyed_during_a_wait_ends_it_with_eio() {
    let (machine, sys) = machine(small(1));
    let kfd = open(&sys).unwrap();
    // The destroy must land while the wait sleeps; should the waiter be late (a loaded
    // machine), the wait sees an unknown id instead (EINVAL) and the attempt is repeated.
    let mut seen = Vec::new();
    for _ in 0..10 {
        let event = kfd.create_signal_event(false).unwrap();
        let id = event.id();
        let waiting = std::sync::atomic::AtomicBool::new(false);
        let _watchdog = watchdog::arm(
            watchdog::HANG_DEADLINE,
            "the waiter to fail once its event is destroyed",
        );
        let result = std::thread::scope(|scope| {
            let waiter = scope.spawn(|| {
                waiting.store(true, Ordering::SeqCst);
                event.wait(Some(Duration::from_secs(30)))
            });
            // Destroy once the simulated driver has the waiter asleep on the event (or the
            // waiter has already failed).
            assert!(test_support::wait::until(Duration::from_secs(30), || {
                machine.sleeping_event_waiters(pid(), id) > 0 || waiter.is_finished()
            }));
            // Behind the driver's back, as another thread of a buggy program could.
            ioctls::destroy_event(sys.as_ref(), kfd.kfd_fd(), id).unwrap();
            waiter.join().unwrap()
        });
        let (request, errno) = errno_of(result);
        assert_eq!(request, Some("AMDKFD_IOC_WAIT_EVENTS"));
        drop(event);
        let _ = kfd.take_drop_errors();
        seen.push(errno);
        if errno == Errno::EIO {
            break;
        }
        assert_eq!(errno, Errno::EINVAL);
    }
    assert_eq!(seen.last(), Some(&Errno::EIO), "{seen:?}");
    close(kfd);
}

#[test]
fn concurrent_opens_and_closes_share_one_driver_and_leak_nothing() {
    let (machine, sys) = machine(small(2));
    // The driver open at the moment (if any), and every kfd fd any open returned.
    let current: Mutex<Weak<Kfd>> = Mutex::new(Weak::new());
    let kfd_fds: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());
    let _watchdog = watchdog::arm(
        watchdog::HANG_DEADLINE,
        "six threads opening and closing the driver",
    );
    std::thread::scope(|scope| {
        for t in 0..6u8 {
            let (sys, current, kfd_fds) = (&sys, &current, &kfd_fds);
            scope.spawn(move || {
                for _ in 0..15 {
                    let kfd = open(sys).unwrap();
                    {
                        // One driver: while another thread's is alive, an open returns it.
                        let mut current = current.lock().unwrap();
                        if let Some(other) = current.upgrade() {
                            assert!(Arc::ptr_eq(&other, &kfd), "two drivers open at once");
                        }
                        *current = Arc::downgrade(&kfd);
                    }
                    kfd_fds.lock().unwrap().insert(kfd.kfd_fd());
                    let gpu = kfd.gpus()[usize::from(t) % 2].gpu_id();
                    let bo = kfd
                        .allocate(gpu, Allocation::new(MemoryKind::GttFine, 8192))
                        .unwrap();
                    bo.write(0, &[t; 16]).unwrap();
                    let mapping = bo.map_to(&[gpu]).unwrap();
                    let event = kfd.create_signal_event(true).unwrap();
                    event.set().unwrap();
                    assert_eq!(
                        event.wait(Some(Duration::from_secs(10))).unwrap().status,
                        WaitStatus::Complete
                    );
                    let mut back = [0u8; 16];
                    bo.read(0, &mut back).unwrap();
                    assert_eq!(back, [t; 16]);
                    drop((event, mapping, bo, kfd));
                }
            });
        }
    });
    // One process binding under every open: the same /dev/kfd file throughout.
    assert_eq!(kfd_fds.into_inner().unwrap().len(), 1);
    assert_eq!(machine.process_counts(pid()), binding_only(2));
}

/// Opens the render nodes of some minors only.
#[derive(Debug)]
struct SomeRenderNodes(Vec<u32>);

impl kfd::RenderNodeOpener for SomeRenderNodes {
    fn open_render_node(
        &self,
        sys: &dyn Sys,
        minor: u32,
    ) -> Result<i32, Box<dyn std::error::Error + Send + Sync>> {
        if self.0.contains(&minor) {
            drm_amdgpu::AmdgpuRenderNodes.open_render_node(sys, minor)
        } else {
            Err(Box::new(std::io::Error::from_raw_os_error(libc::EPERM)))
        }
    }
}

#[test]
fn gpus_whose_render_node_cannot_be_opened_are_hidden() {
    let (machine, sys) = machine(small(2));
    let minors: Vec<u32> = machine.gpus().iter().map(|g| g.render_minor).collect();
    let options = |allowed: Vec<u32>| kfd::OpenOptions::new(Arc::new(SomeRenderNodes(allowed)));
    let err = Kfd::open(&sys, &options(Vec::new())).unwrap_err();
    assert!(matches!(err, Error::NoUsableGpu(_)), "{err}");
    assert!(
        err.to_string().contains(&format!("renderD{}", minors[0])),
        "{err}"
    );

    let kfd = Kfd::open(&sys, &options(vec![minors[1]])).unwrap();
    assert_eq!(kfd.gpus().len(), 1);
    assert_eq!(kfd.gpus()[0].drm_render_minor(), minors[1]);
    let hidden = kfd.hidden_gpus();
    assert_eq!(hidden.len(), 1);
    assert_eq!(hidden[0].gpu_id, Some(machine.gpus()[0].gpu_id));
    assert!(hidden[0].reason.contains("renderD"), "{:?}", hidden[0]);
    common::exercise(&kfd);
    close(kfd);
    // A later open that can reach both binds the other one too.
    let kfd = open(&sys).unwrap();
    assert_eq!(kfd.gpus().len(), 2);
    common::exercise(&kfd);
    close(kfd);
    assert_eq!(machine.process_counts(pid()), binding_only(2));
}

#[test]
fn a_multi_xcc_gpu_gets_queues_sized_for_every_xcc() {
    let (machine, sys) = machine(
        MachineConfig::mi300x()
            .with_compute_units(16)
            .with_vram(1 << 30),
    );
    let kfd = open(&sys).unwrap();
    let gpu = &kfd.gpus()[0];
    assert_eq!(gpu.gfx_version().processor_name(), "gfx942");
    let sizes = gpu.cwsr_sizes().unwrap();
    assert_eq!(sizes.xcc_count, 8);
    let sim = &machine.gpus()[0].queue_buffers;
    assert_eq!(sizes.total_size, u64::from(sim.cwsr_allocation()));
    common::exercise(&kfd);
    close(kfd);
    assert_eq!(machine.process_counts(pid()), binding_only(1));
}

#[test]
fn full_size_presets_work_end_to_end() {
    for config in [MachineConfig::mi210(), MachineConfig::mi300x()] {
        let (machine, sys) = machine(config);
        let kfd = open(&sys).unwrap();
        common::exercise(&kfd);
        close(kfd);
        assert_eq!(machine.process_counts(pid()), binding_only(1));
    }
}
