/*
 * aq.h -- helpers shared by the OpenCL test kernels.
 *
 * The kernels are compiled with -nogpulib: there is no device library, so
 * OpenCL's get_global_id(), barrier() and friends are not available (they
 * would stay undefined external calls and ld.lld would refuse them). Every
 * helper here is built from clang's AMDGPU builtins instead.
 *
 * Conventions used in the kernel header comments:
 *   gid   = group_id * group_size + local_id, per dimension. The OpenCL
 *           global offset (hidden_global_offset_*) is ignored.
 *   lid   = work-item id inside the work-group.
 *   W     = wavefront size (64 on gfx9, 32 on gfx11/gfx12 builds).
 *   "wrapping" = two's-complement arithmetic modulo 2^32 or 2^64.
 *
 * aq_group_size_*() comes from __builtin_amdgcn_workgroup_size_*(), which
 * reads hidden_group_size_* from the implicit kernel arguments on code
 * object V5/V6 and the dispatch packet on V4. Kernels that declare
 * reqd_work_group_size do not need it; their comment says so.
 */
#ifndef AQ_H
#define AQ_H

#pragma OPENCL FP_CONTRACT OFF
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define AQ_INLINE static inline __attribute__((always_inline))

/* Exported program-scope variable: GLOBAL PROTECTED in .dynsym, so a
 * loader can look it up by name. Without it OpenCL variables are hidden
 * and ld.lld turns them into LOCAL symbols. */
#define AQ_EXPORT __attribute__((visibility("protected")))

AQ_INLINE uint aq_lid_x(void) { return __builtin_amdgcn_workitem_id_x(); }
AQ_INLINE uint aq_lid_y(void) { return __builtin_amdgcn_workitem_id_y(); }
AQ_INLINE uint aq_lid_z(void) { return __builtin_amdgcn_workitem_id_z(); }
AQ_INLINE uint aq_group_x(void) { return __builtin_amdgcn_workgroup_id_x(); }
AQ_INLINE uint aq_group_y(void) { return __builtin_amdgcn_workgroup_id_y(); }
AQ_INLINE uint aq_group_z(void) { return __builtin_amdgcn_workgroup_id_z(); }
AQ_INLINE uint aq_group_size_x(void) { return __builtin_amdgcn_workgroup_size_x(); }
AQ_INLINE uint aq_group_size_y(void) { return __builtin_amdgcn_workgroup_size_y(); }
AQ_INLINE uint aq_group_size_z(void) { return __builtin_amdgcn_workgroup_size_z(); }
AQ_INLINE uint aq_gid_x(void) { return aq_group_x() * aq_group_size_x() + aq_lid_x(); }
AQ_INLINE uint aq_gid_y(void) { return aq_group_y() * aq_group_size_y() + aq_lid_y(); }
AQ_INLINE uint aq_gid_z(void) { return aq_group_z() * aq_group_size_z() + aq_lid_z(); }

/* Wavefront size as the compiler sees it (constant-folded per target). */
AQ_INLINE uint aq_wave_size(void) { return __builtin_amdgcn_wavefrontsize(); }

/* Work-group barrier with LDS (and global) visibility, as OpenCL's
 * barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE) does it. */
AQ_INLINE void aq_barrier(void)
{
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

/* Relaxed device-scope atomics on global memory. */
#define AQ_DEV __MEMORY_SCOPE_DEVICE
#define AQ_WG __MEMORY_SCOPE_WRKGRP
#define AQ_RELAXED __ATOMIC_RELAXED

#endif /* AQ_H */
