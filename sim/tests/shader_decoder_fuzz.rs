//! The decoder against the oracle on random instruction words: every encoding family, every
//! opcode of both targets, random operand fields (literals, inline constants, DPP, SDWA,
//! modifiers, cache-policy bits). The golden files `shader_data/isa_fuzz.<target>.txt` are
//! written by `sim/src/shader/isa/tablegen/fuzz.py` from `llvm-mc-19 --disassemble` (which
//! prints what `llvm-objdump-19` prints), so this test needs no LLVM at run time; CI re-derives
//! them (`regenerate.sh --check` in `.ci/run`). Lines whose text is `<invalid>` are words LLVM
//! rejects as an encoding: the decoder must reject them too. It widens
//! `shader_decoder_oracle.rs`, which covers only what the compiler emitted for the corpus.

use std::path::Path;

use amdgpu_sim::shader::decode::decode;
use amdgpu_sim::shader::disasm::disassemble;
use amdgpu_sim::target::GfxTarget;

/// Encodings LLVM 19 accepts that the simulator deliberately rejects, and why.
fn deliberate_difference(llvm: &str) -> Option<&'static str> {
    let mut tokens = llvm.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
    if tokens.any(|t| t == "null") {
        return Some("SGPR code 125 is reserved on GFX9 (LLVM decodes GFX10's `null`)");
    }
    if llvm.starts_with("v_readfirstlane_b32 src_") {
        return Some("a read-only source code is no scalar destination");
    }
    if has_odd_vector_tuple(llvm) {
        return Some(
            "a VGPR/AGPR tuple must start at an even register on gfx90a/gfx942 (LLVM's \
             assembler refuses it; its disassembler does not check)",
        );
    }
    None
}

/// Whether LLVM's text names a VGPR or AGPR tuple (`v[N:M]`, `a[N:M]`) starting at an odd
/// register.
fn has_odd_vector_tuple(llvm: &str) -> bool {
    let bytes = llvm.as_bytes();
    bytes.windows(2).enumerate().any(|(i, w)| {
        let starts_tuple = matches!(w, [b'v' | b'a', b'[']);
        let after_separator = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        if !(starts_tuple && after_separator) {
            return false;
        }
        let rest = &llvm[i + 2..];
        let Some((first, _)) = rest.split_once(':') else {
            return false;
        };
        first.parse::<u32>().is_ok_and(|n| n % 2 == 1)
    })
}

/// The text fuzz.py writes for words llvm-mc rejects as an instruction encoding.
const REJECTED: &str = "<invalid>";

fn hex_words(words: &[u32]) -> String {
    words
        .iter()
        .map(|w| format!("{w:08X}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Set (to any non-empty value) to rewrite each `<golden>.known-accepts` with the rejected
/// encodings the decoder accepts today, keeping its comment header; the test then fails once,
/// so that a rewrite is never mistaken for a pass. Review the diff: the list may only shrink.
const REWRITE_KNOWN_ACCEPTS: &str = "AQUEDUCT_REWRITE_KNOWN_ACCEPTS";

fn known_accepts_path(golden: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/shader_data")
        .join(format!("{golden}.known-accepts"))
}

/// The rejected encodings the decoder is known to accept still (`<golden>.known-accepts`):
/// a ratchet, not a licence — an accepted rejected encoding missing from it fails the test,
/// and so does a listed one the decoder now rejects (remove it: the list only shrinks).
fn known_accepts(golden: &str) -> std::collections::HashSet<String> {
    let path = known_accepts_path(golden);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split('\t').next().unwrap_or(l).to_owned())
        .collect()
}

/// Rewrite `<golden>.known-accepts` with `accepted` (words<TAB>note lines, golden order).
fn rewrite_known_accepts(golden: &str, accepted: &[String]) {
    let path = known_accepts_path(golden);
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    let mut text = String::new();
    for line in old
        .lines()
        .take_while(|l| l.starts_with('#'))
        .chain(accepted.iter().map(String::as_str))
    {
        text.push_str(line);
        text.push('\n');
    }
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

fn check(target: GfxTarget, file: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/shader_data")
        .join(file);
    let golden =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut checked = 0usize;
    let mut rejected = 0usize;
    let mut known_accepted = 0usize;
    let mut failures = Vec::new();
    let known_accepts = known_accepts(file);
    let mut still_accepted = Vec::new();
    let mut rejected_keys = std::collections::HashSet::new();
    for line in golden
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let (words, llvm) = line.split_once('\t').expect("words<TAB>text");
        let words: Vec<u32> = words
            .split_whitespace()
            .map(|w| u32::from_str_radix(w, 16).expect("hex word"))
            .collect();
        let ours = match decode(&words, target) {
            Ok(inst) if usize::from(inst.dwords) == words.len() => disassemble(&inst, target)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
            Ok(inst) => format!("<length {} instead of {}>", inst.dwords, words.len()),
            Err(e) => format!("<{e}>"),
        };
        checked += 1;
        if llvm == REJECTED {
            // LLVM rejects these words as an encoding: so must the decoder, except for the
            // known gaps listed (which may only shrink).
            rejected += 1;
            let key = hex_words(&words);
            rejected_keys.insert(key.clone());
            match decode(&words, target) {
                Ok(inst) => {
                    let line = format!(
                        "{key}\t(llvm rejects it, ours reads {})",
                        disassemble(&inst, target)
                    );
                    if known_accepts.contains(&key) {
                        known_accepted += 1;
                    } else {
                        failures.push(line.clone());
                    }
                    still_accepted.push(line);
                }
                Err(_) if known_accepts.contains(&key) => failures.push(format!(
                    "{key}\tis listed in {file}.known-accepts but now rejected: remove it"
                )),
                Err(_) => {}
            }
            continue;
        }
        if let Some(reason) = deliberate_difference(llvm) {
            // Must be rejected, not read differently.
            if !ours.starts_with('<') {
                failures.push(format!("{words:08X?}: {reason}, yet decoded as {ours}"));
            }
            continue;
        }
        if ours != llvm {
            failures.push(format!("{words:08X?}\n   llvm: {llvm}\n   ours: {ours}"));
        }
    }
    for key in known_accepts.difference(&rejected_keys) {
        failures.push(format!(
            "{key}\tis listed in {file}.known-accepts but is no rejected line of {file}"
        ));
    }
    assert!(
        checked >= 1000,
        "only {checked} golden instructions in {file}"
    );
    assert!(
        rejected >= 100,
        "only {rejected} encodings llvm rejects in {file}"
    );
    eprintln!(
        "{}: {rejected} encodings llvm rejects, {known_accepted} of them still accepted (known gaps)",
        target.name()
    );
    if std::env::var_os(REWRITE_KNOWN_ACCEPTS).is_some_and(|v| !v.is_empty()) {
        rewrite_known_accepts(file, &still_accepted);
        panic!(
            "{REWRITE_KNOWN_ACCEPTS} set: rewrote {file}.known-accepts with {} lines; unset it and rerun",
            still_accepted.len()
        );
    }
    assert!(
        failures.is_empty(),
        "{}: {} of {checked} instructions differ from llvm-mc-19, first ones:\n{}",
        target.name(),
        failures.len(),
        failures
            .iter()
            .take(300)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn decoder_matches_llvm_on_random_gfx90a_words() {
    check(GfxTarget::Gfx90a, "isa_fuzz.gfx90a.txt");
}

#[test]
fn decoder_matches_llvm_on_random_gfx942_words() {
    check(GfxTarget::Gfx942, "isa_fuzz.gfx942.txt");
}
