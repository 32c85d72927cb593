//! Loader throughput: parse + validate + place + relocate, in bytes of code object per second,
//! next to a plain copy of the same bytes (the physical limit); and the work `aqueduct inspect`
//! does on a multi-megabyte fat binary with hundreds of kernels.
//!
//! `cargo bench -p amdgpu-loader --bench load`

use std::hint::black_box;
use std::path::Path;

use amdgpu_loader::synth::{fat_binary, many_kernels};
use amdgpu_loader::{CodeObject, FatBinary};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const BASE: u64 = 0x7f00_0000_0000;

fn committed(dir: &str) -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/kernels/bin")
        .join(dir);
    // The README's figures name this corpus: a missing one is an error, not a skipped row.
    let mut files: Vec<_> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e} (the test kernels are committed)", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension()
                .is_some_and(|e| matches!(e.to_str(), Some("co4" | "co5" | "co6")))
        })
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect()
}

fn load_throughput(c: &mut Criterion) {
    let corpus = committed("gfx90a");
    let inputs: Vec<(String, Vec<Vec<u8>>)> = vec![
        (
            format!("committed gfx90a kernels ({} objects)", corpus.len()),
            corpus.into_iter().map(|(_, b)| b).collect(),
        ),
        (
            "synthetic 300 kernels x 8 KiB".into(),
            vec![many_kernels(300, 8192, 1024, 0x53f)],
        ),
    ];
    for (name, objects) in inputs {
        let bytes: usize = objects.iter().map(Vec::len).sum();
        let parsed: Vec<CodeObject<'_>> = objects
            .iter()
            .map(|o| CodeObject::parse(o).unwrap())
            .collect();
        let externals = |_: &str| Some(0x1000_u64);
        let mut dests: Vec<Vec<u8>> = parsed
            .iter()
            .map(|co| vec![0u8; co.image_size() as usize])
            .collect();
        let mut group = c.benchmark_group(format!("load/{name}"));
        group.throughput(Throughput::Bytes(bytes as u64));
        group.bench_function("parse+validate+place+relocate", |b| {
            b.iter(|| {
                for (object, dest) in objects.iter().zip(dests.iter_mut()) {
                    let co = CodeObject::parse(black_box(object)).unwrap();
                    black_box(co.load(dest, BASE, &externals).unwrap());
                }
            });
        });
        group.bench_function("place+relocate (parsed once)", |b| {
            b.iter(|| {
                for (co, dest) in parsed.iter().zip(dests.iter_mut()) {
                    black_box(co.load(dest, BASE, &externals).unwrap());
                }
            });
        });
        let mut copies: Vec<Vec<u8>> = objects.iter().map(|o| vec![0u8; o.len()]).collect();
        group.bench_function("memcpy of the same bytes", |b| {
            b.iter(|| {
                for (object, copy) in objects.iter().zip(copies.iter_mut()) {
                    copy.copy_from_slice(black_box(object));
                    black_box(&copy);
                }
            });
        });
        group.finish();
    }
}

/// What `aqueduct inspect` does before printing: open the fat binary and validate every code
/// object in it.
fn inspect_fat_binary(c: &mut Criterion) {
    let fat = fat_binary(300, 2048);
    let mut group = c.benchmark_group("inspect");
    group.throughput(Throughput::Bytes(fat.len() as u64));
    group.bench_function(
        format!("fat binary {} MiB, 3 x 300 kernels", fat.len() >> 20),
        |b| {
            b.iter(|| {
                let fat = FatBinary::parse(black_box(&fat)).unwrap();
                let mut kernels = 0;
                for entry in fat.code_objects() {
                    kernels += CodeObject::parse(&entry.bytes).unwrap().kernels().len();
                }
                assert_eq!(kernels, 900);
            });
        },
    );
    group.finish();
}

criterion_group!(benches, load_throughput, inspect_fat_binary);
criterion_main!(benches);
