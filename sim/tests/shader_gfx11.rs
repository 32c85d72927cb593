//! The GFX11 shader core at the instruction level: hand-assembled gfx1100 wave32 code (wave32
//! EXEC and VCC, `null` and M0 at their GFX11 codes, VOPD dual issue reading both halves'
//! operands before either writes), what it refuses (images), and a compiled corpus kernel.
//!
//! The words were assembled with `llvm-mc-22 -arch=amdgcn -mcpu=gfx1100 -show-encoding`; the
//! source is beside each word.

mod shader_support;

use amdgpu_sim::dispatch::DispatchError;
use amdgpu_sim::target::GfxTarget;
use shader_support::{Arg, Gpu};

/// Exercises the GFX11 operand map and wave32 masks; see [`lanes_expected`].
const LANES_KERNEL: &[u32] = &[
    0xf4040200, 0xf8000000, // s_load_b64 s[8:9], s[0:1], 0x0
    0x16020083, // v_mul_u32_u24_e32 v1, 3, v0
    0x7c980094, // v_cmp_gt_u32_e32 vcc_lo, 20, v0
    0x7e0602ff, 0x000000c8, // v_mov_b32_e32 v3, 0xc8
    0x7e0802ff, 0x00000064, // v_mov_b32_e32 v4, 0x64
    0x02040903, // v_cndmask_b32_e32 v2, v3, v4, vcc_lo
    0x7e0e028b, // v_mov_b32_e32 v7, 11
    0x7e100296, // v_mov_b32_e32 v8, 22
    0x7e180287, // v_mov_b32_e32 v12, 7
    0xca200101, 0x05060302, // v_dual_mov_b32 v5, v1 :: v_dual_add_nc_u32 v6, v2, v1
    0xca100108, 0x07080107, // v_dual_mov_b32 v7, v8 :: v_dual_mov_b32 v8, v7
    0xbefd0085, // s_mov_b32 m0, 5
    0x8006817d, // s_add_u32 s6, m0, 1
    0xd6fe7c0a, 0x041a0006, // v_mad_u64_u32 v[10:11], null, s6, v0, v[6:7]
    0xbe84206a, // s_and_saveexec_b32 s4, vcc_lo
    0x4a1414ff, 0x000003e8, // v_add_nc_u32_e32 v10, 0x3e8, v10
    0x8c7e047e, // s_or_b32 exec_lo, exec_lo, s4
    0x4c14110a, // v_sub_nc_u32_e32 v10, v10, v8
    0x4a140f0a, // v_add_nc_u32_e32 v10, v10, v7
    0xca20010a, 0x0c0c030c, // v_dual_mov_b32 v12, v10 :: v_dual_add_nc_u32 v13, v12, v1
    0x4a141b0c, // v_add_nc_u32_e32 v10, v12, v13
    0x30020082, // v_lshlrev_b32_e32 v1, 2, v0
    0x84078802, // s_lshl_b32 s7, s2, 8
    0x4a020207, // v_add_nc_u32_e32 v1, s7, v1
    0xbf89fc07, // s_waitcnt lgkmcnt(0)
    0xdc6a0000, 0x00080a01, // global_store_b32 v1, v10, s[8:9]
    0xbf800000, // s_nop 0
    0xbfb60003, // s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)
    0xbfb00000, // s_endpgm
];

/// What [`LANES_KERNEL`] stores for work-item `i` of a 64-item workgroup (two waves):
/// `sel = i < 20 ? 100 : 200` (VCC, cndmask), `v6 = sel + 3i` (VOPD), the swap leaves
/// v7 = 22, v8 = 11; `v10 = 6i + v6` (`null` carry, s6 = M0 + 1), plus 1000 where `i < 20`
/// (saveexec on `vcc_lo`; the second wave's VCC is 0), `- 11 + 22`; the last VOPD's Y half
/// reads v12 before X writes it: `v13 = 7 + 3i`, `v12 = v10`; stored `v12 + v13`.
fn lanes_expected(i: u32) -> u32 {
    let sel = if i < 20 { 100 } else { 200 };
    let v10 = 6 * i + sel + 3 * i + if i < 20 { 1000 } else { 0 } + 11;
    v10 + 7 + 3 * i
}

#[test]
fn wave32_masks_null_m0_and_vopd_on_hand_written_code() {
    let gpu = Gpu::new(GfxTarget::Gfx1100);
    let raw = gpu.load_raw(LANES_KERNEL);
    let out = gpu.buffer(2 * 64 * 4);
    out.fill(0xff);
    let stats = gpu
        .dispatch_raw(&raw, [128, 1, 1], [64, 1, 1], &out.va.to_le_bytes())
        .unwrap();
    assert_eq!(stats.waves, 4, "two wave32 waves per 64-item workgroup");
    let want: Vec<u32> = (0..128).map(|g| lanes_expected(g % 64)).collect();
    assert_eq!(out.u32s(), want);
}

#[test]
fn image_instructions_halt_as_illegal_instructions_naming_them() {
    let gpu = Gpu::new(GfxTarget::Gfx1100);
    let raw = gpu.load_raw(&[
        0xf0000f04,
        0x00020004, // image_load v[0:3], v[4:5], s[8:15] dmask:0xf dim:SQ_RSRC_IMG_2D
        0xbfb00000, // s_endpgm
    ]);
    let err = gpu
        .dispatch_raw(&raw, [32, 1, 1], [32, 1, 1], &[])
        .unwrap_err();
    let DispatchError::IllegalInstruction { pc, mnemonic, .. } = err else {
        panic!("{err:?}");
    };
    assert_eq!(pc, raw.entry);
    assert!(
        mnemonic.contains("MIMG") || mnemonic.contains("image_load"),
        "{mnemonic}"
    );
}

#[test]
fn an_nsa_image_instruction_is_reported_whole() {
    // Three dwords: the NSA form's third holds the address VGPRs after the first. The text is
    // llvm-objdump-22's for the words (two spaces after the mnemonic included).
    let gpu = Gpu::new(GfxTarget::Gfx1100);
    let nsa = [0xf06c0f09, 0x08000004, 0x00000605];
    let raw = gpu.load_raw(&[nsa[0], nsa[1], nsa[2], 0xbfb00000]);
    let err = gpu
        .dispatch_raw(&raw, [32, 1, 1], [32, 1, 1], &[])
        .unwrap_err();
    let DispatchError::IllegalInstruction {
        pc,
        encoding,
        mnemonic,
    } = err
    else {
        panic!("{err:?}");
    };
    assert_eq!(pc, raw.entry);
    assert_eq!(encoding, nsa, "all of the instruction's words");
    assert_eq!(
        mnemonic,
        "image_sample  v[0:3], [v4, v5, v6], s[0:7], s[8:11] dmask:0xf \
         dim:SQ_RSRC_IMG_3D (not simulated)"
    );
}

#[test]
fn each_core_refuses_the_other_generations_code() {
    for (target, other) in [
        (GfxTarget::Gfx1100, GfxTarget::Gfx90a),
        (GfxTarget::Gfx90a, GfxTarget::Gfx1100),
    ] {
        let foreign = Gpu {
            core: shader_support::Core::for_target(other, 1),
            ..Gpu::new(target)
        };
        let raw = foreign.load_raw(&[0xbfb00000]);
        let err = foreign
            .dispatch_raw(&raw, [1, 1, 1], [1, 1, 1], &[])
            .unwrap_err();
        let DispatchError::IllegalInstruction { mnemonic, .. } = err else {
            panic!("{err:?}");
        };
        assert!(mnemonic.contains(target.name()), "{mnemonic}");
    }
}

#[test]
fn the_corpus_vector_add_runs_in_wave32() {
    let gpu = Gpu::new(GfxTarget::Gfx1100);
    for v in ["co5", "co6"] {
        let co = gpu.load(&format!("vector_add.{v}"));
        let n = 1000u32;
        let a: Vec<u32> = (0..n).map(|i| i * 7 + 1).collect();
        let b: Vec<u32> = (0..n).map(|i| i ^ 0x5a5a).collect();
        let (ba, bb, out) = (gpu.buffer_u32(&a), gpu.buffer_u32(&b), gpu.buffer(4 * 1024));
        let stats = gpu.run(
            &co,
            "vector_add",
            [1024, 1, 1],
            [256, 1, 1],
            &[
                Arg::Ptr(ba.va),
                Arg::Ptr(bb.va),
                Arg::Ptr(out.va),
                Arg::U32(n),
            ],
        );
        assert_eq!(stats.waves, 32, "1024 items in wave32");
        let got = out.u32s();
        for i in 0..n as usize {
            assert_eq!(got[i], a[i].wrapping_add(b[i]), "{v} item {i}");
        }
    }
}
