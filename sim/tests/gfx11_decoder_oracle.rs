//! The GFX11 decoder against the oracle: every instruction of every gfx1100 test code object,
//! decoded and disassembled by the simulator, must read exactly as `llvm-objdump-19 -d
//! --mcpu=gfx1100` printed it (the goldens tests/kernels/build.sh writes next to the code
//! objects, so this test needs no LLVM at run time).

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
    report.assert_clean("llvm-objdump-19 --mcpu=gfx1100", 80, 60);
}
