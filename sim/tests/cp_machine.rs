//! The command processor behind the simulated kernel driver, driven through raw ioctls as a
//! driver does it: queues from CREATE_QUEUE, packets written into GTT rings, doorbells stored
//! into the mmapped doorbell slice, signals whose mailboxes are event-page slots, and
//! completions seen through WAIT_EVENTS.

mod common;

use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use amdgpu_sim::cp::CommandProcessorEngine;
use amdgpu_sim::dispatch::{
    DispatchError, DispatchRequest, DispatchStats, InterruptSink, ShaderCore,
};
use amdgpu_sim::vm::GpuVm;
use aql::packet::dispatch_setup;
use aql::queue::queue_error;
use aql::{BarrierPacket, Header, KernelDispatchPacket, PacketType};
use common::{Bo, QueueBuffers, Session, small_config};
use kfd::abi::mmap_offset::split_doorbell_offset;
use kfd::abi::{EventData, EventType, WaitResult};
use kfd::ioctls;
use zerocopy::IntoBytes;

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

impl EventSignal {
    fn value(&self) -> i64 {
        word(self.handle + 8).load(Ordering::SeqCst) as i64
    }
    fn set(&self, value: i64) {
        word(self.handle + 8).store(value as u64, Ordering::SeqCst);
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
        word(handle).store(1, Ordering::SeqCst); // AMD_SIGNAL_KIND_USER
        word(handle + 8).store(value as u64, Ordering::SeqCst);
        word(handle + 0x10).store(
            self.event_page.va + 8 * u64::from(event.event_slot_index),
            Ordering::SeqCst,
        );
        store_u32(handle + 0x18, event.event_id, Ordering::SeqCst);
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
        let descriptor = buffers.pointers.va;
        let inactive = signals.signal(0);
        word(descriptor + 0x08).store(buffers.ring.va, Ordering::Relaxed);
        store_u32(descriptor + 0x18, slots as u32, Ordering::Relaxed);
        store_u32(descriptor + 0x88, 0x80, Ordering::Relaxed);
        word(descriptor + 0xC0).store(inactive.handle, Ordering::Release);
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
        word(self.buffers.pointers.va + 0x80).load(Ordering::SeqCst)
    }

    /// Reserve, write, publish, ring: the producer protocol of aql.md §1.6.
    fn submit(&self, packet: &[u8; 64]) -> u64 {
        let index = word(self.buffers.pointers.va + 0x38).fetch_add(1, Ordering::AcqRel);
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
        self.s.sys().notify_doorbell(self.doorbell, index);
        index
    }
}

fn bytes<T: IntoBytes + zerocopy::Immutable>(packet: &T) -> [u8; 64] {
    packet.as_bytes().try_into().expect("64-byte packet")
}

fn barrier_and(deps: [u64; 5], completion: u64) -> [u8; 64] {
    bytes(&BarrierPacket {
        header: Header::new(PacketType::BARRIER_AND)
            .with_acquire(aql::FenceScope::System)
            .with_release(aql::FenceScope::System)
            .0,
        dep_signal: deps,
        completion_signal: completion,
        ..BarrierPacket::default()
    })
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
fn a_dispatch_of_the_loaded_empty_kernel_reaches_the_shader_core_and_completes() {
    let shader = Arc::new(RecordingShader::default());
    let s = session(shader.clone());
    let mut signals = Signals::new(&s);
    let queue = IoctlQueue::new(&s, &mut signals);

    let code = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/kernels/bin/gfx90a/empty.co5"
    ))
    .expect("tests/kernels/bin/gfx90a/empty.co5");
    let code_object = amdgpu_loader::CodeObject::parse(&code).expect("parse");
    let image_bo = s.gtt(code_object.image_size().next_multiple_of(4096));
    // SAFETY: the BO is CPU-mapped read-write at its VA for its whole size.
    let image_memory =
        unsafe { std::slice::from_raw_parts_mut(image_bo.va as *mut u8, image_bo.size as usize) };
    let image = code_object
        .load(image_memory, image_bo.va, &amdgpu_loader::NoExternals)
        .expect("load");
    let kernel = image.kernel("empty").expect("the empty kernel");
    let kernarg = s.gtt(4096);

    let done = signals.signal(1);
    let packet = KernelDispatchPacket {
        header: Header::new(PacketType::KERNEL_DISPATCH)
            .with_barrier(true)
            .with_acquire(aql::FenceScope::System)
            .with_release(aql::FenceScope::System)
            .0,
        setup: dispatch_setup(1),
        workgroup_size_x: 64,
        workgroup_size_y: 1,
        workgroup_size_z: 1,
        grid_size_x: 64,
        grid_size_y: 1,
        grid_size_z: 1,
        group_segment_size: kernel.group_segment_size,
        private_segment_size: kernel.private_segment_size,
        kernel_object: kernel.descriptor_address,
        kernarg_address: kernarg.va,
        completion_signal: done.handle,
        ..KernelDispatchPacket::default()
    };
    let index = queue.submit(&bytes(&packet));
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
