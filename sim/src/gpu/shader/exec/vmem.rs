//! Vector memory: FLAT (generic addresses, routed by aperture to global memory, LDS or
//! scratch), GLOBAL, SCRATCH and MUBUF (buffer resources, including the swizzled private
//! segment buffer). Loads, stores (byte to 16-byte, d16 halves) and atomics, executed lane by
//! lane in lane order; global atomics are real atomics on the backing memory.
//!
//! Private (scratch) memory is interleaved per lane at dword granularity, as the private segment
//! buffer's swizzle (ELEMENT_SIZE 4 bytes, INDEX_STRIDE 64) lays it out: byte `o` of lane `l`
//! lives at `base + (o / 4) * 256 + l * 4 + o % 4`. FLAT scratch accesses use the same layout, so
//! MUBUF and FLAT views of the stack agree.

use std::sync::OnceLock;
use std::sync::atomic::{Ordering, fence};

use super::atomic::AtomicOp;
use super::load_store::{Load, Store};
use super::{Exec, Fault, R, unimplemented};
use crate::gpu::shader::isa::{Encoding, Family, Inst, Op, Operand};
use crate::gpu::shader::wave::{LANES, lanes};

#[derive(Clone, Copy, Debug)]
enum Kind {
    Load(Load),
    Store(Store),
    Atomic {
        op: AtomicOp,
        wide: bool,
    },
    /// Cache write-back/invalidate: a fence in the simulator.
    Cache,
}

fn parse(name: &str) -> Option<Kind> {
    let (_, rest) = name.split_once('_')?;
    if matches!(rest, "wbinvl1" | "wbinvl1_vol" | "wbl2" | "invl2" | "inv") {
        return Some(Kind::Cache);
    }
    let width = |t: &str| -> Option<(u32, bool)> {
        Some(match t {
            "ubyte" | "byte" => (1, false),
            "sbyte" => (1, true),
            "ushort" | "short" => (2, false),
            "sshort" => (2, true),
            "dword" => (4, false),
            "dwordx2" => (8, false),
            "dwordx3" => (12, false),
            "dwordx4" => (16, false),
            _ => return None,
        })
    };
    if let Some(t) = rest.strip_prefix("load_") {
        return Load::parse(t, width).map(Kind::Load);
    }
    if let Some(t) = rest.strip_prefix("store_") {
        return Store::parse(t, |t| width(t).map(|(bytes, _)| bytes)).map(Kind::Store);
    }
    if let Some(t) = rest.strip_prefix("atomic_") {
        let (t, x2) = match t.strip_suffix("_x2") {
            Some(t) => (t, true),
            None => (t, false),
        };
        let op = AtomicOp::from_suffix(t)?;
        let wide = x2 || matches!(op, AtomicOp::AddF64 | AtomicOp::MinF64 | AtomicOp::MaxF64);
        return Some(Kind::Atomic { op, wide });
    }
    None
}

fn kind(op: Op) -> Option<Kind> {
    // Inline in the static (no heap): nothing is left behind when a plugin is unloaded.
    static TABLE: OnceLock<[Option<Kind>; Op::COUNT]> = OnceLock::new();
    TABLE.get_or_init(|| {
        std::array::from_fn::<Op, { Op::COUNT }, _>(|i| Op::ALL[i]).map(|op| {
            match op.info().family {
                Family::Flat | Family::Global | Family::Scratch | Family::Mubuf => parse(op.name()),
                _ => None,
            }
        })
    })[op as usize]
}

/// Where one lane's access goes.
#[derive(Clone, Copy, Debug)]
enum Loc {
    /// A device virtual address.
    Global(u64),
    /// An LDS byte address.
    Lds(u32),
    /// A private-segment offset, interleaved per lane from the scratch base.
    Private { base: u64, offset: u64 },
    /// Out of a buffer's range: loads read 0, stores and atomics do nothing.
    Dropped,
}

/// The device address of byte `o` of `lane`'s private memory.
#[inline]
fn swizzled(base: u64, o: u64, lane: usize) -> u64 {
    base.wrapping_add((o / 4) * 256 + lane as u64 * 4 + o % 4)
}

impl Exec<'_, '_> {
    fn loc_read(&mut self, loc: Loc, lane: usize, out: &mut [u8]) -> Result<(), Fault> {
        match loc {
            Loc::Global(a) => self.mem.read(a, out)?,
            Loc::Lds(a) => self.lds.read(a, out),
            Loc::Private { base, offset } => {
                if offset % 4 == 0 && out.len() % 4 == 0 {
                    for (k, chunk) in out.chunks_exact_mut(4).enumerate() {
                        let a = swizzled(base, offset + 4 * k as u64, lane);
                        self.mem.read(a, chunk)?;
                    }
                } else {
                    for (k, b) in out.iter_mut().enumerate() {
                        let a = swizzled(base, offset + k as u64, lane);
                        self.mem.read(a, std::slice::from_mut(b))?;
                    }
                }
            }
            Loc::Dropped => out.fill(0),
        }
        Ok(())
    }

    fn loc_write(&mut self, loc: Loc, lane: usize, data: &[u8]) -> Result<(), Fault> {
        match loc {
            Loc::Global(a) => self.mem.write(a, data)?,
            Loc::Lds(a) => self.lds.write(a, data),
            Loc::Private { base, offset } => {
                if offset % 4 == 0 && data.len() % 4 == 0 {
                    for (k, chunk) in data.chunks_exact(4).enumerate() {
                        let a = swizzled(base, offset + 4 * k as u64, lane);
                        self.mem.write(a, chunk)?;
                    }
                } else {
                    for (k, b) in data.iter().enumerate() {
                        let a = swizzled(base, offset + k as u64, lane);
                        self.mem.write(a, std::slice::from_ref(b))?;
                    }
                }
            }
            Loc::Dropped => {}
        }
        Ok(())
    }

    /// An atomic at `loc`; returns the old value.
    fn loc_atomic(
        &mut self,
        loc: Loc,
        lane: usize,
        op: AtomicOp,
        wide: bool,
        data: u64,
        data2: u64,
    ) -> Result<u64, Fault> {
        match loc {
            Loc::Global(a) => Ok(if wide {
                self.mem.rmw64(a, |old| op.apply64(old, data, data2))?
            } else {
                u64::from(
                    self.mem
                        .rmw32(a, |old| op.apply32(old, data as u32, data2 as u32))?,
                )
            }),
            Loc::Dropped => Ok(0),
            _ => {
                // LDS and scratch are private to the workgroup or lane: a plain read-modify-write.
                let n = if wide { 8 } else { 4 };
                let mut b = [0u8; 8];
                self.loc_read(loc, lane, &mut b[..n])?;
                let old = u64::from_le_bytes(b);
                let new = if wide {
                    op.apply64(old, data, data2)
                } else {
                    u64::from(op.apply32(old as u32, data as u32, data2 as u32))
                };
                self.loc_write(loc, lane, &new.to_le_bytes()[..n])?;
                Ok(old)
            }
        }
    }
}

fn vreg(op: Operand) -> Option<usize> {
    match op {
        Operand::Vgpr(r) => Some(usize::from(r)),
        _ => None,
    }
}

/// Per-lane locations of a FLAT/GLOBAL/SCRATCH instruction.
///
/// The address arithmetic, as gfx9 forms it (from LLVM's gfx9 operand documentation, with
/// which gem5's Vega model agrees; the AMD ISA documents were not at hand to check against):
/// - FLAT and GLOBAL with a VGPR address: the 64-bit VGPR pair plus the instruction offset
///   (FLAT unsigned, as the decoder reads it; GLOBAL 13-bit signed, sign-extended to 64
///   bits), in 64 bits.
/// - GLOBAL with SADDR: the 64-bit SGPR pair plus the 32-bit VGPR offset zero-extended plus
///   the signed offset, in 64 bits (the VGPR is an unsigned offset: a "negative" one is 4 GiB
///   minus a little, not a step back).
/// - SCRATCH: VADDR (or SADDR) plus the signed offset is a 32-bit private offset, wrapped
///   there, then swizzled per lane from FLAT_SCRATCH like the private segment buffer.
/// - FLAT into the private aperture: the address minus the aperture base (less than 4 GiB).
///
/// No 64-bit sum here stands where the hardware wraps at 32 bits; the 32-bit one of SCRATCH
/// is the one that must wrap, and does.
fn flat_locs(e: &Exec, inst: &Inst) -> Result<[Loc; LANES], Fault> {
    let mem = inst.mem();
    let family = inst.op.info().family;
    let off = i64::from(mem.offset) as u64;
    let mut locs = [Loc::Dropped; LANES];
    let exec = e.w.exec();
    match family {
        Family::Global => {
            if let Operand::Sgpr(_) = inst.src[2] {
                let base = e.scalar64(inst.src[2])?;
                let v = e.lanes32(inst.src[0])?;
                for l in lanes(exec) {
                    locs[l] = Loc::Global(base.wrapping_add(u64::from(v[l])).wrapping_add(off));
                }
            } else {
                let v = e.lanes64(inst.src[0])?;
                for l in lanes(exec) {
                    locs[l] = Loc::Global(v[l].wrapping_add(off));
                }
            }
        }
        Family::Scratch => {
            let base = e.w.flat_scratch();
            let s = if inst.src[2].is_some() {
                u64::from(e.scalar32(inst.src[2])?)
            } else {
                0
            };
            let v = if inst.src[0].is_some() {
                e.lanes32(inst.src[0])?
            } else {
                [0; LANES]
            };
            for l in lanes(exec) {
                let offset = u64::from(v[l]).wrapping_add(s).wrapping_add(off) & 0xffff_ffff;
                locs[l] = Loc::Private { base, offset };
            }
        }
        _ => {
            let ap = e.shared.apertures;
            let v = e.lanes64(inst.src[0])?;
            let size = super::Apertures::SIZE;
            for l in lanes(exec) {
                let a = v[l].wrapping_add(off);
                locs[l] = if a.wrapping_sub(ap.shared_base) < size {
                    Loc::Lds((a - ap.shared_base) as u32)
                } else if a.wrapping_sub(ap.private_base) < size {
                    Loc::Private {
                        base: e.w.flat_scratch(),
                        offset: a - ap.private_base,
                    }
                } else {
                    Loc::Global(a)
                };
            }
        }
    }
    Ok(locs)
}

/// How a buffer resource decides that an access is out of range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bounds {
    /// GFX9: by the instruction (IDXEN, ADD_TID_ENABLE) and the descriptor; see
    /// [`Buffer::out_of_range`].
    Gfx9,
    /// GFX11: by the descriptor's OOB_SELECT (word 3 bits 29:28, bits 125:124 of the V#).
    OobSelect(u8),
}

/// A buffer resource (V#), read in the layout of the dispatch's generation.
///
/// Both: BASE_ADDRESS 47:0, STRIDE 61:48, NUM_RECORDS 95:64, INDEX_STRIDE 118:117 and
/// ADD_TID_ENABLE 119 (Mesa's sid.h and `ac_build_buffer_descriptor` use one definition of
/// each for every generation). GFX9: SWIZZLE_ENABLE bit 63, ELEMENT_SIZE 116:115,
/// DATA_FORMAT/NUM_FORMAT in word 3. GFX11 (sure, same sources): SWIZZLE_ENABLE is bits 63:62,
/// FORMAT 114:108 (`S_008F0C_FORMAT_GFX10`, used for GFX11 too), OOB_SELECT 125:124, no
/// ELEMENT_SIZE and no RESOURCE_LEVEL (GFX10's bit 120).
#[derive(Clone, Copy, Debug)]
struct Buffer {
    base: u64,
    stride: u32,
    num_records: u32,
    swizzle: bool,
    add_tid: bool,
    element: u32,
    index_stride: u32,
    word3: u32,
    bounds: Bounds,
}

impl Buffer {
    fn read(e: &Exec, first: u8) -> Self {
        let s = |i: usize| e.w.s(usize::from(first) + i);
        let (w0, w1, w2, w3) = (s(0), s(1), s(2), s(3));
        let mut buffer = Self {
            base: u64::from(w0) | u64::from(w1 & 0xffff) << 32,
            stride: (w1 >> 16) & 0x3fff,
            num_records: w2,
            swizzle: w1 >> 31 != 0,
            add_tid: (w3 >> 23) & 1 != 0,
            // ELEMENT_SIZE 2, 4, 8 or 16 bytes. (Mesa's ACO notes "element size removed in
            // GFX9", i.e. gfx9 may ignore the field and use 4; every descriptor the runtimes
            // build says 4, so the two readings agree on them.)
            element: 2 << ((w3 >> 19) & 3),
            index_stride: 8 << ((w3 >> 21) & 3),
            word3: w3,
            bounds: Bounds::Gfx9,
        };
        if !e.shared.target.is_gfx9() {
            // SWIZZLE_ENABLE names the element size: 1 is 4 bytes (what Mesa sets for scratch,
            // where GFX9 had ELEMENT_SIZE 4), 3 is 16 bytes (Mesa's attribute ring: "16B");
            // 2 as 8 bytes is inferred from the two.
            let swizzle = (w1 >> 30) & 3;
            buffer.swizzle = swizzle != 0;
            buffer.element = if swizzle == 0 { 4 } else { 2 << swizzle };
            buffer.bounds = Bounds::OobSelect(((w3 >> 28) & 3) as u8);
        }
        buffer
    }

    /// Whether `len` bytes at byte `offset` of record `index` are out of range (the access is
    /// then dropped: loads read 0, stores write nothing). `idxen` is the instruction's IDXEN.
    ///
    /// GFX9 (sure of its first half, less of its second): the kind of check depends on the
    /// instruction, not only on the descriptor (LLVM's buffer intrinsics, review D50306: "the
    /// behavior of bound checking and swizzling changes depending on whether idxen is set in
    /// the instruction" on gfx9+), and SOFFSET never takes part ("excluded from bounds
    /// checking and swizzling", same source).
    /// - Structured (IDXEN, or ADD_TID_ENABLE which puts the lane id into the index): out of
    ///   range when `index >= NUM_RECORDS`, NUM_RECORDS counting records (radeonsi divides a
    ///   strided buffer's byte size by the stride on every generation but gfx8). A swizzled
    ///   buffer with a stride also drops offsets past the stride (gem5's Vega model). So the
    ///   private segment buffer (swizzled, ADD_TID, stride 0, NUM_RECORDS in bytes) is in effect
    ///   not range-checked, which is what LLVM relies on for gfx9 ("GFX9 does not enable bounds
    ///   checking for the resource descriptors used for private access", review D40585;
    ///   `privateMemoryResourceIsRangeChecked()` is false from gfx9).
    /// - Raw (neither): out of range when the access passes NUM_RECORDS bytes. Whether a
    ///   dword that straddles the end is dropped whole or in part is not documented; it is
    ///   dropped whole here.
    ///
    /// GFX11: the descriptor's OOB_SELECT alone picks the check, whatever the instruction
    /// (Mesa's `ac_build_buffer_descriptor`, which states the rules per generation; radv and
    /// radeonsi pick STRUCTURED for strided vertex buffers and RAW otherwise, so IDXEN does
    /// not):
    /// - 0 (structured with offset): `index >= NUM_RECORDS || offset + payload > STRIDE`;
    /// - 1 (structured): `index >= NUM_RECORDS`;
    /// - 2 (disabled): only `NUM_RECORDS == 0`;
    /// - 3 (raw): swizzled with a stride as 0, else `offset + payload > NUM_RECORDS`.
    ///
    /// The index is the instruction's (VINDEX, plus the lane id with ADD_TID_ENABLE; 0
    /// without IDXEN), the payload the bytes checked together (a dword of a multi-dword
    /// access, a component of a typed one). Inferred: that SOFFSET stays out of the offset
    /// here as on GFX9 (Mesa's rules name only "offset").
    fn out_of_range(&self, idxen: bool, index: u32, offset: u32, len: u32) -> bool {
        let past = |limit: u32| u64::from(offset) + u64::from(len) > u64::from(limit);
        match self.bounds {
            Bounds::Gfx9 if idxen || self.add_tid => {
                index >= self.num_records
                    || (self.swizzle && self.stride != 0 && offset >= self.stride)
            }
            Bounds::OobSelect(0) => index >= self.num_records || past(self.stride),
            Bounds::OobSelect(1) => index >= self.num_records,
            Bounds::OobSelect(2) => self.num_records == 0,
            Bounds::OobSelect(_) if self.swizzle && self.stride != 0 => {
                index >= self.num_records || past(self.stride)
            }
            // Raw: GFX9 without IDXEN or ADD_TID_ENABLE, GFX11's OOB_SELECT 3 otherwise.
            Bounds::Gfx9 | Bounds::OobSelect(_) => past(self.num_records),
        }
    }

    /// The address of byte `offset` of record `index`, `soffset` bytes past the base.
    ///
    /// ADDR = base + soffset + buffer_offset, where buffer_offset is
    /// `offset + stride * index` (linear) or, swizzled, `(index / index_stride * stride +
    /// offset / element * element) * index_stride + index % index_stride * element + offset %
    /// element` (the ISA documents' formula, as gem5's Vega model quotes it). `offset` and
    /// `index` are 32-bit values the caller has already wrapped; the sum is formed in 64 bits
    /// (the address space is 48 bits wide).
    fn address(&self, index: u32, offset: u32, soffset: u32) -> u64 {
        let (index, offset) = (u64::from(index), u64::from(offset));
        let stride = u64::from(self.stride);
        let buffer_offset = if self.swizzle {
            let (index_stride, element) = (u64::from(self.index_stride), u64::from(self.element));
            let (im, il) = (index / index_stride, index % index_stride);
            let (om, ol) = (offset / element, offset % element);
            (im * stride + om * element) * index_stride + il * element + ol
        } else {
            offset + stride * index
        };
        self.base
            .wrapping_add(u64::from(soffset))
            .wrapping_add(buffer_offset)
    }
}

/// A MUBUF access as each lane forms it: the resource, SOFFSET, and per lane the record
/// index and byte offset.
///
/// The index is `vindex (IDXEN) + lane id (ADD_TID_ENABLE)` and the offset `voffset (OFFEN) +
/// the instruction's offset`, both in 32 bits: a VGPR offset of 0xFFFFFFFF with `offset:1`
/// addresses byte 0, as clang's code for gfx9 expects (it folds a constant into the
/// instruction offset over a possibly negative VGPR when the private segment is not
/// range-checked: `SelectMUBUFScratchOffen`). GFX9 MUBUF has no ADDR64 form.
pub(super) struct BufferAccess {
    buf: Buffer,
    idxen: bool,
    soffset: u32,
    lanes: [(u32, u32); LANES],
}

impl BufferAccess {
    /// The access of MUBUF instruction `inst` (MTBUF lowers to MUBUF).
    pub(super) fn of(e: &Exec, inst: &Inst) -> Result<Self, Fault> {
        let mem = inst.mem();
        let buf = Buffer::read(e, mem.srsrc);
        let soffset = e.scalar32(inst.src[2])?;
        let v0 = if inst.src[0].is_some() {
            e.lanes32(inst.src[0])?
        } else {
            [0; LANES]
        };
        let v1 = match inst.src[0] {
            Operand::Vgpr(r) if mem.idxen && mem.offen => *e.w.v(usize::from(r) + 1),
            _ => [0; LANES],
        };
        let lanes = std::array::from_fn(|l| {
            let vindex = if mem.idxen { v0[l] } else { 0 };
            let voffset = match (mem.idxen, mem.offen) {
                (true, true) => v1[l],
                (false, true) => v0[l],
                _ => 0,
            };
            let index = vindex.wrapping_add(if buf.add_tid { l as u32 } else { 0 });
            (index, voffset.wrapping_add(mem.offset as u32))
        });
        Ok(Self {
            buf,
            idxen: mem.idxen,
            soffset,
            lanes,
        })
    }

    /// The address of `len` bytes `past` bytes beyond `lane`'s offset (offset and `past`
    /// summed in 32 bits), or `None` when they are out of range.
    pub(super) fn at(&self, lane: usize, past: u32, len: u32) -> Option<u64> {
        let (index, offset) = self.lanes[lane];
        let offset = offset.wrapping_add(past);
        (!self.buf.out_of_range(self.idxen, index, offset, len))
            .then(|| self.buf.address(index, offset, self.soffset))
    }

    /// Word 3 of the resource (GFX10+: the buffer's FORMAT in bits 18:12).
    pub(super) fn word3(&self) -> u32 {
        self.buf.word3
    }
}

/// Per-lane, per-dword addresses of a MUBUF access (`dwords` chunks of up to 4 bytes); `None`
/// where a chunk is out of range. Each dword of a multi-dword access is addressed and
/// range-checked on its own (the ISA documents: "Load/store-DWORD-x{2,3,4} range-check per
/// component"), at `offset + 4k`, again in 32 bits.
fn mubuf_access(e: &Exec, inst: &Inst, bytes: u32) -> Result<Vec<[Option<u64>; 4]>, Fault> {
    let access = BufferAccess::of(e, inst)?;
    let chunks = bytes.div_ceil(4) as usize;
    let len = bytes.min(4);
    let mut out = vec![[None; 4]; LANES];
    for l in lanes(e.w.exec()) {
        for (k, slot) in out[l].iter_mut().take(chunks).enumerate() {
            *slot = access.at(l, 4 * k as u32, len);
        }
    }
    Ok(out)
}

pub fn exec(e: &mut Exec, inst: &Inst) -> R {
    let Some(kind) = kind(inst.op) else {
        return Err(unimplemented("vector memory opcode not simulated"));
    };
    let mem = inst.mem();
    if mem.lds {
        return Err(unimplemented("loads into LDS"));
    }
    if let Kind::Cache = kind {
        fence(Ordering::SeqCst);
        return Ok(());
    }
    e.mem.refresh();
    let exec = e.w.exec();
    let bytes = match kind {
        Kind::Load(Load { bytes, .. }) | Kind::Store(Store { bytes, .. }) => bytes,
        Kind::Atomic { wide, .. } => {
            if wide {
                8
            } else {
                4
            }
        }
        Kind::Cache => 0,
    };
    // Resolve every lane's location (MUBUF: per dword chunk).
    let mut locs: Vec<[Loc; 4]> = vec![[Loc::Dropped; 4]; LANES];
    if inst.enc == Encoding::Mubuf {
        let addrs = mubuf_access(e, inst, bytes)?;
        for l in lanes(exec) {
            for k in 0..4 {
                locs[l][k] = addrs[l][k].map_or(Loc::Dropped, Loc::Global);
            }
        }
    } else {
        let flat = flat_locs(e, inst)?;
        for l in lanes(exec) {
            locs[l][0] = flat[l];
        }
    }
    match kind {
        Kind::Load(load) => {
            let dst =
                vreg(inst.dst).ok_or_else(|| unimplemented("a load without a VGPR target"))?;
            // Every lane reads before any VGPR is written: a faulting lane leaves them all
            // unchanged.
            let mut results = [[0u8; 16]; LANES];
            for l in lanes(exec) {
                read_chunks(e, &locs[l], l, &mut results[l][..bytes as usize], inst.enc)?;
            }
            for l in lanes(exec) {
                load.write(e.w, dst, l, &results[l]);
            }
            Ok(())
        }
        Kind::Store(store) => {
            let data =
                vreg(inst.src[1]).ok_or_else(|| unimplemented("a store without VGPR data"))?;
            for l in lanes(exec) {
                let buf = store.data(e.w, data, l);
                write_chunks(e, &locs[l], l, &buf[..bytes as usize], inst.enc)?;
            }
            Ok(())
        }
        Kind::Atomic { op, wide } => {
            let data =
                vreg(inst.src[1]).ok_or_else(|| unimplemented("an atomic without VGPR data"))?;
            let dst = vreg(inst.dst);
            let n = if wide { 2 } else { 1 };
            for l in lanes(exec) {
                let get = |k: usize| u64::from(e.w.v(data + k)[l]);
                let d = if wide { get(0) | get(1) << 32 } else { get(0) };
                let d2 = if op.has_data2() {
                    if wide { get(2) | get(3) << 32 } else { get(1) }
                } else {
                    0
                };
                let old = e.loc_atomic(locs[l][0], l, op, wide, d, d2)?;
                if let Some(r) = dst {
                    e.w.v_mut(r)[l] = old as u32;
                    if n == 2 {
                        e.w.v_mut(r + 1)[l] = (old >> 32) as u32;
                    }
                }
            }
            Ok(())
        }
        Kind::Cache => Ok(()),
    }
}

/// Read an access that MUBUF may have split into per-dword locations.
fn read_chunks(e: &mut Exec, locs: &[Loc; 4], lane: usize, out: &mut [u8], enc: Encoding) -> R {
    if enc == Encoding::Mubuf && out.len() > 4 {
        for (k, chunk) in out.chunks_mut(4).enumerate() {
            e.loc_read(locs[k], lane, chunk)?;
        }
        Ok(())
    } else {
        e.loc_read(locs[0], lane, out)
    }
}

fn write_chunks(e: &mut Exec, locs: &[Loc; 4], lane: usize, data: &[u8], enc: Encoding) -> R {
    if enc == Encoding::Mubuf && data.len() > 4 {
        for (k, chunk) in data.chunks(4).enumerate() {
            e.loc_write(locs[k], lane, chunk)?;
        }
        Ok(())
    } else {
        e.loc_write(locs[0], lane, data)
    }
}
