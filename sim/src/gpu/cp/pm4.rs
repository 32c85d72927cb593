//! AMD vendor packet AmdFormat 1, `AMD_AQL_FORMAT_PM4_IB` (aql.md §1.5): an AQL slot that
//! carries a PM4 `INDIRECT_BUFFER` command, which makes the CP execute a buffer of PM4 commands
//! before completing the packet. ROCr uses it on gfx9+ for `ExecutePM4` (code-cache
//! invalidation with ACQUIRE_MEM when an executable is frozen, profiling); tinygrad wraps its
//! own PM4 streams in it.
//!
//! What the model does: it executes the PM4 commands a compute queue needs for memory
//! ordering and signalling, and rejects the rest. Executed:
//! - type-2 filler dwords and `NOP` (0x10): skipped;
//! - `ACQUIRE_MEM` (0x58) and `EVENT_WRITE` (0x46): cache actions, a full fence here (the
//!   simulator has no caches);
//! - `WRITE_DATA` (0x37) to memory (DST_SEL 1, 2 or 5), incrementing or one address;
//! - `WAIT_REG_MEM` (0x3C) on memory (MEM_SPACE 1, OPERATION 0), all seven functions on
//!   `(value & mask)` against the reference, 32-bit;
//! - `WAIT_REG_MEM` in register space with OPERATION 1 (write, then wait) on the NBIO HDP
//!   flush pair (write GPU_HDP_FLUSH_REQ, wait on GPU_HDP_FLUSH_DONE; `gfx_v9_0_ring_emit_hdp_flush`
//!   and tinygrad's `memory_barrier`): the simulator has no HDP cache, so the flush is a full
//!   fence and DONE reads back the bits requested at once; the wait then compares them like any
//!   other. Any other register is not modelled;
//! - `RELEASE_MEM` (0x49): a fence, then DATA_SEL 1 (32-bit data), 2 (64-bit data), 3 (GPU
//!   clock) or 4 (system clock, taken from the same counter), then INT_SEL ≠ 0 raises an
//!   end-of-pipe interrupt with the context id in the last dword.
//!
//! - `PRED_EXEC` (0x23): the next EXEC_COUNT dwords run only on the XCCs DEVICE_SELECT names.
//!   Every XCC of a multi-XCC GPU runs its own copy of the queue; the model runs one copy for
//!   all of them, so a predicated block runs (once) when it names any XCC the queue is on and
//!   is skipped when it names none. For the commands modelled here (memory writes, waits,
//!   interrupts, fences) running once on one XCC is what running on each named XCC leaves in
//!   memory; the second interrupt of a second XCC is not modelled.
//!
//! Anything else (register writes, type-0 packets, other opcodes, nested indirect buffers)
//! halts the queue with UNSUPPORTED_VENDOR_PACKET (0x100). Real firmware raises a
//! CP_BAD_OPCODE interrupt for an opcode it does not know; the interrupt contract has no such
//! interrupt, so the queue error word carries it instead. Field layouts: Linux
//! `drivers/gpu/drm/amd/amdgpu/soc15d.h` and `gfx_v9_0.c` (ring emit functions), ROCr
//! `amd_gpu_pm4.h`.

use std::sync::atomic::Ordering;

use aql::RawPacket;

use super::device_memory::DeviceMemory;
use super::queue_error::QueueError;
use crate::gpu::vm::MemoryFault;

/// PM4 type-3 opcodes the model knows.
mod opcode {
    pub(super) const DISPATCH_DIRECT: u8 = 0x15;
    pub(super) const PRED_EXEC: u8 = 0x23;
    pub(super) const NOP: u8 = 0x10;
    pub(super) const WRITE_DATA: u8 = 0x37;
    pub(super) const WAIT_REG_MEM: u8 = 0x3C;
    pub(super) const INDIRECT_BUFFER: u8 = 0x3F;
    pub(super) const EVENT_WRITE: u8 = 0x46;
    pub(super) const RELEASE_MEM: u8 = 0x49;
    pub(super) const ACQUIRE_MEM: u8 = 0x58;
    pub(super) const SET_SH_REG: u8 = 0x76;
    pub(super) const SET_UCONFIG_REG: u8 = 0x79;
}

/// The NBIO register `BIF_BX_PF0_GPU_HDP_FLUSH_REQ` and the `..._DONE` after it, as dword
/// offsets: segment 2 of NBIO (base 0xD20, the base the render node's `ip_discovery` reports)
/// plus 0x106 and 0x107 (`nbio_7_4_offset.h`; unsure for NBIO 7.9, whose header tinygrad reads
/// the same offsets from).
const HDP_FLUSH_REQ: u32 = 0xD20 + 0x106;
/// See [`HDP_FLUSH_REQ`].
const HDP_FLUSH_DONE: u32 = HDP_FLUSH_REQ + 1;

/// A type-2 packet: one filler dword.
const TYPE2_FILLER: u32 = 0x8000_0000;
/// INDIRECT_BUFFER dword 3: the IB is valid.
const IB_VALID: u32 = 1 << 23;
/// INDIRECT_BUFFER dword 3: CHAIN (the IB replaces the rest of the current one).
const IB_CHAIN: u32 = 1 << 20;

/// The PM4 header fields: type (31:30), count (29:16, body dwords − 1), opcode (15:8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pm4Header {
    kind: u32,
    body_dwords: u64,
    opcode: u8,
}

impl Pm4Header {
    fn parse(word: u32) -> Self {
        Self {
            kind: word >> 30,
            body_dwords: u64::from((word >> 16) & 0x3FFF) + 1,
            opcode: (word >> 8) as u8,
        }
    }
}

/// The indirect buffer an AmdFormat-1 packet points to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IndirectBuffer {
    /// GPU address of the first command (dword aligned).
    pub(crate) va: u64,
    /// Length in dwords (0 when the IB is marked not valid).
    pub(crate) dwords: u64,
}

impl IndirectBuffer {
    /// Decode the slot: dwords 1..=4 hold a PM4 `INDIRECT_BUFFER` command (ROCr
    /// `ExecutePM4`: IB_BASE_LO bits 31:2, IB_BASE_HI bits 15:0, IB_SIZE bits 19:0, VALID bit
    /// 23). Dword 5 (`dw_cnt_remain`, 0xA from ROCr) and the reserved dwords are not examined:
    /// their meaning to the firmware is not documented.
    pub(crate) fn decode(raw: &RawPacket) -> Result<Self, QueueError> {
        let dword = |i: usize| (raw.0[i / 2] >> (32 * (i % 2))) as u32;
        let header = Pm4Header::parse(dword(1));
        if header.kind != 3 || header.opcode != opcode::INDIRECT_BUFFER || header.body_dwords != 3 {
            return Err(QueueError::UnsupportedVendorPacket);
        }
        Ok(Self::from_body(dword(2), dword(3), dword(4)))
    }

    /// The buffer an `INDIRECT_BUFFER` body names: IB_BASE_LO bits 31:2, IB_BASE_HI bits
    /// 15:0, IB_SIZE bits 19:0 (dwords), VALID bit 23.
    fn from_body(base_lo: u32, base_hi: u32, control: u32) -> Self {
        let va = u64::from(base_lo & !3) | u64::from(base_hi & 0xFFFF) << 32;
        let dwords = if control & IB_VALID != 0 {
            u64::from(control & 0xF_FFFF)
        } else {
            0
        };
        Self { va, dwords }
    }
}

/// One PM4 command, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Pm4Command {
    /// Cache actions: a full memory fence.
    Fence,
    /// Write dwords to memory.
    WriteData {
        /// GPU address of the first dword.
        va: u64,
        /// Whether every dword goes to `va` (WR_ONE_ADDR) instead of consecutive dwords.
        one_address: bool,
        /// The data.
        data: Vec<u32>,
    },
    /// Wait until `(memory[va] & mask) function reference` (32-bit, unsigned).
    WaitMemory {
        /// GPU address polled.
        va: u64,
        /// The reference value.
        reference: u32,
        /// Applied to the memory value first.
        mask: u32,
        /// WAIT_REG_MEM FUNCTION (1..=6; 0 always passes).
        function: u8,
    },
    /// An HDP flush (a fence), then wait until `(requested & mask) function reference`, where
    /// `requested` is the bits written to the flush request (all done at once).
    HdpFlush {
        /// The bits written to GPU_HDP_FLUSH_REQ, and compared against.
        reference: u32,
        /// Applied to the done bits first.
        mask: u32,
        /// WAIT_REG_MEM FUNCTION.
        function: u8,
    },
    /// End-of-pipe: a fence, an optional data write, an optional interrupt.
    ReleaseMem {
        /// What to write.
        data: ReleaseData,
        /// GPU address of the write.
        va: u64,
        /// Context id of the interrupt, if one is requested.
        interrupt: Option<u32>,
    },
    /// Write consecutive registers (`SET_SH_REG`, `SET_UCONFIG_REG`).
    SetRegisters {
        /// Which space `offset` is in.
        space: RegisterSpace,
        /// Dword offset of the first register from the start of the space.
        offset: u32,
        /// One value per register, from `offset` on.
        values: Vec<u32>,
    },
    /// `DISPATCH_DIRECT`: launch a grid from the compute registers.
    DispatchDirect {
        /// DIM_X, DIM_Y, DIM_Z: workgroups (or work-items, with
        /// COMPUTE_DISPATCH_INITIATOR.USE_THREAD_DIMENSIONS) per dimension.
        dimensions: [u32; 3],
        /// The COMPUTE_DISPATCH_INITIATOR value.
        initiator: u32,
    },
    /// `INDIRECT_BUFFER`: execute another buffer of commands, then continue here.
    IndirectBuffer(IndirectBuffer),
}

/// Which register space a `SET_*_REG` packet writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RegisterSpace {
    /// `SET_SH_REG`: persistent shader state, offsets from `PACKET3_SET_SH_REG_START`.
    Sh,
    /// `SET_UCONFIG_REG`: user-configuration registers, offsets from
    /// `PACKET3_SET_UCONFIG_REG_START`.
    Uconfig,
}

/// RELEASE_MEM DATA_SEL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReleaseData {
    /// 0: no write.
    None,
    /// 1: the low 32 bits of the data.
    Low32(u32),
    /// 2: 64-bit data.
    Full64(u64),
    /// 3 and 4: a 64-bit clock counter value.
    Timestamp,
}

impl Pm4Command {
    /// Whether a WAIT_REG_MEM condition holds for `value`.
    pub(crate) fn wait_holds(function: u8, value: u32, mask: u32, reference: u32) -> bool {
        let value = value & mask;
        match function {
            1 => value < reference,
            2 => value <= reference,
            3 => value == reference,
            4 => value != reference,
            5 => value >= reference,
            6 => value > reference,
            _ => true,
        }
    }
}

/// A cursor over a stream of PM4 commands: an indirect buffer, or the part of a PM4 ring
/// between its read and write pointers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pm4Reader {
    /// Byte position of the next command in the stream (for an IB, its GPU address; for a
    /// ring, the read pointer in bytes, growing without wrapping).
    next: u64,
    /// Where the stream's commands end (same units as `next`).
    end: u64,
    /// For a ring: its GPU address and size in bytes (a power of two); positions wrap in it.
    ring: Option<(u64, u64)>,
    /// The XCCs the queue runs on, as a `PRED_EXEC` DEVICE_SELECT mask.
    xcc_mask: u32,
}

fn xcc_mask(xccs: u32) -> u32 {
    1u32.checked_shl(xccs).map_or(u32::MAX, |bit| bit - 1)
}

impl Pm4Reader {
    /// Read `ib` from its first command, on a queue that runs on `xccs` XCCs.
    pub(crate) fn new(ib: IndirectBuffer, xccs: u32) -> Self {
        Self {
            next: ib.va,
            end: ib.va + 4 * ib.dwords,
            ring: None,
            xcc_mask: xcc_mask(xccs),
        }
    }

    /// Read a PM4 ring of `ring_bytes` bytes at `ring_va` from dword `read` up to dword
    /// `write` (pointers that grow without wrapping). A command whose body is not yet all
    /// below `write` is not read: [`next_command`](Self::next_command) stops before it.
    pub(crate) fn ring(ring_va: u64, ring_bytes: u64, read: u64, write: u64, xccs: u32) -> Self {
        Self {
            next: 4 * read,
            end: 4 * write,
            ring: Some((ring_va, ring_bytes)),
            xcc_mask: xcc_mask(xccs),
        }
    }

    /// For a ring: the read pointer (in dwords) after the commands read so far.
    pub(crate) fn ring_position(&self) -> u64 {
        self.next / 4
    }

    fn va(&self, position: u64) -> u64 {
        match self.ring {
            Some((va, bytes)) => va + (position & (bytes - 1)),
            None => position,
        }
    }

    fn dword_at(&self, memory: &mut DeviceMemory, position: u64) -> Result<u32, MemoryFault> {
        memory.load_u32(self.va(position), Ordering::Relaxed)
    }

    /// The next command to execute, or `None` at the end of the buffer.
    pub(crate) fn next_command(
        &mut self,
        memory: &mut DeviceMemory,
    ) -> Result<Option<Pm4Command>, QueueError> {
        loop {
            if self.next >= self.end {
                return Ok(None);
            }
            let word = self.dword_at(memory, self.next)?;
            if word >> 30 == TYPE2_FILLER >> 30 {
                // Type-2: a single filler dword (CP_PACKET2 plus padding bits).
                self.next += 4;
                continue;
            }
            let header = Pm4Header::parse(word);
            let body = self.next + 4;
            let after = body + 4 * header.body_dwords;
            if after > self.end && self.ring.is_some() && header.kind == 3 {
                // Not all written yet: stop before it until the write pointer moves on.
                return Ok(None);
            }
            if header.kind != 3 || after > self.end {
                return Err(QueueError::UnsupportedVendorPacket);
            }
            self.next = after;
            let reader = *self;
            let at = |i: u64| body + 4 * i;
            let dword =
                |memory: &mut DeviceMemory, position: u64| reader.dword_at(memory, position);
            let command = match (header.opcode, header.body_dwords) {
                (opcode::NOP, _) => continue,
                (opcode::PRED_EXEC, 1) => {
                    // Dword 1: EXEC_COUNT in bits 13:0, DEVICE_SELECT in bits 31:24
                    // (tinygrad's `pred_exec`; the firmware's exact field widths are not
                    // documented publicly, unsure).
                    let control = dword(memory, at(0))?;
                    let exec_count = u64::from(control & 0x3FFF);
                    let device_select = control >> 24;
                    if device_select & self.xcc_mask == 0 {
                        let skipped = self.next + 4 * exec_count;
                        if skipped > self.end {
                            return Err(QueueError::UnsupportedVendorPacket);
                        }
                        self.next = skipped;
                    }
                    continue;
                }
                (opcode::ACQUIRE_MEM | opcode::EVENT_WRITE, _) => Pm4Command::Fence,
                (opcode::SET_SH_REG | opcode::SET_UCONFIG_REG, n) if n >= 2 => {
                    let space = if header.opcode == opcode::SET_SH_REG {
                        RegisterSpace::Sh
                    } else {
                        RegisterSpace::Uconfig
                    };
                    Pm4Command::SetRegisters {
                        space,
                        // Dword 1: the register offset in bits 15:0 (soc15d.h); the bits
                        // above (INDEX) select variants the model does not know.
                        offset: match dword(memory, at(0))? {
                            word if word >> 16 == 0 => word,
                            _ => return Err(QueueError::UnsupportedVendorPacket),
                        },
                        values: (1..n)
                            .map(|i| dword(memory, at(i)))
                            .collect::<Result<Vec<_>, _>>()?,
                    }
                }
                (opcode::DISPATCH_DIRECT, 4) => Pm4Command::DispatchDirect {
                    dimensions: [
                        dword(memory, at(0))?,
                        dword(memory, at(1))?,
                        dword(memory, at(2))?,
                    ],
                    initiator: dword(memory, at(3))?,
                },
                (opcode::INDIRECT_BUFFER, 3) => {
                    let control = dword(memory, at(2))?;
                    if control & IB_CHAIN != 0 {
                        return Err(QueueError::UnsupportedVendorPacket);
                    }
                    Pm4Command::IndirectBuffer(IndirectBuffer::from_body(
                        dword(memory, at(0))?,
                        dword(memory, at(1))?,
                        control,
                    ))
                }
                (opcode::WRITE_DATA, n) if n >= 4 => {
                    let control = dword(memory, at(0))?;
                    let dst_sel = (control >> 8) & 0xF;
                    if !matches!(dst_sel, 1 | 2 | 5) {
                        return Err(QueueError::UnsupportedVendorPacket);
                    }
                    let va = u64::from(dword(memory, at(1))? & !3)
                        | u64::from(dword(memory, at(2))?) << 32;
                    let data = (3..n)
                        .map(|i| dword(memory, at(i)))
                        .collect::<Result<Vec<_>, _>>()?;
                    Pm4Command::WriteData {
                        va,
                        one_address: control & (1 << 16) != 0,
                        data,
                    }
                }
                (opcode::WAIT_REG_MEM, 6) => {
                    let control = dword(memory, at(0))?;
                    let mem_space = (control >> 4) & 0x3;
                    let operation = (control >> 6) & 0x3;
                    let hdp_flush = mem_space == 0
                        && operation == 1
                        && dword(memory, at(1))? == HDP_FLUSH_REQ
                        && dword(memory, at(2))? == HDP_FLUSH_DONE;
                    if hdp_flush {
                        return Ok(Some(Pm4Command::HdpFlush {
                            reference: dword(memory, at(3))?,
                            mask: dword(memory, at(4))?,
                            function: (control & 0x7) as u8,
                        }));
                    }
                    if mem_space != 1 || operation != 0 {
                        return Err(QueueError::UnsupportedVendorPacket);
                    }
                    Pm4Command::WaitMemory {
                        va: u64::from(dword(memory, at(1))? & !3)
                            | u64::from(dword(memory, at(2))?) << 32,
                        reference: dword(memory, at(3))?,
                        mask: dword(memory, at(4))?,
                        function: (control & 0x7) as u8,
                    }
                }
                (opcode::RELEASE_MEM, 7) => {
                    let control = dword(memory, at(1))?;
                    let data_sel = control >> 29;
                    let int_sel = (control >> 24) & 0x7;
                    let lo = dword(memory, at(4))?;
                    let hi = dword(memory, at(5))?;
                    let data = match data_sel {
                        0 => ReleaseData::None,
                        1 => ReleaseData::Low32(lo),
                        2 => ReleaseData::Full64(u64::from(lo) | u64::from(hi) << 32),
                        3 | 4 => ReleaseData::Timestamp,
                        _ => return Err(QueueError::UnsupportedVendorPacket),
                    };
                    Pm4Command::ReleaseMem {
                        data,
                        va: u64::from(dword(memory, at(2))?)
                            | u64::from(dword(memory, at(3))?) << 32,
                        interrupt: (int_sel != 0).then(|| dword(memory, at(6))).transpose()?,
                    }
                }
                _ => return Err(QueueError::UnsupportedVendorPacket),
            };
            return Ok(Some(command));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_functions_compare_masked_unsigned() {
        assert!(Pm4Command::wait_holds(0, 5, 0, 9));
        assert!(Pm4Command::wait_holds(1, 3, 0xFF, 4));
        assert!(!Pm4Command::wait_holds(1, 4, 0xFF, 4));
        assert!(Pm4Command::wait_holds(2, 4, 0xFF, 4));
        assert!(Pm4Command::wait_holds(3, 0x104, 0xFF, 4));
        assert!(Pm4Command::wait_holds(4, 5, 0xFF, 4));
        assert!(Pm4Command::wait_holds(5, u32::MAX, u32::MAX, 4));
        assert!(Pm4Command::wait_holds(6, 5, 0xFF, 4));
        assert!(!Pm4Command::wait_holds(6, 4, 0xFF, 4));
    }

    #[test]
    fn the_slot_names_an_indirect_buffer() {
        let mut raw = RawPacket::default();
        let ib_header = 3u32 << 30 | 2 << 16 | u32::from(opcode::INDIRECT_BUFFER) << 8;
        let va = 0x7f12_3456_7890u64;
        let dwords = [
            0x0001_0000,
            ib_header,
            va as u32,
            (va >> 32) as u32,
            IB_VALID | 0xC,
        ];
        for (i, d) in dwords.iter().enumerate() {
            raw.0[i / 2] |= u64::from(*d) << (32 * (i % 2));
        }
        assert_eq!(
            IndirectBuffer::decode(&raw),
            Ok(IndirectBuffer { va, dwords: 12 })
        );
        raw.0[2] &= !u64::from(IB_VALID);
        assert_eq!(IndirectBuffer::decode(&raw).map(|ib| ib.dwords), Ok(0));
        raw.0[0] &= 0xFFFF_FFFF;
        assert_eq!(
            IndirectBuffer::decode(&raw),
            Err(QueueError::UnsupportedVendorPacket)
        );
    }
}
