//! `PT_LOAD` segments and the image they make: validation (the defects of reliability.md §6:
//! `p_filesz > p_memsz`, out-of-file `p_offset`, overlapping or unordered `p_vaddr`, overflow)
//! and placement into one contiguous destination (code-objects.md §2.2).

use object::LittleEndian as LE;
use object::read::elf::ProgramHeader as _;

use crate::elf_file::{ElfFile, PT_LOAD};
use crate::error::{Error, Result};

/// `PF_X`.
pub const PF_X: u32 = 1;
/// `PF_W`.
pub const PF_W: u32 = 2;
/// `PF_R`.
pub const PF_R: u32 = 4;

/// The largest `p_align` accepted (2 MiB, a huge page). lld uses 4 KiB.
pub const MAX_SEGMENT_ALIGN: u64 = 2 << 20;
/// The largest image accepted (4 GiB). Real code objects are far smaller.
pub const MAX_IMAGE_SIZE: u64 = 4 << 30;
/// The smallest alignment of an image base: kernel entry points must be 256-aligned
/// (`COMPUTE_PGM_LO` holds `address >> 8`).
pub const MIN_IMAGE_ALIGN: u64 = 256;

/// One validated `PT_LOAD` segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadSegment {
    /// Index in the program header table.
    pub index: usize,
    /// `p_vaddr`.
    pub vaddr: u64,
    /// `p_memsz`.
    pub mem_size: u64,
    /// `p_offset`.
    pub file_offset: u64,
    /// `p_filesz` (at most `mem_size`; the rest is zero).
    pub file_size: u64,
    /// `p_align` (0 or a power of two).
    pub align: u64,
    /// `p_flags` (`PF_R`, `PF_W`, `PF_X`).
    pub flags: u32,
}

impl LoadSegment {
    /// Whether `[vaddr, vaddr + size)` lies in this segment's file-backed bytes.
    pub fn holds_file_bytes(&self, vaddr: u64, size: u64) -> bool {
        vaddr >= self.vaddr
            && vaddr
                .checked_add(size)
                .is_some_and(|end| end <= self.vaddr + self.file_size)
    }

    /// Whether `[vaddr, vaddr + size)` lies in this segment's memory image.
    pub fn holds(&self, vaddr: u64, size: u64) -> bool {
        vaddr >= self.vaddr
            && vaddr
                .checked_add(size)
                .is_some_and(|end| end <= self.vaddr + self.mem_size)
    }
}

/// Where the image lies in the code object's virtual address space, and what it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageLayout {
    /// The virtual address that lands at the start of the destination: the lowest `p_vaddr`
    /// rounded down to `align`, so that every segment keeps its alignment.
    pub start_vaddr: u64,
    /// Bytes from `start_vaddr` to the end of the last segment's memory image.
    pub size: u64,
    /// The alignment the destination's GPU address needs: the largest `p_align`, at least 256.
    pub align: u64,
}

impl ImageLayout {
    /// The image offset of `vaddr` for `[vaddr, vaddr + len)` inside the image.
    pub fn offset_of(&self, vaddr: u64, len: u64) -> Option<u64> {
        let offset = vaddr.checked_sub(self.start_vaddr)?;
        (offset.checked_add(len)? <= self.size).then_some(offset)
    }
}

/// Read and validate the `PT_LOAD` segments.
pub(crate) fn load_segments(elf: &ElfFile<'_>) -> Result<(Vec<LoadSegment>, ImageLayout)> {
    let mut segments: Vec<LoadSegment> = Vec::with_capacity(4);
    for (index, ph) in elf.segments_of_type(PT_LOAD) {
        let what = || format!("program header {index} (PT_LOAD)");
        let s = LoadSegment {
            index,
            vaddr: ph.p_vaddr(LE),
            mem_size: ph.p_memsz(LE),
            file_offset: ph.p_offset(LE),
            file_size: ph.p_filesz(LE),
            align: ph.p_align(LE),
            flags: ph.p_flags(LE).0,
        };
        if s.file_size > s.mem_size {
            return Err(Error::malformed(
                what(),
                format!(
                    "p_filesz {:#x} exceeds p_memsz {:#x}",
                    s.file_size, s.mem_size
                ),
            ));
        }
        elf.bytes(s.file_offset, s.file_size, what)?;
        let end = s.vaddr.checked_add(s.mem_size).ok_or_else(|| {
            Error::malformed(what(), "p_vaddr + p_memsz overflows the address space")
        })?;
        if s.align > 1 && !s.align.is_power_of_two() {
            return Err(Error::malformed(
                what(),
                format!("p_align {:#x} is not a power of two", s.align),
            ));
        }
        if s.align > MAX_SEGMENT_ALIGN {
            return Err(Error::malformed(
                what(),
                format!(
                    "p_align {:#x} exceeds the {MAX_SEGMENT_ALIGN:#x} this loader accepts",
                    s.align
                ),
            ));
        }
        if let Some(prev) = segments.last() {
            // The ELF specification orders PT_LOAD by p_vaddr; an image copy relies on them not
            // overlapping (ROCm PR #7542).
            let prev_end = prev.vaddr + prev.mem_size;
            if s.vaddr < prev_end {
                return Err(Error::malformed(
                    what(),
                    format!(
                        "p_vaddr {:#x} overlaps or precedes program header {} ({:#x}..{prev_end:#x})",
                        s.vaddr, prev.index, prev.vaddr
                    ),
                ));
            }
        }
        debug_assert!(end >= s.vaddr);
        segments.push(s);
    }
    let (Some(first), Some(last)) = (segments.first(), segments.last()) else {
        return Err(Error::malformed(
            "program header table",
            "no PT_LOAD segment",
        ));
    };
    let align = segments
        .iter()
        .map(|s| s.align)
        .max()
        .unwrap_or(1)
        .max(MIN_IMAGE_ALIGN);
    let start_vaddr = first.vaddr & !(align - 1);
    let size = last.vaddr + last.mem_size - start_vaddr;
    if size > MAX_IMAGE_SIZE {
        return Err(Error::malformed(
            "program header table",
            format!("the image spans {size:#x} bytes, more than the {MAX_IMAGE_SIZE:#x} accepted"),
        ));
    }
    Ok((
        segments,
        ImageLayout {
            start_vaddr,
            size,
            align,
        },
    ))
}

/// Copy the segments into `dest` (at least `layout.size` bytes) and zero everything else of the
/// image: gaps between segments and each segment's `p_memsz - p_filesz` tail.
pub(crate) fn place(data: &[u8], segments: &[LoadSegment], layout: &ImageLayout, dest: &mut [u8]) {
    let mut cursor = 0usize;
    for s in segments {
        // Validated at parse time: in file, in image, ordered, non-overlapping.
        let at = (s.vaddr - layout.start_vaddr) as usize;
        let file = s.file_size as usize;
        let mem = s.mem_size as usize;
        let from = s.file_offset as usize;
        dest[cursor..at].fill(0);
        dest[at..at + file].copy_from_slice(&data[from..from + file]);
        dest[at + file..at + mem].fill(0);
        cursor = at + mem;
    }
    dest[cursor..layout.size as usize].fill(0);
}
