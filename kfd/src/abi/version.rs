use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// Major interface version this crate speaks (`KFD_IOCTL_MAJOR_VERSION`). The kernel has never
/// changed it; libhsakmt refuses any other major.
pub const KFD_IOCTL_MAJOR_VERSION: u32 = 1;

/// The newest minor interface version whose structs this crate is pinned to.
pub const KFD_IOCTL_MINOR_VERSION: u32 = 23;

/// Minor version that introduced `AMDKFD_IOC_AVAILABLE_MEMORY`.
pub const MINOR_AVAILABLE_MEMORY: u32 = 9;
/// Minor version that introduced `AMDKFD_IOC_RUNTIME_ENABLE` (the debugger API).
pub const MINOR_RUNTIME_ENABLE: u32 = 13;
/// Minor version that introduced `signal_event_data.last_event_age` in WAIT_EVENTS.
pub const MINOR_EVENT_AGE: u32 = 14;
/// Minor version that introduced `sdma_engine_id` in CREATE_QUEUE (96-byte struct).
pub const MINOR_SDMA_ENGINE_ID: u32 = 17;

/// `struct kfd_ioctl_get_version_args` (AMDKFD_IOC_GET_VERSION, from KFD).
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct GetVersionArgs {
    /// Interface major version.
    pub major_version: u32,
    /// Interface minor version.
    pub minor_version: u32,
}
