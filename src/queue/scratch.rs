//! Scratch (private segment) memory of a queue, the way tinygrad provides it (aql.md §4): one
//! allocation sized for the largest per-work-item private size launched so far, described in
//! the queue's `amd_queue_t` (buffer V#, `COMPUTE_TMPRING_SIZE` image, location, byte size,
//! wave64 lane size) before the first launch that needs more. The queue is drained first:
//! the CP reads these fields at each dispatch (ROCr's resume after rewriting them on an
//! "insufficient scratch" halt relies on that too), and waves of earlier dispatches must not
//! lose their memory. A queue starts without scratch; the memory is freed with the queue.
//!
//! Unsure, for real hardware: with several XCCs (gfx942) the CP is taken to give XCC `i` the
//! slice at `location + i × byte_size` (ROCr's `byte_size` is per XCC and its V# covers one
//! slice; the split itself is firmware behaviour no source here spells out), and gfx9 dGPU
//! scratch is taken to be ordinary VRAM addressed by its GPU VA (aql.md §4: "gfx9+: VA of the
//! queue's scratch"); libhsakmt's scratch-aperture allocation path is not reproduced.
//!
//! ROCr instead lets the CP halt the queue (error word 0x1/0x400) and grows scratch from an
//! asynchronous handler. Launches through [`Queue::launch`](crate::Queue::launch) never
//! reach that halt; raw packets published with [`Queue::dispatch`](crate::Queue::dispatch)
//! must fit what [`Queue::reserve_scratch`](crate::Queue::reserve_scratch) provided, or the
//! queue stops with [`QueueError::OutOfScratch`](crate::QueueError::OutOfScratch).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};

use kfd::{Allocation, BufferObject, GpuMapping, MemoryKind};

use crate::device::Live;
use crate::error::{Error, Result};

/// What the scratch registers look like on a GPU generation: the unit and width of
/// `COMPUTE_TMPRING_SIZE.WAVESIZE` and the layout of the buffer V#.
///
/// ROCr's `InitScratchSRD` aligns a wave's scratch to `mem_alignment_size`: 1 KiB before
/// GFX11, 256 bytes from GFX11, where `WAVESIZE` counts 256-byte units in 15 bits (bits
/// 26:12) instead of KiB in 13 (bits 24:12).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ScratchIsa {
    /// GFX9 (gfx90a, gfx942): 1 KiB units, the GFX9 V#.
    Gfx9,
    /// GFX10 (gfx10xx): 1 KiB units, the GFX10 V# (`FORMAT`, `RESOURCE_LEVEL`, `OOB_SELECT`).
    Gfx10,
    /// GFX11 and later: 256-byte units, the GFX11 V#, and `WAVES` counted per shader engine.
    /// Unsure for GFX12 (not simulated, not checked).
    Gfx11,
}

impl ScratchIsa {
    /// The generation of an ISA with this major version.
    pub(crate) fn for_major(major: u32) -> Self {
        match major {
            0..=9 => Self::Gfx9,
            10 => Self::Gfx10,
            _ => Self::Gfx11,
        }
    }

    /// Bytes of one `WAVESIZE` unit.
    const fn wave_unit(self) -> u32 {
        match self {
            Self::Gfx9 | Self::Gfx10 => 1024,
            Self::Gfx11 => 256,
        }
    }

    /// Largest `WAVESIZE` value.
    const fn max_wave_units(self) -> u32 {
        match self {
            Self::Gfx9 | Self::Gfx10 => 0x1FFF,
            Self::Gfx11 => 0x7FFF,
        }
    }

    /// Per-work-item private bytes are provided in multiples of this: a 64-lane wave then
    /// takes whole `WAVESIZE` units.
    pub(crate) const fn lane_granule(self) -> u32 {
        self.wave_unit() / 64
    }

    /// The largest per-work-item private size a 64-lane wave can have: every unit
    /// `WAVESIZE` can count, over 64 lanes (131,056 bytes on GFX9, ROCr's `MAX_WAVE_SCRATCH`
    /// / 64; 131,068 on GFX11). Wave32 kernels could have twice as much per lane; the limit
    /// does not depend on the kernel, so it is the wave64 one everywhere.
    pub(crate) const fn max_lane_bytes(self) -> u32 {
        self.max_wave_units() * self.wave_unit() / 64
    }
}

/// gfx9 buffer V# fields of the scratch descriptor (word 3 unless noted).
const DST_SEL_XYZW: u32 = 4 | 5 << 3 | 6 << 6 | 7 << 9;
const NUM_FORMAT_UINT: u32 = 4 << 12;
const DATA_FORMAT_32: u32 = 4 << 15;
const ELEMENT_SIZE_4: u32 = 1 << 19;
const INDEX_STRIDE_64: u32 = 3 << 21;
const ADD_TID_ENABLE: u32 = 1 << 23;
/// Word 1.
const SWIZZLE_ENABLE: u32 = 1 << 31;
/// GFX10+ word 3: `FORMAT` (bits 18:12) `BUF_FMT_32_UINT` (20 on GFX10 and GFX11).
const FORMAT_32_UINT: u32 = 20 << 12;
/// GFX10 word 3: `RESOURCE_LEVEL` (must be 1).
const RESOURCE_LEVEL_GFX10: u32 = 1 << 24;
/// GFX10+ word 3: `OOB_SELECT` 2, no bounds check in swizzled mode (ROCr's choice).
const OOB_SELECT_RAW: u32 = 2 << 28;
/// GFX11 word 1: `SWIZZLE_ENABLE` is two bits (31:30); ROCr sets it to 1 (unsure: from
/// ROCr's register headers as remembered, not checked against a board).
const SWIZZLE_ENABLE_GFX11: u32 = 1 << 30;

/// Wave slots per CU when the topology does not say (`max_slots_scratch_cu` of MI200 and MI300).
const DEFAULT_SLOTS_PER_CU: u32 = 32;

/// How many waves may hold scratch at once on a GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ScratchShape {
    /// Wave slots over the whole GPU: CUs × `max_slots_scratch_cu`. (ROCr first rounds the CU
    /// count up to a multiple of the shader engines; with the CU counts of shipping parts that
    /// changes nothing, but it is not checked here.)
    pub(crate) slots: u64,
    /// XCCs: the CP splits the memory evenly between them.
    pub(crate) xccs: u32,
    /// Shader engines per XCC (`WAVES` counts per engine on GFX11).
    pub(crate) shader_engines: u32,
    /// The register layouts.
    pub(crate) isa: ScratchIsa,
}

impl ScratchShape {
    /// From the topology's counts (0 means "not reported").
    pub(crate) fn new(
        compute_units: u32,
        slots_per_cu: u32,
        xccs: u32,
        shader_engines: u32,
        isa: ScratchIsa,
    ) -> Self {
        let slots_per_cu = if slots_per_cu == 0 {
            DEFAULT_SLOTS_PER_CU
        } else {
            slots_per_cu
        };
        Self {
            slots: u64::from(compute_units.max(1)) * u64::from(slots_per_cu),
            xccs: xccs.max(1),
            shader_engines: shader_engines.max(1),
            isa,
        }
    }
}

/// What goes into the scratch fields of `amd_queue_t` (offsets 0x8C to 0xB3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ScratchFields {
    /// `compute_tmpring_size`.
    pub(crate) tmpring: u32,
    /// `scratch_resource_descriptor`.
    pub(crate) resource_descriptor: [u32; 4],
    /// `scratch_backing_memory_location`.
    pub(crate) location: u64,
    /// `scratch_backing_memory_byte_size` (per XCC).
    pub(crate) byte_size: u64,
    /// `scratch_wave64_lane_byte_size`.
    pub(crate) wave64_lane_byte_size: u32,
}

impl ScratchFields {
    /// The fields for `lane_bytes` per work-item (a multiple of the ISA's lane granule) at
    /// `location`, `shape.slots` waves in all.
    ///
    /// The V# follows ROCr's `InitScratchSRD` (aql.md §4): base with SWIZZLE_ENABLE and
    /// stride 0, NUM_RECORDS the bytes per XCC, DST_SEL XYZW, 32-bit UINT elements,
    /// INDEX_STRIDE 64, ADD_TID_ENABLE; GFX9 also ELEMENT_SIZE 4 bytes, GFX10+ OOB_SELECT 2
    /// (and RESOURCE_LEVEL 1 on GFX10). ROCr also sets ATC on APUs ("full profile"); a dGPU
    /// leaves it 0. TMPRING.WAVES is the wave count per XCC (per shader engine on GFX11,
    /// as ROCr divides it by `NumShaderBanks` there; unsure, remembered from ROCr, not
    /// checked against a board), clamped to its 12 bits, and WAVESIZE the units per wave.
    pub(crate) fn new(location: u64, lane_bytes: u32, shape: ScratchShape) -> Self {
        let isa = shape.isa;
        let wave_bytes = u64::from(lane_bytes) * 64;
        let byte_size = wave_bytes * shape.slots / u64::from(shape.xccs);
        let mut waves = shape.slots / u64::from(shape.xccs);
        if isa == ScratchIsa::Gfx11 {
            waves /= u64::from(shape.shader_engines);
        }
        let waves = waves.min(0xFFF) as u32;
        let wave_units =
            (wave_bytes / u64::from(isa.wave_unit())).min(u64::from(isa.max_wave_units())) as u32;
        let (swizzle, word3) = match isa {
            ScratchIsa::Gfx9 => (
                SWIZZLE_ENABLE,
                NUM_FORMAT_UINT | DATA_FORMAT_32 | ELEMENT_SIZE_4,
            ),
            ScratchIsa::Gfx10 => (
                SWIZZLE_ENABLE,
                FORMAT_32_UINT | RESOURCE_LEVEL_GFX10 | OOB_SELECT_RAW,
            ),
            ScratchIsa::Gfx11 => (SWIZZLE_ENABLE_GFX11, FORMAT_32_UINT | OOB_SELECT_RAW),
        };
        Self {
            tmpring: waves | wave_units << 12,
            resource_descriptor: [
                location as u32,
                (location >> 32) as u32 & 0xFFFF | swizzle,
                // NUM_RECORDS is 32 bits: past 4 GiB per XCC it saturates (ROCr caps each
                // XCC's scratch at 4 GiB for the same reason).
                u32::try_from(byte_size).unwrap_or(u32::MAX),
                DST_SEL_XYZW | word3 | INDEX_STRIDE_64 | ADD_TID_ENABLE,
            ],
            location,
            byte_size,
            wave64_lane_byte_size: lane_bytes,
        }
    }
}

/// Per-work-item bytes to provide for a dispatch asking for `private_bytes` on `isa`.
pub(crate) fn lane_bytes_for(private_bytes: u32, isa: ScratchIsa) -> u32 {
    private_bytes.next_multiple_of(isa.lane_granule())
}

/// The memory behind the fields now in `amd_queue_t`.
struct ScratchMemory {
    _mapping: GpuMapping,
    _memory: Arc<BufferObject>,
}

/// A queue's scratch: what it provides now, and the lock that keeps launches from publishing
/// while it changes.
pub(crate) struct Scratch {
    /// `scratch_wave64_lane_byte_size` now: read without a lock on the launch path.
    provided: AtomicU32,
    /// Held shared by a launch from its scratch check until its packet is published, and
    /// exclusively while the memory is replaced.
    gate: RwLock<Option<ScratchMemory>>,
    /// Memory replaced while dispatches published before may still use it (growth on the
    /// CP's request, see [`Scratch::grow_halted`]): freed with the queue.
    retired: Mutex<Vec<ScratchMemory>>,
    shape: ScratchShape,
    gpu_id: u32,
}

/// A launch's permission to publish: the scratch it checked stays in place until dropped.
pub(crate) struct ScratchGuard<'a>(
    #[allow(dead_code, reason = "held, not read")] RwLockReadGuard<'a, Option<ScratchMemory>>,
);

impl Scratch {
    pub(crate) fn new(gpu_id: u32, shape: ScratchShape) -> Self {
        Self {
            provided: AtomicU32::new(0),
            gate: RwLock::new(None),
            retired: Mutex::new(Vec::new()),
            shape,
            gpu_id,
        }
    }

    /// Per-work-item bytes the queue provides now.
    pub(crate) fn provided(&self) -> u32 {
        self.provided.load(Ordering::Acquire)
    }

    /// Hold the scratch in place while a packet needing at most `lane_bytes` is published;
    /// `None` if the queue provides less (grow it with [`Self::grow`] first).
    pub(crate) fn hold(&self, lane_bytes: u32) -> Option<ScratchGuard<'_>> {
        let guard = self
            .gate
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        (lane_bytes == 0 || self.provided() >= lane_bytes).then_some(ScratchGuard(guard))
    }

    /// Make the queue provide at least `lane_bytes` per work-item: with every launch held
    /// off, `drain` waits for the queue to go idle, then new memory is allocated and described
    /// by `write` (into `amd_queue_t`), and the old memory freed.
    pub(crate) fn grow(
        &self,
        live: &Live,
        lane_bytes: u32,
        drain: impl FnOnce() -> Result<()>,
        write: impl FnOnce(&ScratchFields) -> Result<()>,
    ) -> Result<()> {
        self.replace(live, lane_bytes, drain, write, false)
    }

    /// Make the queue provide at least `lane_bytes` per work-item while the CP is halted on a
    /// dispatch that needs them (it reported insufficient scratch and waits for the host to
    /// store 0 to `queue_inactive_signal`). Dispatches published before that one may still
    /// be running on the old memory, so it is kept until the queue goes (ROCr's
    /// `DynamicScratchHandler` grows it in the same place; whether it frees the old memory at
    /// once is not checked here: keeping it is safe either way).
    pub(crate) fn grow_halted(
        &self,
        live: &Live,
        lane_bytes: u32,
        write: impl FnOnce(&ScratchFields) -> Result<()>,
    ) -> Result<()> {
        self.replace(live, lane_bytes, || Ok(()), write, true)
    }

    fn replace(
        &self,
        live: &Live,
        lane_bytes: u32,
        drain: impl FnOnce() -> Result<()>,
        write: impl FnOnce(&ScratchFields) -> Result<()>,
        keep_old: bool,
    ) -> Result<()> {
        let isa = self.shape.isa;
        let lane_bytes = lane_bytes_for(lane_bytes, isa);
        if lane_bytes > isa.max_lane_bytes() {
            return Err(Error::Unsupported(format!(
                "{lane_bytes} private bytes per work-item: a wave holds at most {} per lane here",
                isa.max_lane_bytes()
            )));
        }
        let mut memory: RwLockWriteGuard<'_, Option<ScratchMemory>> = self
            .gate
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if self.provided() >= lane_bytes {
            return Ok(());
        }
        drain()?;
        let total = u64::from(lane_bytes) * 64 * self.shape.slots;
        let gpu_id = self.gpu_id;
        let what = || format!("{total} bytes of scratch on GPU {gpu_id:#x}");
        let buffer = live
            .kfd
            .allocate(gpu_id, Allocation::new(MemoryKind::VramPrivate, total))
            .map_err(|e| Error::driver(what, e))?;
        let mapping = buffer
            .map_to(&[gpu_id])
            .map_err(|e| Error::driver(what, e))?;
        let fields = ScratchFields::new(buffer.va(), lane_bytes, self.shape);
        write(&fields)?;
        let old = memory.replace(ScratchMemory {
            _mapping: mapping,
            _memory: buffer,
        });
        if keep_old && let Some(old) = old {
            self.retired
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(old);
        }
        self.provided.store(lane_bytes, Ordering::Release);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gfx9_fields_describe_the_memory() {
        let shape = ScratchShape::new(104, 32, 1, 8, ScratchIsa::Gfx9);
        let fields = ScratchFields::new(
            0x7f_1234_5000,
            lane_bytes_for(1000, ScratchIsa::Gfx9),
            shape,
        );
        assert_eq!(fields.wave64_lane_byte_size, 1008);
        assert_eq!(fields.byte_size, 1008 * 64 * 104 * 32);
        assert_eq!(fields.resource_descriptor[0], 0x1234_5000);
        assert_eq!(fields.resource_descriptor[1], 0x7f | 1 << 31);
        assert_eq!(u64::from(fields.resource_descriptor[2]), fields.byte_size);
        // The value ROCr's gfx9 SRD word 3 has, and the simulator's shader tests use.
        assert_eq!(
            fields.resource_descriptor[3],
            0xfac | 4 << 12 | 4 << 15 | 1 << 19 | 3 << 21 | 1 << 23
        );
        assert_eq!(fields.tmpring & 0xFFF, 104 * 32);
        assert_eq!(fields.tmpring >> 12, 63);
    }

    #[test]
    fn several_xccs_split_the_memory_and_the_waves() {
        let shape = ScratchShape::new(304, 0, 8, 4, ScratchIsa::Gfx9);
        let fields = ScratchFields::new(0x1000_0000, 64, shape);
        assert_eq!(shape.slots, 304 * 32);
        assert_eq!(fields.byte_size, 64 * 64 * 304 * 32 / 8);
        assert_eq!(fields.tmpring & 0xFFF, 304 * 32 / 8);
        assert_eq!(fields.tmpring >> 12, 4);
    }

    #[test]
    fn lane_sizes_round_to_whole_units_per_wave() {
        let gfx9 = ScratchIsa::Gfx9;
        assert_eq!(lane_bytes_for(0, gfx9), 0);
        assert_eq!(lane_bytes_for(1, gfx9), 16);
        assert_eq!(lane_bytes_for(16, gfx9), 16);
        assert_eq!(lane_bytes_for(17, gfx9), 32);
        // GFX11 counts 256-byte units: 4 bytes per lane of a wave64.
        assert_eq!(lane_bytes_for(17, ScratchIsa::Gfx11), 20);
        assert_eq!(gfx9.max_lane_bytes(), 8_387_584 / 64);
        assert_eq!(ScratchIsa::Gfx11.max_lane_bytes(), 0x7FFF * 256 / 64);
        // The dispatch limits the agent reports are these.
        for major in [9, 10, 11] {
            assert_eq!(
                ScratchIsa::for_major(major).max_lane_bytes(),
                aql::DispatchLimits::for_gfx_major(major).max_private_segment_size
            );
        }
        assert_eq!(ScratchIsa::for_major(9), gfx9);
        assert_eq!(ScratchIsa::for_major(11), ScratchIsa::Gfx11);
    }

    #[test]
    fn gfx11_fields_count_256_byte_units_per_engine() {
        // RX 7900 XTX: 96 CUs x 32 slots, 6 shader engines.
        let shape = ScratchShape::new(96, 32, 1, 6, ScratchIsa::Gfx11);
        let lane = lane_bytes_for(100, ScratchIsa::Gfx11);
        let fields = ScratchFields::new(0x7f_0000_0000, lane, shape);
        assert_eq!(lane, 100);
        assert_eq!(fields.byte_size, 100 * 64 * 96 * 32);
        assert_eq!(fields.tmpring & 0xFFF, 96 * 32 / 6);
        assert_eq!(fields.tmpring >> 12, 100 * 64 / 256);
        assert_eq!(fields.resource_descriptor[1], 0x7f | 1 << 30);
        assert_eq!(
            fields.resource_descriptor[3],
            0xfac | 20 << 12 | 3 << 21 | 1 << 23 | 2 << 28
        );
    }
}
