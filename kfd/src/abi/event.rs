use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `KFD_IOC_EVENT_*`: the `event_type` of CREATE_EVENT. Open, because the kernel does not
/// validate it: unknown types become non-signal events (kfd.md §11.6).
#[repr(transparent)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct EventType(pub u32);

impl EventType {
    /// A signal event: has a slot in the event page; set by the GPU, the CPU or SET_EVENT.
    pub const SIGNAL: Self = Self(0);
    /// Topology change.
    pub const NODECHANGE: Self = Self(1);
    /// Device state change.
    pub const DEVICESTATECHANGE: Self = Self(2);
    /// GPU reset / hardware exception; WAIT_EVENTS returns `hw_exception_data`.
    pub const HW_EXCEPTION: Self = Self(3);
    /// System event.
    pub const SYSTEM_EVENT: Self = Self(4);
    /// Debug event: has a signal slot but can only be set by the GPU.
    pub const DEBUG_EVENT: Self = Self(5);
    /// Profile event.
    pub const PROFILE_EVENT: Self = Self(6);
    /// Queue event.
    pub const QUEUE_EVENT: Self = Self(7);
    /// GPU memory fault; WAIT_EVENTS returns `memory_exception_data`.
    pub const MEMORY: Self = Self(8);

    /// Whether events of this type get a slot in the event page (SIGNAL and DEBUG).
    pub const fn has_signal_slot(self) -> bool {
        self.0 == Self::SIGNAL.0 || self.0 == Self::DEBUG_EVENT.0
    }
}

/// `KFD_SIGNAL_EVENT_LIMIT`: slots in a full event page (4096 × 8 bytes = 32 KiB).
pub const KFD_SIGNAL_EVENT_LIMIT: u32 = 4096;
/// Size in bytes of a full event page.
pub const KFD_EVENT_PAGE_SIZE: usize = KFD_SIGNAL_EVENT_LIMIT as usize * 8;
/// Value of an event-page slot that is not signalled (`UNSIGNALED_EVENT_SLOT` in kfd_events.c).
pub const UNSIGNALED_EVENT_SLOT: u64 = u64::MAX;
/// First id handed to events without a signal slot (`(INT_MAX >> 1) + 1` in kfd_events.c).
pub const KFD_FIRST_NONSIGNAL_EVENT_ID: u32 = 0x4000_0000;
/// WAIT_EVENTS timeout meaning "wait forever".
pub const KFD_EVENT_TIMEOUT_INFINITE: u32 = 0xFFFF_FFFF;
/// WAIT_EVENTS timeout meaning "poll".
pub const KFD_EVENT_TIMEOUT_IMMEDIATE: u32 = 0;

/// `KFD_IOC_WAIT_RESULT_*`: the `wait_result` of WAIT_EVENTS.
#[repr(transparent)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct WaitResult(pub u32);

impl WaitResult {
    /// The wait condition was met.
    pub const COMPLETE: Self = Self(0);
    /// The timeout expired first.
    pub const TIMEOUT: Self = Self(1);
    /// An event id was invalid or a waited event was destroyed.
    pub const FAIL: Self = Self(2);
}

/// `KFD_HW_EXCEPTION_*` reset types and causes, `KFD_MEM_ERR_*` error types.
pub mod exception {
    /// `KFD_HW_EXCEPTION_WHOLE_GPU_RESET`.
    pub const WHOLE_GPU_RESET: u32 = 0;
    /// `KFD_HW_EXCEPTION_PER_ENGINE_RESET`.
    pub const PER_ENGINE_RESET: u32 = 1;
    /// `KFD_HW_EXCEPTION_GPU_HANG`.
    pub const GPU_HANG: u32 = 0;
    /// `KFD_HW_EXCEPTION_ECC`.
    pub const ECC: u32 = 1;
    /// `KFD_MEM_ERR_NO_RAS`.
    pub const MEM_ERR_NO_RAS: u32 = 0;
    /// `KFD_MEM_ERR_SRAM_ECC`.
    pub const MEM_ERR_SRAM_ECC: u32 = 1;
    /// `KFD_MEM_ERR_POISON_CONSUMED`.
    pub const MEM_ERR_POISON_CONSUMED: u32 = 2;
    /// `KFD_MEM_ERR_GPU_HANG`.
    pub const MEM_ERR_GPU_HANG: u32 = 3;
}

/// `struct kfd_ioctl_create_event_args` (AMDKFD_IOC_CREATE_EVENT).
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct CreateEventArgs {
    /// To KFD: the handle of a userspace event-page BO, once per process (0 otherwise).
    /// From KFD: the `/dev/kfd` mmap offset of the event page for signal events.
    pub event_page_offset: u64,
    /// Data the GPU writes to fire the event: the event id (from KFD).
    pub event_trigger_data: u32,
    /// One of [`EventType`] (to KFD).
    pub event_type: u32,
    /// Non-zero: a wait that sees the event consumes it (to KFD).
    pub auto_reset: u32,
    /// Node for node-specific event types (to KFD).
    pub node_id: u32,
    /// The new event (from KFD).
    pub event_id: u32,
    /// Slot in the event page, equal to `event_id` for signal events (from KFD).
    pub event_slot_index: u32,
}

/// `struct kfd_ioctl_destroy_event_args` (AMDKFD_IOC_DESTROY_EVENT).
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct DestroyEventArgs {
    /// Event (to KFD).
    pub event_id: u32,
    /// Padding.
    pub pad: u32,
}

/// `struct kfd_ioctl_set_event_args` (AMDKFD_IOC_SET_EVENT).
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct SetEventArgs {
    /// Event (to KFD).
    pub event_id: u32,
    /// Padding.
    pub pad: u32,
}

/// `struct kfd_ioctl_reset_event_args` (AMDKFD_IOC_RESET_EVENT).
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct ResetEventArgs {
    /// Event (to KFD).
    pub event_id: u32,
    /// Padding.
    pub pad: u32,
}

/// `struct kfd_memory_exception_failure`: why a GPU access faulted.
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct MemoryExceptionFailure {
    /// `NotPresent`: page not present (or supervisor page).
    pub not_present: u32,
    /// `ReadOnly`: write to a read-only page.
    pub read_only: u32,
    /// `NoExecute`: instruction fetch from a non-executable page.
    pub no_execute: u32,
    /// `imprecise`: the address is not exact.
    pub imprecise: u32,
}

/// `struct kfd_hsa_memory_exception_data`: filled in for MEMORY events by WAIT_EVENTS.
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct MemoryExceptionData {
    /// Failure kind.
    pub failure: MemoryExceptionFailure,
    /// Faulting GPU virtual address (page aligned).
    pub va: u64,
    /// The GPU that faulted.
    pub gpu_id: u32,
    /// `ErrorType`: one of `exception::MEM_ERR_*`.
    pub error_type: u32,
}

/// `struct kfd_hsa_hw_exception_data`: filled in for HW_EXCEPTION events by WAIT_EVENTS.
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct HwExceptionData {
    /// `exception::WHOLE_GPU_RESET` or `PER_ENGINE_RESET`.
    pub reset_type: u32,
    /// `exception::GPU_HANG` or `ECC`.
    pub reset_cause: u32,
    /// Non-zero if VRAM contents were lost.
    pub memory_lost: u32,
    /// The GPU.
    pub gpu_id: u32,
}

/// `struct kfd_event_data`: one entry of the WAIT_EVENTS array (48 bytes).
///
/// The C struct opens with a 32-byte union of `memory_exception_data`, `hw_exception_data` and
/// `signal_event_data`; here it is the raw `payload`, read through the typed accessors.
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct EventData {
    /// The C union, as 32 raw bytes.
    pub payload: [u64; 4],
    /// `kfd_event_data_ext`: pointer to an extension structure (unused, 0).
    pub kfd_event_data_ext: u64,
    /// The event to wait for (to KFD).
    pub event_id: u32,
    /// Padding.
    pub pad: u32,
}

impl EventData {
    /// A wait entry for `event_id` with an empty payload (legacy age semantics).
    pub const fn new(event_id: u32) -> Self {
        Self {
            payload: [0; 4],
            kfd_event_data_ext: 0,
            event_id,
            pad: 0,
        }
    }

    /// `signal_event_data.last_event_age` (1.14): 0 means "legacy behaviour".
    pub const fn last_event_age(&self) -> u64 {
        self.payload[0]
    }

    /// Set `signal_event_data.last_event_age`.
    pub const fn set_last_event_age(&mut self, age: u64) {
        self.payload[0] = age;
    }

    /// The payload read as `memory_exception_data`.
    pub fn memory_exception(&self) -> MemoryExceptionData {
        zerocopy::transmute!(self.payload)
    }

    /// Store `memory_exception_data` into the payload.
    pub fn set_memory_exception(&mut self, data: MemoryExceptionData) {
        self.payload = zerocopy::transmute!(data);
    }

    /// The payload read as `hw_exception_data` (the first 16 bytes).
    pub fn hw_exception(&self) -> HwExceptionData {
        zerocopy::transmute!([self.payload[0], self.payload[1]])
    }

    /// Store `hw_exception_data` into the first 16 bytes of the payload.
    pub fn set_hw_exception(&mut self, data: HwExceptionData) {
        let words: [u64; 2] = zerocopy::transmute!(data);
        self.payload[0] = words[0];
        self.payload[1] = words[1];
    }
}

/// `struct kfd_ioctl_wait_events_args` (AMDKFD_IOC_WAIT_EVENTS).
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct WaitEventsArgs {
    /// User pointer to `num_events` [`EventData`] (to KFD; payloads are written back).
    pub events_ptr: u64,
    /// Number of entries (to KFD).
    pub num_events: u32,
    /// Non-zero: wait for all, else for any (to KFD).
    pub wait_for_all: u32,
    /// Milliseconds; 0 polls, `0xFFFFFFFF` waits forever. After an interrupted wait the
    /// kernel writes back the time that remains (to/from KFD).
    pub timeout: u32,
    /// One of [`WaitResult`] (from KFD).
    pub wait_result: u32,
}
