//! The program's own host memory made reachable by GPUs ("locking" it, in HSA's words): its
//! pages registered with the kernel as a USERPTR buffer at their own address and mapped on the
//! GPUs, so a kernel reads and writes the very memory the program uses.

use std::ptr::NonNull;

use crate::agent::{GpuAgent, MemoryLocation};
use crate::buffer::Buffer;
use crate::device::Device;
use crate::error::{Error, Result};

impl Device {
    /// Register `[address, address + len)` (whole pages: rounded out to them) with the kernel
    /// and map it on `gpus`. The buffer's GPU address is the first page's address; dropping it
    /// unmaps and unregisters the memory (the program's memory itself is untouched).
    ///
    /// # Safety
    ///
    /// The memory stays mapped, and is not unmapped or remapped by the program, until the
    /// returned buffer (and every clone) is dropped or the device shut down; it overlaps no
    /// other buffer of this device.
    pub unsafe fn register_host_memory(
        &self,
        gpus: &[&GpuAgent],
        address: NonNull<u8>,
        len: usize,
    ) -> Result<Buffer> {
        let Some(first) = gpus.first() else {
            return Err(Error::InvalidArgument(
                "registering host memory for no GPU".to_owned(),
            ));
        };
        for gpu in gpus {
            self.gpu_index(gpu)?;
        }
        if len == 0 {
            return Err(Error::InvalidArgument("registering 0 bytes".to_owned()));
        }
        let page = 4096usize;
        let start = address.as_ptr() as usize & !(page - 1);
        let end = (address.as_ptr() as usize)
            .checked_add(len)
            .and_then(|e| e.checked_next_multiple_of(page))
            .ok_or_else(|| Error::InvalidArgument("the range wraps".to_owned()))?;
        let Some(start_ptr) = NonNull::new(start as *mut u8) else {
            return Err(Error::InvalidArgument("registering page 0".to_owned()));
        };
        let ids: Vec<u32> = gpus.iter().map(|g| g.gpu_id).collect();
        let what = || {
            format!(
                "{len} bytes of host memory at {:#x}",
                address.as_ptr() as usize
            )
        };
        let (bo, mapping) = self.shared().with_live(|live| {
            // SAFETY: the caller keeps the pages mapped and unshared with other buffers while
            // the buffer lives (this function's contract); the range is whole pages.
            let bo = unsafe {
                live.kfd
                    .register_user_memory(first.gpu_id, start_ptr, (end - start) as u64)
            }
            .map_err(|e| Error::driver(what, e))?;
            let mapping = bo.map_to(&ids).map_err(|e| Error::driver(what, e))?;
            Ok((bo, mapping))
        })?;
        Ok(Buffer::from_object(
            self,
            bo,
            mapping,
            MemoryLocation::HostFine,
            first.gpu_id,
        ))
    }
}
