//! `argv` and `envp` in GPU-visible memory: two NULL-terminated pointer arrays followed by
//! the NUL-terminated strings, in one buffer of fine-grained host memory (as LLVM's loader).

use crate::error::Result;
use crate::{Buffer, Device, GpuAgent, MemoryLocation};

/// The argument vector and environment, placed for the GPU.
#[derive(Debug)]
pub struct Arguments {
    buffer: Buffer,
    argc: i32,
    envp_at: u64,
}

impl Arguments {
    /// Place `args` and `env` (each string without its NUL) for `gpu`.
    pub fn place(
        device: &Device,
        gpu: &GpuAgent,
        args: &[Vec<u8>],
        env: &[Vec<u8>],
    ) -> Result<Self> {
        let bytes = image(0, args, env).len();
        let buffer = device.alloc(gpu, MemoryLocation::HostFine, bytes.max(8))?;
        buffer.write(0, &image(buffer.gpu_address(), args, env))?;
        Ok(Self {
            argc: i32::try_from(args.len()).unwrap_or(i32::MAX),
            envp_at: buffer.gpu_address() + 8 * (args.len() as u64 + 1),
            buffer,
        })
    }

    /// `argc`.
    pub fn argc(&self) -> i32 {
        self.argc
    }

    /// `argv`'s GPU address.
    pub fn argv(&self) -> u64 {
        self.buffer.gpu_address()
    }

    /// `envp`'s GPU address.
    pub fn envp(&self) -> u64 {
        self.envp_at
    }
}

/// The bytes of the block at GPU address `base`.
fn image(base: u64, args: &[Vec<u8>], env: &[Vec<u8>]) -> Vec<u8> {
    let pointers = 8 * (args.len() + 1 + env.len() + 1);
    let mut strings = Vec::new();
    let mut table = Vec::with_capacity(pointers);
    for group in [args, env] {
        for string in group {
            let at = base + (pointers + strings.len()) as u64;
            table.extend_from_slice(&at.to_le_bytes());
            strings.extend(string.iter().copied().take_while(|&b| b != 0));
            strings.push(0);
        }
        table.extend_from_slice(&0u64.to_le_bytes());
    }
    table.extend_from_slice(&strings);
    table
}

#[cfg(test)]
mod tests {
    #[test]
    fn pointer_arrays_then_strings() {
        let bytes = super::image(
            0x1000,
            &[b"prog".to_vec(), b"x".to_vec()],
            &[b"A=1".to_vec()],
        );
        let word = |i: usize| u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap());
        // argv[0], argv[1], NULL, envp[0], NULL, then "prog\0x\0A=1\0".
        assert_eq!(
            [word(0), word(1), word(2), word(3), word(4)],
            [0x1028, 0x102d, 0, 0x102f, 0]
        );
        assert_eq!(&bytes[40..], b"prog\0x\0A=1\0");
    }
}
