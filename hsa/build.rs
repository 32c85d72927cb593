//! Link the cdylib as ROCr's library: its SONAME `libhsa-runtime64.so.1`, and every exported
//! `hsa_*` function under the symbol version `ROCR_1` (what programs linked against ROCr
//! record for each symbol they bind).
//!
//! rustc hands the linker its own (anonymous) version script for a cdylib, so a version node
//! in a second script does not attach to the symbols by itself: each export also gets an
//! assembler `.symver name, name@@ROCR_1`, generated here from the `extern "C" fn hsa_*`
//! definitions under `src/` into `$OUT_DIR/symver.rs` (included by `src/exports.rs`).

use std::fs;
use std::path::Path;

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_owned());
    let out = std::env::var("OUT_DIR").unwrap_or_else(|_| ".".to_owned());
    println!("cargo:rerun-if-changed=rocr.map");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libhsa-runtime64.so.1");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={dir}/rocr.map");
    let mut names = Vec::new();
    collect(&Path::new(&dir).join("src"), &mut names);
    names.sort();
    names.dedup();
    let lines: Vec<String> = names
        .iter()
        .map(|name| format!(".symver {name}, {name}@@ROCR_1"))
        .collect();
    let code = format!(
        "/// Every export, for the layout test and the version check.\npub const EXPORTS: &[&str] = &{names:?};\ncore::arch::global_asm!({:?});\n",
        lines.join("\n")
    );
    if let Err(error) = fs::write(Path::new(&out).join("symver.rs"), code) {
        println!("cargo:warning=cannot write symver.rs: {error}");
    }
}

/// The names of `extern "C" fn hsa_*` definitions in the files under `dir`, and of the
/// `hsa_name => ...` entries of the macro tables that define families of them.
fn collect(dir: &Path, names: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, names);
        } else if path.extension().is_some_and(|e| e == "rs")
            && let Ok(text) = fs::read_to_string(&path)
        {
            for line in text.lines() {
                let line = line.trim_start();
                // An entry of a macro table that defines exports: `hsa_name => ...`.
                if line.starts_with("hsa_")
                    && let Some((name, _)) = line.split_once(" =>")
                {
                    names.push(name.to_owned());
                    continue;
                }
                if !line.starts_with("pub ") {
                    continue;
                }
                if let Some((_, rest)) = line.split_once("extern \"C\" fn hsa_") {
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        names.push(format!("hsa_{name}"));
                    }
                }
            }
        }
    }
}
