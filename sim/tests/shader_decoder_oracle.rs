//! The decoder against the oracle: every instruction of every gfx90a and gfx942 test code
//! object, decoded and disassembled by the simulator, must read exactly as `llvm-objdump-19`
//! printed it. The golden disassembly files are written by `tests/kernels/build.sh` (and, for
//! the matrix kernels, `sim/tests/shader_data/build-mfma.sh`) next to the code objects, so this
//! test needs no LLVM at run time.

mod objdump_support;

use amdgpu_sim::shader::decode::decode;
use amdgpu_sim::shader::disasm::disassemble;
use amdgpu_sim::target::GfxTarget;
use objdump_support::{Decoded, Report, compare_dir, compare_path};

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

#[test]
fn decoder_matches_llvm_objdump_on_the_matrix_kernels() {
    let mut report = Report::default();
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/shader_data/mfma");
    for target in [GfxTarget::Gfx90a, GfxTarget::Gfx942] {
        let gfx9 = |words: &[u32]| -> Decoded {
            decode(words, target)
                .map(|inst| (usize::from(inst.dwords), disassemble(&inst, target)))
                .map_err(|e| e.to_string())
        };
        compare_path(&data.join(target.name()), &gfx9, &mut report);
    }
    report.assert_clean("llvm-objdump-19", 2, 400);
}
