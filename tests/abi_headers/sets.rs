//! Where the headers are: the system include directory, plus any newer Linux uapi trees that
//! `scripts/fetch-abi-headers` extracted into `.cache/abi-headers/<package>/usr/include`.

use std::path::{Path, PathBuf};

use crate::harness::{HeaderSet, Lang};

const SYSTEM_INCLUDE: &str = "/usr/include";
const LIBDRM_INCLUDE: &str = "/usr/include/libdrm";

/// Roots of extracted uapi header trees.
fn extracted_roots() -> Vec<PathBuf> {
    let base = std::env::var_os("AQUEDUCT_ABI_HEADERS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join(".cache/abi-headers"),
        PathBuf::from,
    );
    let mut roots: Vec<PathBuf> = std::fs::read_dir(&base)
        .map(|dir| {
            dir.filter_map(Result::ok)
                .map(|e| e.path().join("usr/include"))
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    roots.sort();
    roots
}

fn kfd_minor(header: &Path) -> String {
    std::fs::read_to_string(header)
        .ok()
        .and_then(|text| {
            text.lines().find_map(|l| {
                l.strip_prefix("#define KFD_IOCTL_MINOR_VERSION")
                    .map(|v| v.trim().to_string())
            })
        })
        .unwrap_or_else(|| "?".into())
}

/// A directory (inside `work`) holding `drm -> /usr/include/libdrm`, for Debian's kfd_ioctl.h,
/// which includes `<drm/drm.h>` that Debian ships only inside libdrm-dev.
fn drm_shim(work: &Path) -> Option<PathBuf> {
    if !Path::new(LIBDRM_INCLUDE).join("drm.h").exists() {
        return None;
    }
    let dir = work.join("drm-shim");
    let link = dir.join("drm");
    if !link.exists() {
        std::fs::create_dir_all(&dir).ok()?;
        std::os::unix::fs::symlink(LIBDRM_INCLUDE, &link).ok()?;
    }
    Some(dir)
}

/// One set per `linux/kfd_ioctl.h` found (system and extracted); `work` is the test's scratch
/// directory.
pub fn kfd(work: &Path) -> Vec<Result<HeaderSet, String>> {
    let mut sets = Vec::new();
    let mut roots = vec![PathBuf::from(SYSTEM_INCLUDE)];
    roots.extend(extracted_roots());
    for root in roots {
        let header = root.join("linux/kfd_ioctl.h");
        if !header.exists() {
            sets.push(Err(format!(
                "{} is absent (Debian package linux-libc-dev)",
                header.display()
            )));
            continue;
        }
        let mut include_dirs = vec![root.clone()];
        if !root.join("drm/drm.h").exists() {
            if let Some(shim) = drm_shim(work) {
                include_dirs.push(shim);
            } else {
                sets.push(Err(format!(
                    "{} needs <drm/drm.h>, absent (Debian package libdrm-dev)",
                    header.display()
                )));
                continue;
            }
        }
        sets.push(Ok(HeaderSet {
            name: format!("kfd_ioctl.h 1.{} in {}", kfd_minor(&header), root.display()),
            lang: Lang::C,
            include_dirs,
            prelude: "#include <linux/kfd_ioctl.h>\n#include <linux/kfd_sysfs.h>\n".into(),
        }));
    }
    sets
}

/// One set per extracted kernel uapi `drm/amdgpu_drm.h`.
pub fn drm_uapi() -> Vec<Result<HeaderSet, String>> {
    let roots: Vec<PathBuf> = extracted_roots()
        .into_iter()
        .filter(|r| r.join("drm/amdgpu_drm.h").exists())
        .collect();
    if roots.is_empty() {
        return vec![Err(
            "no kernel uapi drm/amdgpu_drm.h (run scripts/fetch-abi-headers to extract a current linux-libc-dev)".into(),
        )];
    }
    roots
        .into_iter()
        .map(|root| {
            Ok(HeaderSet {
                name: format!("uapi drm/amdgpu_drm.h in {}", root.display()),
                lang: Lang::C,
                include_dirs: vec![root],
                prelude: "#include <drm/drm.h>\n#include <drm/amdgpu_drm.h>\n".into(),
            })
        })
        .collect()
}

/// libdrm's copies of `drm.h` and `amdgpu_drm.h`.
pub fn libdrm() -> Result<HeaderSet, String> {
    if !Path::new(LIBDRM_INCLUDE).join("amdgpu_drm.h").exists() {
        return Err(format!(
            "{LIBDRM_INCLUDE}/amdgpu_drm.h is absent (Debian package libdrm-dev)"
        ));
    }
    Ok(HeaderSet {
        name: "libdrm amdgpu_drm.h".into(),
        lang: Lang::C,
        include_dirs: vec![LIBDRM_INCLUDE.into()],
        prelude: "#include <drm.h>\n#include <amdgpu_drm.h>\n".into(),
    })
}

/// ROCr's public headers.
pub fn hsa() -> Result<HeaderSet, String> {
    let dir = Path::new(SYSTEM_INCLUDE).join("hsa");
    if !dir.join("amd_hsa_queue.h").exists() {
        return Err(format!(
            "{}/amd_hsa_queue.h is absent (Debian package libhsa-runtime-dev)",
            dir.display()
        ));
    }
    Ok(HeaderSet {
        name: "ROCr hsa headers".into(),
        lang: Lang::C,
        include_dirs: vec![dir],
        prelude: "#include <hsa.h>\n#include <hsa_ext_amd.h>\n#include <amd_hsa_queue.h>\n#include <amd_hsa_signal.h>\n"
            .into(),
    })
}

/// LLVM's kernel-descriptor header and `BinaryFormat/ELF.h` (the `e_flags` values), from every
/// installed LLVM that has them.
pub fn llvm() -> Vec<Result<HeaderSet, String>> {
    let mut sets = Vec::new();
    for version in [19, 22] {
        let root = PathBuf::from(format!("/usr/include/llvm-{version}"));
        // ELF.h reaches llvm-c/DataTypes.h, which Debian keeps in a directory of its own.
        let c_root = PathBuf::from(format!("/usr/include/llvm-c-{version}"));
        let headers = [
            root.join("llvm/Support/AMDHSAKernelDescriptor.h"),
            root.join("llvm/BinaryFormat/ELF.h"),
            c_root.join("llvm-c/DataTypes.h"),
        ];
        if let Some(header) = headers.iter().find(|h| !h.exists()) {
            sets.push(Err(format!(
                "{} is absent (Debian package llvm-{version}-dev)",
                header.display()
            )));
            continue;
        }
        sets.push(Ok(HeaderSet {
            name: format!("LLVM {version} AMDHSAKernelDescriptor.h, ELF.h"),
            lang: Lang::Cxx,
            include_dirs: vec![root, c_root],
            // The probe links no LLVM library, so the check that it matches one is turned off.
            prelude: format!(
                "#define AQUEDUCT_LLVM_MAJOR {version}\n#define LLVM_DISABLE_ABI_BREAKING_CHECKS_ENFORCING 1\n#include <llvm/Support/AMDHSAKernelDescriptor.h>\n#include <llvm/BinaryFormat/ELF.h>\nusing namespace llvm::amdhsa;\n"
            ),
        }));
    }
    sets
}
