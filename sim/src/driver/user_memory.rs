//! `copy_from_user` / `copy_to_user` for the simulated kernel.
//!
//! Pointers that come from ioctl arguments (the argument struct itself, `events_ptr`,
//! `device_ids_array_ptr`, `cu_mask_ptr`, aperture arrays, AMDGPU_INFO answers) are never
//! dereferenced: they are read and written with `process_vm_readv`/`process_vm_writev` on the
//! own pid, so a bad pointer yields `EFAULT`, as from the kernel, instead of a crash.

use std::io::{IoSlice, IoSliceMut};

use kfd::Errno;
use nix::sys::uio::{RemoteIoVec, process_vm_readv, process_vm_writev};
use nix::unistd::Pid;
use zerocopy::{FromBytes, Immutable, IntoBytes};

fn remote(addr: u64, done: usize, len: usize) -> Result<RemoteIoVec, Errno> {
    let base = usize::try_from(addr)
        .ok()
        .and_then(|a| a.checked_add(done))
        .ok_or(Errno::EFAULT)?;
    base.checked_add(len).ok_or(Errno::EFAULT)?;
    Ok(RemoteIoVec { base, len })
}

/// Fill `buf` from user memory at `addr`.
pub(crate) fn read_into(addr: u64, buf: &mut [u8]) -> Result<(), Errno> {
    let mut done = 0;
    while done < buf.len() {
        let iov = [remote(addr, done, buf.len() - done)?];
        let n = process_vm_readv(Pid::this(), &mut [IoSliceMut::new(&mut buf[done..])], &iov)
            .map_err(|_| Errno::EFAULT)?;
        if n == 0 {
            return Err(Errno::EFAULT);
        }
        done += n;
    }
    Ok(())
}

/// Read `len` bytes of user memory at `addr`.
pub(crate) fn read_bytes(addr: u64, len: usize) -> Result<Vec<u8>, Errno> {
    let mut buf = vec![0u8; len];
    read_into(addr, &mut buf)?;
    Ok(buf)
}

/// Read a `T` from user memory at `addr`.
pub(crate) fn read<T: FromBytes + IntoBytes>(addr: u64) -> Result<T, Errno> {
    let mut value = T::new_zeroed();
    read_into(addr, value.as_mut_bytes())?;
    Ok(value)
}

/// Write `data` to user memory at `addr`.
pub(crate) fn write_bytes(addr: u64, data: &[u8]) -> Result<(), Errno> {
    let mut done = 0;
    while done < data.len() {
        let iov = [remote(addr, done, data.len() - done)?];
        let n = process_vm_writev(Pid::this(), &[IoSlice::new(&data[done..])], &iov)
            .map_err(|_| Errno::EFAULT)?;
        if n == 0 {
            return Err(Errno::EFAULT);
        }
        done += n;
    }
    Ok(())
}

/// Write a `T` to user memory at `addr`.
pub(crate) fn write<T: IntoBytes + Immutable>(addr: u64, value: &T) -> Result<(), Errno> {
    write_bytes(addr, value.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_pointers_copy_and_bad_ones_fault() {
        let source = [1u8, 2, 3, 4, 5];
        assert_eq!(read_bytes(source.as_ptr() as u64, 5).unwrap(), source);
        let mut target = [0u32; 2];
        write(target.as_mut_ptr() as u64, &[7u32, 9]).unwrap();
        assert_eq!(target, [7, 9]);
        assert_eq!(read_bytes(16, 8), Err(Errno::EFAULT));
        assert_eq!(write_bytes(16, &[1]), Err(Errno::EFAULT));
        assert_eq!(read_bytes(u64::MAX - 2, 8), Err(Errno::EFAULT));
        assert_eq!(read_bytes(0, 0).unwrap(), Vec::<u8>::new());
    }
}
