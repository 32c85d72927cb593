//! The launch hot path's kernarg work: checking a launch's arguments and geometry and filling
//! the kernarg segment in place, for a kernel with 4 explicit arguments and a V5 hidden block
//! (vector_add.co5, 288 bytes) and one with 5 arguments and every hidden kind listed
//! (indirect_call.co5, 296 bytes).
//!
//! `cargo bench -p aqueduct --bench kernargs -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::path::Path;

use aqueduct::kernarg::{Arg, Geometry, KernargLayout, LaunchContext};
use aqueduct::loader::CodeObject;
use criterion::{Criterion, criterion_group, criterion_main};

fn layout(file: &str, kernel: &str) -> KernargLayout {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/kernels/bin/gfx90a")
        .join(file);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let code_object = CodeObject::parse(&bytes).expect("committed code object");
    KernargLayout::for_symbol(code_object.kernel(kernel).expect("kernel")).expect("layout")
}

fn write(c: &mut Criterion) {
    let context = LaunchContext {
        queue_address: 0x7f00_0000_0000,
        ..LaunchContext::default()
    };
    let geometry = Geometry::d1(1 << 20, 256);
    let mut group = c.benchmark_group("kernarg_write");
    for (file, kernel, args) in [
        (
            "vector_add.co5",
            "vector_add",
            vec![
                Arg::ptr(0x1000),
                Arg::ptr(0x2000),
                Arg::ptr(0x3000),
                Arg::u32(1 << 20),
            ],
        ),
        (
            "indirect_call.co5",
            "indirect_call",
            vec![
                Arg::ptr(0x1000),
                Arg::ptr(0x2000),
                Arg::ptr(0x3000),
                Arg::ptr(0x4000),
                Arg::u32(1 << 20),
            ],
        ),
    ] {
        let layout = layout(file, kernel);
        let mut segment = vec![0u8; layout.reserved_size() as usize];
        group.bench_function(kernel, |b| {
            b.iter(|| {
                layout
                    .write(
                        black_box(&mut segment),
                        black_box(&geometry),
                        black_box(&args),
                        &context,
                    )
                    .expect("valid launch")
            });
        });
    }
    group.finish();
}

criterion_group!(benches, write);
criterion_main!(benches);
