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

/// Three MUBUF accesses per lane `l` of one wave32 through the V# in s[4:7] (kernel argument
/// words 0-3; the output pointer in words 4-5): a raw load at offset `4 l`, a structured load
/// of record `l` (IDXEN, offset 0), and a store of `0xaa00 | l` to record `l` at offset 4
/// (IDXEN and OFFEN). out[2 l] and out[2 l + 1] are the loads.
const BUFFER_KERNEL: &[u32] = &[
    0xf40c0100, 0xf8000000, // s_load_b256 s[4:11], s[0:1], null
    0x30020082, // v_lshlrev_b32_e32 v1, 2, v0
    0x7e0a0300, // v_mov_b32_e32 v5, v0
    0x7e0c0284, // v_mov_b32_e32 v6, 4
    0x380e00ff, 0x0000aa00, // v_or_b32_e32 v7, 0xaa00, v0
    0xbf89fc07, // s_waitcnt lgkmcnt(0)
    0xe0500000, 0x80410201, // buffer_load_b32 v2, v1, s[4:7], 0 offen
    0xe0500000, 0x80810300, // buffer_load_b32 v3, v0, s[4:7], 0 idxen
    0xe0680000, 0x80c10705, // buffer_store_b32 v7, v[5:6], s[4:7], 0 idxen offen
    0x30100083, // v_lshlrev_b32_e32 v8, 3, v0
    0xbf8903f7, // s_waitcnt vmcnt(0)
    0xdc6e0000, 0x00080208, // global_store_b64 v8, v[2:3], s[8:9]
    0xbfb00000, // s_endpgm
];

#[test]
fn buffer_bounds_follow_the_descriptors_oob_select() {
    // A buffer of stride 8 and NUM_RECORDS 5 (0 for the last case); word i holds 0x1000 + i.
    // Which lanes are in range, per OOB_SELECT (GFX11's rules as Mesa's
    // ac_build_buffer_descriptor states them), for the raw load (index 0, offset 4l), the
    // structured load (index l, offset 0) and the store (index l, offset 4), of 4 bytes each.
    type InRange = fn(u32) -> bool;
    let gpu = Gpu::new(GfxTarget::Gfx1100);
    let raw = gpu.load_raw(BUFFER_KERNEL);
    let lanes = 0..32u32;
    // (OOB_SELECT, SWIZZLE_ENABLE, NUM_RECORDS, raw load, structured load, store)
    let cases: [(u32, u32, u32, InRange, InRange, InRange); 6] = [
        // 0: index < 5 and offset + 4 <= stride.
        (0, 0, 5, |l| 4 * l + 4 <= 8, |l| l < 5, |l| l < 5),
        // 1: index < 5 only: a raw access (index 0) is never out of range.
        (1, 0, 5, |_| true, |l| l < 5, |l| l < 5),
        // 2: only NUM_RECORDS == 0 drops.
        (2, 0, 5, |_| true, |_| true, |_| true),
        (2, 0, 0, |_| false, |_| false, |_| false),
        // 3 unswizzled: offset + 4 <= NUM_RECORDS bytes, whatever the index.
        (3, 0, 5, |l| l == 0, |_| true, |_| false),
        // 3 swizzled (4-byte elements) with a stride: as 0.
        (3, 1, 5, |l| 4 * l + 4 <= 8, |l| l < 5, |l| l < 5),
    ];
    for (oob, swizzle, records, raw_in, structured_in, store_in) in cases {
        let data = gpu.buffer_u32(&(0..64).map(|i| 0x1000 + i).collect::<Vec<u32>>());
        let out = gpu.buffer(32 * 8);
        out.fill(0xff);
        // V#: base, STRIDE 8 and SWIZZLE_ENABLE (63:62), NUM_RECORDS, word 3: DST_SEL xyzw,
        // FORMAT 32_FLOAT (22), INDEX_STRIDE 8 (0), OOB_SELECT.
        let v = [
            data.va as u32,
            (data.va >> 32) as u32 | 8 << 16 | swizzle << 30,
            records,
            0xfac | 22 << 12 | oob << 28,
        ];
        let mut args: Vec<u8> = v.iter().flat_map(|w| w.to_le_bytes()).collect();
        args.extend(out.va.to_le_bytes());
        args.resize(32, 0);
        gpu.dispatch_raw(&raw, [32, 1, 1], [32, 1, 1], &args)
            .unwrap();
        // Where lane l's accesses land: linear, or swizzled with 4-byte elements and an
        // index stride of 8 (the ISA's formula; offsets here stay inside one element).
        let word = |index: u32, offset: u32| -> usize {
            let byte = if swizzle == 0 {
                8 * index + offset
            } else {
                (index / 8 * 8 + offset / 4 * 4) * 8 + index % 8 * 4
            };
            byte as usize / 4
        };
        let (o, d) = (out.u32s(), data.u32s());
        let case = format!("OOB_SELECT {oob}, swizzle {swizzle}, NUM_RECORDS {records}");
        for l in lanes.clone() {
            let want = |inside: bool, w: usize| if inside { 0x1000 + w as u32 } else { 0 };
            let raw_word = if swizzle == 0 {
                l as usize
            } else {
                word(0, 4 * l)
            };
            assert_eq!(
                o[2 * l as usize],
                want(raw_in(l), raw_word),
                "{case}: raw, lane {l}"
            );
            assert_eq!(
                o[2 * l as usize + 1],
                want(structured_in(l), word(l, 0)),
                "{case}: structured, lane {l}"
            );
        }
        // Stores land after every load read (each lane's loads come first; no lane stores
        // where another loads from, except raw loads, which are checked against the data
        // before the stores below).
        let stored: Vec<u32> = lanes.clone().filter(|&l| store_in(l)).collect();
        for l in lanes.clone() {
            let w = word(l, 4);
            let want = if stored.contains(&l) {
                0xaa00 | l
            } else {
                0x1000 + w as u32
            };
            assert_eq!(d[w], want, "{case}: store, lane {l}");
        }
    }
}
