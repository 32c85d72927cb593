//! The SDMA 4.x packets a copy queue sends (GFX9), as ROCr 5.2's `BlitSdmaV4` builds them:
//! COPY LINEAR (count = bytes − 1, at most [`MAX_COPY_BYTES`] each), CONSTANT FILL of dwords
//! (count = bytes − 4), POLL_REGMEM on a signal's two dwords, ATOMIC ADD64 of −1 for the
//! completion signal, FENCE and TRAP for its interrupt, TIMESTAMP GET_GLOBAL.

/// ROCr's largest single linear copy (`SDMA_PKT_COPY_LINEAR::kMaxSize_`).
pub(crate) const MAX_COPY_BYTES: u64 = 0x3F_FFE0;
/// The largest single fill, a multiple of 4 below the 22-bit count limit.
pub(crate) const MAX_FILL_BYTES: u64 = 0x3F_FFE0;

const OP_COPY: u32 = 1;
const OP_FENCE: u32 = 5;
const OP_TRAP: u32 = 6;
const OP_POLL_REGMEM: u32 = 8;
const OP_ATOMIC: u32 = 10;
const OP_CONST_FILL: u32 = 11;
const OP_TIMESTAMP: u32 = 13;
const SUBOP_TIMESTAMP_GET_GLOBAL: u32 = 2;
/// `TC_OP_ATOMIC_ADD_RTN_64`.
const ATOMIC_ADD64: u32 = 47;

fn lo(v: u64) -> u32 {
    v as u32
}

fn hi(v: u64) -> u32 {
    (v >> 32) as u32
}

/// Linear copies of `bytes` from `src` to `dst`, split at [`MAX_COPY_BYTES`].
pub(crate) fn copy(out: &mut Vec<u32>, mut src: u64, mut dst: u64, mut bytes: u64) {
    while bytes > 0 {
        let n = bytes.min(MAX_COPY_BYTES);
        out.extend([
            OP_COPY,
            (n - 1) as u32,
            0,
            lo(src),
            hi(src),
            lo(dst),
            hi(dst),
        ]);
        src += n;
        dst += n;
        bytes -= n;
    }
}

/// Dword fills of `bytes` (a multiple of 4) at `dst` with `value`.
pub(crate) fn fill(out: &mut Vec<u32>, mut dst: u64, value: u32, mut bytes: u64) {
    while bytes > 0 {
        let n = bytes.min(MAX_FILL_BYTES);
        out.extend([
            OP_CONST_FILL | (2 << 30),
            lo(dst),
            hi(dst),
            value,
            (n - 4) as u32,
        ]);
        dst += n;
        bytes -= n;
    }
}

/// Wait until the 64-bit signal value at `value_va` is 0: the high dword, then the low one.
pub(crate) fn wait_zero(out: &mut Vec<u32>, value_va: u64) {
    for va in [value_va + 4, value_va] {
        out.extend([
            OP_POLL_REGMEM | (3 << 28) | (1 << 31),
            lo(va),
            hi(va),
            0,
            u32::MAX,
            // Poll interval 4, retry forever.
            0x0FFF_0004,
        ]);
    }
}

/// Decrement the 64-bit signal value at `value_va`.
pub(crate) fn decrement(out: &mut Vec<u32>, value_va: u64) {
    out.extend([
        OP_ATOMIC | (ATOMIC_ADD64 << 25),
        lo(value_va),
        hi(value_va),
        u32::MAX,
        u32::MAX,
        0,
        0,
        0,
    ]);
}

/// Store `event_id` into the event mailbox and raise the trap interrupt carrying it.
pub(crate) fn interrupt(out: &mut Vec<u32>, mailbox: u64, event_id: u32) {
    fence(out, mailbox, event_id);
    out.extend([OP_TRAP, event_id & 0x0FFF_FFFF]);
}

/// Store `value` at `va` (4-byte aligned) once everything before it is done.
pub(crate) fn fence(out: &mut Vec<u32>, va: u64, value: u32) {
    out.extend([OP_FENCE, lo(va), hi(va), value]);
}

/// Store the GPU timestamp at `va` (8-byte aligned).
pub(crate) fn timestamp(out: &mut Vec<u32>, va: u64) {
    out.extend([
        OP_TIMESTAMP | (SUBOP_TIMESTAMP_GET_GLOBAL << 8),
        lo(va),
        hi(va),
    ]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_copies_split_at_rocr_limit() {
        let mut out = Vec::new();
        copy(&mut out, 0x1000, 0x8000_0000, MAX_COPY_BYTES + 5);
        assert_eq!(out.len(), 14);
        assert_eq!(out[1], (MAX_COPY_BYTES - 1) as u32);
        assert_eq!(out[7 + 1], 4);
        assert_eq!(out[7 + 3], 0x1000 + MAX_COPY_BYTES as u32);
    }

    #[test]
    fn fills_count_bytes_minus_four() {
        let mut out = Vec::new();
        fill(&mut out, 0x40, 7, 16);
        assert_eq!(out, [OP_CONST_FILL | (2 << 30), 0x40, 0, 7, 12]);
    }
}
