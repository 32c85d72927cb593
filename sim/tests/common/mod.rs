//! Helpers for driving a simulated machine through raw ioctls, as a driver would.
#![allow(dead_code)]

use std::num::NonZeroUsize;
use std::os::fd::RawFd;
use std::path::Path;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

use amdgpu_sim::queue::{QueueEngine, QueueSpec, RunningQueue};
use amdgpu_sim::{Machine, MachineConfig};
use kfd::Errno;
use kfd::abi::mmap_offset::{self, MmapType};
use kfd::abi::{
    AllocFlags, AllocMemoryOfGpuArgs, CreateEventArgs, CreateQueueArgs, EventType, QueueType,
};
use kfd::ioctl::calls as ioctls;
use kfd::ioctl::requests as req;
use kfd::ioctl::{Ioctl, IoctlError, call_unchecked};
use kfd::sys::{MapFlags, OFlag, ProtFlags, Sys};

pub const PAGE: u64 = 4096;

/// A small MI210: 8 CUs (small CWSR areas), 1 GiB of VRAM.
pub fn small_config() -> MachineConfig {
    MachineConfig::mi210()
        .with_compute_units(8)
        .with_vram(1 << 30)
}

/// Issue `I` with `args`; the errno on failure.
pub fn ioctl<I: Ioctl>(sys: &dyn Sys, fd: RawFd, args: &mut I::Arg) -> Result<(), Errno> {
    // SAFETY: every pointer the tests put into argument structs points at live test memory
    // (or is deliberately bad, which the simulated kernel answers with EFAULT without touching
    // it); GPU addresses name BOs the tests keep alive until the machine is dropped.
    unsafe { call_unchecked::<I>(sys, fd, args) }.map_err(|e: IoctlError| e.errno)
}

/// One process' view of one GPU of a machine: kfd fd, acquired render fd.
pub struct Session {
    pub machine: Machine,
    pub kfd: RawFd,
    pub render: RawFd,
    pub gpu_id: u32,
    pub gpu_ids: Vec<u32>,
}

pub fn open_kfd(machine: &Machine) -> RawFd {
    machine
        .open(Path::new("/dev/kfd"), OFlag::O_RDWR | OFlag::O_CLOEXEC)
        .expect("open /dev/kfd")
}

pub fn open_render(machine: &Machine, minor: u32) -> RawFd {
    machine
        .open(
            Path::new(&format!("/dev/dri/renderD{minor}")),
            OFlag::O_RDWR | OFlag::O_CLOEXEC,
        )
        .expect("open render node")
}

impl Session {
    /// A machine from `config`, with `/dev/kfd` open and every GPU's VM acquired; the session's
    /// GPU is the first.
    pub fn new(config: MachineConfig) -> Self {
        let machine = Machine::new(config).expect("machine");
        let kfd = open_kfd(&machine);
        let gpus = machine.gpus();
        let mut render = -1;
        for gpu in &gpus {
            let fd = open_render(&machine, gpu.render_minor);
            ioctls::acquire_vm(&machine, kfd, fd, gpu.gpu_id).expect("acquire vm");
            if render < 0 {
                render = fd;
            }
        }
        Self {
            gpu_id: gpus[0].gpu_id,
            gpu_ids: gpus.iter().map(|g| g.gpu_id).collect(),
            machine,
            kfd,
            render,
        }
    }

    pub fn small() -> Self {
        Self::new(small_config())
    }

    pub fn sys(&self) -> &dyn Sys {
        &self.machine
    }

    /// Reserve `size` bytes of address space (PROT_NONE), aligned to `size` up to 2 MiB.
    pub fn reserve_va(&self, size: u64) -> u64 {
        let align = size.next_power_of_two().clamp(PAGE, 2 << 20);
        let len = NonZeroUsize::new((size + align) as usize).unwrap();
        // SAFETY: a fresh anonymous mapping without MAP_FIXED replaces nothing.
        let ptr = unsafe {
            self.sys().mmap(
                None,
                len,
                ProtFlags::PROT_NONE,
                MapFlags::MAP_PRIVATE | MapFlags::MAP_ANONYMOUS | MapFlags::MAP_NORESERVE,
                None,
                0,
            )
        }
        .expect("reserve va");
        (ptr.as_ptr() as u64).next_multiple_of(align)
    }

    /// ALLOC_MEMORY_OF_GPU at a fresh VA on the session's GPU.
    pub fn alloc(&self, flags: AllocFlags, size: u64) -> Result<Bo, Errno> {
        self.alloc_on(self.gpu_id, flags, size)
    }

    pub fn alloc_on(&self, gpu_id: u32, flags: AllocFlags, size: u64) -> Result<Bo, Errno> {
        let va = self.reserve_va(size.max(PAGE));
        let mut args = AllocMemoryOfGpuArgs {
            va_addr: va,
            size,
            gpu_id,
            flags: flags.bits(),
            ..AllocMemoryOfGpuArgs::default()
        };
        ioctl::<req::AllocMemoryOfGpu>(self.sys(), self.kfd, &mut args)?;
        Ok(Bo {
            va,
            size: size.next_multiple_of(PAGE),
            handle: args.handle,
            mmap_offset: args.mmap_offset,
        })
    }

    /// Map `bo` for the CPU at its VA through the render node.
    pub fn cpu_map(&self, bo: &Bo) -> Result<(), Errno> {
        // SAFETY: the range is the PROT_NONE reservation made for this BO, owned by the test.
        let ptr = unsafe {
            self.sys().mmap(
                NonZeroUsize::new(bo.va as usize),
                NonZeroUsize::new(bo.size as usize).unwrap(),
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_SHARED | MapFlags::MAP_FIXED,
                Some(self.render),
                bo.mmap_offset,
            )
        }?;
        assert_eq!(ptr.as_ptr() as u64, bo.va);
        Ok(())
    }

    pub fn map_gpu(&self, bo: &Bo, gpu_ids: &[u32]) -> Result<u32, (Errno, u32)> {
        let mut done = 0;
        ioctls::map_memory_to_gpu(self.sys(), self.kfd, bo.handle, gpu_ids, &mut done)
            .map(|()| done)
            .map_err(|e| (e.errno, done))
    }

    pub fn unmap_gpu(&self, bo: &Bo, gpu_ids: &[u32]) -> Result<u32, (Errno, u32)> {
        let mut done = 0;
        ioctls::unmap_memory_from_gpu(self.sys(), self.kfd, bo.handle, gpu_ids, &mut done)
            .map(|()| done)
            .map_err(|e| (e.errno, done))
    }

    /// A GTT BO, CPU-mapped at its VA and GPU-mapped on the session's GPU.
    pub fn gtt(&self, size: u64) -> Bo {
        let flags = AllocFlags::GTT
            | AllocFlags::WRITABLE
            | AllocFlags::EXECUTABLE
            | AllocFlags::COHERENT
            | AllocFlags::UNCACHED
            | AllocFlags::NO_SUBSTITUTE;
        let bo = self.alloc(flags, size).expect("alloc gtt");
        self.cpu_map(&bo).expect("cpu map");
        self.map_gpu(&bo, &[self.gpu_id]).expect("gpu map");
        bo
    }

    /// A VRAM BO mapped on the session's GPU (and for the CPU).
    pub fn vram(&self, size: u64) -> Bo {
        let bo = self
            .alloc(
                AllocFlags::VRAM | AllocFlags::WRITABLE | AllocFlags::PUBLIC,
                size,
            )
            .expect("alloc vram");
        self.cpu_map(&bo).expect("cpu map");
        self.map_gpu(&bo, &[self.gpu_id]).expect("gpu map");
        bo
    }

    pub fn free(&self, bo: &Bo) -> Result<(), Errno> {
        ioctls::free_memory_of_gpu(self.sys(), self.kfd, bo.handle).map_err(|e| e.errno)
    }

    /// A 32 KiB event page BO, handed to the kernel with a first signal event.
    pub fn event_page(&self) -> (Bo, CreateEventArgs) {
        let page = self.gtt(32 << 10);
        let mut args = CreateEventArgs {
            event_page_offset: page.handle,
            event_type: EventType::SIGNAL.0,
            auto_reset: 1,
            ..CreateEventArgs::default()
        };
        ioctls::create_event(self.sys(), self.kfd, &mut args).expect("first event");
        (page, args)
    }

    pub fn create_event(
        &self,
        kind: EventType,
        auto_reset: bool,
    ) -> Result<CreateEventArgs, Errno> {
        let mut args = CreateEventArgs {
            event_type: kind.0,
            auto_reset: u32::from(auto_reset),
            ..CreateEventArgs::default()
        };
        ioctls::create_event(self.sys(), self.kfd, &mut args).map_err(|e| e.errno)?;
        Ok(args)
    }

    /// The buffers of one AQL queue: ring, the page holding rptr/wptr, EOP, CWSR.
    pub fn queue_buffers(&self, ring_size: u64) -> QueueBuffers {
        let gpu = self
            .machine
            .gpus()
            .into_iter()
            .find(|g| g.gpu_id == self.gpu_id)
            .unwrap();
        let sizes = gpu.queue_buffers;
        QueueBuffers {
            ring: self.gtt(ring_size),
            pointers: self.gtt(PAGE),
            eop: self.vram(u64::from(sizes.eop_buffer_size)),
            cwsr: self.gtt(u64::from(sizes.cwsr_allocation())),
            ctl_stack_size: sizes.ctl_stack_size,
            cwsr_size: sizes.cwsr_size,
            eop_size: u64::from(sizes.eop_buffer_size),
        }
    }

    /// CREATE_QUEUE arguments for an AQL queue on `buffers` (rptr at +0x80, wptr at +0x38, as
    /// in `amd_queue_t`).
    pub fn queue_args(&self, b: &QueueBuffers) -> CreateQueueArgs {
        CreateQueueArgs {
            ring_base_address: b.ring.va,
            write_pointer_address: b.pointers.va + 0x38,
            read_pointer_address: b.pointers.va + 0x80,
            ring_size: b.ring.size as u32,
            gpu_id: self.gpu_id,
            queue_type: QueueType::COMPUTE_AQL.0,
            queue_percentage: 100,
            queue_priority: 7,
            eop_buffer_address: b.eop.va,
            eop_buffer_size: b.eop_size,
            ctx_save_restore_address: b.cwsr.va,
            ctx_save_restore_size: b.cwsr_size,
            ctl_stack_size: b.ctl_stack_size,
            ..CreateQueueArgs::default()
        }
    }

    pub fn create_queue(&self, args: &mut CreateQueueArgs) -> Result<(), Errno> {
        ioctl::<req::CreateQueue>(self.sys(), self.kfd, args)
    }

    /// mmap `/dev/kfd` at `offset` for `len` bytes.
    pub fn kfd_mmap(&self, offset: u64, len: usize) -> Result<NonNull<std::ffi::c_void>, Errno> {
        // SAFETY: a fresh mapping without MAP_FIXED replaces nothing.
        unsafe {
            self.sys().mmap(
                None,
                NonZeroUsize::new(len).unwrap(),
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_SHARED,
                Some(self.kfd),
                offset,
            )
        }
    }

    /// The doorbell slice of the session's GPU, mapped.
    pub fn doorbells(&self) -> NonNull<std::ffi::c_void> {
        self.kfd_mmap(
            mmap_offset::encode(MmapType::Doorbell, self.gpu_id, 0),
            mmap_offset::DOORBELL_SLICE_SIZE,
        )
        .expect("doorbell mmap")
    }
}

/// A BO the test allocated.
#[derive(Clone, Copy, Debug)]
pub struct Bo {
    pub va: u64,
    pub size: u64,
    pub handle: u64,
    pub mmap_offset: u64,
}

impl Bo {
    /// The u64 at byte `offset` of the BO's CPU mapping.
    pub fn word(&self, offset: u64) -> &std::sync::atomic::AtomicU64 {
        assert!(offset + 8 <= self.size && offset % 8 == 0);
        // SAFETY: the BO is CPU-mapped read-write at `va` for the rest of the test (the machine
        // keeps it alive), and the offset is inside it and 8-aligned.
        unsafe { &*((self.va + offset) as *const std::sync::atomic::AtomicU64) }
    }
}

pub struct QueueBuffers {
    pub ring: Bo,
    pub pointers: Bo,
    pub eop: Bo,
    pub cwsr: Bo,
    pub ctl_stack_size: u32,
    pub cwsr_size: u32,
    pub eop_size: u64,
}

/// What a [`RecordingEngine`] saw of one queue.
#[derive(Debug, Default)]
pub struct QueueRecord {
    pub spec: Option<QueueSpecSummary>,
    pub doorbells: Vec<u64>,
    pub updates: Vec<(u64, u64, u32, u32)>,
    pub stopped: bool,
}

/// The plain fields of a [`QueueSpec`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueSpecSummary {
    pub queue_id: u32,
    pub gpu_id: u32,
    pub ring_va: u64,
    pub ring_bytes: u64,
    pub read_pointer_va: u64,
    pub write_pointer_va: u64,
    pub doorbell: usize,
    pub percentage: u32,
    pub priority: u32,
}

/// A queue engine that runs nothing and records what the driver model asked of it.
#[derive(Default)]
pub struct RecordingEngine {
    pub queues: Mutex<Vec<Arc<Mutex<QueueRecord>>>>,
    pub specs: Mutex<Vec<QueueSpec>>,
}

struct RecordingQueue(Arc<Mutex<QueueRecord>>);

impl RunningQueue for RecordingQueue {
    fn doorbell_rung(&self, value: u64) {
        self.0.lock().unwrap().doorbells.push(value);
    }
    fn update(&self, ring_va: u64, ring_bytes: u64, percentage: u32, priority: u32) {
        self.0
            .lock()
            .unwrap()
            .updates
            .push((ring_va, ring_bytes, percentage, priority));
    }
    fn stop(&self) {
        self.0.lock().unwrap().stopped = true;
    }
}

impl QueueEngine for RecordingEngine {
    fn start(&self, spec: QueueSpec) -> Box<dyn RunningQueue> {
        let record = Arc::new(Mutex::new(QueueRecord {
            spec: Some(QueueSpecSummary {
                queue_id: spec.queue_id,
                gpu_id: spec.gpu_id,
                ring_va: spec.ring_va,
                ring_bytes: spec.ring_bytes,
                read_pointer_va: spec.read_pointer_va,
                write_pointer_va: spec.write_pointer_va,
                doorbell: spec.doorbell.as_ptr() as usize,
                percentage: spec.percentage,
                priority: spec.priority,
            }),
            ..QueueRecord::default()
        }));
        self.queues.lock().unwrap().push(record.clone());
        self.specs.lock().unwrap().push(spec);
        Box::new(RecordingQueue(record))
    }
}

/// A session whose machine records queue activity.
pub fn recording_session() -> (Session, Arc<RecordingEngine>) {
    let engine = Arc::new(RecordingEngine::default());
    let session = Session::new(small_config().with_engine(engine.clone()));
    (session, engine)
}
