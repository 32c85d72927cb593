//! GFX11 true16 on the GFX11 shader core: hand-assembled gfx1100 wave32 code whose 16-bit
//! VALU operands name register halves (`v1.h`: bit 7 of an e32 VGPR field, or VOP3 op_sel),
//! checking that each write lands in its half and leaves the other half as it was (GFX10+
//! 16-bit results keep the other half; GFX9 zeroed it), including in lanes EXEC leaves out.
//!
//! The words were assembled with `llvm-mc-22 -arch=amdgcn -mcpu=gfx1100
//! -mattr=+real-true16,+wavefrontsize32 -show-encoding` (real-true16 is also clang-22's and
//! llvm-mc-22's default for gfx1100); the source is beside each word.

mod shader_support;

use amdgpu_sim::target::GfxTarget;
use shader_support::Gpu;

/// 16-bit moves, bitwise ops, integer arithmetic, a compare, `v_cndmask_b16`, conversions,
/// `v_fmac_f16` and DPP moves that leave lanes unwritten, on register halves; each result register is stored at `128 * k + 4 *
/// lane` (see [`expected`]).
const HALVES_KERNEL: &[u32] = &[
    0xf4040200, 0xf8000000, // s_load_b64 s[8:9], s[0:1], 0x0
    0x30280082, // v_lshlrev_b32_e32 v20, 2, v0
    0x7e0202ff, 0x11112222, // v_mov_b32_e32 v1, 0x11112222
    0x7e0402ff, 0x33334444, // v_mov_b32_e32 v2, 0x33334444
    0x7e0602ff, 0x55556666, // v_mov_b32_e32 v3, 0x55556666
    0x7e0802ff, 0x77778888, // v_mov_b32_e32 v4, 0x77778888
    0x7e0a02ff, 0x9999aaaa, // v_mov_b32_e32 v5, 0x9999aaaa
    0x7e0c02ff, 0xbbbbcccc, // v_mov_b32_e32 v6, 0xbbbbcccc
    0x7e0e02ff, 0xddddeeee, // v_mov_b32_e32 v7, 0xddddeeee
    0x7e1002ff, 0x0f0f1e1e, // v_mov_b32_e32 v8, 0xf0f1e1e
    0x7e1202ff, 0x12345678, // v_mov_b32_e32 v9, 0x12345678
    0x7e1402ff, 0xcafebabe, // v_mov_b32_e32 v10, 0xcafebabe
    0x7e1a02ff, 0x3c001234, // v_mov_b32_e32 v13, 0x3c001234
    0x7e1c02ff, 0x5a5a5a5a, // v_mov_b32_e32 v14, 0x5a5a5a5a
    0x7e1e02c1, // v_mov_b32_e32 v15, -1
    0x7f023900, // v_mov_b16_e32 v1.h, v0.l
    0x7e043983, // v_mov_b16_e32 v2.l, v3.h
    0xd7624003, 0x00020104, // v_and_b16 v3.h, v4.l, v0.l op_sel:[0,0,1]
    0xd7630804, 0x00020104, // v_or_b16 v4.l, v4.h, v0.l op_sel:[1,0,0]
    0xd7645005, 0x00020305, // v_xor_b16 v5.h, v5.l, v1.h op_sel:[0,1,1]
    0x7e0cd386, // v_not_b16_e32 v6.l, v6.h
    0xd7034807, 0x00020107, // v_add_nc_u16 v7.h, v7.h, v0.l op_sel:[1,0,1]
    0xd7040007, 0x00020f00, // v_sub_nc_u16 v7.l, v0.l, v7.l
    0xd7054808, 0x00020108, // v_mul_lo_u16 v8.h, v8.h, v0.l op_sel:[1,0,1]
    0x7c73028f, // v_cmp_lt_u16_e32 vcc_lo, 15, v1.h
    0xd65d5009, 0x01aa0502, // v_cndmask_b16 v9.h, v2.l, v2.h, vcc_lo
    0x7e160d00, // v_cvt_f32_u32_e32 v11, v0
    0x7f14150b, // v_cvt_f16_f32_e32 v10.h, v11
    0x7e18178a, // v_cvt_f32_f16_e32 v12, v10.h
    0x6d1b158a, // v_fmac_f16_e32 v13.h, v10.h, v10.h
    0x7e20d781, // v_cvt_u32_u16_e32 v16, v1.h
    0xbefe00ff, 0x0000ffff, // s_mov_b32 exec_lo, 0xffff
    0x7f1c3900, // v_mov_b16_e32 v14.h, v0.l
    0xd703000f, 0x0001030f, // v_add_nc_u16 v15.l, v15.l, 1
    0xbefe00c1, // s_mov_b32 exec_lo, -1
    0x7e2202ff, 0xabcdabcd, // v_mov_b32_e32 v17, 0xabcdabcd
    0x7e2402ff, 0x12121212, // v_mov_b32_e32 v18, 0x12121212
    0x7e2238fa,
    0x1f00b100, // v_mov_b16_dpp v17.l, v0.l quad_perm:[1,0,3,2] row_mask:0x1 bank_mask:0xf
    0x7f2438fa, 0xff011100, // v_mov_b16_dpp v18.h, v0.l row_shr:1 row_mask:0xf bank_mask:0xf
    0xbf89fc07, // s_waitcnt lgkmcnt(0)
    0xdc6a0000, 0x00080114, // global_store_b32 v20, v1, s[8:9]
    0xdc6a0080, 0x00080214, // global_store_b32 v20, v2, s[8:9] offset:128
    0xdc6a0100, 0x00080314, // global_store_b32 v20, v3, s[8:9] offset:256
    0xdc6a0180, 0x00080414, // global_store_b32 v20, v4, s[8:9] offset:384
    0xdc6a0200, 0x00080514, // global_store_b32 v20, v5, s[8:9] offset:512
    0xdc6a0280, 0x00080614, // global_store_b32 v20, v6, s[8:9] offset:640
    0xdc6a0300, 0x00080714, // global_store_b32 v20, v7, s[8:9] offset:768
    0xdc6a0380, 0x00080814, // global_store_b32 v20, v8, s[8:9] offset:896
    0xdc6a0400, 0x00080914, // global_store_b32 v20, v9, s[8:9] offset:1024
    0xdc6a0480, 0x00080a14, // global_store_b32 v20, v10, s[8:9] offset:1152
    0xdc6a0500, 0x00080c14, // global_store_b32 v20, v12, s[8:9] offset:1280
    0xdc6a0580, 0x00080d14, // global_store_b32 v20, v13, s[8:9] offset:1408
    0xdc6a0600, 0x00080e14, // global_store_b32 v20, v14, s[8:9] offset:1536
    0xdc6a0680, 0x00080f14, // global_store_b32 v20, v15, s[8:9] offset:1664
    0xdc6a0700, 0x00081014, // global_store_b32 v20, v16, s[8:9] offset:1792
    0xdc6a0780, 0x00081114, // global_store_b32 v20, v17, s[8:9] offset:1920
    0xdc6a0800, 0x00081214, // global_store_b32 v20, v18, s[8:9] offset:2048
    0xbfb00000, // s_endpgm
];

/// The registers [`HALVES_KERNEL`] stores, in order.
const STORED: usize = 17;

/// A small non-negative integer as an IEEE half (exact below 2048).
fn f16_of(n: u32) -> u32 {
    if n == 0 {
        return 0;
    }
    let e = n.ilog2();
    ((e + 15) << 10) | ((n << (10 - e)) & 0x3ff)
}

/// What lane `l` of [`HALVES_KERNEL`] stores.
fn expected(l: u32) -> [u32; STORED] {
    let hi = |h: u32, lo: u32| (h & 0xffff) << 16 | (lo & 0xffff);
    [
        hi(l, 0x2222),                                    // v_mov_b16 v1.h, v0.l
        hi(0x3333, 0x5555),                               // v_mov_b16 v2.l, v3.h
        hi(0x8888 & l, 0x6666),                           // v_and_b16 v3.h, v4.l, v0.l
        hi(0x7777, 0x7777 | l),                           // v_or_b16 v4.l, v4.h, v0.l
        hi(0xaaaa ^ l, 0xaaaa),                           // v_xor_b16 v5.h, v5.l, v1.h
        hi(0xbbbb, !0xbbbb),                              // v_not_b16 v6.l, v6.h
        hi(0xdddd + l, l.wrapping_sub(0xeeee)),           // v_add_nc_u16 .h; v_sub_nc_u16 .l
        hi(0x0f0f * l, 0x1e1e),                           // v_mul_lo_u16 v8.h, v8.h, v0.l
        hi(if l > 15 { 0x3333 } else { 0x5555 }, 0x5678), // v_cmp_lt_u16; v_cndmask_b16 v9.h
        hi(f16_of(l), 0xbabe),                            // v_cvt_f16_f32 v10.h, v11
        (l as f32).to_bits(),                             // v_cvt_f32_f16 v12, v10.h
        hi(f16_of(l * l + 1), 0x1234),                    // v_fmac_f16 v13.h, v10.h, v10.h
        if l < 16 { hi(l, 0x5a5a) } else { 0x5a5a_5a5a }, // EXEC = lanes 0..15
        if l < 16 { 0xffff_0000 } else { 0xffff_ffff },   // v_add_nc_u16 v15.l, v15.l, 1
        l,                                                // v_cvt_u32_u16 v16, v1.h
        // DPP: row 1 (lanes 16..31) masked off; row_shr:1 has no source in lane 0 of a row.
        if l < 16 {
            hi(0xabcd, l ^ 1)
        } else {
            0xabcd_abcd
        },
        if l % 16 == 0 {
            0x1212_1212
        } else {
            hi(l - 1, 0x1212)
        },
    ]
}

#[test]
fn true16_halves_are_written_without_clobbering_the_other_half() {
    let gpu = Gpu::new(GfxTarget::Gfx1100);
    let raw = gpu.load_raw(HALVES_KERNEL);
    let out = gpu.buffer(STORED * 128);
    out.fill(0xee);
    let stats = gpu
        .dispatch_raw(&raw, [32, 1, 1], [32, 1, 1], &out.va.to_le_bytes())
        .unwrap();
    assert_eq!(stats.waves, 1, "one wave32 wave");
    let got = out.u32s();
    for l in 0..32u32 {
        let want = expected(l);
        for (k, w) in want.iter().enumerate() {
            assert_eq!(
                got[k * 32 + l as usize],
                *w,
                "stored register {k}, lane {l}: got {:#010x}, want {w:#010x}",
                got[k * 32 + l as usize]
            );
        }
    }
}
