//! The GFX11 decoder against the oracle: every instruction of every gfx1100 test code object,
//! decoded and disassembled by the simulator, must read exactly as `llvm-objdump-19 -d
//! --mcpu=gfx1100` printed it (the goldens tests/kernels/build.sh writes next to the code
//! objects, so this test needs no LLVM at run time).
//!
//! The wave64 builds (`*.w64.co5`, `*.w64.co6`) are disassembled by LLVM as wave64, which
//! names lane masks `vcc`, `exec` and `s[n:n+1]` where the simulator's disassembler (wave32
//! spelling) prints `vcc_lo`, `exec_lo` and `sn`: the encodings decode the same, so there a
//! line also matches when LLVM's text in wave32 spelling equals ours.

mod objdump_support;

use amdgpu_sim::shader::gfx11::decode::decode;
use amdgpu_sim::shader::gfx11::disasm::disassemble;
use objdump_support::{Decoded, Report, compare_dir};

fn gfx11(words: &[u32]) -> Decoded {
    decode(words)
        .map(|inst| (usize::from(inst.dwords), disassemble(&inst)))
        .map_err(|e| e.to_string())
}

#[test]
fn gfx11_decoder_matches_llvm_objdump_on_every_gfx1100_corpus_instruction() {
    let mut report = Report::default();
    compare_dir("gfx1100", &gfx11, &mut report);
    // Wave64 objects: LLVM names lane masks as in wave64, our disassembler as in wave32.
    report.failures.retain(|f| !matches_in_wave32_spelling(f));
    report.assert_clean("llvm-objdump-19 --mcpu=gfx1100", 80, 60);
}

/// Whether a failure line of a wave64 object reads the same once LLVM's lane-mask names are
/// spelt as in wave32.
fn matches_in_wave32_spelling(failure: &str) -> bool {
    let mut lines = failure.lines();
    let wave64 = lines
        .next()
        .and_then(|head| head.split_whitespace().next())
        .is_some_and(|file| file.contains(".w64.co"));
    let field = |line: Option<&str>, key: &str| {
        line.and_then(|l| l.trim().strip_prefix(key))
            .map(str::to_owned)
    };
    let (Some(llvm), Some(ours)) = (field(lines.next(), "llvm: "), field(lines.next(), "ours: "))
    else {
        return false;
    };
    wave64 && same_but_lane_mask_names(&llvm, &ours)
}

/// The text as tokens (register names, numbers, mnemonics) and the characters between them.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut token = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '_' | '[' | ']' | ':') {
            token.push(c);
        } else {
            if !token.is_empty() {
                out.push(std::mem::take(&mut token));
            }
            out.push(c.to_string());
        }
    }
    if !token.is_empty() {
        out.push(token);
    }
    out
}

/// A wave64 lane-mask name as wave32 spells it: `vcc` as `vcc_lo`, `exec` as `exec_lo`, a
/// pair `s[n:n+1]` as `sn`.
fn wave32_name(token: &str) -> Option<String> {
    match token {
        "vcc" => return Some("vcc_lo".into()),
        "exec" => return Some("exec_lo".into()),
        _ => {}
    }
    let (a, b) = token
        .strip_prefix("s[")?
        .strip_suffix(']')?
        .split_once(':')?;
    let (a, b) = (a.parse::<u32>().ok()?, b.parse::<u32>().ok()?);
    (b == a + 1).then(|| format!("s{a}"))
}

/// Whether `ours` is LLVM's wave64 text with some lane masks named as in wave32 (a 64-bit
/// operand that is not a lane mask prints as a pair in both).
fn same_but_lane_mask_names(llvm: &str, ours: &str) -> bool {
    let (l, o) = (tokens(llvm), tokens(ours));
    l.len() == o.len()
        && l.iter()
            .zip(&o)
            .all(|(l, o)| l == o || wave32_name(l).as_deref() == Some(o.as_str()))
}

#[test]
fn wave64_lane_masks_match_their_wave32_names_only() {
    assert!(same_but_lane_mask_names(
        "v_add_co_ci_u32_e64 v5, s[0:1], s9, v3, s[0:1]",
        "v_add_co_ci_u32_e64 v5, s0, s9, v3, s0"
    ));
    assert!(same_but_lane_mask_names(
        "v_cmp_lt_i64_e64 s[10:11], s[4:5], s[8:9]",
        "v_cmp_lt_i64_e64 s10, s[4:5], s[8:9]"
    ));
    assert!(same_but_lane_mask_names(
        "v_cndmask_b32_e32 v0, 0, v1, vcc",
        "v_cndmask_b32_e32 v0, 0, v1, vcc_lo"
    ));
    // Anything else must still match exactly.
    assert!(!same_but_lane_mask_names(
        "v_cndmask_b32_e32 v0, 0, v1, vcc",
        "v_cndmask_b32_e32 v0, 0, v2, vcc_lo"
    ));
    assert!(!same_but_lane_mask_names(
        "s_mov_b64 s[0:1], s[2:3]",
        "s_mov_b64 s0, s[2:3]x"
    ));
    assert!(!same_but_lane_mask_names(
        "v_mov_b32 v0, s[0:3]",
        "v_mov_b32 v0, s0"
    ));
}
