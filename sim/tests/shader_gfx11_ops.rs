//! GFX11 instructions beyond the GFX9 ones the core shares: DPP8 and the GFX10+ DPP16
//! controls, typed buffers (MTBUF), parameter interpolation (VINTERP) and WMMA, on
//! hand-assembled gfx1100 code in wave32 and wave64, checked against results computed here.
//!
//! The words were assembled with `llvm-mc-22 -arch=amdgcn -mcpu=gfx1100 -show-encoding`
//! (wave64 parts with `-mattr=+wavefrontsize64`); the source is beside each word. Clang's own
//! WMMA and DPP8 code runs too: `shader_data/gfx11_ops.cl`, built by
//! `shader_data/build-gfx11-ops.sh` into `shader_data/gfx11_ops/gfx1100/gfx11_ops.co`.

mod shader_support;

use std::path::Path;

use amdgpu_loader::NoExternals;
use amdgpu_sim::dispatch::DispatchError;
use amdgpu_sim::target::GfxTarget;
use shader_support::{Arg, Gpu, Loaded};

/// v1 = id + 64 (id: the work-item id in the workgroup), v2 = v4 = 0xdead; kernarg pointer in s[8:9].
const PROLOGUE: &[u32] = &[
    0xf4040200, 0xf8000000, // s_load_b64 s[8:9], s[0:1], 0x0
    0x360000ff, 0x000003ff, // v_and_b32_e32 v0, 0x3ff, v0
    0x4a0200c0, // v_add_nc_u32_e32 v1, 64, v0
    0x7e0402ff, 0x0000dead, // v_mov_b32_e32 v2, 0xdead
    0x7e0802ff, 0x0000dead, // v_mov_b32_e32 v4, 0xdead
];

/// Restore EXEC (wave32), store v2 at `out[gid]` and v4 at `out[64 + gid]` (64-item workgroups).
const EPILOGUE32: &[u32] = &[
    0xbefe00c1, // s_mov_b32 exec_lo, -1
    0x30060082, // v_lshlrev_b32_e32 v3, 2, v0
    0x84078902, // s_lshl_b32 s7, s2, 9
    0x4a060607, // v_add_nc_u32_e32 v3, s7, v3
    0xbf89fc07, // s_waitcnt lgkmcnt(0)
    0xdc6a0000, 0x00080203, // global_store_b32 v3, v2, s[8:9]
    0xdc6a0100, 0x00080403, // global_store_b32 v3, v4, s[8:9] offset:256
    0xbfb00000, // s_endpgm
];

/// [`EPILOGUE32`] in wave64.
const EPILOGUE64: &[u32] = &[
    0xbefe01c1, // s_mov_b64 exec, -1
    0x30060082, // v_lshlrev_b32_e32 v3, 2, v0
    0x84078902, // s_lshl_b32 s7, s2, 9
    0x4a060607, // v_add_nc_u32_e32 v3, s7, v3
    0xbf89fc07, // s_waitcnt lgkmcnt(0)
    0xdc6a0000, 0x00080203, // global_store_b32 v3, v2, s[8:9]
    0xdc6a0100, 0x00080403, // global_store_b32 v3, v4, s[8:9] offset:256
    0xbfb00000, // s_endpgm
];

/// DPP8 lane reversal with lane 5 of each wave inactive, without and with FI.
const DPP8_FI: &[u32] = &[
    0xbefe00ff, 0xffffffdf, // s_mov_b32 exec_lo, 0xffffffdf
    0x7e0402e9, 0x05397701, // v_mov_b32_dpp v2, v1 dpp8:[7,6,5,4,3,2,1,0]
    0x7e0802ea, 0x05397701, // v_mov_b32_dpp v4, v1 dpp8:[7,6,5,4,3,2,1,0] fi:1
];

/// row_share and row_xmask (with bound_ctrl and fi) in wave32.
const ROW_SHARE_XMASK32: &[u32] = &[
    0x4a0400fa,
    0xff015301, // v_add_nc_u32_dpp v2, v1, v0 row_share:3 row_mask:0xf bank_mask:0xf
    0x4a0800fa,
    0xff0d6501, // v_add_nc_u32_dpp v4, v1, v0 row_xmask:5 row_mask:0xf bank_mask:0xf bound_ctrl:1 fi:1
];

/// row_share (rows 1 and 3 masked off) and row_shr without bound_ctrl in wave64.
const ROW_SHARE_XMASK64: &[u32] = &[
    0x4a0400fa,
    0x5f015e01, // v_add_nc_u32_dpp v2, v1, v0 row_share:14 row_mask:0x5 bank_mask:0xf
    0x4a0800fa,
    0xff011201, // v_add_nc_u32_dpp v4, v1, v0 row_shr:2 row_mask:0xf bank_mask:0xf
];

/// DPP8 on a VOP3, DPP16 row_mirror with a negated float source, a VOPC DPP16.
const VOP3_AND_VOPC_DPP: &[u32] = &[
    0xd5250002, 0x000200e9,
    0xb6d24901, // v_add_nc_u32_e64_dpp v2, v1, v0 dpp8:[1,1,1,1,5,5,5,5]
    0x7e0a0d01, // v_cvt_f32_u32_e32 v5, v1
    0x7e0c02f2, // v_mov_b32_e32 v6, 1.0
    0xd5030004, 0x20020cfa,
    0xff014005, // v_add_f32_e64_dpp v4, -v5, v6 row_mirror row_mask:0xf bank_mask:0xf
    0x7c9802fa,
    0xff00b101, // v_cmp_gt_u32 vcc_lo, v1, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
    0xd5010005, 0x01a9fe80, 0x00000100, // v_cndmask_b32_e64 v5, 0, 0x100, vcc_lo
    0xd5870004, 0x20000104, // v_cvt_u32_f32_e64 v4, -v4
    0x4a080b04, // v_add_nc_u32_e32 v4, v4, v5
];

/// Run `body` between [`PROLOGUE`] and the epilogue on one 64-item workgroup (two wave32
/// waves or one wave64 wave); `init` runs first (it may set up SGPRs from s[8:9]'s buffer).
/// Returns v2 and v4 of each work-item.
fn run(gpu: &Gpu, body: &[u32], wave64: bool, extra: &[u8]) -> (Vec<u32>, Vec<u32>) {
    let epilogue = if wave64 { EPILOGUE64 } else { EPILOGUE32 };
    let code: Vec<u32> = [PROLOGUE, body, epilogue].concat();
    let raw = gpu.load_raw_waves(&code, wave64);
    let out = gpu.buffer(512);
    out.fill(0xee);
    let mut kernarg = out.va.to_le_bytes().to_vec();
    kernarg.extend_from_slice(extra);
    let stats = gpu
        .dispatch_raw(&raw, [64, 1, 1], [64, 1, 1], &kernarg)
        .unwrap();
    assert_eq!(stats.waves, if wave64 { 1 } else { 2 });
    let v = out.u32s();
    (v[..64].to_vec(), v[64..128].to_vec())
}

/// The value [`PROLOGUE`] puts in v1 of work-item `id`.
fn v1(id: u32) -> u32 {
    id + 64
}

const UNWRITTEN: u32 = 0xdead;

#[test]
fn dpp8_reads_zero_from_inactive_lanes_unless_fi() {
    let gpu = Gpu::new(GfxTarget::Gfx1100);
    let (v2, v4) = run(&gpu, DPP8_FI, false, &[]);
    for id in 0..64u32 {
        let (lane, base) = (id % 32, id - id % 32);
        let src = lane ^ 7;
        let (want2, want4) = if lane == 5 {
            (UNWRITTEN, UNWRITTEN)
        } else if src == 5 {
            (0, v1(base + src))
        } else {
            (v1(base + src), v1(base + src))
        };
        assert_eq!(
            (v2[id as usize], v4[id as usize]),
            (want2, want4),
            "item {id}"
        );
    }
}

#[test]
fn row_share_and_row_xmask_in_wave32() {
    let gpu = Gpu::new(GfxTarget::Gfx1100);
    let (v2, v4) = run(&gpu, ROW_SHARE_XMASK32, false, &[]);
    for id in 0..64u32 {
        let row = id & !15;
        assert_eq!(v2[id as usize], v1(row + 3) + id, "row_share item {id}");
        assert_eq!(
            v4[id as usize],
            v1(row + ((id & 15) ^ 5)) + id,
            "row_xmask item {id}"
        );
    }
}

#[test]
fn row_masks_and_out_of_row_lanes_in_wave64() {
    let gpu = Gpu::new(GfxTarget::Gfx1100);
    let (v2, v4) = run(&gpu, ROW_SHARE_XMASK64, true, &[]);
    for id in 0..64u32 {
        let want2 = if (id / 16) % 2 == 0 {
            v1((id & !15) + 14) + id
        } else {
            UNWRITTEN
        };
        let want4 = if id % 16 >= 2 {
            v1(id - 2) + id
        } else {
            UNWRITTEN
        };
        assert_eq!(
            (v2[id as usize], v4[id as usize]),
            (want2, want4),
            "item {id}"
        );
    }
}

#[test]
fn vop3_dpp8_float_dpp16_and_compare_dpp16() {
    let gpu = Gpu::new(GfxTarget::Gfx1100);
    let (v2, v4) = run(&gpu, VOP3_AND_VOPC_DPP, false, &[]);
    for id in 0..64u32 {
        let quad_src = (id & !7) + if id & 4 != 0 { 5 } else { 1 };
        assert_eq!(v2[id as usize], v1(quad_src) + id, "dpp8 item {id}");
        let mirrored = v1((id & !15) + 15 - (id & 15));
        let greater = if id % 2 == 0 { 0x100 } else { 0 };
        assert_eq!(v4[id as usize], mirrored - 1 + greater, "item {id}");
    }
}

#[test]
fn gfx9_only_dpp_controls_are_illegal_on_gfx11() {
    let gpu = Gpu::new(GfxTarget::Gfx1100);
    // v_mov_b32_dpp v2, v1 with DPP_CTRL 0x130 (GFX9's wave_shl:1; llvm-mc refuses it for
    // gfx1100, and llvm-objdump prints the word as an invalid dpp_ctrl).
    let raw = gpu.load_raw(&[0x7e0402fa, 0xff013001, 0xbfb00000]);
    let err = gpu
        .dispatch_raw(&raw, [32, 1, 1], [32, 1, 1], &[])
        .unwrap_err();
    let DispatchError::IllegalInstruction { pc, mnemonic, .. } = err else {
        panic!("{err:?}");
    };
    assert_eq!(pc, raw.entry);
    assert!(mnemonic.contains("v_mov_b32"), "{mnemonic}");
}

/// Typed loads in wave32 through a structured V# (s[12:15], 4-byte records) and a raw one (s[16:19]); each result's four dwords go to `out + 1024 k + 16 id`.
const TYPED_LOADS: &[u32] = &[
    0xf4040200, 0xf8000000, // s_load_b64 s[8:9], s[0:1], 0x0
    0xf40c0300, 0xf8000008, // s_load_b256 s[12:19], s[0:1], 0x8
    0x360000ff, 0x000003ff, // v_and_b32_e32 v0, 0x3ff, v0
    0x30020082, // v_lshlrev_b32_e32 v1, 2, v0
    0x30060084, // v_lshlrev_b32_e32 v3, 4, v0
    0xbf89fc07, // s_waitcnt lgkmcnt(0)
    0xe9518000,
    0x80830a00, // tbuffer_load_format_xyzw v[10:13], v0, s[12:15], 0 format:[BUF_FMT_8_8_8_8_UNORM] idxen
    0xbf8903f7, // s_waitcnt vmcnt(0)
    0xdc760000, 0x00080a03, // global_store_b128 v3, v[10:13], s[8:9]
    0xe8e18000,
    0x80830a00, // tbuffer_load_format_xyzw v[10:13], v0, s[12:15], 0 format:[BUF_FMT_16_16_SINT] idxen
    0xbf8903f7, // s_waitcnt vmcnt(0)
    0xdc760400, 0x00080a03, // global_store_b128 v3, v[10:13], s[8:9] offset:1024
    0x7e1802ff, 0x00001234, // v_mov_b32_e32 v12, 0x1234
    0x7e1a02ff, 0x00005678, // v_mov_b32_e32 v13, 0x5678
    0xe8788000,
    0x80830a00, // tbuffer_load_format_xy v[10:11], v0, s[12:15], 0 format:[BUF_FMT_8_8_SNORM] idxen
    0xbf8903f7, // s_waitcnt vmcnt(0)
    0xdc760800, 0x00080a03, // global_store_b128 v3, v[10:13], s[8:9] offset:2048
    0xe9c90004,
    0x80440a01, // tbuffer_load_format_xyz v[10:12], v1, s[16:19], 0 format:[BUF_FMT_16_16_16_16_FLOAT] offen offset:4
    0xbf8903f7, // s_waitcnt vmcnt(0)
    0xdc760c00, 0x00080a03, // global_store_b128 v3, v[10:13], s[8:9] offset:3072
    0xbfb00000, // s_endpgm
];

/// Typed stores in wave64: RGBA8 UNORM records through the structured V# (s[12:15]), 16_16_FLOAT pairs and saturated 8_SINT bytes through the raw one (s[16:19]).
const TYPED_STORES: &[u32] = &[
    0xf40c0300, 0xf8000008, // s_load_b256 s[12:19], s[0:1], 0x8
    0x360000ff, 0x000003ff, // v_and_b32_e32 v0, 0x3ff, v0
    0x30020082, // v_lshlrev_b32_e32 v1, 2, v0
    0x7e140d00, // v_cvt_f32_u32_e32 v10, v0
    0x101414ff, 0x3c800000, // v_mul_f32_e32 v10, 0x3c800000, v10
    0x3a1614ff, 0x80000000, // v_xor_b32_e32 v11, 0x80000000, v10
    0x7e1802f4, // v_mov_b32_e32 v12, 2.0
    0x7e1a02f0, // v_mov_b32_e32 v13, 0.5
    0x161c008a, // v_mul_u32_u24_e32 v14, 10, v0
    0x4e1c1cff, 0x0000012c, // v_subrev_nc_u32_e32 v14, 0x12c, v14
    0xbf89fc07, // s_waitcnt lgkmcnt(0)
    0xe9538000,
    0x80830a00, // tbuffer_store_format_xyzw v[10:13], v0, s[12:15], 0 format:[BUF_FMT_8_8_8_8_UNORM] idxen
    0xe8ea8000,
    0x80440a01, // tbuffer_store_format_xy v[10:11], v1, s[16:19], 0 format:[BUF_FMT_16_16_FLOAT] offen
    0xe8320100,
    0x80440e00, // tbuffer_store_format_x v14, v0, s[16:19], 0 format:[BUF_FMT_8_SINT] offen offset:256
    0xbfb00000, // s_endpgm
];

/// A load of a packed format the simulator refuses.
const PACKED_FORMAT_LOAD: &[u32] = &[
    0xe8f00000,
    0x80010100, // tbuffer_load_format_x v1, off, s[4:7], 0 format:[BUF_FMT_10_11_11_FLOAT]
    0xbfb00000, // s_endpgm
];

/// A buffer resource (GFX11 V#, format bits left 0: the instructions carry theirs), with the
/// OOB_SELECT Mesa's drivers give such buffers: STRUCTURED (1, `index >= NUM_RECORDS`) with a
/// stride, RAW (3, `offset + payload > NUM_RECORDS`) without.
fn resource(base: u64, stride: u32, num_records: u32) -> [u32; 4] {
    let oob_select: u32 = if stride != 0 { 1 } else { 3 };
    [
        base as u32,
        (base >> 32) as u32 & 0xffff | stride << 16,
        num_records,
        oob_select << 28,
    ]
}

fn kernarg(out: u64, resources: &[[u32; 4]]) -> Vec<u8> {
    let mut k = out.to_le_bytes().to_vec();
    for w in resources.iter().flatten() {
        k.extend_from_slice(&w.to_le_bytes());
    }
    k
}

/// The f16 encoding of `x`, which must be ±0 or a normal f16 with at most 11 significant bits.
fn f16_exact(x: f32) -> u16 {
    if x == 0.0 {
        return (x.to_bits() >> 16) as u16 & 0x8000;
    }
    let b = x.to_bits();
    let sign = (b >> 16) & 0x8000;
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    assert!(
        (1..31).contains(&exp) && b.trailing_zeros() >= 13,
        "{x} is not exact in f16"
    );
    (sign | (exp as u32) << 10 | (b >> 13) & 0x3ff) as u16
}

/// The four bytes of structured record `i` in the typed-load test.
fn record(i: u32) -> [u8; 4] {
    [i as u8, 255 - i as u8, (i * 3) as u8, 0x80 ^ i as u8]
}

#[test]
fn typed_loads_convert_each_number_format_and_range_check_each_component() {
    let gpu = Gpu::new(GfxTarget::Gfx1100);
    let records: Vec<u8> = (0..64).flat_map(record).collect();
    let structured = gpu.buffer(256);
    structured.write(0, &records);
    let halves: Vec<u8> = (0..128u32)
        .flat_map(|i| f16_exact(i as f32 * 0.5).to_le_bytes())
        .collect();
    let raw_buf = gpu.buffer(256);
    raw_buf.write(0, &halves);
    let out = gpu.buffer(4096);
    let raw = gpu.load_raw(TYPED_LOADS);
    let args = kernarg(
        out.va,
        &[resource(structured.va, 4, 60), resource(raw_buf.va, 0, 256)],
    );
    gpu.dispatch_raw(&raw, [64, 1, 1], [64, 1, 1], &args)
        .unwrap();
    let got = out.u32s();
    let f = |x: f64| (x as f32).to_bits();
    for id in 0..64u32 {
        let at = |k: usize| -> [u32; 4] {
            let s = k * 256 + 4 * id as usize;
            [got[s], got[s + 1], got[s + 2], got[s + 3]]
        };
        let [b0, b1, b2, b3] = if id < 60 { record(id) } else { [0; 4] };
        let unorm = [b0, b1, b2, b3].map(|b| f(f64::from(b) / 255.0));
        assert_eq!(at(0), unorm, "8_8_8_8_UNORM item {id}");
        let s16 = |lo: u8, hi: u8| i16::from_le_bytes([lo, hi]) as i32 as u32;
        assert_eq!(
            at(1),
            [s16(b0, b1), s16(b2, b3), 0, 1],
            "16_16_SINT item {id}"
        );
        let snorm = |b: u8| f((f64::from(b as i8) / 127.0).max(-1.0));
        assert_eq!(
            at(2),
            [snorm(b0), snorm(b1), 0x1234, 0x5678],
            "8_8_SNORM xy item {id}"
        );
        // Halves 2id+2.. at byte 4id+4; each component range-checked against 256 bytes.
        let half = |k: u32| {
            let i = 2 * id + 2 + k;
            if 2 * i + 2 <= 256 {
                (i as f32 * 0.5).to_bits()
            } else {
                0
            }
        };
        assert_eq!(
            at(3),
            [half(0), half(1), half(2), 0x5678],
            "16_16_16_16_FLOAT xyz item {id}"
        );
    }
}

#[test]
fn typed_stores_round_clamp_and_saturate_in_wave64() {
    let gpu = Gpu::new(GfxTarget::Gfx1100);
    let rgba = gpu.buffer(256);
    let raw_buf = gpu.buffer(512);
    let code = gpu.load_raw_waves(TYPED_STORES, true);
    let args = kernarg(0, &[resource(rgba.va, 4, 64), resource(raw_buf.va, 0, 512)]);
    let stats = gpu
        .dispatch_raw(&code, [64, 1, 1], [64, 1, 1], &args)
        .unwrap();
    assert_eq!(stats.waves, 1);
    let (rgba, raw) = (rgba.bytes(), raw_buf.bytes());
    for id in 0..64usize {
        let x = id as f32 / 64.0;
        let unorm = (f64::from(x) * 255.0).round_ties_even() as u8;
        // 0.5 * 255 = 127.5 rounds to even.
        assert_eq!(
            rgba[4 * id..4 * id + 4],
            [unorm, 0, 255, 128],
            "RGBA8 item {id}"
        );
        let pair = [f16_exact(x), f16_exact(-x)];
        let got = [
            u16::from_le_bytes([raw[4 * id], raw[4 * id + 1]]),
            u16::from_le_bytes([raw[4 * id + 2], raw[4 * id + 3]]),
        ];
        assert_eq!(got, pair, "16_16_FLOAT item {id}");
        let sint = (10 * id as i32 - 300).clamp(-128, 127) as i8 as u8;
        assert_eq!(raw[256 + id], sint, "8_SINT item {id}");
    }
}

#[test]
fn packed_buffer_formats_are_refused_by_name() {
    let gpu = Gpu::new(GfxTarget::Gfx1100);
    let raw = gpu.load_raw(PACKED_FORMAT_LOAD);
    let err = gpu
        .dispatch_raw(&raw, [32, 1, 1], [32, 1, 1], &[])
        .unwrap_err();
    let DispatchError::IllegalInstruction { mnemonic, .. } = err else {
        panic!("{err:?}");
    };
    assert!(
        mnemonic.contains("tbuffer_load_format_x") && mnemonic.contains("BUF_FMT_10_11_11_FLOAT"),
        "{mnemonic}"
    );
}

/// v_interp_p10_f32 into v2 (P10 = id + 64, I = id & 3 negated, P0 = id), then v_interp_p2_f32 into v4 (P20 = id + 64, J = id & 3, v2).
const VINTERP_F32: &[u32] = &[
    0x7e0a0d01, // v_cvt_f32_u32_e32 v5, v1
    0x360c0083, // v_and_b32_e32 v6, 3, v0
    0x7e0c0d06, // v_cvt_f32_u32_e32 v6, v6
    0x7e0e0d00, // v_cvt_f32_u32_e32 v7, v0
    0xcd000002, 0x441e0d05, // v_interp_p10_f32 v2, v5, -v6, v7 wait_exp:0
    0xcd010004, 0x040a0d05, // v_interp_p2_f32 v4, v5, v6, v2 wait_exp:0
];

/// The f16 forms: v8 = (f16 id, f16 (id + 64)) packed; P10 from the high half into v2 (f32), P2 from the low half into v4's high half.
const VINTERP_F16: &[u32] = &[
    0x7e0a0d00, // v_cvt_f32_u32_e32 v5, v0
    0x7e0a1505, // v_cvt_f16_f32_e32 v5, v5
    0x7e0e0d01, // v_cvt_f32_u32_e32 v7, v1
    0x7e0e1507, // v_cvt_f16_f32_e32 v7, v7
    0xd7110008, 0x00020f05, // v_pack_b32_f16 v8, v5, v7
    0x360c0083, // v_and_b32_e32 v6, 3, v0
    0x7e0c0d06, // v_cvt_f32_u32_e32 v6, v6
    0xcd020802, 0x04220d08, // v_interp_p10_f16_f32 v2, v8, v6, v8 op_sel:[1,0,0,0] wait_exp:0
    0xcd034004, 0x040a0d08, // v_interp_p2_f16_f32 v4, v8, v6, v2 op_sel:[0,0,0,1] wait_exp:0
];

#[test]
fn vinterp_f32_reads_its_quad_lanes_in_wave32_and_wave64() {
    let gpu = Gpu::new(GfxTarget::Gfx1100);
    for wave64 in [false, true] {
        let (v2, v4) = run(&gpu, VINTERP_F32, wave64, &[]);
        for id in 0..64u32 {
            let quad = id & !3;
            let i = (id & 3) as f32;
            let p10 = (v1(quad + 1) as f32).mul_add(-i, quad as f32);
            let p2 = (v1(quad + 2) as f32).mul_add(i, p10);
            assert_eq!(
                (
                    f32::from_bits(v2[id as usize]),
                    f32::from_bits(v4[id as usize])
                ),
                (p10, p2),
                "wave64 {wave64} item {id}"
            );
        }
    }
}

#[test]
fn vinterp_f16_forms_pick_halves_and_write_one_half() {
    let gpu = Gpu::new(GfxTarget::Gfx1100);
    let (v2, v4) = run(&gpu, VINTERP_F16, false, &[]);
    for id in 0..64u32 {
        let quad = id & !3;
        let i = (id & 3) as f32;
        let p10 = (v1(quad + 1) as f32).mul_add(i, quad as f32);
        assert_eq!(v2[id as usize], p10.to_bits(), "p10 item {id}");
        let p2 = ((quad + 2) as f32).mul_add(i, p10);
        let want = u32::from(f16_exact(p2)) << 16 | UNWRITTEN;
        assert_eq!(v4[id as usize], want, "p2 item {id}");
    }
}

/// Load lane `l`'s A, B and C images (32 dwords at `in + 128 l`) into v[8:15], v[16:23] and v[24:31]; `out + 32 l` in v2.
const WMMA_LOAD: &[u32] = &[
    0xf4080200, 0xf8000000, // s_load_b128 s[8:11], s[0:1], 0x0
    0x360000ff, 0x000003ff, // v_and_b32_e32 v0, 0x3ff, v0
    0x30020087, // v_lshlrev_b32_e32 v1, 7, v0
    0x30040085, // v_lshlrev_b32_e32 v2, 5, v0
    0xbf89fc07, // s_waitcnt lgkmcnt(0)
    0xdc5e0000, 0x08080001, // global_load_b128 v[8:11], v1, s[8:9]
    0xdc5e0010, 0x0c080001, // global_load_b128 v[12:15], v1, s[8:9] offset:16
    0xdc5e0020, 0x10080001, // global_load_b128 v[16:19], v1, s[8:9] offset:32
    0xdc5e0030, 0x14080001, // global_load_b128 v[20:23], v1, s[8:9] offset:48
    0xdc5e0040, 0x18080001, // global_load_b128 v[24:27], v1, s[8:9] offset:64
    0xdc5e0050, 0x1c080001, // global_load_b128 v[28:31], v1, s[8:9] offset:80
    0xbf8903f7, // s_waitcnt vmcnt(0)
];

/// Store v[24:31] at `out + 32 l`.
const WMMA_STORE: &[u32] = &[
    0xdc760000, 0x000a1802, // global_store_b128 v2, v[24:27], s[10:11]
    0xdc760010, 0x000a1c02, // global_store_b128 v2, v[28:31], s[10:11] offset:16
    0xbfb00000, // s_endpgm
];

/// The WMMA opcodes, as the test builds their operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wmma {
    F32F16,
    /// `neg_lo:[0,1,1] neg_hi:[1,0,1]`: A's odd and B's even K elements negated, C -|C|.
    F32F16Neg,
    F32Bf16,
    F16F16Hi,
    Bf16Bf16,
    /// Signed A, unsigned B.
    Iu8,
    /// Signed A and B, CLAMP.
    Iu4Clamp,
}

impl Wmma {
    /// The instruction (the same words in wave32 and wave64: D and C are v[24:31] or
    /// v[24:27]).
    fn words(self) -> [u32; 2] {
        match self {
            // v_wmma_f32_16x16x16_f16 v[24:31], v[8:15], v[16:23], v[24:31]
            Wmma::F32F16 => [0xcc404018, 0x1c622108],
            // v_wmma_f32_16x16x16_f16 v[24:31], v[8:15], v[16:23], v[24:31]
            //     neg_lo:[0,1,1] neg_hi:[1,0,1]
            Wmma::F32F16Neg => [0xcc404518, 0xdc622108],
            // v_wmma_f32_16x16x16_bf16 v[24:31], v[8:15], v[16:23], v[24:31]
            Wmma::F32Bf16 => [0xcc414018, 0x1c622108],
            // v_wmma_f16_16x16x16_f16 v[24:31], v[8:15], v[16:23], v[24:31] op_sel:[0,0,1]
            Wmma::F16F16Hi => [0xcc426018, 0x1c622108],
            // v_wmma_bf16_16x16x16_bf16 v[24:31], v[8:15], v[16:23], v[24:31]
            Wmma::Bf16Bf16 => [0xcc434018, 0x1c622108],
            // v_wmma_i32_16x16x16_iu8 v[24:31], v[8:11], v[16:19], v[24:31] neg_lo:[1,0,0]
            Wmma::Iu8 => [0xcc444018, 0x3c622108],
            // v_wmma_i32_16x16x16_iu4 v[24:31], v[8:9], v[16:17], v[24:31] neg_lo:[1,1,0] clamp
            Wmma::Iu4Clamp => [0xcc45c018, 0x7c622108],
        }
    }

    fn bits(self) -> u32 {
        match self {
            Wmma::Iu8 => 8,
            Wmma::Iu4Clamp => 4,
            _ => 16,
        }
    }

    fn bf16(self) -> bool {
        matches!(self, Wmma::F32Bf16 | Wmma::Bf16Bf16)
    }

    /// A and B element (i, k) / (k, j) as raw bits and as a value.
    fn a(self, i: usize, k: usize) -> (u32, f64) {
        match self {
            Wmma::Iu8 => {
                let raw = ((i * 37 + k * 11) % 256) as u32;
                (raw, f64::from(raw as u8 as i8))
            }
            Wmma::Iu4Clamp => {
                let raw = ((i + 3 * k) % 16) as u32;
                (raw, f64::from(((raw << 28) as i32) >> 28))
            }
            _ => self.float(((i + 2 * k) % 5) as f32 - 2.0, 0.5),
        }
    }

    fn b(self, k: usize, j: usize) -> (u32, f64) {
        match self {
            Wmma::Iu8 => {
                let raw = ((k * 29 + j * 7) % 256) as u32;
                (raw, f64::from(raw))
            }
            Wmma::Iu4Clamp => {
                let raw = ((5 * k + j) % 16) as u32;
                (raw, f64::from(((raw << 28) as i32) >> 28))
            }
            _ => self.float(((3 * k + j) % 4) as f32 - 1.0, 1.0),
        }
    }

    /// `x * scale` (scale 0.5 only for f32 results, whose sums stay exact) as f16 or bf16.
    fn float(self, x: f32, scale: f32) -> (u32, f64) {
        let x = if matches!(self, Wmma::F32F16 | Wmma::F32F16Neg | Wmma::F32Bf16) {
            x * scale
        } else {
            x
        };
        let raw = if self.bf16() {
            x.to_bits() >> 16
        } else {
            u32::from(f16_exact(x))
        };
        (raw, f64::from(x))
    }

    /// C element (i, j): its value.
    fn c(self, i: usize, j: usize) -> f64 {
        match self {
            Wmma::F32F16 | Wmma::F32Bf16 => (i * 16 + j) as f64 * 0.25,
            Wmma::F32F16Neg => (i * 16 + j) as f64 * 0.25 - 20.0,
            Wmma::F16F16Hi | Wmma::Bf16Bf16 => i as f64 - j as f64,
            Wmma::Iu8 => (i as i64 * 1000 - j as i64 * 77) as f64,
            Wmma::Iu4Clamp if i < 8 => f64::from(i32::MAX - 100),
            Wmma::Iu4Clamp => f64::from(i32::MIN + 50),
        }
    }

    /// A C or D element's bits in its register (`old`: the register's other half).
    fn encode(self, x: f64, old: u32) -> u32 {
        match self {
            Wmma::F32F16 | Wmma::F32F16Neg | Wmma::F32Bf16 => (x as f32).to_bits(),
            Wmma::F16F16Hi => u32::from(f16_exact(x as f32)) << 16 | old & 0xffff,
            Wmma::Bf16Bf16 => {
                let f = (x as f32).to_bits();
                assert_eq!(f & 0xffff, 0, "{x} is not exact in bf16");
                old & 0xffff_0000 | f >> 16
            }
            Wmma::Iu8 | Wmma::Iu4Clamp => x as i64 as i32 as u32,
        }
    }
}

/// Run `op` on one wave (`wave64` or wave32) with A, B and C laid out as RDNA3 WMMA wants
/// them, and compare D bit for bit with `A × B + C` computed here. `compiled`: run that
/// kernel of a code object (wave32) instead of the hand-assembled instruction. `exec_lo`:
/// run the instruction with that EXEC (wave32; D is written in every lane all the same).
fn check_wmma(
    gpu: &Gpu,
    op: Wmma,
    wave64: bool,
    compiled: Option<(&Loaded, &str)>,
    exec_lo: Option<u32>,
) {
    let width = if wave64 { 64 } else { 32 };
    let groups = width / 16;
    let regs = 256 / width;
    let bits = op.bits() as usize;
    // Per lane: A dwords 0..8, B 8..16, C 16..24 (as v[8:31] loads them).
    let mut images = vec![[0u32; 32]; width];
    for (l, img) in images.iter_mut().enumerate() {
        let r = l % 16;
        for k in 0..16 {
            let at = k * bits;
            img[at / 32] |= op.a(r, k).0 << (at % 32);
            img[8 + at / 32] |= op.b(k, r).0 << (at % 32);
        }
        for v in 0..regs {
            let (i, j) = (groups * v + l / 16, l % 16);
            let marker = 0x1111 * (v as u32 + 1);
            img[16 + v] = op.encode(op.c(i, j), marker << 16 | marker);
        }
    }
    let input = gpu.buffer(128 * width);
    input.write_u32s(&images.concat());
    let out = gpu.buffer(32 * width);
    if let Some((co, kernel)) = compiled {
        assert!(!wave64, "the compiled kernels are wave32");
        let args = [Arg::Ptr(input.va), Arg::Ptr(out.va)];
        gpu.run(co, kernel, [32, 1, 1], [32, 1, 1], &args);
    } else {
        let code = match exec_lo {
            // s_mov_b32 exec_lo, <exec_lo>; the WMMA; s_mov_b32 exec_lo, -1
            Some(x) => [
                WMMA_LOAD,
                &[0xbefe00ff, x],
                &op.words(),
                &[0xbefe00c1],
                WMMA_STORE,
            ]
            .concat(),
            None => [WMMA_LOAD, &op.words(), WMMA_STORE].concat(),
        };
        let raw = gpu.load_raw_waves(&code, wave64);
        let mut args = input.va.to_le_bytes().to_vec();
        args.extend_from_slice(&out.va.to_le_bytes());
        gpu.dispatch_raw(&raw, [width as u32, 1, 1], [width as u32, 1, 1], &args)
            .unwrap_or_else(|e| panic!("{op:?} wave64 {wave64}: {e:?}"));
    }
    let got = out.u32s();
    for l in 0..width {
        for v in 0..regs {
            let (i, j) = (groups * v + l / 16, l % 16);
            let neg = op == Wmma::F32F16Neg;
            let mut sum = if neg { -op.c(i, j).abs() } else { op.c(i, j) };
            for k in 0..16 {
                let (sa, sb) = match (neg, k % 2) {
                    (true, 1) => (-1.0, 1.0),
                    (true, _) => (1.0, -1.0),
                    _ => (1.0, 1.0),
                };
                sum += sa * op.a(i, k).1 * sb * op.b(k, j).1;
            }
            if op == Wmma::Iu4Clamp {
                sum = sum.clamp(f64::from(i32::MIN), f64::from(i32::MAX));
            }
            let want = op.encode(sum, images[l][16 + v]);
            assert_eq!(
                got[8 * l + v],
                want,
                "{op:?} wave64 {wave64}: D({i}, {j}) in lane {l} register {v}"
            );
        }
    }
}

#[test]
fn wmma_matches_a_cpu_product_for_every_opcode_in_wave32_and_wave64() {
    let gpu = Gpu::new(GfxTarget::Gfx1100);
    for op in [
        Wmma::F32F16,
        Wmma::F32F16Neg,
        Wmma::F32Bf16,
        Wmma::F16F16Hi,
        Wmma::Bf16Bf16,
        Wmma::Iu8,
        Wmma::Iu4Clamp,
    ] {
        for wave64 in [false, true] {
            check_wmma(&gpu, op, wave64, None, None);
        }
    }
}

#[test]
fn wmma_runs_with_exec_forced_to_all_ones() {
    // RDNA3: `saved_exec = EXEC; EXEC = -1; D = A * B + C; EXEC = saved_exec`.
    let gpu = Gpu::new(GfxTarget::Gfx1100);
    check_wmma(&gpu, Wmma::F32F16, false, None, Some(0xffff));
    check_wmma(&gpu, Wmma::Iu8, false, None, Some(0));
}

/// `buffer_load_format_xyzw` in wave32: the format comes from the V#'s word 3 (s[12:15]); the four dwords go to `out + 16 id`.
const FORMAT_FROM_RESOURCE: &[u32] = &[
    0xf4040200, 0xf8000000, // s_load_b64 s[8:9], s[0:1], 0x0
    0xf4080300, 0xf8000008, // s_load_b128 s[12:15], s[0:1], 0x8
    0x360000ff, 0x000003ff, // v_and_b32_e32 v0, 0x3ff, v0
    0x30060084, // v_lshlrev_b32_e32 v3, 4, v0
    0xbf89fc07, // s_waitcnt lgkmcnt(0)
    0xe00c0000, 0x80830a00, // buffer_load_format_xyzw v[10:13], v0, s[12:15], 0 idxen
    0xbf8903f7, // s_waitcnt vmcnt(0)
    0xdc760000, 0x00080a03, // global_store_b128 v3, v[10:13], s[8:9]
    0xbfb00000, // s_endpgm
];

#[test]
fn untyped_format_loads_take_the_resource_format_on_gfx11() {
    let gpu = Gpu::new(GfxTarget::Gfx1100);
    let pairs: Vec<u8> = (0..64u8).flat_map(|i| [i, i ^ 0xff]).collect();
    let data = gpu.buffer(128);
    data.write(0, &pairs);
    let out = gpu.buffer(1024);
    let mut v = resource(data.va, 2, 64);
    // FORMAT (word 3 bits 18:12) = 18, BUF_FMT_8_8_UINT.
    v[3] |= 18 << 12;
    let raw = gpu.load_raw(FORMAT_FROM_RESOURCE);
    gpu.dispatch_raw(&raw, [64, 1, 1], [64, 1, 1], &kernarg(out.va, &[v]))
        .unwrap();
    let got = out.u32s();
    for id in 0..64u32 {
        let at = 4 * id as usize;
        assert_eq!(got[at..at + 4], [id, id ^ 0xff, 0, 1], "item {id}");
    }
}

#[test]
fn clang_compiled_wmma_and_dpp8_kernels_run() {
    let gpu = Gpu::new(GfxTarget::Gfx1100);
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/shader_data/gfx11_ops/gfx1100/gfx11_ops.co");
    let co = gpu.load_path(&path, &NoExternals);
    check_wmma(&gpu, Wmma::F32F16, false, Some((&co, "wmma_f32_f16")), None);
    check_wmma(&gpu, Wmma::Iu8, false, Some((&co, "wmma_i32_iu8")), None);
    let x: Vec<u32> = (0..32).map(|i| i * 3 + 1).collect();
    let buf = gpu.buffer_u32(&x);
    gpu.run(
        &co,
        "dpp8_reverse",
        [32, 1, 1],
        [32, 1, 1],
        &[Arg::Ptr(buf.va)],
    );
    let want: Vec<u32> = (0..32).map(|i| x[i ^ 7]).collect();
    assert_eq!(buf.u32s()[..32], want);
}

/// v_interp_p10 f16 with and without RTZ: 1.5 (f16) * (1 + 2^-23) + 0 is a tie in f32 (v2: toward zero, v4: to even).
const VINTERP_RTZ_P10: &[u32] = &[
    0x7e1002ff, 0x00003e00, // v_mov_b32_e32 v8, 0x3e00
    0x7e0c02ff, 0x3f800001, // v_mov_b32_e32 v6, 0x3f800001
    0xcd042002,
    0x04220d08, // v_interp_p10_rtz_f16_f32 v2, v8, v6, v8 op_sel:[0,0,1,0] wait_exp:0
    0xcd022004, 0x04220d08, // v_interp_p10_f16_f32 v4, v8, v6, v8 op_sel:[0,0,1,0] wait_exp:0
];

/// v_interp_p2 f16 with and without RTZ: 1.0 (f16) * (1 + 2^-11 + 2^-13) + 0 rounds to f16 1.0 toward zero (v2), up to nearest (v4).
const VINTERP_RTZ_P2: &[u32] = &[
    0x7e1202ff, 0x00003c00, // v_mov_b32_e32 v9, 0x3c00
    0x7e0e02ff, 0x3f801400, // v_mov_b32_e32 v7, 0x3f801400
    0x7e140280, // v_mov_b32_e32 v10, 0
    0xcd050002, 0x042a0f09, // v_interp_p2_rtz_f16_f32 v2, v9, v7, v10 wait_exp:0
    0xcd030004, 0x042a0f09, // v_interp_p2_f16_f32 v4, v9, v7, v10 wait_exp:0
];

#[test]
fn vinterp_rtz_forms_round_toward_zero_whatever_the_mode() {
    let gpu = Gpu::new(GfxTarget::Gfx1100);
    let (v2, v4) = run(&gpu, VINTERP_RTZ_P10, false, &[]);
    assert!(v2.iter().all(|&x| x == 0x3fc0_0001), "{:#x}", v2[0]);
    assert!(v4.iter().all(|&x| x == 0x3fc0_0002), "{:#x}", v4[0]);
    let (v2, v4) = run(&gpu, VINTERP_RTZ_P2, false, &[]);
    // The high halves keep v2's and v4's 0x0000_dead.
    assert!(v2.iter().all(|&x| x == 0x3c00), "{:#x}", v2[0]);
    assert!(v4.iter().all(|&x| x == 0x3c01), "{:#x}", v4[0]);
}

/// v_permlane16_b32 reversing each row into v2; then, lane 0 inactive, v_permlanex16_b32 (identity selects, BOUND_CTRL) into v4: wave32.
const PERMLANE32: &[u32] = &[
    0xbe8400ff, 0x89abcdef, // s_mov_b32 s4, 0x89abcdef
    0xbe8500ff, 0x01234567, // s_mov_b32 s5, 0x1234567
    0xd65b0002, 0x00140901, // v_permlane16_b32 v2, v1, s4, s5
    0xbe8600ff, 0x76543210, // s_mov_b32 s6, 0x76543210
    0xbe8700ff, 0xfedcba98, // s_mov_b32 s7, 0xfedcba98
    0xbefe00c2, // s_mov_b32 exec_lo, -2
    0xd65c1004, 0x001c0d01, // v_permlanex16_b32 v4, v1, s6, s7 op_sel:[0,1]
];

/// [`PERMLANE32`] in wave64, the permlanex16 with FI instead of BOUND_CTRL.
const PERMLANE64: &[u32] = &[
    0xbe8400ff, 0x89abcdef, // s_mov_b32 s4, 0x89abcdef
    0xbe8500ff, 0x01234567, // s_mov_b32 s5, 0x1234567
    0xd65b0002, 0x00140901, // v_permlane16_b32 v2, v1, s4, s5
    0xbe8600ff, 0x76543210, // s_mov_b32 s6, 0x76543210
    0xbe8700ff, 0xfedcba98, // s_mov_b32 s7, 0xfedcba98
    0xbefe01c2, // s_mov_b64 exec, -2
    0xd65c0804, 0x001c0d01, // v_permlanex16_b32 v4, v1, s6, s7 op_sel:[1,0]
];

#[test]
fn permlane16_and_permlanex16_in_wave32_and_wave64() {
    let gpu = Gpu::new(GfxTarget::Gfx1100);
    for (body, wave64) in [(PERMLANE32, false), (PERMLANE64, true)] {
        let (v2, v4) = run(&gpu, body, wave64, &[]);
        let width = if wave64 { 64 } else { 32 };
        for id in 0..64u32 {
            let (lane, base) = (id % width, id - id % width);
            let reversed = v1((id & !15) + 15 - (id & 15));
            assert_eq!(
                v2[id as usize], reversed,
                "permlane16 wave64 {wave64} item {id}"
            );
            let from = ((lane / 16) ^ 1) * 16 + lane % 16;
            let want = if lane == 0 {
                UNWRITTEN
            } else if from == 0 && !wave64 {
                0 // lane 0 is inactive: BOUND_CTRL reads 0 (wave64 has FI)
            } else {
                v1(base + from)
            };
            assert_eq!(
                v4[id as usize], want,
                "permlanex16 wave64 {wave64} item {id}"
            );
        }
    }
}

/// v_interp_p2_f16_f32 of 1.0 (f16) * (1 + 2^-11) + 2^-40: just above an f16 tie, exactly on it once rounded to f32.
const VINTERP_P2_TWO_ROUNDINGS: &[u32] = &[
    0x7e1202ff, 0x00003c00, // v_mov_b32_e32 v9, 0x3c00
    0x7e0e02ff, 0x3f801000, // v_mov_b32_e32 v7, 0x3f801000
    0x7e1402ff, 0x2b800000, // v_mov_b32_e32 v10, 0x2b800000
    0xcd030002, 0x042a0f09, // v_interp_p2_f16_f32 v2, v9, v7, v10 wait_exp:0
];

#[test]
fn vinterp_p2_f16_rounds_to_f32_first_as_the_isa_guide_says() {
    let gpu = Gpu::new(GfxTarget::Gfx1100);
    let (v2, _) = run(&gpu, VINTERP_P2_TWO_ROUNDINGS, false, &[]);
    // Rounded once, 1 + 2^-11 + 2^-40 would be f16 1 + 2^-10 (0x3c01); through f32 it is the
    // tie 1 + 2^-11, which rounds to even: 1.0.
    assert!(v2.iter().all(|&x| x == 0x3c00), "{:#x}", v2[0]);
}

/// v_permlane64_b32 in wave64 with lane 40 inactive: lanes read `lane ^ 32` into v4.
const PERMLANE64_W64: &[u32] = &[
    0xbeff00ff, 0xfffffeff, // s_mov_b32 exec_hi, 0xfffffeff
    0x7e08cf01, // v_permlane64_b32 v4, v1
];

/// v_permlane64_b32 in wave32: no operation.
const PERMLANE64_W32: &[u32] = &[
    0x7e08cf01, // v_permlane64_b32 v4, v1
];

#[test]
fn permlane64_swaps_the_halves_of_wave64_and_is_a_nop_in_wave32() {
    let gpu = Gpu::new(GfxTarget::Gfx1100);
    let (_, v4) = run(&gpu, PERMLANE64_W64, true, &[]);
    for id in 0..64u32 {
        // Lane 8 reads inactive lane 40 all the same.
        let want = if id == 40 { UNWRITTEN } else { v1(id ^ 32) };
        assert_eq!(v4[id as usize], want, "item {id}");
    }
    let (_, v4) = run(&gpu, PERMLANE64_W32, false, &[]);
    assert!(v4.iter().all(|&x| x == UNWRITTEN));
}
