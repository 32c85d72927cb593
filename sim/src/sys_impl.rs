//! [`kfd::Sys`] on a simulated machine.
//!
//! The machine overlays the host: `/dev/kfd`, `/dev/dri/*` and the KFD sysfs directories are
//! the simulator's; every other path, fd and anonymous mapping is the host's, reached through
//! [`kfd::Linux`]. So an fd the simulator does not know behaves as the real kernel makes it
//! behave (a `/dev/null` fd answers a KFD ioctl with ENOTTY), and sim fds are real fds.

use std::ffi::{OsString, c_int, c_void};
use std::num::NonZeroUsize;
use std::os::fd::RawFd;
use std::path::{Component, Path};
use std::ptr::NonNull;
use std::sync::Arc;

use kfd::ioctl::Opcode;
use kfd::sys::{Backend, MapFlags, MmapAdvise, OFlag, ProtFlags, Sys};
use kfd::{Errno, Linux};

use crate::driver::files::FileKind;
use crate::driver::host_memory::PAGE_SIZE;
use crate::driver::kfd_ioctl::kfd_ioctl;
use crate::driver::mmap::{MmapRequest, kfd_mmap, render_mmap};
use crate::driver::process::CachedDoorbell;
use crate::driver::render_node::drm_ioctl;
use crate::driver::topology::{Entry, SysfsPath, classify};
use crate::machine::Machine;

/// What an `open` path names.
enum DevicePath {
    Kfd,
    Render(u32),
    /// Under `/dev/dri` but not a simulated node.
    Missing,
    Host,
}

fn device_path(path: &Path) -> DevicePath {
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::RootDir | Component::CurDir => {}
            Component::ParentDir => {
                parts.pop();
            }
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::Prefix(_) => return DevicePath::Host,
        }
    }
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    match parts.as_slice() {
        ["dev", "kfd"] => DevicePath::Kfd,
        ["dev", "dri", node] => node
            .strip_prefix("renderD")
            .and_then(|m| m.parse().ok())
            .map_or(DevicePath::Missing, DevicePath::Render),
        ["dev", "dri", ..] => DevicePath::Missing,
        _ => DevicePath::Host,
    }
}

fn is_dri_dir(path: &Path) -> bool {
    let normal: Vec<_> = path
        .components()
        .filter(|c| !matches!(c, Component::RootDir | Component::CurDir))
        .collect();
    normal.len() == 2 && normal[0].as_os_str() == "dev" && normal[1].as_os_str() == "dri"
}

impl Sys for Machine {
    fn backend(&self) -> Backend {
        Backend::Simulator(self.description().to_owned())
    }

    fn open(&self, path: &Path, flags: OFlag) -> Result<RawFd, Errno> {
        let inner = &self.inner;
        let pid = nix::unistd::getpid().as_raw();
        let cloexec = flags.contains(OFlag::O_CLOEXEC);
        match device_path(path) {
            DevicePath::Kfd => {
                // kfd_open: the caller's process, created on first open.
                let process = inner.process_for_open(pid);
                let (fd, _) =
                    inner
                        .files
                        .open("amdgpu-sim:kfd", FileKind::Kfd(process), pid, cloexec)?;
                Ok(fd)
            }
            DevicePath::Render(minor) => {
                let index = inner
                    .shared
                    .devices
                    .iter()
                    .position(|d| d.render_minor == minor)
                    .ok_or(Errno::ENOENT)?;
                let name = format!("amdgpu-sim:renderD{minor}");
                let (fd, _) = inner
                    .files
                    .open(&name, FileKind::Render(index), pid, cloexec)?;
                Ok(fd)
            }
            DevicePath::Missing => Err(Errno::ENOENT),
            DevicePath::Host => match classify(path) {
                SysfsPath::Simulated(_) => Err(Errno::ENOENT),
                SysfsPath::Host => Linux.open(path, flags),
            },
        }
    }

    fn close(&self, fd: RawFd) -> Result<(), Errno> {
        let released = self.inner.files.close(fd)?;
        let result = Linux.close(fd);
        drop(released);
        result
    }

    unsafe fn ioctl(&self, fd: RawFd, request: Opcode, arg: *mut c_void) -> Result<c_int, Errno> {
        let Some(file) = self.inner.files.lookup(fd)? else {
            // SAFETY: forwarded to the caller (the `Sys::ioctl` contract).
            return unsafe { Linux.ioctl(fd, request, arg) };
        };
        let arg = arg as u64;
        match &file.kind {
            FileKind::Kfd(process) => kfd_ioctl(&self.inner, &file, process, request, arg),
            FileKind::Render(index) => drm_ioctl(
                &self.inner.shared.devices[*index],
                &self.inner.shared.system,
                request,
                arg,
            ),
        }
    }

    unsafe fn mmap(
        &self,
        addr: Option<NonZeroUsize>,
        len: NonZeroUsize,
        prot: ProtFlags,
        flags: MapFlags,
        fd: Option<RawFd>,
        offset: u64,
    ) -> Result<NonNull<c_void>, Errno> {
        let file = match fd {
            Some(fd) => self.inner.files.lookup(fd)?,
            None => None,
        };
        // A sim file's mmap records its mapping, replacing what was recorded over the range.
        let simulated = file.is_some();
        let mapped = match file {
            // SAFETY: forwarded to the caller (the `Sys::mmap` contract).
            None => unsafe { Linux.mmap(addr, len, prot, flags, fd, offset) }?,
            Some(file) => {
                let request = MmapRequest {
                    addr,
                    len,
                    prot,
                    flags,
                    offset,
                };
                match &file.kind {
                    FileKind::Kfd(_) => kfd_mmap(&self.inner, &request)?,
                    FileKind::Render(index) => render_mmap(&self.inner, *index, file.id, &request)?,
                }
            }
        };
        // With both flags the kernel takes NOREPLACE (do_mmap), which replaces nothing.
        if flags.contains(MapFlags::MAP_FIXED) && !flags.contains(MapFlags::MAP_FIXED_NOREPLACE) {
            // MAP_FIXED unmapped whatever the new mapping replaced (mmap_region unmaps the
            // old range first), with everything an unmap does: the MMU notifier takes the GPU
            // mappings of userptr BOs over the range, and the replaced VMAs drop what they
            // held (a GEM object's reference). Done once the replacement is in place: the
            // range stayed mapped throughout, so the device never reaches an unmapped
            // address meanwhile. (MAP_FIXED_NOREPLACE replaces nothing.)
            if simulated {
                let len = len.get().next_multiple_of(PAGE_SIZE as usize);
                self.inner.notify_unmap(mapped.as_ptr() as usize, len);
            } else {
                self.host_mapping_replaced(mapped, len.get());
            }
        }
        Ok(mapped)
    }

    unsafe fn munmap(&self, addr: NonNull<c_void>, len: usize) -> Result<(), Errno> {
        // The MMU notifier runs as part of munmap: userptr BOs over the range lose their GPU
        // mappings before the pages go.
        self.inner.notify_unmap(addr.as_ptr() as usize, len);
        // SAFETY: forwarded to the caller (the `Sys::munmap` contract).
        unsafe { Linux.munmap(addr, len) }?;
        self.inner.cpu_mappings.remove(addr.as_ptr() as usize, len);
        Ok(())
    }

    unsafe fn madvise(
        &self,
        addr: NonNull<c_void>,
        len: usize,
        advice: MmapAdvise,
    ) -> Result<(), Errno> {
        // SAFETY: forwarded to the caller (the `Sys::madvise` contract).
        unsafe { Linux.madvise(addr, len, advice) }
    }

    fn read_file(&self, path: &Path) -> Result<Vec<u8>, Errno> {
        match classify(path) {
            SysfsPath::Host if is_dri_dir(path) => Err(Errno::EISDIR),
            SysfsPath::Host => Linux.read_file(path),
            SysfsPath::Simulated(key) => match self.inner.topology.entry(&key)? {
                Entry::File(text) => Ok(text.clone().into_bytes()),
                Entry::Dir(_) => Err(Errno::EISDIR),
                Entry::UsedMemory(index) => {
                    Ok(format!("{}\n", self.inner.shared.devices[*index].vram.used()).into_bytes())
                }
            },
        }
    }

    fn read_dir(&self, path: &Path) -> Result<Vec<OsString>, Errno> {
        if is_dri_dir(path) {
            return Ok(self
                .inner
                .shared
                .devices
                .iter()
                .map(|d| OsString::from(format!("renderD{}", d.render_minor)))
                .collect());
        }
        match classify(path) {
            SysfsPath::Host => Linux.read_dir(path),
            SysfsPath::Simulated(key) => match self.inner.topology.entry(&key)? {
                Entry::Dir(names) => Ok(names.iter().map(OsString::from).collect()),
                Entry::File(_) | Entry::UsedMemory(_) => Err(Errno::ENOTDIR),
            },
        }
    }

    fn process_id(&self) -> i32 {
        nix::unistd::getpid().as_raw()
    }

    fn page_size(&self) -> usize {
        Linux.page_size()
    }

    fn kernel_id(&self) -> u64 {
        // One simulated kernel per machine, shared by all its handles; never the host's 0.
        self.inner.shared.id
    }

    fn doorbell_needs_notify(&self) -> bool {
        true
    }

    fn notify_doorbell(&self, doorbell: NonNull<u64>, value: u64) {
        let Some((slice, offset)) = self
            .inner
            .cpu_mappings
            .doorbell_at(doorbell.as_ptr() as usize)
        else {
            return;
        };
        if let Some(runner) = slice.runner_at(offset) {
            runner.doorbell_rung(value);
        }
    }

    fn doorbell_notifier(&self, doorbell: NonNull<u64>) -> Option<Arc<dyn kfd::DoorbellNotifier>> {
        let (slice, offset) = self
            .inner
            .cpu_mappings
            .doorbell_at(doorbell.as_ptr() as usize)?;
        let cached = CachedDoorbell::resolve(slice, offset)?;
        Some(Arc::new(cached))
    }
}
