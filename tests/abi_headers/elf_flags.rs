//! `amdgpu-loader`'s processor table and `e_flags` fields against LLVM's `BinaryFormat/ELF.h`:
//! every `EF_AMDGPU_MACH_AMDGCN_*` value the loader decodes, and the feature and generic-version
//! fields around it (code-objects.md §1.2, §1.3).

use amdgpu_loader::target::{
    EF_AMDGPU_FEATURE_SRAMECC_V4, EF_AMDGPU_FEATURE_XNACK_V4, EF_AMDGPU_GENERIC_VERSION,
    EF_AMDGPU_GENERIC_VERSION_OFFSET, EF_AMDGPU_MACH, Processor,
};

use crate::constant;
use crate::harness::Check;

/// LLVM 19 predates some processors (gfx950, gfx9-4-generic, gfx1153, gfx1250, gfx1251); LLVM 22
/// has them all.
const LLVM_22: &str = "AQUEDUCT_LLVM_MAJOR >= 22";

pub fn checks() -> Vec<Check> {
    let mut c = vec![
        constant!("llvm::ELF::EF_AMDGPU_MACH", EF_AMDGPU_MACH),
        constant!(
            "llvm::ELF::EF_AMDGPU_FEATURE_XNACK_V4",
            EF_AMDGPU_FEATURE_XNACK_V4
        ),
        constant!(
            "llvm::ELF::EF_AMDGPU_FEATURE_SRAMECC_V4",
            EF_AMDGPU_FEATURE_SRAMECC_V4
        ),
        constant!(
            "llvm::ELF::EF_AMDGPU_GENERIC_VERSION",
            EF_AMDGPU_GENERIC_VERSION
        )
        .since(LLVM_22),
        constant!(
            "llvm::ELF::EF_AMDGPU_GENERIC_VERSION_OFFSET",
            EF_AMDGPU_GENERIC_VERSION_OFFSET
        )
        .since(LLVM_22),
    ];
    for p in Processor::all() {
        let name = p.name.to_uppercase().replace('-', "_");
        c.push(
            constant!(format!("llvm::ELF::EF_AMDGPU_MACH_AMDGCN_{name}"), p.mach).since(LLVM_22),
        );
    }
    c
}
