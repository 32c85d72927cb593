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

/// Message ids of `s_sendmsg` and `s_sendmsg_rtn` on GFX11.
const MESSAGES: [(u32, &str); 12] = [
    (1, "MSG_INTERRUPT"),
    (2, "MSG_HS_TESSFACTOR"),
    (3, "MSG_DEALLOC_VGPRS"),
    (4, "MSG_SAVEWAVE"),
    (5, "MSG_STALL_WAVE_GEN"),
    (6, "MSG_HALT_WAVES"),
    (7, "MSG_ORDERED_PS_DONE"),
    (8, "MSG_EARLY_PRIM_DEALLOC"),
    (9, "MSG_GS_ALLOC_REQ"),
    (10, "MSG_GET_DOORBELL"),
    (11, "MSG_GET_DDID"),
    (15, "MSG_SYSMSG"),
];
const RTN_MESSAGES: [(u32, &str); 6] = [
    (128, "MSG_RTN_GET_DOORBELL"),
    (129, "MSG_RTN_GET_DDID"),
    (130, "MSG_RTN_GET_TMA"),
    (131, "MSG_RTN_GET_REALTIME"),
    (132, "MSG_RTN_SAVE_WAVE"),
    (133, "MSG_RTN_GET_TBA"),
];

/// `sendmsg(NAME)` for a known message with no further fields, else the numeric form.
pub fn sendmsg(out: &mut String, imm: u32) {
    let id = imm & 0xff;
    let known = MESSAGES
        .iter()
        .chain(RTN_MESSAGES.iter())
        .find(|(i, _)| *i == id);
    match known {
        Some((_, name)) if imm >> 8 == 0 => {
            let _ = write!(out, "sendmsg({name})");
        }
        _ => {
            let _ = write!(out, "sendmsg({id}, {}, {})", (imm >> 4) & 3, (imm >> 8) & 7);
        }
    }
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
