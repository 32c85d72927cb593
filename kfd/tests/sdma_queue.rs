//! kfd's SDMA queues on the simulated MI210: packets in, bytes moved, the read pointer
//! written back; the ring's padding at its end and its full/too-large refusals; the kernel's
//! ENOMEM when the engines' queues run out; drop destroys the queue and frees its buffers.

mod common;

use std::sync::Arc;
use std::time::Duration;

use amdgpu_sim::{Machine, MachineConfig};
use common::{binding_only, close, open, pattern};
use kfd::{Allocation, Errno, MemoryKind, SdmaEngines, SubmitRefusal, Sys};
use test_support::wait;

fn machine() -> (Machine, Arc<dyn Sys>) {
    let machine = Machine::new(
        MachineConfig::mi210()
            .with_compute_units(8)
            .with_vram(1 << 30),
    )
    .unwrap();
    let sys: Arc<dyn Sys> = Arc::new(machine.clone());
    (machine, sys)
}

fn pid() -> i32 {
    std::process::id() as i32
}

/// COPY LINEAR (SDMA 4.x: count = bytes - 1) and FENCE packets.
fn copy(src: u64, dst: u64, bytes: u32) -> [u32; 7] {
    [
        1,
        bytes - 1,
        0,
        src as u32,
        (src >> 32) as u32,
        dst as u32,
        (dst >> 32) as u32,
    ]
}

fn drained(queue: &kfd::SdmaQueue) {
    wait::assert_until(Duration::from_secs(60), "the SDMA queue to drain", || {
        queue.is_idle()
    });
}

#[test]
fn an_sdma_queue_copies_into_private_vram_and_back() {
    let (machine, sys) = machine();
    let kfd = open(&sys).unwrap();
    let gpu = kfd.gpus()[0].gpu_id();
    let bytes = 256 << 10;
    let src = kfd
        .allocate(gpu, Allocation::new(MemoryKind::GttCoarse, bytes))
        .unwrap();
    let dst = kfd
        .allocate(gpu, Allocation::new(MemoryKind::GttCoarse, bytes))
        .unwrap();
    let vram = kfd
        .allocate(gpu, Allocation::new(MemoryKind::VramPrivate, bytes))
        .unwrap();
    let maps = [
        src.map_to(&[gpu]).unwrap(),
        dst.map_to(&[gpu]).unwrap(),
        vram.map_to(&[gpu]).unwrap(),
    ];
    let data = pattern(5, bytes as usize);
    src.write(0, &data).unwrap();
    let queue = kfd.create_sdma_queue(gpu, 4096, SdmaEngines::Pcie).unwrap();
    assert_eq!(kfd.live_objects().queues, 1);
    let mut packets = Vec::new();
    packets.extend(copy(src.va(), vram.va(), bytes as u32));
    packets.extend(copy(vram.va(), dst.va(), bytes as u32));
    let end = queue.submit(&packets).unwrap();
    assert_eq!(end, 56);
    drained(&queue);
    assert_eq!(queue.read_pointer(), 56);
    let mut back = vec![0u8; bytes as usize];
    dst.read(0, &mut back).unwrap();
    assert_eq!(back, data);
    drop(queue);
    assert_eq!(kfd.live_objects().queues, 0);
    drop(maps);
    drop((src, dst, vram));
    close(kfd);
    assert_eq!(machine.process_counts(pid()), binding_only(1));
}

#[test]
fn submissions_pad_the_ring_end_and_refuse_what_does_not_fit() {
    let (_machine, sys) = machine();
    let kfd = open(&sys).unwrap();
    let gpu = kfd.gpus()[0].gpu_id();
    let buffer = kfd
        .allocate(gpu, Allocation::new(MemoryKind::GttCoarse, 4096))
        .unwrap();
    let _map = buffer.map_to(&[gpu]).unwrap();
    let queue = kfd.create_sdma_queue(gpu, 4096, SdmaEngines::Pcie).unwrap();
    assert_eq!(queue.submit(&[0; 1024]), Err(SubmitRefusal::TooLarge));
    assert_eq!(queue.submit(&[]), Err(SubmitRefusal::TooLarge));
    // 146 copies of 28 bytes reach 4088: the next one is padded to the ring's start.
    for i in 0..146u64 {
        queue
            .submit(&copy(buffer.va() + i, buffer.va() + 2048 + i, 1))
            .unwrap();
        drained(&queue);
    }
    assert_eq!(queue.write_pointer(), 4088);
    let end = queue
        .submit(&copy(buffer.va(), buffer.va() + 8, 8))
        .unwrap();
    assert_eq!(end, 4096 + 28, "two dwords of NOP padding, then the packet");
    drained(&queue);
    // FENCE packets the engine cannot finish (a poll that never passes) fill the ring.
    let poll = [
        8 | (3 << 28) | (1 << 31),
        buffer.va() as u32 + 4000,
        (buffer.va() >> 32) as u32,
        0xDEAD,
        u32::MAX,
        0x0FFF_0004,
    ];
    queue.submit(&poll).unwrap();
    let mut refused = false;
    for _ in 0..400 {
        match queue.submit(&[5, buffer.va() as u32, (buffer.va() >> 32) as u32, 1]) {
            Ok(_) => {}
            Err(refusal) => {
                assert_eq!(refusal, SubmitRefusal::Full);
                refused = true;
                break;
            }
        }
    }
    assert!(refused, "a blocked ring must fill up");
    // Dropping the queue stops the engine mid-poll.
    drop(queue);
    assert_eq!(kfd.live_objects().queues, 0);
}

#[test]
fn the_engines_run_out_of_queues_with_the_kernels_enomem() {
    let (_machine, sys) = machine();
    let kfd = open(&sys).unwrap();
    let gpu = kfd.gpus()[0].gpu_id();
    // MI210: 2 PCIe engines x 8 queues, 3 XGMI engines x 8 queues.
    let pcie: Vec<_> = (0..16)
        .map(|_| kfd.create_sdma_queue(gpu, 4096, SdmaEngines::Pcie).unwrap())
        .collect();
    let error = kfd
        .create_sdma_queue(gpu, 4096, SdmaEngines::Pcie)
        .unwrap_err();
    assert_eq!(error.errno(), Some(Errno::ENOMEM), "{error}");
    let xgmi = kfd.create_sdma_queue(gpu, 4096, SdmaEngines::Xgmi).unwrap();
    assert_eq!(kfd.live_objects().queues, 17);
    drop(pcie);
    kfd.create_sdma_queue(gpu, 4096, SdmaEngines::Pcie).unwrap();
    drop(xgmi);
    let error = kfd
        .create_sdma_queue(gpu, 1000, SdmaEngines::Pcie)
        .unwrap_err();
    assert!(matches!(error, kfd::Error::InvalidArgument(_)), "{error}");
}
