//! ELF notes: finding the `NT_AMDGPU_METADATA` notes (owner `AMDGPU`, type 32) in `PT_NOTE`
//! segments, or in `SHT_NOTE` sections when the object has no `PT_NOTE` (code-objects.md §6.1).

use object::LittleEndian as LE;
use object::read::elf::{ProgramHeader as _, SectionHeader as _};

use crate::elf_file::{ElfFile, PT_NOTE, SHT_NOTE};
use crate::error::{Error, Result};

/// `NT_AMDGPU_METADATA`.
pub const NT_AMDGPU_METADATA: u32 = 32;
/// The owner of AMDGPU (V3+) notes.
pub const AMDGPU_NOTE_OWNER: &[u8] = b"AMDGPU";

/// One note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Note<'data> {
    /// The owner name, without its NUL.
    pub owner: &'data [u8],
    /// `n_type`.
    pub kind: u32,
    /// The descriptor bytes.
    pub desc: &'data [u8],
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn align_up(value: usize, align: usize) -> Option<usize> {
    Some(value.checked_add(align - 1)? & !(align - 1))
}

/// Split a note area into notes. `align` is 4 or 8.
pub(crate) fn parse_notes<'data>(
    area: &'data [u8],
    align: usize,
    what: &dyn Fn() -> String,
    out: &mut Vec<Note<'data>>,
) -> Result<()> {
    let mut at = 0usize;
    while at < area.len() {
        let bad = |detail: String| Error::malformed(what(), detail);
        let (Some(namesz), Some(descsz), Some(kind)) =
            (u32_at(area, at), u32_at(area, at + 4), u32_at(area, at + 8))
        else {
            return Err(bad(format!("note header at {at:#x} is truncated")));
        };
        let name_start = at + 12;
        let name_end = name_start
            .checked_add(namesz as usize)
            .filter(|&end| end <= area.len())
            .ok_or_else(|| bad(format!("note name at {at:#x} runs past the area")))?;
        let desc_start = align_up(name_end, align)
            .filter(|&start| start <= area.len())
            .ok_or_else(|| bad(format!("note at {at:#x} is truncated after its name")))?;
        let desc_end = desc_start
            .checked_add(descsz as usize)
            .filter(|&end| end <= area.len())
            .ok_or_else(|| bad(format!("note descriptor at {at:#x} runs past the area")))?;
        let mut owner = &area[name_start..name_end];
        if let Some((&0, rest)) = owner.split_last() {
            owner = rest;
        }
        out.push(Note {
            owner,
            kind,
            desc: &area[desc_start..desc_end],
        });
        at = align_up(desc_end, align).map_or(area.len(), |next| next.min(area.len()));
    }
    Ok(())
}

/// Every note of the code object.
pub(crate) fn notes<'data>(elf: &ElfFile<'data>) -> Result<Vec<Note<'data>>> {
    let mut out = Vec::new();
    let mut any_segment = false;
    for (index, ph) in elf.segments_of_type(PT_NOTE) {
        any_segment = true;
        let what = || format!("program header {index} (PT_NOTE)");
        let area = elf.bytes(ph.p_offset(LE), ph.p_filesz(LE), what)?;
        let align = if ph.p_align(LE) == 8 { 8 } else { 4 };
        parse_notes(area, align, &what, &mut out)?;
    }
    if !any_segment {
        for (index, sh) in elf.section_headers.iter().enumerate() {
            if sh.sh_type(LE).0 != SHT_NOTE {
                continue;
            }
            let what = || format!("section {index} (SHT_NOTE)");
            let area = elf.section_bytes(index)?;
            let align = if sh.sh_addralign(LE) == 8 { 8 } else { 4 };
            parse_notes(area, align, &what, &mut out)?;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(owner: &[u8], kind: u32, desc: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend((owner.len() as u32 + 1).to_le_bytes());
        v.extend((desc.len() as u32).to_le_bytes());
        v.extend(kind.to_le_bytes());
        v.extend(owner);
        v.push(0);
        while v.len() % 4 != 0 {
            v.push(0);
        }
        v.extend(desc);
        while v.len() % 4 != 0 {
            v.push(0);
        }
        v
    }

    #[test]
    fn splits_and_refuses_truncation() {
        let mut area = note(b"AMDGPU", 32, b"\x80");
        area.extend(note(b"GNU", 3, b"abcdef"));
        let mut out = Vec::new();
        parse_notes(&area, 4, &|| "test".into(), &mut out).unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(
            (out[0].owner, out[0].kind, out[0].desc),
            (&b"AMDGPU"[..], 32, &b"\x80"[..])
        );
        assert_eq!(out[1].desc, b"abcdef");
        for cut in 1..area.len() {
            let mut out = Vec::new();
            let truncated = &area[..cut];
            // Either an error, or (at a note boundary) fewer notes: never a panic.
            if parse_notes(truncated, 4, &|| "test".into(), &mut out).is_ok() {
                assert!(out.len() <= 2);
            }
        }
        let mut huge = area.clone();
        huge[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(parse_notes(&huge, 4, &|| "test".into(), &mut Vec::new()).is_err());
    }
}
