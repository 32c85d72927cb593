//! The GFX11 decoder on random words: for every encoding prefix (MIMG included), random
//! instructions whose reading by llvm-mc-19 (length and text, or rejection of the first dword)
//! was recorded by `gfx11/tablegen/fuzz.py` in `shader_data/gfx11_fuzz.txt` (regenerate.sh
//! --check keeps it current). Ours must accept exactly what LLVM accepts, with the same length
//! and text, except the encodings listed in `gfx11_fuzz.txt.known-differences`, each with the
//! reason (only where llvm-mc-19 and llvm-mc-22 disagree). The list must be exact: a fixed
//! difference must leave it too.

use amdgpu_sim::shader::gfx11::decode::decode;
use amdgpu_sim::shader::gfx11::disasm::disassemble;

const GOLDEN: &str = include_str!("shader_data/gfx11_fuzz.txt");
const KNOWN: &str = include_str!("shader_data/gfx11_fuzz.txt.known-differences");

#[test]
fn gfx11_decoder_agrees_with_llvm_mc_on_random_encodings() {
    let mut failures = Vec::new();
    let (mut accepted, mut rejected) = (0, 0);
    for line in GOLDEN.lines() {
        let mut fields = line.split('\t');
        let mut words: Vec<u32> = fields
            .next()
            .expect("words")
            .split(' ')
            .map(|w| u32::from_str_radix(w, 16).expect("hex word"))
            .collect();
        // The two `s_nop 0` fuzz.py put after every candidate: LLVM read an image
        // instruction's NSA address dwords from them where the candidate was too short.
        words.extend([0xbf80_0000, 0xbf80_0000]);
        // fuzz.py records LLVM's text with runs of spaces folded (its NSA image forms carry
        // two after the mnemonic, as ours do): fold ours alike.
        let ours = decode(&words).map(|inst| {
            let text = disassemble(&inst);
            let folded: Vec<&str> = text.split_whitespace().collect();
            (usize::from(inst.dwords), folded.join(" "))
        });
        match (fields.next(), fields.next()) {
            (Some("-"), None) => {
                rejected += 1;
                if let Ok((_, text)) = ours {
                    failures.push(format!("{line}\n   ours: {text}"));
                }
            }
            (Some(len), Some(text)) => {
                accepted += 1;
                let len: usize = len.parse().expect("length");
                match ours {
                    Ok((l, t)) if l == len && t == text => {}
                    Ok((l, t)) => failures.push(format!("{line}\n   ours: {l}\t{t}")),
                    Err(e) => failures.push(format!("{line}\n   ours: <{e}>")),
                }
            }
            _ => panic!("malformed golden line {line:?}"),
        }
    }
    assert!(
        accepted > 500 && rejected > 500,
        "{accepted} accepted, {rejected} rejected"
    );
    // One line per encoding: its three words, a tab, why it still differs.
    let known: Vec<&str> = KNOWN
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split('\t').next().unwrap_or(l))
        .collect();
    let fixed: Vec<&&str> = known
        .iter()
        .filter(|k| !failures.iter().any(|f| f.starts_with(**k)))
        .collect();
    assert!(
        fixed.is_empty(),
        "listed as known differences but now read as LLVM does: {fixed:?}"
    );
    failures.retain(|f| !known.iter().any(|k| f.starts_with(k)));
    assert!(
        failures.is_empty(),
        "{} of {} random encodings read differently from llvm-mc-19:\n{}",
        failures.len(),
        accepted + rejected,
        failures.join("\n")
    );
}
