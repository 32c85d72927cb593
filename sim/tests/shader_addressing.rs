//! Address arithmetic of vector and scalar memory as gfx9 forms it, in hand-assembled kernels
//! (encodings from `llvm-mc-22 -arch=amdgcn -mcpu=gfx90a -show-encoding`, the assembly beside
//! each word): MUBUF offsets and indices are 32-bit sums, so a negative VGPR offset plus an
//! immediate addresses the bytes clang means (its code for `strlen` over a private array
//! starts the pointer at -1 and loads with `offset:1`); every dword of a multi-dword access is
//! addressed and range-checked on its own; the private segment buffer (swizzled, ADD_TID) is
//! not range-checked on the offset; s_buffer_load's offset is a 32-bit sum too.

mod shader_support;

use shader_support::{Gpu, TARGETS};

/// A private-segment-style descriptor in s[8:11] over the buffer at kernarg 8 (SWIZZLE_ENABLE,
/// stride 0, ELEMENT_SIZE 4, INDEX_STRIDE 64, ADD_TID_ENABLE: what ROCr and aqueduct build for
/// scratch), read and written through VGPR offsets of -1, -4, -2 and -8 with immediates that
/// bring them back to bytes 0 to 23 and 68 to 75 of each lane. NUM_RECORDS is 64, less than
/// the last offsets: gfx9 does not range-check this kind of buffer on its offset (only the
/// index, the lane id, against NUM_RECORDS). out[4 l ..] = v2..v5.
const PRIVATE_NEGATIVE_OFFSETS: &[u32] = &[
    0xC00A_0100,
    0x0000_0000, // s_load_dwordx4 s[4:7], s[0:1], 0x0
    0xBF8C_C07F, // s_waitcnt lgkmcnt(0)
    0xBE88_0006, // s_mov_b32 s8, s6
    0x8709_FF07,
    0x8000_0000, // s_or_b32 s9, s7, 0x80000000
    0xBE8A_00C0, // s_mov_b32 s10, 64
    0xBE8B_00FF,
    0x00EA_4FAC, // s_mov_b32 s11, 0xea4fac
    0x7E02_02C1, // v_mov_b32_e32 v1, -1
    0xE040_1001,
    0x8002_0201, // buffer_load_ubyte v2, v1, s[8:11], 0 offen offset:1
    0x7E02_02C4, // v_mov_b32_e32 v1, -4
    0xE050_1004,
    0x8002_0301, // buffer_load_dword v3, v1, s[8:11], 0 offen offset:4
    0xE054_1048,
    0x8002_0401, // buffer_load_dwordx2 v[4:5], v1, s[8:11], 0 offen offset:72
    0xBF8C_0F70, // s_waitcnt vmcnt(0)
    0x7E02_02C2, // v_mov_b32_e32 v1, -2
    0x280C_00FF,
    0x0000_0080, // v_or_b32_e32 v6, 0x80, v0
    0xE060_1003,
    0x8002_0601, // buffer_store_byte v6, v1, s[8:11], 0 offen offset:3
    0x7E02_02C8, // v_mov_b32_e32 v1, -8
    0x2810_00FF,
    0x0000_7000, // v_or_b32_e32 v8, 0x7000, v0
    0x2812_00FF,
    0x0000_8000, // v_or_b32_e32 v9, 0x8000, v0
    0xE074_1014,
    0x8002_0801, // buffer_store_dwordx2 v[8:9], v1, s[8:11], 0 offen offset:20
    0x2414_0084, // v_lshlrev_b32_e32 v10, 4, v0
    0xDC7C_8000,
    0x0004_020A, // global_store_dwordx4 v10, v[2:5], s[4:5]
    0xBF81_0000, // s_endpgm
];

/// Byte `o` of `lane` in the private layout (4-byte elements, 64 lanes).
fn swizzled(o: usize, lane: usize) -> usize {
    (o / 4) * 256 + lane * 4 + o % 4
}

/// Dword `d` of lane `lane`'s private memory as the test fills it.
fn private_word(d: usize, lane: usize) -> u32 {
    0xA000_0000 | (d as u32) << 16 | (lane as u32) << 8 | ((lane + d) as u32 & 0xff)
}

#[test]
fn private_buffer_accesses_wrap_a_negative_vgpr_offset_at_32_bits() {
    for target in TARGETS {
        let gpu = Gpu::new(target);
        let raw = gpu.load_raw(PRIVATE_NEGATIVE_OFFSETS);
        let out = gpu.buffer(64 * 16);
        let private = gpu.buffer(24 * 256);
        for lane in 0..64 {
            for d in 0..24 {
                let at = swizzled(4 * d, lane);
                private.write(at, &private_word(d, lane).to_le_bytes());
            }
        }
        let mut kernarg = out.va.to_le_bytes().to_vec();
        kernarg.extend(private.va.to_le_bytes());
        gpu.dispatch_raw(&raw, [64, 1, 1], [64, 1, 1], &kernarg)
            .expect("dispatch");
        let got = out.u32s();
        let mem = private.bytes();
        let word = |d: usize, lane: usize| {
            let at = swizzled(4 * d, lane);
            u32::from_le_bytes(mem[at..at + 4].try_into().unwrap())
        };
        for lane in 0..64 {
            let want = [
                // buffer_load_ubyte at -1 + 1: byte 0.
                private_word(0, lane) & 0xff,
                // buffer_load_dword at -4 + 4: dword 0.
                private_word(0, lane),
                // buffer_load_dwordx2 at -4 + 72: dwords 17 and 18, past NUM_RECORDS.
                private_word(17, lane),
                private_word(18, lane),
            ];
            assert_eq!(
                got[4 * lane..4 * lane + 4],
                want,
                "{} lane {lane}",
                target.name()
            );
            // buffer_store_byte at -2 + 3: byte 1 of dword 0.
            let byte1 = (0x80 | lane as u32) & 0xff;
            assert_eq!(
                word(0, lane),
                private_word(0, lane) & !0xff00 | byte1 << 8,
                "{} lane {lane} byte store",
                target.name()
            );
            // buffer_store_dwordx2 at -8 + 20: dwords 3 and 4; 5 untouched.
            assert_eq!(
                [word(3, lane), word(4, lane), word(5, lane)],
                [
                    0x7000 | lane as u32,
                    0x8000 | lane as u32,
                    private_word(5, lane)
                ],
                "{} lane {lane} dwordx2 store",
                target.name()
            );
        }
    }
}

/// A raw buffer (no swizzle, no ADD_TID, NUM_RECORDS 64 bytes) in s[8:11] and a structured one
/// (stride 16, NUM_RECORDS 4 records) in s[12:15], both over the buffer at kernarg 8; one
/// lane. out = [v2, s17, v4, v5, v6, v7, v8, v9, v12, v14].
const RAW_AND_STRUCTURED: &[u32] = &[
    0xC00A_0100,
    0x0000_0000, // s_load_dwordx4 s[4:7], s[0:1], 0x0
    0xBF8C_C07F, // s_waitcnt lgkmcnt(0)
    0xBE88_0006, // s_mov_b32 s8, s6
    0xBE89_0007, // s_mov_b32 s9, s7
    0xBE8A_00C0, // s_mov_b32 s10, 64
    0xBE8B_00FF,
    0x0002_4FAC, // s_mov_b32 s11, 0x24fac
    0x7E02_02C4, // v_mov_b32_e32 v1, -4
    0xE050_1008,
    0x8002_0201, // buffer_load_dword v2, v1, s[8:11], 0 offen offset:8
    0x7E02_02D0, // v_mov_b32_e32 v1, -16
    0xE054_1018,
    0x8002_0401, // buffer_load_dwordx2 v[4:5], v1, s[8:11], 0 offen offset:24
    0x7E02_02B4, // v_mov_b32_e32 v1, 52
    0xE05C_1004,
    0x8002_0601, // buffer_load_dwordx4 v[6:9], v1, s[8:11], 0 offen offset:4
    0xBF8C_0F70, // s_waitcnt vmcnt(0)
    0x7E02_02C1, // v_mov_b32_e32 v1, -1
    0x7E06_02FF,
    0x0000_005A, // v_mov_b32_e32 v3, 0x5a
    0xE060_1029,
    0x8002_0301, // buffer_store_byte v3, v1, s[8:11], 0 offen offset:41
    0x7E02_02BC, // v_mov_b32_e32 v1, 60
    0xE070_1004,
    0x8002_0301, // buffer_store_dword v3, v1, s[8:11], 0 offen offset:4
    0xBE8C_0006, // s_mov_b32 s12, s6
    0x870D_FF07,
    0x0010_0000, // s_or_b32 s13, s7, 0x100000
    0xBE8E_0084, // s_mov_b32 s14, 4
    0xBE8F_00FF,
    0x0002_4FAC, // s_mov_b32 s15, 0x24fac
    0x7E14_0282, // v_mov_b32_e32 v10, 2
    0x7E16_02C4, // v_mov_b32_e32 v11, -4
    0xE050_3008,
    0x8003_0C0A, // buffer_load_dword v12, v[10:11], s[12:15], 0 idxen offen offset:8
    0x7E1A_0284, // v_mov_b32_e32 v13, 4
    0xE050_2000,
    0x8003_0E0D, // buffer_load_dword v14, v13, s[12:15], 0 idxen
    0xBE90_00C4, // s_mov_b32 s16, -4
    0xC022_4444,
    0x2000_0008, // s_buffer_load_dword s17, s[8:11], s16 offset:0x8
    0xBF8C_0070, // s_waitcnt vmcnt(0) lgkmcnt(0)
    0x7E06_0211, // v_mov_b32_e32 v3, s17
    0x7E00_0280, // v_mov_b32_e32 v0, 0
    0xDC7C_8000,
    0x0004_0200, // global_store_dwordx4 v0, v[2:5], s[4:5]
    0xDC7C_8010,
    0x0004_0600, // global_store_dwordx4 v0, v[6:9], s[4:5] offset:16
    0xDC70_8020,
    0x0004_0C00, // global_store_dword v0, v12, s[4:5] offset:32
    0xDC70_8024,
    0x0004_0E00, // global_store_dword v0, v14, s[4:5] offset:36
    0xBF81_0000, // s_endpgm
];

#[test]
fn raw_and_structured_buffers_form_offsets_in_32_bits_and_check_each_dword() {
    for target in TARGETS {
        let gpu = Gpu::new(target);
        let raw = gpu.load_raw(RAW_AND_STRUCTURED);
        let out = gpu.buffer(40);
        let data = gpu.buffer(128);
        let words: Vec<u32> = (0..32).map(|k| 0x100 + k).collect();
        data.write_u32s(&words);
        let mut kernarg = out.va.to_le_bytes().to_vec();
        kernarg.extend(data.va.to_le_bytes());
        gpu.dispatch_raw(&raw, [1, 1, 1], [1, 1, 1], &kernarg)
            .expect("dispatch");
        assert_eq!(
            out.u32s(),
            [
                // buffer_load_dword at -4 + 8: dword 1.
                0x101, // s_buffer_load_dword at s16 = -4 plus offset 8: dword 1.
                0x101, // buffer_load_dwordx2 at -16 + 24: dwords 2 and 3.
                0x102, 0x103,
                // buffer_load_dwordx4 at 56: two dwords in range, two past NUM_RECORDS.
                0x10e, 0x10f, 0, 0,
                // idxen offen: record 2, offset -4 + 8 = 4: byte 36, dword 9.
                0x109, // idxen: record 4 of 4 is out of range.
                0,
            ],
            "{}",
            target.name()
        );
        let after = data.u32s();
        // buffer_store_byte at -1 + 41: byte 40, the low byte of dword 10.
        assert_eq!(after[10], 0x15a, "{}", target.name());
        // buffer_store_dword at 64 is out of range: dropped.
        assert_eq!(after[16], 0x110, "{}", target.name());
        let untouched: Vec<usize> = (0..32)
            .filter(|&k| k != 10 && after[k] != words[k])
            .collect();
        assert!(
            untouched.is_empty(),
            "{}: dwords {untouched:?} changed",
            target.name()
        );
    }
}
