//! Buffer objects: every validation row of ALLOC / FREE / MAP / UNMAP (kfd.md §10, §11.4), the
//! memory budget, CPU mappings through the render node and `/dev/kfd`, and what the GPU sees.

// Device views of BO memory are page-aligned; the tests read 8-aligned words of them.
#![allow(clippy::cast_ptr_alignment)]

mod common;

use std::ffi::c_void;
use std::num::NonZeroUsize;
use std::ptr::NonNull;
use std::sync::atomic::Ordering;

use amdgpu_sim::Machine;
use amdgpu_sim::vm::{Access, FaultKind};
use common::{PAGE, Session, ioctl, open_kfd, open_render, small_config};
use kfd::Errno;
use kfd::abi::mmap_offset::{self, DOORBELL_SLICE_SIZE, MmapType};
use kfd::abi::{
    AllocFlags, AllocMemoryOfGpuArgs, MapMemoryToGpuArgs, UnmapMemoryFromGpuArgs, handle_gpu_id,
    handle_idr_id, make_handle,
};
use kfd::ioctl::calls as ioctls;
use kfd::ioctl::requests as req;
use kfd::sys::{MapFlags, ProtFlags};
use test_support::watchdog;

fn pid() -> i32 {
    std::process::id() as i32
}

fn alloc_args(s: &Session, flags: AllocFlags, size: u64) -> AllocMemoryOfGpuArgs {
    AllocMemoryOfGpuArgs {
        va_addr: s.reserve_va(size.max(PAGE)),
        size,
        gpu_id: s.gpu_id,
        flags: flags.bits(),
        ..AllocMemoryOfGpuArgs::default()
    }
}

fn alloc_raw(s: &Session, args: &mut AllocMemoryOfGpuArgs) -> Result<(), Errno> {
    ioctl::<req::AllocMemoryOfGpu>(s.sys(), s.kfd, args)
}

#[test]
fn alloc_validates_size_gpu_and_domain() {
    let s = Session::small();
    let mut zero = alloc_args(&s, AllocFlags::GTT, 0);
    assert_eq!(alloc_raw(&s, &mut zero), Err(Errno::EINVAL));
    let mut unknown = alloc_args(&s, AllocFlags::GTT, PAGE);
    unknown.gpu_id = s.gpu_id ^ 0x4000;
    assert_eq!(alloc_raw(&s, &mut unknown), Err(Errno::EINVAL));
    let mut no_domain = alloc_args(&s, AllocFlags::WRITABLE, PAGE);
    assert_eq!(alloc_raw(&s, &mut no_domain), Err(Errno::EINVAL));
    // The failed call copied the struct back untouched: no handle.
    assert_eq!(no_domain.handle, 0);
    let mut userptr_without_address = alloc_args(&s, AllocFlags::USERPTR, PAGE);
    assert_eq!(
        alloc_raw(&s, &mut userptr_without_address),
        Err(Errno::EINVAL)
    );
    let mut bad_doorbell = alloc_args(&s, AllocFlags::DOORBELL, PAGE);
    assert_eq!(alloc_raw(&s, &mut bad_doorbell), Err(Errno::EINVAL));
    let mut bad_mmio = alloc_args(&s, AllocFlags::MMIO_REMAP, 2 * PAGE);
    assert_eq!(alloc_raw(&s, &mut bad_mmio), Err(Errno::EINVAL));
}

#[test]
fn handles_encode_the_gpu_and_reuse_the_lowest_id() {
    let s = Session::small();
    let a = s.alloc(AllocFlags::GTT, PAGE).unwrap();
    let b = s.alloc(AllocFlags::VRAM, 5000).unwrap();
    assert_eq!(a.handle, make_handle(s.gpu_id, 0));
    assert_eq!(b.handle, make_handle(s.gpu_id, 1));
    assert_eq!(handle_gpu_id(b.handle), s.gpu_id);
    // Render-node offsets are DRM fake offsets above 4 GiB, distinct per BO.
    assert!(a.mmap_offset >= 1 << 32 && b.mmap_offset > a.mmap_offset);
    s.free(&a).unwrap();
    let c = s.alloc(AllocFlags::GTT, PAGE).unwrap();
    assert_eq!(handle_idr_id(c.handle), 0);
    // Freeing twice, or a handle of an unknown GPU: EINVAL.
    s.free(&b).unwrap();
    assert_eq!(s.free(&b), Err(Errno::EINVAL));
    assert_eq!(
        ioctls::free_memory_of_gpu(s.sys(), s.kfd, make_handle(s.gpu_id ^ 1, 0))
            .unwrap_err()
            .errno,
        Errno::EINVAL
    );
}

#[test]
fn public_vram_needs_a_large_bar() {
    let mut config = small_config();
    config.gpus[0].large_bar = false;
    let s = Session::new(config);
    let mut public = alloc_args(&s, AllocFlags::VRAM | AllocFlags::PUBLIC, PAGE);
    assert_eq!(alloc_raw(&s, &mut public), Err(Errno::EINVAL));
    s.alloc(AllocFlags::VRAM, PAGE).unwrap();
}

#[test]
fn vram_runs_out_with_enomem_and_available_memory_agrees() {
    let s = Session::new(small_config().with_vram(256 << 20));
    let available = || ioctls::available_memory(s.sys(), s.kfd, s.gpu_id).unwrap();
    // 256 MiB minus the 8 MiB page-table reserve, in 2 MiB units.
    assert_eq!(available(), 248 << 20);
    assert_eq!(
        ioctls::available_memory(s.sys(), s.kfd, s.gpu_id ^ 2)
            .unwrap_err()
            .errno,
        Errno::EINVAL
    );
    let mut bos = Vec::new();
    let err = loop {
        match s.alloc(AllocFlags::VRAM, 40 << 20) {
            Ok(bo) => bos.push(bo),
            Err(e) => break e,
        }
    };
    assert_eq!(err, Errno::ENOMEM);
    assert_eq!(bos.len(), 6);
    assert_eq!(available(), 8 << 20);
    // A small allocation still fits, and costs 2 MiB of availability.
    let small = s.alloc(AllocFlags::VRAM, PAGE).unwrap();
    assert_eq!(available(), 6 << 20);
    for bo in bos.iter().chain([&small]) {
        s.free(bo).unwrap();
    }
    assert_eq!(available(), 248 << 20);
    // And the memory is there again.
    s.alloc(AllocFlags::VRAM, 200 << 20).unwrap();
}

#[test]
fn userptr_needs_mapped_user_pages() {
    let s = Session::small();
    let mut user = vec![0u64; 1024];
    let addr = user.as_mut_ptr() as u64;
    let page_addr = addr.next_multiple_of(PAGE);
    let mut args = alloc_args(&s, AllocFlags::USERPTR | AllocFlags::WRITABLE, PAGE);
    args.mmap_offset = page_addr;
    alloc_raw(&s, &mut args).unwrap();
    // USERPTR BOs get a GEM offset too, but cannot be mapped through the render node.
    let bo = common::Bo {
        va: args.va_addr,
        size: PAGE,
        handle: args.handle,
        mmap_offset: args.mmap_offset,
    };
    assert_eq!(s.cpu_map(&bo), Err(Errno::EPERM));
    s.map_gpu(&bo, &[s.gpu_id]).unwrap();
    // The GPU sees the user's pages at the BO's VA.
    let vm = s.machine.gpu_vm(pid(), s.gpu_id).unwrap();
    let span = vm.translate(bo.va + 8, 8, Access::Read).unwrap();
    assert_eq!(span.host_address(bo.va + 8) as u64, page_addr + 8);
    // Unmapped user memory: EFAULT.
    let mut unmapped = alloc_args(&s, AllocFlags::USERPTR, PAGE);
    unmapped.mmap_offset = s.reserve_va(PAGE) + (1 << 40);
    assert_eq!(alloc_raw(&s, &mut unmapped), Err(Errno::EFAULT));
    drop(user);
}

#[test]
fn map_and_unmap_validate_their_arguments() {
    let s = Session::small();
    let bo = s
        .alloc(AllocFlags::GTT | AllocFlags::WRITABLE, 2 * PAGE)
        .unwrap();
    let ids = [s.gpu_id];
    let mut map = MapMemoryToGpuArgs {
        handle: bo.handle,
        device_ids_array_ptr: ids.as_ptr() as u64,
        n_devices: 0,
        n_success: 0,
    };
    assert_eq!(
        ioctl::<req::MapMemoryToGpu>(s.sys(), s.kfd, &mut map),
        Err(Errno::EINVAL)
    );
    map.n_devices = 1;
    map.n_success = 2;
    assert_eq!(
        ioctl::<req::MapMemoryToGpu>(s.sys(), s.kfd, &mut map),
        Err(Errno::EINVAL)
    );
    map.n_success = 0;
    map.device_ids_array_ptr = 8;
    assert_eq!(
        ioctl::<req::MapMemoryToGpu>(s.sys(), s.kfd, &mut map),
        Err(Errno::EFAULT)
    );
    map.device_ids_array_ptr = ids.as_ptr() as u64;
    map.handle = make_handle(s.gpu_id ^ 0x10, 0);
    assert_eq!(
        ioctl::<req::MapMemoryToGpu>(s.sys(), s.kfd, &mut map),
        Err(Errno::EINVAL)
    );
    // An unknown BO of a known GPU is ENOMEM (sic).
    map.handle = make_handle(s.gpu_id, 77);
    assert_eq!(
        ioctl::<req::MapMemoryToGpu>(s.sys(), s.kfd, &mut map),
        Err(Errno::ENOMEM)
    );
    // An unknown device in the list: EINVAL, with the devices before it done.
    let two = [s.gpu_id, s.gpu_id ^ 0x20];
    assert_eq!(s.map_gpu(&bo, &two), Err((Errno::EINVAL, 1)));
    // Mapping again is a no-op.
    assert_eq!(s.map_gpu(&bo, &ids), Ok(1));
    // Freeing a mapped BO: EBUSY, and the handle stays valid.
    assert_eq!(s.free(&bo), Err(Errno::EBUSY));

    let mut unmap = UnmapMemoryFromGpuArgs {
        handle: bo.handle,
        device_ids_array_ptr: ids.as_ptr() as u64,
        n_devices: 0,
        n_success: 0,
    };
    assert_eq!(
        ioctl::<req::UnmapMemoryFromGpu>(s.sys(), s.kfd, &mut unmap),
        Err(Errno::EINVAL)
    );
    unmap.n_devices = 1;
    unmap.device_ids_array_ptr = 16;
    assert_eq!(
        ioctl::<req::UnmapMemoryFromGpu>(s.sys(), s.kfd, &mut unmap),
        Err(Errno::EFAULT)
    );
    unmap.device_ids_array_ptr = ids.as_ptr() as u64;
    unmap.handle = make_handle(s.gpu_id, 99);
    assert_eq!(
        ioctl::<req::UnmapMemoryFromGpu>(s.sys(), s.kfd, &mut unmap),
        Err(Errno::ENOMEM)
    );
    assert_eq!(
        s.unmap_gpu(&bo, &[s.gpu_id ^ 0x30]),
        Err((Errno::EINVAL, 0))
    );
    assert_eq!(s.unmap_gpu(&bo, &ids), Ok(1));
    // Unmapping what is not mapped: EINVAL.
    assert_eq!(s.unmap_gpu(&bo, &ids), Err((Errno::EINVAL, 0)));
    s.free(&bo).unwrap();
}

#[test]
fn gpu_virtual_addresses_are_checked_at_map_time() {
    let s = Session::small();
    let flags = AllocFlags::GTT | AllocFlags::WRITABLE;
    let map = |va: u64| {
        let mut args = AllocMemoryOfGpuArgs {
            va_addr: va,
            size: 2 * PAGE,
            gpu_id: s.gpu_id,
            flags: flags.bits(),
            ..AllocMemoryOfGpuArgs::default()
        };
        alloc_raw(&s, &mut args).unwrap();
        let bo = common::Bo {
            va,
            size: 2 * PAGE,
            handle: args.handle,
            mmap_offset: args.mmap_offset,
        };
        s.map_gpu(&bo, &[s.gpu_id]).map(drop).map_err(|e| e.0)
    };
    let base = s.reserve_va(16 * PAGE);
    assert_eq!(map(base + 1), Err(Errno::EINVAL), "unaligned");
    assert_eq!(
        map((1 << 48) - PAGE),
        Err(Errno::EINVAL),
        "beyond the 48-bit VM"
    );
    assert_eq!(map(u64::MAX - PAGE + 1), Err(Errno::EINVAL), "wraps");
    map(base).unwrap();
    assert_eq!(map(base + PAGE), Err(Errno::EINVAL), "overlaps");
    assert_eq!(map(base - PAGE), Err(Errno::EINVAL), "overlaps from below");
    map(base + 2 * PAGE).unwrap();
}

#[test]
fn the_gpu_and_the_cpu_see_the_same_bytes() {
    let s = Session::small();
    let vram = s.vram(2 * PAGE);
    let vm = s.machine.gpu_vm(pid(), s.gpu_id).unwrap();
    // New VRAM reads as zero; a host store is seen by the device and vice versa.
    assert_eq!(vram.word(PAGE).load(Ordering::Relaxed), 0);
    vram.word(PAGE).store(0xC0FFEE, Ordering::Release);
    let span = vm.translate(vram.va + PAGE, 8, Access::Read).unwrap();
    let device_view = span
        .host_address(vram.va + PAGE)
        .cast::<std::sync::atomic::AtomicU64>();
    // SAFETY: the span keeps the backing alive and the address is 8-aligned inside it.
    let device_view = unsafe { &*device_view };
    assert_eq!(device_view.load(Ordering::Acquire), 0xC0FFEE);
    device_view.store(7, Ordering::Release);
    assert_eq!(vram.word(PAGE).load(Ordering::Acquire), 7);
    // Outside the BO, and writes to a read-only BO, fault.
    assert_eq!(
        vm.translate(vram.va + 2 * PAGE, 4, Access::Read)
            .unwrap_err()
            .kind,
        FaultKind::NotPresent
    );
    let ro = s.alloc(AllocFlags::GTT, PAGE).unwrap();
    s.map_gpu(&ro, &[s.gpu_id]).unwrap();
    assert_eq!(
        vm.translate(ro.va, 4, Access::Write).unwrap_err().kind,
        FaultKind::ReadOnly
    );
    assert_eq!(
        vm.translate(ro.va, 4, Access::Execute).unwrap_err().kind,
        FaultKind::NoExecute
    );
    // Unmapping takes the range away from the device.
    let generation = vm.generation();
    s.unmap_gpu(&vram, &[s.gpu_id]).unwrap();
    assert!(vm.generation() > generation);
    assert!(vm.translate(vram.va, 4, Access::Read).is_err());
    // The span handed out before still points at live memory.
    assert_eq!(device_view.load(Ordering::Acquire), 7);
}

#[test]
fn render_node_mmap_checks_offsets_and_grants() {
    let s = Session::small();
    let bo = s
        .alloc(AllocFlags::VRAM | AllocFlags::WRITABLE, 2 * PAGE)
        .unwrap();
    let try_map = |fd: i32, offset: u64, len: u64| {
        // SAFETY: a fresh mapping without MAP_FIXED replaces nothing.
        unsafe {
            s.sys().mmap(
                None,
                NonZeroUsize::new(len as usize).unwrap(),
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_SHARED,
                Some(fd),
                offset,
            )
        }
    };
    assert_eq!(
        try_map(s.render, bo.mmap_offset + PAGE, PAGE),
        Err(Errno::EINVAL)
    );
    assert_eq!(try_map(s.render, 1 << 33, PAGE), Err(Errno::EINVAL));
    assert_eq!(
        try_map(s.render, bo.mmap_offset, 3 * PAGE),
        Err(Errno::EINVAL)
    );
    assert_eq!(
        try_map(s.render, bo.mmap_offset + 8, PAGE),
        Err(Errno::EINVAL)
    );
    // Another open of the render node is another DRM file: not allowed to map the BO.
    let other = open_render(&s.machine, 128);
    assert_eq!(try_map(other, bo.mmap_offset, PAGE), Err(Errno::EACCES));
    let ptr = try_map(s.render, bo.mmap_offset, 2 * PAGE).unwrap();
    let mappings = s.machine.process_counts(pid()).cpu_mappings;
    // FREE revokes the grant, but the existing mapping keeps the memory (and its VRAM).
    let used = s.machine.counts();
    s.free(&bo).unwrap();
    assert_eq!(try_map(s.render, bo.mmap_offset, PAGE), Err(Errno::EACCES));
    assert_eq!(used.buffer_objects - 1, s.machine.counts().buffer_objects);
    assert_eq!(
        ioctls::available_memory(s.sys(), s.kfd, s.gpu_id).unwrap(),
        (1024 - 8 - 2) << 20
    );
    // SAFETY: the mapping is ours and unused afterwards.
    unsafe { s.sys().munmap(ptr, 2 * PAGE as usize) }.unwrap();
    assert_eq!(s.machine.process_counts(pid()).cpu_mappings, mappings - 1);
    assert_eq!(
        ioctls::available_memory(s.sys(), s.kfd, s.gpu_id).unwrap(),
        (1024 - 8) << 20
    );
    assert_eq!(try_map(s.render, bo.mmap_offset, PAGE), Err(Errno::EINVAL));
}

#[test]
fn kfd_mmaps_use_the_kernel_offset_encodings() {
    let s = Session::small();
    let doorbell = mmap_offset::encode(MmapType::Doorbell, s.gpu_id, 0);
    assert_eq!(
        s.kfd_mmap(doorbell, PAGE as usize).unwrap_err(),
        Errno::EINVAL
    );
    assert_eq!(
        s.kfd_mmap(
            mmap_offset::encode(MmapType::Doorbell, 0, 0),
            DOORBELL_SLICE_SIZE
        )
        .unwrap_err(),
        Errno::ENODEV
    );
    assert_eq!(
        s.kfd_mmap(
            mmap_offset::encode(MmapType::Doorbell, s.gpu_id ^ 8, 0),
            DOORBELL_SLICE_SIZE
        )
        .unwrap_err(),
        Errno::ENODEV
    );
    let slice = s.kfd_mmap(doorbell, DOORBELL_SLICE_SIZE).unwrap();
    // The DOORBELL BO is the same slice.
    let bo = s
        .alloc(
            AllocFlags::DOORBELL | AllocFlags::WRITABLE,
            DOORBELL_SLICE_SIZE as u64,
        )
        .unwrap();
    s.map_gpu(&bo, &[s.gpu_id]).unwrap();
    // SAFETY: the slice mapping is live, 8 KiB, read-write.
    unsafe { slice.cast::<u64>().add(3).write_volatile(0x55) };
    let vm = s.machine.gpu_vm(pid(), s.gpu_id).unwrap();
    let span = vm.translate(bo.va + 24, 8, Access::Read).unwrap();
    // SAFETY: the span keeps the slice alive; the address is inside it and 8-aligned.
    let seen = unsafe { span.host_address(bo.va + 24).cast::<u64>().read_volatile() };
    assert_eq!(seen, 0x55);

    let mmio = mmap_offset::encode(MmapType::Mmio, s.gpu_id, 0);
    assert_eq!(
        s.kfd_mmap(mmio, 2 * PAGE as usize).unwrap_err(),
        Errno::EINVAL
    );
    assert_eq!(
        s.kfd_mmap(mmap_offset::encode(MmapType::Mmio, 0, 0), PAGE as usize)
            .unwrap_err(),
        Errno::ENODEV
    );
    s.kfd_mmap(mmio, PAGE as usize).unwrap();
    // The MMIO_REMAP BO returns exactly that offset.
    let remap = s
        .alloc(AllocFlags::MMIO_REMAP | AllocFlags::WRITABLE, PAGE)
        .unwrap();
    assert_eq!(remap.mmap_offset, mmio);

    let reserved = mmap_offset::encode(MmapType::ReservedMem, s.gpu_id, 0);
    assert_eq!(
        s.kfd_mmap(reserved, PAGE as usize).unwrap_err(),
        Errno::EINVAL
    );
    s.kfd_mmap(reserved, 2 * PAGE as usize).unwrap();
    // No event page yet: EINVAL.
    assert_eq!(
        s.kfd_mmap(MmapType::Events.bits(), 32 << 10).unwrap_err(),
        Errno::EINVAL
    );
    // An offset that is not page-aligned is refused by mmap itself.
    assert_eq!(
        s.kfd_mmap(doorbell + 8, DOORBELL_SLICE_SIZE).unwrap_err(),
        Errno::EINVAL
    );
    assert!(s.machine.process_counts(pid()).cpu_mappings >= 3);
}

#[test]
fn a_peer_gpu_must_be_bound_before_mapping_on_it() {
    let m = Machine::new(small_config().with_gpu_count(2).with_xgmi_hive(true)).unwrap();
    let gpus = m.gpus();
    let kfd = open_kfd(&m);
    let render = open_render(&m, gpus[0].render_minor);
    ioctls::acquire_vm(&m, kfd, render, gpus[0].gpu_id).unwrap();
    let mut args = AllocMemoryOfGpuArgs {
        va_addr: 0x7000_0000_0000,
        size: PAGE,
        gpu_id: gpus[0].gpu_id,
        flags: AllocFlags::VRAM.bits(),
        ..AllocMemoryOfGpuArgs::default()
    };
    ioctl::<req::AllocMemoryOfGpu>(&m, kfd, &mut args).unwrap();
    let ids = [gpus[0].gpu_id, gpus[1].gpu_id];
    let mut done = 0;
    let err = ioctls::map_memory_to_gpu(&m, kfd, args.handle, &ids, &mut done).unwrap_err();
    assert_eq!((err.errno, done), (Errno::ENODEV, 1));
    let render1 = open_render(&m, gpus[1].render_minor);
    ioctls::acquire_vm(&m, kfd, render1, gpus[1].gpu_id).unwrap();
    // Resume from n_success.
    ioctls::map_memory_to_gpu(&m, kfd, args.handle, &ids, &mut done).unwrap();
    assert_eq!(done, 2);
    // Both GPUs' address spaces hold the BO at its VA.
    for id in ids {
        m.gpu_vm(pid(), id)
            .unwrap()
            .translate(0x7000_0000_0000, 8, Access::Read)
            .unwrap();
    }
}

/// `len` bytes of fresh anonymous user memory, registered as a userptr BO and mapped on the
/// session's GPU, which can write it (checked).
fn userptr_on_the_gpu(s: &Session, len: NonZeroUsize) -> (NonNull<c_void>, common::Bo) {
    // SAFETY: a fresh anonymous mapping without MAP_FIXED replaces nothing.
    let user = unsafe {
        s.sys().mmap(
            None,
            len,
            ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
            MapFlags::MAP_PRIVATE | MapFlags::MAP_ANONYMOUS,
            None,
            0,
        )
    }
    .unwrap();
    let mut args = alloc_args(
        s,
        AllocFlags::USERPTR | AllocFlags::WRITABLE,
        len.get() as u64,
    );
    args.mmap_offset = user.as_ptr() as u64;
    alloc_raw(s, &mut args).unwrap();
    let bo = common::Bo {
        va: args.va_addr,
        size: len.get() as u64,
        handle: args.handle,
        mmap_offset: 0,
    };
    s.map_gpu(&bo, &[s.gpu_id]).unwrap();
    let vm = s.machine.gpu_vm(pid(), s.gpu_id).unwrap();
    vm.translate(bo.va, 8, Access::Write).unwrap();
    (user, bo)
}

#[test]
fn unmapping_user_memory_takes_it_from_the_gpu() {
    let s = Session::small();
    let len = NonZeroUsize::new(2 * PAGE as usize).unwrap();
    let (user, bo) = userptr_on_the_gpu(&s, len);
    let vm = s.machine.gpu_vm(pid(), s.gpu_id).unwrap();
    // SAFETY: the mapping is ours; the BO no longer gives the GPU access to it afterwards.
    unsafe { s.sys().munmap(user, len.get()) }.unwrap();
    assert_eq!(
        vm.translate(bo.va, 8, Access::Write).unwrap_err().kind,
        FaultKind::NotPresent
    );
    // The BO is still mapped as far as the kernel's bookkeeping goes.
    assert_eq!(s.free(&bo), Err(Errno::EBUSY));
    s.unmap_gpu(&bo, &[s.gpu_id]).unwrap();
    s.free(&bo).unwrap();
}

/// `mmap(MAP_FIXED)` over a mapping unmaps it first, as `mmap_region` does: user pages under a
/// userptr BO leave the GPU (the MMU notifier), and a render-node mapping replaced by a
/// reservation lets its BO go. The driver gives a buffer's range back this way, atomically.
#[test]
fn a_map_fixed_replacement_unmaps_what_it_replaces() {
    let s = Session::small();
    let len = NonZeroUsize::new(2 * PAGE as usize).unwrap();
    let reserve_over = |addr: NonNull<c_void>, len: NonZeroUsize| {
        // SAFETY: the range is this test's own mapping, unused from here on.
        let replaced = unsafe {
            s.sys().mmap(
                NonZeroUsize::new(addr.as_ptr() as usize),
                len,
                ProtFlags::PROT_NONE,
                MapFlags::MAP_PRIVATE
                    | MapFlags::MAP_ANONYMOUS
                    | MapFlags::MAP_NORESERVE
                    | MapFlags::MAP_FIXED,
                None,
                0,
            )
        }
        .unwrap();
        assert_eq!(replaced, addr);
    };
    let (user, userptr) = userptr_on_the_gpu(&s, len);
    let vm = s.machine.gpu_vm(pid(), s.gpu_id).unwrap();
    reserve_over(user, len);
    assert_eq!(
        vm.translate(userptr.va, 8, Access::Write).unwrap_err().kind,
        FaultKind::NotPresent,
        "the user pages were replaced"
    );
    s.unmap_gpu(&userptr, &[s.gpu_id]).unwrap();
    s.free(&userptr).unwrap();

    let free_vram = || ioctls::available_memory(s.sys(), s.kfd, s.gpu_id).unwrap();
    let vram_before = free_vram();
    let mappings_before = s.machine.process_counts(pid()).cpu_mappings;
    let vram = s
        .alloc(AllocFlags::VRAM | AllocFlags::WRITABLE, 2 * PAGE)
        .unwrap();
    // SAFETY: a fresh mapping without MAP_FIXED replaces nothing.
    let cpu = unsafe {
        s.sys().mmap(
            None,
            len,
            ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
            MapFlags::MAP_SHARED,
            Some(s.render),
            vram.mmap_offset,
        )
    }
    .unwrap();
    s.free(&vram).unwrap();
    // The mapping keeps the freed BO's memory (VRAM is counted in whole 2 MiB blocks).
    assert!(free_vram() < vram_before);
    reserve_over(cpu, len);
    assert_eq!(
        free_vram(),
        vram_before,
        "the replaced mapping let the BO go"
    );
    assert_eq!(
        s.machine.process_counts(pid()).cpu_mappings,
        mappings_before
    );
    // SAFETY: the reservation is ours and unused.
    unsafe { s.sys().munmap(cpu, len.get()) }.unwrap();
}

#[test]
fn aql_queue_memory_is_half_allocated_and_mapped_twice() {
    let s = Session::small();
    let bo = s
        .alloc(
            AllocFlags::GTT | AllocFlags::WRITABLE | AllocFlags::AQL_QUEUE_MEM,
            2 * PAGE,
        )
        .unwrap();
    s.map_gpu(&bo, &[s.gpu_id]).unwrap();
    let vm = s.machine.gpu_vm(pid(), s.gpu_id).unwrap();
    let first = vm.translate(bo.va, 8, Access::Write).unwrap();
    let second = vm.translate(bo.va + PAGE, 8, Access::Write).unwrap();
    assert_eq!(first.host_address(bo.va), second.host_address(bo.va + PAGE));
    assert!(vm.translate(bo.va + 2 * PAGE, 8, Access::Read).is_err());
}

#[test]
fn concurrent_allocations_leave_nothing_behind() {
    let s = Session::small();
    let baseline = s.machine.counts();
    let _watchdog = watchdog::arm(
        watchdog::HANG_DEADLINE,
        "four threads allocating and freeing",
    );
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for i in 0..40u64 {
                    let flags = if i % 2 == 0 {
                        AllocFlags::VRAM
                    } else {
                        AllocFlags::GTT
                    };
                    let bo = s
                        .alloc(flags | AllocFlags::WRITABLE, PAGE * (1 + i % 3))
                        .unwrap();
                    s.cpu_map(&bo).unwrap();
                    s.map_gpu(&bo, &[s.gpu_id]).unwrap();
                    bo.word(0).store(i, Ordering::Relaxed);
                    s.unmap_gpu(&bo, &[s.gpu_id]).unwrap();
                    s.free(&bo).unwrap();
                    let ptr = std::ptr::NonNull::new(bo.va as *mut std::ffi::c_void).unwrap();
                    // SAFETY: the BO's CPU mapping belongs to this iteration and is unused now.
                    unsafe { s.sys().munmap(ptr, bo.size as usize) }.unwrap();
                }
            });
        }
    });
    let after = s.machine.counts();
    assert_eq!(after, baseline);
    assert_eq!(
        ioctls::available_memory(s.sys(), s.kfd, s.gpu_id).unwrap(),
        (1024 - 8) << 20
    );
}
