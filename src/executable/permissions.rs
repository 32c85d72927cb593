//! Whether the GPU must be able to write a code object's image.
//!
//! KFD sets GPU page permissions per buffer object, and an image is one buffer object, so one
//! answer covers the whole image. The GPU writes only to writable (`PF_W`) `PT_LOAD` segments
//! outside `PT_GNU_RELRO`: the relocation-read-only range (`.dynamic`, `.got`,
//! `.data.rel.ro`, `.init_array`, `.fini_array`) is written by the loader on the host, through
//! the CPU mapping, before the GPU sees the image. So an image whose writable segments all lie
//! inside `PT_GNU_RELRO` (every code object without mutable globals) is mapped read-only to
//! the GPU; one with `.data` or `.bss` is GPU-writable as a whole, code included.
//!
//! Doing better for the latter is possible in principle: ld.lld starts each `PT_LOAD` on a
//! new page of the image (e.g. code at 0x1500, `.dynamic` at 0x2940, `.bss` at 0x3e30), so
//! code and mutable data never share a page, and two buffer objects (code and constants
//! read-only, data writable) at adjacent addresses would do. aqueduct's `kfd` layer places
//! every buffer object itself and cannot yet allocate one at a chosen address, so the image
//! stays one buffer object.

use amdgpu_loader::CodeObject;
use amdgpu_loader::segment::PF_W;

/// Whether the GPU needs write access to the image of `code_object`: whether a writable
/// `PT_LOAD` segment reaches outside every `PT_GNU_RELRO` range (both read by the loader).
pub(crate) fn gpu_writes_image(code_object: &CodeObject<'_>) -> bool {
    let relro = code_object.relocation_read_only();
    code_object
        .segments()
        .iter()
        .filter(|s| s.flags & PF_W != 0)
        .any(|s| {
            let end = s.vaddr.saturating_add(s.mem_size);
            !relro.iter().any(|r| r.start <= s.vaddr && end <= r.end)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writes(file: &str) -> bool {
        let path = format!(
            "{}/tests/kernels/bin/gfx90a/{file}",
            env!("CARGO_MANIFEST_DIR")
        );
        let bytes = std::fs::read(&path).unwrap();
        gpu_writes_image(&CodeObject::parse(&bytes).unwrap())
    }

    #[test]
    fn only_images_with_mutable_globals_are_gpu_writable() {
        // `.dynamic`, `.got`, `.data.rel.ro`, init/fini arrays: all inside PT_GNU_RELRO.
        for file in [
            "empty.co5",
            "vector_add.co6",
            "extern_sym.co5",
            "indirect_call.co5",
        ] {
            assert!(!writes(file), "{file}");
        }
        // `.bss`, `.data`.
        for file in [
            "bss.co5",
            "global_read.co5",
            "global_ptr.co5",
            "init_fini.co6",
        ] {
            assert!(writes(file), "{file}");
        }
    }
}
