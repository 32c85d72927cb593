//! Basic kernels of the corpus on simulated gfx90a and gfx942: launch state, integer ALU,
//! global memory, grids, control flow.
//!
//! The checks (kernel, inputs, CPU reference) are shared with the safe-API suite: this file is
//! included by `sim/tests/shader_kernels_basic.rs` (the shader core alone) and `tests/corpus.rs`
//! (through `Device::load_code_object` and `Queue::launch`), each with its own `shader_support`.

// Reference implementations use the kernels' mathematical names (a, b, x, n, ...).
#![allow(clippy::many_single_char_names)]

use crate::shader_support::{Arg, for_each_build, for_each_built, grid1};

/// `empty` (every build, V4 included) over a one-item grid and a 4096-item one.
#[test]
fn empty_kernel_for_big_and_small_grids() {
    for_each_built("empty", |gpu, v| {
        let co = gpu.load(&format!("empty.{v}"));
        gpu.run(&co, "empty", [1, 1, 1], [1, 1, 1], &[]);
        gpu.run(&co, "empty", [4096, 1, 1], [256, 1, 1], &[]);
    });
}

/// `oob_store` and `oob_load` with valid pointers, the control their source describes: the
/// store writes `value + i`, the load copies it back. (Their faults are tested in each
/// suite's own error tests.)
#[test]
fn oob_kernels_round_trip_with_valid_pointers() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("oob_store.{v}"));
        let (p, out) = (gpu.buffer(64 * 4), gpu.buffer(64 * 4));
        gpu.run(
            &co,
            "oob_store",
            [64, 1, 1],
            [64, 1, 1],
            &[Arg::Ptr(p.va), Arg::U32(1000)],
        );
        gpu.run(
            &co,
            "oob_load",
            [64, 1, 1],
            [64, 1, 1],
            &[Arg::Ptr(p.va), Arg::Ptr(out.va)],
        );
        let want: Vec<u32> = (1000..1064).collect();
        assert_eq!(p.u32s(), want, "{} {v}", gpu.dir());
        assert_eq!(out.u32s(), want, "{} {v}", gpu.dir());
    });
}

/// `timing`: the clocks only move forward across the sleep loop, and the realtime counter
/// runs: it is nonzero, and across two launches with a known host delay between them it
/// advances by at least that delay and by no more than the host time both launches took (at
/// 100 MHz, the `gpu_counter_freq` MI200 and MI300 report; a counter stuck at 0, or at any
/// value, fails).
#[test]
fn timing_clocks_move_forward() {
    use std::time::{Duration, Instant};
    const TICKS_PER_SECOND: f64 = 100e6;
    const DELAY: Duration = Duration::from_millis(20);
    /// One field of every item's four.
    fn realtime(items: &[u64], field: usize) -> impl Iterator<Item = u64> + '_ {
        items.chunks(4).map(move |o| o[field])
    }
    // CLOCK_MONOTONIC_RAW (the counter's) and CLOCK_MONOTONIC (Instant's) may differ by the
    // NTP slew, at most 0.05%: 1% either way is ample.
    let ticks = |d: Duration, scale: f64| (d.as_secs_f64() * TICKS_PER_SECOND * scale) as u64;
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("timing.{v}"));
        let launch = || {
            let out = gpu.buffer(64 * 4 * 8);
            gpu.run(
                &co,
                "timing",
                [64, 1, 1],
                [64, 1, 1],
                &[Arg::Ptr(out.va), Arg::U32(4)],
            );
            out.u64s()
        };
        let started = Instant::now();
        let first = launch();
        std::thread::sleep(DELAY);
        let second = launch();
        let host = started.elapsed();
        for (i, o) in first.chunks(4).chain(second.chunks(4)).enumerate() {
            // gfx1100 reads HW_REG_SHADER_CYCLES, a 20-bit counter that wraps (at ~1 GHz,
            // every millisecond): it moved if the difference modulo 2^20 is not 0.
            let moved = if gpu.dir() == "gfx1100" {
                o[1].wrapping_sub(o[0]) & 0xf_ffff != 0
            } else {
                o[1] > o[0]
            };
            assert!(moved, "{} {v} item {i}: clock {o:?}", gpu.dir());
            assert!(o[2] != 0, "{} {v} item {i}: realtime {o:?}", gpu.dir());
            assert!(o[3] >= o[2], "{} {v} item {i}: realtime {o:?}", gpu.dir());
        }
        let first_end = realtime(&first, 3).max().unwrap();
        let second_start = realtime(&second, 2).min().unwrap();
        assert!(
            second_start >= first_end + ticks(DELAY, 0.99),
            "{} {v}: realtime {first_end} at the end of the first launch, {second_start} at \
             the start of the second, {DELAY:?} later",
            gpu.dir()
        );
        let span = realtime(&second, 3).max().unwrap() - realtime(&first, 2).min().unwrap();
        assert!(
            span <= ticks(host, 1.01) + 1,
            "{} {v}: realtime advanced {span} ticks over two launches that took {host:?}",
            gpu.dir()
        );
    });
}

#[test]
fn tiny_writes_lane_ids() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("tiny.{v}"));
        let out = gpu.buffer(64 * 4);
        gpu.run(&co, "tiny", [64, 1, 1], [64, 1, 1], &[Arg::Ptr(out.va)]);
        let expect: Vec<u32> = (0..64).map(|l| l + 42).collect();
        assert_eq!(out.u32s(), expect, "{} {v}", gpu.dir());
    });
}

#[test]
fn vector_add_matches_the_cpu() {
    for_each_built("vector_add", |gpu, v| {
        let co = gpu.load(&format!("vector_add.{v}"));
        let n = 1000u32;
        let a: Vec<u32> = (0..n).map(|i| i.wrapping_mul(2_654_435_761)).collect();
        let b: Vec<u32> = (0..n).map(|i| i ^ 0xdead_beef).collect();
        let (ba, bb) = (gpu.buffer_u32(&a), gpu.buffer_u32(&b));
        let c = gpu.buffer(n as usize * 4 + 64);
        c.fill(0xcc);
        gpu.run(
            &co,
            "vector_add",
            [n.next_multiple_of(64), 1, 1],
            [64, 1, 1],
            &[
                Arg::Ptr(ba.va),
                Arg::Ptr(bb.va),
                Arg::Ptr(c.va),
                Arg::U32(n),
            ],
        );
        let got = c.u32s();
        for i in 0..n as usize {
            assert_eq!(got[i], a[i].wrapping_add(b[i]), "{} {v}: c[{i}]", gpu.dir());
        }
        assert!(
            got[n as usize..].iter().all(|&x| x == 0xcccc_cccc),
            "c[n..] untouched"
        );
    });
}

/// Inputs with edge cases first, then pseudo-random values.
fn int_inputs(n: usize, seed: u64) -> Vec<u32> {
    let edges = [
        0u32,
        1,
        2,
        0xffff_ffff,
        0x8000_0000,
        0x7fff_ffff,
        31,
        32,
        33,
        0xfff,
        0x1_0000,
        7,
    ];
    let mut rng = crate::shader_support::Rng::new(seed);
    (0..n)
        .map(|i| edges.get(i).copied().unwrap_or_else(|| rng.next_u32()))
        .collect()
}

fn int32_reference(a: i32, b: i32) -> [i32; 28] {
    let (ua, ub) = (a as u32, b as u32);
    let s = ub & 31;
    let d = b | 1;
    let ud = ub | 1;
    [
        a.wrapping_add(b),
        a.wrapping_sub(b),
        a.wrapping_mul(b),
        ((i64::from(a) * i64::from(b)) >> 32) as i32,
        ((u64::from(ua) * u64::from(ub)) >> 32) as i32,
        a.wrapping_div(d),
        a.wrapping_rem(d),
        (ua / ud) as i32,
        (ua % ud) as i32,
        (ua << s) as i32,
        a >> s,
        (ua >> s) as i32,
        a & b,
        a | b,
        a ^ b,
        !a & b,
        ua.count_ones() as i32,
        ua.leading_zeros() as i32,
        ua.trailing_zeros() as i32,
        ((ua >> (ub & 15)) & 0xfff) as i32,
        ((ua << (20 - (ub & 15))) as i32) >> 20,
        ((ua & 0xff00_ff00) | (ub & 0x00ff_00ff)) as i32,
        a.min(b),
        a.max(b),
        ua.min(ub) as i32,
        ua.max(ub) as i32,
        ua.rotate_left(s) as i32,
        (ua.reverse_bits() ^ ua.swap_bytes()) as i32,
    ]
}

#[test]
fn int32_ops_match_the_cpu() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("int32_ops.{v}"));
        let n = 300usize;
        let a = int_inputs(n, 1);
        let mut b = int_inputs(n, 2);
        b.rotate_left(5);
        for i in 0..n {
            if a[i] == 0x8000_0000 && (b[i] | 1) == u32::MAX {
                b[i] = 3;
            }
        }
        let (ba, bb) = (gpu.buffer_u32(&a), gpu.buffer_u32(&b));
        let out = gpu.buffer(n * 28 * 4);
        gpu.run(
            &co,
            "int32_ops",
            [(n as u32).next_multiple_of(64), 1, 1],
            [64, 1, 1],
            &[
                Arg::Ptr(ba.va),
                Arg::Ptr(bb.va),
                Arg::Ptr(out.va),
                Arg::U32(n as u32),
            ],
        );
        let got = out.u32s();
        for i in 0..n {
            let want = int32_reference(a[i] as i32, b[i] as i32);
            for k in 0..28 {
                assert_eq!(
                    got[28 * i + k] as i32,
                    want[k],
                    "{} {v}: a={:#x} b={:#x} o[{k}]",
                    gpu.dir(),
                    a[i],
                    b[i]
                );
            }
        }
    });
}

fn int64_reference(a: i64, b: i64) -> [i64; 22] {
    let (ua, ub) = (a as u64, b as u64);
    let s = (ub & 63) as u32;
    let d = b | 1;
    let ud = ub | 1;
    [
        a.wrapping_add(b),
        a.wrapping_sub(b),
        a.wrapping_mul(b),
        a.wrapping_div(d),
        a.wrapping_rem(d),
        (ua / ud) as i64,
        (ua % ud) as i64,
        (ua << s) as i64,
        a >> s,
        (ua >> s) as i64,
        (a & b) ^ (a | !b),
        i64::from(ua.count_ones()),
        i64::from(ua.leading_zeros()),
        i64::from(ua.trailing_zeros()),
        a.min(b),
        a.max(b),
        ua.min(ub) as i64,
        ua.max(ub) as i64,
        i64::from(a as i32) * i64::from(b as i32),
        (u64::from(a as u32) * u64::from(b as u32)) as i64,
        ua.swap_bytes() as i64,
        ((u128::from(ua) * u128::from(ub)) >> 64) as i64,
    ]
}

#[test]
fn int64_ops_match_the_cpu() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("int64_ops.{v}"));
        let n = 200usize;
        let mut rng = crate::shader_support::Rng::new(9);
        let edges = [
            0u64,
            1,
            u64::MAX,
            1 << 63,
            i64::MAX as u64,
            63,
            64,
            0xffff_ffff,
            1 << 32,
        ];
        let a: Vec<u64> = (0..n)
            .map(|i| {
                edges
                    .get(i)
                    .copied()
                    .unwrap_or_else(|| rng.next_u64() >> (i % 40))
            })
            .collect();
        let mut b: Vec<u64> = (0..n)
            .map(|i| edges[(i * 7) % edges.len()] ^ rng.next_u64() >> (i % 50))
            .collect();
        for i in 0..n {
            if a[i] == 1 << 63 && (b[i] | 1) == u64::MAX {
                b[i] = 5;
            }
        }
        let ba = gpu.buffer(n * 8);
        ba.write_u64s(&a);
        let bb = gpu.buffer(n * 8);
        bb.write_u64s(&b);
        let out = gpu.buffer(n * 22 * 8);
        gpu.run(
            &co,
            "int64_ops",
            [(n as u32).next_multiple_of(64), 1, 1],
            [64, 1, 1],
            &[
                Arg::Ptr(ba.va),
                Arg::Ptr(bb.va),
                Arg::Ptr(out.va),
                Arg::U32(n as u32),
            ],
        );
        let got = out.u64s();
        for i in 0..n {
            let want = int64_reference(a[i] as i64, b[i] as i64);
            for k in 0..22 {
                assert_eq!(
                    got[22 * i + k] as i64,
                    want[k],
                    "{} {v}: a={:#x} b={:#x} o[{k}]",
                    gpu.dir(),
                    a[i],
                    b[i]
                );
            }
        }
    });
}

#[test]
fn multi_kernel_runs_each_kernel() {
    for_each_built("multi_kernel", |gpu, v| {
        let co = gpu.load(&format!("multi_kernel.{v}"));
        let n = 100u32;
        let out = gpu.buffer(n as usize * 4);
        gpu.run(
            &co,
            "mk_fill",
            grid1(n, 64),
            [64, 1, 1],
            &[Arg::Ptr(out.va), Arg::U32(0xabcd), Arg::U32(n)],
        );
        assert!(out.u32s().iter().all(|&x| x == 0xabcd));
        gpu.run(
            &co,
            "mk_iota",
            grid1(n, 32),
            [32, 1, 1],
            &[Arg::Ptr(out.va), Arg::U32(u32::MAX - 5), Arg::U32(n)],
        );
        let want: Vec<u32> = (0..n).map(|i| (u32::MAX - 5).wrapping_add(i)).collect();
        assert_eq!(out.u32s(), want);
        let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.37 - 11.0).collect();
        out.write_f32s(&x);
        gpu.run(
            &co,
            "mk_scale",
            grid1(n, 64),
            [64, 1, 1],
            &[Arg::Ptr(out.va), Arg::F32(1.7), Arg::U32(n)],
        );
        let got = out.u32s();
        for i in 0..n as usize {
            assert_eq!(
                got[i],
                (x[i] * 1.7).to_bits(),
                "{} {v} scale {i}",
                gpu.dir()
            );
        }
        let a = gpu.buffer(n as usize * 4);
        a.write_f32s(&x);
        let b = gpu.buffer(n as usize * 4);
        let y: Vec<f32> = (0..n).map(|i| 1.0 / (i as f32 + 0.5)).collect();
        b.write_f32s(&y);
        gpu.run(
            &co,
            "mk_vector_add_f32",
            grid1(n, 64),
            [64, 1, 1],
            &[
                Arg::Ptr(a.va),
                Arg::Ptr(b.va),
                Arg::Ptr(out.va),
                Arg::U32(n),
            ],
        );
        let got = out.u32s();
        for i in 0..n as usize {
            assert_eq!(got[i], (x[i] + y[i]).to_bits());
        }
    });
}

fn divergence_reference(x: i32, l: u32, mode: u32) -> i32 {
    let mut r = if x & 1 != 0 {
        let t = 3 * x + 1;
        if x > 100 { t - 7 } else { t + 11 }
    } else {
        let t = x >> 1;
        if (x & 6) == 2 { -t } else { t }
    };
    match x & 7 {
        0 => r += 100,
        1 => r ^= 0x55,
        3 => r *= 5,
        5 | 6 => r -= x,
        _ => r |= 0x1000,
    }
    if l % 3 == 0 {
        r = r.wrapping_add(l as i32);
    }
    if mode == 1 {
        r = !r;
    }
    r
}

#[test]
fn divergence_masks_exec_correctly() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("divergence.{v}"));
        let n = 500u32;
        let mut rng = crate::shader_support::Rng::new(5);
        let x: Vec<u32> = (0..n)
            .map(|_| ((rng.next_u32() % (1 << 21)) as i32 - (1 << 20)) as u32)
            .collect();
        let bx = gpu.buffer_u32(&x);
        let out = gpu.buffer(n as usize * 4);
        for mode in 0..2 {
            gpu.run(
                &co,
                "divergence",
                grid1(n, 64),
                [64, 1, 1],
                &[
                    Arg::Ptr(bx.va),
                    Arg::Ptr(out.va),
                    Arg::U32(n),
                    Arg::U32(mode),
                ],
            );
            let got = out.u32s();
            for i in 0..n {
                let want = divergence_reference(x[i as usize] as i32, i % 64, mode);
                assert_eq!(
                    got[i as usize] as i32,
                    want,
                    "{} {v} x={} mode {mode}",
                    gpu.dir(),
                    x[i as usize] as i32
                );
            }
        }
    });
}

fn loops_reference(x: i32) -> (i32, i32) {
    if x <= 0 {
        return (-1, -1);
    }
    let mut v = x as u32;
    let mut steps = 0;
    while v != 1 && steps < 1000 {
        v = if v & 1 != 0 {
            v.wrapping_mul(3).wrapping_add(1)
        } else {
            v >> 1
        };
        steps += 1;
    }
    let mut acc = 0;
    for j in 0..(x & 15) {
        if j == 11 {
            break;
        }
        if j & 1 != 0 {
            continue;
        }
        for k in 0..=j {
            acc += k * j;
        }
    }
    (steps, acc)
}

#[test]
fn loops_with_lane_dependent_trip_counts() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("loops.{v}"));
        let n = 256u32;
        let mut rng = crate::shader_support::Rng::new(11);
        let x: Vec<u32> = (0..n)
            .map(|i| {
                if i % 7 == 0 {
                    (-(i as i32)) as u32
                } else {
                    rng.next_u32() % 100_000
                }
            })
            .collect();
        let bx = gpu.buffer_u32(&x);
        let out = gpu.buffer(2 * n as usize * 4);
        gpu.run(
            &co,
            "loops",
            grid1(n, 64),
            [64, 1, 1],
            &[Arg::Ptr(bx.va), Arg::Ptr(out.va), Arg::U32(n)],
        );
        let got = out.u32s();
        for i in 0..n as usize {
            let (s, a) = loops_reference(x[i] as i32);
            assert_eq!(
                (got[2 * i] as i32, got[2 * i + 1] as i32),
                (s, a),
                "x={}",
                x[i] as i32
            );
        }
    });
}

#[test]
fn ptr64_address_math_and_loads() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("ptr64.{v}"));
        let n = 64u32;
        let data: Vec<u32> = (0..4096).map(|i| i * 3 + 1).collect();
        let bd = gpu.buffer_u32(&data);
        let base = bd.va + 4 * 2048;
        let addrs = gpu.buffer(n as usize * 8);
        let vals = gpu.buffer(n as usize * 4);
        for (off, stride, load) in [
            (-100i64, 3i64, 1u32),
            (1000, -7, 1),
            (-(1i64 << 40), 1 << 33, 0),
        ] {
            gpu.run(
                &co,
                "ptr64",
                [n, 1, 1],
                [64, 1, 1],
                &[
                    Arg::Ptr(base),
                    Arg::I64(off),
                    Arg::I64(stride),
                    Arg::Ptr(addrs.va),
                    Arg::Ptr(vals.va),
                    Arg::U32(n),
                    Arg::U32(load),
                ],
            );
            let a = addrs.u64s();
            let got = vals.u32s();
            for i in 0..n as usize {
                let e = off + i as i64 * stride;
                let want = base.wrapping_add(4u64.wrapping_mul(e as u64));
                assert_eq!(a[i], want, "{} {v} off {off} i {i}", gpu.dir());
                if load != 0 {
                    assert_eq!(got[i], data[(2048 + e) as usize]);
                }
            }
        }
    });
}

#[test]
fn linked_list_pointer_chasing() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("linked_list.{v}"));
        let n = 100usize;
        let nodes = gpu.buffer(16 * 2000);
        let mut rng = crate::shader_support::Rng::new(77);
        let mut heads = vec![0u64; n];
        let mut expect = vec![(0u32, 0u32); n];
        let mut next_node = 0usize;
        for i in 0..n {
            let len = if i % 10 == 0 {
                0
            } else {
                (rng.next_u32() % 30) as usize
            };
            let mut prev: Option<usize> = None;
            for _ in 0..len {
                let node = next_node;
                next_node += 1;
                let value = rng.next_u32();
                nodes.write(node * 16 + 8, &value.to_le_bytes());
                match prev {
                    None => heads[i] = nodes.va + 16 * node as u64,
                    Some(p) => nodes.write(p * 16, &(nodes.va + 16 * node as u64).to_le_bytes()),
                }
                prev = Some(node);
                expect[i].0 = expect[i].0.wrapping_add(value);
                expect[i].1 += 1;
            }
        }
        let bh = gpu.buffer(n * 8);
        bh.write_u64s(&heads);
        let sums = gpu.buffer(n * 4);
        let lens = gpu.buffer(n * 4);
        gpu.run(
            &co,
            "linked_list",
            grid1(n as u32, 64),
            [64, 1, 1],
            &[
                Arg::Ptr(bh.va),
                Arg::Ptr(sums.va),
                Arg::Ptr(lens.va),
                Arg::U32(n as u32),
            ],
        );
        let (s, l) = (sums.u32s(), lens.u32s());
        for i in 0..n {
            assert_eq!((s[i], l[i]), expect[i], "list {i}");
        }
    });
}

#[test]
fn grid_2d_and_3d_ids_with_partial_groups() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("grid_2d.{v}"));
        let (w, h, wx, wy) = (37u32, 21u32, 8u32, 4u32);
        let coords = gpu.buffer((w * h) as usize * 4);
        let meta = gpu.buffer((w * h) as usize * 4);
        gpu.run(
            &co,
            "grid_2d",
            [w, h, 1],
            [wx, wy, 1],
            &[
                Arg::Ptr(coords.va),
                Arg::Ptr(meta.va),
                Arg::U32(w),
                Arg::U32(h),
            ],
        );
        let (c, m) = (coords.u32s(), meta.u32s());
        for y in 0..h {
            for x in 0..w {
                let k = (y * w + x) as usize;
                assert_eq!(c[k], (y << 16) | x);
                assert_eq!(
                    m[k],
                    (x / wx) | (y / wy) << 8 | (x % wx) << 16 | (y % wy) << 24
                );
            }
        }
        let co = gpu.load(&format!("grid_3d.{v}"));
        let (nx, ny, nz) = (9u32, 7u32, 5u32);
        let (wx, wy, wz) = (4u32, 2u32, 3u32);
        let len = (nx * ny * nz) as usize * 4;
        let coords = gpu.buffer(len);
        let meta = gpu.buffer(len);
        gpu.run(
            &co,
            "grid_3d",
            [nx, ny, nz],
            [wx, wy, wz],
            &[
                Arg::Ptr(coords.va),
                Arg::Ptr(meta.va),
                Arg::U32(nx),
                Arg::U32(ny),
                Arg::U32(nz),
            ],
        );
        let (c, m) = (coords.u32s(), meta.u32s());
        for z in 0..nz {
            for y in 0..ny {
                for x in 0..nx {
                    let k = ((z * ny + y) * nx + x) as usize;
                    assert_eq!(c[k], x | y << 10 | z << 20);
                    let flat = (z % wz) * wy * wx + (y % wy) * wx + x % wx;
                    assert_eq!(
                        m[k],
                        (x / wx) | (y / wy) << 8 | (z / wz) << 16 | flat << 24,
                        "({x},{y},{z})"
                    );
                }
            }
        }
    });
}

#[test]
fn preloaded_kernargs_arrive_in_sgprs() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("preload.{v}"));
        let n = 150u32;
        let out = gpu.buffer(n as usize * 4);
        gpu.run(
            &co,
            "preload",
            grid1(n, 64),
            [64, 1, 1],
            &[
                Arg::Ptr(out.va),
                Arg::U32(0x1234_5677),
                Arg::U32(99),
                Arg::U32(n),
            ],
        );
        let want: Vec<u32> = (0..n)
            .map(|i| 0x1234_5677u32.wrapping_mul(i).wrapping_add(99))
            .collect();
        assert_eq!(out.u32s(), want);
    });
}

/// `.bss`: zeroed by the loader, updated by each dispatch of one load.
#[test]
fn bss_is_zeroed_and_kept_across_dispatches() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("bss.{v}"));
        let n = 1024u32;
        let out = gpu.buffer(n as usize * 4);
        for d in 1..=3u32 {
            gpu.run(
                &co,
                "bss",
                [n, 1, 1],
                [256, 1, 1],
                &[Arg::Ptr(out.va), Arg::U32(n)],
            );
            let want: Vec<u32> = (0..n).map(|i| (d - 1) * (i + 1)).collect();
            assert_eq!(out.u32s(), want, "{} {v} dispatch {d}", gpu.dir());
        }
    });
}

/// `.data`/`.rodata` contents as the kernel reads them.
#[test]
fn global_data_and_rodata_are_loaded() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("global_read.{v}"));
        let out = gpu.buffer(16 * 4);
        gpu.run(
            &co,
            "global_read",
            [64, 1, 1],
            [64, 1, 1],
            &[Arg::Ptr(out.va)],
        );
        let want = [
            1u32,
            (-2i32) as u32,
            3,
            (-4i32) as u32,
            0x7fff_ffff,
            0x8000_0000,
            0x1234_5678,
            0x0bad_f00d,
            0x1111_1111,
            0x2222_2222,
            0x3333_3333,
            0x4444_4444,
            0x5555_5555,
            0x6666_6666,
            0x7777_7777,
            0x0ead_beef,
        ];
        assert_eq!(out.u32s(), want, "{} {v}", gpu.dir());
    });
}

/// An `R_AMDGPU_RELATIVE64` pointer table, relocated by the loader.
#[test]
fn relative64_pointer_table_is_relocated() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("global_ptr.{v}"));
        let data = co.image.variable("gp_data").expect("gp_data").address;
        let n = 64u32;
        let sel: Vec<u32> = (0..n).map(|i| i * 5 + 3).collect();
        let bs = gpu.buffer_u32(&sel);
        let vals = gpu.buffer(n as usize * 4);
        let addrs = gpu.buffer(n as usize * 8);
        gpu.run(
            &co,
            "global_ptr",
            [n, 1, 1],
            [64, 1, 1],
            &[
                Arg::Ptr(bs.va),
                Arg::Ptr(vals.va),
                Arg::Ptr(addrs.va),
                Arg::U32(n),
            ],
        );
        let (vl, ad) = (vals.u32s(), addrs.u64s());
        for i in 0..n as usize {
            let k = sel[i] as u64 & 7;
            assert_eq!(vl[i], [10, 20, 30, 40, 50, 60, 70, 80][7 - k as usize]);
            assert_eq!(ad[i], data + 4 * (7 - k));
        }
    });
}
