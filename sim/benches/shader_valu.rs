//! Shader-core throughput on a VALU-heavy kernel: lane operations (VALU instructions times
//! active lanes) per second on one worker thread, plus a compiled corpus kernel for a realistic
//! instruction mix.
//!
//! `cargo bench -p amdgpu-sim --bench shader_valu`

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use amdgpu_sim::dispatch::{DispatchRequest, InterruptSink, ScratchSetup, ShaderCore};
use amdgpu_sim::shader::Gfx9ShaderCore;
use amdgpu_sim::target::GfxTarget;
use amdgpu_sim::vm::{Access, FaultKind, GpuVm, HostSpan, MemoryFault};
use aql::KernelDispatchPacket;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use zerocopy::IntoBytes;

/// Backing bytes of one mapping.
type Bytes = Arc<Box<[AtomicU8]>>;

/// Host bytes mapped at their own address: va -> (length, bytes, executable).
#[derive(Default)]
struct Vm {
    maps: Mutex<BTreeMap<u64, (u64, Bytes, bool)>>,
}

impl Vm {
    fn alloc(&self, len: usize, executable: bool) -> (u64, Bytes) {
        let bytes: Bytes = Arc::new((0..len + 4096).map(|_| AtomicU8::new(0)).collect());
        let base = bytes.as_ptr() as u64;
        let va = base.next_multiple_of(4096);
        self.maps
            .lock()
            .expect("lock")
            .insert(va, (len as u64, Arc::clone(&bytes), executable));
        (va, bytes)
    }

    fn write(&self, va: u64, data: &[u8]) {
        let maps = self.maps.lock().expect("lock");
        let (start, (_, bytes, _)) = maps.range(..=va).next_back().expect("mapped");
        let off = (start - bytes.as_ptr() as u64 + (va - start)) as usize;
        for (i, b) in data.iter().enumerate() {
            bytes[off + i].store(*b, Ordering::Relaxed);
        }
    }
}

impl GpuVm for Vm {
    fn translate(&self, va: u64, len: u64, access: Access) -> Result<HostSpan, MemoryFault> {
        let maps = self.maps.lock().expect("lock");
        let fault = MemoryFault {
            va,
            access,
            kind: FaultKind::NotPresent,
        };
        let (&start, (size, bytes, exec)) = maps.range(..=va).next_back().ok_or(fault)?;
        let off = (start - bytes.as_ptr() as u64) as usize;
        let span = HostSpan {
            va_start: start,
            va_end: start + size,
            host: bytes[off..].as_ptr().cast::<u8>().cast_mut(),
            writable: true,
            executable: *exec,
            keep_alive: Arc::clone(bytes) as Arc<dyn std::any::Any + Send + Sync>,
        };
        if !span.contains(va, len) {
            return Err(fault);
        }
        Ok(span)
    }

    fn generation(&self) -> u64 {
        0
    }
}

struct NoInterrupts;

impl InterruptSink for NoInterrupts {
    fn end_of_pipe(&self, _: u32) {}
    fn shader_message(&self, _: u32) {}
    fn vm_fault(&self, _: MemoryFault) {}
}

/// out[i] = f(i) after `s4` iterations of 8 VALU instructions (fma, mul, add, xor, fmac, max,
/// shift, add), s[0:1] = kernarg pointer. Encodings from llvm-mc-19 -mcpu=gfx90a.
const VALU_LOOP: &[u32] = &[
    0xC006_0080,
    0x0000_0000, // s_load_dwordx2 s[2:3], s[0:1], 0x0
    0xC002_0100,
    0x0000_0008, // s_load_dword s4, s[0:1], 0x8
    0x7E02_0D00, // v_cvt_f32_u32 v1, v0
    0x7E04_02FF,
    0x3F80_0001, // v_mov_b32 v2, 0x3f800001
    0x7E06_02F0, // v_mov_b32 v3, 0.5
    0x7E08_0280, // v_mov_b32 v4, 0
    0x7E0A_0300, // v_mov_b32 v5, v0
    0x7E0C_0280, // v_mov_b32 v6, 0
    0x7E0E_02F2, // v_mov_b32 v7, 1.0
    0x7E10_0280, // v_mov_b32 v8, 0
    0x7E12_0281, // v_mov_b32 v9, 1
    0x7E14_0280, // v_mov_b32 v10, 0
    0xBF8C_C07F, // s_waitcnt lgkmcnt(0)
    // loop:
    0xD1CB_0001,
    0x040E_0501, // v_fma_f32 v1, v1, v2, v3
    0x0A08_0501, // v_mul_f32 v4, v1, v2
    0x680A_0105, // v_add_u32 v5, v5, v0
    0x2A0C_0B06, // v_xor_b32 v6, v6, v5
    0x760E_0901, // v_fmac_f32 v7, v1, v4
    0x1610_0F08, // v_max_f32 v8, v8, v7
    0x2412_1281, // v_lshlrev_b32 v9, 1, v9
    0x0214_090A, // v_add_f32 v10, v10, v4
    0x8084_8104, // s_sub_u32 s4, s4, 1
    0xBF07_8004, // s_cmp_lg_u32 s4, 0
    0xBF85_FFF4, // s_cbranch_scc1 loop
    0x0202_1501, // v_add_f32 v1, v1, v10
    0x680C_1306, // v_add_u32 v6, v6, v9
    0x0202_1101, // v_add_f32 v1, v1, v8
    0x7E0C_0D06, // v_cvt_f32_u32 v6, v6
    0x0202_0D01, // v_add_f32 v1, v1, v6
    0x2400_0082, // v_lshlrev_b32 v0, 2, v0
    0xDC70_8000,
    0x0002_0100, // global_store_dword v0, v1, s[2:3]
    0xBF81_0000, // s_endpgm
];

const VALU_PER_ITERATION: u64 = 8;

fn valu_bench(c: &mut Criterion) {
    let vm = Vm::default();
    let (code, _code_mem) = vm.alloc(4096, true);
    let kd = amdgpu_loader::KernelDescriptor {
        kernel_code_entry_byte_offset: 256,
        compute_pgm_rsrc1: 2 | 3 << 16 | 3 << 18 | 1 << 21 | 1 << 23,
        compute_pgm_rsrc2: 2 << 1 | 1 << 7,
        compute_pgm_rsrc3: 3,
        kernel_code_properties: 1 << 3,
        ..Default::default()
    };
    vm.write(code, kd.as_bytes());
    vm.write(code + 256, VALU_LOOP.as_bytes());
    let (out, _out_mem) = vm.alloc(4096, false);
    let (args, _args_mem) = vm.alloc(64, false);
    let iterations = 20_000u32;
    let mut kernarg = out.to_le_bytes().to_vec();
    kernarg.extend(iterations.to_le_bytes());
    vm.write(args, &kernarg);
    let items = 256u32;
    let request = DispatchRequest {
        packet: KernelDispatchPacket {
            header: 2,
            setup: 1,
            workgroup_size_x: items as u16,
            workgroup_size_y: 1,
            workgroup_size_z: 1,
            grid_size_x: items,
            grid_size_y: 1,
            grid_size_z: 1,
            kernel_object: code,
            kernarg_address: args,
            ..KernelDispatchPacket::default()
        },
        packet_va: 0,
        queue_va: 0,
        dispatch_id: 0,
        scratch: ScratchSetup::default(),
        target: GfxTarget::Gfx90a,
        lds_bytes_per_workgroup: 65536,
    };
    let core = Gfx9ShaderCore::new(1);
    let abort = AtomicBool::new(false);
    core.dispatch(&request, &vm, &NoInterrupts, &abort)
        .expect("warm-up dispatch");
    let lane_ops = u64::from(items) * u64::from(iterations) * VALU_PER_ITERATION;
    let mut group = c.benchmark_group("shader");
    group.throughput(Throughput::Elements(lane_ops));
    group.sample_size(10);
    group.bench_function("valu_lane_ops_one_worker", |b| {
        b.iter(|| {
            core.dispatch(&request, &vm, &NoInterrupts, &abort)
                .expect("dispatch")
        });
    });
    group.finish();
}

criterion_group!(benches, valu_bench);
criterion_main!(benches);
