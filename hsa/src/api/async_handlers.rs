//! `hsa_amd_signal_async_handler`: registers the program's handler with the runtime's
//! async-handler thread (`objects::async_handlers`).

use std::ffi::c_void;

use aqueduct::Condition;

use crate::error::{Error, entry};
use crate::objects::async_handlers::{Handler, Registration};
use crate::runtime::runtime;
use crate::status::Status;

/// `hsa_amd_signal_async_handler`.
#[unsafe(no_mangle)]
pub extern "C" fn hsa_amd_signal_async_handler(
    signal: u64,
    cond: u32,
    value: i64,
    handler: Handler,
    arg: *mut c_void,
) -> Status {
    entry("hsa_amd_signal_async_handler", || {
        let runtime = runtime()?;
        let handler = handler.ok_or_else(|| Error::invalid_argument("null handler"))?;
        let signal = crate::api::signal::signal(&runtime, signal)?;
        let condition = match cond {
            0 => Condition::Eq,
            1 => Condition::Ne,
            2 => Condition::Lt,
            3 => Condition::Gte,
            _ => return Err(Error::invalid_argument("unknown condition")),
        };
        runtime.objects.async_handlers.register(Registration {
            signal,
            condition,
            value,
            handler,
            arg: arg as usize,
        });
        Ok(Status::SUCCESS)
    })
}
