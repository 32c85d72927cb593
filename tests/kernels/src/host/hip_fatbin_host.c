/*
 * hip_fatbin_host.c -- host-side (x86-64) loader fixture, not a GPU kernel.
 *
 * Mimics what hipcc puts into a host object: the offload bundle
 * (__CLANG_OFFLOAD_BUNDLE__ format, 4096-byte aligned) in a section named
 * .hip_fatbin, and a 24-byte wrapper in .hipFatBinSegment that points at it:
 *     struct { u32 magic = 0x48495046 ("HIPF"), u32 version = 1,
 *              const void *binary = &__hip_fatbin, void *reserved = 0 }
 * build.sh compiles this next to a copy of bin/fixtures/vector_add.hipfb
 * (the .incbin path is relative) into bin/fixtures/hip_fatbin_host.o
 * (ET_REL; the wrapper's pointer is an R_X86_64_64 relocation) and links it
 * into bin/fixtures/hip_fatbin_host.so (ET_DYN; R_X86_64_RELATIVE).
 * A loader that extracts device code from host binaries should find the
 * bundle by the section name or through the wrapper, and then the gfx90a
 * and gfx942 code objects inside it.
 */
__asm__(".section .hip_fatbin,\"a\",@progbits\n"
        ".p2align 12\n"
        ".globl __hip_fatbin\n"
        ".type __hip_fatbin,@object\n"
        "__hip_fatbin:\n"
        ".incbin \"vector_add.hipfb\"\n"
        ".size __hip_fatbin, . - __hip_fatbin\n"
        ".text\n");

extern const char __hip_fatbin[];

struct hip_fatbin_wrapper {
    unsigned int magic;
    unsigned int version;
    const void *binary;
    void *reserved;
};

__attribute__((section(".hipFatBinSegment"), used, aligned(8)))
struct hip_fatbin_wrapper __hip_fatbin_wrapper = {0x48495046u, 1u, __hip_fatbin, 0};
