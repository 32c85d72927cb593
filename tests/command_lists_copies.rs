//! Copies and fills in command lists (`CommandListBuilder::copy`/`fill`, the driver's blit
//! kernels on the AQL queue) and on their own (`Queue::copy`/`fill`): a replayed list of
//! corpus kernels, copies and fills gives the same bytes as the same operations issued one by
//! one and as the CPU, over many replays with `set_arg` between them; any size and alignment
//! copies exactly its range; bad input is refused before anything runs; a device that used
//! blits closes and reopens leaving nothing behind.

mod support;

use std::ptr::NonNull;
use std::sync::Arc;
use std::time::Duration;

use aqueduct::kernarg::{Arg, Geometry};
use aqueduct::sim::{Machine, MachineConfig};
use aqueduct::{
    Buffer, Device, ErrorKind, Executable, GpuAgent, Kernel, LaunchOptions, MemoryLocation, Queue,
    QueueOptions,
};
use support::{binding_only, code_object, device, gpu, hive_device, machine, pid};

const WAIT: Option<Duration> = Some(Duration::from_secs(120));
const ORDERED: LaunchOptions<'static> = LaunchOptions {
    completion: None,
    barrier: true,
    stack_bytes: None,
};

fn vector_add(device: &Device, gpu: &GpuAgent) -> (Executable, Kernel) {
    let executable = device
        .load_code_object(gpu, &code_object("gfx90a", "vector_add.co5"))
        .unwrap();
    let kernel = executable.kernel("vector_add").unwrap();
    (executable, kernel)
}

fn buffer(device: &Device, gpu: &GpuAgent, bytes: &[u8]) -> Buffer {
    let buffer = device
        .alloc(gpu, MemoryLocation::Device, bytes.len())
        .unwrap();
    buffer.write(0, bytes).unwrap();
    buffer
}

fn words(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// A byte pattern that differs at every offset (so a shifted or misplaced byte shows).
fn noise(len: usize, seed: u32) -> Vec<u8> {
    let mut state = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state as u8
        })
        .collect()
}

/// What `fill` writes: byte `i` of the range gets byte `i % 4` of `value`.
fn cpu_fill(bytes: &mut [u8], value: u32) {
    let pattern = value.to_le_bytes();
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = pattern[i % 4];
    }
}

const N: usize = 1000;
const LOG: usize = 4 * N + 32;

/// The buffers one run of the pipeline uses.
struct Pipeline {
    x: Buffer,
    w: Buffer,
    idx: Buffer,
    y: Buffer,
    z: Buffer,
    log: Buffer,
}

impl Pipeline {
    fn new(device: &Device, gpu: &GpuAgent) -> Self {
        let idx: Vec<u32> = (0..N as u32).collect();
        Self {
            x: buffer(device, gpu, &words(&vec![7; N])),
            w: buffer(device, gpu, &noise(4 * N, 1)),
            idx: buffer(device, gpu, &words(&idx)),
            y: buffer(device, gpu, &noise(4 * N, 2)),
            z: buffer(device, gpu, &noise(4 * N, 3)),
            log: buffer(device, gpu, &noise(LOG, 4)),
        }
    }

    fn bytes(&self) -> Vec<Vec<u8>> {
        [&self.x, &self.w, &self.idx, &self.y, &self.z, &self.log]
            .map(|b| b.to_vec::<u8>().unwrap())
            .to_vec()
    }
}

/// The CPU's run of the pipeline: per step, `w = 1`; `x += w` (or `x += idx` where `with_idx`);
/// `y = x`; `z = y + idx`; `log[5..] = bytes 2.. of z`; `log[4N+7..+13]` filled.
fn cpu_pipeline(steps: &[bool]) -> Vec<Vec<u8>> {
    let idx: Vec<u32> = (0..N as u32).collect();
    let mut x = vec![7u32; N];
    let mut w = noise(4 * N, 1);
    let mut y = noise(4 * N, 2);
    let mut z = noise(4 * N, 3);
    let mut log = noise(LOG, 4);
    for &with_idx in steps {
        cpu_fill(&mut w, 1);
        for (i, v) in x.iter_mut().enumerate() {
            *v = v.wrapping_add(if with_idx { i as u32 } else { 1 });
        }
        y = words(&x);
        let zs: Vec<u32> = x
            .iter()
            .zip(&idx)
            .map(|(a, b)| a.wrapping_add(*b))
            .collect();
        z = words(&zs);
        log[5..5 + 4 * N - 3].copy_from_slice(&z[2..4 * N - 1]);
        cpu_fill(&mut log[4 * N + 7..4 * N + 20], 0xa1b2_c3d4);
    }
    let _ = (&y, &z);
    vec![words(&x), w, words(&idx), y, z, log]
}

/// A list of fill, launch, copy, launch, copy, fill (barriers between the dependent ones)
/// replayed 16 times, the first launch's second argument switched by `set_arg` between
/// replays: the same bytes as the same operations issued one by one with `Queue::launch`,
/// `Queue::copy` and `Queue::fill`, and as the CPU.
#[test]
fn replayed_copies_match_one_by_one_and_the_cpu() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let (_code, add) = vector_add(&device, &gpu);
    let geometry = Geometry::d1(N as u32, 64);
    let n = Arg::u32(N as u32);
    let steps: Vec<bool> = (0..16).map(|i| i % 3 == 1).collect();

    let p = Pipeline::new(&device, &gpu);
    let mut list = queue.record();
    list.fill(&p.w, 0, 4 * N, 1).unwrap();
    list.barrier();
    let first = list
        .launch(
            &add,
            &geometry,
            &[Arg::buffer(&p.x), Arg::buffer(&p.w), Arg::buffer(&p.x), n],
        )
        .unwrap();
    list.barrier();
    list.copy(&p.y, 0, &p.x, 0, 4 * N).unwrap();
    list.barrier();
    list.launch(
        &add,
        &geometry,
        &[Arg::buffer(&p.y), Arg::buffer(&p.idx), Arg::buffer(&p.z), n],
    )
    .unwrap();
    list.barrier();
    list.copy(&p.log, 5, &p.z, 2, 4 * N - 3).unwrap();
    // Disjoint from the copy before it: no barrier, the two may overlap.
    list.fill(&p.log, 4 * N + 7, 13, 0xa1b2_c3d4).unwrap();
    // The next replay's fill of w must wait for this replay's reads of w.
    list.barrier();
    let mut list = list.in_flight(3).finish().unwrap();
    assert_eq!(list.packets(), 7);
    for &with_idx in &steps {
        let second = if with_idx { &p.idx } else { &p.w };
        list.set_arg(first, 1, &Arg::buffer(second)).unwrap();
        list.replay().unwrap();
    }
    list.finish(WAIT).unwrap();

    let q = Pipeline::new(&device, &gpu);
    for &with_idx in &steps {
        let second = if with_idx { &q.idx } else { &q.w };
        queue.fill(&q.w, 0, 4 * N, 1, &ORDERED).unwrap();
        queue
            .launch_with(
                &add,
                &geometry,
                &[Arg::buffer(&q.x), Arg::buffer(second), Arg::buffer(&q.x), n],
                &ORDERED,
            )
            .unwrap();
        queue.copy(&q.y, 0, &q.x, 0, 4 * N, &ORDERED).unwrap();
        queue
            .launch_with(
                &add,
                &geometry,
                &[Arg::buffer(&q.y), Arg::buffer(&q.idx), Arg::buffer(&q.z), n],
                &ORDERED,
            )
            .unwrap();
        queue.copy(&q.log, 5, &q.z, 2, 4 * N - 3, &ORDERED).unwrap();
        queue
            .fill(&q.log, 4 * N + 7, 13, 0xa1b2_c3d4, &ORDERED)
            .unwrap();
    }
    queue.finish(WAIT).unwrap();

    let cpu = cpu_pipeline(&steps);
    let (replayed, one_by_one) = (p.bytes(), q.bytes());
    for (i, name) in ["x", "w", "idx", "y", "z", "log"].iter().enumerate() {
        assert!(
            replayed[i] == cpu[i],
            "{name} replayed differs from the CPU"
        );
        assert!(
            one_by_one[i] == cpu[i],
            "{name} one by one differs from the CPU"
        );
    }
}

/// Copies of 1, 3, 4095, 4096 and 1 MiB + 13 bytes between offsets of every alignment (and
/// fills likewise), recorded in one list and replayed twice: each writes exactly its range,
/// every other byte of the destination untouched.
#[test]
fn any_size_and_alignment_writes_exactly_its_range() {
    let (_machine, device) = device();
    any_size_and_alignment(&device);
}

fn any_size_and_alignment(device: &Device) {
    let gpu = gpu(device);
    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let big = (1 << 20) + 13;
    let copies: [(usize, usize, usize); 9] = [
        (0, 0, 1),
        (1, 0, 3),
        (3, 5, 4095),
        (0, 0, 4096),
        (4, 8, 4096 + 12),
        (17, 1, 4096),
        (2, 6, 333),
        (7, 3, big),
        (16, 48, big),
    ];
    let fills: [(usize, usize, u32); 5] = [
        (0, 1, 0x1122_3344),
        (1, 3, 0x5566_7788),
        (3, 4095, 0x99aa_bbcc),
        (6, 4096, 0xddee_ff00),
        (5, big, 0x0102_0304),
    ];
    let mut list = queue.record();
    let mut expected = Vec::new();
    for (i, &(dst_offset, src_offset, bytes)) in copies.iter().enumerate() {
        let src_bytes = noise(src_offset + bytes + 9, 100 + i as u32);
        let mut dst_bytes = noise(dst_offset + bytes + 9, 200 + i as u32);
        let src = buffer(device, &gpu, &src_bytes);
        let dst = buffer(device, &gpu, &dst_bytes);
        list.copy(&dst, dst_offset, &src, src_offset, bytes)
            .unwrap();
        dst_bytes[dst_offset..dst_offset + bytes]
            .copy_from_slice(&src_bytes[src_offset..src_offset + bytes]);
        expected.push((format!("copy {i}"), dst, dst_bytes, src));
    }
    for (i, &(offset, bytes, value)) in fills.iter().enumerate() {
        let mut dst_bytes = noise(offset + bytes + 9, 300 + i as u32);
        let dst = buffer(device, &gpu, &dst_bytes);
        list.fill(&dst, offset, bytes, value).unwrap();
        cpu_fill(&mut dst_bytes[offset..offset + bytes], value);
        expected.push((format!("fill {i}"), dst.clone(), dst_bytes, dst));
    }
    let mut list = list.finish().unwrap();
    for _ in 0..2 {
        list.replay().unwrap();
    }
    list.finish(WAIT).unwrap();
    for (what, dst, bytes, _) in &expected {
        let got = dst.to_vec::<u8>().unwrap();
        let first_bad = got.iter().zip(bytes).position(|(a, b)| a != b);
        assert_eq!(first_bad, None, "{what}: first wrong byte");
    }

    // The same through Queue::copy, and 0 bytes is a dispatch that writes nothing.
    let src = buffer(device, &gpu, &noise(64, 7));
    let dst = buffer(device, &gpu, &noise(64, 8));
    queue.copy(&dst, 3, &src, 0, 0, &ORDERED).unwrap();
    queue.fill(&dst, 64, 0, 5, &ORDERED).unwrap();
    queue
        .copy(&dst, 9, &src, 1, 50, &ORDERED)
        .unwrap()
        .wait(WAIT)
        .unwrap();
    let mut want = noise(64, 8);
    want[9..59].copy_from_slice(&noise(64, 7)[1..51]);
    assert_eq!(dst.to_vec::<u8>().unwrap(), want);
}

fn assert_refused(result: aqueduct::Result<impl std::fmt::Debug>, needle: &str) {
    let error = result.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidArgument, "{error}");
    assert!(
        error.to_string().contains(needle),
        "{needle:?} not in: {error}"
    );
}

/// Ranges outside their buffers (also by overflow), overlapping ranges of one buffer, a buffer
/// of another device, device memory of another GPU and host memory not mapped on the queue's
/// GPU are refused with a clear error, by the builder and by the queue, and nothing runs.
#[test]
fn bad_input_is_refused() {
    let (_machine, device) = hive_device(2);
    let gpus = device.gpus().unwrap().to_vec();
    let queue = device
        .create_queue(&gpus[0], &QueueOptions::default())
        .unwrap();
    let a = buffer(&device, &gpus[0], &[1; 100]);
    let b = buffer(&device, &gpus[0], &[2; 100]);
    let c = buffer(&device, &gpus[0], &[2; 101]);
    let mut list = queue.record();
    assert_refused(
        list.copy(&c, 0, &b, 0, 101),
        "source range 0x0+0x65 is outside",
    );
    assert_refused(
        list.copy(&a, 1, &b, 0, 100),
        "destination range 0x1+0x64 is outside",
    );
    assert_refused(list.copy(&a, usize::MAX, &b, 0, 2), "outside");
    assert_refused(list.fill(&a, 99, 2, 0), "outside its 0x64-byte buffer");
    assert_refused(list.copy(&a, 10, &a, 0, 11), "overlap");
    assert_refused(queue.copy(&a, 0, &b, 50, 51, &ORDERED), "outside");
    assert_refused(queue.fill(&a, 101, 0, 0, &ORDERED), "outside");

    // Another device's buffer.
    let (_other_machine, other) = device_pair();
    let foreign = buffer(&other, &other.gpus().unwrap()[0], &[3; 100]);
    assert_refused(
        list.copy(&a, 0, &foreign, 0, 4),
        "belongs to another device",
    );
    assert_refused(
        queue.fill(&foreign, 0, 4, 0, &ORDERED),
        "belongs to another device",
    );

    // Device memory of the other GPU, not mapped on the queue's: refused until it is.
    let peer = buffer(&device, &gpus[1], &[4; 100]);
    assert_refused(list.copy(&a, 0, &peer, 0, 4), "not mapped on GPU");
    assert_refused(
        queue.copy(&peer, 0, &a, 0, 4, &ORDERED),
        "not mapped on GPU",
    );

    // Host memory registered for the other GPU only.
    let mut host = vec![0u8; 8192];
    // SAFETY: `host` outlives the registration (dropped at the end of this test, after it)
    // and is not moved or freed while registered.
    let registered = unsafe {
        device.register_host_memory(&[&gpus[1]], NonNull::new(host.as_mut_ptr()).unwrap(), 8192)
    }
    .unwrap();
    assert_refused(list.fill(&registered, 0, 16, 0), "not mapped on GPU");

    // Nothing was recorded: the list is its completion barrier alone.
    let list = list.finish().unwrap();
    assert_eq!(list.packets(), 1);
    assert_eq!(a.to_vec::<u8>().unwrap(), [1; 100]);

    // Mapped on the queue's GPU, the peer's memory is copied.
    peer.allow_access(&[&gpus[0]]).unwrap();
    queue
        .copy(&a, 0, &peer, 0, 100, &ORDERED)
        .unwrap()
        .wait(WAIT)
        .unwrap();
    assert_eq!(a.to_vec::<u8>().unwrap(), [4; 100]);
    drop(registered);
    drop(host);
}

/// A second device on its own machine.
fn device_pair() -> (Machine, Device) {
    let machine = machine();
    let device = Device::open_on(Arc::new(machine.clone())).unwrap();
    (machine, device)
}

fn blit_round(queue: &Queue, device: &Device, gpu: &GpuAgent) {
    let src = buffer(device, gpu, &noise(4099, 9));
    let dst = buffer(device, gpu, &[0; 4099]);
    let mut list = queue.record();
    list.fill(&dst, 0, 4099, 0x0101_0101).unwrap();
    list.barrier();
    list.copy(&dst, 1, &src, 3, 4090).unwrap();
    let mut list = list.finish().unwrap();
    list.replay().unwrap();
    list.finish(WAIT).unwrap();
    let mut want = vec![1; 4099];
    want[1..4091].copy_from_slice(&noise(4099, 9)[3..4093]);
    assert_eq!(dst.to_vec::<u8>().unwrap(), want);
}

/// A device that used blits closes (by its last handle going, or by `shutdown` with a queue
/// and a list still held) and reopens, many times: the blits work each time, the old queue
/// refuses use after the shutdown, and the kernel holds nothing of the process but its
/// binding between rounds.
#[test]
fn reopen_after_blits_leaves_nothing_behind() {
    let machine = machine();
    let sys: Arc<dyn aqueduct::kfd::Sys> = Arc::new(machine.clone());
    for round in 0..6 {
        let device = Device::open_on(Arc::clone(&sys)).unwrap();
        let gpu = gpu(&device);
        let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
        blit_round(&queue, &device, &gpu);
        if round % 2 == 0 {
            drop((queue, device));
        } else {
            let kept = device.alloc(&gpu, MemoryLocation::Device, 16).unwrap();
            let mut list = queue.record();
            list.fill(&kept, 0, 16, 3).unwrap();
            let mut list = list.finish().unwrap();
            device.shutdown().unwrap();
            for error in [
                queue.fill(&kept, 0, 4, 0, &ORDERED).unwrap_err(),
                list.replay().unwrap_err(),
            ] {
                assert_eq!(error.kind(), ErrorKind::Closed, "{error}");
            }
            drop((list, kept, queue, device));
        }
        assert_eq!(
            machine.process_counts(pid()),
            binding_only(1),
            "round {round}"
        );
    }
}

/// The bundle's code for gfx942 (MI300X) and gfx1100 (RX 7900 XTX, wave32) is picked for
/// those GPUs and copies and fills exactly as on gfx90a, every size and alignment.
#[test]
fn blits_run_on_the_other_simulated_targets() {
    for config in [MachineConfig::mi300x(), MachineConfig::rx7900xtx()] {
        let machine = Machine::new(config.with_vram(1 << 30)).unwrap();
        let device = Device::open_on(Arc::new(machine)).unwrap();
        let gpu = gpu(&device);
        let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
        blit_round(&queue, &device, &gpu);
        any_size_and_alignment(&device);
        let dst = buffer(&device, &gpu, &noise(70_001, 5));
        queue
            .fill(&dst, 3, 69_990, 0xcafe_f00d, &ORDERED)
            .unwrap()
            .wait(WAIT)
            .unwrap();
        let mut want = noise(70_001, 5);
        cpu_fill(&mut want[3..69_993], 0xcafe_f00d);
        assert!(dst.to_vec::<u8>().unwrap() == want, "{}", gpu.target_id);
    }
}
