//! The SOPP/SOPK immediates LLVM prints by name: `s_waitcnt` counters, `s_delay_alu`
//! dependencies, `s_waitcnt_depctr` fields, messages and hardware registers (GFX11 values, from
//! LLVM's AMDGPUAsmUtils / SIDefines as llvm-mc-19 prints them).

use std::fmt::Write;

use crate::gpu::shader::gfx11::tables;

/// `s_waitcnt`: vmcnt [15:10], lgkmcnt [9:4], expcnt [2:0]; counters at their maximum (no
/// wait) are left out unless all are.
pub fn waitcnt(out: &mut String, imm: u32) {
    let fields = [
        ("vmcnt", (imm >> 10) & 0x3f, 0x3f),
        ("expcnt", imm & 7, 7),
        ("lgkmcnt", (imm >> 4) & 0x3f, 0x3f),
    ];
    let all_default = fields.iter().all(|(_, v, max)| v == max);
    for (name, v, max) in fields {
        if v != max || all_default {
            let _ = write!(out, " {name}({v})");
        }
    }
}

const INSTID: [&str; 12] = [
    "NO_DEP",
    "VALU_DEP_1",
    "VALU_DEP_2",
    "VALU_DEP_3",
    "VALU_DEP_4",
    "TRANS32_DEP_1",
    "TRANS32_DEP_2",
    "TRANS32_DEP_3",
    "FMA_ACCUM_CYCLE_1",
    "SALU_CYCLE_1",
    "SALU_CYCLE_2",
    "SALU_CYCLE_3",
];
const INSTSKIP: [&str; 6] = ["SAME", "NEXT", "SKIP_1", "SKIP_2", "SKIP_3", "SKIP_4"];

/// `s_delay_alu`: instid0 [3:0], instskip [6:4], instid1 [10:7]; zero fields are left out.
pub fn delay_alu(out: &mut String, imm: u32) {
    let name = |table: &[&'static str], v: u32| {
        table.get(v as usize).map_or_else(
            || {
                format!(
                    "/* invalid {} value */",
                    if table.len() == 6 {
                        "instskip"
                    } else {
                        "instid"
                    }
                )
            },
            |s| (*s).to_string(),
        )
    };
    let parts = [
        ("instid0", imm & 0xf, &INSTID[..]),
        ("instskip", (imm >> 4) & 7, &INSTSKIP[..]),
        ("instid1", (imm >> 7) & 0xf, &INSTID[..]),
    ];
    let mut sep = " ";
    for (field, v, table) in parts {
        if v != 0 {
            let _ = write!(out, "{sep}{field}({})", name(table, v));
            sep = " | ";
        }
    }
    if sep == " " {
        out.push_str(" 0");
    }
}

/// `s_waitcnt_depctr` fields: name, shift, width, value meaning "no wait".
const DEPCTR: [(&str, u32, u32, u32); 7] = [
    ("depctr_hold_cnt", 7, 1, 1),
    ("depctr_sa_sdst", 0, 1, 1),
    ("depctr_va_vdst", 12, 4, 15),
    ("depctr_va_sdst", 9, 3, 7),
    ("depctr_va_ssrc", 8, 1, 1),
    ("depctr_va_vcc", 1, 1, 1),
    ("depctr_vm_vsrc", 2, 3, 7),
];

/// `s_waitcnt_depctr`: by field when the unused bits 6:5 are clear (only the fields that wait,
/// or all when none does), else in hex.
pub fn depctr(out: &mut String, imm: u32) {
    if imm & 0x60 != 0 {
        let _ = write!(out, " 0x{imm:x}");
        return;
    }
    let value = |shift: u32, width: u32| (imm >> shift) & ((1 << width) - 1);
    let all_default = DEPCTR.iter().all(|&(_, s, w, d)| value(s, w) == d);
    for (name, shift, width, default) in DEPCTR {
        let v = value(shift, width);
        if v != default || all_default {
            let _ = write!(out, " {name}({v})");
        }
    }
}

/// `s_sendmsg`'s immediate: `sendmsg(...)` where llvm-mc-19 prints it so (the generated
/// [`tables::SENDMSG`]), else the number.
pub fn sendmsg(out: &mut String, imm: u32) {
    let low = imm & 0x3ff;
    let symbolic = tables::SENDMSG
        .binary_search_by_key(&low, |&(l, _, _)| u32::from(l))
        .ok()
        .map(|i| tables::SENDMSG[i])
        .filter(|&(_, any_high, _)| any_high || imm >> 10 == 0);
    match symbolic {
        Some((_, _, text)) => out.push_str(text),
        None => {
            let _ = write!(out, "{imm}");
        }
    }
}

/// `s_sendmsg_rtn_*`'s message operand (its SSRC0 field).
pub fn sendmsg_rtn(out: &mut String, msg: u32) {
    out.push_str(tables::SENDMSG_RTN[(msg & 0xff) as usize]);
}

/// `hwreg(NAME, offset, size)`: id [5:0], offset [10:6], size-1 [15:11]; offset 0 and size 32
/// are left out.
pub fn hwreg(out: &mut String, imm: u32) {
    let id = imm & 0x3f;
    let offset = (imm >> 6) & 0x1f;
    let size = ((imm >> 11) & 0x1f) + 1;
    out.push_str("hwreg(");
    match tables::HWREG_NAMES[id as usize] {
        "" => {
            let _ = write!(out, "{id}");
        }
        name => out.push_str(name),
    }
    if offset != 0 || size != 32 {
        let _ = write!(out, ", {offset}, {size}");
    }
    out.push(')');
}
