//! `hsa_amd_register_system_event_handler`: registers the program's handler and starts the
//! runtime's monitor thread (`objects::system_events`).

use std::ffi::c_void;
use std::sync::PoisonError;

use crate::error::{Error, entry};
use crate::objects::system_events::EventCallback;
use crate::runtime::runtime;
use crate::status::Status;

/// `hsa_amd_register_system_event_handler`.
#[unsafe(no_mangle)]
pub extern "C" fn hsa_amd_register_system_event_handler(
    callback: EventCallback,
    data: *mut c_void,
) -> Status {
    entry("hsa_amd_register_system_event_handler", || {
        let runtime = runtime()?;
        let callback = callback.ok_or_else(|| Error::invalid_argument("null callback"))?;
        runtime
            .objects
            .events
            .handlers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((callback, data as usize));
        runtime
            .objects
            .events
            .start(&runtime.device, &runtime.machine, &runtime.objects.queues);
        Ok(Status::SUCCESS)
    })
}
