// KERNEL  illegal_insn   (hand-written assembly)
// WHAT    Executes one instruction word that the hardware cannot execute, so
//         the illegal-instruction path can be tested:
//           gfx9 (gfx90a/gfx942/gfx950): the word BE80FF00, a SOP1
//             encoding with opcode 0xFF, which no GFX9 part defines (llvm-mc
//             and llvm-objdump cannot decode it: `.long 0xbe80ff00`); the
//             wave raises the illegal-instruction exception.
//           gfx11/gfx12: image_load v[0:3], v0, s[4:11] dmask:0xf
//             dim:SQ_RSRC_IMG_1D (MIMG/VIMAGE with a zeroed resource
//             descriptor; for the loader tests, no simulator runs these).
//         Before it, the kernel stores 0x11111111 to out[0]; after it,
//         0x22222222 to out[1], which a wave stopped at the word never
//         reaches.
// ARGS    0 out : global uint*  (2 elements)
// GRID    1 work-item (grid 1 x wg 1).
// REF     expected outcome (gfx9): the dispatch reports an illegal
//         instruction at the word's address (entry + the offset shown by
//         llvm-objdump); out[0] = 0x11111111, out[1] = 0.
// BUILD   build.sh substitutes @TARGET@, @CO_VERSION@, @MD_MINOR@, @WAVE@
//         and @ACCUM@ (see tiny.s).

.amdgcn_target "amdgcn-amd-amdhsa--@TARGET@"
.amdhsa_code_object_version @CO_VERSION@

.text
.globl illegal_insn
.p2align 8
.type illegal_insn,@function
illegal_insn:
  s_load_dwordx2 s[2:3], s[0:1], 0x0
  v_mov_b32 v0, 0
  v_mov_b32 v1, 0x11111111
  v_mov_b32 v2, 0x22222222
.if .amdgcn.gfx_generation_number >= 12
  s_wait_kmcnt 0
.else
  s_waitcnt lgkmcnt(0)
.endif
  global_store_dword v0, v1, s[2:3]
.if .amdgcn.gfx_generation_number >= 10
  s_mov_b32 s4, 0
  s_mov_b32 s5, 0
  s_mov_b32 s6, 0
  s_mov_b32 s7, 0
  s_mov_b32 s8, 0
  s_mov_b32 s9, 0
  s_mov_b32 s10, 0
  s_mov_b32 s11, 0
  image_load v[4:7], v0, s[4:11] dmask:0xf dim:SQ_RSRC_IMG_1D
.else
  .long 0xbe80ff00 // SOP1 opcode 0xFF: not an instruction on GFX9
.endif
  global_store_dword v0, v2, s[2:3] offset:4
  s_endpgm
.Lillegal_insn_end:
.size illegal_insn, .Lillegal_insn_end-illegal_insn

.rodata
.p2align 6
.amdhsa_kernel illegal_insn
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_kernarg_size 8
  .amdhsa_next_free_vgpr 8
  .amdhsa_next_free_sgpr 12
  @ACCUM@.amdhsa_accum_offset 8
.end_amdhsa_kernel

.amdgpu_metadata
---
amdhsa.kernels:
  - .name:                       illegal_insn
    .symbol:                     illegal_insn.kd
    .kernarg_segment_size:       8
    .kernarg_segment_align:      8
    .group_segment_fixed_size:   0
    .private_segment_fixed_size: 0
    .wavefront_size:             @WAVE@
    .sgpr_count:                 12
    .vgpr_count:                 8
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
