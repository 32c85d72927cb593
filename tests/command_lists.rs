//! Recorded command lists (`Queue::record`): a replayed list gives the same results as the
//! same launches issued one by one (an accumulating chain of corpus kernels, checked against
//! the CPU), `set_arg` changes values for later replays, external signals hold a list back,
//! and lists that do not fit or values that do not fit are refused.

// The chain's buffers use the kernels' mathematical names (x, y, w, n, ...).
#![allow(clippy::many_single_char_names)]

mod support;

use std::time::Duration;

use aqueduct::kernarg::{Arg, Geometry};
use aqueduct::{
    Buffer, Device, ErrorKind, Executable, GpuAgent, Kernel, MemoryLocation, MemoryOrder,
    QueueOptions,
};
use support::{code_object, device, gpu};

const WAIT: Option<Duration> = Some(Duration::from_secs(60));

fn kernel(device: &Device, gpu: &GpuAgent, file: &str, name: &str) -> (Executable, Kernel) {
    let executable = device
        .load_code_object(gpu, &code_object("gfx90a", file))
        .unwrap();
    let kernel = executable.kernel(name).unwrap();
    (executable, kernel)
}

fn filled<T: zerocopy::IntoBytes + zerocopy::Immutable + Copy>(
    device: &Device,
    gpu: &GpuAgent,
    values: &[T],
) -> Buffer {
    let buffer = device
        .alloc(gpu, MemoryLocation::Device, size_of_val(values).max(4))
        .unwrap();
    buffer.write(0, values).unwrap();
    buffer
}

/// One step of the chain: x = x + y (vector_add in place), then y = 0.5 * x + y (saxpy),
/// dependent on each other through the barrier bit.
fn cpu_step(x: &mut [u32], y: &mut [f32], xf: &mut [f32]) {
    for (i, v) in x.iter_mut().enumerate() {
        *v = v.wrapping_add(i as u32);
    }
    for (v, w) in y.iter_mut().zip(xf.iter_mut()) {
        *v = 0.5f32.mul_add(*w, *v);
        *w = *v;
    }
}

/// x += idx; y = 0.5 * w + y; w = 0; w = y (saxpy with a = -1 on w itself, then a = 1).
fn steps<'a>(
    add: &'a Kernel,
    saxpy: &'a Kernel,
    n: u32,
    [x, i, y, w]: [&'a Buffer; 4],
) -> Vec<(&'a Kernel, Vec<Arg<'a>>)> {
    vec![
        (
            add,
            vec![Arg::buffer(x), Arg::buffer(i), Arg::buffer(x), Arg::u32(n)],
        ),
        (
            saxpy,
            vec![Arg::u32(n), Arg::f32(0.5), Arg::buffer(w), Arg::buffer(y)],
        ),
        (
            saxpy,
            vec![Arg::u32(n), Arg::f32(-1.0), Arg::buffer(w), Arg::buffer(w)],
        ),
        (
            saxpy,
            vec![Arg::u32(n), Arg::f32(1.0), Arg::buffer(y), Arg::buffer(w)],
        ),
    ]
}

/// A list of four launches over two kernels, with barriers, replayed 12 times: the same
/// results as the same four launches issued one by one 12 times, and as the CPU.
#[test]
fn replays_match_launches_one_by_one() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let (_add_code, add) = kernel(&device, &gpu, "vector_add.co5", "vector_add");
    let (_saxpy_code, saxpy) = kernel(&device, &gpu, "saxpy.co5", "saxpy");
    let n = 512u32;
    let idx: Vec<u32> = (0..n).collect();
    let start_y: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
    let make = || {
        (
            filled(&device, &gpu, &vec![7u32; n as usize]),
            filled(&device, &gpu, &idx),
            filled(&device, &gpu, &start_y),
            filled(&device, &gpu, &start_y),
        )
    };
    let steps = |x, i, y, w| steps(&add, &saxpy, n, [x, i, y, w]);
    let geometry = Geometry::d1(n, 64);
    let replays = 12;

    let (x1, i1, y1, w1) = make();
    let mut list = queue.record();
    for (kernel, args) in steps(&x1, &i1, &y1, &w1) {
        list.barrier();
        list.launch(kernel, &geometry, &args).unwrap();
    }
    let mut list = list.in_flight(2).finish().unwrap();
    assert_eq!(list.packets(), 5);
    let mut last = None;
    for _ in 0..replays {
        last = Some(list.replay().unwrap());
    }
    list.wait(last.unwrap(), WAIT).unwrap();
    list.finish(WAIT).unwrap();

    let (x2, i2, y2, w2) = make();
    for _ in 0..replays {
        for (kernel, args) in steps(&x2, &i2, &y2, &w2) {
            queue
                .launch_with(
                    kernel,
                    &geometry,
                    &args,
                    &aqueduct::LaunchOptions {
                        barrier: true,
                        ..Default::default()
                    },
                )
                .unwrap();
        }
    }
    queue.finish(WAIT).unwrap();

    let (mut x, mut y, mut w) = (vec![7u32; n as usize], start_y.clone(), start_y.clone());
    for _ in 0..replays {
        cpu_step(&mut x, &mut y, &mut w);
    }
    assert_eq!(x1.to_vec::<u32>().unwrap(), x);
    assert_eq!(x2.to_vec::<u32>().unwrap(), x);
    let bits = |b: &Buffer| -> Vec<u32> {
        b.to_vec::<f32>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect()
    };
    let cpu_bits: Vec<u32> = y.iter().map(|v| v.to_bits()).collect();
    assert_eq!(bits(&y1), bits(&y2));
    assert_eq!(bits(&y1), cpu_bits);
}

/// `set_arg` changes a pointer and a scalar for later replays; a replay waits on a signal
/// recorded with `wait_for`; wrong kinds and a list longer than the ring are refused.
#[test]
fn set_arg_wait_for_and_refusals() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let queue = device
        .create_queue(
            &gpu,
            &QueueOptions {
                packets: 64,
                ..QueueOptions::default()
            },
        )
        .unwrap();
    let (_code, add) = kernel(&device, &gpu, "vector_add.co5", "vector_add");
    let n = 128u32;
    let ones = filled(&device, &gpu, &vec![1u32; n as usize]);
    let a = filled(&device, &gpu, &vec![0u32; n as usize]);
    let b = filled(&device, &gpu, &vec![100u32; n as usize]);
    let gate = device.signal(1).unwrap();
    let mut list = queue.record();
    list.wait_for(&[&gate]).unwrap();
    let step = list
        .launch(
            &add,
            &Geometry::d1(n, 64),
            &[
                Arg::buffer(&a),
                Arg::buffer(&ones),
                Arg::buffer(&a),
                Arg::u32(n),
            ],
        )
        .unwrap();
    let mut list = list.finish().unwrap();
    let first = list.replay().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        !list.is_complete(first).unwrap(),
        "the list ran past its wait"
    );
    gate.store(0, MemoryOrder::Release).unwrap();
    list.wait(first, WAIT).unwrap();
    assert!(a.to_vec::<u32>().unwrap().iter().all(|&v| v == 1));
    // Now b += ones over the first half only.
    list.set_arg(step, 0, &Arg::buffer(&b)).unwrap();
    list.set_arg(step, 2, &Arg::buffer(&b)).unwrap();
    list.set_arg(step, 3, &Arg::u32(n / 2)).unwrap();
    for _ in 0..3 {
        list.replay().unwrap();
    }
    list.finish(WAIT).unwrap();
    let b_now = b.to_vec::<u32>().unwrap();
    assert!(
        b_now[..n as usize / 2].iter().all(|&v| v == 103),
        "{b_now:?}"
    );
    assert!(
        b_now[n as usize / 2..].iter().all(|&v| v == 100),
        "{b_now:?}"
    );
    assert!(a.to_vec::<u32>().unwrap().iter().all(|&v| v == 1));

    let error = list.set_arg(step, 3, &Arg::u64(1)).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidArgument, "{error}");
    assert!(error.to_string().contains("argument 3"), "{error}");
    let error = list.set_arg(step, 0, &Arg::u32(1)).unwrap_err();
    assert!(error.to_string().contains("argument 0"), "{error}");

    let mut long = queue.record();
    for _ in 0..64 {
        long.launch(
            &add,
            &Geometry::d1(n, 64),
            &[
                Arg::buffer(&a),
                Arg::buffer(&ones),
                Arg::buffer(&a),
                Arg::u32(n),
            ],
        )
        .unwrap();
    }
    let error = long.finish().unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidArgument, "{error}");
    let error = queue
        .record()
        .launch(&add, &Geometry::d1(n, 64), &[Arg::buffer(&a)])
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("takes 4 explicit argument(s), 1 given"),
        "{error}"
    );
}
