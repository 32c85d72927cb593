//! The GFX11 decoder on a large body of code nobody here wrote: LLVM's OpenMP device runtime
//! for gfx1100 (`libomptarget-amdgpu-gfx1100.bc` from Debian's libomp-19-dev), compiled with
//! llc-19 and linked with ld.lld-19 into a code object, must read exactly as llvm-objdump-19
//! prints it (about 125 000 instructions, 270 mnemonics). The object and its 11 MB
//! disassembly are built at run time into a temporary directory (too large to commit); the
//! test skips where the bitcode or the tools are missing.

mod objdump_support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use amdgpu_sim::shader::gfx11::decode::decode;
use amdgpu_sim::shader::gfx11::disasm::disassemble;
use objdump_support::{Decoded, Report, compare_dir};
use test_support::hardware::skip;
use test_support::process::try_run_with_deadline;

const BITCODE: &str = "/usr/lib/llvm-19/lib/libomptarget-amdgpu-gfx1100.bc";
const TEST: &str = "gfx11_decoder_matches_llvm_objdump_on_the_openmp_device_runtime";

/// Run one tool step; false (after a skip) if the tool is missing.
fn step(command: &mut Command, what: &str) -> bool {
    match try_run_with_deadline(command, Duration::from_secs(300), what) {
        Ok(out) => {
            assert!(
                out.status.success(),
                "{what} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            true
        }
        Err(e) => {
            skip(TEST, &format!("{what}: {e}"));
            false
        }
    }
}

#[test]
fn gfx11_decoder_matches_llvm_objdump_on_the_openmp_device_runtime() {
    if !Path::new(BITCODE).exists() {
        skip(
            TEST,
            "libomp-19-dev's gfx1100 device runtime is not installed",
        );
        return;
    }
    let dir = std::env::temp_dir().join(format!("aqueduct-omp-gfx1100-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let (obj, co) = (dir.join("omp.o"), dir.join("omp.co"));
    let built = step(
        Command::new("llc-19")
            .args([
                "-O2",
                "-mtriple=amdgcn-amd-amdhsa",
                "-mcpu=gfx1100",
                "-filetype=obj",
            ])
            .arg(BITCODE)
            .arg("-o")
            .arg(&obj),
        "llc-19",
    ) && step(
        Command::new("ld.lld-19")
            .arg("-shared")
            .arg(&obj)
            .arg("-o")
            .arg(&co),
        "ld.lld-19",
    );
    let disassembled = built && {
        let out = try_run_with_deadline(
            Command::new("llvm-objdump-19")
                .args(["-d", "--mcpu=gfx1100"])
                .arg(&co),
            Duration::from_secs(300),
            "llvm-objdump-19",
        );
        match out {
            Ok(out) => {
                assert!(out.status.success(), "llvm-objdump-19 failed");
                std::fs::write(dir.join("omp.co.dis"), &out.stdout).expect("write disassembly");
                true
            }
            Err(e) => {
                skip(TEST, &format!("llvm-objdump-19: {e}"));
                false
            }
        }
    };
    if disassembled {
        let gfx11 = |words: &[u32]| -> Decoded {
            decode(words)
                .map(|inst| (usize::from(inst.dwords), disassemble(&inst)))
                .map_err(|e| e.to_string())
        };
        let mut report = Report::default();
        compare_dir(dir.to_str().expect("utf-8 temp path"), &gfx11, &mut report);
        let _ = std::fs::remove_dir_all(&dir);
        assert!(
            report.checked > 100_000,
            "only {} instructions",
            report.checked
        );
        report.assert_clean(
            "llvm-objdump-19 --mcpu=gfx1100 (OpenMP device runtime)",
            1,
            60,
        );
    } else {
        let _ = std::fs::remove_dir_all(&dir);
    }
}
