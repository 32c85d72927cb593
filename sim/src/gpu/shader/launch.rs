//! Wave launch state, as the command processor and the SPI set it up (code-objects.md §5.5):
//! user SGPRs in AMDGPUUsage's order from the kernel descriptor and the dispatch packet, then
//! the system SGPRs (workgroup ids, workgroup info, private segment wave offset), work-item ids
//! packed into v0, EXEC covering the wave's work-items, MODE from COMPUTE_PGM_RSRC1, and the
//! wave's scratch slot (FLAT_SCRATCH on architected-flat-scratch targets).

use amdgpu_loader::KernelDescriptor;
use amdgpu_loader::kernel_descriptor::{UserSgpr, rsrc1, rsrc2};

use crate::gpu::dispatch::{DispatchError, DispatchRequest, RegisterDispatch};
use crate::gpu::shader::memory::DeviceMemory;
use crate::gpu::shader::wave::{FLAT_SCRATCH, LANES, Wave, mode};
use crate::gpu::target::GfxTarget;

/// The most work-items in a workgroup.
const MAX_WORKGROUP_SIZE: u64 = 1024;

/// The firmware skips this many bytes of a kernel that preloads kernargs: the first 256 bytes
/// are a compatibility prologue for firmware without preloading (code-objects.md §8).
const PRELOAD_PROLOGUE_BYTES: u64 = 256;

/// Everything needed to start the waves of any workgroup of a dispatch.
#[derive(Clone, Debug)]
pub struct Launch {
    /// The ISA.
    pub target: GfxTarget,
    /// First instruction.
    pub entry: u64,
    /// Workgroup size in work-items.
    pub workgroup: [u32; 3],
    /// Grid size in work-items.
    pub grid: [u32; 3],
    /// Workgroups per dimension (the last may be partial).
    pub groups: [u32; 3],
    /// Waves of a full workgroup.
    pub waves_per_group: u32,
    /// LDS bytes per workgroup.
    pub lds_bytes: u32,
    /// User SGPR values from s0.
    pub user_sgprs: Vec<u32>,
    /// Where the system SGPRs start (COMPUTE_PGM_RSRC2.USER_SGPR_COUNT).
    pub system_sgpr_base: usize,
    rsrc2: u32,
    /// Work-item id dimensions beyond X in v0 (0, 1 or 2).
    pub workitem_id_dims: u32,
    /// MODE at launch.
    pub mode: u32,
    /// Scratch: base of the queue's backing memory and bytes per wave (0 if none).
    pub scratch_base: u64,
    /// Bytes of one wave's private slot.
    pub scratch_wave_bytes: u64,
    /// How many wave slots the backing memory holds.
    pub scratch_slots: u64,
    /// FLAT_SCRATCH is initialised by hardware (gfx942, GFX11) rather than by the kernel's
    /// prolog.
    pub architected_flat_scratch: bool,
    /// The kernel runs in wave32 (its descriptor's ENABLE_WAVEFRONT_SIZE32).
    pub wave32: bool,
}

fn invalid(msg: impl Into<String>) -> DispatchError {
    DispatchError::InvalidCodeObject(msg.into())
}

/// MODE at launch from COMPUTE_PGM_RSRC1: FP_ROUND 3:0, FP_DENORM 7:4, DX10_CLAMP 8, IEEE 9.
fn mode_from_rsrc1(rsrc1_v: u32) -> u32 {
    rsrc1::FLOAT_ROUND_MODE_32.get(rsrc1_v)
        | rsrc1::FLOAT_ROUND_MODE_16_64.get(rsrc1_v) << 2
        | rsrc1::FLOAT_DENORM_MODE_32.get(rsrc1_v) << mode::DENORM_32_SHIFT
        | rsrc1::FLOAT_DENORM_MODE_16_64.get(rsrc1_v) << mode::DENORM_16_64_SHIFT
        | if rsrc1::GFX6_GFX11_ENABLE_DX10_CLAMP.get(rsrc1_v) != 0 {
            mode::DX10_CLAMP
        } else {
            0
        }
        | if rsrc1::GFX6_GFX11_ENABLE_IEEE_MODE.get(rsrc1_v) != 0 {
            mode::IEEE
        } else {
            0
        }
}

/// Bytes of LDS per unit of COMPUTE_PGM_RSRC2.LDS_SIZE on GFX9 (128 dwords).
const LDS_GRANULE_BYTES: u32 = 512;
/// COMPUTE_TMPRING_SIZE.WAVESIZE of `target`: its bytes per unit and its mask after the shift
/// of 12 (COMPUTE_TMPRING_SIZE__WAVESIZE__SHIFT). GFX9: 1 KiB units in 13 bits (bits 24:12);
/// GFX11: 256-byte units in 15 bits (bits 26:12, gc_11_0_0_sh_mask.h's WAVESIZE_MASK
/// 0x07FFF000 as `src/queue/scratch.rs` has it; the header itself was not re-read here). The
/// 256-byte unit is ROCr's and tinygrad's `mem_alignment_size` from GFX11, and LLVM's
/// SPI_TMPRING_SIZE for gfx1100 aligns a wave's scratch to 256 bytes likewise.
fn tmpring_wavesize(target: GfxTarget) -> (u64, u32) {
    if target.is_gfx9() {
        (1024, 0x1FFF)
    } else {
        (256, 0x7FFF)
    }
}

/// Workgroups per dimension and the checks both launch paths make on the shape.
fn shape(workgroup: [u32; 3], grid: [u32; 3]) -> Result<([u32; 3], u64), DispatchError> {
    if workgroup.contains(&0) {
        return Err(invalid("a workgroup size of 0"));
    }
    let wg_items: u64 = workgroup.iter().map(|&v| u64::from(v)).product();
    if wg_items > MAX_WORKGROUP_SIZE {
        return Err(invalid(format!(
            "{wg_items} work-items per workgroup (max 1024)"
        )));
    }
    Ok(([0, 1, 2].map(|i| grid[i].div_ceil(workgroup[i])), wg_items))
}

impl Launch {
    /// Read the kernel descriptor through `mem` and work out the launch state of `request`.
    pub fn new(request: &DispatchRequest, mem: &mut DeviceMemory) -> Result<Self, DispatchError> {
        let packet = &request.packet;
        let mut kd_bytes = [0u8; 64];
        mem.read(packet.kernel_object, &mut kd_bytes)?;
        let kd =
            KernelDescriptor::read(&kd_bytes).ok_or_else(|| invalid("short kernel descriptor"))?;
        // GFX10+ runs either wave size, chosen by the descriptor's ENABLE_WAVEFRONT_SIZE32.
        let wave32 = kd.wavefront_size() == 32;
        if wave32 && request.target.wave64_only() {
            return Err(invalid("a wave32 kernel on a wave64-only target"));
        }
        let lanes = if wave32 { 32 } else { LANES as u32 };
        let workgroup = [
            u32::from(packet.workgroup_size_x),
            u32::from(packet.workgroup_size_y),
            u32::from(packet.workgroup_size_z),
        ];
        let grid = [packet.grid_size_x, packet.grid_size_y, packet.grid_size_z];
        let (groups, wg_items) = shape(workgroup, grid)?;
        let lds_bytes = packet.group_segment_size;
        if lds_bytes > request.lds_bytes_per_workgroup {
            return Err(invalid(format!(
                "group segment of {lds_bytes} bytes exceeds the {} bytes of LDS",
                request.lds_bytes_per_workgroup
            )));
        }
        let rsrc1_v = kd.compute_pgm_rsrc1;
        let rsrc2_v = kd.compute_pgm_rsrc2;
        let mut entry = packet
            .kernel_object
            .wrapping_add(kd.kernel_code_entry_byte_offset as u64);
        if kd.kernarg_preload_length() != 0 {
            entry = entry.wrapping_add(PRELOAD_PROLOGUE_BYTES);
        }
        // gfx942 and GFX11 (LLVM's FeatureArchitectedFlatScratch, in
        // FeatureISAVersion11_Common) get FLAT_SCRATCH from the SPI, and no wave offset SGPR.
        let architected_flat_scratch =
            matches!(request.target, GfxTarget::Gfx942 | GfxTarget::Gfx1100);
        let scratch = &request.scratch;
        let scratch_wave_bytes = u64::from(scratch.wave64_lane_byte_size) * LANES as u64;
        // How many waves may hold scratch at once: the CP throttles scratch waves by
        // COMPUTE_TMPRING_SIZE.WAVES (bits 11:0, per XCC), which every runtime sets in
        // `compute_tmpring_size`; `scratch_backing_memory_byte_size` is runtime bookkeeping
        // (ROCr fills it, tinygrad leaves it 0) and is not known to be read by the firmware
        // (unsure). A queue with no tmpring image (the simulator's own benches) falls back to
        // what the byte size holds.
        let tmpring_waves = u64::from(scratch.compute_tmpring_size & 0xFFF);
        let scratch_slots = if tmpring_waves != 0 {
            tmpring_waves
        } else {
            scratch
                .backing_memory_byte_size
                .checked_div(scratch_wave_bytes)
                .unwrap_or(0)
        };
        if u64::from(packet.private_segment_size) > u64::from(scratch.wave64_lane_byte_size) {
            return Err(invalid(format!(
                "the dispatch needs {} private bytes per work-item but the queue provides {}",
                packet.private_segment_size, scratch.wave64_lane_byte_size
            )));
        }
        // User SGPRs.
        let user_sgpr_count = kd.user_sgpr_count() as usize;
        if user_sgpr_count > 16 {
            return Err(invalid(format!("{user_sgpr_count} user SGPRs (max 16)")));
        }
        let mut user = vec![0u32; 16];
        let split = |v: u64| [v as u32, (v >> 32) as u32];
        for slot in kd.user_sgprs() {
            let values: Vec<u32> = match slot.kind {
                UserSgpr::PrivateSegmentBuffer => scratch.resource_descriptor.to_vec(),
                UserSgpr::DispatchPtr => split(request.packet_va).to_vec(),
                UserSgpr::QueuePtr => split(request.queue_va).to_vec(),
                UserSgpr::KernargSegmentPtr => split(packet.kernarg_address).to_vec(),
                UserSgpr::DispatchId => split(request.dispatch_id).to_vec(),
                UserSgpr::FlatScratchInit => split(scratch.backing_memory_location).to_vec(),
                UserSgpr::PreloadedKernargs => {
                    let offset = u64::from(kd.kernarg_preload_offset()) * 4;
                    let mut v = Vec::with_capacity(slot.count as usize);
                    for i in 0..u64::from(slot.count) {
                        v.push(mem.read_u32(packet.kernarg_address + offset + 4 * i)?);
                    }
                    v
                }
                UserSgpr::PrivateSegmentSize => {
                    vec![packet.private_segment_size.next_multiple_of(4)]
                }
            };
            for (i, v) in values.into_iter().take(slot.count as usize).enumerate() {
                user[slot.first as usize + i] = v;
            }
        }
        user.truncate(
            user_sgpr_count
                .max(kd.enabled_user_sgpr_count() as usize)
                .min(16),
        );
        let mode = mode_from_rsrc1(rsrc1_v);
        Ok(Self {
            target: request.target,
            entry,
            workgroup,
            grid,
            groups,
            waves_per_group: (wg_items as u32).div_ceil(lanes),
            wave32,
            lds_bytes,
            user_sgprs: user,
            system_sgpr_base: user_sgpr_count,
            rsrc2: rsrc2_v,
            workitem_id_dims: rsrc2::ENABLE_VGPR_WORKITEM_ID.get(rsrc2_v).min(2),
            mode,
            scratch_base: scratch.backing_memory_location,
            scratch_wave_bytes,
            scratch_slots,
            architected_flat_scratch,
        })
    }

    /// The launch state of a register-programmed dispatch (PM4 `DISPATCH_DIRECT`): the CP
    /// reads no kernel descriptor, so the user SGPRs are `COMPUTE_USER_DATA_*` as written (as
    /// many as RSRC2.USER_SGPR says), LDS is RSRC2.LDS_SIZE, the wave size is the
    /// initiator's CS_W32_EN (GFX11; GFX9 is wave64), and each wave's scratch slot comes from
    /// COMPUTE_TMPRING_SIZE (WAVES slots of WAVESIZE units: 1 KiB on GFX9, 256 bytes on GFX11)
    /// at the base of COMPUTE_DISPATCH_SCRATCH_BASE (architected flat scratch, gfx942 and
    /// GFX11; on gfx90a the kernel finds its scratch through the buffer descriptor and
    /// flat-scratch values in its user SGPRs, and only the wave offset comes from here).
    ///
    /// On GFX11, WAVES counts waves per shader engine (tinygrad divides its wave count by the
    /// engines; ROCr likewise): the model takes WAVES as the number of slots of the whole
    /// dispatch, which never reaches past the memory such a ring describes, and at most
    /// throttles concurrency more than the hardware would.
    pub fn from_registers(request: &RegisterDispatch) -> Result<Self, DispatchError> {
        if request.wave32 && request.target.wave64_only() {
            return Err(invalid("a wave32 dispatch on a wave64-only target"));
        }
        let lanes = if request.wave32 { 32 } else { LANES as u32 };
        let (groups, wg_items) = shape(request.workgroup, request.grid)?;
        let lds_bytes = rsrc2::GRANULATED_LDS_SIZE.get(request.rsrc2) * LDS_GRANULE_BYTES;
        if lds_bytes > request.lds_bytes_per_workgroup {
            return Err(invalid(format!(
                "RSRC2.LDS_SIZE asks {lds_bytes} bytes of LDS, a workgroup has {}",
                request.lds_bytes_per_workgroup
            )));
        }
        let user_sgpr_count = rsrc2::USER_SGPR_COUNT.get(request.rsrc2) as usize;
        if user_sgpr_count > request.user_data.len() {
            return Err(invalid(format!("{user_sgpr_count} user SGPRs (max 16)")));
        }
        let tmpring = request.tmpring_size;
        let (unit, mask) = tmpring_wavesize(request.target);
        let scratch_wave_bytes = u64::from((tmpring >> 12) & mask) * unit;
        Ok(Self {
            target: request.target,
            entry: request.entry,
            workgroup: request.workgroup,
            grid: request.grid,
            groups,
            waves_per_group: (wg_items as u32).div_ceil(lanes),
            lds_bytes,
            user_sgprs: request.user_data[..user_sgpr_count].to_vec(),
            system_sgpr_base: user_sgpr_count,
            rsrc2: request.rsrc2,
            workitem_id_dims: rsrc2::ENABLE_VGPR_WORKITEM_ID.get(request.rsrc2).min(2),
            mode: mode_from_rsrc1(request.rsrc1),
            scratch_base: request.scratch_base,
            scratch_wave_bytes,
            scratch_slots: u64::from(tmpring & 0xFFF),
            architected_flat_scratch: matches!(
                request.target,
                GfxTarget::Gfx942 | GfxTarget::Gfx1100
            ),
            wave32: request.wave32,
        })
    }

    /// Lanes of a wave: 32 or 64.
    pub fn lanes(&self) -> u32 {
        if self.wave32 { 32 } else { LANES as u32 }
    }

    /// Total workgroups.
    pub fn total_groups(&self) -> u64 {
        self.groups.iter().map(|&g| u64::from(g)).product()
    }

    /// The workgroup id of linear workgroup `index` (X fastest).
    pub fn group_id(&self, index: u64) -> [u32; 3] {
        let gx = u64::from(self.groups[0]);
        let gy = u64::from(self.groups[1]);
        [
            (index % gx) as u32,
            ((index / gx) % gy) as u32,
            (index / (gx * gy)) as u32,
        ]
    }

    /// The work-items of workgroup `id` in each dimension (smaller at the grid's edge).
    pub fn group_extent(&self, id: [u32; 3]) -> [u32; 3] {
        [0, 1, 2].map(|i| {
            let start = u64::from(id[i]) * u64::from(self.workgroup[i]);
            (u64::from(self.grid[i]) - start).min(u64::from(self.workgroup[i])) as u32
        })
    }

    /// Set up wave `index` of workgroup `id` (extent `extent`) in `wave`, with private slot `slot`.
    pub fn init_wave(
        &self,
        wave: &mut Wave,
        id: [u32; 3],
        extent: [u32; 3],
        index: u32,
        slot: u64,
    ) {
        wave.reset();
        wave.wave_in_group = index;
        wave.pc = self.entry;
        wave.mode = self.mode;
        wave.wave32 = self.wave32;
        wave.flat_scratch_hwreg = !self.target.is_gfx9();
        for (i, v) in self.user_sgprs.iter().enumerate() {
            wave.set_s(i, *v);
        }
        let wave_offset = (slot * self.scratch_wave_bytes) as u32;
        let mut s = self.system_sgpr_base;
        let mut push = |wave: &mut Wave, v: u32| {
            wave.set_s(s, v);
            s += 1;
        };
        if rsrc2::ENABLE_SGPR_WORKGROUP_ID_X.get(self.rsrc2) != 0 {
            push(wave, id[0]);
        }
        if rsrc2::ENABLE_SGPR_WORKGROUP_ID_Y.get(self.rsrc2) != 0 {
            push(wave, id[1]);
        }
        if rsrc2::ENABLE_SGPR_WORKGROUP_ID_Z.get(self.rsrc2) != 0 {
            push(wave, id[2]);
        }
        if rsrc2::ENABLE_SGPR_WORKGROUP_INFO.get(self.rsrc2) != 0 {
            // Work-group info is used by ordered-append and GWS code only; 0 stands in.
            push(wave, 0);
        }
        let private = rsrc2::ENABLE_PRIVATE_SEGMENT.get(self.rsrc2) != 0;
        if private && !self.architected_flat_scratch {
            push(wave, wave_offset);
        }
        wave.scratch_base = self.scratch_base + u64::from(wave_offset);
        wave.scratch_bytes = self.scratch_wave_bytes;
        if private && self.architected_flat_scratch && !wave.flat_scratch_hwreg {
            wave.set_s64(FLAT_SCRATCH, wave.scratch_base);
        }
        // Work-item ids, packed in v0: X in 9:0, Y in 19:10, Z in 29:20.
        let (ax, ay, az) = (extent[0], extent[1], extent[2]);
        let items = ax * ay * az;
        let mut exec = 0u64;
        // The first lane's coordinates take three divisions; each next lane steps X and
        // carries into Y and Z (per-lane divisions were most of an empty kernel's set-up).
        let lanes = self.lanes();
        let first = index * lanes;
        let (mut x, mut y, mut z) = if first < items {
            (first % ax, (first / ax) % ay, first / (ax * ay))
        } else {
            (0, 0, 0)
        };
        let with_y = self.workitem_id_dims >= 1;
        let with_z = self.workitem_id_dims >= 2;
        let v0 = wave.v_mut(0);
        for (l, v) in v0.iter_mut().enumerate() {
            let flat = first + l as u32;
            if flat >= items || l as u32 >= lanes {
                *v = 0;
                continue;
            }
            exec |= 1 << l;
            *v = x | if with_y { y << 10 } else { 0 } | if with_z { z << 20 } else { 0 };
            x += 1;
            if x == ax {
                x = 0;
                y += 1;
                if y == ay {
                    y = 0;
                    z += 1;
                }
            }
        }
        wave.set_exec(exec);
    }

    /// Waves of a workgroup of extent `extent`.
    pub fn waves_in(&self, extent: [u32; 3]) -> u32 {
        (extent[0] * extent[1] * extent[2]).div_ceil(self.lanes())
    }
}
