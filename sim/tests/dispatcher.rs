//! The ioctl dispatcher's semantics (kfd_ioctl): unknown and deprecated numbers, the caller's
//! size against the kernel's, copy-in/copy-out, EFAULT, EBADF, version-gated ioctls, injected
//! failures; and the small per-process ioctls.

mod common;

use std::ffi::c_void;
use std::path::Path;

use amdgpu_sim::{Machine, MachineConfig};
use common::{Session, open_kfd, small_config};
use kfd::Errno;
use kfd::abi::{
    CachePolicy, CreateQueueArgs, GetClockCountersArgs, GetVersionArgs, KFD_IOCTL_MAJOR_VERSION,
    SetMemoryPolicyArgs,
};
use kfd::ioctl::calls as ioctls;
use kfd::ioctl::{Direction, Opcode};
use kfd::sys::{OFlag, Sys};

/// Issue a raw request on `arg` (a byte buffer standing in for any struct).
fn raw(sys: &dyn Sys, fd: i32, request: Opcode, arg: *mut c_void) -> Result<i32, Errno> {
    // SAFETY: `arg` points at a live buffer at least `request.size()` long (or is a deliberately
    // bad pointer the simulated kernel answers with EFAULT without touching it).
    unsafe { sys.ioctl(fd, request, arg) }
}

fn kfd_request(direction: Direction, nr: u8, size: usize) -> Opcode {
    Opcode::new(direction, b'K', nr, size)
}

#[test]
fn unknown_and_deprecated_numbers() {
    let s = Session::small();
    let mut buf = [0u8; 64];
    let p = buf.as_mut_ptr().cast();
    // Outside the table: ENOTTY (current kernels; older ones answered EINVAL).
    for nr in [0x00, 0x27, 0x28, 0x80, 0xFF] {
        assert_eq!(
            raw(s.sys(), s.kfd, kfd_request(Direction::ReadWrite, nr, 8), p),
            Err(Errno::ENOTTY),
            "nr {nr:#x}"
        );
    }
    // The 2014 debugger ioctls: EPERM (after their argument was copied in).
    for (nr, size) in [(0x0D, 8), (0x0E, 8), (0x0F, 16), (0x10, 16)] {
        assert_eq!(
            raw(s.sys(), s.kfd, kfd_request(Direction::Write, nr, size), p),
            Err(Errno::EPERM)
        );
        assert_eq!(
            raw(
                s.sys(),
                s.kfd,
                kfd_request(Direction::Write, nr, size),
                8 as *mut c_void
            ),
            Err(Errno::EFAULT)
        );
    }
    // The type byte is not checked: a 'd' request with a KFD number is that KFD ioctl.
    let mut version = GetVersionArgs::default();
    let request = Opcode::new(Direction::Read, b'd', 0x01, 8);
    raw(s.sys(), s.kfd, request, (&raw mut version).cast()).unwrap();
    assert_eq!(version.major_version, KFD_IOCTL_MAJOR_VERSION);
}

#[test]
fn caller_sizes_are_zero_extended_and_copied_back_as_given() {
    let s = Session::small();
    // GET_VERSION with a 4-byte struct: only major comes back; the byte after is untouched.
    let mut buf = [0xAAu8; 8];
    raw(
        s.sys(),
        s.kfd,
        kfd_request(Direction::Read, 0x01, 4),
        buf.as_mut_ptr().cast(),
    )
    .unwrap();
    assert_eq!(u32::from_ne_bytes(buf[..4].try_into().unwrap()), 1);
    assert_eq!(buf[4..], [0xAA; 4]);
    // GET_CLOCK_COUNTERS with a longer struct: the tail is copied in and back unchanged.
    let mut long = [0x5Au8; 48];
    long[32..36].copy_from_slice(&s.gpu_id.to_ne_bytes());
    raw(
        s.sys(),
        s.kfd,
        kfd_request(Direction::ReadWrite, 0x05, 48),
        long.as_mut_ptr().cast(),
    )
    .unwrap();
    assert_ne!(
        u64::from_ne_bytes(long[..8].try_into().unwrap()),
        0x5A5A_5A5A_5A5A_5A5A
    );
    assert_eq!(
        u64::from_ne_bytes(long[24..32].try_into().unwrap()),
        1_000_000_000
    );
    assert_eq!(long[40..], [0x5A; 8]);
    // The table's direction decides: a "write-only" caller still gets GET_VERSION's answer.
    let mut version = GetVersionArgs::default();
    raw(
        s.sys(),
        s.kfd,
        kfd_request(Direction::Write, 0x01, 8),
        (&raw mut version).cast(),
    )
    .unwrap();
    assert_eq!(version.major_version, 1);
}

#[test]
fn bad_argument_pointers_fault() {
    let s = Session::small();
    assert_eq!(
        raw(
            s.sys(),
            s.kfd,
            kfd_request(Direction::Read, 0x01, 8),
            std::ptr::null_mut()
        ),
        Err(Errno::EFAULT)
    );
    assert_eq!(
        raw(
            s.sys(),
            s.kfd,
            kfd_request(Direction::ReadWrite, 0x05, 40),
            4096 as *mut c_void
        ),
        Err(Errno::EFAULT)
    );
}

#[test]
fn outputs_come_back_even_when_the_ioctl_fails() {
    let s = Session::small();
    // CREATE_QUEUE clamps a small ring to 1024 bytes before failing on the missing buffers;
    // the clamped size is what the caller reads back.
    let mut args = CreateQueueArgs {
        ring_size: 256,
        gpu_id: s.gpu_id,
        queue_type: 2,
        queue_percentage: 100,
        read_pointer_address: 0x1000,
        write_pointer_address: 0x1000,
        ..CreateQueueArgs::default()
    };
    assert_eq!(s.create_queue(&mut args), Err(Errno::EINVAL));
    assert_eq!(args.ring_size, 1024);
}

#[test]
fn only_the_opener_may_use_a_kfd_file_and_host_fds_behave_as_on_linux() {
    let m = Machine::new(small_config()).unwrap();
    let kfd = open_kfd(&m);
    ioctls::get_version(&m, kfd).unwrap();
    // A host file: the real kernel answers.
    let null = m.open(Path::new("/dev/null"), OFlag::O_RDWR).unwrap();
    assert_eq!(
        ioctls::get_version(&m, null).unwrap_err().errno,
        Errno::ENOTTY
    );
    m.close(null).unwrap();
    // After close the machine forgets the file. The number itself is not probed again: other
    // tests in this process may be handed the same fd number at once, so an ioctl or a second
    // close on it could reach their file. An fd that cannot exist gives EBADF, as on Linux.
    m.close(kfd).unwrap();
    assert_eq!(m.counts().open_files, 0);
    assert_eq!(ioctls::get_version(&m, -1).unwrap_err().errno, Errno::EBADF);
    assert_eq!(m.close(-1), Err(Errno::EBADF));
    // Paths under /dev/dri that are no simulated node, and other machines' nodes: ENOENT.
    assert_eq!(
        m.open(Path::new("/dev/dri/renderD129"), OFlag::O_RDWR),
        Err(Errno::ENOENT)
    );
    assert_eq!(
        m.open(Path::new("/dev/dri/card0"), OFlag::O_RDWR),
        Err(Errno::ENOENT)
    );
    assert_eq!(m.counts().open_files, 0);
}

#[test]
fn ioctls_newer_than_the_interface_version_are_unknown() {
    // A Linux 6.1 kernel: KFD 1.11, no RUNTIME_ENABLE (0x25) and a 88-byte CREATE_QUEUE.
    let s = Session::new(small_config().with_kfd_minor_version(11));
    assert_eq!(
        ioctls::get_version(s.sys(), s.kfd).unwrap().minor_version,
        11
    );
    assert_eq!(
        ioctls::runtime_enable(s.sys(), s.kfd, 0, 0)
            .unwrap_err()
            .errno,
        Errno::ENOTTY
    );
    ioctls::available_memory(s.sys(), s.kfd, s.gpu_id).unwrap();
    let newest = Session::small();
    assert_eq!(
        ioctls::get_version(newest.sys(), newest.kfd)
            .unwrap()
            .minor_version,
        18
    );
    ioctls::runtime_enable(newest.sys(), newest.kfd, 0, 1).unwrap();
    assert_eq!(
        ioctls::runtime_enable(newest.sys(), newest.kfd, 0, 1)
            .unwrap_err()
            .errno,
        Errno::EBUSY
    );
    ioctls::runtime_enable(newest.sys(), newest.kfd, 0, 0).unwrap();
    assert!(Machine::new(MachineConfig::mi210().with_kfd_minor_version(40)).is_err());
}

#[test]
fn injected_failures_hit_the_named_request_only() {
    let s = Session::small();
    s.machine.inject().fail_ioctls(0x01, Errno::EINTR, 2);
    assert_eq!(
        ioctls::get_version(s.sys(), s.kfd).unwrap_err().errno,
        Errno::EINTR
    );
    ioctls::available_memory(s.sys(), s.kfd, s.gpu_id).unwrap();
    assert_eq!(
        ioctls::get_version(s.sys(), s.kfd).unwrap_err().errno,
        Errno::EINTR
    );
    ioctls::get_version(s.sys(), s.kfd).unwrap();
    s.machine.inject().fail_ioctls(0x23, Errno::EAGAIN, 5);
    assert_eq!(s.machine.inject().pending_ioctl_failures(), 5);
    s.machine.inject().clear();
    assert_eq!(s.machine.inject().pending_ioctl_failures(), 0);
    ioctls::available_memory(s.sys(), s.kfd, s.gpu_id).unwrap();
}

#[test]
fn per_process_settings_validate_gpu_and_binding() {
    let s = Session::small();
    let unknown = s.gpu_id ^ 0x100;
    // SET_MEMORY_POLICY: policies 0/1 only, a known GPU, bound (ESRCH otherwise).
    assert_eq!(
        ioctls::set_memory_policy(
            s.sys(),
            s.kfd,
            s.gpu_id,
            CachePolicy(2),
            CachePolicy::COHERENT
        )
        .unwrap_err()
        .errno,
        Errno::EINVAL
    );
    assert_eq!(
        ioctls::set_memory_policy(
            s.sys(),
            s.kfd,
            unknown,
            CachePolicy::COHERENT,
            CachePolicy::COHERENT
        )
        .unwrap_err()
        .errno,
        Errno::EINVAL
    );
    ioctls::set_memory_policy(
        s.sys(),
        s.kfd,
        s.gpu_id,
        CachePolicy::NONCOHERENT,
        CachePolicy::COHERENT,
    )
    .unwrap();
    let mut policy = SetMemoryPolicyArgs {
        gpu_id: s.gpu_id,
        misc_process_flag: 1,
        ..Default::default()
    };
    common::ioctl::<kfd::ioctl::requests::SetMemoryPolicy>(s.sys(), s.kfd, &mut policy).unwrap();
    let unbound = Machine::new(small_config()).unwrap();
    let kfd = open_kfd(&unbound);
    let gpu = unbound.gpus()[0].gpu_id;
    assert_eq!(
        ioctls::set_memory_policy(
            &unbound,
            kfd,
            gpu,
            CachePolicy::COHERENT,
            CachePolicy::COHERENT
        )
        .unwrap_err()
        .errno,
        Errno::ESRCH
    );
    // SAFETY: the trap handler addresses are never used by the simulated GPU.
    let trap = unsafe { ioctls::set_trap_handler(&unbound, kfd, gpu, 0x1000, 0x2000) };
    assert_eq!(trap.unwrap_err().errno, Errno::ESRCH);
    // SAFETY: as above.
    let trap = unsafe { ioctls::set_trap_handler(&unbound, kfd, unknown, 0, 0) };
    assert_eq!(trap.unwrap_err().errno, Errno::EINVAL);
    // SAFETY: the scratch address is never used by the simulated GPU.
    let scratch = unsafe { ioctls::set_scratch_backing_va(&unbound, kfd, gpu, 0x1000) };
    assert_eq!(scratch.unwrap_err().errno, Errno::ENODEV);
    // SAFETY: as above.
    unsafe { ioctls::set_scratch_backing_va(s.sys(), s.kfd, s.gpu_id, 0x1000) }.unwrap();

    // XNACK: query (negative), set while no queue exists.
    assert_eq!(ioctls::set_xnack_mode(s.sys(), s.kfd, -1).unwrap(), 0);
    ioctls::set_xnack_mode(s.sys(), s.kfd, 1).unwrap();
    assert_eq!(ioctls::set_xnack_mode(s.sys(), s.kfd, -1).unwrap(), 1);

    // Clock counters: an unknown GPU is no error, its GPU counter is 0.
    let known = ioctls::get_clock_counters(s.sys(), s.kfd, s.gpu_id).unwrap();
    assert!(known.gpu_clock_counter > 0 && known.cpu_clock_counter > 0);
    assert_eq!(known.system_clock_freq, 1_000_000_000);
    let mut args = GetClockCountersArgs {
        gpu_id: unknown,
        ..Default::default()
    };
    common::ioctl::<kfd::ioctl::requests::GetClockCounters>(s.sys(), s.kfd, &mut args).unwrap();
    assert_eq!(args.gpu_clock_counter, 0);

    // Apertures: one entry per GPU, GFX9 layout, even before ACQUIRE_VM.
    let apertures = ioctls::get_process_apertures(&unbound, kfd).unwrap();
    assert_eq!(apertures.len(), 1);
    assert_eq!(apertures[0].gpu_id, gpu);
    assert_eq!(apertures[0].lds_base, 1 << 48);
    assert_eq!(apertures[0].scratch_base, 2 << 48);
    assert_eq!(apertures[0].gpuvm_limit, (1 << 47) - 1);
}

#[test]
fn apertures_array_faults_and_sizes() {
    let s = Session::new(small_config().with_gpu_count(3));
    let mut args = kfd::abi::GetProcessAperturesNewArgs::default();
    common::ioctl::<kfd::ioctl::requests::GetProcessAperturesNew>(s.sys(), s.kfd, &mut args)
        .unwrap();
    assert_eq!(args.num_of_nodes, 3);
    let mut two = [kfd::abi::ProcessDeviceApertures::default(); 2];
    args.kfd_process_device_apertures_ptr = two.as_mut_ptr() as u64;
    args.num_of_nodes = 2;
    common::ioctl::<kfd::ioctl::requests::GetProcessAperturesNew>(s.sys(), s.kfd, &mut args)
        .unwrap();
    assert_eq!(args.num_of_nodes, 2);
    assert_eq!(two[1].gpu_id, s.gpu_ids[1]);
    args.kfd_process_device_apertures_ptr = 64;
    assert_eq!(
        common::ioctl::<kfd::ioctl::requests::GetProcessAperturesNew>(s.sys(), s.kfd, &mut args),
        Err(Errno::EFAULT)
    );
    args.num_of_nodes = 1 << 20;
    assert_eq!(
        common::ioctl::<kfd::ioctl::requests::GetProcessAperturesNew>(s.sys(), s.kfd, &mut args),
        Err(Errno::ENOMEM)
    );
}

/// Issue request `nr` with a buffer of `size` bytes, returning the errno and the buffer.
fn raw_buf(
    s: &Session,
    nr: u8,
    size: usize,
    fill: impl FnOnce(&mut [u8]),
) -> (Result<i32, Errno>, Vec<u8>) {
    let mut buf = vec![0u8; size];
    fill(&mut buf);
    let r = raw(
        s.sys(),
        s.kfd,
        kfd_request(Direction::ReadWrite, nr, size),
        buf.as_mut_ptr().cast(),
    );
    (r, buf)
}

fn put(buf: &mut [u8], at: usize, bytes: &[u8]) {
    buf[at..at + bytes.len()].copy_from_slice(bytes);
}

#[test]
fn the_rarely_used_ioctls_check_their_arguments() {
    let s = Session::new(small_config().with_gpu_count(2));
    // The old GET_PROCESS_APERTURES: the array inside the struct, num_of_nodes at byte 392.
    let mut old = vec![0u8; 400];
    raw(
        s.sys(),
        s.kfd,
        kfd_request(Direction::Read, 0x06, 400),
        old.as_mut_ptr().cast(),
    )
    .unwrap();
    assert_eq!(u32::from_ne_bytes(old[392..396].try_into().unwrap()), 2);
    assert_eq!(
        u32::from_ne_bytes(old[48..52].try_into().unwrap()),
        s.gpu_ids[0]
    );
    assert_eq!(
        u32::from_ne_bytes(old[104..108].try_into().unwrap()),
        s.gpu_ids[1]
    );

    // GET_TILE_CONFIG: counts are clamped to the tables (32, 16), unknown GPUs are EINVAL.
    let mut tiles = [u32::MAX; 40];
    let (r, buf) = raw_buf(&s, 0x12, 40, |b| {
        put(b, 0, &(tiles.as_mut_ptr() as u64).to_ne_bytes());
        put(b, 8, &(tiles.as_mut_ptr() as u64).to_ne_bytes());
        put(b, 16, &100u32.to_ne_bytes());
        put(b, 20, &100u32.to_ne_bytes());
        put(b, 24, &s.gpu_id.to_ne_bytes());
    });
    r.unwrap();
    assert_eq!(u32::from_ne_bytes(buf[16..20].try_into().unwrap()), 32);
    assert_eq!(u32::from_ne_bytes(buf[20..24].try_into().unwrap()), 16);
    assert_eq!(tiles[..32], [0; 32]);
    assert_eq!(tiles[32], 0xFFFF_FFFF);
    let (r, _) = raw_buf(&s, 0x12, 40, |b| put(b, 24, &7u32.to_ne_bytes()));
    assert_eq!(r, Err(Errno::EINVAL));

    // SVM: start and size page-aligned and non-zero, attributes inside the caller's struct.
    let svm = |start: u64, size: u64, nattr: u32, user_size: usize| {
        raw_buf(&s, 0x20, user_size, |b| {
            put(b, 0, &start.to_ne_bytes());
            put(b, 8, &size.to_ne_bytes());
            put(b, 20, &nattr.to_ne_bytes());
        })
        .0
    };
    assert_eq!(svm(0x1001, 4096, 0, 24), Err(Errno::EINVAL));
    assert_eq!(svm(0x1000, 100, 0, 24), Err(Errno::EINVAL));
    assert_eq!(svm(0, 4096, 0, 24), Err(Errno::EINVAL));
    assert_eq!(svm(0x1000, 4096, 2, 24), Err(Errno::EINVAL));
    // Valid arguments reach the SVM code, which the simulator does not model.
    assert_eq!(svm(0x1000, 4096, 2, 40), Err(Errno::EOPNOTSUPP));

    // dma-buf: bad gpu / handle are EINVAL; fds that are no dma-buf EBADF or EINVAL.
    let (r, _) = raw_buf(&s, 0x1D, 24, |b| put(b, 16, &3u32.to_ne_bytes()));
    assert_eq!(r, Err(Errno::EINVAL));
    let (r, _) = raw_buf(&s, 0x1D, 24, |b| {
        put(b, 16, &s.gpu_id.to_ne_bytes());
        put(b, 20, &u32::MAX.to_ne_bytes());
    });
    assert_eq!(r, Err(Errno::EBADF));
    let (r, _) = raw_buf(&s, 0x1C, 32, |b| put(b, 28, &(s.kfd as u32).to_ne_bytes()));
    assert_eq!(r, Err(Errno::EINVAL));
    let (r, _) = raw_buf(&s, 0x24, 16, |b| {
        put(b, 0, &kfd::abi::make_handle(s.gpu_id, 5).to_ne_bytes());
    });
    assert_eq!(r, Err(Errno::EINVAL));

    // SMI events: the GPU must exist.
    let (r, _) = raw_buf(&s, 0x1F, 8, |b| put(b, 0, &1u32.to_ne_bytes()));
    assert_eq!(r, Err(Errno::EINVAL));

    // DBG_TRAP on a pid without a KFD process: ESRCH; on ourselves, a non-enable op while not
    // debug-enabled: EINVAL.
    let (r, _) = raw_buf(&s, 0x26, 32, |b| put(b, 0, &i32::MAX.to_ne_bytes()));
    assert_eq!(r, Err(Errno::ESRCH));
    let me = std::process::id();
    let (r, _) = raw_buf(&s, 0x26, 32, |b| {
        put(b, 0, &me.to_ne_bytes());
        put(b, 4, &3u32.to_ne_bytes());
    });
    assert_eq!(r, Err(Errno::EINVAL));
}
