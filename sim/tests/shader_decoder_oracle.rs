//! The decoder against the oracle: every instruction of every gfx90a and gfx942 test code
//! object, decoded and disassembled by the simulator, must read exactly as `llvm-objdump-19`
//! printed it. The golden disassembly files are written by `tests/kernels/build.sh` next to
//! the code objects, so this test needs no LLVM at run time.

mod objdump_support;

use amdgpu_sim::shader::decode::decode;
use amdgpu_sim::shader::disasm::disassemble;
use amdgpu_sim::target::GfxTarget;
use objdump_support::{Decoded, Report, compare_dir};

#[test]
fn decoder_matches_llvm_objdump_on_every_corpus_instruction() {
    let mut report = Report::default();
    for (dir, target) in [("gfx90a", GfxTarget::Gfx90a), ("gfx942", GfxTarget::Gfx942)] {
        let gfx9 = |words: &[u32]| -> Decoded {
            decode(words, target)
                .map(|inst| (usize::from(inst.dwords), disassemble(&inst, target)))
                .map_err(|e| e.to_string())
        };
        compare_dir(dir, &gfx9, &mut report);
    }
    assert!(
        report.objects >= 60,
        "only {} golden disassemblies found",
        report.objects
    );
    // Every instruction line of the goldens was checked: none skipped.
    assert_eq!(
        report.checked, report.instruction_lines,
        "instructions checked vs instruction lines"
    );
    assert!(
        report.failures.is_empty(),
        "{} of {} instructions differ from llvm-objdump-19, first ones:\n{}",
        report.failures.len(),
        report.checked,
        report
            .failures
            .iter()
            .take(400)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    eprintln!(
        "decoder oracle: {} instructions in {} code objects match",
        report.checked, report.objects
    );
}
