//! The decoder against the oracle: every instruction of every gfx90a and gfx942 test code
//! object, decoded and disassembled by the simulator, must read exactly as `llvm-objdump-19`
//! printed it. The golden disassembly files are written by `tests/kernels/build.sh` next to
//! the code objects, so this test needs no LLVM at run time.

use std::path::{Path, PathBuf};

use amdgpu_sim::shader::decode::decode;
use amdgpu_sim::shader::disasm::disassemble;
use amdgpu_sim::target::GfxTarget;
use object::{Object, ObjectSection};

fn kernels_bin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/kernels/bin")
}

/// One instruction line of `llvm-objdump -d`: its text, address and encoding words.
struct Line {
    text: String,
    address: u64,
    words: Vec<u32>,
}

/// Every instruction line (a line that starts with a tab) of a golden disassembly; an
/// instruction line that does not parse is an error, never dropped.
fn parse(dis: &str) -> Result<Vec<Line>, String> {
    let mut lines = Vec::new();
    for raw in dis.lines().filter(|raw| raw.starts_with('\t')) {
        let bad = |why: &str| format!("unparsable instruction line ({why}): {raw:?}");
        let (text, comment) = raw.split_once("//").ok_or_else(|| bad("no // comment"))?;
        let (address, rest) = comment
            .trim()
            .split_once(':')
            .ok_or_else(|| bad("no address"))?;
        let address = u64::from_str_radix(address.trim(), 16).map_err(|_| bad("address"))?;
        let words: Vec<u32> = rest
            .split_whitespace()
            .map_while(|w| u32::from_str_radix(w, 16).ok())
            .collect();
        if words.is_empty() || words.len() > 3 {
            return Err(bad("encoding words"));
        }
        lines.push(Line {
            text: text.split_whitespace().collect::<Vec<_>>().join(" "),
            address,
            words,
        });
    }
    Ok(lines)
}

/// The dword at `address` in the code object's `.text`.
fn text_words(elf: &[u8]) -> (u64, Vec<u32>) {
    let file = object::File::parse(elf).expect("code object parses");
    let text = file.section_by_name(".text").expect(".text exists");
    let data = text.data().expect(".text data");
    let words = data
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    (text.address(), words)
}

/// Normalise LLVM spelling that differs only in whitespace inside operands.
fn normalise(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn decoder_matches_llvm_objdump_on_every_corpus_instruction() {
    let mut checked = 0usize;
    let mut instruction_lines = 0usize;
    let mut objects = 0usize;
    let mut failures = Vec::new();
    for (dir, target) in [("gfx90a", GfxTarget::Gfx90a), ("gfx942", GfxTarget::Gfx942)] {
        let dir = kernels_bin().join(dir);
        let mut entries: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("dir entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "dis"))
            .collect();
        entries.sort();
        for dis_path in entries {
            let co_path = dis_path.with_extension("");
            let dis = std::fs::read_to_string(&dis_path).expect("golden disassembly");
            let elf = std::fs::read(&co_path).expect("code object next to its disassembly");
            let (text_addr, text) = text_words(&elf);
            objects += 1;
            instruction_lines += dis.lines().filter(|l| l.starts_with('\t')).count();
            let lines = parse(&dis).unwrap_or_else(|e| panic!("{}: {e}", dis_path.display()));
            for line in lines {
                let index = ((line.address - text_addr) / 4) as usize;
                let words = &text[index..(index + 3).min(text.len())];
                assert_eq!(
                    &words[..line.words.len()],
                    &line.words[..],
                    "{}: golden encoding differs from the code object at {:#x}",
                    dis_path.display(),
                    line.address
                );
                let ours = match decode(words, target) {
                    Ok(inst) => {
                        if usize::from(inst.dwords) == line.words.len() {
                            normalise(&disassemble(&inst, target))
                        } else {
                            format!("<length {} instead of {}>", inst.dwords, line.words.len())
                        }
                    }
                    // llvm-objdump prints a word it cannot decode as `.long` (illegal_insn's
                    // undefined opcode): rejecting it is reading it the same way.
                    Err(_) if line.text.starts_with(".long ") => line.text.clone(),
                    Err(e) => format!("<{e}>"),
                };
                checked += 1;
                if ours != line.text {
                    failures.push(format!(
                        "{} {:#x} {:08X?}\n   llvm: {}\n   ours: {}",
                        co_path.file_name().unwrap_or_default().to_string_lossy(),
                        line.address,
                        line.words,
                        line.text,
                        ours
                    ));
                }
            }
        }
    }
    assert!(objects >= 60, "only {objects} golden disassemblies found");
    // Every instruction line of the goldens was checked: none skipped.
    assert_eq!(
        checked, instruction_lines,
        "instructions checked vs instruction lines"
    );
    assert!(
        failures.is_empty(),
        "{} of {checked} instructions differ from llvm-objdump-19, first ones:\n{}",
        failures.len(),
        failures
            .iter()
            .take(400)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    eprintln!("decoder oracle: {checked} instructions in {objects} code objects match");
}
