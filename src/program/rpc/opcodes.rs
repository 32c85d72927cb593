//! The opcodes of LLVM libc's GPU RPC protocol (llvm-project `libc/shared/rpc_opcodes.h`:
//! `LLVM_LIBC_OPCODE(n) = 'c' << 24 | n`).

/// An opcode number for libc's own service `n`.
pub const fn libc_opcode(n: u32) -> u32 {
    (b'c' as u32) << 24 | n
}

/// Nothing: the server receives one packet.
pub const NOOP: u32 = libc_opcode(0);
/// `exit(status)`.
pub const EXIT: u32 = libc_opcode(1);
/// Bytes to stdout.
pub const WRITE_TO_STDOUT: u32 = libc_opcode(2);
/// Bytes to stderr.
pub const WRITE_TO_STDERR: u32 = libc_opcode(3);
/// Bytes to a `FILE` (not served: aqueduct has no host `FILE` handles for the GPU).
pub const WRITE_TO_STREAM: u32 = libc_opcode(4);
/// Bytes and a newline to stdout (`puts`).
pub const WRITE_TO_STDOUT_NEWLINE: u32 = libc_opcode(5);
/// `malloc(size)`.
pub const MALLOC: u32 = libc_opcode(10);
/// `free(pointer)`.
pub const FREE: u32 = libc_opcode(11);
/// `abort()`.
pub const ABORT: u32 = libc_opcode(13);

/// A readable name for an opcode, for error messages.
pub fn name(opcode: u32) -> String {
    let known = [
        "NOOP",
        "EXIT",
        "WRITE_TO_STDOUT",
        "WRITE_TO_STDERR",
        "WRITE_TO_STREAM",
        "WRITE_TO_STDOUT_NEWLINE",
        "READ_FROM_STREAM",
        "READ_FGETS",
        "OPEN_FILE",
        "CLOSE_FILE",
        "MALLOC",
        "FREE",
        "HOST_CALL",
        "ABORT",
        "FEOF",
        "FERROR",
        "CLEARERR",
        "FSEEK",
        "FTELL",
        "FFLUSH",
        "UNGETC",
        "PRINTF_TO_STDOUT",
        "PRINTF_TO_STDERR",
        "PRINTF_TO_STREAM",
        "PRINTF_TO_STDOUT_PACKED",
        "PRINTF_TO_STDERR_PACKED",
        "PRINTF_TO_STREAM_PACKED",
        "REMOVE",
        "RENAME",
        "SYSTEM",
    ];
    match opcode.checked_sub(libc_opcode(0)) {
        Some(n) if (n as usize) < known.len() => format!("RPC_{} ({opcode:#x})", known[n as usize]),
        _ => format!("{opcode:#x}"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn numbers_match_llvm() {
        assert_eq!(super::EXIT, 0x6300_0001);
        assert_eq!(super::MALLOC, 0x6300_000a);
        assert_eq!(super::name(super::ABORT), "RPC_ABORT (0x6300000d)");
        assert_eq!(super::name(7), "0x7");
    }
}
