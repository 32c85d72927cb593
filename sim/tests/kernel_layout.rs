//! The process GPU address-space layout the kernel sets up, on both sides of the change in
//! Linux 6.9 (commit 34a1de0f7935, "drm/amdkfd: Relocate TBA/TMA to opposite side of VM
//! hole"), tied to the interface version the simulated kernel reports:
//!
//! - `kfd_init_apertures_v9` (drivers/gpu/drm/amd/amdkfd/kfd_flat_memory.c): `gpuvm_base` is
//!   `AMDGPU_VA_RESERVED_BOTTOM` (1 << 16, amdgpu_vm.h) from 6.9 on, `SVM_USER_BASE` (16 MiB)
//!   before;
//! - the same function sets `qpd.cwsr_base`: `AMDGPU_VA_RESERVED_TRAP_START(adev)` from 6.9 on
//!   (the top of the VM, 2^48 on GFX9, less `AMDGPU_VA_RESERVED_CSA_SIZE` 2 MiB, less
//!   `AMDGPU_VA_RESERVED_SEQ64_SIZE` 2 MiB, less `AMDGPU_VA_RESERVED_TRAP_SIZE` 8 KiB);
//!   `SVM_CWSR_BASE` = `SVM_USER_BASE - KFD_CWSR_TBA_TMA_SIZE` before (kfd_init_apertures),
//!   with the IB page `SVM_IB_BASE` one page below it;
//! - at ACQUIRE_VM `kfd_process_device_init_cwsr_dgpu` (kfd_process.c) maps the two trap-handler
//!   pages there with `kfd_process_alloc_gpuvm` (CWSR is enabled by default), so a user
//!   MAP_MEMORY_TO_GPU over them fails with EINVAL in `amdgpu_vm_bo_map`'s overlap check.
//!
//! Linux 6.9 reports KFD interface 1.15; 6.8 reports 1.14 (fairly sure, see the simulator's
//! `MINOR_TRAP_AT_TOP`).

mod common;

use common::{PAGE, Session, ioctl, small_config};
use kfd::Errno;
use kfd::abi::{AllocFlags, AllocMemoryOfGpuArgs};
use kfd::ioctl::calls as ioctls;
use kfd::ioctl::requests as req;

/// 2^48 − 2 MiB (CSA) − 2 MiB (SEQ64) − 8 KiB (trap): worked by hand from amdgpu_vm.h.
const TRAP_START_6_9: u64 = 0xFFFF_FFBF_E000;
/// `AMDGPU_VA_RESERVED_BOTTOM`.
const GPUVM_BASE_6_9: u64 = 0x1_0000;
/// `SVM_USER_BASE` (kfd_flat_memory.c before 6.9).
const GPUVM_BASE_OLD: u64 = 0x100_0000;
/// `SVM_CWSR_BASE` = 16 MiB − 8 KiB.
const CWSR_BASE_OLD: u64 = 0xFF_E000;
/// `SVM_IB_BASE` = `SVM_CWSR_BASE` − 4 KiB.
const IB_BASE_OLD: u64 = 0xFF_D000;

fn session(kfd_minor: u32) -> Session {
    Session::new(small_config().with_kfd_minor_version(kfd_minor))
}

/// ALLOC_MEMORY_OF_GPU of GTT at exactly `va`, then MAP_MEMORY_TO_GPU: the map's errno.
fn map_at(s: &Session, va: u64, size: u64) -> Result<(), Errno> {
    let mut args = AllocMemoryOfGpuArgs {
        va_addr: va,
        size,
        gpu_id: s.gpu_id,
        flags: (AllocFlags::GTT | AllocFlags::WRITABLE).bits(),
        ..AllocMemoryOfGpuArgs::default()
    };
    ioctl::<req::AllocMemoryOfGpu>(s.sys(), s.kfd, &mut args).expect("alloc");
    let mut done = 0;
    ioctls::map_memory_to_gpu(s.sys(), s.kfd, args.handle, &[s.gpu_id], &mut done)
        .map_err(|e| e.errno)
}

#[test]
fn the_gpuvm_aperture_starts_where_the_reported_kernel_puts_it() {
    for (minor, base) in [
        (18, GPUVM_BASE_6_9),
        (15, GPUVM_BASE_6_9),
        (14, GPUVM_BASE_OLD),
    ] {
        let s = session(minor);
        let apertures = ioctls::get_process_apertures(s.sys(), s.kfd).unwrap();
        assert_eq!(apertures[0].gpuvm_base, base, "interface 1.{minor}");
        assert_eq!(apertures[0].gpuvm_limit, (1 << 47) - 1);
    }
}

#[test]
fn from_linux_6_9_the_trap_handler_sits_below_the_top_of_the_vm() {
    let s = session(18);
    // Overlapping either trap page, from below or above, or covering both: EINVAL.
    assert_eq!(
        map_at(&s, TRAP_START_6_9 - PAGE, 2 * PAGE),
        Err(Errno::EINVAL)
    );
    assert_eq!(
        map_at(&s, TRAP_START_6_9 + PAGE, 2 * PAGE),
        Err(Errno::EINVAL)
    );
    assert_eq!(map_at(&s, TRAP_START_6_9, 2 * PAGE), Err(Errno::EINVAL));
    // Right next to it on both sides is free.
    map_at(&s, TRAP_START_6_9 - PAGE, PAGE).unwrap();
    map_at(&s, TRAP_START_6_9 + 2 * PAGE, PAGE).unwrap();
    // The old kernel's low 16 MiB are the user's now.
    map_at(&s, CWSR_BASE_OLD, 2 * PAGE).unwrap();
    map_at(&s, IB_BASE_OLD, PAGE).unwrap();
}

#[test]
fn before_linux_6_9_the_trap_handler_and_ib_sit_below_16_mib() {
    let s = session(14);
    assert_eq!(map_at(&s, CWSR_BASE_OLD, PAGE), Err(Errno::EINVAL));
    assert_eq!(
        map_at(&s, CWSR_BASE_OLD + PAGE, 2 * PAGE),
        Err(Errno::EINVAL)
    );
    assert_eq!(map_at(&s, IB_BASE_OLD, PAGE), Err(Errno::EINVAL));
    map_at(&s, IB_BASE_OLD - PAGE, PAGE).unwrap();
    map_at(&s, GPUVM_BASE_OLD, PAGE).unwrap();
    // The top of the VM is free on these kernels.
    map_at(&s, TRAP_START_6_9, 2 * PAGE).unwrap();
}
