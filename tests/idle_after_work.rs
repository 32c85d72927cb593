//! A queue that has just run kernels goes quiet again: the simulated command processor stays
//! awake only for its short window after each packet (`SPIN_WINDOW` in
//! `sim/src/gpu/cp/processor.rs`, 100 µs), then parks, so an open device whose queues are idle
//! uses no CPU however busy they were a moment before. In a binary of its own, so that no
//! other test's work is counted.

mod support;

use std::time::Duration;

use aqueduct::kernarg::{Arg, Geometry};
use aqueduct::{MemoryLocation, QueueOptions};
use support::{code_object, device, gpu};
use test_support::cpu_time;

const WAIT: Option<Duration> = Some(Duration::from_secs(60));

#[test]
fn a_queue_that_ran_kernels_parks_again_and_uses_no_cpu_while_idle() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let queues = [0, 1].map(|_| device.create_queue(&gpu, &QueueOptions::default()).unwrap());
    let code = device
        .load_code_object(&gpu, &code_object("gfx90a", "vector_add.co5"))
        .unwrap();
    let add = code.kernel("vector_add").unwrap();
    let n = 256u32;
    let input: Vec<u32> = (0..n).collect();
    let [a, b, c] = [0, 1, 2].map(|_| {
        device
            .alloc(&gpu, MemoryLocation::Device, 4 * n as usize)
            .unwrap()
    });
    a.write(0, &input).unwrap();
    b.write(0, &input).unwrap();
    // Back-to-back launches on both queues: each processor keeps its awake window going.
    for round in 0..200 {
        let queue = &queues[round % 2];
        let args = [
            Arg::buffer(&a),
            Arg::buffer(&b),
            Arg::buffer(&c),
            Arg::u32(n),
        ];
        queue
            .launch(&add, &Geometry::d1(n, 64), &args)
            .unwrap()
            .wait(WAIT)
            .unwrap();
    }
    let sums = c.to_vec::<u32>().unwrap();
    assert!(
        sums.iter().zip(&input).all(|(s, i)| *s == 2 * i),
        "wrong sums"
    );
    // The processors park once their windows end: some 100 ms soon passes with almost no
    // CPU used by the whole process. One that kept spinning would use most of every window.
    let mut last = Duration::ZERO;
    let quiet = test_support::wait::until(Duration::from_secs(10), || {
        let before = cpu_time::of_process();
        std::thread::sleep(Duration::from_millis(100));
        last = cpu_time::of_process().checked_sub(before).unwrap();
        last < Duration::from_millis(10)
    });
    assert!(
        quiet,
        "an idle device whose queues had just run 200 kernels kept using CPU: {last:?} in the \
         last 100 ms of 10 s"
    );
}
