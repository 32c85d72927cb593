//! `Queue::prepare` and `PreparedLaunch::issue`: a prepared launch refuses what
//! `Queue::launch` refuses (wrong kinds, sizes, counts or geometry at preparation, values
//! that do not fit the prepared kinds at issue, with the same messages), gives the same
//! results over many issues with new values (more issues than kernarg segments, so segments
//! are recycled), reports a full ring and busy segments by deadline, keeps typed buffers
//! alive, and survives being dropped with launches in flight and a shutdown.
//! The corpus kernels through prepared launches are in `tests/corpus_prepared.rs`.

mod support;

use std::time::{Duration, Instant};

use aqueduct::kernarg::{Arg, Geometry};
use aqueduct::{
    Buffer, Condition, Device, ErrorKind, Executable, GpuAgent, Kernel, MemoryLocation,
    MemoryOrder, PrepareOptions, Queue, QueueOptions,
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

fn filled(device: &Device, gpu: &GpuAgent, values: &[u32]) -> Buffer {
    let buffer = device
        .alloc(gpu, MemoryLocation::Device, 4 * values.len().max(1))
        .unwrap();
    buffer.write(0, values).unwrap();
    buffer
}

/// Wrong counts, kinds, sizes and geometry: preparing fails with the very error
/// `Queue::launch` gives for the same arguments, and nothing is published.
#[test]
fn preparation_refuses_what_launch_refuses() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let (_code, add) = kernel(&device, &gpu, "vector_add.co5", "vector_add");
    let (_lds_code, lds) = kernel(&device, &gpu, "dynamic_lds.co5", "dynamic_lds");
    let p = Arg::ptr(0x1000);
    let one = Geometry::d1(64, 64);
    let cases: [(&Kernel, Geometry, &[Arg<'_>]); 8] = [
        (&add, one, &[p, p, p]),
        (&add, one, &[p, p, p, Arg::u64(7)]),
        (&add, one, &[p, p, Arg::u32(1), Arg::u32(7)]),
        (&add, one, &[p, p, p, p]),
        (&add, Geometry::d1(64, 2048), &[p, p, p, Arg::u32(7)]),
        (&add, Geometry::d1(0, 64), &[p, p, p, Arg::u32(7)]),
        (&lds, one, &[p, p, Arg::u32(4)]),
        (&lds, one, &[p, p, Arg::local(1 << 20)]),
    ];
    let before = queue.write_index().unwrap();
    for (kernel, geometry, args) in cases {
        let launched = queue.launch(kernel, &geometry, args).unwrap_err();
        let prepared = queue.prepare(kernel, &geometry, args).unwrap_err();
        assert_eq!(prepared.to_string(), launched.to_string());
        assert_eq!(prepared.kind(), launched.kind(), "{prepared}");
        assert_eq!(queue.write_index().unwrap(), before, "{prepared}");
    }
    // A queue of 64 packets cannot have 128 launches in flight.
    let small = device
        .create_queue(
            &gpu,
            &QueueOptions {
                packets: 64,
                ..QueueOptions::default()
            },
        )
        .unwrap();
    let error = small
        .prepare_with(
            &add,
            &one,
            &[p, p, p, Arg::u32(1)],
            &PrepareOptions {
                in_flight: 128,
                ..PrepareOptions::default()
            },
        )
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidArgument, "{error}");
}

/// Values that do not fit the prepared kinds: the error `Queue::launch` gives for them, found
/// before anything is published; changing a prepared LDS size is refused by name.
#[test]
fn issue_refuses_values_that_do_not_fit() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let (_code, add) = kernel(&device, &gpu, "vector_add.co5", "vector_add");
    let (_lds_code, lds) = kernel(&device, &gpu, "dynamic_lds.co5", "dynamic_lds");
    let p = Arg::ptr(0x1000);
    let one = Geometry::d1(64, 64);
    let mut prepared = queue.prepare(&add, &one, &[p, p, p, Arg::u32(1)]).unwrap();
    let bytes = [0u8; 4];
    let cases: [&[Arg<'_>]; 6] = [
        &[p, p, p],
        &[p, p, p, Arg::u32(1), Arg::u32(2)],
        &[p, p, p, Arg::u64(7)],
        &[p, p, p, Arg::u16(7)],
        &[p, p, Arg::u32(1), Arg::u32(7)],
        &[p, p, p, Arg::local(64)],
    ];
    let before = queue.write_index().unwrap();
    for args in cases {
        let launched = queue.launch(&add, &one, args).unwrap_err();
        let issued = prepared.issue(args).unwrap_err();
        assert_eq!(issued.to_string(), launched.to_string());
        assert_eq!(issued.kind(), ErrorKind::InvalidArgument, "{issued}");
        assert_eq!(queue.write_index().unwrap(), before, "{issued}");
    }
    // The same bytes as an aggregate fit a 4-byte by-value argument, as in a launch.
    if let Err(error) = prepared.issue(&[p, p, p, Arg::bytes(&bytes)]) {
        panic!("{error}");
    }
    prepared.finish(WAIT).unwrap();

    let mut shared = queue.prepare(&lds, &one, &[p, p, Arg::local(256)]).unwrap();
    let error = shared.issue(&[p, p, Arg::local(512)]).unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("dynamic_lds") && text.contains("argument 2") && text.contains("256"),
        "{text}"
    );
    assert_eq!(error.kind(), ErrorKind::InvalidArgument, "{error}");
}

/// `vector_add` issued 40 times through 3 kernarg segments, each issue with its own buffers
/// and length: every output equals the CPU's sum, as the same launches through
/// `Queue::launch` give.
#[test]
fn many_issues_give_the_results_of_launches() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let (_code, add) = kernel(&device, &gpu, "vector_add.co5", "vector_add");
    let n = 256u32;
    let kinds = [Arg::ptr(0), Arg::ptr(0), Arg::ptr(0), Arg::u32(0)];
    let mut prepared = queue
        .prepare_with(
            &add,
            &Geometry::d1(n, 64),
            &kinds,
            &PrepareOptions {
                in_flight: 3,
                ..PrepareOptions::default()
            },
        )
        .unwrap();
    assert_eq!(prepared.in_flight(), 3);
    let runs: Vec<(Buffer, Buffer, Buffer, Buffer, u32)> = (0..40u32)
        .map(|run| {
            let a: Vec<u32> = (0..n).map(|i| i * 3 + run).collect();
            let b: Vec<u32> = (0..n).map(|i| run * 1000 + i).collect();
            // The kernel adds only the first `len` elements; the rest stays 0xFFFF_FFFF.
            let len = n - run * 5;
            (
                filled(&device, &gpu, &a),
                filled(&device, &gpu, &b),
                filled(&device, &gpu, &vec![u32::MAX; n as usize]),
                filled(&device, &gpu, &vec![u32::MAX; n as usize]),
                len,
            )
        })
        .collect();
    let mut issued = Vec::new();
    for (a, b, c, _, len) in &runs {
        issued.push(
            prepared
                .issue(&[
                    Arg::buffer(a),
                    Arg::buffer(b),
                    Arg::buffer(c),
                    Arg::u32(*len),
                ])
                .unwrap(),
        );
    }
    prepared.wait(*issued.last().unwrap(), WAIT).unwrap();
    prepared.finish(WAIT).unwrap();
    for issue in &issued {
        assert!(prepared.is_complete(*issue).unwrap());
    }
    for (a, b, c, d, len) in &runs {
        queue
            .launch(
                &add,
                &Geometry::d1(n, 64),
                &[
                    Arg::buffer(a),
                    Arg::buffer(b),
                    Arg::buffer(d),
                    Arg::u32(*len),
                ],
            )
            .unwrap()
            .wait(WAIT)
            .unwrap();
        let (a, b) = (a.to_vec::<u32>().unwrap(), b.to_vec::<u32>().unwrap());
        let expected: Vec<u32> = (0..n as usize)
            .map(|i| {
                if i < *len as usize {
                    a[i].wrapping_add(b[i])
                } else {
                    u32::MAX
                }
            })
            .collect();
        assert_eq!(c.to_vec::<u32>().unwrap(), expected, "len {len}");
        assert_eq!(d.to_vec::<u32>().unwrap(), expected, "len {len}");
    }
}

/// A queue held up by a barrier-value packet: with every segment in flight the next issue
/// waits, and gives up at its deadline with a timeout; with the ring full likewise. Released,
/// every launch completes and the prepared launch goes on.
#[test]
fn busy_segments_and_a_full_ring_end_at_the_deadline() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let (_code, add) = kernel(&device, &gpu, "vector_add.co5", "vector_add");
    let n = 64u32;
    let a = filled(&device, &gpu, &vec![1; n as usize]);
    let c = filled(&device, &gpu, &vec![0; n as usize]);
    let args = [
        Arg::buffer(&a),
        Arg::buffer(&a),
        Arg::buffer(&c),
        Arg::u32(n),
    ];
    for (packets, in_flight) in [(64, 2), (64, 64)] {
        let queue = device
            .create_queue(
                &gpu,
                &QueueOptions {
                    packets,
                    ..QueueOptions::default()
                },
            )
            .unwrap();
        let gate = device.signal(1).unwrap();
        queue
            .barrier_value(&gate, Condition::Eq, 0, -1, None)
            .unwrap();
        let mut prepared = queue
            .prepare_with(
                &add,
                &Geometry::d1(n, 64),
                &args,
                &PrepareOptions {
                    in_flight,
                    ..PrepareOptions::default()
                },
            )
            .unwrap();
        // The barrier takes one slot: the ring fills after `packets - 1` issues.
        let fits = (in_flight as usize).min(packets as usize - 1);
        for _ in 0..fits {
            prepared.issue(&args).unwrap();
        }
        let started = Instant::now();
        let deadline = started + Duration::from_millis(200);
        let error = prepared.issue_until(&args, Some(deadline)).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Timeout, "{error}");
        assert!(started.elapsed() >= Duration::from_millis(200), "{error}");
        let write_index = queue.write_index().unwrap();
        gate.store(0, MemoryOrder::Release).unwrap();
        prepared.finish(WAIT).unwrap();
        // Nothing was published by the failed issue, and the launch goes on.
        assert_eq!(write_index, 1 + fits as u64);
        let last = prepared.issue(&args).unwrap();
        prepared.wait(last, WAIT).unwrap();
        assert!(c.to_vec::<u32>().unwrap().iter().all(|&x| x == 2));
    }
}

/// A prepared launch keeps its typed buffers alive while its kernels run, even with every
/// other handle gone, and may itself be dropped with launches in flight: they complete
/// (their kernarg memory stays with the queue) and their results are right.
#[test]
fn dropped_with_launches_in_flight() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let (_code, add) = kernel(&device, &gpu, "vector_add.co5", "vector_add");
    let n = 256u32;
    let a = filled(&device, &gpu, &vec![20; n as usize]);
    let c = filled(&device, &gpu, &vec![0; n as usize]);
    let gate = device.signal(1).unwrap();
    queue
        .barrier_value(&gate, Condition::Eq, 0, -1, None)
        .unwrap();
    {
        let b = filled(&device, &gpu, &vec![22; n as usize]);
        let mut prepared = queue
            .prepare(
                &add,
                &Geometry::d1(n, 64),
                &[Arg::ptr(0), Arg::ptr(0), Arg::ptr(0), Arg::u32(0)],
            )
            .unwrap();
        for _ in 0..5 {
            prepared
                .issue(&[
                    Arg::buffer(&a),
                    Arg::buffer(&b),
                    Arg::buffer(&c),
                    Arg::u32(n),
                ])
                .unwrap();
        }
        // `b` and the prepared launch go while the kernels wait behind the barrier.
    }
    // Memory allocated now must not land where `b` was.
    let other = filled(&device, &gpu, &vec![7; n as usize]);
    gate.store(0, MemoryOrder::Release).unwrap();
    queue.finish(WAIT).unwrap();
    assert!(c.to_vec::<u32>().unwrap().iter().all(|&x| x == 42));
    assert!(other.to_vec::<u32>().unwrap().iter().all(|&x| x == 7));
    // Prepared launches made and dropped right after an issue, many times: the queue frees
    // their memory once idle and goes on working.
    for round in 0..20u32 {
        let mut prepared = queue
            .prepare(
                &add,
                &Geometry::d1(n, 64),
                &[Arg::ptr(0), Arg::ptr(0), Arg::ptr(0), Arg::u32(0)],
            )
            .unwrap();
        prepared
            .issue(&[
                Arg::buffer(&a),
                Arg::buffer(&other),
                Arg::buffer(&c),
                Arg::u32(round),
            ])
            .unwrap();
    }
    queue.finish(WAIT).unwrap();
    let sums = c.to_vec::<u32>().unwrap();
    assert!(sums[..19].iter().all(|&x| x == 27), "{sums:?}");
    assert!(sums[19..].iter().all(|&x| x == 42), "{sums:?}");
}

/// Issuing on a queue of a shut-down device fails with `Closed`; dropping the prepared launch
/// afterwards is harmless.
#[test]
fn issue_after_shutdown_is_closed() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let queue: Queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let (_code, add) = kernel(&device, &gpu, "vector_add.co5", "vector_add");
    let p = Arg::ptr(0x1000);
    let mut prepared = queue
        .prepare(&add, &Geometry::d1(64, 64), &[p, p, p, Arg::u32(0)])
        .unwrap();
    device.shutdown().unwrap();
    let error = prepared.issue(&[p, p, p, Arg::u32(0)]).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Closed, "{error}");
    drop(prepared);
}
