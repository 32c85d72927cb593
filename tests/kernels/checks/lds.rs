//! LDS, barriers, LDS atomics and cross-lane operations of the corpus on simulated gfx90a and
//! gfx942.
//!
//! The checks (kernel, inputs, CPU reference) are shared with the safe-API suite: this file is
//! included by `sim/tests/shader_kernels_lds.rs` (the shader core alone) and `tests/corpus.rs`
//! (through `Device::load_code_object` and `Queue::launch`), each with its own `shader_support`.

// Reference implementations use the kernels' mathematical names (a, b, x, n, ...).
#![allow(clippy::many_single_char_names)]

use crate::shader_support::{Arg, Opts, Rng, for_each_build, for_each_built};

fn random(n: usize, seed: u64) -> Vec<u32> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| rng.next_u32()).collect()
}

#[test]
fn reduce_lds_sums_each_workgroup() {
    for_each_built("reduce_lds", |gpu, v| {
        let co = gpu.load(&format!("reduce_lds.{v}"));
        let n = 1000usize;
        let x = random(n, 1);
        let bx = gpu.buffer_u32(&x);
        let groups = n.div_ceil(256);
        let partial = gpu.buffer(groups * 4);
        gpu.run(
            &co,
            "reduce_lds",
            [(groups * 256) as u32, 1, 1],
            [256, 1, 1],
            &[Arg::Ptr(bx.va), Arg::Ptr(partial.va), Arg::U32(n as u32)],
        );
        let got = partial.u32s();
        for g in 0..groups {
            let want = x[256 * g..(256 * g + 256).min(n)]
                .iter()
                .fold(0u32, |a, &b| a.wrapping_add(b));
            assert_eq!(got[g], want, "{} {v} group {g}", gpu.dir());
        }
    });
}

#[test]
fn lds_scan_prefix_sums() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("lds_scan.{v}"));
        let n = 700usize;
        let x = random(n, 2);
        let bx = gpu.buffer_u32(&x);
        let out = gpu.buffer(n * 4);
        gpu.run(
            &co,
            "lds_scan",
            [(n as u32).next_multiple_of(256), 1, 1],
            [256, 1, 1],
            &[Arg::Ptr(bx.va), Arg::Ptr(out.va), Arg::U32(n as u32)],
        );
        let got = out.u32s();
        for i in 0..n {
            let g = i / 256 * 256;
            let want = x[g..=i].iter().fold(0u32, |a, &b| a.wrapping_add(b));
            assert_eq!(got[i], want, "{} {v} {i}", gpu.dir());
        }
    });
}

#[test]
fn lds_transpose_through_a_tile() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("lds_transpose.{v}"));
        let (w, h) = (48u32, 32u32);
        let x = random((w * h) as usize, 3);
        let bx = gpu.buffer_u32(&x);
        let out = gpu.buffer((w * h) as usize * 4);
        gpu.run(
            &co,
            "lds_transpose",
            [w, h, 1],
            [16, 16, 1],
            &[Arg::Ptr(bx.va), Arg::Ptr(out.va), Arg::U32(w), Arg::U32(h)],
        );
        let got = out.u32s();
        for y in 0..h {
            for xx in 0..w {
                assert_eq!(got[(xx * h + y) as usize], x[(y * w + xx) as usize]);
            }
        }
    });
}

#[test]
fn dynamic_lds_follows_static_lds() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("dynamic_lds.{v}"));
        for wg in [64u32, 100, 256] {
            let groups = 3u32;
            let n = wg * groups;
            let x = random(n as usize, u64::from(wg));
            let bx = gpu.buffer_u32(&x);
            let out = gpu.buffer(n as usize * 4);
            gpu.run_opts(
                &co,
                "dynamic_lds",
                [n, 1, 1],
                [wg, 1, 1],
                &[Arg::Ptr(bx.va), Arg::Ptr(out.va), Arg::Lds],
                Opts {
                    dynamic_lds: 4 * wg,
                    ..Opts::default()
                },
            );
            let got = out.u32s();
            for g in 0..groups {
                for l in 0..wg {
                    let want = x[(g * wg + (wg - 1 - l)) as usize].wrapping_add(1000 + g);
                    assert_eq!(
                        got[(g * wg + l) as usize],
                        want,
                        "{} {v} wg {wg} g {g} l {l}",
                        gpu.dir()
                    );
                }
            }
        }
    });
}

#[test]
fn lds_atomics_within_a_workgroup() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("atomics_lds.{v}"));
        let groups = 4usize;
        let n = 256 * groups;
        let x = random(n, 4);
        let bx = gpu.buffer_u32(&x);
        let out = gpu.buffer(8 * groups * 4);
        let ranks = gpu.buffer(n * 4);
        let won = gpu.buffer(n * 4);
        gpu.run(
            &co,
            "atomics_lds",
            [n as u32, 1, 1],
            [256, 1, 1],
            &[
                Arg::Ptr(bx.va),
                Arg::Ptr(out.va),
                Arg::Ptr(ranks.va),
                Arg::Ptr(won.va),
            ],
        );
        let (o, r, w) = (out.u32s(), ranks.u32s(), won.u32s());
        for g in 0..groups {
            let vals = &x[256 * g..256 * g + 256];
            let want = [
                vals.iter().fold(0u32, |a, &b| a.wrapping_add(b)),
                *vals.iter().min().expect("min"),
                *vals.iter().max().expect("max"),
                vals.iter().fold(u32::MAX, |a, &b| a & b),
                vals.iter().fold(0, |a, &b| a | b),
                vals.iter().fold(0, |a, &b| a ^ b),
                256,
            ];
            assert_eq!(o[8 * g..8 * g + 7], want, "{} {v} group {g}", gpu.dir());
            let mut rk = r[256 * g..256 * g + 256].to_vec();
            rk.sort_unstable();
            assert_eq!(rk, (0..256).collect::<Vec<u32>>());
            let winners: Vec<usize> = (0..256).filter(|&l| w[256 * g + l] == 1).collect();
            assert_eq!(winners.len(), 1, "exactly one cmpxchg winner");
            assert!(w[256 * g..256 * g + 256].iter().all(|&b| b <= 1));
            assert_eq!(o[8 * g + 7], winners[0] as u32);
        }
    });
}

#[test]
fn cross_lane_operations() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("cross_lane.{v}"));
        let n = 128usize;
        let x: Vec<u32> = random(n, 5).into_iter().map(|v| v % 100_000).collect();
        let bx = gpu.buffer_u32(&x);
        let out = gpu.buffer(n * 16 * 4);
        let ballot = gpu.buffer(n * 8);
        gpu.run(
            &co,
            "cross_lane",
            [n as u32, 1, 1],
            [64, 1, 1],
            &[Arg::Ptr(bx.va), Arg::Ptr(out.va), Arg::Ptr(ballot.va)],
        );
        let (o, b) = (out.u32s(), ballot.u64s());
        // The reference of src/cross_lane.cl for the build's wave size W (64 on gfx9, 32 or
        // 64 on gfx1100): wave sums, ballots and lane numbers are per W lanes.
        let w = gpu.wave_size();
        for i in 0..n {
            let l = i % w;
            let base = i - l;
            let xj = |j: usize| x[base + j];
            let r = l - l % 16;
            let q = l - l % 4;
            let sum = (0..w).fold(0u32, |a, j| a.wrapping_add(xj(j)));
            let odd = (0..w)
                .filter(|&j| xj(j) & 1 != 0)
                .fold(0u64, |m, j| m | 1 << j);
            let want = [
                xj(0),
                xj(5),
                xj(l ^ 1),
                if l % 16 == 0 { 0xdead_beef } else { xj(l - 1) },
                if l % 16 == 15 { 0 } else { xj(l + 1) },
                xj(q + 3 - l % 4),
                xj(r + (l % 16 + 12) % 16),
                xj(r + 15 - l % 16),
                sum,
                (r..=l).fold(0u32, |a, j| a.wrapping_add(xj(j))),
                sum,
                l as u32,
                w as u32,
                xj(l ^ 1),
                odd.count_ones(),
                (0..w).map(xj).max().expect("max"),
            ];
            assert_eq!(o[16 * i..16 * i + 16], want, "{} {v} item {i}", gpu.dir());
            assert_eq!(b[i], odd, "{} {v} ballot of item {i}", gpu.dir());
        }
    });
}
