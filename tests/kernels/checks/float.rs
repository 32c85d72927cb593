//! Floating-point kernels of the corpus on simulated gfx90a and gfx942, checked bit-exactly
//! against Rust's IEEE arithmetic (or within the ISA's stated precision for the transcendental
//! approximations).
//!
//! The checks (kernel, inputs, CPU reference) are shared with the safe-API suite: this file is
//! included by `sim/tests/shader_kernels_float.rs` (the shader core alone) and `tests/corpus.rs`
//! (through `Device::load_code_object` and `Queue::launch`), each with its own `shader_support`.

// Reference implementations use the kernels' mathematical names (a, b, x, n, ...).
#![allow(clippy::many_single_char_names, clippy::float_cmp)]

use crate::shader_support::{Arg, Rng, for_each_build, for_each_built, grid1};

/// f32 to f16 bits, round to nearest even: exact widening to f64, then one rounding.
fn f32_to_f16(x: f32) -> u16 {
    f64_to_f16(f64::from(x))
}

/// f64 to f16 bits with a single round to nearest even (integer-only reference
/// implementation). Going through f32 first would round twice and can differ in the last bit.
fn f64_to_f16(x: f64) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 48) & 0x8000) as u16;
    let exp = ((b >> 52) & 0x7ff) as i32;
    let man = b & ((1 << 52) - 1);
    if exp == 0x7ff {
        return sign
            | 0x7c00
            | if man != 0 {
                0x200 | (man >> 42) as u16
            } else {
                0
            };
    }
    let sig = if exp == 0 { man } else { man | (1 << 52) };
    let e = exp.max(1) - 1023 + 15;
    // Keep 10 fraction bits (normal results) or fewer (subnormal ones).
    let shift = if e >= 1 { 42 } else { 43 - e } as u32;
    if shift >= 55 {
        // Below half the smallest subnormal: sig < 2^53 <= the rounding half.
        return sign;
    }
    let q = sig >> shift;
    let rem = sig & ((1 << shift) - 1);
    let half = 1 << (shift - 1);
    let r = q + u64::from(rem > half || (rem == half && q & 1 == 1));
    let bits = if e >= 1 {
        (((e - 1) as u64) << 10) + r
    } else {
        r
    };
    sign | bits.min(0x7c00) as u16
}

fn f16_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let e = (h >> 10) & 0x1f;
    let m = f32::from(h & 0x3ff);
    match e {
        0 => sign * m * 2f32.powi(-24),
        31 if h.trailing_zeros() >= 10 => sign * f32::INFINITY,
        31 => f32::NAN,
        _ => sign * (1.0 + m / 1024.0) * 2f32.powi(i32::from(e) - 15),
    }
}

#[test]
fn the_f16_reference_rounds_once() {
    // 1 + 2^-11 + 2^-30 is just above the f16 halfway point between 1 and 1 + 2^-10: one
    // rounding goes up. Through f32 (24-bit significand) the 2^-30 is lost, leaving an exact
    // tie that rounds to even, down: the double-rounding error this reference avoids.
    let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-30);
    assert_eq!(f64_to_f16(x), 0x3c01);
    assert_eq!(f32_to_f16(x as f32), 0x3c00);
    // Exact values, ties to even, overflow, subnormals, the smallest subnormal's halfway point.
    assert_eq!(f64_to_f16(1.0), 0x3c00);
    assert_eq!(f64_to_f16(-2.0), 0xc000);
    assert_eq!(f64_to_f16(1.0 + 3.0 * 2f64.powi(-11)), 0x3c02);
    assert_eq!(f64_to_f16(65520.0), 0x7c00);
    assert_eq!(f64_to_f16(65504.0), 0x7bff);
    assert_eq!(f64_to_f16(2f64.powi(-24)), 0x0001);
    assert_eq!(f64_to_f16(2f64.powi(-25)), 0x0000);
    assert_eq!(f64_to_f16(2f64.powi(-25) * 1.5), 0x0001);
    assert_eq!(f64_to_f16(f64::NEG_INFINITY), 0xfc00);
    assert_eq!(f64_to_f16(f64::NAN) & 0x7e00, 0x7e00);
    for h in (0u16..0x7c00).step_by(7) {
        assert_eq!(f64_to_f16(f64::from(f16_to_f32(h))), h, "{h:#x} round trip");
    }
}

fn float_inputs(n: usize, seed: u64) -> Vec<f32> {
    let special = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        1e-40,
        -3e-42,
        f32::MAX,
        -f32::MAX,
        0.5,
        1.5,
        2.5,
        -2.5,
        65504.0,
        65520.0,
        6.1e-5,
        3e-8,
        2147483520.0,
        -2147483648.0,
        4294967040.0,
        1e10,
        -1e10,
        0.1,
        1.0 / 3.0,
    ];
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            special.get(i).copied().unwrap_or_else(|| {
                let bits = rng.next_u32();
                match i % 4 {
                    0 => f32::from_bits(bits),
                    1 => (bits as i32) as f32 / 65536.0,
                    2 => f32::from_bits((bits & 0x807f_ffff) | ((127 + (bits % 40) - 20) << 23)),
                    _ => f32::from_bits(bits & 0x80ff_ffff),
                }
            })
        })
        .collect()
}

fn same_f32(got: u32, want: f32) -> bool {
    if want.is_nan() {
        f32::from_bits(got).is_nan()
    } else {
        got == want.to_bits()
    }
}

/// `valu_loop` (the kernel `aqueduct bench` measures VALU throughput with): the reference of
/// its source, each f32 operation rounded once.
fn valu_loop_reference(i: u32, iters: u32) -> u32 {
    let (mut a, mut e, mut f) = (i as f32, 1.0f32, 0.0f32);
    let (mut u, mut x, mut s) = (i, 0u32, 1u32);
    for _ in 0..iters {
        a = a.mul_add(1.000_000_1, 0.5);
        let d = a * 0.999;
        e = a.mul_add(d, e);
        f = (f + d).max(e);
        u = u.wrapping_add(i);
        x ^= u;
        s = s << 1 | (x & 1);
    }
    (a + e + f).to_bits() ^ x ^ s
}

#[test]
fn valu_loop_matches_the_cpu() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("valu_loop.{v}"));
        let (n, iters) = (256u32, 50u32);
        let out = gpu.buffer(n as usize * 4);
        gpu.run(
            &co,
            "valu_loop",
            grid1(n, 64),
            [64, 1, 1],
            &[Arg::Ptr(out.va), Arg::U32(iters)],
        );
        let got = out.u32s();
        for i in 0..n {
            assert_eq!(
                got[i as usize],
                valu_loop_reference(i, iters),
                "{} {v}: item {i}",
                gpu.dir()
            );
        }
    });
}

#[test]
fn saxpy_is_one_fma() {
    for_each_built("saxpy", |gpu, v| {
        let co = gpu.load(&format!("saxpy.{v}"));
        let n = 777u32;
        let x = float_inputs(n as usize, 3);
        let y0 = float_inputs(n as usize, 4);
        let bx = gpu.buffer(n as usize * 4);
        bx.write_f32s(&x);
        let by = gpu.buffer(n as usize * 4);
        by.write_f32s(&y0);
        let a = 1.25f32;
        gpu.run(
            &co,
            "saxpy",
            grid1(n, 256),
            [256, 1, 1],
            &[Arg::U32(n), Arg::F32(a), Arg::Ptr(bx.va), Arg::Ptr(by.va)],
        );
        let got = by.u32s();
        for i in 0..n as usize {
            assert!(
                same_f32(got[i], a.mul_add(x[i], y0[i])),
                "{} {v}: {i}",
                gpu.dir()
            );
        }
    });
}

#[test]
fn f32_ops_are_correctly_rounded() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("f32_ops.{v}"));
        let n = 640usize;
        let a = float_inputs(n, 10);
        let mut b = float_inputs(n, 11);
        b.rotate_left(3);
        let c = float_inputs(n, 12);
        let mut rng = Rng::new(13);
        let k: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
        let (ba, bb, bc) = (gpu.buffer(n * 4), gpu.buffer(n * 4), gpu.buffer(n * 4));
        ba.write_f32s(&a);
        bb.write_f32s(&b);
        bc.write_f32s(&c);
        let bk = gpu.buffer_u32(&k);
        let out = gpu.buffer(n * 24 * 4);
        gpu.run(
            &co,
            "f32_ops",
            grid1(n as u32, 64),
            [64, 1, 1],
            &[
                Arg::Ptr(ba.va),
                Arg::Ptr(bb.va),
                Arg::Ptr(bc.va),
                Arg::Ptr(bk.va),
                Arg::Ptr(out.va),
                Arg::U32(n as u32),
            ],
        );
        let got = out.u32s();
        for i in 0..n {
            let (a, b, c, k) = (a[i], b[i], c[i], k[i] as i32);
            let o = &got[24 * i..24 * i + 24];
            let ctx = format!(
                "{} {v}: a={a:e} ({:#x}) b={b:e} c={c:e}",
                gpu.dir(),
                a.to_bits()
            );
            let check = |j: usize, want: f32| {
                assert!(
                    same_f32(o[j], want),
                    "{ctx} o[{j}] = {:#x}, want {:#x}",
                    o[j],
                    want.to_bits()
                );
            };
            check(0, a + b);
            check(1, a - b);
            check(2, a * b);
            check(3, a / b);
            check(4, a.mul_add(b, c));
            if !(a == 0.0 && b == 0.0) {
                check(5, a.min(b));
                check(6, a.max(b));
            }
            check(7, a.floor());
            check(8, a.ceil());
            check(9, a.trunc());
            check(10, a.round_ties_even());
            assert_eq!(o[11], (a as i32) as u32, "{ctx} o[11]");
            assert_eq!(o[12], a as u32, "{ctx} o[12]");
            check(13, k as f32);
            check(14, (k as u32) as f32);
            if !a.is_nan() {
                assert_eq!(o[15], u32::from(f32_to_f16(a)), "{ctx} o[15]");
            }
            check(16, f16_to_f32(k as u16));
            check(17, a.sqrt());
            check(18, a.copysign(b));
            let cmp = u32::from(a < b)
                | u32::from(a <= b) << 1
                | u32::from(a == b) << 2
                | u32::from(a != b) << 3
                | u32::from(a >= b) << 4
                | u32::from(a > b) << 5
                | u32::from(a.is_nan()) << 6
                | u32::from(a.is_nan() || b.is_nan()) << 7;
            assert_eq!(o[19], cmp, "{ctx} o[19]");
            check(20, a.abs());
            check(21, -a);
            check(22, (f64::from(a) * f64::from(b)) as f32);
            check(23, 1.0 / a);
        }
    });
}

#[test]
fn f64_ops_are_correctly_rounded() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("f64_ops.{v}"));
        let n = 512usize;
        let mut rng = Rng::new(21);
        let special = [
            0.0f64,
            -0.0,
            1.0,
            -1.0,
            f64::INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
            4e-320,
            f64::MAX,
            0.5,
            2.5,
            -3.5,
            1e300,
            1e-300,
            0.1,
        ];
        let make = |rng: &mut Rng, i: usize| -> f64 {
            special.get(i).copied().unwrap_or_else(|| match i % 3 {
                0 => f64::from_bits(rng.next_u64()),
                1 => (rng.next_u64() as i64) as f64 / 4096.0,
                _ => f64::from_bits(
                    (rng.next_u64() & 0x800f_ffff_ffff_ffff)
                        | ((1023 + rng.next_u64() % 80 - 40) << 52),
                ),
            })
        };
        let a: Vec<f64> = (0..n).map(|i| make(&mut rng, i)).collect();
        let b: Vec<f64> = (0..n).map(|i| make(&mut rng, (i * 7 + 3) % n)).collect();
        let c: Vec<f64> = (0..n).map(|i| make(&mut rng, n + i)).collect();
        let k: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
        let l: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
        let (ba, bb, bc) = (gpu.buffer(n * 8), gpu.buffer(n * 8), gpu.buffer(n * 8));
        ba.write_f64s(&a);
        bb.write_f64s(&b);
        bc.write_f64s(&c);
        let bk = gpu.buffer_u32(&k);
        let bl = gpu.buffer(n * 8);
        bl.write_u64s(&l);
        let out = gpu.buffer(n * 17 * 8);
        gpu.run(
            &co,
            "f64_ops",
            grid1(n as u32, 64),
            [64, 1, 1],
            &[
                Arg::Ptr(ba.va),
                Arg::Ptr(bb.va),
                Arg::Ptr(bc.va),
                Arg::Ptr(bk.va),
                Arg::Ptr(bl.va),
                Arg::Ptr(out.va),
                Arg::U32(n as u32),
            ],
        );
        let got = out.u64s();
        for i in 0..n {
            let (a, b, c) = (a[i], b[i], c[i]);
            let o = &got[17 * i..17 * i + 17];
            let ctx = format!("{} {v}: a={a:e} b={b:e} c={c:e}", gpu.dir());
            let check = |j: usize, want: f64| {
                let ok = if want.is_nan() {
                    f64::from_bits(o[j]).is_nan()
                } else {
                    o[j] == want.to_bits()
                };
                assert!(
                    ok,
                    "{ctx} o[{j}] = {:e}, want {want:e}",
                    f64::from_bits(o[j])
                );
            };
            check(0, a + b);
            check(1, a - b);
            check(2, a * b);
            check(3, a / b);
            check(4, a.mul_add(b, c));
            check(5, a.sqrt());
            if !(a == 0.0 && b == 0.0) {
                check(6, a.min(b));
                check(7, a.max(b));
            }
            check(8, a.floor());
            check(9, a.trunc());
            check(10, a.round_ties_even());
            check(11, f64::from(k[i] as i32));
            assert_eq!(o[12], u64::from((a as i32) as u32), "{ctx} o[12]");
            let f = a as f32;
            assert!(
                if f.is_nan() {
                    f32::from_bits(o[13] as u32).is_nan()
                } else {
                    o[13] == u64::from(f.to_bits())
                },
                "{ctx} o[13]"
            );
            check(14, f64::from(f32::from_bits(k[i])));
            check(15, l[i] as i64 as f64);
            if a.abs() < 9.0e18 {
                assert_eq!(o[16], (a as i64) as u64, "{ctx} o[16]");
            }
        }
    });
}

#[test]
fn f32_math_builtins_within_isa_precision() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("f32_math.{v}"));
        let n = 256usize;
        let mut rng = Rng::new(31);
        let x: Vec<f32> = (0..n)
            .map(|i| match i % 3 {
                0 => (rng.next_u32() % 2_000_000) as f32 / 2000.0 + 0.001,
                1 => (rng.next_u32() % 2000) as f32 / 1000.0 - 1.0,
                _ => f32::from_bits(
                    (rng.next_u32() & 0x007f_ffff) | ((127 + (rng.next_u32() % 60) - 30) << 23),
                ),
            })
            .collect();
        let k: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
        let bx = gpu.buffer(n * 4);
        bx.write_f32s(&x);
        let bk = gpu.buffer_u32(&k);
        let out = gpu.buffer(n * 12 * 4);
        gpu.run(
            &co,
            "f32_math",
            grid1(n as u32, 64),
            [64, 1, 1],
            &[
                Arg::Ptr(bx.va),
                Arg::Ptr(bk.va),
                Arg::Ptr(out.va),
                Arg::U32(n as u32),
            ],
        );
        let got = out.u32s();
        let ulps = |g: u32, want: f64| -> u64 {
            let w = want as f32;
            u64::from((g as i32).abs_diff(w.to_bits() as i32))
        };
        for i in 0..n {
            let xv = x[i];
            let xd = f64::from(xv);
            let o = &got[12 * i..12 * i + 12];
            let ctx = format!("{} {v}: x={xv:e}", gpu.dir());
            if xv > 0.0 {
                assert!(ulps(o[0], 1.0 / xd) <= 1, "{ctx} rcp");
                assert!(ulps(o[1], 1.0 / xd.sqrt()) <= 1, "{ctx} rsq");
                assert!(ulps(o[2], xd.sqrt()) <= 1, "{ctx} sqrt");
                assert!(ulps(o[4], xd.log2()) <= 1, "{ctx} log");
                assert!(ulps(o[11], 1.0) <= 2, "{ctx} x*rcp(x)");
            }
            if xv.abs() < 64.0 {
                assert!(ulps(o[3], xd.exp2()) <= 1, "{ctx} exp");
            }
            if xv.abs() <= 1.0 {
                let two_pi = std::f64::consts::TAU;
                assert!(
                    (f64::from(f32::from_bits(o[5])) - (two_pi * xd).sin()).abs() <= 2f64.powi(-20),
                    "{ctx} sin"
                );
                assert!(
                    (f64::from(f32::from_bits(o[6])) - (two_pi * xd).cos()).abs() <= 2f64.powi(-20),
                    "{ctx} cos"
                );
            }
            if xv.abs() < 1048576.0 {
                let fr = (xv - xv.floor()).min(f32::from_bits(0x3f7f_ffff));
                assert_eq!(o[7], fr.to_bits(), "{ctx} fract");
            }
            let e = (k[i] & 63) as i32 - 32;
            assert_eq!(
                o[8],
                ((xd * 2f64.powi(e)) as f32).to_bits(),
                "{ctx} ldexp {e}"
            );
            if xv != 0.0 && xv.is_finite() {
                let exp = xd.abs().log2().floor() as i32 + 1;
                let mant = xd / 2f64.powi(exp);
                assert_eq!(o[9], (mant as f32).to_bits(), "{ctx} frexp mant");
                assert_eq!(o[10], (exp as f32).to_bits(), "{ctx} frexp exp");
            }
        }
    });
}

#[test]
fn f16_packed_math() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("f16_packed.{v}"));
        let n = 300usize;
        let mut rng = Rng::new(41);
        // Halves with |x| in [2^-8, 2^8] or zero, so the fma reference is exact.
        let mut h = || -> u16 {
            if rng.next_u32() % 16 == 0 {
                return 0;
            }
            let e = 15 - 8 + (rng.next_u32() % 16) as u16;
            ((rng.next_u32() as u16) & 0x83ff) | e << 10
        };
        let mut pack = || -> Vec<u32> {
            (0..n)
                .map(|_| u32::from(h()) | u32::from(h()) << 16)
                .collect()
        };
        let (a, b, c) = (pack(), pack(), pack());
        let mut rng2 = Rng::new(43);
        let ia: Vec<u32> = (0..n).map(|_| rng2.next_u32()).collect();
        let ib: Vec<u32> = (0..n).map(|_| rng2.next_u32()).collect();
        let bufs: Vec<_> = [&a, &b, &c, &ia, &ib]
            .iter()
            .map(|d| gpu.buffer_u32(d))
            .collect();
        let out = gpu.buffer(n * 6 * 4);
        let iout = gpu.buffer(n * 4 * 4);
        let mut args: Vec<Arg> = bufs.iter().map(|b| Arg::Ptr(b.va)).collect();
        args.extend([Arg::Ptr(out.va), Arg::Ptr(iout.va), Arg::U32(n as u32)]);
        gpu.run(&co, "f16_packed", grid1(n as u32, 64), [64, 1, 1], &args);
        let (o, q) = (out.u32s(), iout.u32s());
        let half = |v: u32, j: u32| (v >> (16 * j)) as u16;
        // One rounding from the exact f64 result (through f32 would round twice).
        let to = f64_to_f16;
        for i in 0..n {
            for j in 0..2 {
                let (x, y, z) = (
                    f64::from(f16_to_f32(half(a[i], j))),
                    f64::from(f16_to_f32(half(b[i], j))),
                    f64::from(f16_to_f32(half(c[i], j))),
                );
                let want = [
                    to(x + y),
                    to(x * y),
                    to(x.mul_add(y, z)),
                    to(x.min(y)),
                    to(x.max(y)),
                    to(x - y),
                ];
                for (k, w) in want.iter().enumerate() {
                    let g = half(o[6 * i + k], j);
                    assert_eq!(
                        g,
                        *w,
                        "{} {v}: i {i} half {j} o[{k}] ({x}, {y}, {z})",
                        gpu.dir()
                    );
                }
                let (p, r) = (half(ia[i], j), half(ib[i], j));
                let qw = [
                    p.wrapping_add(r),
                    p.wrapping_sub(r),
                    p.wrapping_mul(r),
                    p << (r & 15),
                ];
                for (k, w) in qw.iter().enumerate() {
                    assert_eq!(half(q[4 * i + k], j), *w, "{} {v}: q[{k}]", gpu.dir());
                }
            }
        }
    });
}
