//! The kernarg builder against the committed corpus and against hand-made metadata: every
//! explicit and hidden argument lands where the metadata (and code-objects.md §7's tables, kept
//! here independently of the loader's and the builder's) says, and bad launches are refused
//! with errors that name what is wrong.

use std::path::{Path, PathBuf};

use aqueduct::kernarg::{Arg, Geometry, KernargError, KernargLayout, LaunchContext};
use aqueduct::loader::metadata::AddressSpace;
use aqueduct::loader::{
    CodeObject, HiddenArg, ImplicitArgs, ImplicitLayout, KernelArg, KernelDescriptor,
    KernelMetadata, KernelSymbol, ValueKind,
};

fn bin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/bin")
}

/// The corpus for the simulated targets: every `.co4/.co5/.co6` of gfx90a and gfx942.
fn corpus() -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for target in ["gfx90a", "gfx942"] {
        let dir = bin().join(target);
        for entry in std::fs::read_dir(&dir).expect("corpus directory") {
            let path = entry.expect("entry").path();
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            if matches!(ext, "co4" | "co5" | "co6") {
                let name = format!("{target}/{}", path.file_name().unwrap().to_string_lossy());
                files.push((name, std::fs::read(&path).expect("read")));
            }
        }
    }
    files.sort();
    assert!(files.len() > 150, "corpus incomplete: {}", files.len());
    files
}

const CONTEXT: LaunchContext = LaunchContext {
    queue_address: 0x7000_1234_5600,
    private_aperture_base: 0x2000_0000_0000_0000,
    shared_aperture_base: 0x1000_0000_0000_0000,
    lds_limit: 65536,
    printf_buffer: None,
    hostcall_buffer: None,
    heap: None,
};

/// V5/V6 implicit block (code-objects.md §7.1): (value kind, offset, size).
const V5_TABLE: &[(&str, u32, u32)] = &[
    ("hidden_block_count_x", 0, 4),
    ("hidden_block_count_y", 4, 4),
    ("hidden_block_count_z", 8, 4),
    ("hidden_group_size_x", 12, 2),
    ("hidden_group_size_y", 14, 2),
    ("hidden_group_size_z", 16, 2),
    ("hidden_remainder_x", 18, 2),
    ("hidden_remainder_y", 20, 2),
    ("hidden_remainder_z", 22, 2),
    ("hidden_global_offset_x", 40, 8),
    ("hidden_global_offset_y", 48, 8),
    ("hidden_global_offset_z", 56, 8),
    ("hidden_grid_dims", 64, 2),
    ("hidden_printf_buffer", 72, 8),
    ("hidden_hostcall_buffer", 80, 8),
    ("hidden_multigrid_sync_arg", 88, 8),
    ("hidden_heap_v1", 96, 8),
    ("hidden_default_queue", 104, 8),
    ("hidden_completion_action", 112, 8),
    ("hidden_dynamic_lds_size", 120, 4),
    ("hidden_private_base", 192, 4),
    ("hidden_shared_base", 196, 4),
    ("hidden_queue_ptr", 200, 8),
];

/// V4 implicit block (code-objects.md §7.2).
const V4_TABLE: &[(&str, u32, u32)] = &[
    ("hidden_global_offset_x", 0, 8),
    ("hidden_global_offset_y", 8, 8),
    ("hidden_global_offset_z", 16, 8),
    ("hidden_hostcall_buffer", 24, 8),
    ("hidden_default_queue", 32, 8),
    ("hidden_completion_action", 40, 8),
    ("hidden_multigrid_sync_arg", 48, 8),
];

/// What a launch should put in each hidden field, worked out here from the grid numbers.
struct Expect {
    grid: [u32; 3],
    group: [u32; 3],
    dims: u32,
    offset: [u64; 3],
    dynamic_lds: u32,
}

impl Expect {
    fn value(&self, kind: &str) -> u64 {
        let axis = |k: &str| match k.as_bytes()[k.len() - 1] {
            b'x' => 0,
            b'y' => 1,
            _ => 2,
        };
        match kind {
            k if k.starts_with("hidden_block_count_") => {
                u64::from(self.grid[axis(k)] / self.group[axis(k)])
            }
            k if k.starts_with("hidden_group_size_") => u64::from(self.group[axis(k)]),
            k if k.starts_with("hidden_remainder_") => {
                u64::from(self.grid[axis(k)] % self.group[axis(k)])
            }
            k if k.starts_with("hidden_global_offset_") => self.offset[axis(k)],
            "hidden_grid_dims" => u64::from(self.dims),
            "hidden_dynamic_lds_size" => u64::from(self.dynamic_lds),
            "hidden_queue_ptr" => CONTEXT.queue_address,
            "hidden_private_base" => 0x2000_0000,
            "hidden_shared_base" => 0x1000_0000,
            _ => 0,
        }
    }
}

fn read(bytes: &[u8], at: u32, size: u32) -> u64 {
    let mut v = [0u8; 8];
    v[..size as usize].copy_from_slice(&bytes[at as usize..(at + size) as usize]);
    u64::from_le_bytes(v)
}

/// The bytes explicit argument `i` should hold: a distinct pointer or a byte pattern.
fn bytes_for(i: usize, arg: &KernelArg) -> Vec<u8> {
    match arg.value_kind {
        ValueKind::GlobalBuffer => (0x7f00_0000_0040 + 0x10_0000 * i as u64)
            .to_le_bytes()
            .to_vec(),
        ValueKind::ByValue => (0..arg.size)
            .map(|b| (b as u8) ^ (0xa0 + i as u8))
            .collect(),
        ValueKind::DynamicSharedPointer => Vec::new(),
        ref other => panic!("argument {i}: the corpus has no {other:?} argument"),
    }
}

/// The [`Arg`] that should produce `bytes` (typed scalars where they fit).
fn arg_for<'a>(arg: &KernelArg, bytes: &'a [u8]) -> Arg<'a> {
    match (&arg.value_kind, bytes.len()) {
        (ValueKind::GlobalBuffer, _) => Arg::ptr(u64::from_le_bytes(bytes.try_into().unwrap())),
        (ValueKind::DynamicSharedPointer, _) => Arg::local(100),
        (_, 4) => Arg::u32(u32::from_le_bytes(bytes.try_into().unwrap())),
        (_, 8) => Arg::i64(i64::from_le_bytes(bytes.try_into().unwrap())),
        _ => Arg::bytes(bytes),
    }
}

#[test]
fn every_corpus_kernel_gets_every_argument_at_its_metadata_offset() {
    let mut kernels = 0;
    let mut blocks = [0usize; 2];
    for (file, bytes) in corpus() {
        let code_object = CodeObject::parse(&bytes).unwrap_or_else(|e| panic!("{file}: {e}"));
        for symbol in code_object.kernels() {
            kernels += 1;
            let meta = symbol
                .metadata
                .as_ref()
                .expect("corpus kernels have metadata");
            let layout = KernargLayout::for_symbol(symbol)
                .unwrap_or_else(|e| panic!("{file} {}: {e}", symbol.name));
            assert_eq!(layout.size(), symbol.kernarg_size());
            // Geometry: uneven in x and y unless the kernel requires its work-group size.
            let (geometry, expect_dims) = match meta.reqd_workgroup_size {
                Some(r) => (Geometry::d3([r[0] * 3, r[1] * 2, r[2]], r), 3),
                // Init and fini kernels (amdgcn.device.init/fini) allow one work-item per
                // group: a grid of one-item groups.
                None if meta.max_flat_workgroup_size == 1 => {
                    (Geometry::d3([5, 3, 2], [1, 1, 1]), 3)
                }
                None => (Geometry::d3([200, 7, 3], [16, 4, 2]), 3),
            };
            let geometry = geometry.with_global_offset([5, 6, 7]).with_dynamic_lds(64);
            let explicit: Vec<(usize, &KernelArg)> = symbol
                .args()
                .iter()
                .enumerate()
                .filter(|(_, a)| !a.value_kind.is_hidden())
                .collect();
            let values: Vec<Vec<u8>> = explicit
                .iter()
                .enumerate()
                .map(|(i, (_, a))| bytes_for(i, a))
                .collect();
            let args: Vec<Arg<'_>> = explicit
                .iter()
                .zip(&values)
                .map(|((_, a), bytes)| arg_for(a, bytes))
                .collect();
            // Poison the buffer: every byte the builder does not write must come back zero.
            let mut segment = vec![0xcd; layout.size() as usize + 32];
            let shape = layout
                .write(&mut segment, &geometry, &args, &CONTEXT)
                .unwrap_or_else(|e| panic!("{file} {}: {e}", symbol.name));
            assert!(segment[layout.size() as usize..].iter().all(|&b| b == 0xcd));
            let segment = &segment[..layout.size() as usize];

            // Dynamic LDS: each __local area 16-aligned after static LDS, then 64 more bytes.
            let static_lds = symbol.descriptor.group_segment_fixed_size;
            let mut lds = static_lds;
            let mut covered = vec![false; segment.len()];
            for ((_, arg), expected) in explicit.iter().zip(&values) {
                let (at, size) = (arg.offset, arg.size);
                if arg.value_kind == ValueKind::DynamicSharedPointer {
                    let align = arg.pointee_align.unwrap_or(16).max(4);
                    let start = lds.next_multiple_of(align);
                    assert_eq!(read(segment, at, size), u64::from(start), "{file} local");
                    lds = start + 100;
                } else {
                    assert_eq!(
                        &segment[at as usize..(at + size) as usize],
                        &expected[..],
                        "{file} {} argument at {at}",
                        symbol.name
                    );
                }
                covered[at as usize..(at + size) as usize].fill(true);
            }
            lds += 64;
            assert_eq!(shape.group_segment_size, lds, "{file}");
            assert_eq!(shape.grid_size, geometry.grid());
            assert_eq!(u32::from(shape.dimensions), expect_dims);
            let expect = Expect {
                grid: geometry.grid(),
                group: geometry.workgroup(),
                dims: expect_dims,
                offset: [5, 6, 7],
                dynamic_lds: lds - static_lds,
            };
            // Every listed hidden argument, read at the metadata's own offset.
            for arg in symbol.args().iter().filter(|a| a.value_kind.is_hidden()) {
                assert_eq!(
                    read(segment, arg.offset, arg.size),
                    expect.value(arg.value_kind.name()),
                    "{file} {} {} at {}",
                    symbol.name,
                    arg.value_kind.name(),
                    arg.offset
                );
            }
            // The whole implicit block, from the document's table: it starts 8-aligned after
            // the explicit arguments (V5/V6), or right after them (V4).
            if symbol.implicit_args.is_some() {
                let explicit_end = explicit
                    .iter()
                    .map(|(_, a)| a.offset + a.size)
                    .max()
                    .unwrap_or(0);
                let v4 = code_object.version().number() == 4;
                let (table, start) = if v4 {
                    (V4_TABLE, explicit_end.next_multiple_of(8))
                } else {
                    (V5_TABLE, explicit_end.next_multiple_of(8))
                };
                blocks[usize::from(v4)] += 1;
                for &(kind, offset, size) in table {
                    let at = start + offset;
                    if at + size > layout.size() {
                        continue;
                    }
                    assert_eq!(
                        read(segment, at, size),
                        expect.value(kind),
                        "{file} {} unlisted {kind} at {at}",
                        symbol.name
                    );
                    covered[at as usize..(at + size) as usize].fill(true);
                }
            }
            // Everything else (padding, reserved bytes) is zero.
            for (i, (&byte, &c)) in segment.iter().zip(&covered).enumerate() {
                assert!(
                    c || byte == 0,
                    "{file} {}: byte {i} is {byte:#x}",
                    symbol.name
                );
            }
        }
    }
    // Kernels: 8 files (11 kernels) of V4, 40 files (43 kernels) per V5/V6 build of 2 targets.
    assert!(kernels >= 180, "{kernels} kernels");
    assert!(blocks[0] > 100, "V5/V6 blocks checked: {}", blocks[0]);
}

/// A hand-made kernel: explicit arguments, then hidden arguments of `layout` at `block`.
fn kernel(
    args: Vec<KernelArg>,
    implicit: Option<(ImplicitLayout, u32)>,
    size: u32,
    edit: impl FnOnce(&mut KernelMetadata, &mut KernelDescriptor),
) -> KernelSymbol {
    let mut metadata = KernelMetadata {
        name: "k".into(),
        symbol: "k.kd".into(),
        args,
        kernarg_segment_size: size,
        kernarg_segment_align: 8,
        max_flat_workgroup_size: 256,
        wavefront_size: 64,
        ..KernelMetadata::default()
    };
    let mut descriptor = KernelDescriptor {
        kernarg_size: size,
        ..KernelDescriptor::default()
    };
    edit(&mut metadata, &mut descriptor);
    KernelSymbol {
        name: "k".into(),
        descriptor_symbol: "k.kd".into(),
        descriptor_vaddr: 0x1000,
        entry_vaddr: 0x1100,
        descriptor,
        exported: true,
        metadata: Some(metadata),
        implicit_args: implicit.map(|(layout, offset)| ImplicitArgs {
            layout,
            offset,
            size: (size - offset).min(layout.block_size()),
        }),
    }
}

fn arg(name: &str, offset: u32, size: u32, kind: ValueKind) -> KernelArg {
    KernelArg {
        name: (!name.is_empty()).then(|| name.to_owned()),
        offset,
        size,
        address_space: matches!(kind, ValueKind::GlobalBuffer).then_some(AddressSpace::Global),
        value_kind: kind,
        ..KernelArg::default()
    }
}

fn hidden(kind: HiddenArg, offset: u32, size: u32) -> KernelArg {
    arg("", offset, size, ValueKind::Hidden(kind))
}

/// `(float* out, uint n, float a)` with nothing hidden.
fn saxpy_like() -> KernelSymbol {
    kernel(
        vec![
            arg("out", 0, 8, ValueKind::GlobalBuffer),
            arg("n", 8, 4, ValueKind::ByValue),
            arg("a", 12, 4, ValueKind::ByValue),
        ],
        None,
        16,
        |_, _| {},
    )
}

fn build(
    symbol: &KernelSymbol,
    geometry: Geometry,
    args: &[Arg<'_>],
) -> Result<Vec<u8>, KernargError> {
    let layout = KernargLayout::for_symbol(symbol)?;
    let mut segment = vec![0; layout.size() as usize];
    layout.write(&mut segment, &geometry, args, &CONTEXT)?;
    Ok(segment)
}

#[test]
fn wrong_count_size_and_kind_are_refused_naming_the_argument() {
    let k = saxpy_like();
    let g = Geometry::d1(100, 64);
    let ok = [Arg::ptr(0x1000), Arg::u32(100), Arg::f32(2.0)];
    let bytes = build(&k, g, &ok).unwrap();
    assert_eq!(&bytes[12..16], &2.0f32.to_le_bytes());

    let err = build(&k, g, &ok[..2]).unwrap_err();
    assert!(
        matches!(
            err,
            KernargError::ArgumentCount {
                expected: 3,
                given: 2,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "kernel `k` takes 3 explicit argument(s), 2 given"
    );

    let err = build(&k, g, &[Arg::ptr(0x1000), Arg::u64(100), Arg::f32(2.0)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "kernel `k`, argument 1 `n`: the kernel expects a 4-byte by_value scalar or aggregate, \
         got an 8-byte scalar"
    );
    let err = build(&k, g, &[Arg::u64(0x1000), Arg::u32(100), Arg::f32(2.0)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "kernel `k`, argument 0 `out`: the kernel expects an 8-byte global buffer pointer (a \
         device pointer), got an 8-byte scalar"
    );
    let err = build(&k, g, &[Arg::ptr(0x1000), Arg::ptr(100), Arg::f32(2.0)]).unwrap_err();
    assert!(
        matches!(err, KernargError::ArgumentMismatch { index: 1, .. }),
        "{err}"
    );
    let err = build(&k, g, &[Arg::ptr(0), Arg::u32(1), Arg::local(64)]).unwrap_err();
    assert!(err.to_string().contains("argument 2 `a`"), "{err}");
    // A by-value aggregate of the right size is accepted, of the wrong size refused.
    assert!(
        build(
            &k,
            g,
            &[Arg::ptr(0), Arg::bytes(&[1, 2, 3, 4]), Arg::f32(0.0)]
        )
        .is_ok()
    );
    let err = build(&k, g, &[Arg::ptr(0), Arg::bytes(&[1, 2, 3]), Arg::f32(0.0)]).unwrap_err();
    assert!(err.to_string().ends_with("got a 3-byte aggregate"), "{err}");
}

#[test]
fn bad_geometry_and_lds_are_refused() {
    let k = saxpy_like();
    let args = [Arg::ptr(0x1000), Arg::u32(100), Arg::f32(2.0)];
    let geometry_error = |g: Geometry| match build(&k, g, &args) {
        Err(KernargError::Geometry { detail, .. }) => detail,
        other => panic!("{other:?}"),
    };
    assert!(geometry_error(Geometry::d1(0, 64)).contains("grid's x size is 0"));
    assert!(geometry_error(Geometry::d2([8, 8], [8, 0])).contains("work-group's y size is 0"));
    assert!(
        geometry_error(Geometry::d3([64; 3], [32, 8, 8])).contains("hardware allows at most 1024")
    );
    assert!(
        geometry_error(Geometry::d1(1024, 512)).contains("at most 256 (.max_flat_workgroup_size)")
    );
    assert!(
        geometry_error(Geometry::d1(64, 64).with_dynamic_lds(65537)).contains("65537 bytes of LDS")
    );
    assert!(build(&k, Geometry::d1(64, 64).with_dynamic_lds(65536), &args).is_ok());

    let reqd = kernel(Vec::new(), None, 0, |m, _| {
        m.reqd_workgroup_size = Some([16, 16, 1]);
    });
    assert!(build(&reqd, Geometry::d2([32, 32], [16, 16]), &[]).is_ok());
    let err = build(&reqd, Geometry::d2([32, 32], [32, 8]), &[]).unwrap_err();
    assert!(
        err.to_string()
            .contains("requires a work-group of [16, 16, 1]"),
        "{err}"
    );

    // Too small a destination.
    let layout = KernargLayout::for_symbol(&k).unwrap();
    let err = layout
        .write(&mut [0; 15], &Geometry::d1(64, 64), &args, &CONTEXT)
        .unwrap_err();
    assert!(matches!(
        err,
        KernargError::BufferTooSmall {
            len: 15,
            needed: 16,
            ..
        }
    ));
}

#[test]
fn printf_is_refused_without_a_buffer_and_other_services_read_zero() {
    let k = kernel(
        vec![
            arg("out", 0, 8, ValueKind::GlobalBuffer),
            hidden(HiddenArg::BlockCountX, 8, 4),
            hidden(HiddenArg::PrintfBuffer, 8 + 72, 8),
            hidden(HiddenArg::HostcallBuffer, 8 + 80, 8),
            hidden(HiddenArg::HeapV1, 8 + 96, 8),
        ],
        Some((ImplicitLayout::V5, 8)),
        8 + 256,
        |_, _| {},
    );
    let layout = KernargLayout::for_symbol(&k).unwrap();
    let mut segment = vec![0xff; 264];
    let g = Geometry::d1(64, 64);
    let err = layout
        .write(&mut segment, &g, &[Arg::ptr(1)], &CONTEXT)
        .unwrap_err();
    assert_eq!(
        err,
        KernargError::Unsupported {
            kernel: "k".into(),
            index: 2,
            what: "hidden_printf_buffer".into(),
            why: "the kernel calls printf and needs a printf buffer; aqueduct provides none \
                  (build it without printf)",
        }
    );
    let with_services = LaunchContext {
        printf_buffer: Some(0xaaaa_0000),
        hostcall_buffer: Some(0xbbbb_0000),
        ..CONTEXT
    };
    layout
        .write(&mut segment, &g, &[Arg::ptr(1)], &with_services)
        .unwrap();
    assert_eq!(read(&segment, 80, 8), 0xaaaa_0000);
    assert_eq!(read(&segment, 88, 8), 0xbbbb_0000);
    assert_eq!(read(&segment, 104, 8), 0, "no heap: 0");

    // An explicit device-enqueue queue argument cannot be passed.
    let q = kernel(vec![arg("q", 0, 8, ValueKind::Queue)], None, 8, |_, _| {});
    let err = build(&q, g, &[Arg::ptr(1)]).unwrap_err();
    assert!(
        matches!(err, KernargError::Unsupported { index: 0, .. }),
        "{err}"
    );
}

#[test]
fn v4_hidden_block_gets_offsets_and_one_buffer_slot() {
    // V4 kernel: (int* p, uint n) then 56 bytes of hidden arguments at 16.
    let listed = |buffer: HiddenArg| {
        kernel(
            vec![
                arg("p", 0, 8, ValueKind::GlobalBuffer),
                arg("n", 8, 4, ValueKind::ByValue),
                hidden(HiddenArg::GlobalOffsetX, 16, 8),
                hidden(HiddenArg::GlobalOffsetY, 24, 8),
                hidden(HiddenArg::GlobalOffsetZ, 32, 8),
                hidden(buffer, 40, 8),
                hidden(HiddenArg::None, 48, 8),
                hidden(HiddenArg::None, 56, 8),
                hidden(HiddenArg::MultigridSyncArg, 64, 8),
            ],
            Some((ImplicitLayout::V4, 16)),
            72,
            |_, _| {},
        )
    };
    let g = Geometry::d3([8, 8, 8], [4, 4, 4]).with_global_offset([11, 22, 33]);
    let context = LaunchContext {
        hostcall_buffer: Some(0x4000),
        printf_buffer: Some(0x5000),
        ..CONTEXT
    };
    for (buffer, value) in [
        (HiddenArg::HostcallBuffer, 0x4000),
        (HiddenArg::PrintfBuffer, 0x5000),
    ] {
        let k = listed(buffer);
        let layout = KernargLayout::for_symbol(&k).unwrap();
        let mut segment = vec![0xee; 72];
        layout
            .write(
                &mut segment,
                &g,
                &[Arg::ptr(0x9000), Arg::u32(512)],
                &context,
            )
            .unwrap();
        let words: Vec<u64> = (0..9).map(|i| read(&segment, i * 8, 8)).collect();
        assert_eq!(
            words,
            [0x9000, 512, 11, 22, 33, value, 0, 0, 0],
            "{buffer:?}"
        );
    }
}

#[test]
fn local_arguments_are_placed_after_static_lds_in_order() {
    let k = kernel(
        vec![
            KernelArg {
                pointee_align: Some(8),
                ..arg("a", 0, 4, ValueKind::DynamicSharedPointer)
            },
            arg("b", 4, 4, ValueKind::DynamicSharedPointer),
            hidden(HiddenArg::DynamicLdsSize, 8 + 120, 4),
        ],
        Some((ImplicitLayout::V5, 8)),
        8 + 256,
        |_, d| d.group_segment_fixed_size = 6,
    );
    let layout = KernargLayout::for_symbol(&k).unwrap();
    let mut segment = vec![0; 264];
    let shape = layout
        .write(
            &mut segment,
            &Geometry::d1(64, 64).with_dynamic_lds(10),
            &[Arg::local(20), Arg::local(4)],
            &CONTEXT,
        )
        .unwrap();
    // a at align(6, 8) = 8 .. 28; b at align(28, 16) = 32 .. 36; then 10 dynamic bytes.
    assert_eq!((read(&segment, 0, 4), read(&segment, 4, 4)), (8, 32));
    assert_eq!(shape.group_segment_size, 46);
    assert_eq!(read(&segment, 128, 4), 40, "hidden_dynamic_lds_size");
}

#[test]
fn inconsistent_metadata_is_refused_once_not_per_launch() {
    let outside = kernel(
        vec![arg("n", 12, 8, ValueKind::ByValue)],
        None,
        16,
        |_, _| {},
    );
    let err = KernargLayout::for_symbol(&outside).unwrap_err();
    assert!(
        err.to_string()
            .contains("outside the 16-byte kernarg segment"),
        "{err}"
    );
    let narrow = kernel(
        vec![arg("p", 0, 4, ValueKind::GlobalBuffer)],
        None,
        8,
        |_, _| {},
    );
    assert!(KernargLayout::for_symbol(&narrow).is_err());
    // Preload of 4 dwords from dword 2 of a 16-byte segment runs past its end.
    let preload = kernel(
        vec![arg("n", 0, 4, ValueKind::ByValue)],
        None,
        16,
        |_, d| {
            d.kernarg_preload = 4 | 2 << 7;
        },
    );
    let err = KernargLayout::for_symbol(&preload).unwrap_err();
    assert!(err.to_string().contains("preloads bytes 8..24"), "{err}");
}

#[test]
fn a_preloading_kernel_reports_its_range_and_fills_the_segment_as_usual() {
    for (target, version) in [("gfx90a", "co5"), ("gfx942", "co6")] {
        let bytes = std::fs::read(bin().join(target).join(format!("preload.{version}"))).unwrap();
        let code_object = CodeObject::parse(&bytes).unwrap();
        let layout = KernargLayout::for_symbol(code_object.kernel("preload").unwrap()).unwrap();
        let range = layout.preloaded().expect("preload.cl preloads");
        // README: KD kernarg_preload length 4 dwords at offset 0.
        assert_eq!((range.offset, range.len), (0, 16));
        let mut segment = vec![0; layout.size() as usize];
        let args = [Arg::ptr(0xdead_b000), Arg::u32(1), Arg::u32(2), Arg::u32(3)];
        layout
            .write(&mut segment, &Geometry::d1(100, 64), &args, &CONTEXT)
            .unwrap();
        assert_eq!(read(&segment, 0, 8), 0xdead_b000);
        assert_eq!(read(&segment, 8, 4), 1);
    }
}

#[test]
fn a_v4_object_through_the_loader_gets_its_hidden_block_filled() {
    use aqueduct::loader::synth::{S_ENDPGM, Synth, SynthKernel};
    // V4 (EI_ABIVERSION 2): (global int*, uint) then the 56-byte V4 block, as clang-19 lays it
    // out with -mcode-object-version=4 for a kernel that needs it.
    let mut kernel = SynthKernel::new("v4", S_ENDPGM.to_vec());
    kernel.args = vec![
        (8, "global_buffer"),
        (4, "by_value"),
        (8, "hidden_global_offset_x"),
        (8, "hidden_global_offset_y"),
        (8, "hidden_global_offset_z"),
        (8, "hidden_hostcall_buffer"),
        (8, "hidden_default_queue"),
        (8, "hidden_completion_action"),
        (8, "hidden_multigrid_sync_arg"),
    ];
    let bytes = Synth {
        abi_version: 2,
        kernels: vec![kernel],
        ..Synth::default()
    }
    .build();
    let code_object = CodeObject::parse(&bytes).unwrap();
    let symbol = code_object.kernel("v4").unwrap();
    let implicit = symbol.implicit_args.expect("a V4 block");
    assert_eq!(
        (implicit.layout, implicit.offset, implicit.size),
        (ImplicitLayout::V4, 16, 56)
    );
    let layout = KernargLayout::for_symbol(symbol).unwrap();
    let mut segment = vec![0xff; layout.size() as usize];
    let context = LaunchContext {
        hostcall_buffer: Some(0x4242_0000),
        ..CONTEXT
    };
    layout
        .write(
            &mut segment,
            &Geometry::d2([64, 3], [64, 1]).with_global_offset([9, 8, 0]),
            &[Arg::ptr(0xabc0), Arg::u32(77)],
            &context,
        )
        .unwrap();
    let words: Vec<u64> = (0..9).map(|i| read(&segment, i * 8, 8)).collect();
    assert_eq!(words, [0xabc0, 77, 9, 8, 0, 0x4242_0000, 0, 0, 0]);
}

/// Counts this thread's heap allocations, to show that building a segment makes none.
mod allocations {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    thread_local! {
        static COUNT: Cell<usize> = const { Cell::new(0) };
    }

    pub struct Counting;

    // SAFETY: every call is forwarded unchanged to `System`, which upholds `GlobalAlloc`'s
    // contract; counting touches only a const-initialised thread-local `Cell` without a
    // destructor, which neither allocates nor unwinds.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            COUNT.with(|c| c.set(c.get() + 1));
            // SAFETY: the caller's `layout` obligations are passed on as they are.
            unsafe { System.alloc(layout) }
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: `ptr` came from `System.alloc` with `layout` (through `alloc` above).
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    pub fn count() -> usize {
        COUNT.with(Cell::get)
    }
}

#[global_allocator]
static ALLOCATOR: allocations::Counting = allocations::Counting;

#[test]
fn building_a_segment_does_not_allocate() {
    let path = bin().join("gfx90a/indirect_call.co5");
    let bytes = std::fs::read(path).unwrap();
    let code_object = CodeObject::parse(&bytes).unwrap();
    let layout = KernargLayout::for_symbol(code_object.kernel("indirect_call").unwrap()).unwrap();
    let mut segment = vec![0; layout.size() as usize];
    let args = [
        Arg::ptr(0x1000),
        Arg::ptr(0x2000),
        Arg::ptr(0x3000),
        Arg::ptr(0x4000),
        Arg::u32(1000),
    ];
    let geometry = Geometry::d1(1000, 64);
    let before = allocations::count();
    for _ in 0..100 {
        layout
            .write(&mut segment, &geometry, &args, &CONTEXT)
            .unwrap();
    }
    assert_eq!(allocations::count() - before, 0);
    // The counter works: an error (which names things) does allocate.
    let _ = layout.write(&mut segment, &geometry, &args[..1], &CONTEXT);
    assert!(allocations::count() > before);
}

#[test]
fn the_layout_describes_the_explicit_arguments() {
    use aqueduct::kernarg::ArgKind;
    let k = kernel(
        vec![
            arg("out", 0, 8, ValueKind::GlobalBuffer),
            arg("n", 8, 4, ValueKind::ByValue),
            arg("tmp", 12, 4, ValueKind::DynamicSharedPointer),
            hidden(HiddenArg::BlockCountX, 16, 4),
        ],
        Some((ImplicitLayout::V5, 16)),
        16 + 256,
        |_, _| {},
    );
    let layout = KernargLayout::for_symbol(&k).unwrap();
    let described: Vec<_> = layout
        .explicit_args()
        .iter()
        .map(|a| {
            (
                a.metadata_index(),
                a.name(),
                a.offset(),
                a.size(),
                a.kind().clone(),
            )
        })
        .collect();
    assert_eq!(
        described,
        [
            (
                0,
                Some("out"),
                0,
                8,
                ArgKind::Pointer("global buffer pointer")
            ),
            (1, Some("n"), 8, 4, ArgKind::ByValue),
            (2, Some("tmp"), 12, 4, ArgKind::Local { align: 16 }),
        ]
    );
    assert_eq!(
        (layout.size(), layout.align(), layout.reserved_size()),
        (272, 16, 272)
    );
}
