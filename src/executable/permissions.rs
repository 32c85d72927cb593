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

use amdgpu_loader::segment::LoadSegment;

/// `p_flags` bit: the segment is writable.
const PF_W: u32 = 2;
/// `p_type` of the relocation-read-only range.
const PT_GNU_RELRO: u32 = 0x6474_e552;
/// Size of an ELF64 program header.
const PHDR_SIZE: usize = 56;

/// Whether the GPU needs write access to the image of the code object `elf` (whose `PT_LOAD`
/// segments the loader validated as `segments`). Anything unreadable answers `true`, the safe
/// side.
pub(crate) fn gpu_writes_image(elf: &[u8], segments: &[LoadSegment]) -> bool {
    let relro = relro_ranges(elf);
    let Some(relro) = relro else {
        return segments.iter().any(|s| s.flags & PF_W != 0);
    };
    segments.iter().filter(|s| s.flags & PF_W != 0).any(|s| {
        let end = s.vaddr.saturating_add(s.mem_size);
        !relro
            .iter()
            .any(|&(start, stop)| start <= s.vaddr && end <= stop)
    })
}

/// `[start, end)` of every `PT_GNU_RELRO` header, or `None` if the program headers cannot be
/// read.
fn relro_ranges(elf: &[u8]) -> Option<Vec<(u64, u64)>> {
    let u16_at = |at: usize| Some(u16::from_le_bytes(elf.get(at..at + 2)?.try_into().ok()?));
    let u32_at = |at: usize| Some(u32::from_le_bytes(elf.get(at..at + 4)?.try_into().ok()?));
    let u64_at = |at: usize| Some(u64::from_le_bytes(elf.get(at..at + 8)?.try_into().ok()?));
    let phoff = usize::try_from(u64_at(0x20)?).ok()?;
    let phentsize = usize::from(u16_at(0x36)?);
    let phnum = usize::from(u16_at(0x38)?);
    if phentsize < PHDR_SIZE {
        return None;
    }
    let mut ranges = Vec::new();
    for index in 0..phnum {
        let at = phoff.checked_add(index.checked_mul(phentsize)?)?;
        if u32_at(at)? == PT_GNU_RELRO {
            let vaddr = u64_at(at + 16)?;
            let mem_size = u64_at(at + 40)?;
            ranges.push((vaddr, vaddr.checked_add(mem_size)?));
        }
    }
    Some(ranges)
}

#[cfg(test)]
mod tests {
    use super::*;
    use amdgpu_loader::CodeObject;

    fn writes(file: &str) -> bool {
        let path = format!(
            "{}/tests/kernels/bin/gfx90a/{file}",
            env!("CARGO_MANIFEST_DIR")
        );
        let bytes = std::fs::read(&path).unwrap();
        let code_object = CodeObject::parse(&bytes).unwrap();
        gpu_writes_image(&bytes, code_object.segments())
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

    #[test]
    fn unreadable_program_headers_keep_the_image_writable() {
        let path = format!(
            "{}/tests/kernels/bin/gfx90a/empty.co5",
            env!("CARGO_MANIFEST_DIR")
        );
        let bytes = std::fs::read(&path).unwrap();
        let code_object = CodeObject::parse(&bytes).unwrap();
        let segments = code_object.segments().to_vec();
        assert!(gpu_writes_image(&bytes[..0x30], &segments));
        let mut short_entries = bytes.clone();
        short_entries[0x36] = 8;
        assert!(gpu_writes_image(&short_entries, &segments));
    }
}
