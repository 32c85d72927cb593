//! The command processor behind the simulated kernel driver, driven through raw ioctls as a
//! driver does it: queues from CREATE_QUEUE, packets written into GTT rings, doorbells stored
//! into the mmapped doorbell slice, signals whose mailboxes are event-page slots, and
//! completions seen through WAIT_EVENTS. The kernels are the committed test kernels
//! (tests/kernels), loaded with amdgpu-loader and run by the machine's shader core.

mod common;

use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use amdgpu_loader::{CodeObject, HiddenArg, ImplicitArgs, NoExternals};
use amdgpu_sim::cp::CommandProcessorEngine;
use amdgpu_sim::dispatch::{
    DispatchError, DispatchRequest, DispatchStats, InterruptSink, ShaderCore,
};
use amdgpu_sim::vm::GpuVm;
use aql::packet::dispatch_setup;
use aql::queue::{
    AmdQueue, HsaQueue, READ_DISPATCH_ID_OFFSET, WRITE_DISPATCH_ID_OFFSET, queue_error,
};
use aql::{AmdSignal, BarrierPacket, FenceScope, Header, KernelDispatchPacket, PacketType};
use common::{Bo, QueueBuffers, Session, small_config};
use kfd::abi::mmap_offset::split_doorbell_offset;
use kfd::abi::{EventData, EventType, WaitResult};
use kfd::ioctl::calls as ioctls;
use zerocopy::{Immutable, IntoBytes};

/// WAIT_EVENTS timeout: a hang guard only.
const WAIT_MS: u32 = 60_000;

/// A session whose machine runs AQL queues on the command processor and kernels on `shader`.
fn session(shader: Arc<dyn ShaderCore>) -> Session {
    Session::new(
        small_config()
            .with_engine(Arc::new(CommandProcessorEngine::new()))
            .with_shader(shader),
    )
}

/// A session on a default small MI210: the command processor and the GFX9 shader core.
fn default_session() -> Session {
    Session::new(small_config())
}

/// Store a u32 into CPU-mapped device memory.
fn store_u32(va: u64, value: u32, order: Ordering) {
    // SAFETY: every address passed is inside a BO the test mapped for the CPU at its GPU
    // address and keeps alive, 4-byte aligned; the device side accesses it atomically.
    unsafe { AtomicU32::from_ptr(va as *mut u32) }.store(value, order);
}

fn word(va: u64) -> &'static AtomicU64 {
    // SAFETY: as in `store_u32`, 8-byte aligned; the machine (and so the BO) outlives every
    // use in a test.
    unsafe { AtomicU64::from_ptr(va as *mut u64) }
}

/// Signals carved out of one GTT page, each with its own SIGNAL event.
struct Signals<'a> {
    s: &'a Session,
    page: Bo,
    event_page: Bo,
    next: u64,
}

/// A signal and its event.
#[derive(Clone, Copy, Debug)]
struct EventSignal {
    handle: u64,
    event_id: u32,
}

/// Offset of `value` in `amd_signal_t`.
const SIGNAL_VALUE: u64 = std::mem::offset_of!(AmdSignal, value) as u64;

impl EventSignal {
    fn value(&self) -> i64 {
        word(self.handle + SIGNAL_VALUE).load(Ordering::SeqCst) as i64
    }
    fn set(&self, value: i64) {
        word(self.handle + SIGNAL_VALUE).store(value as u64, Ordering::SeqCst);
    }
}

impl<'a> Signals<'a> {
    fn new(s: &'a Session) -> Self {
        let (event_page, _first) = s.event_page();
        Self {
            s,
            page: s.gtt(4096),
            event_page,
            next: 0,
        }
    }

    /// A USER signal holding `value` whose mailbox is a fresh SIGNAL event's slot.
    fn signal(&mut self, value: i64) -> EventSignal {
        let event = self
            .s
            .create_event(EventType::SIGNAL, false)
            .expect("event");
        let handle = self.page.va + 64 * self.next;
        self.next += 1;
        let signal = AmdSignal {
            kind: 1, // AMD_SIGNAL_KIND_USER
            value,
            event_mailbox_ptr: self.event_page.va + 8 * u64::from(event.event_slot_index),
            event_id: event.event_id,
            ..AmdSignal::default()
        };
        write_bytes(handle, signal.as_bytes());
        EventSignal {
            handle,
            event_id: event.event_id,
        }
    }
}

/// WAIT_EVENTS on one event (the hang guard as timeout).
fn wait_event(s: &Session, event_id: u32) -> EventData {
    let mut data = [EventData::new(event_id)];
    let mut timeout = WAIT_MS;
    let result = ioctls::wait_events(s.sys(), s.kfd, &mut data, false, &mut timeout).unwrap();
    assert_eq!(result, WaitResult::COMPLETE, "event {event_id} fired");
    data[0]
}

/// An AQL queue made through CREATE_QUEUE, with amd_queue_t in its pointer page.
struct IoctlQueue<'a> {
    s: &'a Session,
    buffers: QueueBuffers,
    doorbell: NonNull<u64>,
    inactive: EventSignal,
    slots: u64,
}

impl<'a> IoctlQueue<'a> {
    fn new(s: &'a Session, signals: &mut Signals<'_>) -> Self {
        let buffers = s.queue_buffers(4096);
        let slots = buffers.ring.size / 64;
        for i in 0..slots {
            store_u32(buffers.ring.va + 64 * i, 1, Ordering::Relaxed); // INVALID
        }
        let inactive = signals.signal(0);
        let descriptor = AmdQueue {
            hsa_queue: HsaQueue {
                base_address: buffers.ring.va,
                size: slots as u32,
                ..HsaQueue::default()
            },
            read_dispatch_id_field_base_byte_offset: READ_DISPATCH_ID_OFFSET as u32,
            queue_inactive_signal: inactive.handle,
            ..AmdQueue::default()
        };
        // CREATE_QUEUE, which starts the processor, orders these stores before its reads.
        write_bytes(buffers.pointers.va, descriptor.as_bytes());
        let mut args = s.queue_args(&buffers);
        s.create_queue(&mut args).expect("CREATE_QUEUE");
        let (_, in_slice) = split_doorbell_offset(args.doorbell_offset);
        let doorbell = s.doorbells().cast::<u8>();
        // SAFETY: the slice mapping is 8 KiB and `in_slice` is a doorbell inside it.
        let doorbell = unsafe { doorbell.add(in_slice) }.cast::<u64>();
        Self {
            s,
            buffers,
            doorbell,
            inactive,
            slots,
        }
    }

    fn read_index(&self) -> u64 {
        word(self.buffers.pointers.va + READ_DISPATCH_ID_OFFSET as u64).load(Ordering::SeqCst)
    }

    /// Reserve, write, publish, ring: the producer protocol of aql.md §1.6.
    fn submit<P: IntoBytes + Immutable>(&self, packet: &P) -> u64 {
        let index = self.submit_silently(packet);
        self.s.sys().notify_doorbell(self.doorbell, index);
        index
    }

    /// [`IoctlQueue::submit`] as a program on hardware does it: the doorbell store is the
    /// only signal (what the LD_PRELOAD interposer's programs do).
    fn submit_silently<P: IntoBytes + Immutable>(&self, packet: &P) -> u64 {
        let packet: &[u8; 64] = packet.as_bytes().try_into().expect("a 64-byte packet");
        let index = word(self.buffers.pointers.va + WRITE_DISPATCH_ID_OFFSET as u64)
            .fetch_add(1, Ordering::AcqRel);
        assert!(index - self.read_index() < self.slots, "room in the ring");
        let slot = self.buffers.ring.va + 64 * (index % self.slots);
        for i in 1..8 {
            let bytes: [u8; 8] = packet[8 * i..8 * i + 8].try_into().unwrap();
            word(slot + 8 * i as u64).store(u64::from_le_bytes(bytes), Ordering::Relaxed);
        }
        store_u32(
            slot + 4,
            u32::from_le_bytes(packet[4..8].try_into().unwrap()),
            Ordering::Relaxed,
        );
        store_u32(
            slot,
            u32::from_le_bytes(packet[0..4].try_into().unwrap()),
            Ordering::Release,
        );
        // SAFETY: the doorbell is inside the live doorbell mapping.
        unsafe { self.doorbell.write_volatile(index) };
        index
    }
}

/// Copy `bytes` to CPU-mapped device memory at `va` before the device looks at it.
fn write_bytes(va: u64, bytes: &[u8]) {
    // SAFETY: every address passed is inside a BO the test mapped for the CPU at its GPU
    // address, with room for `bytes`, and no device engine reads it yet.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), va as *mut u8, bytes.len()) };
}

fn bo_bytes(bo: &Bo) -> &'static mut [u8] {
    // SAFETY: the BO is mapped read-write for the CPU at its VA for its whole size and lives as
    // long as the test's machine.
    unsafe { std::slice::from_raw_parts_mut(bo.va as *mut u8, bo.size as usize) }
}

/// A kernel loaded into a GTT BO, with what a dispatch needs.
struct LoadedKernel {
    descriptor: u64,
    group_segment_size: u32,
    private_segment_size: u32,
    /// (offset, size) of each explicit argument, in order.
    explicit: Vec<(u32, u32)>,
    implicit: Option<ImplicitArgs>,
}

/// Load `name` from `tests/kernels/bin/{path}`.
fn load_kernel(s: &Session, path: &str, name: &str) -> LoadedKernel {
    let code = std::fs::read(format!(
        "{}/../tests/kernels/bin/{path}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap_or_else(|e| panic!("tests/kernels/bin/{path}: {e}"));
    let code = CodeObject::parse(&code).expect("parse");
    let image_bo = s.gtt(code.image_size().next_multiple_of(4096));
    let image = code
        .load(bo_bytes(&image_bo), image_bo.va, &NoExternals)
        .expect("load");
    let kernel = image.kernel(name).expect("kernel");
    LoadedKernel {
        descriptor: kernel.descriptor_address,
        group_segment_size: kernel.group_segment_size,
        private_segment_size: kernel.private_segment_size,
        explicit: kernel.explicit_args().map(|a| (a.offset, a.size)).collect(),
        implicit: kernel.implicit_args,
    }
}

impl LoadedKernel {
    /// A kernarg segment with `explicit` argument values and the V5 hidden arguments of a
    /// 1-D grid of `groups` workgroups of `group` work-items.
    fn kernarg(&self, s: &Session, explicit: &[u64], groups: u32, group: u32) -> Bo {
        let kernarg = s.gtt(4096);
        let memory = bo_bytes(&kernarg);
        assert_eq!(explicit.len(), self.explicit.len(), "explicit arguments");
        for (&(offset, size), value) in self.explicit.iter().zip(explicit) {
            memory[offset as usize..][..size as usize]
                .copy_from_slice(&value.to_le_bytes()[..size as usize]);
        }
        if let Some(implicit) = self.implicit {
            for (kind, value) in [
                (HiddenArg::BlockCountX, u64::from(groups)),
                (HiddenArg::BlockCountY, 1),
                (HiddenArg::BlockCountZ, 1),
                (HiddenArg::GroupSizeX, u64::from(group)),
                (HiddenArg::GroupSizeY, 1),
                (HiddenArg::GroupSizeZ, 1),
                (HiddenArg::GridDims, 1),
            ] {
                if let (Some(offset), Some((_, size))) =
                    (implicit.offset_of(kind), implicit.layout.slot(kind))
                {
                    memory[offset as usize..][..size as usize]
                        .copy_from_slice(&value.to_le_bytes()[..size as usize]);
                }
            }
        }
        kernarg
    }

    /// A barrier-bit, system-scope dispatch of a 1-D grid.
    fn packet(
        &self,
        kernarg: &Bo,
        groups: u32,
        group: u16,
        completion: u64,
    ) -> KernelDispatchPacket {
        KernelDispatchPacket {
            header: Header::new(PacketType::KERNEL_DISPATCH)
                .with_barrier(true)
                .with_acquire(FenceScope::System)
                .with_release(FenceScope::System)
                .0,
            setup: dispatch_setup(1),
            workgroup_size_x: group,
            workgroup_size_y: 1,
            workgroup_size_z: 1,
            grid_size_x: groups * u32::from(group),
            grid_size_y: 1,
            grid_size_z: 1,
            group_segment_size: self.group_segment_size,
            private_segment_size: self.private_segment_size,
            kernel_object: self.descriptor,
            kernarg_address: kernarg.va,
            completion_signal: completion,
            ..KernelDispatchPacket::default()
        }
    }
}

fn barrier_and(deps: [u64; 5], completion: u64) -> BarrierPacket {
    BarrierPacket {
        header: Header::new(PacketType::BARRIER_AND)
            .with_acquire(FenceScope::System)
            .with_release(FenceScope::System)
            .0,
        dep_signal: deps,
        completion_signal: completion,
        ..BarrierPacket::default()
    }
}

/// A shader core that only records what it is asked to run.
#[derive(Default)]
struct RecordingShader {
    requests: std::sync::Mutex<Vec<DispatchRequest>>,
}

impl ShaderCore for RecordingShader {
    fn dispatch(
        &self,
        request: &DispatchRequest,
        _vm: &dyn GpuVm,
        _interrupts: &dyn InterruptSink,
        _abort: &std::sync::atomic::AtomicBool,
    ) -> Result<DispatchStats, DispatchError> {
        self.requests.lock().unwrap().push(*request);
        Ok(DispatchStats::default())
    }
}

#[test]
fn barrier_and_packets_chain_two_ioctl_queues_and_fire_their_events() {
    let s = session(Arc::new(RecordingShader::default()));
    let mut signals = Signals::new(&s);
    let first = IoctlQueue::new(&s, &mut signals);
    let second = IoctlQueue::new(&s, &mut signals);
    let host = signals.signal(1);
    let first_done = signals.signal(1);
    let second_done = signals.signal(1);

    // Queue 2 waits for queue 1, which waits for the host.
    second.submit(&barrier_and(
        [first_done.handle, 0, 0, 0, 0],
        second_done.handle,
    ));
    first.submit(&barrier_and([0, 0, host.handle, 0, 0], first_done.handle));
    let mut poll = [
        EventData::new(first_done.event_id),
        EventData::new(second_done.event_id),
    ];
    let mut timeout = 0;
    assert_eq!(
        ioctls::wait_events(s.sys(), s.kfd, &mut poll, false, &mut timeout).unwrap(),
        WaitResult::TIMEOUT,
        "nothing completes before the host signal"
    );
    assert_eq!((first.read_index(), second.read_index()), (0, 0));

    host.set(0);
    wait_event(&s, first_done.event_id);
    wait_event(&s, second_done.event_id);
    assert_eq!(first_done.value(), 0);
    assert_eq!(second_done.value(), 0);
    assert_eq!((first.read_index(), second.read_index()), (1, 1));
    assert_eq!(first.inactive.value(), 0);
}

#[test]
fn doorbell_stores_nobody_announces_are_found_by_polling_the_doorbells() {
    let shader = Arc::new(RecordingShader::default());
    let s = session(shader.clone());
    let mut signals = Signals::new(&s);
    let queue = IoctlQueue::new(&s, &mut signals);
    let kernel = load_kernel(&s, "gfx90a/empty.co5", "empty");
    let kernarg = kernel.kernarg(&s, &[], 1, 64);
    assert_eq!(
        s.machine.poll_doorbells(),
        0,
        "no doorbell was stored to yet"
    );

    for round in 0..3 {
        let done = signals.signal(1);
        // The first dispatch rings with index 0, the value a fresh doorbell page holds.
        let index = queue.submit_silently(&kernel.packet(&kernarg, 1, 64, done.handle));
        assert_eq!(index, round);
        assert_eq!(
            s.machine.poll_doorbells(),
            1,
            "round {round}: one queue woken"
        );
        wait_event(&s, done.event_id);
        assert_eq!(done.value(), 0);
        assert_eq!(queue.read_index(), round + 1);
        // The same value again is not news.
        assert_eq!(s.machine.poll_doorbells(), 0, "round {round}");
    }
    assert_eq!(shader.requests.lock().unwrap().len(), 3);
}

#[test]
fn a_dispatch_of_the_loaded_empty_kernel_reaches_the_shader_core_and_completes() {
    let shader = Arc::new(RecordingShader::default());
    let s = session(shader.clone());
    let mut signals = Signals::new(&s);
    let queue = IoctlQueue::new(&s, &mut signals);
    let kernel = load_kernel(&s, "gfx90a/empty.co5", "empty");
    let kernarg = kernel.kernarg(&s, &[], 1, 64);

    let done = signals.signal(1);
    let packet = kernel.packet(&kernarg, 1, 64, done.handle);
    let index = queue.submit(&packet);
    wait_event(&s, done.event_id);

    assert_eq!(done.value(), 0);
    assert_eq!(queue.read_index(), 1);
    let requests = shader.requests.lock().unwrap();
    assert_eq!(requests.len(), 1);
    let request = requests[0];
    assert_eq!(request.packet, packet);
    assert_eq!(request.dispatch_id, index);
    assert_eq!(request.packet_va, queue.buffers.ring.va);
    assert_eq!(request.queue_va, queue.buffers.pointers.va);
    assert_eq!(request.target, amdgpu_sim::target::GfxTarget::Gfx90a);
}

#[test]
fn a_gpu_memory_fault_sets_the_memory_event_and_the_queue_error() {
    let s = session(Arc::new(RecordingShader::default()));
    let mut signals = Signals::new(&s);
    let memory_event = s.create_event(EventType::MEMORY, false).unwrap();
    let queue = IoctlQueue::new(&s, &mut signals);
    // A completion signal in a page that is not mapped on the GPU.
    let hole = s.reserve_va(4096);

    queue.submit(&barrier_and([0; 5], hole + 0x40));
    let data = wait_event(&s, memory_event.event_id);
    let exception = data.memory_exception();
    assert_eq!(exception.va, hole, "the faulting page");
    assert_eq!(exception.gpu_id, s.gpu_id);
    assert_eq!(exception.failure.not_present, 1);
    wait_event(&s, queue.inactive.event_id);
    assert_eq!(queue.inactive.value(), queue_error::MEMORY_VIOLATION);
}

#[test]
fn the_empty_kernel_runs_and_its_completion_fires_the_event() {
    for (config, path) in [
        (small_config(), "gfx90a/empty.co4"),
        (small_config(), "gfx90a/empty.co5"),
        (small_config(), "gfx90a/empty.co6"),
        (
            amdgpu_sim::MachineConfig::mi300x()
                .with_compute_units(8)
                .with_vram(1 << 30),
            "gfx942/empty.co5",
        ),
    ] {
        let s = Session::new(config);
        let mut signals = Signals::new(&s);
        let queue = IoctlQueue::new(&s, &mut signals);
        let kernel = load_kernel(&s, path, "empty");
        let kernarg = kernel.kernarg(&s, &[], 4, 64);
        let done = signals.signal(1);

        queue.submit(&kernel.packet(&kernarg, 4, 64, done.handle));
        wait_event(&s, done.event_id);

        assert_eq!(done.value(), 0, "{path}: completion signal");
        assert_eq!(queue.read_index(), 1, "{path}: read index");
        assert_eq!(queue.inactive.value(), 0, "{path}: no queue error");
    }
}

#[test]
fn barrier_and_orders_kernels_on_two_queues() {
    const N: u32 = 256;
    let s = default_session();
    let mut signals = Signals::new(&s);
    let producer = IoctlQueue::new(&s, &mut signals);
    let consumer = IoctlQueue::new(&s, &mut signals);
    let kernel = load_kernel(&s, "gfx90a/vector_add.co5", "vector_add");
    let (lhs, rhs, sum, twice) = (s.vram(4096), s.vram(4096), s.vram(4096), s.vram(4096));
    for i in 0..N as usize {
        bo_bytes(&lhs)[4 * i..][..4].copy_from_slice(&(i as i32).to_le_bytes());
        bo_bytes(&rhs)[4 * i..][..4].copy_from_slice(&(1000 - 2 * i as i32).to_le_bytes());
    }
    let host = signals.signal(1);
    let produced = signals.signal(1);
    let consumed = signals.signal(1);
    let groups = N / 64;

    // The consumer queue: wait for the producer's kernel, then twice = sum + sum.
    consumer.submit(&barrier_and([produced.handle, 0, 0, 0, 0], 0));
    let doubled = kernel.kernarg(&s, &[sum.va, sum.va, twice.va, u64::from(N)], groups, 64);
    consumer.submit(&kernel.packet(&doubled, groups, 64, consumed.handle));
    // The producer queue: wait for the host, then sum = lhs + rhs.
    producer.submit(&barrier_and([host.handle, 0, 0, 0, 0], 0));
    let summed = kernel.kernarg(&s, &[lhs.va, rhs.va, sum.va, u64::from(N)], groups, 64);
    producer.submit(&kernel.packet(&summed, groups, 64, produced.handle));

    let mut poll = [EventData::new(consumed.event_id)];
    let mut timeout = 0;
    assert_eq!(
        ioctls::wait_events(s.sys(), s.kfd, &mut poll, false, &mut timeout).unwrap(),
        WaitResult::TIMEOUT
    );
    host.set(0);
    wait_event(&s, consumed.event_id);
    assert_eq!(produced.value(), 0);
    for i in 0..N as usize {
        let got = i32::from_le_bytes(bo_bytes(&twice)[4 * i..][..4].try_into().unwrap());
        assert_eq!(
            got,
            2 * (1000 - i as i32),
            "twice[{i}]: the consumer saw the producer's sum"
        );
    }
}

#[test]
fn a_faulting_kernel_raises_the_memory_exception() {
    let s = default_session();
    let mut signals = Signals::new(&s);
    let memory_event = s.create_event(EventType::MEMORY, false).unwrap();
    let queue = IoctlQueue::new(&s, &mut signals);
    let kernel = load_kernel(&s, "gfx90a/oob_store.co5", "oob_store");
    // Reserved address space that no BO is mapped at on the GPU.
    let hole = s.reserve_va(1 << 20) + 0x3000;
    let kernarg = kernel.kernarg(&s, &[hole, 5], 1, 64);
    let done = signals.signal(1);
    let after = signals.signal(1);

    queue.submit(&kernel.packet(&kernarg, 1, 64, done.handle));
    queue.submit(&barrier_and([0; 5], after.handle));
    let exception = wait_event(&s, memory_event.event_id).memory_exception();

    assert_eq!(exception.va, hole, "the faulting page");
    assert_eq!(exception.gpu_id, s.gpu_id);
    assert_eq!(exception.failure.not_present, 1);
    wait_event(&s, queue.inactive.event_id);
    assert_eq!(queue.inactive.value(), queue_error::MEMORY_VIOLATION);
    assert_eq!(done.value(), 1, "a faulted dispatch does not complete");
    assert_eq!(after.value(), 1, "and the queue processes nothing more");
    assert_eq!(queue.read_index(), 0);
}

#[test]
fn an_illegal_instruction_halts_the_queue_with_its_code() {
    let s = default_session();
    let mut signals = Signals::new(&s);
    let queue = IoctlQueue::new(&s, &mut signals);
    let kernel = load_kernel(&s, "gfx90a/illegal_insn.co5", "illegal_insn");
    let out = s.gtt(4096);
    let kernarg = kernel.kernarg(&s, &[out.va], 1, 1);
    let done = signals.signal(1);

    queue.submit(&kernel.packet(&kernarg, 1, 1, done.handle));
    wait_event(&s, queue.inactive.event_id);
    assert_eq!(queue.inactive.value(), queue_error::ILLEGAL_INSTRUCTION);
    assert_eq!(done.value(), 1);
    let out_words = bo_bytes(&out);
    assert_eq!(
        &out_words[..4],
        &0x1111_1111u32.to_le_bytes(),
        "ran up to the instruction"
    );
    assert_eq!(&out_words[4..8], &[0; 4], "and stopped there");
}
