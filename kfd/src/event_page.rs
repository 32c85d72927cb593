//! The event page: 4096 eight-byte slots, one per signal event, where the GPU writes an
//! event's id before raising the interrupt that fires it (kfd.md §6.2–§6.3).
//!
//! On a dGPU userspace allocates the page as a GTT BO (uncached, coherent), maps it on every GPU
//! and passes its handle in the first CREATE_EVENT; the kernel fills every slot with
//! UNSIGNALED (all ones) and remembers the page. It can be set only once per process and its BO
//! can never be freed (EPERM), so the page belongs to the [`ProcessBinding`] and is reused by
//! every open.
//!
//! [`ProcessBinding`]: crate::binding::ProcessBinding

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::abi::{
    AllocFlags, AllocMemoryOfGpuArgs, CreateEventArgs, EventType, KFD_EVENT_PAGE_SIZE,
};
use crate::address_space::{AddressSpace, VaRange};
use crate::error::{Error, Result};
use crate::ioctl::calls as ioctls;
use crate::retry::restarting;
use crate::sys::{MapFlags, ProtFlags, Sys};

/// Flags of the event-page BO: host memory, uncached and coherent (the CPU polls it while the
/// GPU writes it), GPU-writable.
pub const EVENT_PAGE_FLAGS: AllocFlags = AllocFlags::GTT
    .union(AllocFlags::COHERENT)
    .union(AllocFlags::UNCACHED)
    .union(AllocFlags::WRITABLE)
    .union(AllocFlags::NO_SUBSTITUTE);

/// Where the page's mapping came from.
#[derive(Debug)]
enum Placement {
    /// Made by this copy of the driver in a range it reserved (unmapped when dropped).
    Reserved(VaRange),
    /// Made by an unloaded copy and taken over from its binding record: the mapping belongs
    /// to the process and is never unmapped (the kernel keeps the page for the process' life).
    Adopted {
        /// The page's address.
        address: u64,
    },
}

/// The process' event page.
#[derive(Debug)]
pub(crate) struct EventPage {
    placement: Placement,
    handle: u64,
    mapped_on: BTreeSet<u32>,
    registered: bool,
}

impl EventPage {
    /// Allocate the page on `owner_gpu` (whose render-node fd is `render_fd`) inside
    /// `[lowest, highest]`, and map it for the CPU.
    pub fn allocate(
        sys: &Arc<dyn Sys>,
        kfd_fd: i32,
        owner_gpu: u32,
        render_fd: i32,
        lowest: u64,
        highest: u64,
    ) -> Result<Self> {
        let space = AddressSpace::new(Arc::clone(sys), lowest, highest);
        let size = KFD_EVENT_PAGE_SIZE as u64;
        let range = space.reserve(size, size)?;
        let mut args = AllocMemoryOfGpuArgs {
            va_addr: range.start(),
            size,
            gpu_id: owner_gpu,
            flags: EVENT_PAGE_FLAGS.bits(),
            ..AllocMemoryOfGpuArgs::default()
        };
        // SAFETY: not a USERPTR allocation; the kernel writes only `args`.
        restarting(|| unsafe { ioctls::alloc_memory_of_gpu(sys.as_ref(), kfd_fd, &mut args) })
            .map_err(|e| {
                Error::ioctl(format!("allocate the event page on GPU {owner_gpu:#x}"), e)
            })?;
        let handle = args.handle;
        // SAFETY: the range is fresh and unused.
        let mapped = unsafe {
            range.map_over(
                size,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_SHARED,
                Some(render_fd),
                args.mmap_offset,
                "the event page",
            )
        };
        if let Err(err) = mapped {
            let _ = ioctls::free_memory_of_gpu(sys.as_ref(), kfd_fd, handle);
            return Err(err);
        }
        Ok(Self {
            placement: Placement::Reserved(range),
            handle,
            mapped_on: BTreeSet::new(),
            registered: false,
        })
    }

    /// The page an unloaded copy of the driver made, at `address`, as its binding record
    /// describes it (checked by the caller: the address is mapped).
    pub fn adopted(address: u64, handle: u64, mapped_on: BTreeSet<u32>, registered: bool) -> Self {
        Self {
            placement: Placement::Adopted { address },
            handle,
            mapped_on,
            registered,
        }
    }

    /// The GPUs the page is mapped on.
    pub fn mapped_on(&self) -> &BTreeSet<u32> {
        &self.mapped_on
    }

    /// Whether the kernel took the page.
    pub fn is_registered(&self) -> bool {
        self.registered
    }

    /// Map the page on every GPU of `gpu_ids` it is not mapped on yet.
    pub fn map_on(&mut self, sys: &dyn Sys, kfd_fd: i32, gpu_ids: &[u32]) -> Result<()> {
        let missing: Vec<u32> = gpu_ids
            .iter()
            .copied()
            .filter(|id| !self.mapped_on.contains(id))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let mut done = 0;
        let result =
            restarting(|| ioctls::map_memory_to_gpu(sys, kfd_fd, self.handle, &missing, &mut done));
        self.mapped_on
            .extend(missing.iter().take(done as usize).copied());
        result.map_err(|e| Error::ioctl("map the event page to the GPUs", e))
    }

    /// Hand the page to the kernel with a first CREATE_EVENT (a signal event, destroyed at
    /// once), unless that was done already.
    pub fn register(&mut self, sys: &dyn Sys, kfd_fd: i32) -> Result<()> {
        if self.registered {
            return Ok(());
        }
        let mut args = CreateEventArgs {
            event_page_offset: self.handle,
            event_type: EventType::SIGNAL.0,
            auto_reset: 1,
            ..CreateEventArgs::default()
        };
        // Not restarted: once the kernel has taken the page a second attempt would be refused
        // (EINVAL, "already set"), and CREATE_EVENT does not sleep interruptibly anyway.
        ioctls::create_event(sys, kfd_fd, &mut args).map_err(|e| {
            Error::ioctl(
                "register the event page (the kernel refuses a second page: another runtime \
                 in this process may have set one)",
                e,
            )
        })?;
        self.registered = true;
        // A refusal leaves that event in the kernel (nothing else can destroy it): say so
        // rather than carry on with an event nobody owns. The page stays registered, so the
        // next open does not register it again.
        restarting(|| ioctls::destroy_event(sys, kfd_fd, args.event_id)).map_err(|e| {
            Error::ioctl(
                format!(
                    "destroy event {} that registered the event page (the kernel keeps it)",
                    args.event_id
                ),
                e,
            )
        })?;
        Ok(())
    }

    /// The BO handle.
    pub fn handle(&self) -> u64 {
        self.handle
    }

    /// The page's address (the same for the CPU and every GPU).
    pub fn address(&self) -> u64 {
        match &self.placement {
            Placement::Reserved(range) => range.start(),
            Placement::Adopted { address } => *address,
        }
    }

    /// Forget the page without touching anything (a fork child).
    pub fn abandon(self) {
        if let Placement::Reserved(range) = self.placement {
            range.abandon();
        }
    }
}
