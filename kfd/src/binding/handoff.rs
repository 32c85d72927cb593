//! The handoff of a binding on the real kernel from an unloaded copy of the driver to a fresh
//! one in the same process (issue 11).
//!
//! When a program unloads a plugin that embeds aqueduct (`dlclose`) and loads it again, the
//! fresh copy starts with zeroed statics, but the kernel still holds what the first copy bound
//! (kfd.md §7): the KFD process, each GPU's VM bound to the first copy's render-node file
//! (ACQUIRE_VM with any other file: EBUSY) and the event page (a second one: EINVAL). The
//! files stay open and the page stays mapped, since a binding on the real kernel is never
//! released. The fresh copy must find them, and only them.
//!
//! How: every binding on the real kernel keeps a [record](super::record) of itself in a page
//! of its own, a shared mapping of a memfd named `aqueduct-binding`, rewritten whenever the
//! binding changes. The page is process memory, not library memory: it outlives the copy that
//! wrote it, and `/proc/self/maps` names it (`/memfd:aqueduct-binding (deleted)`), so a fresh
//! copy finds it without any static. A memfd rather than an anonymous page named with
//! `prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME)`: that needs Linux 5.17 built with
//! `CONFIG_ANON_VMA_NAME`, while aqueduct supports 5.15; a memfd's name shows in the maps on
//! every kernel since 3.17. The page is read back with `process_vm_readv` on this process, so
//! a mapping of that name that is short, truncated or gone gives an error, never a fault.
//!
//! A record is a claim, checked before use: the kfd fd must still be a character device with
//! the recorded device number and answer GET_VERSION with the recorded version (otherwise a
//! new `/dev/kfd` fd is opened: any fd reaches the one KFD process of this address space);
//! each render-node file must be the character device 226:minor and ACQUIRE_VM with it must
//! give 0 (the kernel's "same file" answer); where the recorded fd fails, every open fd of the
//! process is tried the same way (the program may have moved it with `dup2`); the event page
//! must still be mapped where the record says. Anything that fails is an error naming it:
//! never a silent second binding, which the kernel would refuse later in a less clear way.
//!
//! Fork: the page is `MADV_DONTFORK`, so a child has no record (it binds afresh, as it must:
//! its own KFD process), and a record whose pid is not this process' is ignored anyway.
//!
//! Not covered: two copies loaded at the same time that both open a device before either has
//! written its record (the second fails with ACQUIRE_VM's EBUSY, and says why); and a record
//! written by another version of aqueduct (refused by its format version, with that reason).

use std::io::IoSliceMut;
use std::num::NonZeroUsize;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering, fence};

use crate::error::{Error, Result};
use crate::ioctl::calls as ioctls;
use crate::retry::restarting;
use crate::sys::{MapFlags, MmapAdvise, ProtFlags, Sys};

use super::RenderFile;
use super::record::{BindingRecord, MAX_RECORD_LEN, RecordFault, SEQUENCE_OFFSET};

/// The memfd's name.
const RECORD_NAME: &std::ffi::CStr = c"aqueduct-binding";
/// The name `/proc/self/maps` shows for a mapping of that memfd.
const MAPS_NAME: &str = "/memfd:aqueduct-binding";
/// DRM's character-device major (render nodes are 226:128 and up).
pub(crate) const DRM_MAJOR: u32 = 226;
/// How many times a record caught while being written is read again.
const TORN_READ_RETRIES: usize = 100;

/// The page holding a binding's record.
#[derive(Debug)]
pub(crate) struct RecordPage {
    /// The page, seen as the words the sequence number is one of (page-aligned).
    address: NonNull<AtomicU64>,
    len: usize,
}

// SAFETY: the page is plain shared memory, written only through `write` (under the binding's
// state lock) and never unmapped; the pointer is an address, not a borrow.
unsafe impl Send for RecordPage {}
// SAFETY: as above.
unsafe impl Sync for RecordPage {}

impl RecordPage {
    /// A new, empty record page: a one-page memfd named [`RECORD_NAME`], mapped shared and
    /// `MADV_DONTFORK`; the fd is closed at once (the mapping keeps the file).
    pub(crate) fn create(sys: &dyn Sys) -> Result<Self> {
        let len = sys.page_size().max(MAX_RECORD_LEN);
        let fd = nix::sys::memfd::memfd_create(RECORD_NAME, nix::sys::memfd::MFdFlags::MFD_CLOEXEC)
            .map_err(|e| Error::syscall("memfd_create of the binding record", e.into()))?;
        nix::unistd::ftruncate(&fd, len as libc::off_t)
            .map_err(|e| Error::syscall("ftruncate of the binding record", e.into()))?;
        let length =
            NonZeroUsize::new(len).ok_or_else(|| Error::Kernel("a page size of 0".to_owned()))?;
        // SAFETY: without MAP_FIXED nothing is replaced.
        let address = unsafe {
            sys.mmap(
                None,
                length,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_SHARED,
                Some(fd.as_raw_fd()),
                0,
            )
        }
        .map_err(|e| Error::syscall("mmap of the binding record", e))?;
        // SAFETY: MADV_DONTFORK only changes what a fork child inherits.
        unsafe { sys.madvise(address, len, MmapAdvise::MADV_DONTFORK) }
            .map_err(|e| Error::syscall("madvise(MADV_DONTFORK) of the binding record", e))?;
        Ok(Self {
            address: address.cast(),
            len,
        })
    }

    /// The page's address.
    pub(crate) fn address(&self) -> usize {
        self.address.as_ptr() as usize
    }

    fn sequence(&self) -> &AtomicU64 {
        // SAFETY: the page is mapped read-write for the life of the process and page-aligned,
        // so word SEQUENCE_OFFSET / 8 is in it and aligned; that word is only accessed
        // atomically.
        unsafe { &*self.address.as_ptr().add(SEQUENCE_OFFSET / 8) }
    }

    /// Write `record`: the sequence goes odd, the bytes are written, the sequence goes even
    /// (a reader that catches the write in between sees an odd sequence or a bad checksum).
    pub(crate) fn write(&self, record: &BindingRecord) {
        let sequence = self.sequence();
        let stable = sequence.load(Ordering::Acquire) & !1;
        sequence.store(stable.wrapping_add(1), Ordering::Relaxed);
        fence(Ordering::Release);
        let bytes = record.encode(0);
        let len = bytes.len().min(self.len);
        // SAFETY: the page is mapped read-write and `len` bytes fit it; the sequence word
        // (bytes 16..24) is skipped, so nothing here overlaps the atomic.
        unsafe {
            let page = self.address.as_ptr().cast::<u8>();
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), page, SEQUENCE_OFFSET.min(len));
            if len > SEQUENCE_OFFSET + 8 {
                std::ptr::copy_nonoverlapping(
                    bytes.as_ptr().add(SEQUENCE_OFFSET + 8),
                    page.add(SEQUENCE_OFFSET + 8),
                    len - SEQUENCE_OFFSET - 8,
                );
            }
        }
        sequence.store(stable.wrapping_add(2), Ordering::Release);
    }
}

/// A record page found in `/proc/self/maps`, and what it says.
#[derive(Debug)]
pub(crate) struct FoundRecord {
    /// The page (to keep writing the record there once adopted).
    pub page: RecordPage,
    /// The record, or why it is not one.
    pub record: std::result::Result<BindingRecord, RecordFault>,
}

/// One line of `/proc/self/maps`: start, end, permissions, path.
fn maps_line(line: &str) -> Option<(usize, usize, &str, &str)> {
    let mut fields = line.splitn(6, ' ');
    let range = fields.next()?;
    let perms = fields.next()?;
    let (_, _, _) = (fields.next()?, fields.next()?, fields.next()?);
    let path = fields.next().unwrap_or("").trim_start();
    let (start, end) = range.split_once('-')?;
    let start = usize::from_str_radix(start, 16).ok()?;
    let end = usize::from_str_radix(end, 16).ok()?;
    (start < end).then_some((start, end, perms, path))
}

/// This process' mappings.
fn maps(sys: &dyn Sys) -> Result<String> {
    let bytes = sys
        .read_file(Path::new("/proc/self/maps"))
        .map_err(|e| Error::syscall("reading /proc/self/maps", e))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Read `buf.len()` bytes of this process' memory at `address`, without touching it directly
/// (an unmapped or truncated range is an error, not a fault).
fn read_own_memory(address: usize, buf: &mut [u8]) -> Result<()> {
    let len = buf.len();
    let read = nix::sys::uio::process_vm_readv(
        nix::unistd::getpid(),
        &mut [IoSliceMut::new(buf)],
        &[nix::sys::uio::RemoteIoVec { base: address, len }],
    )
    .map_err(|e| Error::syscall("process_vm_readv of the binding record", e.into()))?;
    if read == len {
        Ok(())
    } else {
        Err(Error::Adoption(format!(
            "the binding record at {address:#x} is shorter than a record ({read} bytes)"
        )))
    }
}

/// Every record page in this process, parsed. None where `/proc/self/maps` cannot be read
/// (no `/proc` in a chroot, say): then no record can be found either, and a first open must
/// not fail for it (a later copy that cannot find its predecessor's binding fails at
/// ACQUIRE_VM with EBUSY, and says why).
pub(crate) fn find_records(sys: &dyn Sys) -> Result<Vec<FoundRecord>> {
    let Ok(maps) = maps(sys) else {
        return Ok(Vec::new());
    };
    let mut found = Vec::new();
    for (start, end, perms, path) in maps.lines().filter_map(maps_line) {
        let named = path == MAPS_NAME || path.strip_suffix(" (deleted)") == Some(MAPS_NAME);
        if !named || !perms.starts_with("rw") {
            continue;
        }
        let len = end - start;
        let Some(address) = NonNull::new(start as *mut AtomicU64) else {
            continue;
        };
        let mut bytes = vec![0u8; len.min(MAX_RECORD_LEN)];
        let mut record = Err(RecordFault::BeingWritten);
        for _ in 0..TORN_READ_RETRIES {
            record = match read_own_memory(start, &mut bytes) {
                Ok(()) => BindingRecord::decode(&bytes),
                Err(err) => return Err(err),
            };
            if record != Err(RecordFault::BeingWritten) {
                break;
            }
            std::thread::yield_now();
        }
        found.push(FoundRecord {
            page: RecordPage { address, len },
            record,
        });
    }
    Ok(found)
}

/// Whether `[address, address + len)` is mapped in this process.
pub(crate) fn is_mapped(sys: &dyn Sys, address: u64, len: u64) -> Result<bool> {
    let maps = maps(sys)?;
    let mut covered = address;
    let end = address.saturating_add(len);
    let mut ranges: Vec<(u64, u64)> = maps
        .lines()
        .filter_map(maps_line)
        .map(|(s, e, _, _)| (s as u64, e as u64))
        .collect();
    ranges.sort_unstable();
    for (start, stop) in ranges {
        if start <= covered && covered < stop {
            covered = stop;
        }
        if covered >= end {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The fds this process has open (from `/proc/self/fd`).
fn open_fds(sys: &dyn Sys) -> Vec<i32> {
    sys.read_dir(Path::new("/proc/self/fd"))
        .unwrap_or_default()
        .iter()
        .filter_map(|name| name.to_str()?.parse().ok())
        .collect()
}

/// Whether `fd` is `/dev/kfd` as recorded (`device`), speaking interface `interface`.
pub(crate) fn is_kfd_file(
    sys: &dyn Sys,
    fd: i32,
    device: (u32, u32),
    interface: (u32, u32),
) -> bool {
    if sys.char_device(fd) != Ok(Some(device)) {
        return false;
    }
    restarting(|| ioctls::get_version(sys, fd))
        .is_ok_and(|v| (v.major_version, v.minor_version) == interface)
}

/// Whether `fd` is render node `minor` and the file holding the VM of `gpu_id` (ACQUIRE_VM
/// gives 0 for the file already bound, EBUSY for any other).
fn holds_vm(sys: &dyn Sys, kfd_fd: i32, gpu_id: u32, minor: u32, fd: i32) -> bool {
    sys.char_device(fd) == Ok(Some((DRM_MAJOR, minor)))
        && restarting(|| ioctls::acquire_vm(sys, kfd_fd, fd, gpu_id)).is_ok()
}

/// The render-node file holding the VM of `gpu_id`: the recorded one if it still is, else
/// any open fd of the process that is (the program may have moved it with `dup2`).
pub(crate) fn render_file_holding_vm(
    sys: &dyn Sys,
    kfd_fd: i32,
    gpu_id: u32,
    recorded: RenderFile,
) -> Result<RenderFile> {
    if holds_vm(sys, kfd_fd, gpu_id, recorded.minor, recorded.fd) {
        return Ok(recorded);
    }
    open_fds(sys)
        .into_iter()
        .find(|&fd| fd != recorded.fd && holds_vm(sys, kfd_fd, gpu_id, recorded.minor, fd))
        .map(|fd| RenderFile {
            minor: recorded.minor,
            fd,
        })
        .ok_or_else(|| {
            Error::Adoption(format!(
                "the render-node file that holds the VM of GPU {gpu_id:#x} (renderD{}, fd {} \
                 when recorded) is no longer open in this process: the kernel keeps the VM \
                 bound to it, so the GPU cannot be used again until the process ends",
                recorded.minor, recorded.fd
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Linux;
    use crate::binding::RuntimeState;

    #[test]
    fn maps_lines_parse_and_odd_lines_do_not() {
        let line =
            "7f12a000-7f12b000 rw-s 00000000 00:01 2052      /memfd:aqueduct-binding (deleted)";
        assert_eq!(
            maps_line(line),
            Some((
                0x7f12_a000,
                0x7f12_b000,
                "rw-s",
                "/memfd:aqueduct-binding (deleted)"
            ))
        );
        let anonymous = "7ffd1000-7ffd3000 rw-p 00000000 00:00 0 ";
        assert_eq!(maps_line(anonymous).map(|l| l.3), Some(""));
        assert_eq!(maps_line("garbage"), None);
        assert_eq!(maps_line("2000-1000 rw-p 0 0 0 x"), None);
    }

    #[test]
    fn a_written_record_is_found_and_other_memory_is_not() {
        let sys = Linux;
        let page = RecordPage::create(&sys).unwrap();
        let record = BindingRecord {
            pid: std::process::id() as i32,
            kfd_fd: 1000,
            kfd_device: (235, 0),
            interface: (1, 17),
            runtime: RuntimeState::NotAttempted,
            render_files: vec![(
                7,
                RenderFile {
                    minor: 128,
                    fd: 1001,
                },
            )],
            event_page: None,
        };
        // Before the first write the page is all zeros: not a record.
        let before = find_records(&sys).unwrap();
        let mine = before
            .iter()
            .find(|f| f.page.address() == page.address())
            .unwrap();
        assert_eq!(mine.record, Err(RecordFault::NotARecord));
        page.write(&record);
        page.write(&record);
        let found = find_records(&sys).unwrap();
        let mine = found
            .iter()
            .find(|f| f.page.address() == page.address())
            .unwrap();
        assert_eq!(mine.record.as_ref(), Ok(&record));
        assert!(is_mapped(&sys, page.address() as u64, 4096).unwrap());
        assert!(!is_mapped(&sys, 0x1000, 4096).unwrap());
        // A memfd of the same name holding garbage is found and refused, never trusted.
        let fake = RecordPage::create(&sys).unwrap();
        // SAFETY: the fresh page is ours, mapped read-write.
        unsafe { fake.address.as_ptr().cast::<u8>().write_bytes(0xA5, 64) };
        let found = find_records(&sys).unwrap();
        let garbage = found
            .iter()
            .find(|f| f.page.address() == fake.address())
            .unwrap();
        assert!(garbage.record.is_err());
        // Nothing of a non-device fd passes for /dev/kfd.
        assert!(!is_kfd_file(&sys, 0, (235, 0), (1, 17)));
        for page in [page, fake] {
            // SAFETY: both pages are this test's and nothing uses them any more.
            unsafe { sys.munmap(page.address.cast(), page.len) }.unwrap();
        }
    }
}
