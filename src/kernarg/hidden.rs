//! The hidden (implicit) arguments: what the device provides for them ([`LaunchContext`]) and
//! the value each one gets for a launch.
//!
//! What aqueduct writes, per `value_kind` (code-objects.md §7.1, §7.2; AMDGPUUsage "Code Object
//! V5 Metadata", hidden argument table):
//!
//! | hidden argument | value |
//! |---|---|
//! | `block_count_*`, `group_size_*`, `remainder_*`, `grid_dims` | from the [`Geometry`] |
//! | `global_offset_*` | the geometry's global offset, 0 unless given |
//! | `dynamic_lds_size` | every LDS byte beyond the kernel's static LDS: `__local` argument areas and the geometry's dynamic LDS |
//! | `queue_ptr` | the dispatch queue's `amd_queue_t` address from the context |
//! | `private_base`, `shared_base` | the high 32 bits of the context's private and shared apertures (only GFX8 reads them) |
//! | `printf_buffer` | the context's printf buffer; **`Unsupported` error** when the kernel lists it and the context has none: LLVM emits it only for a module that calls `printf` (§7.1), and a null buffer would make the kernel store through address 0 |
//! | `hostcall_buffer` | the context's hostcall buffer, else **0**: LLVM lists it whenever it cannot prove a kernel never uses it (every kernel that calls through a pointer, or reads the implicit block through a raw pointer, lists it), so refusing would refuse such kernels; a kernel that really makes a host call with 0 faults, and the fault comes back as an error |
//! | `heap_v1` | the context's device-malloc heap, else **0**, for the same reason as hostcall |
//! | `multigrid_sync_arg` | 0: no cooperative multi-device launch ("0 otherwise", §7.1) |
//! | `default_queue`, `completion_action` | 0: no OpenCL device enqueue ("0 otherwise", §7.1); an explicit `queue` argument is refused instead |
//! | `none` and reserved bytes | 0 |
//!
//! [`Geometry`]: super::Geometry

use amdgpu_loader::HiddenArg;

use super::geometry::Geometry;

/// LDS bytes per work-group on GFX9 (gfx90a, gfx942); gfx950 has 160 KiB.
pub const GFX9_LDS_BYTES: u32 = 64 * 1024;

/// What the device and queue provide to a launch's hidden arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchContext {
    /// GPU address of the dispatch queue's `amd_queue_t` (`hidden_queue_ptr`).
    pub queue_address: u64,
    /// Base of the private (scratch) aperture; its high 32 bits go to `hidden_private_base`.
    pub private_aperture_base: u64,
    /// Base of the shared (LDS) aperture; its high 32 bits go to `hidden_shared_base`.
    pub shared_aperture_base: u64,
    /// LDS bytes one work-group may use (static and dynamic together).
    pub lds_limit: u32,
    /// A printf buffer, if the device services one.
    pub printf_buffer: Option<u64>,
    /// A hostcall buffer, if the device services one.
    pub hostcall_buffer: Option<u64>,
    /// An initialised device-malloc heap (malloc/free device library V1), if there is one.
    pub heap: Option<u64>,
}

impl Default for LaunchContext {
    /// No queue, no apertures, no services, 64 KiB of LDS.
    fn default() -> Self {
        Self {
            queue_address: 0,
            private_aperture_base: 0,
            shared_aperture_base: 0,
            lds_limit: GFX9_LDS_BYTES,
            printf_buffer: None,
            hostcall_buffer: None,
            heap: None,
        }
    }
}

impl LaunchContext {
    /// Why the kernel cannot have `kind` served, if it lists it and the context lacks it.
    pub(crate) fn missing_service(&self, kind: HiddenArg) -> Option<&'static str> {
        match kind {
            HiddenArg::PrintfBuffer if self.printf_buffer.is_none() => Some(
                "the kernel calls printf and needs a printf buffer; aqueduct provides none \
                 (build it without printf)",
            ),
            _ => None,
        }
    }
}

/// The values of a launch's hidden arguments, worked out once per launch (the divisions for
/// block counts and remainders happen here, not once per field).
#[derive(Debug, Clone, Copy)]
pub(crate) struct HiddenValues<'a> {
    count: [u32; 3],
    remainder: [u32; 3],
    geometry: &'a Geometry,
    dynamic_lds: u32,
    context: &'a LaunchContext,
}

impl<'a> HiddenValues<'a> {
    /// The values for a launch of `geometry` whose LDS beyond the kernel's static LDS is
    /// `dynamic_lds` bytes.
    pub(crate) fn new(
        geometry: &'a Geometry,
        dynamic_lds: u32,
        context: &'a LaunchContext,
    ) -> Self {
        Self {
            count: geometry.block_count(),
            remainder: geometry.remainder(),
            geometry,
            dynamic_lds,
            context,
        }
    }

    /// The value of hidden argument `kind`. Services the context lacks read as 0.
    pub(crate) fn get(&self, kind: HiddenArg) -> u64 {
        use HiddenArg as H;
        let group = self.geometry.workgroup();
        let offset = self.geometry.global_offset();
        let context = self.context;
        match kind {
            H::BlockCountX => self.count[0].into(),
            H::BlockCountY => self.count[1].into(),
            H::BlockCountZ => self.count[2].into(),
            H::GroupSizeX => group[0].into(),
            H::GroupSizeY => group[1].into(),
            H::GroupSizeZ => group[2].into(),
            H::RemainderX => self.remainder[0].into(),
            H::RemainderY => self.remainder[1].into(),
            H::RemainderZ => self.remainder[2].into(),
            H::GlobalOffsetX => offset[0],
            H::GlobalOffsetY => offset[1],
            H::GlobalOffsetZ => offset[2],
            H::GridDims => self.geometry.dims().into(),
            H::DynamicLdsSize => self.dynamic_lds.into(),
            H::QueuePtr => context.queue_address,
            H::PrivateBase => context.private_aperture_base >> 32,
            H::SharedBase => context.shared_aperture_base >> 32,
            H::PrintfBuffer => context.printf_buffer.unwrap_or(0),
            H::HostcallBuffer => context.hostcall_buffer.unwrap_or(0),
            H::HeapV1 => context.heap.unwrap_or(0),
            H::None | H::MultigridSyncArg | H::DefaultQueue | H::CompletionAction => 0,
        }
    }
}
