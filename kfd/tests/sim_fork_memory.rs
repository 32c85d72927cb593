//! After fork(), the simulator's memory must be as separate as the kernel's: a child that
//! allocates, writes and frees buffers (and drops what it inherited) changes no byte of its
//! parent's buffers, old or new. The simulator keeps all BOs in one memfd that a child
//! inherits, so this once failed: the child punched holes into its parent's live ranges and
//! handed out the offsets its parent would use next. One test in its own binary.

mod common;

use std::sync::Arc;
use std::time::Duration;

use amdgpu_sim::{Machine, MachineConfig};
use common::{open, pattern};
use kfd::{Allocation, MemoryKind, Sys};
use test_support::fork::assert_child_passes;

const SIZE: u64 = 64 << 10;

#[test]
fn a_fork_child_changes_no_byte_of_its_parents_memory() {
    let machine = Machine::new(
        MachineConfig::mi210()
            .with_compute_units(8)
            .with_vram(1 << 30),
    )
    .unwrap();
    let sys: Arc<dyn Sys> = Arc::new(machine);
    let kfd = open(&sys).unwrap();
    let gpu = kfd.gpus()[0].gpu_id();
    let old = kfd
        .allocate(gpu, Allocation::new(MemoryKind::GttFine, SIZE))
        .unwrap();
    old.write(0, &pattern(1, SIZE as usize)).unwrap();
    let inherited = kfd
        .allocate(gpu, Allocation::new(MemoryKind::VramHostVisible, SIZE))
        .unwrap();

    assert_child_passes(Duration::from_secs(60), || {
        let own = open(&sys).map_err(|e| format!("open in the child: {e}"))?;
        let mut keep = Vec::new();
        for i in 0..8u8 {
            for kind in [
                MemoryKind::GttFine,
                MemoryKind::VramHostVisible,
                MemoryKind::GttCoarse,
            ] {
                let bo = own
                    .allocate(gpu, Allocation::new(kind, SIZE))
                    .map_err(|e| format!("allocate {kind}: {e}"))?;
                bo.write(0, &pattern(0xa0 + i, SIZE as usize))
                    .map_err(|e| e.to_string())?;
                if i % 2 == 0 {
                    keep.push(bo);
                }
            }
        }
        drop(inherited);
        drop(own);
        // `keep` is still alive when the child exits: its pages hold the child's bytes.
        std::mem::forget(keep);
        Ok(())
    });

    let mut back = vec![0u8; SIZE as usize];
    old.read(0, &mut back).unwrap();
    assert!(
        back == pattern(1, SIZE as usize),
        "the parent's buffer changed"
    );
    for kind in [
        MemoryKind::GttFine,
        MemoryKind::VramHostVisible,
        MemoryKind::GttCoarse,
    ] {
        let new = kfd.allocate(gpu, Allocation::new(kind, SIZE)).unwrap();
        new.read(0, &mut back).unwrap();
        assert!(
            back.iter().all(|&b| b == 0),
            "a new {kind} buffer holds the child's bytes"
        );
    }
}
