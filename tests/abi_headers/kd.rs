//! `amdgpu-loader`'s kernel descriptor against LLVM's `AMDHSAKernelDescriptor.h`.

use amdgpu_loader::kernel_descriptor::{
    KernelDescriptor, kernarg_preload_spec, kernel_code_property, rsrc1, rsrc2, rsrc3,
};

use crate::harness::Check;
use crate::{constant, layout};

pub fn checks() -> Vec<Check> {
    let mut c = vec![layout!("kernel_descriptor_t" => KernelDescriptor {
        group_segment_fixed_size, private_segment_fixed_size, kernarg_size, reserved0, kernel_code_entry_byte_offset,
        reserved1, compute_pgm_rsrc3, compute_pgm_rsrc1, compute_pgm_rsrc2, kernel_code_properties, kernarg_preload,
        reserved3,
    })];
    let modules: [(&str, &[(&str, _)]); 5] = [
        (rsrc1::C_PREFIX, rsrc1::ALL),
        (rsrc2::C_PREFIX, rsrc2::ALL),
        (rsrc3::C_PREFIX, rsrc3::ALL),
        (kernel_code_property::C_PREFIX, kernel_code_property::ALL),
        (kernarg_preload_spec::C_PREFIX, kernarg_preload_spec::ALL),
    ];
    for (prefix, fields) in modules {
        for (name, field) in fields {
            for suffix in ["SHIFT", "WIDTH"] {
                let value = if suffix == "SHIFT" {
                    field.shift
                } else {
                    field.width
                };
                match renamed_in_llvm22(prefix, name) {
                    None => c.push(constant!(format!("{prefix}{name}_{suffix}"), value)),
                    Some(new) => {
                        c.push(
                            constant!(format!("{prefix}{name}_{suffix}"), value)
                                .since("AQUEDUCT_LLVM_MAJOR < 22"),
                        );
                        c.push(
                            constant!(format!("{prefix}{new}_{suffix}"), value)
                                .since("AQUEDUCT_LLVM_MAJOR >= 22"),
                        );
                    }
                }
            }
        }
    }
    c
}

/// LLVM 22 gave some fields a generation prefix when GFX12.5 changed them; the GFX9 meaning
/// (what aqueduct uses) keeps its bits under the new name.
fn renamed_in_llvm22(prefix: &str, name: &str) -> Option<&'static str> {
    match (prefix, name) {
        ("COMPUTE_PGM_RSRC2_", "USER_SGPR_COUNT") => Some("GFX6_GFX120_USER_SGPR_COUNT"),
        _ => None,
    }
}
