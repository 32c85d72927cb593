//! PM4 compute queues (`KFD_IOC_QUEUE_TYPE_COMPUTE`) from raw ioctls, fed as tinygrad's AMD
//! backend and KFDTest feed them: PM4 type-3 packets at the 64-bit dword write pointer
//! (wrapping in the ring), the pointer stored to the queue's wptr word and then to the
//! doorbell, the CP's 32-bit wrapped read pointer read back. One test per packet kind a
//! compute stream uses: compute registers and DISPATCH_DIRECT running a clang-compiled kernel,
//! RELEASE_MEM (data, timestamps, the interrupt that wakes a KFD event), WAIT_REG_MEM blocking
//! until memory changes, INDIRECT_BUFFER, and what stops a queue.

mod common;
mod cp_support;

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use amdgpu_loader::kernel_descriptor::UserSgpr;
use amdgpu_loader::{CodeObject, HiddenArg, NoExternals};
use amdgpu_sim::MachineConfig;
use amdgpu_sim::cp::CommandProcessorEngine;
use amdgpu_sim::queue::{ProcessorProgress, QueueEngine, QueueSpec, RunningQueue};
use common::{Bo, QueueBuffers, Session, small_config};
use cp_support::{settle, wait_for};
use kfd::abi::mmap_offset::split_doorbell_offset;
use kfd::abi::{EventData, EventType, QueueType, WaitResult};
use kfd::ioctl::calls as ioctls;

/// PM4 type-3 opcodes (soc15d.h).
mod op {
    pub const NOP: u32 = 0x10;
    pub const DISPATCH_DIRECT: u32 = 0x15;
    pub const WRITE_DATA: u32 = 0x37;
    pub const WAIT_REG_MEM: u32 = 0x3C;
    pub const INDIRECT_BUFFER: u32 = 0x3F;
    pub const EVENT_WRITE: u32 = 0x46;
    pub const RELEASE_MEM: u32 = 0x49;
    pub const ACQUIRE_MEM: u32 = 0x58;
    pub const SET_SH_REG: u32 = 0x76;
}

/// GFX9 compute registers (absolute dword addresses).
mod reg {
    pub const SH_REG_START: u32 = 0x2C00;
    pub const START_X: u32 = 0x2E04;
    pub const PGM_LO: u32 = 0x2E0C;
    pub const PGM_RSRC1: u32 = 0x2E12;
    pub const RESOURCE_LIMITS: u32 = 0x2E15;
    pub const TMPRING_SIZE: u32 = 0x2E18;
    pub const RESTART_X: u32 = 0x2E1B;
    pub const PGM_RSRC3: u32 = 0x2E2D;
    /// GFX11's COMPUTE_PGM_RSRC3 (gc_11_0_0_offset.h: 0x1bc8 in GC segment 0 at 0x1260);
    /// the other registers here are at the same addresses on GFX11.
    pub const PGM_RSRC3_GFX11: u32 = 0x2E28;
    pub const DISPATCH_SCRATCH_BASE_LO: u32 = 0x2E10;
    pub const USER_DATA_0: u32 = 0x2E40;
    /// NBIO's HDP flush request and done registers (tinygrad's `memory_barrier`).
    pub const HDP_FLUSH_REQ: u32 = 0xD20 + 0x106;
}

fn lo(v: u64) -> u32 {
    v as u32
}
fn hi(v: u64) -> u32 {
    (v >> 32) as u32
}

fn pkt3(opcode: u32, body: &[u32]) -> Vec<u32> {
    let header = 3 << 30 | (body.len() as u32 - 1) << 16 | opcode << 8;
    std::iter::once(header)
        .chain(body.iter().copied())
        .collect()
}
fn set_sh(register: u32, values: &[u32]) -> Vec<u32> {
    let mut body = vec![register - reg::SH_REG_START];
    body.extend_from_slice(values);
    pkt3(op::SET_SH_REG, &body)
}
/// RELEASE_MEM as gfx_v9_0 emits it: CACHE_FLUSH_AND_INV_TS_EVENT at end of pipe, DATA_SEL,
/// INT_SEL, the address, the data and the interrupt's context id.
fn release_mem(va: u64, value: u64, data_sel: u32, int_sel: u32, context_id: u32) -> Vec<u32> {
    let event = 0x14 | 5 << 8;
    pkt3(
        op::RELEASE_MEM,
        &[
            event,
            data_sel << 29 | int_sel << 24,
            lo(va),
            hi(va),
            lo(value),
            hi(value),
            context_id,
        ],
    )
}
/// WAIT_REG_MEM on memory: `function` 3 is ==, 5 is >=.
fn wait_memory(va: u64, reference: u32, function: u32) -> Vec<u32> {
    pkt3(
        op::WAIT_REG_MEM,
        &[function | 1 << 4, lo(va), hi(va), reference, u32::MAX, 4],
    )
}
/// WRITE_DATA to memory (DST_SEL 5), confirmed.
fn write_data(va: u64, data: &[u32]) -> Vec<u32> {
    let mut body = vec![5 << 8 | 1 << 20, lo(va), hi(va)];
    body.extend_from_slice(data);
    pkt3(op::WRITE_DATA, &body)
}
fn indirect_buffer(va: u64, dwords: u32) -> Vec<u32> {
    pkt3(op::INDIRECT_BUFFER, &[lo(va), hi(va), dwords | 1 << 23])
}
/// ACQUIRE_MEM as tinygrad emits it on GFX9 (every cache action, the whole address space).
fn acquire_mem() -> Vec<u32> {
    pkt3(
        op::ACQUIRE_MEM,
        &[0x2880_0000 | 1 << 22, u32::MAX, u32::MAX, 0, 0, 0xA],
    )
}
/// tinygrad's `memory_barrier`: the HDP flush (write REQ, wait for DONE >= all bits), then
/// ACQUIRE_MEM.
fn memory_barrier() -> Vec<u32> {
    let mut v = pkt3(
        op::WAIT_REG_MEM,
        &[
            5 | 1 << 6,
            reg::HDP_FLUSH_REQ,
            reg::HDP_FLUSH_REQ + 1,
            u32::MAX,
            u32::MAX,
            4,
        ],
    );
    v.extend(acquire_mem());
    v
}
/// EVENT_WRITE(CS_PARTIAL_FLUSH, index 4).
fn cs_partial_flush() -> Vec<u32> {
    pkt3(op::EVENT_WRITE, &[7 | 4 << 8])
}

fn atomic_u32(va: u64) -> &'static AtomicU32 {
    // SAFETY: every address passed is 4-byte aligned inside a BO the test mapped for the CPU
    // at its GPU address; the machine (and so the BO) outlives every use.
    unsafe { AtomicU32::from_ptr(va as *mut u32) }
}
fn atomic_u64(va: u64) -> &'static AtomicU64 {
    // SAFETY: as in `atomic_u32`, 8-byte aligned.
    unsafe { AtomicU64::from_ptr(va as *mut u64) }
}
fn bytes(bo: &Bo) -> &'static mut [u8] {
    // SAFETY: the BO is mapped read-write for the CPU at its VA for its whole size and lives
    // as long as the test's machine.
    unsafe { std::slice::from_raw_parts_mut(bo.va as *mut u8, bo.size as usize) }
}

/// The command processor engine, with each queue's progress visible to the test.
#[derive(Default)]
struct WatchedCp {
    inner: CommandProcessorEngine,
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

impl QueueEngine for WatchedCp {
    fn start(&self, spec: QueueSpec) -> Box<dyn RunningQueue> {
        let running: Arc<dyn RunningQueue> = Arc::from(self.inner.start(spec));
        self.queues.lock().unwrap().push(running.clone());
        Box::new(Shared(running))
    }
}

fn watched() -> (Session, Arc<WatchedCp>) {
    let engine = Arc::new(WatchedCp::default());
    let s = Session::new(small_config().with_engine(engine.clone()));
    (s, engine)
}

/// One PM4 queue made by CREATE_QUEUE: wptr in the first word of the pointer page, rptr in
/// the second.
struct Pm4Queue<'a> {
    s: &'a Session,
    buffers: QueueBuffers,
    queue_id: u32,
    doorbell: std::ptr::NonNull<u64>,
    /// Dwords written so far.
    wptr: u64,
}

impl<'a> Pm4Queue<'a> {
    fn create(s: &'a Session, ring_bytes: u64) -> Self {
        let buffers = s.queue_buffers(ring_bytes);
        let mut args = s.queue_args(&buffers);
        args.queue_type = QueueType::COMPUTE.0;
        args.write_pointer_address = buffers.pointers.va;
        args.read_pointer_address = buffers.pointers.va + 8;
        s.create_queue(&mut args).expect("CREATE_QUEUE (PM4)");
        let (_, in_slice) = split_doorbell_offset(args.doorbell_offset);
        // SAFETY: the slice mapping is 8 KiB and `in_slice` is a doorbell inside it.
        let doorbell = unsafe { s.doorbells().cast::<u8>().add(in_slice) }.cast::<u64>();
        Self {
            s,
            buffers,
            queue_id: args.queue_id,
            doorbell,
            wptr: 0,
        }
    }

    fn ring_dwords(&self) -> u64 {
        self.buffers.ring.size / 4
    }

    /// The CP's read pointer: 32-bit dwords, wrapped at the ring size.
    fn rptr(&self) -> u32 {
        atomic_u32(self.buffers.pointers.va + 8).load(Ordering::Acquire)
    }

    /// Write `dwords` at the write pointer (wrapping), then publish it: wptr word, doorbell.
    fn submit(&mut self, dwords: &[u32]) {
        for &dw in dwords {
            let at = self.buffers.ring.va + 4 * (self.wptr % self.ring_dwords());
            atomic_u32(at).store(dw, Ordering::Relaxed);
            self.wptr += 1;
        }
        atomic_u64(self.buffers.pointers.va).store(self.wptr, Ordering::Release);
        // SAFETY: the doorbell lies in the live doorbell mapping, 8-aligned.
        unsafe { AtomicU64::from_ptr(self.doorbell.as_ptr()) }.store(self.wptr, Ordering::Release);
        self.s.sys().notify_doorbell(self.doorbell, self.wptr);
    }

    /// Wait until the CP has consumed everything submitted.
    fn drain(&self) {
        let expected = (self.wptr % self.ring_dwords()) as u32;
        wait_for("the PM4 read pointer to reach the write pointer", || {
            self.rptr() == expected
        });
    }
}

/// A committed clang-built kernel (`vector_add` unless said otherwise) loaded into a BO, with
/// a kernarg buffer per launch: buffer pointers, then an element count.
struct ClangKernel {
    entry: u64,
    rsrc: [u32; 3],
    kernarg_size: usize,
    kernarg_layout: Vec<u32>,
    hidden: Vec<(usize, usize, HiddenArg)>,
    /// How many user SGPRs the kernel expects (COMPUTE_PGM_RSRC2.USER_SGPR).
    user_sgprs: u32,
    /// Where the kernarg segment pointer goes among them.
    kernarg_sgpr: u32,
    _image: Bo,
}

impl ClangKernel {
    fn load(s: &Session) -> Self {
        Self::load_built(s, "gfx90a", "vector_add")
    }

    /// `tests/kernels/bin/<target>/<name>.co5`.
    fn load_built(s: &Session, target: &str, name: &str) -> Self {
        let path = format!(
            "{}/../tests/kernels/bin/{target}/{name}.co5",
            env!("CARGO_MANIFEST_DIR")
        );
        let code = std::fs::read(path).expect("committed test kernel");
        let code = CodeObject::parse(&code).expect("parse");
        let image_bo = s.gtt(code.image_size().next_multiple_of(4096));
        let image = code
            .load(bytes(&image_bo), image_bo.va, &NoExternals)
            .expect("load");
        let kernel = image.kernel(name).expect("the kernel");
        let kd = kernel.descriptor;
        // What a PM4 producer must know of the descriptor: the user SGPRs it asks for, here
        // the kernarg pointer alone.
        let slots: Vec<_> = kd.user_sgprs().collect();
        let kernarg_sgpr = slots
            .iter()
            .find(|slot| slot.kind == UserSgpr::KernargSegmentPtr)
            .expect("a kernarg pointer")
            .first;
        // Anything else it asks for is the scratch descriptor, which it never uses here.
        assert!(
            slots.iter().all(|slot| matches!(
                slot.kind,
                UserSgpr::KernargSegmentPtr | UserSgpr::PrivateSegmentBuffer
            )),
            "{name}'s user SGPRs: {slots:?}"
        );
        let implicit = kernel.implicit_args.expect("V5 implicit arguments");
        let hidden = [
            HiddenArg::BlockCountX,
            HiddenArg::BlockCountY,
            HiddenArg::BlockCountZ,
            HiddenArg::GroupSizeX,
            HiddenArg::GroupSizeY,
            HiddenArg::GroupSizeZ,
            HiddenArg::GridDims,
        ]
        .into_iter()
        .filter_map(|kind| {
            let offset = implicit.offset_of(kind)?;
            let (_, size) = implicit.layout.slot(kind)?;
            Some((offset as usize, size as usize, kind))
        })
        .collect();
        Self {
            entry: kernel.entry_address,
            rsrc: [
                kd.compute_pgm_rsrc1,
                // LDS_SIZE from the group segment, in 512-byte granules, as tinygrad does.
                kd.compute_pgm_rsrc2 | kernel.group_segment_size.div_ceil(512) << 15,
                kd.compute_pgm_rsrc3,
            ],
            kernarg_size: kernel.kernarg_size as usize,
            kernarg_layout: kernel.explicit_args().map(|a| a.offset).collect(),
            hidden,
            user_sgprs: kd.user_sgpr_count(),
            kernarg_sgpr,
            _image: image_bo,
        }
    }

    /// COMPUTE_USER_DATA_* for a launch with kernel arguments at `kernarg`: the kernarg
    /// pointer in its slot, zeros elsewhere.
    fn user_data(&self, kernarg: u64) -> Vec<u32> {
        let mut values = vec![0; self.user_sgprs as usize];
        let at = self.kernarg_sgpr as usize;
        values[at..at + 2].copy_from_slice(&[lo(kernarg), hi(kernarg)]);
        values
    }

    /// Kernel arguments: the buffer `operands` (`c = a + b` for vector_add), then `n`
    /// elements, in workgroups of `group`.
    fn kernarg(&self, s: &Session, operands: &[u64], n: u32, group: u32) -> Bo {
        let bo = s.gtt(4096);
        let buf = &mut bytes(&bo)[..self.kernarg_size];
        for (value, &offset) in operands.iter().zip(&self.kernarg_layout) {
            buf[offset as usize..][..8].copy_from_slice(&value.to_le_bytes());
        }
        buf[self.kernarg_layout[operands.len()] as usize..][..4].copy_from_slice(&n.to_le_bytes());
        for &(offset, size, kind) in &self.hidden {
            let value: u64 = match kind {
                HiddenArg::BlockCountX => u64::from(n.div_ceil(group)),
                HiddenArg::GroupSizeX => u64::from(group),
                _ => 1,
            };
            buf[offset..][..size].copy_from_slice(&value.to_le_bytes()[..size]);
        }
        bo
    }
}

fn fill_i32(bo: &Bo, f: impl Fn(usize) -> i32) {
    for (i, chunk) in bytes(bo).chunks_exact_mut(4).enumerate() {
        chunk.copy_from_slice(&f(i).to_le_bytes());
    }
}
fn i32_at(bo: &Bo, i: usize) -> i32 {
    i32::from_le_bytes(bytes(bo)[4 * i..4 * i + 4].try_into().unwrap())
}

#[test]
fn dispatch_direct_runs_a_clang_kernel_from_the_compute_registers() {
    let s = Session::small();
    let kernel = ClangKernel::load(&s);
    let n = 1000u32;
    let group = 64u32;
    let (lhs, rhs) = (s.vram(4096), s.vram(4096));
    let (c1, c2) = (s.vram(4096), s.vram(4096));
    fill_i32(&lhs, |i| i as i32);
    fill_i32(&rhs, |i| 3 * i as i32 - 7);
    bytes(&c1).fill(0xAB);
    bytes(&c2).fill(0xAB);
    let k1 = kernel.kernarg(&s, &[lhs.va, rhs.va, c1.va], n, group);
    // The second launch adds c1 to a, into c2.
    let k2 = kernel.kernarg(&s, &[lhs.va, c1.va, c2.va], n, group);
    let done = s.gtt(4096);
    let mut q = Pm4Queue::create(&s, 4096);

    // tinygrad's `exec`, then its `signal`, then a second launch that rewrites only
    // USER_DATA (the other registers keep their values).
    let mut stream = memory_barrier();
    stream.extend(acquire_mem());
    stream.extend(set_sh(
        reg::PGM_LO,
        &[lo(kernel.entry >> 8), hi(kernel.entry >> 8)],
    ));
    stream.extend(set_sh(reg::PGM_RSRC1, &kernel.rsrc[..2]));
    stream.extend(set_sh(reg::PGM_RSRC3, &kernel.rsrc[2..]));
    stream.extend(set_sh(reg::TMPRING_SIZE, &[0]));
    stream.extend(set_sh(reg::RESTART_X, &[0, 0, 0]));
    stream.extend(set_sh(reg::USER_DATA_0, &kernel.user_data(k1.va)));
    stream.extend(set_sh(reg::RESOURCE_LIMITS, &[0]));
    stream.extend(set_sh(reg::START_X, &[0, 0, 0, group, 1, 1, 0, 0]));
    // COMPUTE_SHADER_EN | FORCE_START_AT_000; the dimensions count workgroups.
    stream.extend(pkt3(op::DISPATCH_DIRECT, &[n.div_ceil(group), 1, 1, 0b101]));
    stream.extend(cs_partial_flush());
    stream.extend(release_mem(done.va, 1, 1, 0, 0));
    stream.extend(set_sh(reg::USER_DATA_0, &kernel.user_data(k2.va)));
    stream.extend(pkt3(op::DISPATCH_DIRECT, &[n.div_ceil(group), 1, 1, 0b101]));
    stream.extend(cs_partial_flush());
    stream.extend(release_mem(done.va + 8, 2, 1, 0, 0));
    q.submit(&stream);
    wait_for("both launches", || {
        atomic_u32(done.va + 8).load(Ordering::Acquire) == 2
    });
    q.drain();
    assert_eq!(atomic_u32(done.va).load(Ordering::Acquire), 1);
    for i in 0..n as usize {
        let sum = i as i32 + (3 * i as i32 - 7);
        assert_eq!(i32_at(&c1, i), sum, "c1[{i}]");
        assert_eq!(i32_at(&c2, i), sum + i as i32, "c2[{i}]");
    }
    assert!(bytes(&c1)[4 * n as usize..].iter().all(|&x| x == 0xAB));
    assert!(bytes(&c2)[4 * n as usize..].iter().all(|&x| x == 0xAB));
}

/// COMPUTE_DISPATCH_INITIATOR: COMPUTE_SHADER_EN | FORCE_START_AT_000 (the dimensions count
/// workgroups), and GFX10+'s CS_W32_EN (gc_11_0_0_sh_mask.h:
/// COMPUTE_DISPATCH_INITIATOR__CS_W32_EN__SHIFT 0xf).
const INITIATOR: u32 = 0b101;
const CS_W32_EN: u32 = 1 << 15;

/// tinygrad's `exec` on GFX11 up to DISPATCH_DIRECT and its CS_PARTIAL_FLUSH: RSRC1 with PRIV
/// (bit 20, "priv=1 on gfx11 for cwsr"), COMPUTE_PGM_RSRC3 at GFX11's address, the
/// architected-flat-scratch base (no scratch here), user data, the workgroup size, and the
/// initiator.
fn gfx11_exec(
    kernel: &ClangKernel,
    kernarg: u64,
    groups: u32,
    group: u32,
    initiator: u32,
) -> Vec<u32> {
    let mut stream = set_sh(reg::PGM_LO, &[lo(kernel.entry >> 8), hi(kernel.entry >> 8)]);
    stream.extend(set_sh(
        reg::PGM_RSRC1,
        &[kernel.rsrc[0] | 1 << 20, kernel.rsrc[1]],
    ));
    stream.extend(set_sh(reg::PGM_RSRC3_GFX11, &kernel.rsrc[2..]));
    stream.extend(set_sh(reg::TMPRING_SIZE, &[0]));
    stream.extend(set_sh(reg::DISPATCH_SCRATCH_BASE_LO, &[0]));
    stream.extend(set_sh(reg::RESTART_X, &[0, 0, 0]));
    stream.extend(set_sh(reg::USER_DATA_0, &kernel.user_data(kernarg)));
    stream.extend(set_sh(reg::RESOURCE_LIMITS, &[0]));
    stream.extend(set_sh(reg::START_X, &[0, 0, 0, group, 1, 1, 0, 0]));
    stream.extend(pkt3(op::DISPATCH_DIRECT, &[groups, 1, 1, initiator]));
    stream.extend(cs_partial_flush());
    stream
}

/// The simulated RX 7900 XTX runs PM4 dispatches on its GFX11 core, in the wave size the
/// initiator asks for: clang's wave32 `vector_add` with CS_W32_EN adds correctly; clang's
/// wave32 `atomic_counter` (one atomic per wave for the lanes of EXEC_LO, then a lane prefix
/// count) hands out every ticket once with CS_W32_EN, and without it runs as wave64, where the
/// same code counts only the 32 lanes of EXEC_LO and the `v_cmpx` that picks the atomic's lane
/// clears EXEC_HI for good (wave32 code on a wave64 dispatch, as on hardware): the counter
/// moves by 32 per 64-lane wave and the upper half of each wave stores nothing.
#[test]
fn dispatch_direct_runs_gfx1100_kernels_in_the_initiators_wave_size() {
    let s = Session::new(MachineConfig::rx7900xtx());
    let vector_add = ClangKernel::load_built(&s, "gfx1100", "vector_add");
    let atomic_counter = ClangKernel::load_built(&s, "gfx1100", "atomic_counter");
    let (n, group) = (1024u32, 64u32);
    let (lhs, rhs, sum) = (s.vram(4096), s.vram(4096), s.vram(4096));
    fill_i32(&lhs, |i| 5 * i as i32);
    fill_i32(&rhs, |i| 1 - 2 * i as i32);
    bytes(&sum).fill(0xAB);
    let (counter, old) = (s.vram(4096), s.vram(4096));
    let c0 = 100u32;
    atomic_u32(counter.va).store(c0, Ordering::Release);
    bytes(&old).fill(0xFF);
    let add_args = vector_add.kernarg(&s, &[lhs.va, rhs.va, sum.va], n, group);
    let count_args = atomic_counter.kernarg(&s, &[counter.va, old.va], n, group);
    let done = s.gtt(4096);
    let mut q = Pm4Queue::create(&s, 4096);

    let mut stream = gfx11_exec(
        &vector_add,
        add_args.va,
        n / group,
        group,
        INITIATOR | CS_W32_EN,
    );
    stream.extend(gfx11_exec(
        &atomic_counter,
        count_args.va,
        n / group,
        group,
        INITIATOR | CS_W32_EN,
    ));
    stream.extend(write_data(done.va, &[1]));
    q.submit(&stream);
    wait_for("the wave32 launches", || {
        atomic_u32(done.va).load(Ordering::Acquire) == 1
    });
    q.drain();
    for i in 0..n as usize {
        assert_eq!(i32_at(&sum, i), 5 * i as i32 + 1 - 2 * i as i32, "sum[{i}]");
    }
    assert_eq!(atomic_u32(counter.va).load(Ordering::Acquire), c0 + n);
    let mut tickets: Vec<u32> = (0..n as usize).map(|i| i32_at(&old, i) as u32).collect();
    tickets.sort_unstable();
    assert_eq!(tickets, (c0..c0 + n).collect::<Vec<_>>());

    // The same code as wave64.
    atomic_u32(counter.va).store(c0, Ordering::Release);
    bytes(&old).fill(0xFF);
    let mut stream = gfx11_exec(&atomic_counter, count_args.va, n / group, group, INITIATOR);
    stream.extend(write_data(done.va, &[2]));
    q.submit(&stream);
    wait_for("the wave64 launch", || {
        atomic_u32(done.va).load(Ordering::Acquire) == 2
    });
    q.drain();
    assert_eq!(atomic_u32(counter.va).load(Ordering::Acquire), c0 + n / 2);
    let mut tickets = Vec::new();
    for wave in 0..(n / 64) as usize {
        let first = i32_at(&old, 64 * wave) as u32;
        for lane in 0..64 {
            let got = i32_at(&old, 64 * wave + lane) as u32;
            if lane < 32 {
                assert_eq!(got, first + lane as u32, "wave {wave} lane {lane}");
            } else {
                assert_eq!(got, u32::MAX, "wave {wave} lane {lane} stored");
            }
        }
        tickets.push(first);
    }
    tickets.sort_unstable();
    assert_eq!(
        tickets,
        (0..n / 64).map(|w| c0 + 32 * w).collect::<Vec<_>>()
    );
}

#[test]
fn release_mem_writes_its_data_then_interrupts_and_the_event_wakes() {
    let s = Session::small();
    let (page, _) = s.event_page();
    let event = s.create_event(EventType::SIGNAL, false).unwrap();
    let silent = s.create_event(EventType::SIGNAL, false).unwrap();
    let data = s.gtt(4096);
    let mut q = Pm4Queue::create(&s, 4096);
    // 64-bit data, no interrupt; then tinygrad's timeline signal: the event id into the
    // event's mailbox slot, with an interrupt after the write is confirmed (INT_SEL 3).
    q.submit(&release_mem(data.va, 0x1122_3344_5566_7788, 2, 0, 0));
    let slot = page.va + 8 * u64::from(event.event_slot_index);
    q.submit(&release_mem(
        slot,
        u64::from(event.event_id),
        1,
        3,
        event.event_id,
    ));
    let mut events = [EventData::new(event.event_id)];
    let mut timeout = 30_000;
    let result = ioctls::wait_events(s.sys(), s.kfd, &mut events, true, &mut timeout).unwrap();
    assert_eq!(result, WaitResult::COMPLETE);
    // The data was written before the interrupt was raised.
    assert_eq!(
        atomic_u64(data.va).load(Ordering::Acquire),
        0x1122_3344_5566_7788
    );
    // (The mailbox slot itself is KFD's again once it has handled the interrupt.)
    // DATA_SEL 1 writes the low 32 bits only.
    atomic_u64(data.va + 8).store(u64::MAX, Ordering::Release);
    q.submit(&release_mem(data.va + 8, 0xAAAA_BBBB_0000_0005, 1, 0, 0));
    q.drain();
    assert_eq!(
        atomic_u64(data.va + 8).load(Ordering::Acquire),
        0xFFFF_FFFF_0000_0005
    );
    // An event whose slot nobody wrote stays unsignalled.
    let mut events = [EventData::new(silent.event_id)];
    let mut timeout = 0;
    let result = ioctls::wait_events(s.sys(), s.kfd, &mut events, true, &mut timeout).unwrap();
    assert_eq!(result, WaitResult::TIMEOUT);
}

#[test]
fn release_mem_timestamps_come_from_the_gpu_clock_and_grow() {
    let s = Session::small();
    let data = s.gtt(4096);
    let mut q = Pm4Queue::create(&s, 4096);
    // tinygrad's `timestamp`: a RELEASE_MEM without data, one with the GPU clock (DATA_SEL
    // 3), ACQUIRE_MEM; twice, with a write between them.
    for (i, va) in [data.va, data.va + 16].into_iter().enumerate() {
        let mut stream = release_mem(0, 0, 0, 0, 0);
        stream.extend(release_mem(va, 0, 3, 0, 0));
        stream.extend(acquire_mem());
        stream.extend(write_data(data.va + 64, &[i as u32 + 1]));
        q.submit(&stream);
    }
    q.drain();
    let (t0, t1) = (
        atomic_u64(data.va).load(Ordering::Acquire),
        atomic_u64(data.va + 16).load(Ordering::Acquire),
    );
    assert_ne!(t0, 0, "a timestamp was written");
    assert!(t1 >= t0, "{t1} < {t0}");
    assert_eq!(atomic_u32(data.va + 64).load(Ordering::Acquire), 2);
}

#[test]
fn wait_reg_mem_blocks_the_queue_until_memory_changes() {
    let (s, engine) = watched();
    let data = s.gtt(4096);
    let (flag, marker) = (data.va, data.va + 8);
    let mut q = Pm4Queue::create(&s, 4096);
    let running = engine.queues.lock().unwrap()[0].clone();
    q.write_marker_after_wait(flag, marker);
    settle(&*running);
    // Waiting: nothing after the wait has run, and the read pointer stays at the wait.
    assert_eq!(atomic_u32(marker).load(Ordering::Acquire), 0);
    assert_eq!(q.rptr(), 0);
    // A value that does not satisfy ">= 5" keeps it waiting.
    atomic_u32(flag).store(4, Ordering::Release);
    settle(&*running);
    assert_eq!(atomic_u32(marker).load(Ordering::Acquire), 0);
    atomic_u32(flag).store(5, Ordering::Release);
    wait_for("the write after the wait", || {
        atomic_u32(marker).load(Ordering::Acquire) == 7
    });
    q.drain();
}

impl Pm4Queue<'_> {
    /// WAIT_REG_MEM until `flag >= 5`, then WRITE_DATA 7 to `marker`.
    fn write_marker_after_wait(&mut self, flag: u64, marker: u64) {
        let mut stream = wait_memory(flag, 5, 5);
        stream.extend(write_data(marker, &[7]));
        self.submit(&stream);
    }
}

#[test]
fn an_indirect_buffer_runs_its_commands_and_the_ring_continues_after_it() {
    let (s, engine) = watched();
    let data = s.gtt(4096);
    let ib = s.gtt(4096);
    // The IB: a write, a RELEASE_MEM, and a type-3 NOP with a body to skip.
    let mut commands = write_data(data.va, &[1, 2, 3]);
    commands.extend(pkt3(op::NOP, &[0xDEAD, 0xBEEF]));
    commands.extend(release_mem(data.va + 16, 4, 1, 0, 0));
    for (i, dw) in commands.iter().enumerate() {
        atomic_u32(ib.va + 4 * i as u64).store(*dw, Ordering::Relaxed);
    }
    let mut q = Pm4Queue::create(&s, 4096);
    let mut stream = indirect_buffer(ib.va, commands.len() as u32);
    // The ring's next command sees what the IB wrote: it waits for the IB's last write.
    stream.extend(wait_memory(data.va + 16, 4, 3));
    stream.extend(write_data(data.va + 32, &[5]));
    q.submit(&stream);
    q.drain();
    let words: Vec<u32> = (0..9)
        .map(|i| atomic_u32(data.va + 4 * i).load(Ordering::Acquire))
        .collect();
    assert_eq!(words, [1, 2, 3, 0, 4, 0, 0, 0, 5]);

    // An IB that calls an IB (compute rings run one level) stops the queue: nothing after
    // it runs, the read pointer stays before it.
    let nested = indirect_buffer(ib.va, commands.len() as u32);
    for (i, dw) in nested.iter().enumerate() {
        atomic_u32(ib.va + 2048 + 4 * i as u64).store(*dw, Ordering::Relaxed);
    }
    let before = q.rptr();
    let mut stream = indirect_buffer(ib.va + 2048, nested.len() as u32);
    stream.extend(write_data(data.va + 64, &[6]));
    q.submit(&stream);
    settle(&*engine.queues.lock().unwrap()[0]);
    assert_eq!(atomic_u32(data.va + 64).load(Ordering::Acquire), 0);
    assert_eq!(q.rptr(), before);
}

#[test]
fn the_ring_wraps_and_the_read_pointer_wraps_at_its_size() {
    let s = Session::small();
    let data = s.gtt(4096);
    // A 4 KiB ring (1024 dwords): 900 five-dword packets wrap it four times, some split at
    // its end.
    let mut q = Pm4Queue::create(&s, 4096);
    assert_eq!(q.ring_dwords(), 1024);
    for i in 0..900u64 {
        q.submit(&write_data(data.va + 4 * i, &[i as u32 + 1]));
        if i % 150 == 149 {
            q.drain();
        }
    }
    q.drain();
    assert_eq!(q.wptr, 4500);
    assert_eq!(u64::from(q.rptr()), 4500 % 1024);
    for i in 0..900u64 {
        assert_eq!(
            atomic_u32(data.va + 4 * i).load(Ordering::Acquire),
            i as u32 + 1
        );
    }
}

#[test]
fn a_partly_written_command_waits_for_the_rest() {
    let (s, engine) = watched();
    let data = s.gtt(4096);
    let mut q = Pm4Queue::create(&s, 4096);
    let command = write_data(data.va, &[9]);
    // Publish only the first three dwords of the five.
    q.submit(&command[..3]);
    settle(&*engine.queues.lock().unwrap()[0]);
    assert_eq!(atomic_u32(data.va).load(Ordering::Acquire), 0);
    assert_eq!(q.rptr(), 0);
    q.submit(&command[3..]);
    q.drain();
    assert_eq!(atomic_u32(data.va).load(Ordering::Acquire), 9);
}

#[test]
fn an_unmodelled_register_stops_the_queue_and_a_fault_is_a_memory_event() {
    let (s, engine) = watched();
    let data = s.gtt(4096);
    let mut q = Pm4Queue::create(&s, 4096);
    // SPI_SHADER_PGM_LO_PS (0x2C08): a graphics register a compute queue does not program.
    let mut stream = set_sh(0x2C08, &[1]);
    stream.extend(write_data(data.va, &[1]));
    q.submit(&stream);
    settle(&*engine.queues.lock().unwrap()[0]);
    assert_eq!(atomic_u32(data.va).load(Ordering::Acquire), 0);
    assert_eq!(q.rptr(), 0);
    ioctls::destroy_queue(s.sys(), s.kfd, q.queue_id).unwrap();

    s.event_page();
    let memory = s.create_event(EventType::MEMORY, false).unwrap();
    let hole = s.reserve_va(4096);
    let mut q = Pm4Queue::create(&s, 4096);
    let mut stream = write_data(hole + 8, &[1]);
    stream.extend(write_data(data.va + 4, &[2]));
    q.submit(&stream);
    let mut events = [EventData::new(memory.event_id)];
    let mut timeout = 30_000;
    let result = ioctls::wait_events(s.sys(), s.kfd, &mut events, true, &mut timeout).unwrap();
    assert_eq!(result, WaitResult::COMPLETE);
    assert_eq!(events[0].memory_exception().va, hole);
    assert_eq!(atomic_u32(data.va + 4).load(Ordering::Acquire), 0);
    ioctls::destroy_queue(s.sys(), s.kfd, q.queue_id).unwrap();
}
