// KERNEL  tiny   (hand-written assembly; small enough to check byte by byte)
// WHAT    out[lid] = lid + 42 for the work-items of ONE work-group.
//         Only the kernarg-segment-pointer user SGPR is enabled, so it
//         arrives in s[0:1]; v0 holds the work-item id (x in bits 9:0; y
//         and z are 0 for a 1-D dispatch). No scratch, no LDS, no hidden
//         arguments (kernarg_segment_size 8).
// ARGS    0 out : global uint*  (wg_x elements, output)
// GRID    1-D, exactly one work-group (grid = wg size, <= 256), e.g. 64 x 64.
//         (The kernel ignores the work-group id: a second work-group
//         would overwrite the same elements.)
// REF     for l in 0..wg_x: out[l] = l + 42
// COMPARE exact.
// CODE    gfx9 (gfx90a/gfx942/gfx950), 24 bytes:
//           s_load_dwordx2 s[0:1], s[0:1], 0x0   C0060000 00000000
//           v_lshlrev_b32  v1, 2, v0             24020082
//           v_add_u32      v2, 42, v0            680400AA
//           s_waitcnt      lgkmcnt(0)            BF8CC07F
//           global_store_dword v1, v2, s[0:1]    DC708000 00000201
//           s_endpgm                             BF810000
//         gfx11/gfx12 use the same sequence with their own encodings
//         (v_add_nc_u32, global_store_b32, and s_wait_kmcnt 0 on gfx12);
//         see `llvm-objdump -d` of the built objects.
// BUILD   build.sh substitutes @TARGET@, @CO_VERSION@, @MD_MINOR@, @WAVE@
//         and @ACCUM@ (empty on gfx9, "//" elsewhere: .amdhsa_accum_offset
//         exists only on gfx90a-class targets) before running llvm-mc;
//         .if on .amdgcn.gfx_generation_number selects the instructions.

.amdgcn_target "amdgcn-amd-amdhsa--@TARGET@"
.amdhsa_code_object_version @CO_VERSION@

.text
.globl tiny
.p2align 8
.type tiny,@function
tiny:
  s_load_dwordx2 s[0:1], s[0:1], 0x0
  v_lshlrev_b32 v1, 2, v0
.if .amdgcn.gfx_generation_number >= 10
  v_add_nc_u32 v2, 42, v0
.else
  v_add_u32 v2, 42, v0
.endif
.if .amdgcn.gfx_generation_number >= 12
  s_wait_kmcnt 0
.else
  s_waitcnt lgkmcnt(0)
.endif
  global_store_dword v1, v2, s[0:1]
  s_endpgm
.Ltiny_end:
.size tiny, .Ltiny_end-tiny

.rodata
.p2align 6
.amdhsa_kernel tiny
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_kernarg_size 8
  .amdhsa_next_free_vgpr 3
  .amdhsa_next_free_sgpr 2
  @ACCUM@.amdhsa_accum_offset 4
.end_amdhsa_kernel

.amdgpu_metadata
---
amdhsa.kernels:
  - .name:                       tiny
    .symbol:                     tiny.kd
    .kernarg_segment_size:       8
    .kernarg_segment_align:      8
    .group_segment_fixed_size:   0
    .private_segment_fixed_size: 0
    .wavefront_size:             @WAVE@
    .sgpr_count:                 2
    .vgpr_count:                 3
    .max_flat_workgroup_size:    256
    .args:
      - .name:          out
        .offset:        0
        .size:          8
        .value_kind:    global_buffer
        .address_space: global
amdhsa.target:   amdgcn-amd-amdhsa--@TARGET@
amdhsa.version:
  - 1
  - @MD_MINOR@
...
.end_amdgpu_metadata
