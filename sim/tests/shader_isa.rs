//! ISA details the compiled corpus does not reach, in hand-assembled kernels (encodings from
//! `llvm-mc-19 -mcpu=gfx90a -show-encoding`, the assembly beside each word).

mod shader_support;

use shader_support::{Gpu, TARGETS};

/// Rounding modes (MODE.FP_ROUND, set with s_setreg): f32 add, sub, conversion, mul, fma and
/// sqrt, f64 add, and the f32 -> f16 conversion.
const ROUNDING: &[u32] = &[
    0xC006_0080,
    0x0000_0000, // s_load_dwordx2 s[2:3], s[0:1], 0x0
    0xC002_0100,
    0x0000_0008, // s_load_dword s4, s[0:1], 0x8
    0xBF8C_C07F, // s_waitcnt lgkmcnt(0)
    0xB904_1801, // s_setreg_b32 hwreg(HW_REG_MODE, 0, 4), s4
    0x7E02_02F2, // v_mov_b32_e32 v1, 1.0
    0x7E04_02FF,
    0x3080_0000, // v_mov_b32_e32 v2, 0x30800000 (2^-30)
    0x0228_0501, // v_add_f32_e32 v20, v1, v2
    0x042A_0302, // v_sub_f32_e32 v21, v2, v1
    0x7E18_02FF,
    0x0100_0001, // v_mov_b32_e32 v12, 0x1000001
    0x7E2C_0D0C, // v_cvt_f32_u32_e32 v22, v12
    0x7E10_0280, // v_mov_b32_e32 v8, 0
    0x7E12_02FF,
    0x3FF0_0000, // v_mov_b32_e32 v9, 0x3ff00000
    0x7E14_0280, // v_mov_b32_e32 v10, 0
    0x7E16_02FF,
    0x3C30_0000, // v_mov_b32_e32 v11, 0x3c300000 (2^-60 as a double)
    0xD280_0018,
    0x0002_1508, // v_add_f64 v[24:25], v[8:9], v[10:11]
    0x7E1A_02FF,
    0x3EAA_AAAB, // v_mov_b32_e32 v13, 0x3eaaaaab
    0x0A34_1AFF,
    0x4040_0000, // v_mul_f32_e32 v26, 0x40400000, v13
    0x7E26_02FF,
    0x4040_0000, // v_mov_b32_e32 v19, 0x40400000
    0xD1CB_001B,
    0x03CE_270D, // v_fma_f32 v27, v13, v19, -1.0
    0x7E20_02F4, // v_mov_b32_e32 v16, 2.0
    0x7E38_4F10, // v_sqrt_f32_e32 v28, v16
    0x7E3A_150D, // v_cvt_f16_f32_e32 v29, v13
    0x7E00_0280, // v_mov_b32_e32 v0, 0
    0xDC7C_8000,
    0x0002_1400, // global_store_dwordx4 v0, v[20:23], s[2:3]
    0xDC7C_8010,
    0x0002_1800, // global_store_dwordx4 v0, v[24:27], s[2:3] offset:16
    0xDC74_8020,
    0x0002_1C00, // global_store_dwordx2 v0, v[28:29], s[2:3] offset:32
    0xBF81_0000, // s_endpgm
];

#[test]
fn rounding_modes_direct_every_correctly_rounded_operation() {
    // Per mode (0 nearest even, 1 up, 2 down, 3 toward zero), the words of: f32 add, f32 sub,
    // u32 -> f32, f64 add (low, high), f32 mul, f32 fma, f32 sqrt, f32 -> f16.
    let expect: [[u32; 9]; 4] = [
        [
            0x3f80_0000,
            0xbf80_0000,
            0x4b80_0000,
            0,
            0x3ff0_0000,
            0x3f80_0000,
            0x3300_0000,
            0x3fb5_04f3,
            0x3555,
        ],
        [
            0x3f80_0001,
            0xbf7f_ffff,
            0x4b80_0001,
            1,
            0x3ff0_0000,
            0x3f80_0001,
            0x3300_0000,
            0x3fb5_04f4,
            0x3556,
        ],
        [
            0x3f80_0000,
            0xbf80_0000,
            0x4b80_0000,
            0,
            0x3ff0_0000,
            0x3f80_0000,
            0x3300_0000,
            0x3fb5_04f3,
            0x3555,
        ],
        [
            0x3f80_0000,
            0xbf7f_ffff,
            0x4b80_0000,
            0,
            0x3ff0_0000,
            0x3f80_0000,
            0x3300_0000,
            0x3fb5_04f3,
            0x3555,
        ],
    ];
    for target in TARGETS {
        let gpu = Gpu::new(target);
        let raw = gpu.load_raw(ROUNDING);
        for (mode, want) in (0u32..).zip(expect) {
            let out = gpu.buffer(40);
            let mut kernarg = out.va.to_le_bytes().to_vec();
            kernarg.extend((mode | mode << 2).to_le_bytes());
            gpu.dispatch_raw(&raw, [64, 1, 1], [64, 1, 1], &kernarg)
                .expect("dispatch");
            let g = out.u32s();
            // Word 3 is v23, which the kernel does not write.
            let got = [g[0], g[1], g[2], g[4], g[5], g[6], g[7], g[8], g[9]];
            assert_eq!(got, want, "{} mode {mode}", target.name());
        }
    }
}

/// DPP (row broadcasts, wave shifts and rotates, half-row mirror, quad permutes with a bank
/// mask, bound_ctrl, row_newbcast) and SDWA (byte/word selects, sign extension, preserved and
/// sign-extended destination fields). out[16 l ..] = v2..v13.
const DPP_SDWA: &[u32] = &[
    0xC006_0080,
    0x0000_0000, // s_load_dwordx2 s[2:3], s[0:1], 0x0
    0xD1C3_0001,
    0x0205_0700, // v_mad_u32_u24 v1, v0, 3, 1
    0x7E04_02FF,
    0xDEAD_BEEF, // v_mov_b32_e32 v2, 0xdeadbeef
    0x7E06_0302, // v_mov_b32_e32 v3, v2
    0x7E08_0302, // v_mov_b32_e32 v4, v2
    0x7E0A_0302, // v_mov_b32_e32 v5, v2
    0x7E0C_0302, // v_mov_b32_e32 v6, v2
    0x7E0E_0302, // v_mov_b32_e32 v7, v2
    0x7E10_0302, // v_mov_b32_e32 v8, v2
    0x7E12_0302, // v_mov_b32_e32 v9, v2
    0x7E14_02FF,
    0x1234_5678, // v_mov_b32_e32 v10, 0x12345678
    0xBF8C_C07F, // s_waitcnt lgkmcnt(0)
    0x7E04_02FA,
    0xAF01_4201, // v_mov_b32_dpp v2, v1 row_bcast:15 row_mask:0xa bank_mask:0xf
    0x7E06_02FA,
    0xCF01_4301, // v_mov_b32_dpp v3, v1 row_bcast:31 row_mask:0xc bank_mask:0xf
    0x7E08_02FA,
    0xFF01_3801, // v_mov_b32_dpp v4, v1 wave_shr:1 row_mask:0xf bank_mask:0xf
    0x7E0A_02FA,
    0xFF01_3401, // v_mov_b32_dpp v5, v1 wave_rol:1 row_mask:0xf bank_mask:0xf
    0x7E0C_02FA,
    0xFF01_4101, // v_mov_b32_dpp v6, v1 row_half_mirror row_mask:0xf bank_mask:0xf
    0x7E0E_02FA,
    0xF500_4E01, // v_mov_b32_dpp v7, v1 quad_perm:[2,3,0,1] row_mask:0xf bank_mask:0x5
    0x6810_00FA,
    0xFF09_1301, // v_add_u32_dpp v8, v1, v0 row_shr:3 row_mask:0xf bank_mask:0xf bound_ctrl:1
    0x7E12_02FA,
    0xFF01_5301, // v_mov_b32_dpp v9, v1 row_newbcast:3 row_mask:0xf bank_mask:0xf
    0x6814_00F9,
    0x0400_1501, // v_add_u32_sdwa v10, v1, v0 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_0 src1_sel:WORD_0
    0x7E16_0AF9,
    0x0008_0601, // v_cvt_f32_i32_sdwa v11, sext(v1) dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_0
    0x7E18_02C1, // v_mov_b32_e32 v12, -1
    0x6A18_00F9,
    0x0606_0901, // v_sub_u32_sdwa v12, v1, v0 dst_sel:BYTE_1 dst_unused:UNUSED_SEXT src0_sel:DWORD src1_sel:DWORD
    0x241A_0086, // v_lshlrev_b32_e32 v13, 6, v0
    0xDC7C_8000,
    0x0002_020D, // global_store_dwordx4 v13, v[2:5], s[2:3]
    0xDC7C_8010,
    0x0002_060D, // global_store_dwordx4 v13, v[6:9], s[2:3] offset:16
    0xDC7C_8020,
    0x0002_0A0D, // global_store_dwordx4 v13, v[10:13], s[2:3] offset:32
    0xBF81_0000, // s_endpgm
];

#[test]
fn dpp_and_sdwa_lane_selects() {
    for target in TARGETS {
        let gpu = Gpu::new(target);
        let raw = gpu.load_raw(DPP_SDWA);
        let out = gpu.buffer(64 * 64);
        gpu.dispatch_raw(&raw, [64, 1, 1], [64, 1, 1], &out.va.to_le_bytes())
            .expect("dispatch");
        let o = out.u32s();
        let x = |l: usize| 3 * l as u32 + 1;
        let keep = 0xdead_beefu32;
        for l in 0..64 {
            let row = l / 16;
            let v = &o[16 * l..16 * l + 16];
            let want = [
                match row {
                    1 => x(15),
                    3 => x(47),
                    _ => keep,
                },
                if row >= 2 { x(31) } else { keep },
                if l > 0 { x(l - 1) } else { keep },
                x((l + 1) % 64),
                x((l & !7) + 7 - (l & 7)),
                if ((l % 16) / 4) % 2 == 0 {
                    x((l & !3) | [2, 3, 0, 1][l & 3])
                } else {
                    keep
                },
                (if l % 16 >= 3 { x(l - 3) } else { 0 }) + l as u32,
                x((l & !15) + 3),
                (0x1234_5678 & 0xffff) | ((x(l) & 0xff) + l as u32) << 16,
                f32::from(x(l) as u8 as i8).to_bits(),
                {
                    let diff = x(l) - l as u32;
                    let shifted = (diff & 0xff) << 8;
                    if diff & 0x80 != 0 {
                        shifted | 0xffff_0000
                    } else {
                        shifted
                    }
                },
                (l as u32) << 6,
            ];
            assert_eq!(v[..12], want, "{} lane {l}", target.name());
        }
    }
}

/// gfx90a packed single precision (op_sel, op_sel_hi, neg_lo/neg_hi), v_pk_mov_b32, v_perm_b32
/// and v_alignbyte_b32. out[16 l ..] = v6..v15.
const PACKED: &[u32] = &[
    0xC006_0080,
    0x0000_0000, // s_load_dwordx2 s[2:3], s[0:1], 0x0
    0x7E04_0D00, // v_cvt_f32_u32_e32 v2, v0
    0x0206_04F0, // v_add_f32_e32 v3, 0.5, v2
    0x0A08_04F5, // v_mul_f32_e32 v4, -2.0, v2
    0x7E0A_02F2, // v_mov_b32_e32 v5, 1.0
    0xD3B0_4006,
    0x0C0A_0902, // v_pk_fma_f32 v[6:7], v[2:3], v[4:5], v[2:3] op_sel_hi:[1,0,1]
    0xD3B3_4808,
    0x1802_0902, // v_pk_mov_b32 v[8:9], v[2:3], v[4:5] op_sel:[1,0]
    0xD3B2_410A,
    0x5802_0902, // v_pk_add_f32 v[10:11], v[2:3], v[4:5] neg_lo:[0,1] neg_hi:[1,0]
    0xD3B1_580C,
    0x0002_0902, // v_pk_mul_f32 v[12:13], v[2:3], v[4:5] op_sel:[1,1] op_sel_hi:[0,0]
    0xBE84_00FF,
    0x0504_0100, // s_mov_b32 s4, 0x5040100
    0xD1ED_000E,
    0x0012_0700, // v_perm_b32 v14, v0, v3, s4
    0xD1CF_000F,
    0x0206_0700, // v_alignbyte_b32 v15, v0, v3, 1
    0x2420_0086, // v_lshlrev_b32_e32 v16, 6, v0
    0xBF8C_C07F, // s_waitcnt lgkmcnt(0)
    0xDC7C_8000,
    0x0002_0610, // global_store_dwordx4 v16, v[6:9], s[2:3]
    0xDC7C_8010,
    0x0002_0A10, // global_store_dwordx4 v16, v[10:13], s[2:3] offset:16
    0xDC74_8020,
    0x0002_0E10, // global_store_dwordx2 v16, v[14:15], s[2:3] offset:32
    0xBF81_0000, // s_endpgm
];

#[test]
fn packed_f32_and_byte_permutes() {
    for target in TARGETS {
        let gpu = Gpu::new(target);
        let raw = gpu.load_raw(PACKED);
        let out = gpu.buffer(64 * 64);
        gpu.dispatch_raw(&raw, [64, 1, 1], [64, 1, 1], &out.va.to_le_bytes())
            .expect("dispatch");
        let o = out.u32s();
        for l in 0..64usize {
            let f = l as f32;
            let (v2, v3, v4, v5) = (f, f + 0.5, -2.0 * f, 1.0f32);
            let want = [
                v2.mul_add(v4, v2).to_bits(),
                v3.mul_add(v4, v3).to_bits(),
                v3.to_bits(),
                v4.to_bits(),
                (v2 - v4).to_bits(),
                (-v3 + v5).to_bits(),
                (v3 * v5).to_bits(),
                (v2 * v4).to_bits(),
                (v3.to_bits() & 0xffff) | (l as u32) << 16,
                (v3.to_bits() >> 8) | (l as u32) << 24,
            ];
            assert_eq!(o[16 * l..16 * l + 10], want, "{} lane {l}", target.name());
        }
    }
}

/// Scalar ALU corners: bitfield extracts (32/64-bit, signed), find-first/last-bit, bit reverse,
/// shift-add, absdiff, mul_hi, quad masks, SCC from compares and carries, SOPK multiplies,
/// s_getreg of MODE, pack, min/max; then the scalar cache and ATC hints, which run as no-ops.
/// out[0..24] = s20..s31, s8..s19.
const SCALAR: &[u32] = &[
    0xC006_0080,
    0x0000_0000, // s_load_dwordx2 s[2:3], s[0:1], 0x0
    0xBE84_00FF,
    0x80F0_0FF1, // s_mov_b32 s4, 0x80f00ff1
    0x9294_FF04,
    0x0008_0004, // s_bfe_u32 s20, s4, 0x80004
    0x9315_FF04,
    0x0008_0004, // s_bfe_i32 s21, s4, 0x80004
    0xBE96_1404, // s_flbit_i32 s22, s4
    0xBE97_1004, // s_ff1_i32_b32 s23, s4
    0xBE98_0804, // s_brev_b32 s24, s4
    0x9899_0404, // s_lshl4_add_u32 s25, s4, s4
    0x951A_8504, // s_absdiff_i32 s26, s4, 5
    0x969B_0404, // s_mul_hi_i32 s27, s4, s4
    0xBE9C_2804, // s_quadmask_b32 s28, s4
    0xBE9D_0604, // s_wqm_b32 s29, s4
    0xBE9E_0C04, // s_bcnt1_i32_b32 s30, s4
    0xBE9F_1204, // s_flbit_i32_b32 s31, s4
    0xBE86_01FF,
    0x0000_FFFF, // s_mov_b64 s[6:7], 0xffff
    0x8E86_A806, // s_lshl_b64 s[6:7], s[6:7], 40
    0x9408_FF06,
    0x0010_0030, // s_bfe_i64 s[8:9], s[6:7], 0x100030
    0xBE8A_1604, // s_sext_i32_i8 s10, s4
    0xBE8A_1A89, // s_bitset1_b32 s10, 9
    0xBF04_8004, // s_cmp_lt_i32 s4, 0
    0x850B_8987, // s_cselect_b32 s11, 7, 9
    0x820C_0404, // s_addc_u32 s12, s4, s4
    0x850D_8081, // s_cselect_b32 s13, 1, 0
    0xBF0D_9F04, // s_bitcmp1_b32 s4, 31
    0x850E_8081, // s_cselect_b32 s14, 1, 0
    0xB00F_8000, // s_movk_i32 s15, 0x8000
    0xB78F_0003, // s_mulk_i32 s15, 0x3
    0xB890_1901, // s_getreg_b32 s16, hwreg(HW_REG_MODE, 4, 4)
    0x9991_040F, // s_pack_lh_b32_b16 s17, s15, s4
    0x8312_0F04, // s_min_i32 s18, s4, s15
    0x8493_0F04, // s_max_u32 s19, s4, s15
    0xBF8C_C07F, // s_waitcnt lgkmcnt(0)
    0x7E00_0280, // v_mov_b32_e32 v0, 0
    0x7E18_0214, // v_mov_b32_e32 v12, s20
    0x7E1A_0215, // v_mov_b32_e32 v13, s21
    0x7E1C_0216, // v_mov_b32_e32 v14, s22
    0x7E1E_0217, // v_mov_b32_e32 v15, s23
    0xDC7C_8000,
    0x0002_0C00, // global_store_dwordx4 v0, v[12:15], s[2:3]
    0x7E18_0218, // v_mov_b32_e32 v12, s24
    0x7E1A_0219, // v_mov_b32_e32 v13, s25
    0x7E1C_021A, // v_mov_b32_e32 v14, s26
    0x7E1E_021B, // v_mov_b32_e32 v15, s27
    0xDC7C_8010,
    0x0002_0C00, // global_store_dwordx4 v0, v[12:15], s[2:3] offset:16
    0x7E18_021C, // v_mov_b32_e32 v12, s28
    0x7E1A_021D, // v_mov_b32_e32 v13, s29
    0x7E1C_021E, // v_mov_b32_e32 v14, s30
    0x7E1E_021F, // v_mov_b32_e32 v15, s31
    0xDC7C_8020,
    0x0002_0C00, // global_store_dwordx4 v0, v[12:15], s[2:3] offset:32
    0x7E18_0208, // v_mov_b32_e32 v12, s8
    0x7E1A_0209, // v_mov_b32_e32 v13, s9
    0x7E1C_020A, // v_mov_b32_e32 v14, s10
    0x7E1E_020B, // v_mov_b32_e32 v15, s11
    0xDC7C_8030,
    0x0002_0C00, // global_store_dwordx4 v0, v[12:15], s[2:3] offset:48
    0x7E18_020C, // v_mov_b32_e32 v12, s12
    0x7E1A_020D, // v_mov_b32_e32 v13, s13
    0x7E1C_020E, // v_mov_b32_e32 v14, s14
    0x7E1E_020F, // v_mov_b32_e32 v15, s15
    0xDC7C_8040,
    0x0002_0C00, // global_store_dwordx4 v0, v[12:15], s[2:3] offset:64
    0x7E18_0210, // v_mov_b32_e32 v12, s16
    0x7E1A_0211, // v_mov_b32_e32 v13, s17
    0x7E1C_0212, // v_mov_b32_e32 v14, s18
    0x7E1E_0213, // v_mov_b32_e32 v15, s19
    0xDC7C_8050,
    0x0002_0C00, // global_store_dwordx4 v0, v[12:15], s[2:3] offset:80
    0xC0A6_0001,
    0x0000_0000, // s_dcache_discard_x2 s[2:3], 0x0 (a cache hint: no effect)
    0xC09A_0001,
    0x0000_0000, // s_atc_probe 0, s[2:3], 0x0 (a translation hint: no effect)
    0xBF81_0000, // s_endpgm
];

#[test]
fn scalar_alu_corners() {
    for target in TARGETS {
        let gpu = Gpu::new(target);
        let raw = gpu.load_raw(SCALAR);
        let out = gpu.buffer(96);
        gpu.dispatch_raw(&raw, [1, 1, 1], [1, 1, 1], &out.va.to_le_bytes())
            .expect("dispatch");
        let s4 = 0x80f0_0ff1u32;
        let s15 = 0xffff_8000u32.wrapping_mul(3);
        let want = [
            (s4 >> 4) & 0xff,
            0xffff_ffff,
            1,
            0,
            s4.reverse_bits(),
            (s4 << 4).wrapping_add(s4),
            (s4 as i32).wrapping_sub(5).unsigned_abs(),
            ((i64::from(s4 as i32) * i64::from(s4 as i32)) >> 32) as u32,
            0xa7,
            0xf0f0_0fff,
            s4.count_ones(),
            0,
            0xff,
            0,
            0xffff_fff1,
            7,
            s4.wrapping_mul(2).wrapping_add(1),
            1,
            1,
            s15,
            0xf,
            (s15 & 0xffff) | (s4 & 0xffff_0000),
            s4,
            0xfffe_8000,
        ];
        assert_eq!(out.u32s(), want, "{}", target.name());
    }
}

/// Mixed-precision FMA: the NEG_HI bits of v_fma_mix* are the sources' ABS modifiers,
/// OP_SEL_HI picks which sources are halves, v_fma_mixlo_f16 keeps the high half.
/// out[2 l] = v5, out[2 l + 1] = v7.
const MIX: &[u32] = &[
    0xC006_0080,
    0x0000_0000, // s_load_dwordx2 s[2:3], s[0:1], 0x0
    0x7E04_0D00, // v_cvt_f32_u32_e32 v2, v0
    0x0A06_04F5, // v_mul_f32_e32 v3, -2.0, v2
    0x7E08_1503, // v_cvt_f16_f32_e32 v4, v3
    0x7E0C_02F0, // v_mov_b32_e32 v6, 0.5
    0xD3A0_4505,
    0x2412_0D03, // v_fma_mix_f32 v5, -|v3|, v6, |v4| op_sel_hi:[0,0,1]
    0x7E0E_02FF,
    0xABCD_0000, // v_mov_b32_e32 v7, 0xabcd0000
    0xD3A1_4107,
    0x8412_0D03, // v_fma_mixlo_f16 v7, |v3|, v6, -v4 op_sel_hi:[0,0,1]
    0x2420_0083, // v_lshlrev_b32_e32 v16, 3, v0
    0xBF8C_C07F, // s_waitcnt lgkmcnt(0)
    0xDC70_8000,
    0x0002_0510, // global_store_dword v16, v5, s[2:3]
    0xDC70_8004,
    0x0002_0710, // global_store_dword v16, v7, s[2:3] offset:4
    0xBF81_0000, // s_endpgm
];

/// The half-precision bits of a small non-negative integer (exact below 2048).
fn f16_of_int(n: u32) -> u32 {
    if n == 0 {
        return 0;
    }
    let e = n.ilog2();
    ((e + 15) << 10) | ((n << (10 - e)) & 0x3ff)
}

#[test]
fn mixed_precision_fma_modifiers() {
    for target in TARGETS {
        let gpu = Gpu::new(target);
        let raw = gpu.load_raw(MIX);
        let out = gpu.buffer(64 * 8);
        gpu.dispatch_raw(&raw, [64, 1, 1], [64, 1, 1], &out.va.to_le_bytes())
            .expect("dispatch");
        let o = out.u32s();
        for l in 0..64u32 {
            // -|-2l| * 0.5 + |-2l| = l;  |-2l| * 0.5 - (-2l) = 3l.
            let want = [(l as f32).to_bits(), 0xabcd_0000 | f16_of_int(3 * l)];
            let l = l as usize;
            assert_eq!(o[2 * l..2 * l + 2], want, "{} lane {l}", target.name());
        }
    }
}

/// v_fma_mix_f32, v_fma_mixlo_f16 and v_fma_mixhi_f16 of one f32 triple per lane (16 bytes
/// apart in s[4:5]; all op_sel_hi clear: every source an f32); in s[6:7], 16 bytes apart too:
/// out[4 l] = mix_f32, out[4 l + 1] = mixhi << 16 | mixlo.
const MIX_ROUNDING: &[u32] = &[
    0xC00A_0100,
    0x0000_0000, // s_load_dwordx4 s[4:7], s[0:1], 0x0
    0x2414_0084, // v_lshlrev_b32_e32 v10, 4, v0
    0xBF8C_C07F, // s_waitcnt lgkmcnt(0)
    0xDC58_8000,
    0x0204_000A, // global_load_dwordx3 v[2:4], v10, s[4:5]
    0x7E0E_0280, // v_mov_b32_e32 v7, 0
    0xBF8C_0F70, // s_waitcnt vmcnt(0)
    0xD3A0_0006,
    0x0412_0702, // v_fma_mix_f32 v6, v2, v3, v4
    0xD3A1_0007,
    0x0412_0702, // v_fma_mixlo_f16 v7, v2, v3, v4
    0xD3A2_0007,
    0x0412_0702, // v_fma_mixhi_f16 v7, v2, v3, v4
    0xDC74_8000,
    0x0006_060A, // global_store_dwordx2 v10, v[6:7], s[6:7]
    0xBF81_0000, // s_endpgm
];

/// Round an f32 in f16's normal range to f16 bits, to nearest even.
fn f16_of_normal_f32(f: f32) -> u32 {
    let b = f.to_bits();
    let (sign, exp, man) = (b >> 31, (b >> 23) & 0xff, b & 0x7f_ffff);
    assert!((113..=142).contains(&exp), "{f} outside f16's normal range");
    let (keep, rest) = (man >> 13, man & 0x1fff);
    let up = rest > 0x1000 || (rest == 0x1000 && keep & 1 == 1);
    // A carry out of the mantissa bumps the exponent, as the bit layout makes it.
    (sign << 15) | ((((exp - 112) << 10) | keep) + u32::from(up))
}

#[test]
fn mixed_precision_fma_rounds_once_to_f32() {
    // (a, b, c) whose exact a × b + c lies just off a halfway point between two f32 values
    // (or, for the f16 forms, two f16 values), by less than a double can hold: a double FMA
    // lands on the halfway point and a second rounding picks the even side, the wrong one.
    let pow2 = |e: i32| 2f32.powi(e);
    let mut triples = vec![
        // 4097² = 16785409, halfway between the f32 values 16785408 and 16785410.
        (4097.0, 4097.0, pow2(-30)),
        (-4097.0, 4097.0, -pow2(-30)),
        // 4099² = 16801801, halfway between 16801800 (even) and 16801802.
        (4099.0, 4099.0, pow2(-30)),
        (4099.0, 4099.0, -pow2(-30)),
        // 1 + 2^-11 is halfway between the f16 values 1 and 1 + 2^-10: exact in f32, so the
        // f32 FMA drops the 2^-40 and the f16 conversion ties to 1 (the ISA's
        // f32_to_f16(fma(...))); one rounding from the exact value would give 1 + 2^-10.
        (1.0 + pow2(-11), 1.0, pow2(-40)),
        (1.0 + pow2(-11), -1.0, -pow2(-40)),
    ];
    // And pseudo-random triples with f16-range results, against the same reference.
    let mut x = 0x2545_f491_u32;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    };
    while triples.len() < 64 {
        let mut f = || f32::from_bits((next() & 0x807f_ffff) | (0x7c + next() % 8) << 23);
        triples.push((f(), f(), f()));
    }
    let mut input = Vec::new();
    for (a, b, c) in &triples {
        input.extend([a.to_bits(), b.to_bits(), c.to_bits(), 0]);
    }
    for target in TARGETS {
        let gpu = Gpu::new(target);
        let raw = gpu.load_raw(MIX_ROUNDING);
        let (src, out) = (gpu.buffer_u32(&input), gpu.buffer(64 * 16));
        let mut args = src.va.to_le_bytes().to_vec();
        args.extend(out.va.to_le_bytes());
        gpu.dispatch_raw(&raw, [64, 1, 1], [64, 1, 1], &args)
            .expect("dispatch");
        let o = out.u32s();
        for (l, (a, b, c)) in triples.iter().enumerate() {
            // f32::mul_add is a correctly rounded fused multiply-add.
            let fma = a.mul_add(*b, *c);
            assert_eq!(
                o[4 * l],
                fma.to_bits(),
                "{} mix_f32 lane {l}: {a:e} * {b:e} + {c:e} = {fma:e}",
                target.name()
            );
            if (pow2(-14)..65504.0).contains(&fma.abs()) {
                let h = f16_of_normal_f32(fma);
                assert_eq!(
                    o[4 * l + 1],
                    h << 16 | h,
                    "{} mixlo/mixhi lane {l}: f16 of {fma:e}",
                    target.name()
                );
            }
        }
    }
}
