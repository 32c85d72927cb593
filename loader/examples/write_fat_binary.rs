//! Write a synthetic HIP-style fat binary (an offload bundle of three code objects with
//! `KERNELS` kernels each) to `PATH`, for timing `aqueduct inspect`:
//!
//! `cargo run --release -p amdgpu-loader --example write_fat_binary -- PATH [KERNELS] [CODE_BYTES]`

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: write_fat_binary PATH [KERNELS] [CODE_BYTES]");
        std::process::exit(2);
    };
    // A bad number is an error: silently using the default would mislabel the figures.
    let mut number = |default: usize, what: &str| match args.next() {
        None => default,
        Some(s) => s.parse().unwrap_or_else(|_| {
            eprintln!("write_fat_binary: {what} must be a number, not `{s}`");
            std::process::exit(2);
        }),
    };
    let kernels = number(300, "KERNELS");
    let code = number(2048, "CODE_BYTES");
    let bytes = amdgpu_loader::synth::fat_binary(kernels, code);
    if let Err(e) = std::fs::write(&path, &bytes) {
        eprintln!("cannot write {path}: {e}");
        std::process::exit(1);
    }
    println!(
        "{path}: {} bytes, 3 code objects x {kernels} kernels",
        bytes.len()
    );
}
