//! `Queue::launch` beyond the corpus: hidden arguments of the V4, V5 and V6 layouts read back
//! by kernels, hung kernels (timeout, abort, the device stays usable), argument errors found
//! before anything is published, and scratch memory grown for private segments and freed
//! with the queue.

mod support;

use std::time::Duration;

use aqueduct::kernarg::{Arg, Geometry};
use aqueduct::sim::{Machine, MachineConfig};
use aqueduct::{
    Device, ErrorKind, Executable, GpuAgent, Kernel, MemoryLocation, Queue, QueueError,
    QueueOptions,
};
use support::{code_object, device, gpu, pid};
use test_support::watchdog;

const WAIT: Option<Duration> = Some(Duration::from_secs(60));

/// A device on a small simulated MI300X (gfx942, 8 XCCs of one CU).
fn gfx942_device() -> (Machine, Device) {
    let machine = Machine::new(
        MachineConfig::mi300x()
            .with_compute_units(8)
            .with_vram(1 << 30),
    )
    .unwrap();
    let device = Device::open_on(std::sync::Arc::new(machine.clone())).unwrap();
    (machine, device)
}

/// A kernel and the executable that must outlive its launches.
fn kernel(
    device: &Device,
    gpu: &GpuAgent,
    target: &str,
    file: &str,
    name: &str,
) -> (Executable, Kernel) {
    let executable = device
        .load_code_object(gpu, &code_object(target, file))
        .unwrap();
    let kernel = executable.kernel(name).unwrap();
    (executable, kernel)
}

fn zeroed(device: &Device, gpu: &GpuAgent, bytes: usize) -> aqueduct::Buffer {
    let buffer = device.alloc(gpu, MemoryLocation::Device, bytes).unwrap();
    buffer.fill(0).unwrap();
    buffer
}

fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

/// `implicit_args` dumps the first 256 bytes of its hidden block and derives the launch
/// geometry from it as OCKL does (code object V5 and V6 share the layout).
#[test]
fn v5_and_v6_hidden_arguments_read_back_by_the_kernel() {
    for (target, (_machine, device)) in [("gfx90a", device()), ("gfx942", gfx942_device())] {
        let gpu = gpu(&device);
        let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
        for version in ["co5", "co6"] {
            let what = format!("{target} {version}");
            let (_code, kernel) = kernel(
                &device,
                &gpu,
                target,
                &format!("implicit_args.{version}"),
                "implicit_args",
            );
            let dump = zeroed(&device, &gpu, 64 * 4);
            let derived = zeroed(&device, &gpu, 4 * 4 * 4);
            let geometry = Geometry::d1(200, 64).with_global_offset([5, 0, 0]);
            queue
                .launch(
                    &kernel,
                    &geometry,
                    &[
                        Arg::ptr(dump.gpu_address()),
                        Arg::ptr(derived.gpu_address()),
                    ],
                )
                .unwrap()
                .wait(WAIT)
                .unwrap();
            let h: Vec<u8> = dump.to_vec().unwrap();
            // Block counts (whole groups only), group sizes, remainders.
            assert_eq!(
                [u32_at(&h, 0), u32_at(&h, 4), u32_at(&h, 8)],
                [3, 1, 1],
                "{what}"
            );
            assert_eq!(
                [u16_at(&h, 12), u16_at(&h, 14), u16_at(&h, 16)],
                [64, 1, 1],
                "{what}"
            );
            assert_eq!(
                [u16_at(&h, 18), u16_at(&h, 20), u16_at(&h, 22)],
                [8, 0, 0],
                "{what}"
            );
            // Global offsets and grid dims.
            assert_eq!(
                [u64_at(&h, 40), u64_at(&h, 48), u64_at(&h, 56)],
                [5, 0, 0],
                "{what}"
            );
            assert_eq!(u16_at(&h, 64), 1, "{what}");
            let d: Vec<u32> = derived.to_vec().unwrap();
            for g in 0..4 {
                let want = if g < 3 {
                    [4, 200, 64, 1]
                } else {
                    [4, 200, 8, 1]
                };
                assert_eq!(d[4 * g..4 * g + 4], want, "{what} group {g}");
            }
        }
    }
}

/// `implicit_args_v4` reads the code object V4 hidden block (56 bytes: global offsets x/y/z,
/// then the printf-or-hostcall buffer, default queue, completion action and multigrid sync
/// argument, all 0 here) and adds the offsets to its global ids. V4 has no block counts, group
/// sizes, remainders or grid dims in the block: the kernel takes its local size from the
/// dispatch packet, which the partial work-groups of this 3-D grid check.
#[test]
fn v4_hidden_arguments_read_back_by_the_kernel() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let (_code, kernel) = kernel(
        &device,
        &gpu,
        "gfx90a",
        "implicit_args_v4.co4",
        "implicit_args_v4",
    );
    let (grid, group) = ([20u32, 3, 2], [8u32, 2, 1]);
    let offset = [5u64, 7, 0x1_0000_0009];
    let items = (grid[0] * grid[1] * grid[2]) as usize;
    let dump = zeroed(&device, &gpu, 14 * 4);
    let ids = zeroed(&device, &gpu, items * 4 * 4);
    // A canary: the kernel must write every dump word (the zeros below are its, not ours).
    dump.fill(0xa5).unwrap();
    queue
        .launch(
            &kernel,
            &Geometry::d3(grid, group).with_global_offset(offset),
            &[Arg::ptr(dump.gpu_address()), Arg::ptr(ids.gpu_address())],
        )
        .unwrap()
        .wait(WAIT)
        .unwrap();
    let h: Vec<u8> = dump.to_vec().unwrap();
    assert_eq!(
        [u64_at(&h, 0), u64_at(&h, 8), u64_at(&h, 16)],
        offset,
        "global offsets at +0, +8, +16"
    );
    assert!(
        h[24..].iter().all(|&b| b == 0),
        "services at +24..+56: {h:?}"
    );
    let got: Vec<u32> = ids.to_vec().unwrap();
    for z in 0..grid[2] {
        for y in 0..grid[1] {
            for x in 0..grid[0] {
                let f = ((z * grid[1] + y) * grid[0] + x) as usize;
                let local_x = (grid[0] - x / group[0] * group[0]).min(group[0]);
                let want = [
                    x + offset[0] as u32,
                    y + offset[1] as u32,
                    z + offset[2] as u32,
                    local_x,
                ];
                assert_eq!(got[4 * f..4 * f + 4], want, "item ({x},{y},{z})");
            }
        }
    }
}

/// `dispatch_ptr` copies the packet the CP executed and computes ids from its sizes (in V4
/// the work-group sizes come from the packet, not from hidden arguments).
#[test]
fn v4_v5_v6_kernels_read_the_packet_launch_published() {
    for (target, versions, (_machine, device)) in [
        ("gfx90a", &["co4", "co5", "co6"][..], device()),
        ("gfx942", &["co5", "co6"][..], gfx942_device()),
    ] {
        let gpu = gpu(&device);
        let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
        for version in versions {
            let what = format!("{target} {version}");
            let (_code, kernel) = kernel(
                &device,
                &gpu,
                target,
                &format!("dispatch_ptr.{version}"),
                "dispatch_ptr",
            );
            let (gx, gy, gz) = (64u32, 4u32, 2u32);
            let packet = zeroed(&device, &gpu, 64);
            let ids = zeroed(&device, &gpu, (gx * gy * gz) as usize * 4);
            queue
                .launch(
                    &kernel,
                    &Geometry::d3([gx, gy, gz], [16, 2, 1]),
                    &[Arg::ptr(packet.gpu_address()), Arg::ptr(ids.gpu_address())],
                )
                .unwrap()
                .wait(WAIT)
                .unwrap();
            let p: Vec<u32> = packet.to_vec().unwrap();
            assert_eq!(p[0] & 0xff, 2, "{what}: a kernel-dispatch header");
            assert_eq!(p[0] >> 16, 3, "{what}: three dimensions");
            assert_eq!(p[1..6], [16 | 2 << 16, 1, gx, gy, gz], "{what}");
            assert_eq!(p[7], kernel.group_segment_size, "{what}");
            assert_eq!(
                u64::from(p[8]) | u64::from(p[9]) << 32,
                kernel.kernel_object,
                "{what}"
            );
            assert_ne!(p[14] | p[15], 0, "{what}: a completion signal");
            let got: Vec<u32> = ids.to_vec().unwrap();
            assert!(
                got.iter().enumerate().all(|(i, &x)| x == i as u32),
                "{what}: ids"
            );
        }
    }
}

/// `timing` with 2^32 - 1 sleep iterations does not end in any useful time: a hung kernel.
fn hung_launch(device: &Device, gpu: &GpuAgent, queue: &Queue) -> (Executable, aqueduct::Launch) {
    let (code, timing) = kernel(device, gpu, "gfx90a", "timing.co5", "timing");
    let out = zeroed(device, gpu, 64 * 4 * 8);
    let launch = queue
        .launch(
            &timing,
            &Geometry::d1(64, 64),
            &[Arg::ptr(out.gpu_address()), Arg::u32(u32::MAX)],
        )
        .unwrap();
    (code, launch)
}

/// `vector_add` (gfx90a unless said otherwise) runs on `queue` with the right result.
fn vector_add_works(device: &Device, gpu: &GpuAgent, queue: &Queue) {
    vector_add_works_on(device, gpu, queue, "gfx90a");
}

fn vector_add_works_on(device: &Device, gpu: &GpuAgent, queue: &Queue, target: &str) {
    let (_code, add) = kernel(device, gpu, target, "vector_add.co5", "vector_add");
    let n = 300u32;
    let [a, b, c] = [3i32, 4, 0].map(|v| {
        let buffer = zeroed(device, gpu, 4 * n as usize);
        buffer.write(0, &vec![v; n as usize]).unwrap();
        buffer
    });
    queue
        .launch(
            &add,
            &Geometry::d1(n, 64),
            &[
                Arg::ptr(a.gpu_address()),
                Arg::ptr(b.gpu_address()),
                Arg::ptr(c.gpu_address()),
                Arg::u32(n),
            ],
        )
        .unwrap()
        .wait(WAIT)
        .unwrap();
    assert!(c.to_vec::<i32>().unwrap().iter().all(|&x| x == 7));
}

#[test]
fn a_hung_kernel_times_out_its_queue_is_aborted_and_the_device_stays_usable() {
    let (machine, device) = device();
    let gpu = gpu(&device);
    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let (_code, launch) = hung_launch(&device, &gpu, &queue);

    // A plain wait that times out leaves the kernel running and the queue alone.
    let error = launch.wait(Some(Duration::from_millis(100))).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Timeout, "{error}");
    assert!(!launch.is_complete().unwrap());
    assert!(!queue.is_aborted());

    // wait_or_abort: the same timeout, and the queue is destroyed with its kernel.
    let error = launch
        .wait_or_abort(Duration::from_millis(100))
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Timeout, "{error}");
    assert!(queue.is_aborted());
    assert_eq!(machine.process_counts(pid()).queues, 0, "queue destroyed");

    // Every later call on the queue says it was aborted.
    let aborted = |error: aqueduct::Error| {
        assert_eq!(error.queue_error(), Some(&QueueError::Aborted), "{error}");
    };
    aborted(launch.wait(WAIT).unwrap_err());
    aborted(launch.is_complete().unwrap_err());
    aborted(queue.write_index().unwrap_err());
    aborted(queue.finish(WAIT).unwrap_err());
    let (_empty_code, empty) = kernel(&device, &gpu, "gfx90a", "empty.co5", "empty");
    aborted(queue.launch(&empty, &Geometry::d1(1, 1), &[]).unwrap_err());
    queue.abort().unwrap();

    // A new queue on the same GPU runs kernels.
    let fresh = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    vector_add_works(&device, &gpu, &fresh);
}

/// A waiter sleeping on the hung kernel is woken by an abort from another thread.
#[test]
fn an_abort_ends_waits_already_sleeping_on_the_queue() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let (_code, launch) = hung_launch(&device, &gpu, &queue);
    // The kernel is running and does not end.
    let error = launch.wait(Some(Duration::from_millis(50))).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Timeout, "{error}");
    let started = std::time::Instant::now();
    let _watchdog = watchdog::arm(
        watchdog::HANG_DEADLINE,
        "the waiter to end with the abort's error",
    );
    let error = std::thread::scope(|s| {
        // The waiter may or may not be asleep when the abort comes: either way it must end
        // with the abort's error, long before its own timeout.
        let waiter = s.spawn(|| launch.wait(WAIT));
        queue.abort().unwrap();
        waiter.join().unwrap().unwrap_err()
    });
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "woken by the abort"
    );
    assert_eq!(error.queue_error(), Some(&QueueError::Aborted), "{error}");
    let fresh = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    vector_add_works(&device, &gpu, &fresh);
}

/// Wrong argument count, size or kind: an error naming the kernel and argument, and nothing
/// published (the write index stays where it was).
#[test]
fn argument_errors_are_found_before_dispatch() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let (_code, add) = kernel(&device, &gpu, "gfx90a", "vector_add.co5", "vector_add");
    let p = Arg::ptr(0x1000);
    let before = queue.write_index().unwrap();
    let cases: [(&[Arg<'_>], &str); 4] = [
        (&[p, p, p], "takes 4 explicit argument(s), 3 given"),
        (&[p, p, p, Arg::u64(7)], "argument 3"),
        (&[p, p, Arg::u32(1), Arg::u32(7)], "argument 2"),
        (&[p, p, p, p], "argument 3"),
    ];
    for (args, expected) in cases {
        let error = queue.launch(&add, &Geometry::d1(64, 64), args).unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("vector_add") && text.contains(expected),
            "{text}"
        );
        assert_eq!(queue.write_index().unwrap(), before, "{text}");
    }
    // The queue still works, and the failed launches did not leak kernarg segments.
    for _ in 0..80 {
        vector_add_works(&device, &gpu, &queue);
    }
}

/// Scratch grows when a kernel needs more than the queue has (after earlier work drained),
/// raw packets get it through `reserve_scratch`, and it goes with the queue.
#[test]
fn scratch_grows_for_private_segments_and_is_freed_with_the_queue() {
    let (machine, device) = device();
    let gpu = gpu(&device);
    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let (_private_code, private) = kernel(
        &device,
        &gpu,
        "gfx90a",
        "private_array.co5",
        "private_array",
    );
    assert!(private.private_segment_size > 0);
    let n = 64u32;
    let idx = zeroed(&device, &gpu, 16 * 4 * n as usize);
    let out = zeroed(&device, &gpu, 2 * 4 * n as usize);
    // Work in flight first: the grow waits for it.
    vector_add_works(&device, &gpu, &queue);
    let with_queue = machine.process_counts(pid()).buffer_objects;
    queue
        .launch(
            &private,
            &Geometry::d1(n, 64),
            &[
                Arg::ptr(idx.gpu_address()),
                Arg::ptr(out.gpu_address()),
                Arg::u32(n),
            ],
        )
        .unwrap()
        .wait(WAIT)
        .unwrap();
    // Every index 0: the reference of checks/private.rs reduces to s = 16 i + 1240 (p[k] read
    // after p[0] was bumped) and t = 56 << (i % 8) (sm[1..8] read twice, sm[0] xors to 0).
    let got: Vec<u32> = out.to_vec().unwrap();
    for i in 0..n {
        let at = 2 * i as usize;
        assert_eq!(
            (got[at], got[at + 1]),
            (16 * i + 1240, 56 << (i % 8)),
            "item {i}"
        );
    }
    let grown = machine.process_counts(pid()).buffer_objects;
    assert_eq!(grown, with_queue + 1, "one scratch allocation");
    // A bigger reservation replaces it: still one.
    queue.reserve_scratch(4096).unwrap();
    assert_eq!(machine.process_counts(pid()).buffer_objects, grown);
    drop(queue);
    // Ring, amd_queue_t page, EOP buffer, CWSR area, kernarg segments and scratch go.
    assert_eq!(machine.process_counts(pid()).buffer_objects, grown - 6);
}

/// `illegal_insn` stops its queue with an illegal-instruction error after its first store;
/// a new queue on the same GPU works.
#[test]
fn an_illegal_instruction_stops_the_queue_and_a_new_queue_works() {
    for (target, (_machine, device)) in [("gfx90a", device()), ("gfx942", gfx942_device())] {
        let gpu = gpu(&device);
        let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
        let (_code, illegal) = kernel(&device, &gpu, target, "illegal_insn.co5", "illegal_insn");
        let out = zeroed(&device, &gpu, 8);
        let error = queue
            .launch(
                &illegal,
                &Geometry::d1(1, 1),
                &[Arg::ptr(out.gpu_address())],
            )
            .unwrap()
            .wait(WAIT)
            .unwrap_err();
        assert_eq!(
            error.queue_error(),
            Some(&QueueError::IllegalInstruction),
            "{target}: {error}"
        );
        assert_eq!(out.to_vec::<u32>().unwrap(), [0x1111_1111, 0], "{target}");
        let fresh = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
        vector_add_works_on(&device, &gpu, &fresh, target);
    }
}

/// `oob_store` to an unmapped address: a memory fault naming the address.
#[test]
fn an_out_of_bounds_store_reports_a_memory_fault_with_its_address() {
    const UNMAPPED: u64 = 0x0000_7e00_0000_0000;
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let (_code, oob) = kernel(&device, &gpu, "gfx90a", "oob_store.co5", "oob_store");
    let error = queue
        .launch(
            &oob,
            &Geometry::d1(64, 64),
            &[Arg::ptr(UNMAPPED), Arg::u32(7)],
        )
        .unwrap()
        .wait(WAIT)
        .unwrap_err();
    assert_eq!(
        error.queue_error(),
        Some(&QueueError::MemoryFault {
            address: Some(UNMAPPED)
        }),
        "{error}"
    );
}

/// Threads launching kernels with different private sizes at once: scratch grows while
/// other launches are in flight (each grow drains the queue and holds launches off), and
/// every result is right.
#[test]
fn concurrent_launches_while_scratch_grows() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let (_c1, empty) = kernel(&device, &gpu, "gfx90a", "empty.co5", "empty");
    let (_c2, private) = kernel(
        &device,
        &gpu,
        "gfx90a",
        "private_array.co5",
        "private_array",
    );
    let (_c3, indirect) = kernel(
        &device,
        &gpu,
        "gfx90a",
        "indirect_call.co5",
        "indirect_call",
    );
    assert!(indirect.layout.uses_dynamic_stack());
    let n = 64u32;
    let _watchdog = watchdog::arm(
        watchdog::HANG_DEADLINE,
        "three threads launching on one queue",
    );
    std::thread::scope(|s| {
        s.spawn(|| {
            for _ in 0..50 {
                queue
                    .launch(&empty, &Geometry::d1(64, 64), &[])
                    .unwrap()
                    .wait(WAIT)
                    .unwrap();
            }
        });
        s.spawn(|| {
            let idx = zeroed(&device, &gpu, 16 * 4 * n as usize);
            let out = zeroed(&device, &gpu, 2 * 4 * n as usize);
            for round in 0..10 {
                out.fill(0).unwrap();
                queue
                    .launch(
                        &private,
                        &Geometry::d1(n, 64),
                        &[
                            Arg::ptr(idx.gpu_address()),
                            Arg::ptr(out.gpu_address()),
                            Arg::u32(n),
                        ],
                    )
                    .unwrap()
                    .wait(WAIT)
                    .unwrap();
                let got: Vec<u32> = out.to_vec().unwrap();
                assert_eq!((got[2], got[3]), (16 + 1240, 56 << 1), "round {round}");
            }
        });
        s.spawn(|| {
            let a = zeroed(&device, &gpu, 4 * n as usize);
            let b = zeroed(&device, &gpu, 4 * n as usize);
            let sel = zeroed(&device, &gpu, 4 * n as usize);
            let out = zeroed(&device, &gpu, 4 * n as usize);
            a.write(0, &(0..n).collect::<Vec<u32>>()).unwrap();
            b.write(0, &(0..n).map(|i| 2 * i).collect::<Vec<u32>>())
                .unwrap();
            for round in 0..10 {
                out.fill(0).unwrap();
                // A stack bigger than the default on odd rounds: scratch grows again.
                let options = aqueduct::LaunchOptions {
                    stack_bytes: Some(if round % 2 == 1 { 4096 } else { 1024 }),
                    ..Default::default()
                };
                queue
                    .launch_with(
                        &indirect,
                        &Geometry::d1(n, 64),
                        &[
                            Arg::ptr(a.gpu_address()),
                            Arg::ptr(b.gpu_address()),
                            Arg::ptr(sel.gpu_address()),
                            Arg::ptr(out.gpu_address()),
                            Arg::u32(n),
                        ],
                        &options,
                    )
                    .unwrap()
                    .wait(WAIT)
                    .unwrap();
                // Selector 0 everywhere: a + b.
                let got: Vec<u32> = out.to_vec().unwrap();
                assert!(
                    got.iter().enumerate().all(|(i, &x)| x == 3 * i as u32),
                    "round {round}"
                );
            }
        });
    });
}
