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
    let kernels = args.next().map_or(Ok(300), |s| s.parse()).unwrap_or(300);
    let code = args.next().map_or(Ok(2048), |s| s.parse()).unwrap_or(2048);
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
