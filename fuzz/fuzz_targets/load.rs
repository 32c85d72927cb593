//! Fuzz target: parse, place and relocate whatever bytes come in, as a code object and as a fat
//! binary. Any panic (including an arithmetic overflow: the profile keeps overflow checks on) is
//! a bug; errors are the expected outcome for almost every input.
#![no_main]

use amdgpu_loader::{CodeObject, FatBinary};

/// Images larger than this are parsed but not placed, to keep the fuzzer's memory bounded.
const MAX_PLACED: u64 = 16 << 20;

fn exercise(bytes: &[u8]) {
    let Ok(co) = CodeObject::parse(bytes) else {
        return;
    };
    for k in co.kernels() {
        let _ = (k.kernarg_size(), k.kernarg_align(), k.preload_entry_vaddr());
        let _ = k.descriptor.user_sgprs().count();
    }
    for sym in co.dynamic_symbols() {
        let _ = co.hash_lookup(sym.name);
    }
    if co.image_size() > MAX_PLACED {
        return;
    }
    let mut dest = vec![0u8; co.image_size() as usize];
    // Every undefined symbol resolves, so that the relocation arithmetic runs too.
    let everything = |name: &str| Some(0x1000 + name.len() as u64);
    for base in [0, co.image_align(), u64::MAX - co.image_size() - co.image_align()] {
        let base = base & !(co.image_align() - 1);
        if let Ok(image) = co.load(&mut dest, base, &everything) {
            for k in image.kernels() {
                let _ = image.kernel(k.descriptor_symbol);
            }
            let _ = image.exports().count();
        }
    }
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    exercise(data);
    if let Ok(fat) = FatBinary::parse(data) {
        for entry in fat.code_objects() {
            exercise(&entry.bytes);
        }
    }
});
