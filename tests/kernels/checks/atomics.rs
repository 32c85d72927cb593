//! Global atomics of the corpus on simulated gfx90a and gfx942: real atomics on the backing
//! memory, across waves, workgroups and worker threads.
//!
//! The checks (kernel, inputs, CPU reference) are shared with the safe-API suite: this file is
//! included by `sim/tests/shader_kernels_atomics.rs` (the shader core alone) and `tests/corpus.rs`
//! (through `Device::load_code_object` and `Queue::launch`), each with its own `shader_support`.

// Reference implementations use the kernels' mathematical names (a, b, x, n, ...).
#![allow(clippy::many_single_char_names)]

use crate::shader_support::{Arg, Gpu, Rng, TARGETS, for_each_build};

#[test]
fn atomic_counter_hands_out_every_ticket_once() {
    for target in TARGETS.iter().copied() {
        // Four workers: workgroups really race on the counter.
        let gpu = Gpu::with_workers(target, 4);
        for &v in gpu.versions() {
            let co = gpu.load(&format!("atomic_counter.{v}"));
            let n = 5000u32;
            let c0 = 0xffff_f000u32;
            let counter = gpu.buffer_u32(&[c0]);
            let old = gpu.buffer(n as usize * 4);
            gpu.run(
                &co,
                "atomic_counter",
                [n.next_multiple_of(128), 1, 1],
                [128, 1, 1],
                &[Arg::Ptr(counter.va), Arg::Ptr(old.va), Arg::U32(n)],
            );
            assert_eq!(counter.u32s()[0], c0.wrapping_add(n));
            let mut got = old.u32s();
            got.sort_unstable();
            let mut want: Vec<u32> = (0..n).map(|i| c0.wrapping_add(i)).collect();
            want.sort_unstable();
            assert_eq!(got, want, "{} {v}", gpu.dir());
        }
    }
}

#[test]
fn atomics_global_every_operation() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("atomics_global.{v}"));
        let n = 700usize;
        let mut rng = Rng::new(3);
        let v32: Vec<i32> = (0..n).map(|_| rng.next_u32() as i32).collect();
        let v64: Vec<i64> = (0..n).map(|_| rng.next_u64() as i64).collect();
        let i32s: [i32; 12] = [5, -7, 100, -100, 1000, 3, -1, 0x10, 0x0f0f_0f0f, 42, -1, 6];
        let i64s: [i64; 7] = [1 << 40, 0, 0, 77, 9, -5, 0x100];
        let s32 = gpu.buffer(12 * 4);
        s32.write(0, zerocopy::IntoBytes::as_bytes(&i32s[..]));
        let s64 = gpu.buffer(7 * 8);
        s64.write(0, zerocopy::IntoBytes::as_bytes(&i64s[..]));
        let b32 = gpu.buffer(n * 4);
        b32.write(0, zerocopy::IntoBytes::as_bytes(&v32[..]));
        let b64 = gpu.buffer(n * 8);
        b64.write(0, zerocopy::IntoBytes::as_bytes(&v64[..]));
        let old32 = gpu.buffer(2 * n * 4);
        let old64 = gpu.buffer(n * 8);
        gpu.run(
            &co,
            "atomics_global",
            [(n as u32).next_multiple_of(64), 1, 1],
            [64, 1, 1],
            &[
                Arg::Ptr(s32.va),
                Arg::Ptr(s64.va),
                Arg::Ptr(b32.va),
                Arg::Ptr(b64.va),
                Arg::Ptr(old32.va),
                Arg::Ptr(old64.va),
                Arg::U32(n as u32),
            ],
        );
        let r32: Vec<i32> = s32.u32s().into_iter().map(|x| x as i32).collect();
        let r64: Vec<i64> = s64.u64s().into_iter().map(|x| x as i64).collect();
        let sum = v32.iter().fold(0i32, |a, &b| a.wrapping_add(b));
        assert_eq!(r32[0], i32s[0].wrapping_add(sum), "{} {v} add", gpu.dir());
        assert_eq!(r32[1], i32s[1].wrapping_sub(sum), "sub");
        assert_eq!(r32[2], i32s[2].min(*v32.iter().min().expect("min")), "smin");
        assert_eq!(r32[3], i32s[3].max(*v32.iter().max().expect("max")), "smax");
        assert_eq!(
            r32[4] as u32,
            v32.iter().fold(i32s[4] as u32, |a, &b| a.min(b as u32)),
            "umin"
        );
        assert_eq!(
            r32[5] as u32,
            v32.iter().fold(i32s[5] as u32, |a, &b| a.max(b as u32)),
            "umax"
        );
        assert_eq!(r32[6], v32.iter().fold(i32s[6], |a, &b| a & b), "and");
        assert_eq!(r32[7], v32.iter().fold(i32s[7], |a, &b| a | b), "or");
        assert_eq!(r32[8], v32.iter().fold(i32s[8], |a, &b| a ^ b), "xor");
        let o32: Vec<i32> = old32.u32s().into_iter().map(|x| x as i32).collect();
        let mut chain_in: Vec<i32> = v32.clone();
        chain_in.push(i32s[9]);
        let mut chain_out: Vec<i32> = (0..n).map(|i| o32[2 * i]).collect();
        chain_out.push(r32[9]);
        chain_in.sort_unstable();
        chain_out.sort_unstable();
        assert_eq!(chain_in, chain_out, "exchange chain");
        let winners: Vec<usize> = (0..n).filter(|&i| o32[2 * i + 1] == 1).collect();
        assert_eq!(winners.len(), 1, "one cmpxchg winner");
        assert_eq!(r32[10], winners[0] as i32);
        assert_eq!(r32[11], (i32s[11] + n as i32) % 8, "inc with wrap");
        let sum64 = v64.iter().fold(0i64, |a, &b| a.wrapping_add(b));
        assert_eq!(r64[0], i64s[0].wrapping_add(sum64), "add64");
        assert_eq!(
            r64[1],
            i64s[1].min(*v64.iter().min().expect("min")),
            "smin64"
        );
        assert_eq!(
            r64[2],
            i64s[2].max(*v64.iter().max().expect("max")),
            "smax64"
        );
        assert_eq!(
            r64[3] as u64,
            v64.iter().fold(i64s[3] as u64, |a, &b| a.max(b as u64)),
            "umax64"
        );
        let mut c_in: Vec<i64> = v64.clone();
        c_in.push(i64s[4]);
        let mut c_out: Vec<i64> = old64.u64s().into_iter().map(|x| x as i64).collect();
        c_out.push(r64[4]);
        c_in.sort_unstable();
        c_out.sort_unstable();
        assert_eq!(c_in, c_out, "exchange chain 64");
        assert_eq!(r64[5], i64s[5].wrapping_add(sum64), "cmpxchg loop");
        assert_eq!(r64[6], v64.iter().fold(i64s[6], |a, &b| a | b), "or64");
    });
}

#[test]
fn float_atomics_add_exactly() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("atomic_fadd.{v}"));
        let n = 500usize;
        let mut rng = Rng::new(8);
        let fv: Vec<f32> = (0..n)
            .map(|_| (rng.next_u32() % 4096) as f32 / 256.0 - 8.0)
            .collect();
        let dv: Vec<f64> = (0..n)
            .map(|_| (rng.next_u32() % 65536) as f64 / 256.0 - 100.0)
            .collect();
        let fsum = gpu.buffer(4);
        fsum.write_f32s(&[3.5]);
        let dsum = gpu.buffer(8);
        dsum.write_f64s(&[-2.25]);
        let bf = gpu.buffer(n * 4);
        bf.write_f32s(&fv);
        let bd = gpu.buffer(n * 8);
        bd.write_f64s(&dv);
        let groups = n.div_ceil(64);
        let wsum = gpu.buffer(groups * 4);
        gpu.run(
            &co,
            "atomic_fadd",
            [(groups * 64) as u32, 1, 1],
            [64, 1, 1],
            &[
                Arg::Ptr(fsum.va),
                Arg::Ptr(dsum.va),
                Arg::Ptr(bf.va),
                Arg::Ptr(bd.va),
                Arg::Ptr(wsum.va),
                Arg::U32(n as u32),
            ],
        );
        let f: f32 = fv.iter().sum::<f32>() + 3.5;
        assert_eq!(fsum.u32s()[0], f.to_bits(), "{} {v} f32", gpu.dir());
        let d: f64 = dv.iter().sum::<f64>() - 2.25;
        assert_eq!(dsum.u64s()[0], d.to_bits(), "f64");
        let w = wsum.u32s();
        for g in 0..groups {
            let s: f32 = fv[64 * g..(64 * g + 64).min(n)].iter().sum();
            assert_eq!(w[g], s.to_bits(), "group {g}");
        }
    });
}
