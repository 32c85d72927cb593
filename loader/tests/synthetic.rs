//! Placement, relocation and symbol resolution on synthetic code objects: the cases of
//! code-objects.md §11 that a compiler will not produce (negative entry offsets, a first segment
//! at a non-zero address, ABS32 relocations, undefined externals, no section headers).

use amdgpu_loader::relocation::RelocationKind;
use amdgpu_loader::synth::{
    S_ENDPGM, Synth, SynthExternal, SynthFunction, SynthKernel, SynthRelocation, SynthTarget,
    SynthVariable, offload_bundle,
};
use amdgpu_loader::{
    CodeObject, Error, ExternalDefinitions, FatBinary, HiddenArg, NoExternals, TargetId,
};

const BASE: u64 = 0x7000_0000_0000;

fn read_u64(image: &[u8], at: u64) -> u64 {
    u64::from_le_bytes(image[at as usize..at as usize + 8].try_into().unwrap())
}

fn read_u32(image: &[u8], at: u64) -> u32 {
    u32::from_le_bytes(image[at as usize..at as usize + 4].try_into().unwrap())
}

/// Two kernels, a data variable holding pointers, a bss variable, two functions (one local),
/// and an external.
fn program() -> Synth {
    let mut k2 = SynthKernel::new("second", [S_ENDPGM, S_ENDPGM].concat());
    k2.hidden = vec![
        "hidden_block_count_x",
        "hidden_group_size_x",
        "hidden_dynamic_lds_size",
    ];
    Synth {
        kernels: vec![SynthKernel::new("first", S_ENDPGM.to_vec()), k2],
        variables: vec![
            SynthVariable {
                name: "table".into(),
                data: Some(vec![0x11; 64]),
                size: 64,
                exported: true,
            },
            SynthVariable {
                name: "counter".into(),
                data: None,
                size: 32,
                exported: true,
            },
            SynthVariable {
                name: "hidden_state".into(),
                data: Some(vec![0x22; 8]),
                size: 8,
                exported: false,
            },
        ],
        functions: vec![
            SynthFunction {
                name: "device_add".into(),
                code: vec![0; 12],
                exported: true,
            },
            SynthFunction {
                name: "local_helper".into(),
                code: vec![0; 8],
                exported: false,
            },
        ],
        externals: vec![
            SynthExternal {
                name: "host_buffer".into(),
                weak: false,
            },
            SynthExternal {
                name: "optional_hook".into(),
                weak: true,
            },
        ],
        relocations: vec![
            reloc(0, SynthTarget::Relative("counter".into(), 4)),
            reloc(8, SynthTarget::Relative("device_add".into(), 0)),
            reloc(
                16,
                SynthTarget::Symbol(RelocationKind::Abs64, "table".into(), 8),
            ),
            reloc(
                24,
                SynthTarget::Symbol(RelocationKind::Abs64, "host_buffer".into(), 16),
            ),
            reloc(
                32,
                SynthTarget::Symbol(RelocationKind::Abs32Lo, "counter".into(), 0),
            ),
            reloc(
                36,
                SynthTarget::Symbol(RelocationKind::Abs32Hi, "counter".into(), 0),
            ),
            reloc(
                40,
                SynthTarget::Symbol(RelocationKind::Abs64, "optional_hook".into(), 0),
            ),
            reloc(
                48,
                SynthTarget::Symbol(RelocationKind::Abs64, "first.kd".into(), 0),
            ),
        ],
        ..Synth::default()
    }
}

fn reloc(offset: u64, target: SynthTarget) -> SynthRelocation {
    SynthRelocation {
        variable: "table".into(),
        offset,
        target,
    }
}

fn externals() -> ExternalDefinitions {
    let mut ext = ExternalDefinitions::new();
    ext.define("host_buffer", 0x5555_0000).unwrap();
    ext
}

#[test]
fn places_segments_zeroes_bss_and_relocates() {
    let file = program().build();
    let co = CodeObject::parse(&file).unwrap();
    assert_eq!(co.target().to_string(), "gfx90a");
    assert_eq!(co.image_align(), 0x1000);
    let mut dest = vec![0xee; co.image_size() as usize + 16];
    let image = co.load(&mut dest, BASE, &externals()).unwrap();
    // Bytes past the image are the caller's.
    assert!(dest[co.image_size() as usize..].iter().all(|&b| b == 0xee));

    let table = image.variable("table").unwrap();
    let counter = image.variable("counter").unwrap();
    let device_add = image.function("device_add").unwrap();
    let first = image.kernel("first").unwrap();
    let at = table.address - BASE;
    // .bss is zero, the gaps are zero.
    let c = (counter.address - BASE) as usize;
    assert!(dest[c..c + 32].iter().all(|&b| b == 0));
    assert_eq!(read_u64(&dest, at), counter.address + 4); // RELATIVE64
    assert_eq!(read_u64(&dest, at + 8), device_add.address); // function pointer
    assert_eq!(read_u64(&dest, at + 16), table.address + 8); // ABS64, defined
    assert_eq!(read_u64(&dest, at + 24), 0x5555_0000 + 16); // ABS64, external + addend
    assert_eq!(read_u32(&dest, at + 32), counter.address as u32); // ABS32_LO
    assert_eq!(read_u32(&dest, at + 36), (counter.address >> 32) as u32); // ABS32_HI
    assert_eq!(read_u64(&dest, at + 40), 0); // weak undefined
    assert_eq!(read_u64(&dest, at + 48), first.descriptor_address);
    // Unrelocated data is as in the file.
    assert_eq!(dest[(at + 56) as usize], 0x11);
}

#[test]
fn kernels_are_found_by_name_and_descriptor_name() {
    let file = program().build();
    let co = CodeObject::parse(&file).unwrap();
    let mut dest = vec![0; co.image_size() as usize];
    let image = co.load(&mut dest, BASE, &externals()).unwrap();
    for name in ["second", "second.kd"] {
        let k = image.kernel(name).unwrap();
        assert_eq!(k.name, "second");
        assert_eq!(k.descriptor_symbol, "second.kd");
        assert_eq!(k.descriptor_address % 64, 0);
        assert_eq!(k.entry_address % 256, 0);
        assert!(k.entry_address > k.descriptor_address);
        assert_eq!(
            k.entry_address,
            k.descriptor_address
                .wrapping_add(k.descriptor.kernel_code_entry_byte_offset as u64)
        );
        // The descriptor in the image is the one the kernel reports.
        let kd = (k.descriptor_address - BASE) as usize;
        assert_eq!(
            amdgpu_loader::KernelDescriptor::read(&dest[kd..]).unwrap(),
            *k.descriptor
        );
        // Code lands at the entry.
        let entry = (k.entry_address - BASE) as usize;
        assert_eq!(dest[entry..entry + 4], S_ENDPGM);
        let implicit = k.implicit_args.unwrap();
        assert_eq!(implicit.offset, 8);
        assert_eq!(implicit.offset_of(HiddenArg::DynamicLdsSize), Some(8 + 120));
        assert_eq!(k.kernarg_size, 8 + 256);
        assert_eq!(k.explicit_args().count(), 1);
    }
    assert!(image.kernel("first.kd.kd").is_none());
    assert!(image.kernel("table").is_none());
    assert!(image.variable("first").is_none());
    // Local symbols from .symtab are reachable but not exported.
    let local = image.variable("hidden_state").unwrap();
    assert!(!local.exported);
    assert!(!image.function("local_helper").unwrap().exported);
    let exports: Vec<_> = image.exports().map(|(n, _)| n).collect();
    assert!(exports.contains(&"first.kd") && exports.contains(&"device_add"));
    assert!(!exports.contains(&"hidden_state") && !exports.contains(&"local_helper"));
    assert!(
        !exports.contains(&"first"),
        "kernel entry symbols are not functions"
    );
}

#[test]
fn an_undefined_symbol_without_a_definition_is_an_error_whatever_its_addend() {
    let file = program().build();
    let co = CodeObject::parse(&file).unwrap();
    let mut dest = vec![0; co.image_size() as usize];
    let err = co.load(&mut dest, BASE, &NoExternals).unwrap_err();
    assert!(
        matches!(&err, Error::UndefinedSymbol { name, .. } if name == "host_buffer"),
        "{err}"
    );
    // A closure or a map serve as well.
    let resolver = |name: &str| (name == "host_buffer").then_some(0x1000);
    co.load(&mut dest, BASE, &resolver).unwrap();
    let mut map = std::collections::HashMap::new();
    map.insert("host_buffer".to_owned(), 0x2000u64);
    co.load(&mut dest, BASE, &map).unwrap();
}

#[test]
fn rejects_bad_destinations() {
    let file = program().build();
    let co = CodeObject::parse(&file).unwrap();
    let mut small = vec![0; co.image_size() as usize - 1];
    assert!(matches!(
        co.load(&mut small, BASE, &externals()),
        Err(Error::DestinationTooSmall { .. })
    ));
    let mut dest = vec![0; co.image_size() as usize];
    assert!(matches!(
        co.load(&mut dest, BASE + 0x100, &externals()),
        Err(Error::MisalignedBase { .. })
    ));
    assert!(matches!(
        co.load(&mut dest, !0xfff, &externals()),
        Err(Error::AddressOverflow { .. })
    ));
}

#[test]
fn relocates_at_a_nonzero_first_address_without_sections_or_symtab() {
    for (section_headers, symtab) in [(true, true), (true, false), (false, false)] {
        let mut synth = program();
        synth.start_vaddr = 0x10000;
        synth.section_headers = section_headers;
        synth.symtab = symtab;
        let file = synth.build();
        let co = CodeObject::parse(&file).unwrap();
        assert_eq!(co.layout().start_vaddr, 0x10000);
        assert_eq!(co.static_symbols().is_empty(), !symtab);
        let mut dest = vec![0; co.image_size() as usize];
        let image = co.load(&mut dest, BASE, &externals()).unwrap();
        assert_eq!(image.delta(), BASE - 0x10000);
        let table = image.variable("table").unwrap();
        let counter = image.variable("counter").unwrap();
        assert_eq!(read_u64(&dest, table.address - BASE), counter.address + 4);
        assert_eq!(image.kernel("first").unwrap().descriptor_address % 64, 0);
        // Locals disappear with .symtab.
        assert_eq!(image.variable("hidden_state").is_some(), symtab);
        assert_eq!(image.function("local_helper").is_some(), symtab);
    }
}

#[test]
fn descriptors_after_the_code_give_negative_entry_offsets() {
    let mut synth = program();
    synth.descriptors_after_code = true;
    let file = synth.build();
    let co = CodeObject::parse(&file).unwrap();
    let mut dest = vec![0; co.image_size() as usize];
    let image = co.load(&mut dest, BASE, &externals()).unwrap();
    for k in image.kernels() {
        assert!(k.descriptor.kernel_code_entry_byte_offset < 0);
        assert!(k.entry_address < k.descriptor_address);
        let entry = (k.entry_address - BASE) as usize;
        assert_eq!(dest[entry..entry + 4], S_ENDPGM);
    }
}

#[test]
fn preloaded_kernels_have_two_entry_points() {
    let mut synth = program();
    let mut k = SynthKernel::new("preloaded", [vec![0; 256], S_ENDPGM.to_vec()].concat());
    k.descriptor.kernarg_preload = 2; // two dwords at offset 0
    synth.kernels.push(k);
    let file = synth.build();
    let co = CodeObject::parse(&file).unwrap();
    let mut dest = vec![0; co.image_size() as usize];
    let image = co.load(&mut dest, BASE, &externals()).unwrap();
    let k = image.kernel("preloaded").unwrap();
    assert_eq!(k.preload_entry_address, Some(k.entry_address + 256));
    assert_eq!(image.kernel("first").unwrap().preload_entry_address, None);
    // A preload entry past the code is refused.
    let mut synth = program();
    let mut k = SynthKernel::new("short", S_ENDPGM.to_vec());
    k.descriptor.kernarg_preload = 2;
    synth.kernels = vec![k];
    let file = synth.build();
    assert!(matches!(
        CodeObject::parse(&file),
        Err(Error::Malformed { .. })
    ));
}

#[test]
fn abs32_must_fit_and_static_relocation_types_are_refused() {
    let mut synth = program();
    synth.relocations.push(reloc(
        56,
        SynthTarget::Symbol(RelocationKind::Abs32, "counter".into(), 0),
    ));
    let file = synth.build();
    let co = CodeObject::parse(&file).unwrap();
    let mut dest = vec![0; co.image_size() as usize];
    // A 64-bit address does not fit ABS32 ...
    assert!(matches!(
        co.load(&mut dest, BASE, &externals()),
        Err(Error::Relocation { .. })
    ));
    // ... a low one does.
    let image = co.load(&mut dest, 0x1000_0000, &externals()).unwrap();
    let table = image.variable("table").unwrap().address - 0x1000_0000;
    assert_eq!(
        u64::from(read_u32(&dest, table + 56)),
        image.variable("counter").unwrap().address
    );

    // Patch an ABS64 into each static-only type: refused at parse time.
    let file = program().build();
    let co = CodeObject::parse(&file).unwrap();
    let rela = co.dynamic().unwrap().rela.unwrap() as usize;
    for r_type in [4u8, 5, 7, 8, 9, 10, 11, 14, 12, 200] {
        let mut patched = file.clone();
        patched[rela + 24 * 2 + 8] = r_type; // third entry's r_info low byte
        let err = CodeObject::parse(&patched).unwrap_err();
        assert!(matches!(err, Error::Relocation { .. }), "{r_type}: {err}");
    }
}

#[test]
fn one_namespace_refuses_duplicate_definitions() {
    let file = program().build();
    let co = CodeObject::parse(&file).unwrap();
    let mut ns = externals();
    let mut a = vec![0; co.image_size() as usize];
    let first = co.load(&mut a, BASE, &ns).unwrap();
    ns.define_exports(&first).unwrap();
    let defined = ns.len();
    let mut b = vec![0; co.image_size() as usize];
    let second = co.load(&mut b, BASE + 0x100000, &ns).unwrap();
    assert!(matches!(
        ns.define_exports(&second),
        Err(Error::AlreadyDefined(_))
    ));
    assert_eq!(ns.len(), defined, "a failed define changes nothing");
    assert!(matches!(
        ns.define("table", 1),
        Err(Error::AlreadyDefined(_))
    ));

    // A second object refers to the first one's export.
    let user = Synth {
        variables: vec![SynthVariable {
            name: "ptr".into(),
            data: Some(vec![0; 8]),
            size: 8,
            exported: true,
        }],
        externals: vec![SynthExternal {
            name: "table".into(),
            weak: false,
        }],
        relocations: vec![SynthRelocation {
            variable: "ptr".into(),
            offset: 0,
            target: SynthTarget::Symbol(RelocationKind::Abs64, "table".into(), 4),
        }],
        ..Synth::default()
    }
    .build();
    let co2 = CodeObject::parse(&user).unwrap();
    let mut c = vec![0; co2.image_size() as usize];
    let image = co2.load(&mut c, BASE + 0x200000, &ns).unwrap();
    let ptr = image.variable("ptr").unwrap().address - (BASE + 0x200000);
    assert_eq!(
        read_u64(&c, ptr),
        first.variable("table").unwrap().address + 4
    );
}

#[test]
fn hash_lookup_agrees_with_a_linear_scan() {
    let file = program().build();
    let co = CodeObject::parse(&file).unwrap();
    assert_eq!(co.hash_tables(), (true, false));
    for sym in co.dynamic_symbols().iter().skip(1) {
        let found = co.hash_lookup(sym.name).unwrap().unwrap();
        assert_eq!(found, sym);
    }
    assert!(co.hash_lookup("no_such_symbol").unwrap().is_none());
}

#[test]
fn generic_targets_need_v6() {
    let mut synth = program();
    synth.e_flags = 0x100_0054; // gfx11-generic v1
    synth.target_name = Some("amdgcn-amd-amdhsa--gfx11-generic".into());
    assert!(matches!(
        CodeObject::parse(&synth.build()),
        Err(Error::BadFlags { .. })
    ));
    synth.abi_version = 4;
    let file = synth.build();
    let co = CodeObject::parse(&file).unwrap();
    let navi = TargetId::for_agent(110001, false, false).unwrap();
    co.target().runs_on(&navi).unwrap();
    assert!(
        co.target()
            .runs_on(&TargetId::for_agent(100300, false, false).unwrap())
            .is_err()
    );
}

#[test]
fn metadata_must_agree_with_the_elf() {
    let mut synth = program();
    synth.target_name = Some("amdgcn-amd-amdhsa--gfx942".into());
    assert!(matches!(
        CodeObject::parse(&synth.build()),
        Err(Error::Metadata(_))
    ));
    // The synthetic metadata follows the descriptor: break the descriptor after building.
    let file = program().build();
    let co = CodeObject::parse(&file).unwrap();
    let kd = co.kernel("first").unwrap().descriptor_vaddr as usize; // vaddr == offset here
    let mut patched = file.clone();
    patched[kd] = 0x40; // group_segment_fixed_size = 64, metadata says 0
    assert!(matches!(
        CodeObject::parse(&patched),
        Err(Error::Metadata(_))
    ));
    // Without metadata, kernels are still found from their descriptors.
    let mut synth = program();
    synth.metadata = false;
    let file = synth.build();
    let co = CodeObject::parse(&file).unwrap();
    assert_eq!(co.kernels().len(), 2);
    assert!(co.kernels().iter().all(|k| k.metadata.is_none()));
}

#[test]
fn bundles_pick_the_best_code_object() {
    let gfx90a = program().build();
    let mut generic = program();
    generic.e_flags = 0x100_0151; // gfx9-generic
    generic.abi_version = 4;
    generic.target_name = Some("amdgcn-amd-amdhsa--gfx9-generic".into());
    let generic = generic.build();
    let bundle = offload_bundle(&[
        ("host-x86_64-unknown-linux-gnu-", &[]),
        ("hipv4-amdgcn-amd-amdhsa--gfx9-generic", &generic),
        ("hipv4-amdgcn-amd-amdhsa--gfx90a", &gfx90a),
        ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", &gfx90a),
    ]);
    let fat = FatBinary::parse(&bundle).unwrap();
    assert_eq!(fat.entries.len(), 4);
    assert_eq!(fat.code_objects().count(), 3);
    let mi200 = TargetId::for_agent(90010, true, true).unwrap();
    assert_eq!(
        fat.best_for(&mi200).unwrap().id,
        "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"
    );
    let mi200_off = TargetId::for_agent(90010, false, true).unwrap();
    assert_eq!(
        fat.best_for(&mi200_off).unwrap().id,
        "hipv4-amdgcn-amd-amdhsa--gfx90a"
    );
    let vega = TargetId::for_agent(90000, false, false).unwrap();
    assert_eq!(
        fat.best_for(&vega).unwrap().id,
        "hipv4-amdgcn-amd-amdhsa--gfx9-generic"
    );
    assert!(
        fat.best_for(&TargetId::for_agent(110000, false, false).unwrap())
            .is_none()
    );
    for entry in fat.code_objects() {
        CodeObject::parse(&entry.bytes).unwrap();
    }
}

/// The synthetic objects kept, with what llvm-readelf-19 says about them, in
/// `tests/loader-oracle/`: the bytes in `synth/`, the readelf output in `golden/synth/`
/// (written and drift-checked by `generate.sh`, so LLVM reads what our ELF writer makes).
fn kept_objects() -> Vec<(&'static str, Vec<u8>)> {
    let mut no_sections = program();
    no_sections.start_vaddr = 0x10000;
    no_sections.section_headers = false;
    no_sections.symtab = false;
    let mut kd_after_code = program();
    kd_after_code.descriptors_after_code = true;
    vec![
        ("program.co", program().build()),
        ("program.no-sections.co", no_sections.build()),
        ("program.kd-after-code.co", kd_after_code.build()),
    ]
}

fn oracle_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/loader-oracle")
}

/// `(name, value)` of every row of one symbol table in llvm-readelf's `-s`/`--dyn-syms` output.
fn readelf_symbols(readelf: &str, table: &str) -> Vec<(String, u64)> {
    let mut rows = Vec::new();
    let mut inside = false;
    for line in readelf.lines() {
        if line.starts_with("Symbol table ") {
            // Without section headers llvm-readelf lists the dynamic symbols "for image".
            inside = line.starts_with(&format!("Symbol table '{table}'"))
                || (table == ".dynsym" && line.starts_with("Symbol table for image"));
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        if !inside || fields.len() < 8 || !fields[0].ends_with(':') || fields[0] == "Num:" {
            continue;
        }
        let value = u64::from_str_radix(fields[1], 16).expect("readelf symbol value");
        rows.push((fields[7].to_owned(), value));
    }
    rows
}

#[test]
fn kept_synthetic_objects_are_unchanged_and_llvm_readelf_agrees_with_the_loader() {
    if std::env::var_os("AQUEDUCT_BLESS_SYNTH").is_some_and(|v| !v.is_empty()) {
        for (name, bytes) in kept_objects() {
            std::fs::write(oracle_dir().join("synth").join(name), &bytes).unwrap();
        }
    }
    for (name, bytes) in kept_objects() {
        let path = oracle_dir().join("synth").join(name);
        let kept = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            kept == bytes,
            "{name}: the ELF writer's output changed; rerun with AQUEDUCT_BLESS_SYNTH=1, then \
             tests/loader-oracle/generate.sh, and review the readelf diff"
        );
        let golden = oracle_dir()
            .join("golden/synth")
            .join(format!("{name}.readelf"));
        let readelf = std::fs::read_to_string(&golden)
            .unwrap_or_else(|e| panic!("{}: {e}", golden.display()));
        let co = CodeObject::parse(&bytes).unwrap();
        // Every symbol the loader reads is where llvm-readelf reads it, and no more or fewer.
        for (table, ours) in [
            (".dynsym", co.dynamic_symbols()),
            (".symtab", co.static_symbols()),
        ] {
            let mut llvm: Vec<(String, u64)> = readelf_symbols(&readelf, table)
                .into_iter()
                .filter(|(n, _)| !n.is_empty())
                .collect();
            let mut ours: Vec<(String, u64)> = ours
                .iter()
                .filter(|s| !s.name.is_empty())
                .map(|s| (s.name.to_owned(), s.value))
                .collect();
            llvm.sort();
            ours.sort();
            assert_eq!(ours, llvm, "{name} {table}");
        }
        assert!(
            readelf.contains("AMDGPU Metadata"),
            "{name}: no metadata note"
        );
    }
}
