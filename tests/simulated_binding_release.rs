//! What a copy of aqueduct gives back at unload (`src/device/unload.rs`): the process
//! bindings to in-process simulators that no open driver uses, and the default machine.
//! One test in its own binary: releasing bindings would pull them from under other tests.

mod support;

use std::sync::Arc;

use aqueduct::Device;
use aqueduct::sim::{Machine, ResourceCounts};
use support::{binding_only, machine, pid};

#[test]
fn unused_simulator_bindings_and_the_default_machine_are_released_and_nothing_else() {
    // One machine whose device is torn down: only the binding is left in its kernel.
    let idle = machine();
    let device = Device::open_on(Arc::new(idle.clone())).unwrap();
    device.shutdown().unwrap();
    drop(device);
    assert_eq!(idle.process_counts(pid()), binding_only(1));
    // Another whose device stays open.
    let busy = machine();
    let open = Device::open_on(Arc::new(busy.clone())).unwrap();
    let busy_before = busy.process_counts(pid());
    assert_eq!(busy_before.open_files, 2, "/dev/kfd and a render node");

    assert_eq!(aqueduct::kfd::release_simulated_bindings(), 1);
    // The idle binding's files are closed and its event page unmapped; what stays is what
    // the kernel frees when the process ends (the KFD process and the event page's BO).
    assert_eq!(
        idle.process_counts(pid()),
        ResourceCounts {
            open_files: 0,
            cpu_mappings: 0,
            ..binding_only(1)
        }
    );
    // The open device's binding is untouched and the device still works.
    assert_eq!(busy.process_counts(pid()), busy_before);
    let gpu = support::gpu(&open);
    let buffer = open
        .alloc(&gpu, aqueduct::MemoryLocation::HostFine, 64)
        .unwrap();
    buffer.write(0, &[5u32]).unwrap();
    assert_eq!(buffer.to_vec::<u32>().unwrap()[0], 5);
    drop(buffer);
    open.shutdown().unwrap();
    // Released once, a binding is gone from the registry: nothing more to release but the
    // busy one, now idle.
    assert_eq!(aqueduct::kfd::release_simulated_bindings(), 1);
    assert_eq!(aqueduct::kfd::release_simulated_bindings(), 0);

    // The default machine: released, then built afresh (a different kernel) on next use.
    let first: Machine = aqueduct::sim::default_machine().unwrap();
    let first_id = aqueduct::kfd::Sys::kernel_id(&first);
    assert!(aqueduct::sim::release_default_machine());
    assert!(!aqueduct::sim::release_default_machine());
    // Whoever still holds the old machine keeps a working one.
    let on_first = Device::open_on(Arc::new(first.clone())).unwrap();
    assert!(!on_first.gpus().unwrap().is_empty());
    on_first.shutdown().unwrap();
    let second = aqueduct::sim::default_machine().unwrap();
    assert_ne!(aqueduct::kfd::Sys::kernel_id(&second), first_id);
}
