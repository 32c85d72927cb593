//! Scratch (private segment) kernels of the corpus on simulated gfx90a (MUBUF on the private
//! segment buffer) and gfx942 (architected flat scratch): private arrays, VGPR spills, calls
//! with stack frames, indirect calls with a dynamic stack.
//!
//! The checks (kernel, inputs, CPU reference) are shared with the safe-API suite: this file is
//! included by `sim/tests/shader_kernels_private.rs` (the shader core alone) and `tests/corpus.rs`
//! (through `Device::load_code_object` and `Queue::launch`), each with its own `shader_support`.

// Reference implementations use the kernels' mathematical names (a, b, x, n, ...).
#![allow(clippy::many_single_char_names)]

use crate::shader_support::{Arg, Rng, for_each_build, grid1};

#[test]
fn private_array_in_scratch() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("private_array.{v}"));
        let n = 200usize;
        let mut rng = Rng::new(1);
        let idx: Vec<u32> = (0..16 * n).map(|_| rng.next_u32()).collect();
        let bi = gpu.buffer_u32(&idx);
        let out = gpu.buffer(2 * n * 4);
        gpu.run(
            &co,
            "private_array",
            grid1(n as u32, 64),
            [64, 1, 1],
            &[Arg::Ptr(bi.va), Arg::Ptr(out.va), Arg::U32(n as u32)],
        );
        let got = out.u32s();
        for i in 0..n {
            let iu = i as u32;
            let mut p: Vec<u32> = (0..256u32)
                .map(|k| k.wrapping_mul(k).wrapping_add(iu))
                .collect();
            let mut sm: Vec<u32> = (0..8u32).map(|k| k << (iu % 8)).collect();
            let (mut s, mut t) = (0u32, 0u32);
            for k in 0..16u32 {
                let j = idx[16 * i + k as usize] & 255;
                p[j as usize] = p[j as usize].wrapping_add(k);
                s = s.wrapping_add(p[((j * 7 + k) & 255) as usize]);
                t = t.wrapping_add(sm[((j + k) & 7) as usize]);
                sm[(j & 7) as usize] ^= k;
            }
            assert_eq!(
                (got[2 * i], got[2 * i + 1]),
                (s, t),
                "{} {v} item {i}",
                gpu.dir()
            );
        }
    });
}

#[test]
fn spilled_vgprs_survive() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("spill.{v}"));
        let n = 130usize;
        let mut rng = Rng::new(2);
        let x: Vec<u32> = (0..48 * n).map(|_| rng.next_u32()).collect();
        let bx = gpu.buffer_u32(&x);
        let out = gpu.buffer(n * 4);
        gpu.run(
            &co,
            "spill",
            grid1(n as u32, 64),
            [64, 1, 1],
            &[Arg::Ptr(bx.va), Arg::Ptr(out.va), Arg::U32(n as u32)],
        );
        let got = out.u32s();
        for i in 0..n {
            let mut a: Vec<u32> = x[48 * i..48 * i + 48].to_vec();
            for r in 0..4u32 {
                for k in 0..48 {
                    a[k] = a[k]
                        .wrapping_mul(2 * r + 3)
                        .wrapping_add(a[(k + 1 + r as usize) % 48]);
                }
            }
            let want = a
                .iter()
                .enumerate()
                .fold(0u32, |acc, (k, &val)| acc ^ (val << (k % 32)));
            assert_eq!(got[i], want, "{} {v} item {i}", gpu.dir());
        }
    });
}

#[test]
fn device_calls_with_stack_frames() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("device_call.{v}"));
        let n = 150usize;
        let mut rng = Rng::new(3);
        let x: Vec<u32> = (0..n + 8).map(|_| rng.next_u32()).collect();
        let bx = gpu.buffer_u32(&x);
        let out = gpu.buffer(n * 4);
        gpu.run(
            &co,
            "device_call",
            grid1(n as u32, 64),
            [64, 1, 1],
            &[Arg::Ptr(bx.va), Arg::Ptr(out.va), Arg::U32(n as u32)],
        );
        let got = out.u32s();
        for i in 0..n {
            let a = x[i];
            let b = i as u32;
            let mix = (a ^ b.wrapping_mul(0x9e37_79b9))
                .rotate_left(5)
                .wrapping_add(b);
            let k = x[i] & 7;
            let w = &x[i..i + 8];
            let wsum = (0..8u32).fold(0u32, |s, j| s.wrapping_add(w[((j * k + 3) & 7) as usize]));
            let xorg = (0..8).fold(0u32, |s, j| s ^ (w[j] << j));
            assert_eq!(
                got[i],
                mix.wrapping_add(wsum).wrapping_add(xorg),
                "{} {v} item {i}",
                gpu.dir()
            );
        }
    });
}

#[test]
fn indirect_calls_through_a_table() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("indirect_call.{v}"));
        let n = 256usize;
        let mut rng = Rng::new(4);
        let a: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
        let b: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
        let sel: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
        let (ba, bb, bs) = (gpu.buffer_u32(&a), gpu.buffer_u32(&b), gpu.buffer_u32(&sel));
        let out = gpu.buffer(n * 4);
        gpu.run(
            &co,
            "indirect_call",
            grid1(n as u32, 64),
            [64, 1, 1],
            &[
                Arg::Ptr(ba.va),
                Arg::Ptr(bb.va),
                Arg::Ptr(bs.va),
                Arg::Ptr(out.va),
                Arg::U32(n as u32),
            ],
        );
        let got = out.u32s();
        for i in 0..n {
            let want = match sel[i] & 3 {
                0 => a[i].wrapping_add(b[i]),
                1 => a[i].wrapping_sub(b[i]),
                2 => a[i].wrapping_mul(b[i]),
                _ => a[i] ^ b[i],
            };
            assert_eq!(
                got[i],
                want,
                "{} {v} item {i} sel {}",
                gpu.dir(),
                sel[i] & 3
            );
        }
    });
}

/// FNV-1a over bytes, the hash of `stack_string`.
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(2_166_136_261u32, |h, &c| {
        (h ^ u32::from(c)).wrapping_mul(16_777_619)
    })
}

/// A string in a stack array walked by pointer in calls that are not inlined: on gfx90a the
/// strlen starts its MUBUF offset at -1 (0xFFFFFFFF) and loads with `offset:1`, which reads the
/// string only if the offset sum wraps at 32 bits as on the hardware.
#[test]
fn stack_strings_walked_by_pointer() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("stack_string.{v}"));
        let n = 130usize;
        let mut rng = Rng::new(5);
        let seed: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
        let bs = gpu.buffer_u32(&seed);
        let out = gpu.buffer(3 * n * 4);
        gpu.run(
            &co,
            "stack_string",
            grid1(n as u32, 64),
            [64, 1, 1],
            &[Arg::Ptr(bs.va), Arg::Ptr(out.va), Arg::U32(n as u32)],
        );
        let got = out.u32s();
        for i in 0..n {
            let mut x = seed[i];
            let len = 1 + x % 60;
            let text: Vec<u8> = (0..len)
                .map(|_| {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                    (32 + (x >> 16) % 95) as u8
                })
                .collect();
            let rev: Vec<u8> = text.iter().rev().copied().collect();
            assert_eq!(
                got[3 * i..3 * i + 3],
                [len, fnv1a(&text), fnv1a(&rev)],
                "{} {v} item {i}",
                gpu.dir()
            );
        }
    });
}
