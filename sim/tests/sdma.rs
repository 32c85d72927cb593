//! SDMA queues from raw ioctls: every packet kind the engine executes (bytes in memory,
//! fences, atomics, polls, timestamps, traps as KFD events), faults reported as for compute
//! queues, illegal packets stopping the queue, the ring's pointers and wrap-around, queue-slot
//! exhaustion, DESTROY_QUEUE mid-work and the small-BAR preset.

mod common;
mod cp_support;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use amdgpu_sim::MachineConfig;
use amdgpu_sim::queue::{ProcessorProgress, QueueEngine, QueueSpec, RunningQueue};
use amdgpu_sim::sdma::SdmaEngine;
use common::{Bo, PAGE, Session, small_config};
use cp_support::{settle, wait_for};
use kfd::Errno;
use kfd::abi::sysfs::TOPOLOGY_ROOT;
use kfd::abi::{AllocFlags, CreateQueueArgs, EventData, EventType, QueueType, WaitResult};
use kfd::ioctl::calls as ioctls;
use kfd::sys::Sys;

/// Opcodes and fields of SDMA 4.x packets (vega10_sdma_pkt_open.h, ROCr's sdma_registers.h).
mod op {
    pub const NOP: u32 = 0;
    pub const COPY: u32 = 1;
    pub const WRITE: u32 = 2;
    pub const FENCE: u32 = 5;
    pub const TRAP: u32 = 6;
    pub const POLL_REGMEM: u32 = 8;
    pub const ATOMIC: u32 = 10;
    pub const CONST_FILL: u32 = 11;
    pub const TIMESTAMP: u32 = 13;
}

fn lo(v: u64) -> u32 {
    v as u32
}
fn hi(v: u64) -> u32 {
    (v >> 32) as u32
}

fn copy_linear(src: u64, dst: u64, bytes: u32) -> Vec<u32> {
    vec![op::COPY, bytes - 1, 0, lo(src), hi(src), lo(dst), hi(dst)]
}
fn fence(address: u64, data: u32) -> Vec<u32> {
    vec![op::FENCE, lo(address), hi(address), data]
}
fn poll_equal(address: u64, reference: u32) -> Vec<u32> {
    let header = op::POLL_REGMEM | (3 << 28) | (1 << 31);
    vec![
        header,
        lo(address),
        hi(address),
        reference,
        u32::MAX,
        0x0FFF_0004,
    ]
}
fn atomic(operation: u32, looped: bool, address: u64, src: u64, cmp: u64) -> Vec<u32> {
    let header = op::ATOMIC | (u32::from(looped) << 16) | (operation << 25);
    vec![
        header,
        lo(address),
        hi(address),
        lo(src),
        hi(src),
        lo(cmp),
        hi(cmp),
        0x10,
    ]
}

/// An SDMA engine that lets tests see each queue's progress.
#[derive(Default)]
struct WatchedSdma {
    inner: SdmaEngine,
    queues: Mutex<Vec<Arc<dyn RunningQueue>>>,
}

struct Shared(Arc<dyn RunningQueue>);

impl RunningQueue for Shared {
    fn doorbell_rung(&self, value: u64) {
        self.0.doorbell_rung(value);
    }
    fn update(&self, ring_va: u64, ring_bytes: u64, percentage: u32, priority: u32) {
        self.0.update(ring_va, ring_bytes, percentage, priority);
    }
    fn stop(&self) {
        self.0.stop();
    }
    fn progress(&self) -> Option<ProcessorProgress> {
        self.0.progress()
    }
}

impl QueueEngine for WatchedSdma {
    fn start(&self, spec: QueueSpec) -> Box<dyn RunningQueue> {
        let running: Arc<dyn RunningQueue> = Arc::from(self.inner.start(spec));
        self.queues.lock().unwrap().push(running.clone());
        Box::new(Shared(running))
    }
}

/// One SDMA queue created through CREATE_QUEUE, fed as ROCr's BlitSdmaV4 feeds it: packets
/// at the 64-bit byte write pointer (wrapping in the ring), the pointer stored to the queue's
/// wptr word and then to the doorbell.
struct SdmaQueue<'a> {
    s: &'a Session,
    ring: Bo,
    ring_bytes: u64,
    pointers: Bo,
    queue_id: u32,
    doorbell: *mut u64,
    wptr: u64,
}

impl<'a> SdmaQueue<'a> {
    fn create(s: &'a Session, kind: QueueType, ring_bytes: u64) -> Self {
        let ring = s.gtt(ring_bytes);
        let pointers = s.gtt(PAGE);
        let mut args = CreateQueueArgs {
            ring_base_address: ring.va,
            write_pointer_address: pointers.va,
            read_pointer_address: pointers.va + 8,
            ring_size: ring_bytes as u32,
            gpu_id: s.gpu_id,
            queue_type: kind.0,
            queue_percentage: 100,
            queue_priority: 15,
            ..CreateQueueArgs::default()
        };
        s.create_queue(&mut args).expect("create SDMA queue");
        let doorbells = s.doorbells().as_ptr() as usize;
        let in_slice =
            args.doorbell_offset as usize & (kfd::abi::mmap_offset::DOORBELL_SLICE_SIZE - 1);
        Self {
            s,
            ring,
            ring_bytes,
            pointers,
            queue_id: args.queue_id,
            doorbell: (doorbells + in_slice) as *mut u64,
            wptr: 0,
        }
    }

    fn rptr(&self) -> u64 {
        self.pointers.word(8).load(Ordering::Acquire)
    }

    /// Write `dwords` at the write pointer and ring the doorbell.
    fn submit(&mut self, dwords: &[u32]) {
        for &dw in dwords {
            let offset = self.wptr & (self.ring_bytes - 1);
            // SAFETY: the ring is CPU-mapped for the test's lifetime; `offset` is a dword
            // inside it.
            unsafe { ((self.ring.va + offset) as *mut u32).write_volatile(dw) };
            self.wptr += 4;
        }
        self.pointers.word(0).store(self.wptr, Ordering::Release);
        // SAFETY: the doorbell slice stays mapped; every doorbell is 8-aligned.
        unsafe { std::sync::atomic::AtomicU64::from_ptr(self.doorbell) }
            .store(self.wptr, Ordering::Release);
        self.s
            .sys()
            .notify_doorbell(std::ptr::NonNull::new(self.doorbell).unwrap(), self.wptr);
    }

    /// Wait until the engine has consumed everything submitted.
    fn drain(&self) {
        wait_for("the SDMA read pointer to reach the write pointer", || {
            self.rptr() == self.wptr
        });
    }
}

fn bytes_at(va: u64, len: usize) -> Vec<u8> {
    // SAFETY: tests only read CPU-mapped BOs they keep alive.
    unsafe { std::slice::from_raw_parts(va as *const u8, len) }.to_vec()
}

fn fill_pattern(va: u64, len: usize, seed: u8) {
    for i in 0..len {
        // SAFETY: as in `bytes_at`, writable.
        unsafe {
            ((va + i as u64) as *mut u8)
                .write_volatile(seed.wrapping_add((i as u8).wrapping_mul(7)));
        }
    }
}

fn watched() -> (Session, Arc<WatchedSdma>) {
    let engine = Arc::new(WatchedSdma::default());
    let s = Session::new(small_config().with_sdma_engine(engine.clone()));
    (s, engine)
}

fn u32_at(bo: &Bo, offset: u64) -> u32 {
    // SAFETY: a CPU-mapped BO kept alive by the test.
    unsafe { ((bo.va + offset) as *const u32).read_volatile() }
}

#[test]
fn copy_linear_moves_exactly_the_bytes_asked_and_writes_the_read_pointer_back() {
    let s = Session::small();
    let src = s.vram(64 << 10);
    let dst = s.gtt(64 << 10);
    fill_pattern(src.va, 64 << 10, 3);
    let mut q = SdmaQueue::create(&s, QueueType::SDMA, 4096);
    assert_eq!(q.rptr(), 0);
    // 10001 bytes from an odd offset: no alignment needed on either side.
    q.submit(&copy_linear(src.va + 1, dst.va + 3, 10001));
    q.submit(&fence(dst.va + 60000, 0xC0FFEE));
    wait_for("the fence", || u32_at(&dst, 60000) == 0xC0FFEE);
    q.drain();
    assert_eq!(q.rptr(), (7 + 4) * 4);
    assert_eq!(bytes_at(dst.va + 3, 10001), bytes_at(src.va + 1, 10001));
    assert_eq!(bytes_at(dst.va, 3), [0, 0, 0]);
    assert_eq!(bytes_at(dst.va + 3 + 10001, 1), [0], "one byte too many");
}

#[test]
fn copies_span_adjacent_mappings_and_the_ring_wraps() {
    let s = Session::small();
    let src = s.gtt(8192);
    fill_pattern(src.va, 8192, 11);
    let dst = s.gtt(8192);
    // A ring of 1 KiB (the minimum) holds 36 copy packets: 200 of them wrap it five times,
    // with packets split across its end.
    let mut q = SdmaQueue::create(&s, QueueType::SDMA, 1024);
    for i in 0..200u64 {
        let at = i * 40;
        q.submit(&copy_linear(src.va + at, dst.va + at, 40));
        if i % 16 == 15 {
            q.drain();
        }
    }
    q.drain();
    assert_eq!(q.wptr, 200 * 28);
    assert_eq!(bytes_at(dst.va, 8000), bytes_at(src.va, 8000));
}

#[test]
fn sub_window_copies_rectangles_of_elements() {
    let s = Session::small();
    let src = s.gtt(PAGE * 4);
    let dst = s.gtt(PAGE * 4);
    fill_pattern(src.va, (PAGE * 4) as usize, 1);
    let mut q = SdmaQueue::create(&s, QueueType::SDMA, 4096);
    // 4-byte elements (element 2). Source: pitch 64 elements, slice 64*16; rectangle of 5 x 3
    // x 2 elements from (2, 1, 1). Destination: pitch 8, slice 8*4, at (1, 0, 0).
    let element = 2u32;
    let header = op::COPY | (4 << 8) | (element << 29);
    let (sp, ss, dp, ds) = (64u32, 64 * 16u32, 8u32, 8 * 4u32);
    q.submit(&[
        header,
        lo(src.va),
        hi(src.va),
        2 | (1 << 16),
        1 | ((sp - 1) << 13),
        ss - 1,
        lo(dst.va),
        hi(dst.va),
        1,
        (dp - 1) << 13,
        ds - 1,
        (5 - 1) | ((3 - 1) << 16),
        2 - 1,
    ]);
    q.drain();
    let src_bytes = bytes_at(src.va, (PAGE * 4) as usize);
    let dst_bytes = bytes_at(dst.va, (PAGE * 4) as usize);
    let element_at = |bytes: &[u8], index: u32| bytes[index as usize * 4..][..4].to_vec();
    for z in 0..2 {
        for y in 0..3 {
            for x in 0..5 {
                let from = (2 + x) + (1 + y) * sp + (1 + z) * ss;
                let to = (1 + x) + y * dp + z * ds;
                assert_eq!(element_at(&dst_bytes, to), element_at(&src_bytes, from));
            }
        }
    }
    // Nothing outside the rectangle was written.
    assert_eq!(element_at(&dst_bytes, 0), [0; 4]);
    assert_eq!(element_at(&dst_bytes, 6), [0; 4]);
    assert_eq!(element_at(&dst_bytes, 3 * dp + 1), [0; 4]);
}

#[test]
fn constant_fill_and_write_linear_store_their_data() {
    let s = Session::small();
    let dst = s.gtt(PAGE * 2);
    let mut q = SdmaQueue::create(&s, QueueType::SDMA, 4096);
    // ROCr's dword fill: fillsize 2, count = 4 * dwords - 4.
    q.submit(&[
        op::CONST_FILL | (2 << 30),
        lo(dst.va),
        hi(dst.va),
        0xA1B2_C3D4,
        4 * 100 - 4,
    ]);
    // A byte fill of 5 bytes after it.
    q.submit(&[op::CONST_FILL, lo(dst.va + 400), hi(dst.va + 400), 0x77, 4]);
    // WRITE LINEAR: three dwords.
    q.submit(&[
        op::WRITE,
        lo(dst.va + 1000),
        hi(dst.va + 1000),
        3 - 1,
        1,
        2,
        3,
    ]);
    q.drain();
    for i in 0..100 {
        assert_eq!(u32_at(&dst, 4 * i), 0xA1B2_C3D4, "dword {i}");
    }
    assert_eq!(bytes_at(dst.va + 400, 6), [0x77, 0x77, 0x77, 0x77, 0x77, 0]);
    assert_eq!(
        [u32_at(&dst, 1000), u32_at(&dst, 1004), u32_at(&dst, 1008)],
        [1, 2, 3]
    );
    assert_eq!(u32_at(&dst, 1012), 0);
}

#[test]
fn atomics_decrement_signals_and_compare_swap() {
    let (s, engine) = watched();
    let mem = s.gtt(PAGE);
    mem.word(0).store(5, Ordering::Relaxed);
    mem.word(8).store(0x1_0000_0007, Ordering::Relaxed);
    let mut q = SdmaQueue::create(&s, QueueType::SDMA, 4096);
    // ROCr's completion-signal decrement: ADD64 (47) of all ones.
    q.submit(&atomic(47, false, mem.va, u64::MAX, 0));
    // A 32-bit add (15) touches only the low dword.
    q.submit(&atomic(15, false, mem.va + 8, 3, 0));
    // CMPSWAP64 (40) that fails, then one that succeeds.
    q.submit(&atomic(40, false, mem.va + 16, 9, 1));
    q.submit(&atomic(40, false, mem.va + 24, 9, 0));
    q.drain();
    assert_eq!(mem.word(0).load(Ordering::Relaxed), 4);
    assert_eq!(mem.word(8).load(Ordering::Relaxed), 0x1_0000_000A);
    assert_eq!(mem.word(16).load(Ordering::Relaxed), 0);
    assert_eq!(mem.word(24).load(Ordering::Relaxed), 9);
    // A looped compare-swap waits until memory holds the compare value.
    q.submit(&atomic(40, true, mem.va + 32, 2, 1));
    q.submit(&fence(mem.va + 64, 1));
    let running = engine.queues.lock().unwrap()[0].clone();
    settle(&*running);
    assert_eq!(mem.word(64).load(Ordering::Relaxed), 0, "ran past the loop");
    mem.word(32).store(1, Ordering::Release);
    q.drain();
    assert_eq!(mem.word(32).load(Ordering::Relaxed), 2);
    assert_eq!(mem.word(64).load(Ordering::Relaxed), 1);
}

#[test]
fn poll_regmem_holds_the_queue_until_memory_matches() {
    let (s, engine) = watched();
    let mem = s.gtt(PAGE);
    mem.word(0).store(0x1_0000_0000, Ordering::Relaxed);
    let mut q = SdmaQueue::create(&s, QueueType::SDMA, 4096);
    // ROCr waits for a 64-bit signal to reach 0 with two polls: high dword, then low.
    q.submit(&poll_equal(mem.va + 4, 0));
    q.submit(&poll_equal(mem.va, 0));
    q.submit(&fence(mem.va + 8, 0xD0D0));
    let running = engine.queues.lock().unwrap()[0].clone();
    settle(&*running);
    assert_eq!(u32_at(&mem, 8), 0);
    assert_eq!(q.rptr(), 0, "the first poll is not satisfied");
    mem.word(0).store(0x0_0000_0001, Ordering::Release);
    wait_for("the first poll to pass", || q.rptr() == 24);
    settle(&*running);
    assert_eq!(u32_at(&mem, 8), 0);
    mem.word(0).store(0, Ordering::Release);
    q.drain();
    assert_eq!(u32_at(&mem, 8), 0xD0D0);
    // ROCr's HDP flush (a register poll with function "always") and NOPs pass at once.
    q.submit(&[0x8, 0, 0x8000_0000, 0, 0, 0]);
    q.submit(&[op::NOP | (2 << 16), 0xDEAD, 0xBEEF, op::NOP]);
    q.submit(&fence(mem.va + 12, 1));
    q.drain();
    assert_eq!(u32_at(&mem, 12), 1);
}

#[test]
fn timestamps_are_the_gpu_clock() {
    let s = Session::small();
    let mem = s.gtt(PAGE);
    let mut q = SdmaQueue::create(&s, QueueType::SDMA, 4096);
    let before = amdgpu_sim::clock::gpu_timestamp();
    // GET_GLOBAL (sub-op 2) as ROCr's profiling uses it, GET_LOCAL (1) after it.
    q.submit(&[op::TIMESTAMP | (2 << 8), lo(mem.va), hi(mem.va)]);
    q.submit(&[op::TIMESTAMP | (1 << 8), lo(mem.va + 32), hi(mem.va + 32)]);
    q.drain();
    let after = amdgpu_sim::clock::gpu_timestamp();
    let (global, local) = (
        mem.word(0).load(Ordering::Relaxed),
        mem.word(32).load(Ordering::Relaxed),
    );
    assert!(before <= global && global <= local && local <= after);
}

#[test]
fn trap_after_a_mailbox_fence_signals_the_event_as_rocr_does() {
    let s = Session::small();
    let (page, _) = s.event_page();
    let event = s.create_event(EventType::SIGNAL, false).unwrap();
    let silent = s.create_event(EventType::SIGNAL, false).unwrap();
    let mut q = SdmaQueue::create(&s, QueueType::SDMA, 4096);
    // A trap whose mailbox slot was not written signals nothing (KFD checks the slot).
    q.submit(&[op::TRAP, silent.event_id]);
    // ROCr: FENCE the event id into the mailbox, then TRAP with the id.
    let slot = page.va + 8 * u64::from(event.event_slot_index);
    q.submit(&fence(slot, event.event_id));
    q.submit(&[op::TRAP, event.event_id]);
    q.drain();
    let mut events = [EventData::new(event.event_id)];
    let mut timeout = 30_000;
    let result = ioctls::wait_events(s.sys(), s.kfd, &mut events, true, &mut timeout).unwrap();
    assert_eq!(result, WaitResult::COMPLETE);
    let mut events = [EventData::new(silent.event_id)];
    let mut timeout = 0;
    let result = ioctls::wait_events(s.sys(), s.kfd, &mut events, true, &mut timeout).unwrap();
    assert_eq!(result, WaitResult::TIMEOUT);
}

#[test]
fn an_unmapped_address_is_a_vm_fault_and_the_queue_stops() {
    let s = Session::small();
    s.event_page();
    let memory = s.create_event(EventType::MEMORY, false).unwrap();
    let dst = s.gtt(PAGE);
    let hole = s.reserve_va(PAGE);
    let mut q = SdmaQueue::create(&s, QueueType::SDMA, 4096);
    q.submit(&copy_linear(hole + 16, dst.va, 64));
    q.submit(&fence(dst.va + 128, 1));
    let mut events = [EventData::new(memory.event_id)];
    let mut timeout = 30_000;
    let result = ioctls::wait_events(s.sys(), s.kfd, &mut events, true, &mut timeout).unwrap();
    assert_eq!(result, WaitResult::COMPLETE);
    let data = events[0].memory_exception();
    assert_eq!(data.va, hole, "the faulting page");
    assert_eq!(data.gpu_id, s.gpu_id);
    assert_eq!(data.failure.not_present, 1);
    // The packet never completed: the read pointer stays, the fence is never written.
    assert_eq!(q.rptr(), 0);
    assert_eq!(u32_at(&dst, 128), 0);
    // DESTROY_QUEUE still works on the stopped queue.
    ioctls::destroy_queue(s.sys(), s.kfd, q.queue_id).unwrap();
    assert_eq!(u32_at(&dst, 128), 0);
}

#[test]
fn a_read_only_destination_faults_as_read_only() {
    let s = Session::small();
    s.event_page();
    let memory = s.create_event(EventType::MEMORY, false).unwrap();
    let src = s.gtt(PAGE);
    let ro = s
        .alloc(AllocFlags::GTT | AllocFlags::COHERENT, PAGE)
        .unwrap();
    s.map_gpu(&ro, &[s.gpu_id]).unwrap();
    let mut q = SdmaQueue::create(&s, QueueType::SDMA, 4096);
    q.submit(&fence(ro.va, 1));
    let mut events = [EventData::new(memory.event_id)];
    let mut timeout = 30_000;
    let result = ioctls::wait_events(s.sys(), s.kfd, &mut events, true, &mut timeout).unwrap();
    assert_eq!(result, WaitResult::COMPLETE);
    assert_eq!(events[0].memory_exception().failure.read_only, 1);
    let _ = src;
}

#[test]
fn an_illegal_packet_stops_the_queue_without_a_panic() {
    let (s, engine) = watched();
    let mem = s.gtt(PAGE);
    let mut q = SdmaQueue::create(&s, QueueType::SDMA, 4096);
    q.submit(&fence(mem.va, 1));
    q.drain();
    // Opcode 0x3F does not exist; the fence after it never runs.
    q.submit(&[0x3F, 0, 0, 0]);
    q.submit(&fence(mem.va + 4, 2));
    let running = engine.queues.lock().unwrap()[0].clone();
    settle(&*running);
    assert_eq!(q.rptr(), 16);
    assert_eq!(u32_at(&mem, 4), 0);
    // A new doorbell does not restart it.
    q.submit(&fence(mem.va + 8, 3));
    settle(&*running);
    assert_eq!(u32_at(&mem, 8), 0);
    ioctls::destroy_queue(s.sys(), s.kfd, q.queue_id).unwrap();
}

#[test]
fn destroy_queue_mid_poll_and_mid_copy_stops_the_engine() {
    let s = Session::small();
    let mem = s.gtt(PAGE);
    let mut q = SdmaQueue::create(&s, QueueType::SDMA, 4096);
    q.submit(&poll_equal(mem.va, 1));
    q.submit(&fence(mem.va + 8, 1));
    ioctls::destroy_queue(s.sys(), s.kfd, q.queue_id).unwrap();
    // DESTROY_QUEUE returns once the engine touches no queue memory: satisfying the poll now
    // runs nothing.
    mem.word(0).store(1, Ordering::Release);
    let rptr = q.rptr();
    assert_eq!(u32_at(&mem, 8), 0);
    assert_eq!(rptr, 0);

    // A long chain of copies, destroyed while it runs (or after: either way DESTROY_QUEUE
    // returns, and the engine writes nothing after it).
    let big = 8 << 20;
    let src = s.gtt(big);
    let dst = s.gtt(big);
    let mut q = SdmaQueue::create(&s, QueueType::SDMA, 1 << 16);
    for _ in 0..16 {
        q.submit(&copy_linear(src.va, dst.va, 0x3F_FFE0));
    }
    ioctls::destroy_queue(s.sys(), s.kfd, q.queue_id).unwrap();
    let rptr = q.rptr();
    assert!(rptr <= q.wptr);
    assert_eq!(s.machine.counts().queues, 0);
    assert_eq!(q.rptr(), rptr);
}

#[test]
fn engine_slots_run_out_per_kind_and_come_back_on_destroy_and_exit() {
    let s = Session::small();
    let ring = s.gtt(4096);
    let pointers = s.gtt(PAGE);
    let args = |kind: QueueType, engine_id: u32| CreateQueueArgs {
        ring_base_address: ring.va,
        write_pointer_address: pointers.va,
        read_pointer_address: pointers.va + 8,
        ring_size: 4096,
        gpu_id: s.gpu_id,
        queue_type: kind.0,
        queue_percentage: 100,
        sdma_engine_id: engine_id,
        ..CreateQueueArgs::default()
    };
    let mut doorbells = Vec::new();
    // MI210: 2 PCIe engines x 8 queues.
    for _ in 0..16 {
        let mut a = args(QueueType::SDMA, 0);
        s.create_queue(&mut a).unwrap();
        doorbells.push(a.doorbell_offset & 0x1FFF);
    }
    assert_eq!(
        s.create_queue(&mut args(QueueType::SDMA, 0)),
        Err(Errno::ENOMEM)
    );
    // Fixed, distinct doorbells, inside the range compute queues never get.
    let mut unique = doorbells.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), 16);
    assert!(
        doorbells
            .iter()
            .all(|d| (0x100 * 8..0x190 * 8).contains(&(d % 4096)))
    );
    // 3 XGMI engines x 8 queues.
    for _ in 0..24 {
        s.create_queue(&mut args(QueueType::SDMA_XGMI, 0)).unwrap();
    }
    assert_eq!(
        s.create_queue(&mut args(QueueType::SDMA_XGMI, 0)),
        Err(Errno::ENOMEM)
    );
    // Queue 0 held sdma_id 0, on engine 0: by engine id, only engine 0 has room again.
    ioctls::destroy_queue(s.sys(), s.kfd, 0).unwrap();
    assert_eq!(
        s.create_queue(&mut args(QueueType::SDMA_BY_ENG_ID, 1)),
        Err(Errno::ENOMEM)
    );
    s.create_queue(&mut args(QueueType::SDMA_BY_ENG_ID, 0))
        .unwrap();
    // A process that exits gives its slots back (they are the device's, not the process').
    let pid = std::process::id() as i32;
    s.machine.exit_process(pid).unwrap();
    let kfd = common::open_kfd(&s.machine);
    let render = common::open_render(&s.machine, s.machine.gpus()[0].render_minor);
    ioctls::acquire_vm(&s.machine, kfd, render, s.gpu_id).unwrap();
    let again = Session {
        machine: s.machine.clone(),
        kfd,
        render,
        gpu_id: s.gpu_id,
        gpu_ids: s.gpu_ids.clone(),
    };
    let ring = again.gtt(4096);
    let pointers = again.gtt(PAGE);
    for _ in 0..16 {
        let mut a = CreateQueueArgs {
            ring_base_address: ring.va,
            write_pointer_address: pointers.va,
            read_pointer_address: pointers.va + 8,
            ring_size: 4096,
            gpu_id: again.gpu_id,
            queue_type: QueueType::SDMA.0,
            queue_percentage: 100,
            ..CreateQueueArgs::default()
        };
        again.create_queue(&mut a).unwrap();
    }
}

#[test]
fn small_bar_preset_hides_vram_and_sdma_reaches_it() {
    let config = MachineConfig::mi210_small_bar()
        .with_compute_units(8)
        .with_vram(1 << 30);
    let s = Session::new(config);
    // Topology: the VRAM bank is FB_PRIVATE (heap type 2).
    let bank = s
        .machine
        .read_file(std::path::Path::new(&format!(
            "{TOPOLOGY_ROOT}/nodes/1/mem_banks/0/properties"
        )))
        .unwrap();
    let bank = String::from_utf8(bank).unwrap();
    assert!(bank.lines().any(|l| l == "heap_type 2"), "{bank}");
    // The kernel refuses host-visible VRAM on a small BAR.
    assert_eq!(
        s.alloc(
            AllocFlags::VRAM | AllocFlags::PUBLIC | AllocFlags::WRITABLE,
            PAGE
        )
        .unwrap_err(),
        Errno::EINVAL
    );
    let vis = drm_amdgpu::vram_gtt(&s.machine, s.render).unwrap();
    assert_eq!(vis.vram_cpu_accessible_size, 256 << 20);
    // Private VRAM, reached only by the copy engine: host -> VRAM -> host.
    let vram = s
        .alloc(AllocFlags::VRAM | AllocFlags::WRITABLE, 1 << 20)
        .unwrap();
    s.map_gpu(&vram, &[s.gpu_id]).unwrap();
    let host_in = s.gtt(1 << 20);
    let host_out = s.gtt(1 << 20);
    fill_pattern(host_in.va, 1 << 20, 9);
    let mut q = SdmaQueue::create(&s, QueueType::SDMA, 4096);
    q.submit(&copy_linear(host_in.va, vram.va, 1 << 20));
    q.submit(&copy_linear(vram.va, host_out.va, 1 << 20));
    q.drain();
    assert_eq!(
        bytes_at(host_out.va, 1 << 20),
        bytes_at(host_in.va, 1 << 20)
    );
}
