//! Hostile input: truncations, corrupted bytes, bad counts and the defect classes of
//! reliability.md §6 (ROCm's 2026 loader hardening: out-of-file segments, `p_filesz > p_memsz`,
//! overlapping and unordered `p_vaddr`, unchecked `sh_link`/`sh_info`/`st_shndx`/relocation
//! symbol indices). Every case must give an error, never a panic; whatever parses must also
//! load without one.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use amdgpu_loader::relocation::RelocationKind;
use amdgpu_loader::synth::{
    S_ENDPGM, Synth, SynthExternal, SynthFunction, SynthKernel, SynthRelocation, SynthTarget,
    SynthVariable,
};
use amdgpu_loader::{CodeObject, Error, ExternalDefinitions, FatBinary};

/// Parse, and load what parses; panics are caught and reported with `what`.
fn exercise(bytes: &[u8], what: &dyn Fn() -> String) -> Result<(), Error> {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let co = CodeObject::parse(bytes)?;
        // Keep allocations small: a mutation may claim a huge (but valid) image.
        if co.image_size() <= 1 << 24 {
            let mut dest = vec![0u8; co.image_size() as usize];
            let mut ext = ExternalDefinitions::new();
            for e in co.relocations().externals() {
                ext.define(&e.name, 0x1234_0000)?;
            }
            let image = co.load(&mut dest, 0x7f00_0000_0000, &ext)?;
            for k in image.kernels() {
                let _ = (k.entry_address, k.implicit_args, k.args.len());
            }
        }
        let _ = FatBinary::parse(bytes);
        Ok(())
    }));
    outcome.unwrap_or_else(|_| panic!("panic on {}", what()))
}

fn program() -> Vec<u8> {
    let mut second = SynthKernel::new("second", [S_ENDPGM, S_ENDPGM].concat());
    second.hidden = vec![
        "hidden_block_count_x",
        "hidden_group_size_x",
        "hidden_grid_dims",
    ];
    second.args = vec![(8, "global_buffer"), (4, "by_value"), (4, "by_value")];
    Synth {
        kernels: vec![SynthKernel::new("first", S_ENDPGM.to_vec()), second],
        variables: vec![
            SynthVariable {
                name: "table".into(),
                data: Some(vec![0; 32]),
                size: 32,
                exported: true,
            },
            SynthVariable {
                name: "zeroes".into(),
                data: None,
                size: 64,
                exported: false,
            },
        ],
        functions: vec![SynthFunction {
            name: "helper".into(),
            code: S_ENDPGM.to_vec(),
            exported: true,
        }],
        externals: vec![SynthExternal {
            name: "outside".into(),
            weak: false,
        }],
        relocations: vec![
            SynthRelocation {
                variable: "table".into(),
                offset: 0,
                target: SynthTarget::Relative("zeroes".into(), 0),
            },
            SynthRelocation {
                variable: "table".into(),
                offset: 8,
                target: SynthTarget::Symbol(RelocationKind::Abs64, "outside".into(), 4),
            },
            SynthRelocation {
                variable: "table".into(),
                offset: 16,
                target: SynthTarget::Symbol(RelocationKind::Abs32Lo, "helper".into(), 0),
            },
        ],
        ..Synth::default()
    }
    .build()
}

/// Committed test kernels (tests/kernels/bin): plain, with RELATIVE64 data relocations, with an
/// undefined external (V6), with preloaded kernel arguments; for gfx9 and gfx11 targets.
const COMMITTED: &[&str] = &[
    "gfx90a/vector_add.co5",
    "gfx90a/global_ptr.co5",
    "gfx90a/extern_sym.co6",
    "gfx90a/preload.co5",
    "gfx942/vector_add.co5",
    "gfx942/global_ptr.co5",
    "gfx942/extern_sym.co6",
    "gfx942/preload.co5",
    "gfx1100/vector_add.co5",
    "gfx1100/global_ptr.co5",
    "gfx1100/extern_sym.co6",
];

fn committed_kernels() -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/kernels/bin");
    COMMITTED
        .iter()
        .map(|rel| {
            let bytes = std::fs::read(root.join(rel))
                .unwrap_or_else(|e| panic!("tests/kernels/bin/{rel}: {e} (it is committed)"));
            ((*rel).to_owned(), bytes)
        })
        .collect()
}

fn samples() -> Vec<(String, Vec<u8>)> {
    let mut samples = vec![("synthetic program".to_owned(), program())];
    samples.extend(committed_kernels());
    samples
}

#[test]
fn every_truncation_is_an_error() {
    for (name, file) in samples() {
        exercise(&file, &|| format!("{name} intact")).unwrap();
        for len in 0..file.len() {
            let result = exercise(&file[..len], &|| format!("{name} truncated to {len}"));
            assert!(result.is_err(), "{name} truncated to {len} parsed");
        }
    }
}

#[test]
fn corrupted_bytes_never_panic() {
    for (name, file) in samples() {
        // Every byte of the headers and tables, and a stride through the rest.
        let dense = file.len().min(0x1000);
        let positions = (0..dense).chain((dense..file.len()).step_by(7));
        let mut errors = 0usize;
        let mut total = 0usize;
        for at in positions {
            for value in [0x00, 0xff, file[at] ^ 0x80, file[at].wrapping_add(1)] {
                if value == file[at] {
                    continue;
                }
                let mut bytes = file.clone();
                bytes[at] = value;
                total += 1;
                if exercise(&bytes, &|| format!("{name} byte {at:#x} := {value:#x}")).is_err() {
                    errors += 1;
                }
            }
        }
        // Most header bytes matter; a corruption that goes unnoticed is one that changes
        // nothing the loader relies on (code bytes, padding, names).
        assert!(
            errors > total / 10,
            "{name}: only {errors} of {total} mutations refused"
        );
    }
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap())
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}
fn put_u16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_le_bytes());
}
fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}
fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// Offsets of the program headers of `file`, with their `p_type`.
fn program_headers(file: &[u8]) -> Vec<(usize, u32)> {
    let phoff = u64_at(file, 0x20) as usize;
    (0..usize::from(u16_at(file, 0x38)))
        .map(|i| {
            let at = phoff + 56 * i;
            (at, u32_at(file, at))
        })
        .collect()
}

/// Offsets of the section headers of `file`, with their `sh_type`.
fn section_headers(file: &[u8]) -> Vec<(usize, u32)> {
    let shoff = u64_at(file, 0x28) as usize;
    (0..usize::from(u16_at(file, 0x3c)))
        .map(|i| {
            let at = shoff + 64 * i;
            (at, u32_at(file, at + 4))
        })
        .collect()
}

fn loads(file: &[u8]) -> Vec<usize> {
    program_headers(file)
        .into_iter()
        .filter(|&(_, t)| t == 1)
        .map(|(at, _)| at)
        .collect()
}

fn assert_refused(bytes: &[u8], what: &str, check: impl Fn(&Error) -> bool) {
    match exercise(bytes, &|| what.to_owned()) {
        Ok(()) => panic!("{what}: accepted"),
        Err(e) => assert!(check(&e), "{what}: unexpected error {e}"),
    }
}

fn malformed(e: &Error) -> bool {
    matches!(e, Error::Malformed { .. })
}

#[test]
fn segment_defects_are_refused() {
    for (name, file) in samples() {
        let loads = loads(&file);
        let last = *loads.last().unwrap();
        // p_filesz > p_memsz (ROCm PR #6996).
        let mut b = file.clone();
        let memsz = u64_at(&b, last + 0x28);
        put_u64(&mut b, last + 0x20, memsz + 1);
        assert_refused(&b, &format!("{name}: p_filesz > p_memsz"), malformed);
        // p_offset beyond the file, and p_offset + p_filesz overflowing (PR #7542).
        for offset in [file.len() as u64, u64::MAX - 4] {
            let mut b = file.clone();
            put_u64(&mut b, loads[1] + 0x08, offset);
            assert_refused(&b, &format!("{name}: p_offset {offset:#x}"), malformed);
        }
        // Overlapping and non-monotonic p_vaddr (PR #7542).
        let mut b = file.clone();
        let first_vaddr = u64_at(&b, loads[0] + 0x10);
        put_u64(&mut b, loads[1] + 0x10, first_vaddr + 8);
        assert_refused(&b, &format!("{name}: overlapping p_vaddr"), malformed);
        let mut b = file.clone();
        put_u64(&mut b, last + 0x10, first_vaddr);
        assert_refused(&b, &format!("{name}: decreasing p_vaddr"), malformed);
        // p_vaddr + p_memsz overflowing, absurd alignments.
        let mut b = file.clone();
        put_u64(&mut b, last + 0x28, u64::MAX - 0x10);
        assert_refused(&b, &format!("{name}: p_memsz overflow"), malformed);
        for align in [3u64, 1 << 40] {
            let mut b = file.clone();
            put_u64(&mut b, loads[0] + 0x30, align);
            assert_refused(&b, &format!("{name}: p_align {align:#x}"), malformed);
        }
        // No PT_LOAD at all.
        let mut b = file.clone();
        for at in &loads {
            put_u32(&mut b, *at, 0x6474e551); // PT_GNU_STACK
        }
        assert_refused(&b, &format!("{name}: no PT_LOAD"), malformed);
    }
}

#[test]
fn header_counts_and_table_offsets_are_checked() {
    for (name, file) in samples() {
        for (field, at, width, value) in [
            ("e_phoff", 0x20, 8, u64::MAX - 8),
            ("e_phoff", 0x20, 8, file.len() as u64 - 8),
            ("e_shoff", 0x28, 8, file.len() as u64 - 8),
            ("e_phentsize", 0x36, 2, 32),
            ("e_phnum", 0x38, 2, 0xfffe),
            ("e_shentsize", 0x3a, 2, 40),
            ("e_shnum", 0x3c, 2, 0xfff0),
            ("e_shstrndx", 0x3e, 2, 0xfff0),
        ] {
            let mut b = file.clone();
            match width {
                8 => put_u64(&mut b, at, value),
                _ => put_u16(&mut b, at, value as u16),
            }
            let what = format!("{name}: {field} = {value:#x}");
            match exercise(&b, &|| what.clone()) {
                // e_shstrndx is only needed for section names, which a code object does not use.
                Ok(()) if field == "e_shstrndx" => {}
                Ok(()) => panic!("{what}: accepted"),
                Err(e) => assert!(malformed(&e), "{what}: {e}"),
            }
        }
    }
}

#[test]
fn section_and_symbol_indices_are_checked() {
    for (name, file) in samples() {
        let sections = section_headers(&file);
        for (at, sh_type) in &sections {
            // sh_link of symbol tables and dynamic relocation sections (ROCm PR #9031).
            if matches!(sh_type, 2 | 11) {
                for link in [0u32, sections.len() as u32, 0xffff_ffff] {
                    let mut b = file.clone();
                    put_u32(&mut b, at + 0x28, link);
                    let what = format!("{name}: sh_link {link} of a symbol table");
                    // With PT_DYNAMIC, .dynsym's section header is not needed; .symtab's is.
                    if *sh_type == 2 {
                        assert_refused(&b, &what, malformed);
                    } else {
                        let _ = exercise(&b, &|| what.clone());
                    }
                }
                // sh_entsize other than 24.
                let mut b = file.clone();
                put_u64(&mut b, at + 0x38, 16);
                if *sh_type == 2 {
                    assert_refused(&b, &format!("{name}: .symtab sh_entsize 16"), malformed);
                }
            }
        }
        // st_shndx >= SHN_LORESERVE (not SHN_ABS), and beyond the section count, in .symtab.
        if let Some(&(symtab, _)) = sections.iter().find(|&&(_, t)| t == 2) {
            let offset = u64_at(&file, symtab + 0x18) as usize;
            let size = u64_at(&file, symtab + 0x20) as usize;
            for index in 1..size / 24 {
                for shndx in [0xff00u16, 0xffff, sections.len() as u16] {
                    let mut b = file.clone();
                    put_u16(&mut b, offset + 24 * index + 6, shndx);
                    assert_refused(
                        &b,
                        &format!("{name}: symbol {index} st_shndx {shndx:#x}"),
                        malformed,
                    );
                }
                let mut b = file.clone();
                put_u32(&mut b, offset + 24 * index, 0x7fff_ffff);
                assert_refused(&b, &format!("{name}: symbol {index} st_name"), malformed);
            }
        }
    }
}

#[test]
fn relocation_defects_are_refused() {
    let mut with_relocations = 0;
    for (name, file) in samples() {
        let co = CodeObject::parse(&file).unwrap();
        let Some(rela) = co.dynamic().and_then(|d| d.rela) else {
            continue;
        };
        with_relocations += 1;
        let count = co.relocations().relocations().len();
        let symbols = co.dynamic_symbols().len() as u64;
        let image_end = co.layout().start_vaddr + co.image_size();
        // Here (lld and synth layouts) the relocation table's vaddr is its file offset.
        let rela = rela as usize;
        for index in 0..count {
            let entry = rela + 24 * index;
            let kind = co.relocations().relocations()[index].kind;
            let relocation = |e: &Error| matches!(e, Error::Relocation { .. });
            // Out-of-image r_offset, including one whose last byte is just outside.
            for offset in [image_end, image_end - kind.width() + 1, u64::MAX - 2] {
                let mut b = file.clone();
                put_u64(&mut b, entry, offset);
                assert_refused(
                    &b,
                    &format!("{name}: relocation {index} r_offset {offset:#x}"),
                    relocation,
                );
            }
            // A symbol index beyond .dynsym (ROCm PR #9031).
            let mut b = file.clone();
            let info = u64_at(&b, entry + 8);
            put_u64(&mut b, entry + 8, (symbols << 32) | (info & 0xffff_ffff));
            assert_refused(
                &b,
                &format!("{name}: relocation {index} symbol {symbols}"),
                relocation,
            );
            // RELATIVE64 naming a symbol.
            if kind == RelocationKind::Relative64 {
                let mut b = file.clone();
                put_u64(&mut b, entry + 8, (1 << 32) | 0xd);
                assert_refused(&b, &format!("{name}: RELATIVE64 with a symbol"), relocation);
            }
        }
        // DT_RELASZ / DT_RELAENT / DT_SYMENT lies.
        let dynamic = program_headers(&file)
            .into_iter()
            .find(|&(_, t)| t == 2)
            .map(|(at, _)| u64_at(&file, at + 0x08) as usize)
            .unwrap();
        let mut at = dynamic;
        while u64_at(&file, at) != 0 {
            let tag = u64_at(&file, at);
            let bad: &[u64] = match tag {
                8 => &[25, 24 * 1_000_000, u64::MAX - 7],
                9 | 11 => &[16, 0],
                4..=7 => &[u64::MAX - 100, 0x7fff_0000],
                10 => &[u64::MAX / 2],
                _ => &[],
            };
            for &value in bad {
                let mut b = file.clone();
                put_u64(&mut b, at + 8, value);
                assert_refused(
                    &b,
                    &format!("{name}: dynamic tag {tag} = {value:#x}"),
                    malformed,
                );
            }
            at += 16;
        }
        // A dynamic section without DT_NULL.
        let mut b = file.clone();
        let mut at = dynamic;
        while u64_at(&b, at) != 0 {
            at += 16;
        }
        let dyn_end = program_headers(&file)
            .into_iter()
            .find(|&(_, t)| t == 2)
            .map(|(ph, _)| dynamic + u64_at(&file, ph + 0x20) as usize)
            .unwrap();
        while at < dyn_end {
            put_u64(&mut b, at, 0x6fff_0000);
            at += 16;
        }
        assert_refused(&b, &format!("{name}: no DT_NULL"), malformed);
    }
    // The synthetic program, global_ptr and extern_sym of each target.
    assert_eq!(with_relocations, 7, "samples with dynamic relocations");
}

#[test]
fn hash_table_lies_are_refused() {
    for (name, file) in samples() {
        let co = CodeObject::parse(&file).unwrap();
        let hash = co
            .dynamic()
            .and_then(|d| d.hash)
            .unwrap_or_else(|| panic!("{name}: no DT_HASH")) as usize;
        // nchain sizes .dynsym: too large runs past the table and the segment.
        for nchain in [0x00ff_ffffu32, u32::MAX] {
            let mut b = file.clone();
            put_u32(&mut b, hash + 4, nchain);
            assert_refused(&b, &format!("{name}: nchain {nchain:#x}"), malformed);
        }
        let mut b = file.clone();
        put_u32(&mut b, hash, u32::MAX);
        assert_refused(&b, &format!("{name}: nbucket"), malformed);
    }
}

#[test]
fn metadata_defects_are_errors() {
    for (name, file) in samples() {
        let co = CodeObject::parse(&file).unwrap();
        assert!(co.metadata().is_some(), "{name}: no metadata");
        // Find the msgpack map after the "AMDGPU\0\0" owner of the metadata note.
        let owner = file
            .windows(8)
            .position(|w| w == b"AMDGPU\0\0")
            .unwrap_or_else(|| panic!("{name}: no AMDGPU note"));
        let descsz_at = owner - 8;
        let desc = owner + 8;
        let len = u32_at(&file, descsz_at) as usize;
        // A descriptor size running past the note area.
        let mut b = file.clone();
        put_u32(&mut b, descsz_at, 0x7fff_ffff);
        assert_refused(&b, &format!("{name}: note descsz"), malformed);
        // Every single-byte corruption of the map: errors or (if harmless) success, no panic.
        for at in desc..desc + len {
            for value in [0x00u8, 0xc1, 0xdf, 0xff, file[at] ^ 0x01] {
                let mut b = file.clone();
                b[at] = value;
                let _ = exercise(&b, &|| {
                    format!("{name}: metadata byte {at:#x} := {value:#x}")
                });
            }
        }
        // The map claiming 2^32-1 entries, and its first key a string claiming ~1.6 GB.
        let metadata = |e: &Error| matches!(e, Error::Metadata(_));
        let mut b = file.clone();
        b[desc] = 0xdf;
        b[desc + 1..desc + 5].fill(0xff);
        assert_refused(&b, &format!("{name}: map32 of 2^32-1"), metadata);
        let mut b = file.clone();
        b[desc + 1] = 0xdb;
        assert_refused(&b, &format!("{name}: str32"), metadata);
    }
}

type Check = fn(&Error) -> bool;

#[test]
fn identity_checks_name_what_is_wrong() {
    let file = program();
    let cases: &[(&str, usize, u8, Check)] = &[
        ("magic", 0, 0, |e| matches!(e, Error::NotElf)),
        ("class", 4, 1, |e| matches!(e, Error::UnsupportedElf(_))),
        ("data", 5, 2, |e| matches!(e, Error::UnsupportedElf(_))),
        ("os abi", 7, 0, |e| matches!(e, Error::NotHsa(0))),
        ("abi v2", 8, 0, |e| {
            matches!(e, Error::UnsupportedVersion { abi_version: 0 })
        }),
        ("abi v3", 8, 1, |e| {
            matches!(e, Error::UnsupportedVersion { abi_version: 1 })
        }),
        ("abi v9", 8, 7, |e| {
            matches!(e, Error::UnsupportedVersion { .. })
        }),
        ("ET_REL", 0x10, 1, |e| matches!(e, Error::NotShared(1))),
        ("ET_EXEC", 0x10, 2, |e| matches!(e, Error::NotShared(2))),
        ("machine", 0x12, 62, |e| matches!(e, Error::NotAmdgpu(62))),
        ("mach", 0x30, 0x40, |e| matches!(e, Error::BadFlags { .. })),
    ];
    for (what, at, value, check) in cases {
        let mut b = file.clone();
        b[*at] = *value;
        assert_refused(&b, what, check);
    }
    let err = CodeObject::parse(&{
        let mut b = file.clone();
        b[8] = 1;
        b
    })
    .unwrap_err();
    assert!(err.to_string().contains("V3"), "{err}");
}
