//! Picking the code object for a device from plain code objects, offload bundles (plain and
//! compressed) and host binaries with `.hip_fatbin`, all committed under tests/kernels/bin.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use aqueduct::code_object_source::{CodeObjectSource, CodeObjectSourceError, Origin};
use aqueduct::loader::TargetId;
use aqueduct::loader::bundle::Container;

fn bin(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/kernels/bin")
        .join(path)
}

fn device(text: &str) -> TargetId {
    TargetId::parse(text).expect("target id")
}

/// The MI210 and MI300X devices as the simulator presents them.
fn mi210() -> TargetId {
    device("gfx90a:sramecc+:xnack-")
}

fn mi300x() -> TargetId {
    device("gfx942:sramecc+:xnack-")
}

#[test]
fn a_plain_code_object_is_mapped_and_borrowed_when_it_runs_on_the_device() {
    let path = bin("gfx90a/vector_add.co5");
    let source = CodeObjectSource::open(&path).unwrap();
    assert!(source.is_mapped());
    assert_eq!(source.bytes(), std::fs::read(&path).unwrap());
    let chosen = source.select(&mi210()).unwrap();
    assert_eq!(chosen.container, Container::CodeObject);
    assert_eq!(chosen.target.to_string(), "gfx90a");
    assert_eq!(chosen.entry_id, None);
    // Not copied: the chosen bytes are the mapping's.
    assert!(matches!(chosen.bytes, Cow::Borrowed(b) if std::ptr::eq(b, source.bytes())));
    assert!(chosen.parse().unwrap().kernel("vector_add").is_some());
}

#[test]
fn a_plain_code_object_for_another_target_names_both() {
    let path = bin("gfx942/vector_add.co5");
    let source = CodeObjectSource::open(&path).unwrap();
    let err = source.select(&mi210()).unwrap_err();
    assert!(
        matches!(&err, CodeObjectSourceError::WrongTarget { code, device, .. }
            if code.processor.name == "gfx942" && device.processor.name == "gfx90a"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{}: the code object is built for gfx942, which does not run on the device's \
             gfx90a:sramecc+:xnack-: different processors",
            path.display()
        )
    );
}

#[test]
fn generic_code_objects_follow_their_family() {
    let generic94 = CodeObjectSource::open(bin("gfx9-4-generic/vector_add.co6")).unwrap();
    let chosen = generic94.select(&mi300x()).unwrap();
    assert_eq!(chosen.target.processor.name, "gfx9-4-generic");
    let err = generic94.select(&mi210()).unwrap_err().to_string();
    assert!(err.contains("built for gfx9-4-generic"), "{err}");
    assert!(err.contains("gfx90a:sramecc+:xnack-"), "{err}");
    // gfx90a belongs to no generic family (gfx9-generic covers gfx900..gfx90c only).
    let generic9 = CodeObjectSource::open(bin("gfx9-generic/vector_add.co6")).unwrap();
    let err = generic9.select(&mi210()).unwrap_err().to_string();
    assert!(err.contains("has no generic family"), "{err}");
    let err = generic9.select(&mi300x()).unwrap_err().to_string();
    assert!(err.contains("not in this generic family"), "{err}");
}

/// A code object's bytes with its xnack setting (e_flags bits 8..9) forced.
fn with_xnack(path: &str, on: bool) -> Vec<u8> {
    let mut bytes = std::fs::read(bin(path)).unwrap();
    let mut flags = u32::from_le_bytes(bytes[48..52].try_into().unwrap());
    flags = flags & !0x300 | if on { 0x300 } else { 0x200 };
    bytes[48..52].copy_from_slice(&flags.to_le_bytes());
    bytes
}

#[test]
fn xnack_must_match_when_the_code_sets_it() {
    let on = CodeObjectSource::from_vec(with_xnack("gfx90a/vector_add.co5", true));
    let err = on.select(&mi210()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "code object in memory: the code object is built for gfx90a:xnack+, which does not run \
         on the device's gfx90a:sramecc+:xnack-: the xnack setting differs"
    );
    assert!(on.select(&device("gfx90a:sramecc+:xnack+")).is_ok());
    let off = CodeObjectSource::from_vec(with_xnack("gfx90a/vector_add.co5", false));
    assert_eq!(
        off.select(&mi210()).unwrap().target.to_string(),
        "gfx90a:xnack-"
    );
}

#[test]
fn bundles_and_fat_binaries_yield_the_entry_for_the_device() {
    let gfx942 = std::fs::read(bin("gfx942/vector_add.co5")).unwrap();
    let gfx90a = std::fs::read(bin("gfx90a/vector_add.co5")).unwrap();
    for (file, container, compressed) in [
        ("fixtures/vector_add.hipfb", Container::Bundle, false),
        (
            "fixtures/vector_add.ccob2.hipfb",
            Container::CompressedBundle,
            true,
        ),
        (
            "fixtures/vector_add.ccob3.hipfb",
            Container::CompressedBundle,
            true,
        ),
        ("fixtures/hip_fatbin_host.so", Container::HostElf, false),
        ("fixtures/hip_fatbin_host.o", Container::HostElf, false),
    ] {
        let source = CodeObjectSource::open(bin(file)).unwrap();
        for (agent, expected, id) in [
            (mi300x(), &gfx942, "hipv4-amdgcn-amd-amdhsa--gfx942"),
            (mi210(), &gfx90a, "hipv4-amdgcn-amd-amdhsa--gfx90a"),
        ] {
            let chosen = source
                .select(&agent)
                .unwrap_or_else(|e| panic!("{file}: {e}"));
            assert_eq!(chosen.container, container, "{file}");
            assert_eq!(chosen.entry_id.as_deref(), Some(id), "{file}");
            assert_eq!(&chosen.bytes[..], &expected[..], "{file}");
            assert_eq!(matches!(chosen.bytes, Cow::Owned(_)), compressed, "{file}");
        }
        let err = source.select(&device("gfx1100")).unwrap_err();
        let CodeObjectSourceError::NoMatchingEntry { present, .. } = &err else {
            panic!("{file}: {err:?}");
        };
        assert_eq!(present, &["gfx90a", "gfx942"], "{file}");
        let text = err.to_string();
        assert!(
            text.contains("no code object for the device's gfx1100"),
            "{text}"
        );
        assert!(text.ends_with("it holds gfx90a, gfx942"), "{text}");
    }
}

#[test]
fn a_bundle_entry_whose_id_lies_is_not_chosen() {
    let gfx942 = std::fs::read(bin("gfx942/vector_add.co5")).unwrap();
    let gfx90a = std::fs::read(bin("gfx90a/vector_add.co5")).unwrap();
    // The first entry claims gfx90a but holds gfx942 code; the second is honest.
    let lying = aqueduct::loader::synth::offload_bundle(&[
        ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", &gfx942),
        ("hipv4-amdgcn-amd-amdhsa--gfx90a", &gfx90a),
    ]);
    let source = CodeObjectSource::from_vec(lying);
    let chosen = source.select(&mi210()).unwrap();
    assert_eq!(
        chosen.entry_id.as_deref(),
        Some("hipv4-amdgcn-amd-amdhsa--gfx90a")
    );
    assert_eq!(&chosen.bytes[..], &gfx90a[..]);
    // With only the lying entry, nothing runs.
    let only =
        aqueduct::loader::synth::offload_bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", &gfx942)]);
    let err = CodeObjectSource::from_vec(only)
        .select(&mi210())
        .unwrap_err();
    assert!(
        matches!(err, CodeObjectSourceError::NoMatchingEntry { .. }),
        "{err}"
    );
}

#[test]
fn unreadable_input_is_an_error_naming_its_origin() {
    let err = CodeObjectSource::open(bin("no/such.co5")).unwrap_err();
    assert!(
        matches!(&err, CodeObjectSourceError::Io { path, .. } if path.ends_with("no/such.co5"))
    );
    let err = CodeObjectSource::from_static(b"MZ not an ELF")
        .select(&mi210())
        .unwrap_err();
    assert!(
        matches!(
            &err,
            CodeObjectSourceError::Unreadable {
                origin: Origin::Memory,
                ..
            }
        ),
        "{err:?}"
    );
    let empty = CodeObjectSource::from_vec(Vec::new());
    assert!(empty.select(&mi210()).is_err());
    // A bundle with only a host entry holds no AMDGPU code object.
    let host_only =
        aqueduct::loader::synth::offload_bundle(&[("host-x86_64-unknown-linux-gnu-", b"")]);
    let err = CodeObjectSource::from_vec(host_only)
        .select(&mi210())
        .unwrap_err();
    assert!(
        err.to_string().ends_with("it holds no AMDGPU code object"),
        "{err}"
    );
}
