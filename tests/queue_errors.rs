//! A queue the CP stops with an error fails every later wait on it with that error; other
//! queues and the device stay usable.

mod support;

use std::time::Duration;

use aqueduct::{Arg, Condition, ErrorKind, Geometry, MemoryLocation, QueueError, QueueOptions};
use support::{CounterDispatches, atomic_counter, code_object, device, gpu, hive_device};

const WAIT: Option<Duration> = Some(Duration::from_secs(30));
/// Inside the GPU's address range, mapped by nothing.
const UNMAPPED: u64 = 0x0000_7e00_0000_0000;

/// On a memory fault KFD evicts every queue of the process on that GPU and never restores
/// them (kfd.md §6.6; `kfd_process_vm_fault`): the faulting queue reports the fault with its
/// address, the GPU refuses new queues with a clear error, and the other GPUs keep working.
#[test]
fn a_memory_fault_names_its_address_stops_that_gpu_and_leaves_the_others_working() {
    let (_machine, device) = hive_device(2);
    let gpus = device.gpus().unwrap().to_vec();
    let gpu = gpus[0].clone();
    let faulty = device
        .load_code_object(&gpu, &code_object("gfx90a", "oob_store.co5"))
        .unwrap();
    let oob = faulty.kernel("oob_store").unwrap();
    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let error = queue
        .launch(
            &oob,
            &Geometry::d1(64, 64),
            &[Arg::ptr(UNMAPPED), Arg::u32(7)],
        )
        .unwrap()
        .wait(WAIT)
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Queue, "{error}");
    assert_eq!(
        error.queue_error(),
        Some(&QueueError::MemoryFault {
            address: Some(UNMAPPED)
        }),
        "{error}"
    );
    // Every later wait and submit on the queue reports the same error.
    let again = device.signal(1).unwrap();
    let submit = queue.barrier_and(&[], Some(&again)).unwrap_err();
    assert_eq!(submit.queue_error(), error.queue_error(), "{submit}");
    let launch = queue
        .launch(
            &oob,
            &Geometry::d1(64, 64),
            &[Arg::ptr(UNMAPPED), Arg::u32(7)],
        )
        .unwrap_err();
    assert_eq!(launch.queue_error(), error.queue_error(), "{launch}");
    let later = queue.wait(&again, Condition::Eq, 0, WAIT).unwrap_err();
    assert_eq!(later.queue_error(), error.queue_error());
    assert_eq!(queue.error().unwrap(), error.queue_error().cloned());

    // The GPU takes no new queue of this process, and says why.
    let refused = device
        .create_queue(&gpu, &QueueOptions::default())
        .unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::GpuStopped, "{refused}");
    assert!(
        refused.to_string().contains(&format!("{UNMAPPED:#x}")),
        "{refused}"
    );

    // The other GPU works.
    let other = &gpus[1];
    let (_executable, kernel) = atomic_counter(&device, other);
    let dispatches = CounterDispatches::new(&device, other, kernel, 1);
    let fresh = device
        .create_queue(other, &QueueOptions::default())
        .unwrap();
    let ok = device.signal(1).unwrap();
    fresh.dispatch(&dispatches.packet(0, ok.handle())).unwrap();
    fresh.wait(&ok, Condition::Eq, 0, WAIT).unwrap();
    assert_eq!(dispatches.counters.to_vec::<u32>().unwrap()[0], 1);
    assert_eq!(fresh.error().unwrap(), None);
}

#[test]
fn an_illegal_instruction_stops_the_wave_and_the_queue() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let executable = device
        .load_code_object(&gpu, &code_object("gfx90a", "illegal_insn.co5"))
        .unwrap();
    let kernel = executable.kernel("illegal_insn").unwrap();
    let out = device.alloc(&gpu, MemoryLocation::HostFine, 8).unwrap();
    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let error = queue
        .launch(&kernel, &Geometry::d1(1, 1), &[Arg::ptr(out.gpu_address())])
        .unwrap()
        .wait(WAIT)
        .unwrap_err();
    assert_eq!(
        error.queue_error(),
        Some(&QueueError::IllegalInstruction),
        "{error}"
    );
    assert_eq!(out.to_vec::<u32>().unwrap(), [0x1111_1111, 0]);
    // Only that queue stopped: a new queue on the same GPU runs.
    let fresh = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    fresh.finish(WAIT).unwrap();
}

#[test]
fn a_wait_that_runs_out_of_time_says_so_and_the_queue_still_works() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let never = device.signal(1).unwrap();
    let error = queue
        .wait(&never, Condition::Eq, 0, Some(Duration::from_millis(50)))
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Timeout, "{error}");
    queue.finish(WAIT).unwrap();
}
