//! Open, use and close the driver many times: the process' file descriptors (counted in
//! `/proc/self/fd`) and the simulator's kernel objects stay flat. One test in its own binary,
//! so no other test opens files meanwhile.

mod common;

use std::sync::Arc;

use amdgpu_sim::{Machine, MachineConfig};
use kfd::Sys;

#[test]
fn repeated_open_and_close_leak_no_fd_and_no_kernel_object() {
    let machine = Machine::new(
        MachineConfig::mi210()
            .with_gpu_count(2)
            .with_compute_units(8)
            .with_vram(1 << 30),
    )
    .unwrap();
    let sys: Arc<dyn Sys> = Arc::new(machine.clone());
    let pid = std::process::id() as i32;
    let fds_before = common::open_fds();

    let first = common::open(&sys).unwrap();
    common::exercise(&first);
    drop(first);
    // The binding stays open (the simulator backs each of its files with real fds, so the
    // exact number is its business; from here on it must not change).
    let fds_bound = common::open_fds();
    assert!(fds_bound > fds_before);
    let bound = machine.process_counts(pid);
    assert_eq!(bound, common::binding_only(2));
    for round in 0..25 {
        let kfd = common::open(&sys).unwrap_or_else(|e| panic!("round {round}: {e}"));
        common::exercise(&kfd);
        drop(kfd);
        assert_eq!(common::open_fds(), fds_bound, "round {round}");
        assert_eq!(machine.process_counts(pid), bound, "round {round}");
    }
}
