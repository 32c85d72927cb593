//! Each rule by which the decoder refuses an encoding, pinned by one word that breaks it and
//! the same word with the offending field cleared, which must decode. The fuzz goldens
//! (`shader_decoder_fuzz.rs`) cover the rules on random words; these cases keep every rule
//! checked whatever seed the goldens are drawn with. Every bad word below is one llvm-mc-19
//! refuses (or, for v_smfmac's source, prints as an invalid operand) and every good word one it
//! accepts, on the targets named (checked when the cases were written); the odd VGPR pair is a
//! deliberate difference, explained with it.

use amdgpu_sim::shader::decode::decode;
use amdgpu_sim::shader::disasm::disassemble;
use amdgpu_sim::target::GfxTarget;

struct Case {
    what: &'static str,
    targets: &'static [GfxTarget],
    bad: &'static [u32],
    good: &'static [u32],
}

const BOTH: &[GfxTarget] = &[GfxTarget::Gfx90a, GfxTarget::Gfx942];

const CASES: &[Case] = &[
    Case {
        what: "a 64-bit scalar operand at VCC_HI",
        targets: BOTH,
        bad: &[0x8EF5_966B],
        good: &[0x8EF5_966A],
    },
    Case {
        what: "an SGPR tuple past s103",
        targets: BOTH,
        bad: &[0xC00E_1902, 0x0000_0000],
        good: &[0xC00E_1802, 0x0000_0000],
    },
    Case {
        // LLVM 19's disassembler reads `v_add_f64 v[4:5], v[1:2], s[4:5]`; its assembler and
        // AMD's operand rules for gfx90a/gfx942 refuse the odd pair, and so does the decoder.
        what: "an odd VGPR pair (deliberate: LLVM's disassembler does not check)",
        targets: BOTH,
        bad: &[0xD280_0004, 0x0000_0901],
        good: &[0xD280_0004, 0x0000_0902],
    },
    Case {
        what: "a VGPR tuple past v255",
        targets: BOTH,
        bad: &[0xDC5C_0000, 0xFE00_0002],
        good: &[0xDC5C_0000, 0xFC00_0002],
    },
    Case {
        what: "DPP NEG on an integer instruction",
        targets: BOTH,
        bad: &[0x26E9_78FA, 0xFF10_002C],
        good: &[0x26E9_78FA, 0xFF00_002C],
    },
    Case {
        what: "SDWA OMOD on an integer instruction",
        targets: BOTH,
        bad: &[0x27D0_70F9, 0x0006_462C],
        good: &[0x27D0_70F9, 0x0006_062C],
    },
    Case {
        what: "SIMM16 of s_barrier",
        targets: BOTH,
        bad: &[0xBF8A_1234],
        good: &[0xBF8A_0000],
    },
    Case {
        what: "IMM of s_dcache_inv",
        targets: BOTH,
        bad: &[0xC082_0000, 0x0000_0000],
        good: &[0xC080_0000, 0x0000_0000],
    },
    Case {
        what: "VDST of v_nop",
        targets: BOTH,
        bad: &[0x7E0A_0000],
        good: &[0x7E00_0000],
    },
    Case {
        what: "VDST of ds_write_b32",
        targets: BOTH,
        bad: &[0xD81A_0000, 0x0500_0201],
        good: &[0xD81A_0000, 0x0000_0201],
    },
    Case {
        what: "LDS on buffer_store_dword",
        targets: BOTH,
        bad: &[0xE071_0000, 0x0001_0200],
        good: &[0xE070_0000, 0x0001_0200],
    },
    Case {
        what: "SADDR of flat_load_dword",
        targets: BOTH,
        bad: &[0xDC50_0000, 0x057F_0002],
        good: &[0xDC50_0000, 0x0500_0002],
    },
    Case {
        what: "CLAMP of v_lshlrev_b32_e64",
        targets: BOTH,
        bad: &[0xD112_8004, 0x0002_0501],
        good: &[0xD112_0004, 0x0002_0501],
    },
    Case {
        what: "NEG of an integer VOP3 source",
        targets: BOTH,
        bad: &[0xD112_0004, 0x2002_0501],
        good: &[0xD112_0004, 0x0002_0501],
    },
    Case {
        what: "NEG of v_pk_add_u16's absent SRC2",
        targets: BOTH,
        bad: &[0xD38A_4004, 0x9802_0902],
        good: &[0xD38A_4004, 0x1802_0902],
    },
    Case {
        what: "SCC of global_atomic_add_f32 on gfx90a",
        targets: &[GfxTarget::Gfx90a],
        bad: &[0xDF34_8CE3, 0x027F_A656],
        good: &[0xDD34_8CE3, 0x027F_A656],
    },
    Case {
        what: "ACC of a buffer LDS load",
        targets: BOTH,
        bad: &[0xE045_0000, 0x0581_0000],
        good: &[0xE045_0000, 0x0501_0000],
    },
    Case {
        what: "SC1 of gfx90a's buffer_invl2",
        targets: &[GfxTarget::Gfx90a],
        bad: &[0xE0A4_8000, 0x0000_0000],
        good: &[0xE0A4_0000, 0x0000_0000],
    },
    Case {
        what: "a constant A operand of v_smfmac",
        targets: &[GfxTarget::Gfx942],
        bad: &[0xD3E2_0004, 0x053E_B0F2],
        good: &[0xD3E2_0004, 0x053E_B128],
    },
];

#[test]
fn each_rule_refuses_its_word_and_accepts_the_word_without_the_fault() {
    let mut failures = Vec::new();
    for case in CASES {
        for &target in case.targets {
            if let Ok(inst) = decode(case.bad, target) {
                failures.push(format!(
                    "{}: {} accepted {:08X?} as {}",
                    target.name(),
                    case.what,
                    case.bad,
                    disassemble(&inst, target)
                ));
            }
            match decode(case.good, target) {
                Ok(inst) if usize::from(inst.dwords) == case.good.len() => {}
                Ok(inst) => failures.push(format!(
                    "{}: control of {} decoded to {} dwords",
                    target.name(),
                    case.what,
                    inst.dwords
                )),
                Err(e) => failures.push(format!(
                    "{}: control of {} ({:08X?}) refused: {e}",
                    target.name(),
                    case.what,
                    case.good
                )),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_gfx942_float_atomic_keeps_its_sc1_bit() {
    // The same word as gfx90a's refused case: on gfx942 the bit is SC1, which LLVM accepts.
    let inst = decode(&[0xDF34_8CE3, 0x027F_A656], GfxTarget::Gfx942).expect("decodes");
    assert!(
        disassemble(&inst, GfxTarget::Gfx942).ends_with("sc1"),
        "{}",
        disassemble(&inst, GfxTarget::Gfx942)
    );
}

#[test]
fn gfx942_buffer_inv_keeps_its_scope_bits() {
    // The system-scope acquire LLVM emits on gfx942 (`buffer_inv sc1`, `buffer_inv sc0 sc1`:
    // llvm-mc-19 and -22 print these for the words below); gfx90a refuses them (above).
    for (word, text) in [
        (0xE0A4_4000, "buffer_inv sc0"),
        (0xE0A4_8000, "buffer_inv sc1"),
        (0xE0A4_C000, "buffer_inv sc0 sc1"),
    ] {
        let inst = decode(&[word, 0], GfxTarget::Gfx942).expect("decodes");
        assert_eq!(disassemble(&inst, GfxTarget::Gfx942).trim(), text);
    }
}
