//! The decoder oracle's shared half: reading the golden `llvm-objdump -d` files committed next
//! to the test code objects (tests/kernels/build.sh writes them), and comparing a decoder's
//! text with LLVM's on every instruction line.

#![allow(dead_code, missing_docs)]

use std::path::{Path, PathBuf};

use object::{Object, ObjectSection};

pub fn kernels_bin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/kernels/bin")
}

/// One instruction line of `llvm-objdump -d`: its text, address and encoding words.
pub struct Line {
    pub text: String,
    pub address: u64,
    pub words: Vec<u32>,
}

/// Every instruction line (a line that starts with a tab) of a golden disassembly; an
/// instruction line that does not parse is an error, never dropped.
pub fn parse(dis: &str) -> Result<Vec<Line>, String> {
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
            text: normalise(text),
            address,
            words,
        });
    }
    Ok(lines)
}

/// The code object's `.text` as dwords, with its address.
pub fn text_words(elf: &[u8]) -> (u64, Vec<u32>) {
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
pub fn normalise(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What a decoder made of one instruction: its length in dwords and its text, or why it
/// rejected the words.
pub type Decoded = Result<(usize, String), String>;

/// The outcome of comparing every golden of some directories with a decoder.
#[derive(Default)]
pub struct Report {
    pub objects: usize,
    pub instruction_lines: usize,
    pub checked: usize,
    pub failures: Vec<String>,
}

impl Report {
    /// Panic unless every instruction line was checked and read as LLVM printed it (the first
    /// `shown` differences in the message); at least `min_objects` goldens must have been read.
    pub fn assert_clean(&self, oracle: &str, min_objects: usize, shown: usize) {
        assert!(
            self.objects >= min_objects,
            "only {} golden disassemblies found",
            self.objects
        );
        // Every instruction line of the goldens was checked: none skipped.
        assert_eq!(
            self.checked, self.instruction_lines,
            "instructions checked vs instruction lines"
        );
        assert!(
            self.failures.is_empty(),
            "{} of {} instructions differ from {oracle}, first ones:\n{}",
            self.failures.len(),
            self.checked,
            self.failures[..self.failures.len().min(shown)].join("\n")
        );
        eprintln!(
            "decoder oracle: {} instructions in {} code objects match {oracle}",
            self.checked, self.objects
        );
    }
}

/// Decode every instruction line of every `*.dis` golden in `dir` (relative to
/// tests/kernels/bin) with `decode` and collect the lines that read differently from LLVM. A
/// word LLVM prints as `.long` (an undefined opcode) must be rejected.
pub fn compare_dir(dir: &str, decode: &dyn Fn(&[u32]) -> Decoded, report: &mut Report) {
    compare_path(&kernels_bin().join(dir), decode, report);
}

/// [`compare_dir`] for goldens anywhere (test data kept beside a test).
pub fn compare_path(
    dir: &std::path::Path,
    decode: &dyn Fn(&[u32]) -> Decoded,
    report: &mut Report,
) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
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
        report.objects += 1;
        report.instruction_lines += dis.lines().filter(|l| l.starts_with('\t')).count();
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
            let ours = match decode(words) {
                Ok((dwords, text)) if dwords == line.words.len() => normalise(&text),
                Ok((dwords, _)) => format!("<length {dwords} instead of {}>", line.words.len()),
                Err(_) if line.text.starts_with(".long ") => line.text.clone(),
                Err(e) => format!("<{e}>"),
            };
            report.checked += 1;
            if ours != line.text {
                report.failures.push(format!(
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
