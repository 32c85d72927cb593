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
    report.assert_clean("llvm-objdump-19", 60, 400);
}
