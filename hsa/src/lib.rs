//! `libhsa-runtime64.so.1`: ROCr's HSA C API (`hsa.h`, `hsa_ext_amd.h`, the loader extension)
//! implemented on aqueduct's safe API, so that unmodified HSA clients (rocminfo, LLVM's GPU
//! loader, libomptarget, liboffload, HIP) run on aqueduct: one driver underneath.
//!
//! Every export carries ROCr's symbol version `ROCR_1` (see `exports`), and the library's
//! SONAME is ROCr's (`build.rs`). Handles are indices into the runtime's tables, except where
//! clients read the object behind a handle themselves: a signal handle is the address of its
//! `amd_signal_t`, a queue is an `amd_queue_t` whose first member is the `hsa_queue_t`.
//!
//! - `runtime`: `hsa_init` / `hsa_shut_down`, reference counted;
//! - `model`: the agents, pools and ISAs the info functions answer from;
//! - `api`: the info functions (`system`, `agent`, `isa`, `pool`, `extension`), the loader
//!   extension, profiling, the asynchronous copies and the rest of `hsa_ext_amd.h`;
//! - `signal`, `queue`, `memory`, `executable`: the objects a program makes;
//! - `objects`: the tables of what a program creates, the copy engines and the runtime's
//!   threads (async handlers, the system-event monitor);
//! - `status`, `error`, `value`: statuses, the crate's error, attribute values.

#![deny(unsafe_op_in_unsafe_fn)]

pub mod api;
pub mod error;
pub mod exports;
pub mod loaded_code_object;
pub mod model;
pub mod objects;
pub mod runtime;
pub mod status;
mod table;
pub mod value;

pub use status::Status;
