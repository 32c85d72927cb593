//! The `AMDKFD_IOC_*` requests aqueduct issues, one zero-sized type each (see [`Ioctl`]).
//!
//! Numbers and directions follow `kfd_ioctl.h`; the workspace test `tests/abi_headers/`
//! compares every opcode with the C macro.

use crate::abi::{
    AcquireVmArgs, AllocMemoryOfGpuArgs, CreateEventArgs, CreateQueueArgs, DestroyEventArgs,
    DestroyQueueArgs, FreeMemoryOfGpuArgs, GetAvailableMemoryArgs, GetClockCountersArgs,
    GetProcessAperturesNewArgs, GetQueueWaveStateArgs, GetVersionArgs, MapMemoryToGpuArgs,
    ResetEventArgs, RuntimeEnableArgs, SetCuMaskArgs, SetEventArgs, SetMemoryPolicyArgs,
    SetScratchBackingVaArgs, SetTrapHandlerArgs, SetXnackModeArgs, UnmapMemoryFromGpuArgs,
    UpdateQueueArgs, WaitEventsArgs,
};
use crate::ioctl::{Ioctl, Opcode, PlainIoctl};

/// `AMDKFD_IOCTL_BASE`: the ioctl type byte of `/dev/kfd`.
pub const AMDKFD_IOCTL_BASE: u8 = b'K';
/// `AMDKFD_COMMAND_START`: the lowest request number.
pub const AMDKFD_COMMAND_START: u8 = 0x01;

/// A request's name and opcode, for tables (the sim's dispatcher, the layout tests, tools).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestInfo {
    /// The C macro name.
    pub name: &'static str,
    /// The opcode with this crate's argument size.
    pub opcode: Opcode,
}

macro_rules! requests {
    ($(
        $(#[$doc:meta])*
        $ty:ident = $dir:ident($nr:literal, $arg:ty), $cname:literal, $safety:ident;
    )*) => {
        $(
            $(#[$doc])*
            #[derive(Clone, Copy, Debug, Default)]
            pub struct $ty;

            // SAFETY: the opcode is built from `$arg` itself with the direction and number of
            // the C macro `$cname` (checked against kfd_ioctl.h by tests/abi_headers/), and
            // `$arg` is the `#[repr(C)]` mirror of the kernel's struct.
            unsafe impl Ioctl for $ty {
                type Arg = $arg;
                const NAME: &'static str = $cname;
                const OPCODE: Opcode = Opcode::$dir::<$arg>(AMDKFD_IOCTL_BASE, $nr);
            }

            requests!(@plain $ty $safety);
        )*

        /// Every request defined here, in request-number order.
        pub const ALL: &[RequestInfo] = &[
            $(RequestInfo { name: $cname, opcode: <$ty as Ioctl>::OPCODE },)*
        ];
    };
    (@plain $ty:ident plain) => {
        // SAFETY: the kernel only reads user pointers of this request, if it has any.
        unsafe impl PlainIoctl for $ty {}
    };
    (@plain $ty:ident pointers) => {};
}

requests! {
    /// Query the interface version.
    GetVersion = read(0x01, GetVersionArgs), "AMDKFD_IOC_GET_VERSION", plain;
    /// Create a user-mode queue; the GPU will read and write the addresses it names.
    CreateQueue = read_write(0x02, CreateQueueArgs), "AMDKFD_IOC_CREATE_QUEUE", pointers;
    /// Destroy a queue.
    DestroyQueue = read_write(0x03, DestroyQueueArgs), "AMDKFD_IOC_DESTROY_QUEUE", plain;
    /// Set the default and alternate cache policies of a GPU.
    SetMemoryPolicy = write(0x04, SetMemoryPolicyArgs), "AMDKFD_IOC_SET_MEMORY_POLICY", plain;
    /// Read GPU and CPU clock counters.
    GetClockCounters = read_write(0x05, GetClockCountersArgs), "AMDKFD_IOC_GET_CLOCK_COUNTERS", plain;
    /// Change a queue's ring, percentage or priority; the GPU will use the new ring.
    UpdateQueue = write(0x07, UpdateQueueArgs), "AMDKFD_IOC_UPDATE_QUEUE", pointers;
    /// Create an event.
    CreateEvent = read_write(0x08, CreateEventArgs), "AMDKFD_IOC_CREATE_EVENT", plain;
    /// Destroy an event.
    DestroyEvent = write(0x09, DestroyEventArgs), "AMDKFD_IOC_DESTROY_EVENT", plain;
    /// Signal an event from the CPU.
    SetEvent = write(0x0A, SetEventArgs), "AMDKFD_IOC_SET_EVENT", plain;
    /// Clear an event.
    ResetEvent = write(0x0B, ResetEventArgs), "AMDKFD_IOC_RESET_EVENT", plain;
    /// Wait for events; the kernel writes exception data back into the caller's array.
    WaitEvents = read_write(0x0C, WaitEventsArgs), "AMDKFD_IOC_WAIT_EVENTS", pointers;
    /// Tell the kernel where the scratch backing memory is; the GPU will write there.
    SetScratchBackingVa = read_write(0x11, SetScratchBackingVaArgs), "AMDKFD_IOC_SET_SCRATCH_BACKING_VA", pointers;
    /// Install a trap handler; the GPU will execute it.
    SetTrapHandler = write(0x13, SetTrapHandlerArgs), "AMDKFD_IOC_SET_TRAP_HANDLER", pointers;
    /// Read the process' apertures on every GPU into the caller's array.
    GetProcessAperturesNew = read_write(0x14, GetProcessAperturesNewArgs), "AMDKFD_IOC_GET_PROCESS_APERTURES_NEW", pointers;
    /// Bind a DRM render-node file's VM to this process on one GPU.
    AcquireVm = write(0x15, AcquireVmArgs), "AMDKFD_IOC_ACQUIRE_VM", plain;
    /// Allocate a buffer object; a USERPTR BO hands existing user pages to the GPU.
    AllocMemoryOfGpu = read_write(0x16, AllocMemoryOfGpuArgs), "AMDKFD_IOC_ALLOC_MEMORY_OF_GPU", pointers;
    /// Free a buffer object.
    FreeMemoryOfGpu = write(0x17, FreeMemoryOfGpuArgs), "AMDKFD_IOC_FREE_MEMORY_OF_GPU", plain;
    /// Map a BO into the VMs of some GPUs (the gpu_id array is only read).
    MapMemoryToGpu = read_write(0x18, MapMemoryToGpuArgs), "AMDKFD_IOC_MAP_MEMORY_TO_GPU", plain;
    /// Unmap a BO from the VMs of some GPUs (the gpu_id array is only read).
    UnmapMemoryFromGpu = read_write(0x19, UnmapMemoryFromGpuArgs), "AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU", plain;
    /// Restrict a queue to some CUs (the mask array is only read).
    SetCuMask = write(0x1A, SetCuMaskArgs), "AMDKFD_IOC_SET_CU_MASK", plain;
    /// Copy a queue's control stack into a user buffer.
    GetQueueWaveState = read_write(0x1B, GetQueueWaveStateArgs), "AMDKFD_IOC_GET_QUEUE_WAVE_STATE", pointers;
    /// Query or set the process' XNACK mode.
    SetXnackMode = read_write(0x21, SetXnackModeArgs), "AMDKFD_IOC_SET_XNACK_MODE", plain;
    /// Query available VRAM (1.9).
    AvailableMemory = read_write(0x23, GetAvailableMemoryArgs), "AMDKFD_IOC_AVAILABLE_MEMORY", plain;
    /// Enable or disable the runtime for the debugger (1.13); the kernel only records `r_debug`.
    RuntimeEnable = read_write(0x25, RuntimeEnableArgs), "AMDKFD_IOC_RUNTIME_ENABLE", plain;
}

/// Look up a request by its number (as a kernel model receives it).
pub fn by_number(number: u8) -> Option<&'static RequestInfo> {
    ALL.iter().find(|r| r.opcode.number() == number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_unique_and_sorted() {
        assert!(
            ALL.windows(2)
                .all(|w| w[0].opcode.number() < w[1].opcode.number())
        );
        assert_eq!(
            by_number(0x15).map(|r| r.name),
            Some("AMDKFD_IOC_ACQUIRE_VM")
        );
        assert!(by_number(0x06).is_none());
    }
}
