//! Shader-core throughput on a VALU-heavy kernel: lane operations (VALU operations times
//! active lanes) per second on one worker thread, for the GFX9 core (gfx90a, wave64) and the
//! GFX11 core (gfx1100, wave32) on the same loop.
//!
//! `cargo bench -p amdgpu-sim --bench shader_valu`

use std::sync::atomic::AtomicBool;

use amdgpu_sim::dispatch::{DispatchRequest, InterruptSink, ScratchSetup, ShaderCore};
use amdgpu_sim::host_vm::HostVm;
use amdgpu_sim::shader::{Gfx9ShaderCore, Gfx11ShaderCore};
use amdgpu_sim::target::GfxTarget;
use amdgpu_sim::vm::MemoryFault;
use aql::KernelDispatchPacket;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use zerocopy::IntoBytes;

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

/// [`VALU_LOOP`] for gfx1100 (wave32): the same registers and the same 8 operations per
/// iteration, two of them (the mul and the integer add) in one VOPD dual issue, so 7
/// instructions. Encodings from llvm-mc-22 -mcpu=gfx1100.
const VALU_LOOP_GFX11: &[u32] = &[
    0xF404_0080,
    0xF800_0000, // s_load_b64 s[2:3], s[0:1], 0x0
    0xF400_0100,
    0xF800_0008, // s_load_b32 s4, s[0:1], 0x8
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
    0xBF89_FC07, // s_waitcnt lgkmcnt(0)
    // loop:
    0xD613_0001,
    0x040E_0501, // v_fma_f32 v1, v1, v2, v3
    0xC8E0_0501,
    0x0404_0B00, // v_dual_mul_f32 v4, v1, v2 :: v_dual_add_nc_u32 v5, v0, v5
    0x3A0C_0B06, // v_xor_b32 v6, v6, v5
    0x560E_0901, // v_fmac_f32 v7, v1, v4
    0x2010_0F08, // v_max_f32 v8, v8, v7
    0x3012_1281, // v_lshlrev_b32 v9, 1, v9
    0x0614_090A, // v_add_f32 v10, v10, v4
    0x8084_8104, // s_sub_u32 s4, s4, 1
    0xBF07_8004, // s_cmp_lg_u32 s4, 0
    0xBFA2_FFF4, // s_cbranch_scc1 loop
    0x0602_1501, // v_add_f32 v1, v1, v10
    0x4A0C_1306, // v_add_nc_u32 v6, v6, v9
    0x0602_1101, // v_add_f32 v1, v1, v8
    0x7E0C_0D06, // v_cvt_f32_u32 v6, v6
    0x0602_0D01, // v_add_f32 v1, v1, v6
    0x3000_0082, // v_lshlrev_b32 v0, 2, v0
    0xDC6A_0000,
    0x0002_0100, // global_store_b32 v0, v1, s[2:3]
    0xBFB0_0000, // s_endpgm
];

/// One shader core and its build of the loop.
struct Variant {
    /// The criterion function's name.
    name: &'static str,
    target: GfxTarget,
    code: &'static [u32],
    core: Box<dyn ShaderCore>,
}

/// Loop iterations per lane.
const ITERATIONS: u32 = 20_000;
/// Work-items of one dispatch: 4 wave64 or 8 wave32, one workgroup.
const ITEMS: u32 = 256;

/// A dispatch of `code` as a one-workgroup kernel of [`ITEMS`] lanes on `target`, with its
/// memory in `vm`.
fn valu_request(vm: &HostVm, target: GfxTarget, code: &[u32]) -> DispatchRequest {
    let code_mem = vm.map(4096, 4096, true, true);
    let kd = amdgpu_loader::KernelDescriptor {
        kernel_code_entry_byte_offset: 256,
        compute_pgm_rsrc1: 2 | 3 << 16 | 3 << 18 | 1 << 21 | 1 << 23,
        compute_pgm_rsrc2: 2 << 1 | 1 << 7,
        compute_pgm_rsrc3: 3,
        // Kernarg segment pointer; on GFX11 also ENABLE_WAVEFRONT_SIZE32 (bit 10).
        kernel_code_properties: if target.is_gfx9() {
            1 << 3
        } else {
            1 << 3 | 1 << 10
        },
        ..Default::default()
    };
    code_mem.write(0, kd.as_bytes());
    code_mem.write(256, code.as_bytes());
    let out_mem = vm.map(4096, 4096, true, false);
    let args_mem = vm.map(64, 4096, true, false);
    let mut kernarg = out_mem.va().to_le_bytes().to_vec();
    kernarg.extend(ITERATIONS.to_le_bytes());
    args_mem.write(0, &kernarg);
    DispatchRequest {
        packet: KernelDispatchPacket {
            header: 2,
            setup: 1,
            workgroup_size_x: ITEMS as u16,
            workgroup_size_y: 1,
            workgroup_size_z: 1,
            grid_size_x: ITEMS,
            grid_size_y: 1,
            grid_size_z: 1,
            kernel_object: code_mem.va(),
            kernarg_address: args_mem.va(),
            ..KernelDispatchPacket::default()
        },
        packet_va: 0,
        queue_va: 0,
        dispatch_id: 0,
        scratch: ScratchSetup::default(),
        target,
        lds_bytes_per_workgroup: 65536,
    }
}

fn valu_bench(c: &mut Criterion) {
    let vm = HostVm::new();
    let cores = [
        Variant {
            name: "valu_lane_ops_one_worker",
            target: GfxTarget::Gfx90a,
            code: VALU_LOOP,
            core: Box::new(Gfx9ShaderCore::new(1)),
        },
        Variant {
            name: "valu_lane_ops_one_worker_gfx11_wave32",
            target: GfxTarget::Gfx1100,
            code: VALU_LOOP_GFX11,
            core: Box::new(Gfx11ShaderCore::new(1)),
        },
    ];
    let lane_ops = u64::from(ITEMS) * u64::from(ITERATIONS) * VALU_PER_ITERATION;
    let abort = AtomicBool::new(false);
    let mut group = c.benchmark_group("shader");
    group.throughput(Throughput::Elements(lane_ops));
    group.sample_size(10);
    for variant in &cores {
        let request = valu_request(&vm, variant.target, variant.code);
        let core = &variant.core;
        core.dispatch(&request, &vm, &NoInterrupts, &abort)
            .expect("warm-up dispatch");
        group.bench_function(variant.name, |b| {
            b.iter(|| {
                core.dispatch(&request, &vm, &NoInterrupts, &abort)
                    .expect("dispatch")
            });
        });
    }
    group.finish();
}

criterion_group!(benches, valu_bench);
criterion_main!(benches);
