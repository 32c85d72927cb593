//! The process binding: what the kernel ties to the process for its whole life, kept by the
//! driver for the same span and reused by every open.
//!
//! The kernel keeps one KFD process per address space, not per file (kfd.md §7): closing
//! `/dev/kfd` destroys nothing; ACQUIRE_VM with another render-node file than the first one
//! fails with EBUSY; the event page can be set once. So the `/dev/kfd` fd, the render-node fds
//! and the event page live in a [`ProcessBinding`] that is created at the first open, kept in a
//! process-wide registry and never torn down in the process that made it; everything else
//! (buffers, mappings, queues, events) is owned by whoever created it and destroyed with it.
//!
//! After `fork()` the child finds its parent's binding (memory is copied) but cannot use it:
//! the kernel answers its ioctls with EBADF and none of the device mappings exist in the
//! child. Every operation compares the process id with the one recorded at open and fails with
//! [`Error::ForkedChild`]; the child's next open drops the inherited binding without a single
//! ioctl (closing only its own copies of the fds) and binds afresh.
//!
//! A binding outlives the copy of the driver that made it when that copy is unloaded
//! (`dlclose` of a plugin that embeds aqueduct): on the real kernel its files stay open and
//! its event page stays mapped, and a fresh copy, whose statics start empty, takes it over
//! through the record the binding keeps of itself (the private modules `handoff` and
//! `record`). A binding to an in-process simulator dies with its copy instead
//! ([`release_simulated_bindings`]).

use std::any::Any;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use crate::abi::sysfs::KFD_DEVICE_PATH;
use crate::abi::{
    KFD_IOCTL_MAJOR_VERSION, KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK, MINOR_RUNTIME_ENABLE,
};
use crate::error::{Error, Result};
use crate::event_page::EventPage;
use crate::ioctl::calls as ioctls;
use crate::retry::restarting;
use crate::sys::{Backend, HOST_KERNEL, OFlag, Sys};

mod handoff;
mod record;

use handoff::RecordPage;
use record::{BindingRecord, EventPageRecord, RecordFault};

/// The oldest KFD interface minor version this driver opens.
pub const MIN_INTERFACE_MINOR: u32 = 6;
/// Why [`MIN_INTERFACE_MINOR`]: what the driver relies on from that version on.
const MIN_INTERFACE_WHY: &str = "the 2021 interface of Linux 5.15 (SVM-era memory and \
                                 doorbell offsets, SET_XNACK_MODE); older kernels are untested";

/// What RUNTIME_ENABLE did for this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuntimeState {
    /// Not attempted yet.
    NotAttempted,
    /// Enabled by this binding.
    Enabled,
    /// The interface predates RUNTIME_ENABLE (1.13) or a GPU lacks debugger firmware support.
    NotSupported,
    /// The kernel refused (another runtime in this process enabled it or made queues first).
    Refused(crate::Errno),
}

/// The render-node file bound to one GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RenderFile {
    /// The render-node minor.
    pub minor: u32,
    /// The fd handed to ACQUIRE_VM; kept open for the life of the process.
    pub fd: i32,
}

/// The driver open on a binding, if any ([`crate::Kfd`]: one per process and kernel). Held
/// weakly, since the driver holds its binding; and without naming the driver's type, so that the
/// binding, the layer below the driver, does not depend on it.
#[derive(Debug)]
pub(crate) struct OpenDriver(Weak<dyn Any + Send + Sync>);

impl Default for OpenDriver {
    fn default() -> Self {
        Self(Weak::<()>::new())
    }
}

impl OpenDriver {
    /// The open driver, if it is still alive and is a `D`.
    pub fn get<D: Any + Send + Sync>(&self) -> Option<Arc<D>> {
        self.0.upgrade()?.downcast::<D>().ok()
    }

    /// Whether a driver is open on the binding.
    pub fn is_open(&self) -> bool {
        self.0.strong_count() > 0
    }

    /// Record `driver` as the open one.
    pub fn set<D: Any + Send + Sync>(&mut self, driver: &Arc<D>) {
        let weak: Weak<D> = Arc::downgrade(driver);
        self.0 = weak as Weak<dyn Any + Send + Sync>;
    }
}

/// Mutable state of a binding, under its lock (held across a whole open sequence).
#[derive(Debug)]
pub(crate) struct BindingState {
    /// Render-node files by gpu_id.
    pub render_files: BTreeMap<u32, RenderFile>,
    /// The event page, once made.
    pub event_page: Option<EventPage>,
    /// RUNTIME_ENABLE's outcome.
    pub runtime: RuntimeState,
    /// The open driver, if one is open.
    pub open: OpenDriver,
    /// Set in a fork child: the binding belongs to the parent.
    pub abandoned: bool,
    /// Where the binding's record is kept (real kernel only; made at the first publish).
    record_page: Option<RecordPage>,
}

/// The process-lifetime part of the driver: `/dev/kfd`, render-node files, event page.
#[derive(Debug)]
pub struct ProcessBinding {
    sys: Arc<dyn Sys>,
    pid: i32,
    kfd_fd: i32,
    /// The device number of `/dev/kfd`, as `fstat` of `kfd_fd` gave it (real kernel only).
    kfd_device: Option<(u32, u32)>,
    version: (u32, u32),
    state: Mutex<BindingState>,
}

/// Every binding made in this process, one per kernel (the real one, or each simulated one).
static REGISTRY: Mutex<Vec<Arc<ProcessBinding>>> = Mutex::new(Vec::new());

/// Whether two system interfaces talk to the same kernel ([`Sys::kernel_id`]). A simulator
/// that does not say which machine it is (id [`HOST_KERNEL`] on a non-Linux backend) is
/// identified by the object itself.
fn same_kernel(a: &Arc<dyn Sys>, b: &Arc<dyn Sys>) -> bool {
    let anonymous =
        |s: &Arc<dyn Sys>| s.kernel_id() == HOST_KERNEL && s.backend() != Backend::Linux;
    if anonymous(a) || anonymous(b) {
        std::ptr::addr_eq(Arc::as_ptr(a), Arc::as_ptr(b))
    } else {
        a.kernel_id() == b.kernel_id()
    }
}

/// Release every binding to an in-process simulator ([`Backend::Simulator`]) that no open
/// driver uses: close its files and unmap its event page, as the end of the process would.
/// Returns how many were released.
///
/// For a library that is being unloaded (`dlclose`) while the program goes on: the simulated
/// kernel lives in the library's own memory and dies with it, so the binding's files and
/// mappings, which the process would otherwise keep for the rest of its life, would leak
/// with every unload. A binding to the real kernel is never released: the kernel keeps the
/// KFD process (its render-node binding, its event page) until the process ends, and a fresh
/// copy of the library must find it again. A binding some [`Kfd`](crate::Kfd) still uses is kept too.
pub fn release_simulated_bindings() -> usize {
    let mut registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    let before = registry.len();
    registry.retain(|binding| {
        let simulated = matches!(binding.sys.backend(), Backend::Simulator(_));
        if !simulated || binding.lock_state().open.is_open() {
            return true;
        }
        binding.release();
        false
    });
    let released = before - registry.len();
    if registry.is_empty() {
        // Leave nothing allocated behind either.
        *registry = Vec::new();
    }
    released
}

impl ProcessBinding {
    /// The binding of this process to the kernel behind `sys`: the existing one, or a new one
    /// (opening `/dev/kfd` and checking its interface version). An inherited binding found in
    /// a fork child is abandoned and replaced.
    pub fn for_sys(sys: &Arc<dyn Sys>) -> Result<Arc<Self>> {
        let mut registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
        let pid = sys.process_id();
        if let Some(index) = registry.iter().position(|b| same_kernel(&b.sys, sys)) {
            if registry[index].pid == pid {
                return Ok(Arc::clone(&registry[index]));
            }
            let inherited = registry.swap_remove(index);
            inherited.abandon();
        }
        // On the real kernel a copy of the driver unloaded earlier in this process may have
        // left its binding there: take it over (never bind a second time beside it).
        let adopted = if sys.backend() == Backend::Linux {
            Self::adopt(sys, pid)?
        } else {
            None
        };
        let binding = match adopted {
            Some(binding) => Arc::new(binding),
            None => Arc::new(Self::create(Arc::clone(sys), pid)?),
        };
        registry.push(Arc::clone(&binding));
        Ok(binding)
    }

    /// Open `/dev/kfd` and check its interface version.
    fn open_kfd(sys: &dyn Sys) -> Result<(i32, (u32, u32))> {
        let kfd_fd = sys
            .open(Path::new(KFD_DEVICE_PATH), OFlag::O_RDWR | OFlag::O_CLOEXEC)
            .map_err(|errno| Error::Open {
                path: KFD_DEVICE_PATH.into(),
                errno,
            })?;
        let version = restarting(|| ioctls::get_version(sys, kfd_fd));
        let version = match version {
            Ok(v) => (v.major_version, v.minor_version),
            Err(err) => {
                let _ = sys.close(kfd_fd);
                return Err(Error::ioctl("reading the KFD interface version", err));
            }
        };
        if version.0 != KFD_IOCTL_MAJOR_VERSION || version.1 < MIN_INTERFACE_MINOR {
            let _ = sys.close(kfd_fd);
            return Err(Error::UnsupportedInterface {
                major: version.0,
                minor: version.1,
                min_minor: MIN_INTERFACE_MINOR,
                why: MIN_INTERFACE_WHY,
            });
        }
        Ok((kfd_fd, version))
    }

    fn create(sys: Arc<dyn Sys>, pid: i32) -> Result<Self> {
        let (kfd_fd, version) = Self::open_kfd(sys.as_ref())?;
        let kfd_device = if sys.backend() == Backend::Linux {
            sys.char_device(kfd_fd).ok().flatten()
        } else {
            None
        };
        Ok(Self {
            sys,
            pid,
            kfd_fd,
            kfd_device,
            version,
            state: Mutex::new(BindingState {
                render_files: BTreeMap::new(),
                event_page: None,
                runtime: RuntimeState::NotAttempted,
                open: OpenDriver::default(),
                abandoned: false,
                record_page: None,
            }),
        })
    }

    /// Take over the binding an unloaded copy of the driver left in this process, if its
    /// record is found: `None` if there is none (nothing was bound on the real kernel by a
    /// copy of aqueduct), an error if there is one that cannot be taken over ([`handoff`]).
    fn adopt(sys: &Arc<dyn Sys>, pid: i32) -> Result<Option<Self>> {
        let mut mine = Vec::new();
        for found in handoff::find_records(sys.as_ref())? {
            match &found.record {
                Ok(record) if record.pid == pid => mine.push(found),
                // Another process' (inherited despite MADV_DONTFORK), or memory that merely
                // has the name: not ours to take.
                Ok(_) | Err(RecordFault::NotARecord) => {}
                Err(fault) => {
                    return Err(Error::Adoption(format!(
                        "{fault} (at {:#x})",
                        found.page.address()
                    )));
                }
            }
        }
        let found = match mine.len() {
            0 => return Ok(None),
            1 => mine.swap_remove(0),
            n => {
                return Err(Error::Adoption(format!(
                    "{n} binding records of this process ({}): which one the kernel holds is                      unclear",
                    mine.iter()
                        .map(|f| format!("{:#x}", f.page.address()))
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        };
        let Ok(record) = found.record else {
            return Ok(None);
        };
        let raw = sys.as_ref();
        // Any /dev/kfd fd reaches this address space's one KFD process: keep the recorded
        // one if it still is /dev/kfd, else open another.
        let (kfd_fd, version) =
            if handoff::is_kfd_file(raw, record.kfd_fd, record.kfd_device, record.interface) {
                (record.kfd_fd, record.interface)
            } else {
                Self::open_kfd(raw)?
            };
        let kfd_device = raw.char_device(kfd_fd).ok().flatten();
        let mut render_files = BTreeMap::new();
        for (gpu_id, file) in &record.render_files {
            let held = handoff::render_file_holding_vm(raw, kfd_fd, *gpu_id, *file);
            match held {
                Ok(file) => {
                    render_files.insert(*gpu_id, file);
                }
                Err(err) => {
                    if kfd_fd != record.kfd_fd {
                        let _ = raw.close(kfd_fd);
                    }
                    return Err(err);
                }
            }
        }
        let event_page = match record.event_page {
            None => None,
            Some(page) => {
                if !handoff::is_mapped(raw, page.address, page.size)? {
                    if kfd_fd != record.kfd_fd {
                        let _ = raw.close(kfd_fd);
                    }
                    return Err(Error::Adoption(format!(
                        "the event page this process gave the kernel ({:#x}, {:#x} bytes) is no                          longer mapped, and the kernel takes no other",
                        page.address, page.size
                    )));
                }
                Some(EventPage::adopted(
                    page.address,
                    page.handle,
                    page.mapped_on,
                    page.registered,
                ))
            }
        };
        let binding = Self {
            sys: Arc::clone(sys),
            pid,
            kfd_fd,
            kfd_device,
            version,
            state: Mutex::new(BindingState {
                render_files,
                event_page,
                runtime: record.runtime,
                open: OpenDriver::default(),
                abandoned: false,
                record_page: Some(found.page),
            }),
        };
        // The files may have moved: the record says where they are now.
        binding.publish(&mut binding.lock_state());
        Ok(Some(binding))
    }

    /// What the binding is now, as a record.
    fn record(&self, state: &BindingState, kfd_device: (u32, u32)) -> BindingRecord {
        BindingRecord {
            pid: self.pid,
            kfd_fd: self.kfd_fd,
            kfd_device,
            interface: self.version,
            runtime: state.runtime,
            render_files: state
                .render_files
                .iter()
                .map(|(gpu_id, file)| (*gpu_id, *file))
                .collect(),
            event_page: state.event_page.as_ref().map(|page| EventPageRecord {
                address: page.address(),
                size: crate::abi::KFD_EVENT_PAGE_SIZE as u64,
                handle: page.handle(),
                registered: page.is_registered(),
                mapped_on: page.mapped_on().clone(),
            }),
        }
    }

    /// Write the binding's record for a later copy of the driver to find ([`handoff`]): on
    /// the real kernel, in the process that made the binding, once something is bound.
    /// Best effort: without a record a later copy cannot take the binding over and says so.
    pub(crate) fn publish(&self, state: &mut BindingState) {
        let Some(kfd_device) = self.kfd_device else {
            return;
        };
        let bound = !state.render_files.is_empty() || state.event_page.is_some();
        if state.abandoned || !bound || !self.is_owner_process() {
            return;
        }
        let record = self.record(state, kfd_device);
        if state.record_page.is_none() {
            state.record_page = RecordPage::create(self.sys.as_ref()).ok();
        }
        if let Some(page) = &state.record_page {
            page.write(&record);
        }
    }

    /// In a fork child: forget the parent's state without one ioctl, closing only this
    /// process' copies of the inherited fds (which touches nothing of the parent's).
    fn abandon(&self) {
        let mut state = self.lock_state();
        if state.abandoned {
            return;
        }
        state.abandoned = true;
        // The record page is MADV_DONTFORK: a child has none to touch.
        state.record_page = None;
        for file in std::mem::take(&mut state.render_files).into_values() {
            let _ = self.sys.close(file.fd);
        }
        if let Some(page) = state.event_page.take() {
            page.abandon();
        }
        let _ = self.sys.close(self.kfd_fd);
    }

    /// What the end of the process does to a binding, done early: close the render-node
    /// files, unmap and forget the event page, close `/dev/kfd` (its buffer object stays in
    /// the kernel, which frees it with the process). Only for an in-process simulator, at
    /// unload ([`release_simulated_bindings`]).
    fn release(&self) {
        if !self.is_owner_process() {
            self.abandon();
            return;
        }
        let mut state = self.lock_state();
        if state.abandoned {
            return;
        }
        state.abandoned = true;
        for file in std::mem::take(&mut state.render_files).into_values() {
            let _ = self.sys.close(file.fd);
        }
        // Dropping the page unmaps it (its address range goes back to the reservation, and
        // the reservation, which only the page held, is unmapped in turn).
        drop(state.event_page.take());
        let _ = self.sys.close(self.kfd_fd);
    }

    /// The system interface.
    pub fn sys(&self) -> &Arc<dyn Sys> {
        &self.sys
    }

    /// The `/dev/kfd` fd.
    pub fn kfd_fd(&self) -> i32 {
        self.kfd_fd
    }

    /// The process that made the binding.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// The kernel's interface version `(major, minor)`.
    pub fn interface_version(&self) -> (u32, u32) {
        self.version
    }

    /// Whether the kernel's interface is at least `1.minor`.
    pub fn has_minor(&self, minor: u32) -> bool {
        self.version.1 >= minor
    }

    /// What RUNTIME_ENABLE did.
    pub fn runtime_state(&self) -> RuntimeState {
        self.lock_state().runtime
    }

    /// Fail with [`Error::ForkedChild`] unless this is the process that made the binding.
    pub fn check_process(&self) -> Result<()> {
        let now = self.sys.process_id();
        if now == self.pid {
            Ok(())
        } else {
            Err(Error::ForkedChild {
                parent: self.pid,
                child: now,
            })
        }
    }

    /// Whether this is the process that made the binding (drops skip all cleanup otherwise).
    pub fn is_owner_process(&self) -> bool {
        self.sys.process_id() == self.pid
    }

    pub(crate) fn lock_state(&self) -> MutexGuard<'_, BindingState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// RUNTIME_ENABLE, once per process: the debugger API (1.13) records that a runtime is
    /// present; it must come before the first queue (EEXIST after). Only where every GPU has
    /// debugger-capable firmware, as libhsakmt requires.
    pub(crate) fn enable_runtime(&self, state: &mut BindingState, all_gpus_capable: bool) {
        if state.runtime != RuntimeState::NotAttempted {
            return;
        }
        if !self.has_minor(MINOR_RUNTIME_ENABLE) || !all_gpus_capable {
            state.runtime = RuntimeState::NotSupported;
            return;
        }
        // r_debug = 0: aqueduct has no loader debug interface for a debugger to read.
        let outcome = match restarting(|| {
            ioctls::runtime_enable(
                self.sys.as_ref(),
                self.kfd_fd,
                0,
                KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK,
            )
        }) {
            Ok(_) => RuntimeState::Enabled,
            Err(err) => RuntimeState::Refused(err.errno),
        };
        state.runtime = outcome;
        self.publish(state);
    }

    /// Map an ioctl failure to an error, recognising a fork child's EBADF.
    pub(crate) fn ioctl_error(&self, op: impl Into<String>, err: crate::IoctlError) -> Error {
        if err.errno == crate::Errno::EBADF {
            if let Err(fork) = self.check_process() {
                return fork;
            }
        }
        Error::ioctl(op, err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Linux;

    /// A simulator without a kernel behind it, reporting `kernel_id` (0: none, anonymous).
    #[derive(Debug)]
    struct FakeKernel(u64);

    impl Sys for FakeKernel {
        fn backend(&self) -> Backend {
            Backend::Simulator("fake".into())
        }
        fn open(&self, _: &Path, _: OFlag) -> Result<i32, crate::Errno> {
            Err(crate::Errno::ENOENT)
        }
        fn close(&self, _: i32) -> Result<(), crate::Errno> {
            Ok(())
        }
        unsafe fn ioctl(
            &self,
            _: i32,
            _: crate::Opcode,
            _: *mut std::ffi::c_void,
        ) -> Result<i32, crate::Errno> {
            Err(crate::Errno::EINVAL)
        }
        unsafe fn mmap(
            &self,
            _: Option<std::num::NonZeroUsize>,
            _: std::num::NonZeroUsize,
            _: crate::sys::ProtFlags,
            _: crate::sys::MapFlags,
            _: Option<i32>,
            _: u64,
        ) -> Result<std::ptr::NonNull<std::ffi::c_void>, crate::Errno> {
            Err(crate::Errno::ENOMEM)
        }
        unsafe fn munmap(
            &self,
            _: std::ptr::NonNull<std::ffi::c_void>,
            _: usize,
        ) -> Result<(), crate::Errno> {
            Ok(())
        }
        unsafe fn madvise(
            &self,
            _: std::ptr::NonNull<std::ffi::c_void>,
            _: usize,
            _: crate::sys::MmapAdvise,
        ) -> Result<(), crate::Errno> {
            Ok(())
        }
        fn read_file(&self, _: &Path) -> Result<Vec<u8>, crate::Errno> {
            Err(crate::Errno::ENOENT)
        }
        fn read_dir(&self, _: &Path) -> Result<Vec<std::ffi::OsString>, crate::Errno> {
            Err(crate::Errno::ENOENT)
        }
        fn process_id(&self) -> i32 {
            7
        }
        fn page_size(&self) -> usize {
            4096
        }
        fn kernel_id(&self) -> u64 {
            self.0
        }
    }

    #[test]
    fn every_linux_is_one_kernel_and_other_backends_are_distinct_objects() {
        let a: Arc<dyn Sys> = Arc::new(Linux);
        let b: Arc<dyn Sys> = Arc::new(Linux);
        assert!(same_kernel(&a, &b));
        let c: Arc<dyn Sys> = Arc::new(FakeKernel(HOST_KERNEL));
        let d: Arc<dyn Sys> = Arc::new(FakeKernel(HOST_KERNEL));
        assert!(same_kernel(&c, &c.clone()));
        assert!(!same_kernel(&c, &d));
        assert!(!same_kernel(&a, &c));
        // Two handles to one simulated machine are one kernel; another machine is not.
        let m1: Arc<dyn Sys> = Arc::new(FakeKernel(5));
        let m1_again: Arc<dyn Sys> = Arc::new(FakeKernel(5));
        let m2: Arc<dyn Sys> = Arc::new(FakeKernel(6));
        assert!(same_kernel(&m1, &m1_again));
        assert!(!same_kernel(&m1, &m2));
        assert!(!same_kernel(&m1, &a));
        assert!(!same_kernel(&m1, &c));
        // No /dev/kfd behind it: a clear error naming the file, and nothing registered.
        let err = ProcessBinding::for_sys(&c).unwrap_err();
        assert!(
            matches!(&err, Error::Open { path, errno } if path == Path::new(KFD_DEVICE_PATH) && *errno == crate::Errno::ENOENT),
            "{err}"
        );
        assert!(
            REGISTRY
                .lock()
                .unwrap()
                .iter()
                .all(|b| !same_kernel(&b.sys, &c))
        );
    }
}
