//! Queues: `hsa_queue_create` makes an aqueduct queue and hands out its `amd_queue_t`, whose
//! first member is the `hsa_queue_t` clients write packets through. Its `doorbell_signal` is a
//! doorbell-kind `amd_signal_t` of the runtime's: a signal store to it rings the queue's
//! doorbell. The index functions are atomics on the descriptor's read and write indices.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};

use aqueduct::aql::queue::{READ_DISPATCH_ID_OFFSET, WRITE_DISPATCH_ID_OFFSET};
use aqueduct::aql::{AmdSignal, signal::SignalKind};
use aqueduct::{Queue, QueueOptions};

use crate::error::{Error, Result, entry};
use crate::model::AgentKind;
use crate::objects::queue::{ErrorCallback, HsaQueue};
use crate::runtime::{Runtime, runtime};
use crate::status::Status;

/// A queue of the runtime by its `hsa_queue_t` pointer.
pub fn queue(runtime: &Runtime, pointer: *const c_void) -> Result<Queue> {
    runtime
        .objects
        .queues
        .with(pointer as u64, |q| q.queue.clone())
        .ok_or_else(|| Error::new(Status::INVALID_QUEUE, format!("queue {pointer:p}")))
}

/// `hsa_queue_create` (and `hsa_soft_queue_create`'s refusal below).
///
/// # Safety
///
/// `queue` is null or valid for one pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_queue_create(
    agent: u64,
    size: u32,
    queue_type: u32,
    callback: ErrorCallback,
    data: *mut c_void,
    private_segment_size: u32,
    _group_segment_size: u32,
    queue: *mut *mut c_void,
) -> Status {
    entry("hsa_queue_create", || {
        let runtime = runtime()?;
        let index = crate::model::index_of(agent)
            .filter(|&i| i < runtime.machine.agents.len())
            .ok_or_else(|| Error::new(Status::INVALID_AGENT, "unknown agent"))?;
        let agent = &runtime.machine.agents[index];
        if queue.is_null() || queue_type > 2 {
            return Err(Error::invalid_argument("null queue or unknown queue type"));
        }
        let (AgentKind::Gpu, Some(gpu)) = (agent.kind, agent.gpu.as_ref()) else {
            return Err(Error::new(
                Status::INVALID_QUEUE_CREATION,
                "a CPU agent runs no AQL queue",
            ));
        };
        if !size.is_power_of_two() || size < gpu.queues.min_packets || size > gpu.queues.max_packets
        {
            return Err(Error::invalid_argument(format!(
                "a queue of {size} packets"
            )));
        }
        let made = runtime.device.create_queue(
            gpu,
            &QueueOptions {
                packets: size,
                ..QueueOptions::default()
            },
        )?;
        // The program's hint of the scratch its kernels need per work-item (UINT32_MAX: no
        // hint): provided now, since the program publishes packets itself and nothing grows
        // scratch between its packets.
        if private_segment_size != u32::MAX && private_segment_size > 0 {
            made.reserve_scratch(private_segment_size)?;
        }
        let doorbell = Box::new(AmdSignal {
            kind: SignalKind::DOORBELL.0,
            ..AmdSignal::default()
        });
        let doorbell_handle = &raw const *doorbell as u64;
        made.set_runtime_fields(doorbell_handle, u64::from(made.queue_id()))?;
        let address = made.descriptor_address()?;
        runtime
            .objects
            .signals
            .doorbells
            .insert(doorbell_handle, made.clone());
        runtime.objects.queues.insert(
            address,
            HsaQueue {
                queue: made,
                doorbell,
                agent: index,
                callback: (callback, data as usize),
            },
        );
        // Faults on this GPU now reach the queue's callback (or end the process, as ROCr's).
        runtime
            .objects
            .events
            .start(&runtime.device, &runtime.machine, &runtime.objects.queues);
        // SAFETY: non-null, valid for one write by the caller's contract.
        unsafe { queue.write(address as *mut c_void) };
        Ok(Status::SUCCESS)
    })
}

/// `hsa_soft_queue_create`: soft queues (served by a host thread) are not offered.
#[unsafe(no_mangle)]
pub extern "C" fn hsa_soft_queue_create(
    _region: u64,
    _size: u32,
    _queue_type: u32,
    _features: u32,
    _doorbell_signal: u64,
    _queue: *mut *mut c_void,
) -> Status {
    entry("hsa_soft_queue_create", || {
        runtime()?;
        Err(Error::new(
            Status::INVALID_QUEUE_CREATION,
            "soft queues are not offered",
        ))
    })
}

/// `hsa_queue_destroy`.
#[unsafe(no_mangle)]
pub extern "C" fn hsa_queue_destroy(queue: *mut c_void) -> Status {
    entry("hsa_queue_destroy", || {
        let runtime = runtime()?;
        let entry = runtime
            .objects
            .queues
            .remove(queue as u64)
            .ok_or_else(|| Error::new(Status::INVALID_QUEUE, format!("queue {queue:p}")))?;
        runtime
            .objects
            .signals
            .doorbells
            .remove(&raw const *entry.doorbell as u64);
        Ok(Status::SUCCESS)
    })
}

/// `hsa_queue_inactivate`: the queue stops taking packets (aqueduct aborts it).
#[unsafe(no_mangle)]
pub extern "C" fn hsa_queue_inactivate(queue: *mut c_void) -> Status {
    entry("hsa_queue_inactivate", || {
        let runtime = runtime()?;
        self::queue(&runtime, queue)?.abort()?;
        Ok(Status::SUCCESS)
    })
}

/// The atomic at `offset` in the `amd_queue_t` at `queue`.
///
/// # Safety
///
/// `queue` is the `hsa_queue_t` pointer of a live queue (an `amd_queue_t`, 64-byte aligned).
unsafe fn index_at<'a>(queue: *mut c_void, offset: usize) -> &'a AtomicU64 {
    #[allow(
        clippy::cast_ptr_alignment,
        reason = "amd_queue_t is 64-byte aligned, the field 8"
    )]
    // SAFETY: the field is a naturally aligned u64 inside the live descriptor, which the CP
    // and producers access only atomically.
    unsafe {
        AtomicU64::from_ptr(queue.cast::<u8>().add(offset).cast::<u64>())
    }
}

macro_rules! index_loads {
    ($($name:ident => $offset:expr, $order:expr),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`.")]
        ///
        /// # Safety
        ///
        /// `queue` is a queue this runtime created and has not destroyed.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(queue: *mut c_void) -> u64 {
            // SAFETY: the caller's contract.
            unsafe { index_at(queue, $offset) }.load($order)
        }
    )*};
}

macro_rules! index_stores {
    ($($name:ident => $order:expr),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`.")]
        ///
        /// # Safety
        ///
        /// `queue` is a queue this runtime created and has not destroyed.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(queue: *mut c_void, value: u64) {
            // SAFETY: the caller's contract.
            unsafe { index_at(queue, WRITE_DISPATCH_ID_OFFSET) }.store(value, $order);
        }
    )*};
}

macro_rules! index_adds {
    ($($name:ident => $order:expr),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`: the previous write index.")]
        ///
        /// # Safety
        ///
        /// `queue` is a queue this runtime created and has not destroyed.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(queue: *mut c_void, value: u64) -> u64 {
            // SAFETY: the caller's contract.
            unsafe { index_at(queue, WRITE_DISPATCH_ID_OFFSET) }.fetch_add(value, $order)
        }
    )*};
}

macro_rules! index_cases {
    ($($name:ident => $order:expr),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`: the previous write index.")]
        ///
        /// # Safety
        ///
        /// `queue` is a queue this runtime created and has not destroyed.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(queue: *mut c_void, expected: u64, value: u64) -> u64 {
            // SAFETY: the caller's contract.
            let index = unsafe { index_at(queue, WRITE_DISPATCH_ID_OFFSET) };
            match index.compare_exchange(expected, value, $order, failure($order)) {
                Ok(v) | Err(v) => v,
            }
        }
    )*};
}

/// The failure ordering of a compare-exchange whose success ordering is `success`.
fn failure(success: Ordering) -> Ordering {
    match success {
        Ordering::Relaxed | Ordering::Release => Ordering::Relaxed,
        _ => Ordering::Acquire,
    }
}

use Ordering::{AcqRel, Acquire, Relaxed, Release};

index_loads! {
    hsa_queue_load_read_index_relaxed => READ_DISPATCH_ID_OFFSET, Relaxed,
    hsa_queue_load_read_index_scacquire => READ_DISPATCH_ID_OFFSET, Acquire,
    hsa_queue_load_read_index_acquire => READ_DISPATCH_ID_OFFSET, Acquire,
    hsa_queue_load_write_index_relaxed => WRITE_DISPATCH_ID_OFFSET, Relaxed,
    hsa_queue_load_write_index_scacquire => WRITE_DISPATCH_ID_OFFSET, Acquire,
    hsa_queue_load_write_index_acquire => WRITE_DISPATCH_ID_OFFSET, Acquire,
}

index_stores! {
    hsa_queue_store_write_index_relaxed => Relaxed,
    hsa_queue_store_write_index_screlease => Release,
    hsa_queue_store_write_index_release => Release,
}

index_adds! {
    hsa_queue_add_write_index_relaxed => Relaxed,
    hsa_queue_add_write_index_scacquire => Acquire,
    hsa_queue_add_write_index_screlease => Release,
    hsa_queue_add_write_index_scacq_screl => AcqRel,
    hsa_queue_add_write_index_acquire => Acquire,
    hsa_queue_add_write_index_release => Release,
    hsa_queue_add_write_index_acq_rel => AcqRel,
}

index_cases! {
    hsa_queue_cas_write_index_relaxed => Relaxed,
    hsa_queue_cas_write_index_scacquire => Acquire,
    hsa_queue_cas_write_index_screlease => Release,
    hsa_queue_cas_write_index_scacq_screl => AcqRel,
    hsa_queue_cas_write_index_acquire => Acquire,
    hsa_queue_cas_write_index_release => Release,
    hsa_queue_cas_write_index_acq_rel => AcqRel,
}

/// `hsa_queue_store_read_index_*`: the packet processor owns the read index; ROCr's stores
/// are for soft queues, which this runtime does not make.
macro_rules! read_index_stores {
    ($($name:ident => ()),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`: ignored (the CP owns the read index).")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name(_queue: *mut c_void, _value: u64) {}
    )*};
}

read_index_stores! {
    hsa_queue_store_read_index_relaxed => (),
    hsa_queue_store_read_index_screlease => (),
    hsa_queue_store_read_index_release => (),
}
