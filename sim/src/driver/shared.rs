//! The machine-wide state of the kernel-driver model that every KFD process reads: the GPUs,
//! the simulator's memory, the system memory pool, the queue engines (command processor and SDMA), fault injection and the
//! interface version. Processes hold it; they never reach the machine itself.

use std::sync::Arc;

use crate::driver::accounting::SystemPool;
use crate::driver::device::Device;
use crate::driver::host_memory::MemoryFile;
use crate::driver::injection::FaultInjection;
use crate::gpu::queue::QueueEngine;

/// What every process of a machine shares.
pub(crate) struct Shared {
    pub id: u64,
    pub devices: Vec<Arc<Device>>,
    pub memory: Arc<MemoryFile>,
    pub system: Arc<SystemPool>,
    pub engine: Arc<dyn QueueEngine>,
    pub sdma_engine: Arc<dyn QueueEngine>,
    pub injection: FaultInjection,
    pub kfd_minor: u32,
    pub description: String,
}
