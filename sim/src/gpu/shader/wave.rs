//! The state of one wave64: scalar and vector register files, the special registers that
//! matter to compute kernels, and the program counter.

/// Lanes in a wave (gfx90a and gfx942 are wave64 parts).
pub const LANES: usize = 64;

/// One value per lane.
pub type Lanes = [u32; LANES];

/// Scalar register slots: the 128 codes of the scalar file plus room for ranges that start
/// near the end (an out-of-range `s[100:115]` reads padding instead of panicking).
const SGPR_SLOTS: usize = 128 + 16;

/// Vector register rows: 256 architectural VGPRs, 256 AGPRs, and padding for ranges.
const VGPR_ROWS: usize = 512 + 32;

/// Index of VCC_LO in the scalar file.
pub const VCC: usize = 106;
/// Index of M0.
pub const M0: usize = 124;
/// Index of EXEC_LO.
pub const EXEC: usize = 126;
/// Where writes to GFX11's `null` go (a padding slot of the scalar file that no operand
/// reads: `null` as a source is the constant 0).
pub const NULL_SINK: usize = 136;
/// Index of FLAT_SCRATCH_LO.
pub const FLAT_SCRATCH: usize = 102;

/// HW_REG_MODE fields (GFX9).
pub mod mode {
    /// FP_ROUND, bits 3:0 (1:0 single, 3:2 half/double): 0 nearest even.
    pub const ROUND_MASK: u32 = 0xf;
    /// FP_DENORM single precision, bits 5:4 (bit 4 allow inputs, bit 5 allow outputs).
    pub const DENORM_32_SHIFT: u32 = 4;
    /// FP_DENORM half/double, bits 7:6.
    pub const DENORM_16_64_SHIFT: u32 = 6;
    /// DX10_CLAMP, bit 8.
    pub const DX10_CLAMP: u32 = 1 << 8;
    /// IEEE, bit 9.
    pub const IEEE: u32 = 1 << 9;
}

/// A wave's architectural state.
#[derive(Clone)]
pub struct Wave {
    /// The scalar file, indexed by operand code (VCC at 106, M0 at 124, EXEC at 126).
    pub sgpr: Box<[u32; SGPR_SLOTS]>,
    /// The unified vector file: rows 0–255 VGPRs, 256–511 AGPRs.
    pub vgpr: Vec<Lanes>,
    /// Scalar condition code.
    pub scc: bool,
    /// Address of the next instruction.
    pub pc: u64,
    /// HW_REG_MODE.
    pub mode: u32,
    /// HW_REG_TRAPSTS.
    pub trapsts: u32,
    /// Set by s_endpgm.
    pub ended: bool,
    /// Waiting at s_barrier.
    pub at_barrier: bool,
    /// Index of the wave in its workgroup.
    pub wave_in_group: u32,
    /// GPU address of this wave's private (scratch) slot, 0 if none.
    pub scratch_base: u64,
    /// Bytes of the slot.
    pub scratch_bytes: u64,
    /// Instructions executed.
    pub instructions: u64,
    /// A wave32 wave (GFX10+ kernels built for wave32): EXEC, VCC and lane masks are their
    /// low 32 bits (`exec_lo`, `vcc_lo`); lanes 32–63 do not exist. Set at launch.
    pub wave32: bool,
    /// FLAT_SCRATCH is a hardware register (GFX10+), not the SGPR pair 102/103 of GFX9, which
    /// are ordinary SGPRs there; with architected flat scratch (GFX11) it holds the wave's
    /// private slot, [`Wave::scratch_base`]. Set at launch.
    pub flat_scratch_hwreg: bool,
}

impl std::fmt::Debug for Wave {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wave")
            .field("pc", &format_args!("{:#x}", self.pc))
            .field("exec", &format_args!("{:#x}", self.exec()))
            .field("wave_in_group", &self.wave_in_group)
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

impl Default for Wave {
    fn default() -> Self {
        Self::new()
    }
}

impl Wave {
    /// A wave with zeroed registers.
    pub fn new() -> Self {
        Self {
            sgpr: Box::new([0; SGPR_SLOTS]),
            vgpr: vec![[0; LANES]; VGPR_ROWS],
            scc: false,
            pc: 0,
            mode: 0,
            trapsts: 0,
            ended: false,
            at_barrier: false,
            wave_in_group: 0,
            scratch_base: 0,
            scratch_bytes: 0,
            instructions: 0,
            wave32: false,
            flat_scratch_hwreg: false,
        }
    }

    /// Reset the state a launch sets (registers are left as they were, as on hardware, except
    /// the scalar file, which is cleared so that stale values never look like arguments).
    pub fn reset(&mut self) {
        self.sgpr.fill(0);
        self.scc = false;
        self.pc = 0;
        self.mode = 0;
        self.trapsts = 0;
        self.ended = false;
        self.at_barrier = false;
        self.scratch_base = 0;
        self.scratch_bytes = 0;
        self.instructions = 0;
    }

    /// Scalar register `i` (by operand code).
    #[inline]
    pub fn s(&self, i: usize) -> u32 {
        self.sgpr[i]
    }

    /// Write scalar register `i`.
    #[inline]
    pub fn set_s(&mut self, i: usize, v: u32) {
        self.sgpr[i] = v;
    }

    /// The 64-bit scalar pair starting at `i`.
    #[inline]
    pub fn s64(&self, i: usize) -> u64 {
        u64::from(self.sgpr[i]) | u64::from(self.sgpr[i + 1]) << 32
    }

    /// Write the 64-bit scalar pair starting at `i`.
    #[inline]
    pub fn set_s64(&mut self, i: usize, v: u64) {
        self.sgpr[i] = v as u32;
        self.sgpr[i + 1] = (v >> 32) as u32;
    }

    /// A lane mask in the scalar file at `i`: the pair in wave64, the one register in wave32.
    #[inline]
    pub fn mask_at(&self, i: usize) -> u64 {
        if self.wave32 {
            u64::from(self.sgpr[i])
        } else {
            self.s64(i)
        }
    }

    /// Write a lane mask at `i` (wave32: only the one register; the lanes above 31 do not
    /// exist).
    #[inline]
    pub fn set_mask_at(&mut self, i: usize, v: u64) {
        if self.wave32 {
            self.sgpr[i] = v as u32;
        } else {
            self.set_s64(i, v);
        }
    }

    /// EXEC (wave32: `exec_lo`).
    #[inline]
    pub fn exec(&self) -> u64 {
        self.mask_at(EXEC)
    }

    /// Write EXEC (wave32: `exec_lo`).
    #[inline]
    pub fn set_exec(&mut self, v: u64) {
        self.set_mask_at(EXEC, v);
    }

    /// VCC (wave32: `vcc_lo`).
    #[inline]
    pub fn vcc(&self) -> u64 {
        self.mask_at(VCC)
    }

    /// Write VCC (wave32: `vcc_lo`).
    #[inline]
    pub fn set_vcc(&mut self, v: u64) {
        self.set_mask_at(VCC, v);
    }

    /// The bits of the wave's lanes in a mask.
    #[inline]
    pub fn lane_mask(&self) -> u64 {
        if self.wave32 {
            u64::from(u32::MAX)
        } else {
            u64::MAX
        }
    }

    /// Lanes of the wave: 32 or 64.
    #[inline]
    pub fn lanes(&self) -> usize {
        if self.wave32 { 32 } else { LANES }
    }

    /// M0.
    #[inline]
    pub fn m0(&self) -> u32 {
        self.sgpr[M0]
    }

    /// FLAT_SCRATCH.
    #[inline]
    pub fn flat_scratch(&self) -> u64 {
        if self.flat_scratch_hwreg {
            self.scratch_base
        } else {
            self.s64(FLAT_SCRATCH)
        }
    }

    /// Vector register row `r` (0–255 VGPRs, 256–511 AGPRs).
    #[inline]
    pub fn v(&self, r: usize) -> &Lanes {
        &self.vgpr[r]
    }

    /// Mutable vector register row `r`.
    #[inline]
    pub fn v_mut(&mut self, r: usize) -> &mut Lanes {
        &mut self.vgpr[r]
    }

    /// Write `vals` to row `r` in the lanes of `mask`.
    #[inline]
    pub fn write_v(&mut self, r: usize, vals: &Lanes, mask: u64) {
        let row = &mut self.vgpr[r];
        if mask == u64::MAX {
            *row = *vals;
            return;
        }
        let m = expand(mask);
        for l in 0..LANES {
            row[l] = (vals[l] & m[l]) | (row[l] & !m[l]);
        }
    }

    /// Write 64-bit lane values to rows `r`, `r + 1` in the lanes of `mask`.
    #[inline]
    pub fn write_v64(&mut self, r: usize, vals: &[u64; LANES], mask: u64) {
        let mut lo = [0u32; LANES];
        let mut hi = [0u32; LANES];
        for l in 0..LANES {
            lo[l] = vals[l] as u32;
            hi[l] = (vals[l] >> 32) as u32;
        }
        self.write_v(r, &lo, mask);
        self.write_v(r + 1, &hi, mask);
    }

    /// Rows `r`, `r + 1` as 64-bit lane values.
    #[inline]
    pub fn v64(&self, r: usize) -> [u64; LANES] {
        let (lo, hi) = (&self.vgpr[r], &self.vgpr[r + 1]);
        let mut out = [0u64; LANES];
        for l in 0..LANES {
            out[l] = u64::from(lo[l]) | u64::from(hi[l]) << 32;
        }
        out
    }

    /// The single-precision denormal mode: (inputs allowed, outputs allowed).
    #[inline]
    pub fn denorm32(&self) -> (bool, bool) {
        let m = (self.mode >> mode::DENORM_32_SHIFT) & 3;
        (m & 1 != 0, m & 2 != 0)
    }

    /// The half/double denormal mode: (inputs allowed, outputs allowed).
    #[inline]
    pub fn denorm16_64(&self) -> (bool, bool) {
        let m = (self.mode >> mode::DENORM_16_64_SHIFT) & 3;
        (m & 1 != 0, m & 2 != 0)
    }
}

/// A per-lane all-ones/all-zeros mask from the bits of `mask`.
#[inline]
pub fn expand(mask: u64) -> Lanes {
    let mut m = [0u32; LANES];
    for (l, v) in m.iter_mut().enumerate() {
        *v = 0u32.wrapping_sub(((mask >> l) & 1) as u32);
    }
    m
}

/// Iterate the set lanes of `mask`.
#[inline]
pub fn lanes(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if mask == 0 {
            None
        } else {
            let l = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            Some(l)
        }
    })
}
