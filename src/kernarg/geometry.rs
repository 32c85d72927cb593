//! The shape of a launch: grid and work-group sizes in one to three dimensions, the OpenCL
//! global offset and the dynamic LDS a launch asks for.

/// Work-items per work-group the hardware allows at most (AMDGPUUsage: the largest
/// `.max_flat_workgroup_size`).
pub const MAX_WORKGROUP_SIZE: u32 = 1024;

/// A launch's grid (in work-items, as in the AQL packet) and work-group, in 1–3 dimensions.
///
/// The grid need not be a multiple of the work-group: the last group of a dimension is then
/// partial, and the hidden `remainder` arguments tell a V5/V6 kernel its size. Sizes are
/// checked against the kernel when the kernarg segment is built.
///
/// ```
/// use aqueduct::kernarg::Geometry;
/// let g = Geometry::d1(200, 64);
/// assert_eq!(g.block_count(), [3, 1, 1]);
/// assert_eq!(g.remainder(), [8, 0, 0]);
/// assert_eq!(g.workgroup_count(), [4, 1, 1]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    grid: [u32; 3],
    workgroup: [u32; 3],
    dims: u8,
    global_offset: [u64; 3],
    dynamic_lds: u32,
}

impl Geometry {
    /// A one-dimensional launch of `grid` work-items in groups of `workgroup`.
    pub fn d1(grid: u32, workgroup: u32) -> Self {
        Self::with_dims([grid, 1, 1], [workgroup, 1, 1], 1)
    }

    /// A two-dimensional launch.
    pub fn d2(grid: [u32; 2], workgroup: [u32; 2]) -> Self {
        Self::with_dims([grid[0], grid[1], 1], [workgroup[0], workgroup[1], 1], 2)
    }

    /// A three-dimensional launch.
    pub fn d3(grid: [u32; 3], workgroup: [u32; 3]) -> Self {
        Self::with_dims(grid, workgroup, 3)
    }

    fn with_dims(grid: [u32; 3], workgroup: [u32; 3], dims: u8) -> Self {
        Self {
            grid,
            workgroup,
            dims,
            global_offset: [0; 3],
            dynamic_lds: 0,
        }
    }

    /// The same launch with `bytes` of dynamic LDS per work-group beyond the kernel's static
    /// LDS (HIP's `sharedMemBytes`, `extern __shared__`).
    #[must_use]
    pub fn with_dynamic_lds(mut self, bytes: u32) -> Self {
        self.dynamic_lds = bytes;
        self
    }

    /// The same launch with an OpenCL global offset (`hidden_global_offset_*`; 0 by default).
    #[must_use]
    pub fn with_global_offset(mut self, offset: [u64; 3]) -> Self {
        self.global_offset = offset;
        self
    }

    /// Work-items per dimension (1 in the unused dimensions).
    pub fn grid(&self) -> [u32; 3] {
        self.grid
    }

    /// Work-group size per dimension (1 in the unused dimensions).
    pub fn workgroup(&self) -> [u32; 3] {
        self.workgroup
    }

    /// 1, 2 or 3.
    pub fn dims(&self) -> u8 {
        self.dims
    }

    /// The OpenCL global offset.
    pub fn global_offset(&self) -> [u64; 3] {
        self.global_offset
    }

    /// Dynamic LDS bytes requested beyond static LDS and `__local` arguments.
    pub fn dynamic_lds(&self) -> u32 {
        self.dynamic_lds
    }

    /// Work-items in one work-group.
    pub fn workgroup_items(&self) -> u32 {
        self.workgroup.iter().product()
    }

    /// Full work-groups per dimension (`hidden_block_count_*`): grid / work-group, rounded down.
    pub fn block_count(&self) -> [u32; 3] {
        std::array::from_fn(|i| self.grid[i] / self.workgroup[i].max(1))
    }

    /// Work-items in the partial last group per dimension (`hidden_remainder_*`), 0 if none.
    pub fn remainder(&self) -> [u32; 3] {
        std::array::from_fn(|i| self.grid[i] % self.workgroup[i].max(1))
    }

    /// Work-groups per dimension, the partial one included.
    pub fn workgroup_count(&self) -> [u32; 3] {
        std::array::from_fn(|i| self.grid[i].div_ceil(self.workgroup[i].max(1)))
    }

    /// Check the sizes against the hardware and the kernel's declared limits; `Err` says what
    /// is wrong.
    pub(crate) fn check(&self, limits: &KernelLimits) -> Result<(), String> {
        const AXES: [char; 3] = ['x', 'y', 'z'];
        for (i, axis) in AXES.iter().enumerate() {
            if self.grid[i] == 0 {
                return Err(format!(
                    "the grid's {axis} size is 0; every size must be at least 1"
                ));
            }
            if self.workgroup[i] == 0 {
                return Err(format!(
                    "the work-group's {axis} size is 0; every size must be at least 1"
                ));
            }
        }
        // The constructors give unused dimensions size 1; the product cannot overflow u32 when
        // it is checked in u64.
        let items: u64 = self.workgroup.iter().map(|&s| u64::from(s)).product();
        if items > u64::from(MAX_WORKGROUP_SIZE) {
            return Err(format!(
                "a work-group of {:?} has {items} work-items; the hardware allows at most \
                 {MAX_WORKGROUP_SIZE}",
                self.workgroup
            ));
        }
        if limits.max_flat_workgroup_size != 0 && items > u64::from(limits.max_flat_workgroup_size)
        {
            return Err(format!(
                "a work-group of {:?} has {items} work-items; the kernel allows at most {} \
                 (.max_flat_workgroup_size)",
                self.workgroup, limits.max_flat_workgroup_size
            ));
        }
        if let Some(required) = limits.reqd_workgroup_size.filter(|&r| r != self.workgroup) {
            return Err(format!(
                "the kernel requires a work-group of {required:?} (.reqd_workgroup_size), \
                 the launch gives {:?}",
                self.workgroup
            ));
        }
        if limits.uniform_work_group_size && self.remainder() != [0; 3] {
            return Err(format!(
                "the kernel was compiled for uniform work-groups (.uniform_work_group_size), \
                 so the grid {:?} must be a multiple of the work-group {:?}",
                self.grid, self.workgroup
            ));
        }
        Ok(())
    }
}

/// What a kernel's metadata limits a launch to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct KernelLimits {
    /// `.max_flat_workgroup_size`, 0 when unknown.
    pub max_flat_workgroup_size: u32,
    /// `.reqd_workgroup_size`.
    pub reqd_workgroup_size: Option<[u32; 3]>,
    /// `.uniform_work_group_size`.
    pub uniform_work_group_size: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_remainders_per_dimension() {
        let g = Geometry::d3([10, 7, 5], [4, 7, 2]);
        assert_eq!(g.block_count(), [2, 1, 2]);
        assert_eq!(g.remainder(), [2, 0, 1]);
        assert_eq!(g.workgroup_count(), [3, 1, 3]);
        assert_eq!(g.workgroup_items(), 56);
        let g = Geometry::d2([16, 16], [8, 4]);
        assert_eq!(
            (g.dims(), g.grid(), g.workgroup()),
            (2, [16, 16, 1], [8, 4, 1])
        );
        // A grid smaller than one group: no full group, one partial one.
        let g = Geometry::d1(3, 64);
        assert_eq!((g.block_count(), g.remainder()), ([0, 1, 1], [3, 0, 0]));
    }

    #[test]
    fn refuses_what_cannot_run() {
        let free = KernelLimits::default();
        assert!(
            Geometry::d1(0, 64)
                .check(&free)
                .unwrap_err()
                .contains("grid's x size is 0")
        );
        assert!(
            Geometry::d2([4, 4], [4, 0])
                .check(&free)
                .unwrap_err()
                .contains("y size is 0")
        );
        assert!(
            Geometry::d3([64; 3], [16, 16, 8])
                .check(&free)
                .unwrap_err()
                .contains("2048")
        );
        assert!(Geometry::d3([64; 3], [16, 16, 4]).check(&free).is_ok());
        let small = KernelLimits {
            max_flat_workgroup_size: 256,
            ..free
        };
        let err = Geometry::d1(1024, 512).check(&small).unwrap_err();
        assert!(err.contains("at most 256"), "{err}");
        let reqd = KernelLimits {
            reqd_workgroup_size: Some([16, 16, 1]),
            ..free
        };
        assert!(Geometry::d2([32, 32], [16, 16]).check(&reqd).is_ok());
        assert!(Geometry::d2([32, 32], [32, 8]).check(&reqd).is_err());
        let uniform = KernelLimits {
            uniform_work_group_size: true,
            ..free
        };
        assert!(Geometry::d1(256, 64).check(&uniform).is_ok());
        assert!(Geometry::d1(200, 64).check(&uniform).is_err());
    }
}
