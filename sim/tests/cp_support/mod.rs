//! Test bench for the command processor in isolation: a GPU VM over host memory the test
//! allocates, a fake shader core that records and misbehaves on request, a recording interrupt
//! sink, and an AQL queue built the way ROCr builds one (amd_queue_t in its own page, a ring,
//! a doorbell, a queue_inactive_signal).

#![allow(dead_code)] // Each test file uses a different part of the bench.

use std::collections::HashMap;
use std::mem::offset_of;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use amdgpu_sim::cp::CommandProcessorEngine;
use amdgpu_sim::dispatch::{
    DispatchError, DispatchRequest, DispatchStats, InterruptSink, ShaderCore,
};
use amdgpu_sim::host_vm::{HostBuffer, HostVm};
use amdgpu_sim::queue::{QueueEngine, QueueSpec, RunningQueue};
use amdgpu_sim::target::GfxTarget;
use amdgpu_sim::vm::{Access, GpuVm, HostSpan, MemoryFault};
use aql::packet::dispatch_setup;
use aql::queue::{AmdQueue, HsaQueue};
use aql::{
    AmdFormat, AmdSignal, BarrierPacket, BarrierValuePacket, Header, KernelDispatchPacket,
    PacketType, RawPacket,
};
use zerocopy::IntoBytes;

/// How long any wait in a test may take before it is declared hung (a hang guard only: the
/// machine may be loaded).
pub const HANG_GUARD: Duration = Duration::from_secs(60);

/// Wait until the processor of `running` has looked at its queue again after this call and
/// gone to sleep having found nothing it can do: whatever it would do about the state as of
/// the call, it has done. Checks that something did *not* happen come after this, so they
/// cannot pass merely because the processor has not looked yet.
pub fn settle(running: &dyn RunningQueue) {
    let before = running
        .progress()
        .expect("the CP engine counts its looks")
        .looks;
    wait_for("the CP to look again and wait", || {
        running.progress().is_some_and(|p| {
            p.asleep_after_look
                .is_some_and(|look| look > before || p.asleep_until_event)
        })
    });
}

/// Poll `condition` until it holds; panics after [`HANG_GUARD`].
pub fn wait_for(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + HANG_GUARD;
    while !condition() {
        assert!(Instant::now() < deadline, "hung waiting for {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The bench's device memory: the simulator's [`HostVm`] (GPU address = host address) with
/// typed atomic accessors by GPU address.
#[derive(Default)]
pub struct DeviceVm {
    vm: HostVm,
    /// Buffers unmapped by tests. They are held for the bench's life so that their addresses
    /// stay unmapped: freed memory could otherwise be handed to the next allocation (of this
    /// test or of another test thread), and an access meant to fault would hit it.
    unmapped: Mutex<Vec<HostBuffer>>,
}

impl DeviceVm {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Map `bytes` writable bytes, page aligned.
    pub fn alloc(&self, bytes: usize) -> u64 {
        self.alloc_with(bytes, true)
    }

    pub fn alloc_with(&self, bytes: usize, writable: bool) -> u64 {
        self.vm.map(bytes, 4096, writable, true).va()
    }

    /// Unmap the buffer at `va`; the address stays unmapped for the rest of the test.
    pub fn unmap(&self, va: u64) {
        let buffer = self.vm.unmap(va).expect("unmapping a mapped buffer");
        self.unmapped.lock().unwrap().push(buffer);
    }

    fn at(&self, va: u64) -> (HostBuffer, usize) {
        self.vm
            .buffer_at(va)
            .unwrap_or_else(|| panic!("test touched unmapped {va:#x}"))
    }

    pub fn load_u64(&self, va: u64) -> u64 {
        let (buffer, at) = self.at(va);
        buffer.atomic_u64(at).load(Ordering::SeqCst)
    }

    pub fn store_u64(&self, va: u64, value: u64) {
        let (buffer, at) = self.at(va);
        buffer.atomic_u64(at).store(value, Ordering::SeqCst);
    }

    pub fn fetch_add_u64(&self, va: u64, value: u64) -> u64 {
        let (buffer, at) = self.at(va);
        buffer.atomic_u64(at).fetch_add(value, Ordering::AcqRel)
    }

    pub fn load_u32(&self, va: u64) -> u32 {
        let (buffer, at) = self.at(va);
        buffer.atomic_u32(at).load(Ordering::SeqCst)
    }

    pub fn store_u32(&self, va: u64, value: u32) {
        let (buffer, at) = self.at(va);
        buffer.atomic_u32(at).store(value, Ordering::SeqCst);
    }

    pub fn store_u32_release(&self, va: u64, value: u32) {
        let (buffer, at) = self.at(va);
        buffer.atomic_u32(at).store(value, Ordering::Release);
    }

    pub fn load_i64(&self, va: u64) -> i64 {
        self.load_u64(va) as i64
    }

    pub fn store_i64(&self, va: u64, value: i64) {
        self.store_u64(va, value as u64);
    }

    /// Copy `bytes` to `va` (relaxed byte stores), for structures no engine reads yet.
    pub fn write(&self, va: u64, bytes: &[u8]) {
        let (buffer, at) = self.at(va);
        buffer.write(at, bytes);
    }

    /// Write the words of a packet body (bytes 4..64) with plain-order atomic stores.
    pub fn write_body(&self, va: u64, packet: &RawPacket) {
        self.store_u32(va + 4, (packet.0[0] >> 32) as u32);
        let (buffer, at) = self.at(va);
        for i in 1..8 {
            buffer
                .atomic_u64(at + 8 * i)
                .store(packet.0[i], Ordering::Relaxed);
        }
    }
}

impl GpuVm for DeviceVm {
    fn translate(&self, va: u64, len: u64, access: Access) -> Result<HostSpan, MemoryFault> {
        self.vm.translate(va, len, access)
    }

    fn generation(&self) -> u64 {
        self.vm.generation()
    }
}

/// An interrupt the sink received.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interrupt {
    EndOfPipe(u32),
    ShaderMessage(u32),
    VmFault(MemoryFault),
}

/// Records interrupts.
#[derive(Default)]
pub struct RecordingSink {
    log: Mutex<Vec<Interrupt>>,
}

impl RecordingSink {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    pub fn log(&self) -> Vec<Interrupt> {
        self.log.lock().unwrap().clone()
    }

    pub fn count(&self, interrupt: Interrupt) -> usize {
        self.log().iter().filter(|&&i| i == interrupt).count()
    }

    pub fn wait_for(&self, interrupt: Interrupt) {
        self.wait_for_match(&format!("{interrupt:?}"), |&i| i == interrupt);
    }

    /// Wait until an interrupt for which `matches` holds has arrived, and return it. The CP
    /// raises a fault's interrupt after it posts the queue error, so a test that has seen the
    /// error must still wait for the interrupt.
    pub fn wait_for_match(&self, what: &str, matches: impl Fn(&Interrupt) -> bool) -> Interrupt {
        let mut found = None;
        wait_for(what, || {
            found = self.log().into_iter().find(|i| matches(i));
            found.is_some()
        });
        found.expect("found")
    }

    fn push(&self, interrupt: Interrupt) {
        self.log.lock().unwrap().push(interrupt);
    }
}

impl InterruptSink for RecordingSink {
    fn end_of_pipe(&self, context_id: u32) {
        self.push(Interrupt::EndOfPipe(context_id));
    }
    fn shader_message(&self, context_id: u32) {
        self.push(Interrupt::ShaderMessage(context_id));
    }
    fn vm_fault(&self, fault: MemoryFault) {
        self.push(Interrupt::VmFault(fault));
    }
}

/// What the fake shader core does with a kernel object.
#[derive(Clone, Debug)]
pub enum Behaviour {
    /// Complete at once.
    Complete,
    /// Store `value` at `va` through the VM, then complete.
    Store { va: u64, value: u64 },
    /// Fault at `va`.
    Fault { va: u64 },
    /// Run until aborted.
    Hang,
    /// Block until the gate opens (or abort).
    Gate(Arc<Gate>),
    /// Report an illegal instruction.
    Illegal,
    /// Report a trap.
    Trap,
    /// Report an unusable kernel descriptor.
    InvalidCode,
}

/// A gate a fake kernel waits at.
#[derive(Default)]
pub struct Gate {
    open: Mutex<bool>,
    changed: Condvar,
    arrived: AtomicUsize,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Gate")
    }
}

impl Gate {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }
    pub fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.changed.notify_all();
    }
    /// How many kernels reached the gate.
    pub fn arrived(&self) -> usize {
        self.arrived.load(Ordering::SeqCst)
    }
    fn pass(&self, abort: &AtomicBool) -> bool {
        self.arrived.fetch_add(1, Ordering::SeqCst);
        let mut open = self.open.lock().unwrap();
        while !*open {
            if abort.load(Ordering::SeqCst) {
                return false;
            }
            open = self
                .changed
                .wait_timeout(open, Duration::from_millis(1))
                .unwrap()
                .0;
        }
        true
    }
}

/// One dispatch the fake shader core received.
#[derive(Clone, Debug)]
pub struct Launch {
    pub request: DispatchRequest,
    /// The fake core's event counter when the dispatch started and ended.
    pub started: u64,
    pub ended: u64,
    /// The packet's first word as the kernel would read it through its dispatch pointer.
    pub header_seen: u32,
    /// Whether the dispatch was aborted.
    pub aborted: bool,
}

/// A shader core that records dispatches and behaves as told per kernel object.
#[derive(Default)]
pub struct FakeShader {
    behaviours: Mutex<HashMap<u64, Behaviour>>,
    launches: Mutex<Vec<Launch>>,
    clock: AtomicU64,
    active: AtomicUsize,
    max_active: AtomicUsize,
}

impl FakeShader {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    pub fn set(&self, kernel_object: u64, behaviour: Behaviour) {
        self.behaviours
            .lock()
            .unwrap()
            .insert(kernel_object, behaviour);
    }

    pub fn launches(&self) -> Vec<Launch> {
        self.launches.lock().unwrap().clone()
    }

    pub fn launch_count(&self) -> usize {
        self.launches.lock().unwrap().len()
    }

    /// The most dispatches that ever ran at once.
    pub fn max_active(&self) -> usize {
        self.max_active.load(Ordering::SeqCst)
    }

    fn tick(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::SeqCst)
    }
}

impl ShaderCore for FakeShader {
    fn dispatch(
        &self,
        request: &DispatchRequest,
        vm: &dyn GpuVm,
        _interrupts: &dyn InterruptSink,
        abort: &AtomicBool,
    ) -> Result<DispatchStats, DispatchError> {
        let started = self.tick();
        let active = self.active.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_active.fetch_max(active, Ordering::SeqCst);
        // Read the packet through the dispatch pointer, as kernel code may.
        let span = vm
            .translate(request.packet_va, 64, Access::Read)
            .expect("dispatch pointer is mapped");
        // SAFETY: the span covers the 64-byte packet, ring slots are 64-byte aligned, and the
        // ring is only accessed atomically.
        let header_seen =
            unsafe { AtomicU32::from_ptr(span.host_address(request.packet_va).cast()) }
                .load(Ordering::SeqCst);
        let behaviour = self
            .behaviours
            .lock()
            .unwrap()
            .get(&request.packet.kernel_object)
            .cloned()
            .unwrap_or(Behaviour::Complete);
        let mut aborted = false;
        let result = match behaviour {
            Behaviour::Complete => Ok(DispatchStats::default()),
            Behaviour::Store { va, value } => match vm.translate(va, 8, Access::Write) {
                Ok(span) => {
                    // SAFETY: the span covers 8 writable bytes at va, which the test aligned.
                    unsafe { AtomicU64::from_ptr(span.host_address(va).cast()) }
                        .store(value, Ordering::SeqCst);
                    Ok(DispatchStats::default())
                }
                Err(fault) => Err(DispatchError::MemoryFault(fault)),
            },
            Behaviour::Fault { va } => Err(vm
                .translate(va, 4, Access::Write)
                .map(|_| panic!("fault address {va:#x} is mapped"))
                .unwrap_err()
                .into()),
            Behaviour::Hang => {
                while !abort.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                aborted = true;
                Err(DispatchError::Aborted)
            }
            Behaviour::Gate(gate) => {
                if gate.pass(abort) {
                    Ok(DispatchStats::default())
                } else {
                    aborted = true;
                    Err(DispatchError::Aborted)
                }
            }
            Behaviour::Illegal => Err(DispatchError::IllegalInstruction {
                pc: request.packet.kernel_object + 0x100,
                encoding: vec![0xffff_ffff],
                mnemonic: "not an instruction".into(),
            }),
            Behaviour::Trap => Err(DispatchError::Trap {
                pc: request.packet.kernel_object + 0x104,
                code: 2,
            }),
            Behaviour::InvalidCode => Err(DispatchError::InvalidCodeObject(
                "descriptor asks for 1024 VGPRs".into(),
            )),
        };
        self.active.fetch_sub(1, Ordering::SeqCst);
        let ended = self.tick();
        self.launches.lock().unwrap().push(Launch {
            request: *request,
            started,
            ended,
            header_seen,
            aborted,
        });
        result
    }
}

/// LDS per workgroup on the simulated gfx90a.
pub const LDS_BYTES: u32 = 64 * 1024;

/// Offsets in amd_queue_t.
pub mod field {
    use super::{AmdQueue, offset_of};
    pub const WRITE_DISPATCH_ID: u64 = offset_of!(AmdQueue, write_dispatch_id) as u64;
    pub const READ_DISPATCH_ID: u64 = offset_of!(AmdQueue, read_dispatch_id) as u64;
    pub const QUEUE_PROPERTIES: u64 = offset_of!(AmdQueue, queue_properties) as u64;
    pub const QUEUE_INACTIVE_SIGNAL: u64 = offset_of!(AmdQueue, queue_inactive_signal) as u64;
    pub const SCRATCH_WAVE64_LANE_BYTE_SIZE: u64 =
        offset_of!(AmdQueue, scratch_wave64_lane_byte_size) as u64;
}

/// Offsets in amd_signal_t.
pub mod signal_field {
    use super::{AmdSignal, offset_of};
    pub const VALUE: u64 = offset_of!(AmdSignal, value) as u64;
    pub const START_TS: u64 = offset_of!(AmdSignal, start_ts) as u64;
    pub const END_TS: u64 = offset_of!(AmdSignal, end_ts) as u64;
}

/// A signal the test made: its handle, and its event mailbox if any.
#[derive(Clone, Copy, Debug)]
pub struct TestSignal {
    pub handle: u64,
    pub mailbox: Option<u64>,
    pub event_id: u32,
}

/// The test world: a VM, a fake shader core, an interrupt sink, an engine.
pub struct Bench {
    pub vm: Arc<DeviceVm>,
    pub shader: Arc<FakeShader>,
    pub sink: Arc<RecordingSink>,
    pub engine: CommandProcessorEngine,
    /// A page of 64-byte aligned "kernel descriptors" (never read by the fake core).
    pub code: u64,
    /// A page of event mailboxes, initialised to all-ones as KFD does.
    pub event_page: u64,
    next_event: AtomicU32,
}

impl Bench {
    pub fn new() -> Self {
        let vm = DeviceVm::new();
        let code = vm.alloc(4096);
        let event_page = vm.alloc(4096);
        for slot in 0..512 {
            vm.store_u64(event_page + 8 * slot, u64::MAX);
        }
        Self {
            vm,
            shader: FakeShader::new(),
            sink: RecordingSink::new(),
            engine: CommandProcessorEngine::new(),
            code,
            event_page,
            next_event: AtomicU32::new(1),
        }
    }

    /// The `n`th kernel object (64-byte aligned, mapped).
    pub fn kernel(&self, n: u64) -> u64 {
        self.code + 64 * n
    }

    /// A user signal with `value` and no mailbox.
    pub fn signal(&self, value: i64) -> TestSignal {
        self.user_signal(value, None)
    }

    /// A user signal with `value` and an event mailbox (a fresh event id).
    pub fn interrupt_signal(&self, value: i64) -> TestSignal {
        let event_id = self.next_event.fetch_add(1, Ordering::SeqCst);
        self.user_signal(value, Some(event_id))
    }

    fn user_signal(&self, value: i64, event_id: Option<u32>) -> TestSignal {
        let handle = self.vm.alloc(64);
        let mailbox = event_id.map(|id| self.event_page + 8 * u64::from(id));
        let signal = AmdSignal {
            kind: 1, // AMD_SIGNAL_KIND_USER
            value,
            event_mailbox_ptr: mailbox.unwrap_or(0),
            event_id: event_id.unwrap_or(0),
            ..AmdSignal::default()
        };
        // A fresh mapping: no engine has its address yet.
        self.vm.write(handle, signal.as_bytes());
        TestSignal {
            handle,
            mailbox,
            event_id: event_id.unwrap_or(0),
        }
    }

    pub fn value(&self, signal: TestSignal) -> i64 {
        self.vm.load_i64(signal.handle + signal_field::VALUE)
    }

    pub fn set_value(&self, signal: TestSignal, value: i64) {
        self.vm
            .store_i64(signal.handle + signal_field::VALUE, value);
    }

    pub fn wait_value(&self, signal: TestSignal, value: i64) {
        wait_for(&format!("signal {:#x} == {value}", signal.handle), || {
            self.value(signal) == value
        });
    }

    /// An AQL queue of `slots` packets.
    pub fn queue(&self, slots: u64) -> TestQueue {
        TestQueue::new(self, slots, GfxTarget::Gfx90a, 1)
    }

    /// An AQL queue of `slots` packets on a gfx942 GPU with `xccs` XCCs.
    pub fn queue_on_xccs(&self, slots: u64, xccs: u32) -> TestQueue {
        TestQueue::new(self, slots, GfxTarget::Gfx942, xccs)
    }
}

/// Queue ids, unique in the test process so that processor thread names are too.
static QUEUE_IDS: AtomicU32 = AtomicU32::new(1);

/// A queue as ROCr lays it out, running on the bench's engine.
pub struct TestQueue {
    pub vm: Arc<DeviceVm>,
    /// GPU address of amd_queue_t.
    pub descriptor: u64,
    pub ring: u64,
    pub slots: u64,
    pub inactive: TestSignal,
    /// The name of its processor thread.
    pub thread_name: String,
    doorbell: Box<AtomicU64>,
    pub running: Box<dyn RunningQueue>,
}

impl TestQueue {
    /// [`settle`] this queue's processor.
    pub fn settle(&self) {
        settle(&*self.running);
    }

    fn new(bench: &Bench, slots: u64, target: GfxTarget, xccs: u32) -> Self {
        let vm = bench.vm.clone();
        let descriptor = vm.alloc(4096);
        let ring = vm.alloc((slots * 64) as usize);
        for i in 0..slots {
            vm.store_u32(ring + 64 * i, u32::from(PacketType::INVALID.0));
        }
        let inactive = bench.interrupt_signal(0);
        let amd_queue = AmdQueue {
            hsa_queue: HsaQueue {
                base_address: ring,
                size: slots as u32,
                ..HsaQueue::default()
            },
            read_dispatch_id_field_base_byte_offset: field::READ_DISPATCH_ID as u32,
            queue_inactive_signal: inactive.handle,
            ..AmdQueue::default()
        };
        // The engine's thread starts below: its spawn orders these stores before its reads.
        vm.write(descriptor, amd_queue.as_bytes());
        let doorbell = Box::new(AtomicU64::new(0));
        let queue_id = QUEUE_IDS.fetch_add(1, Ordering::SeqCst);
        let spec = QueueSpec {
            queue_id,
            gpu_id: 7,
            target,
            format: amdgpu_sim::queue::RingFormat::Aql,
            lds_bytes_per_workgroup: LDS_BYTES,
            xccs,
            ring_va: ring,
            ring_bytes: slots * 64,
            read_pointer_va: descriptor + field::READ_DISPATCH_ID,
            write_pointer_va: descriptor + field::WRITE_DISPATCH_ID,
            doorbell: NonNull::from(doorbell.as_ref()).cast(),
            percentage: 100,
            priority: 7,
            vm: vm.clone(),
            interrupts: bench.sink.clone(),
            shader: bench.shader.clone(),
        };
        let running = bench.engine.start(spec);
        Self {
            vm,
            descriptor,
            ring,
            slots,
            inactive,
            thread_name: format!("cp-gpu7-q{queue_id}"),
            doorbell,
            running,
        }
    }

    pub fn read_index(&self) -> u64 {
        self.vm.load_u64(self.descriptor + field::READ_DISPATCH_ID)
    }

    pub fn write_index(&self) -> u64 {
        self.vm.load_u64(self.descriptor + field::WRITE_DISPATCH_ID)
    }

    pub fn slot(&self, index: u64) -> u64 {
        self.ring + 64 * (index % self.slots)
    }

    pub fn header(&self, index: u64) -> u16 {
        self.vm.load_u32(self.slot(index)) as u16
    }

    pub fn set_properties(&self, bits: u32) {
        self.vm
            .store_u32(self.descriptor + field::QUEUE_PROPERTIES, bits);
    }

    pub fn inactive_value(&self) -> i64 {
        self.vm.load_i64(self.inactive.handle + signal_field::VALUE)
    }

    /// Wait until the queue posts an error word.
    pub fn wait_error(&self) -> i64 {
        wait_for("a queue error", || self.inactive_value() != 0);
        self.inactive_value()
    }

    /// Reserve the next packet index, waiting for room as a multi-producer queue does.
    pub fn reserve(&self) -> u64 {
        let index = self
            .vm
            .fetch_add_u64(self.descriptor + field::WRITE_DISPATCH_ID, 1);
        wait_for("room in the ring", || {
            index - self.read_index() < self.slots
        });
        index
    }

    /// Write packet `index` and publish it with a release store of its first word.
    pub fn publish(&self, index: u64, packet: &RawPacket) {
        let slot = self.slot(index);
        self.vm.write_body(slot, packet);
        self.vm.store_u32_release(slot, packet.0[0] as u32);
    }

    /// Store `index` to the doorbell and tell the engine, as the driver model does.
    pub fn ring_doorbell(&self, index: u64) {
        self.doorbell.store(index, Ordering::Release);
        self.running.doorbell_rung(index);
    }

    /// Reserve, publish and ring: returns the packet's index.
    pub fn submit(&self, packet: &RawPacket) -> u64 {
        let index = self.reserve();
        self.publish(index, packet);
        self.ring_doorbell(index);
        index
    }

    pub fn wait_read_index(&self, index: u64) {
        wait_for(&format!("read index {index}"), || {
            self.read_index() >= index
        });
    }
}

/// A raw slot from a typed packet.
pub fn raw<T: IntoBytes + zerocopy::Immutable>(packet: &T) -> RawPacket {
    let mut raw = RawPacket::default();
    raw.as_mut_bytes().copy_from_slice(packet.as_bytes());
    raw
}

/// A 1-D dispatch of 64 work-items.
pub fn dispatch(kernel_object: u64, completion: u64) -> KernelDispatchPacket {
    KernelDispatchPacket {
        header: Header::new(PacketType::KERNEL_DISPATCH).0,
        setup: dispatch_setup(1),
        workgroup_size_x: 64,
        workgroup_size_y: 1,
        workgroup_size_z: 1,
        grid_size_x: 64,
        grid_size_y: 1,
        grid_size_z: 1,
        kernel_object,
        kernarg_address: 0x1000,
        completion_signal: completion,
        ..Default::default()
    }
}

/// A barrier packet of `kind` on `deps`.
pub fn barrier(kind: PacketType, deps: [u64; 5], completion: u64) -> BarrierPacket {
    BarrierPacket {
        header: Header::new(kind).0,
        dep_signal: deps,
        completion_signal: completion,
        ..Default::default()
    }
}

/// An AMD barrier-value packet.
pub fn barrier_value(
    signal: u64,
    cond: aql::SignalCondition,
    value: i64,
    mask: i64,
    completion: u64,
) -> BarrierValuePacket {
    let mut packet = BarrierValuePacket {
        signal,
        value,
        mask,
        cond: cond.0,
        completion_signal: completion,
        ..Default::default()
    };
    packet.header.header = Header::new(PacketType::VENDOR_SPECIFIC).0;
    packet.header.amd_format = AmdFormat::BARRIER_VALUE.0;
    packet
}
