//! `libhsa-runtime64.so.1`: ROCr's HSA C API (`hsa.h`, `hsa_ext_amd.h`, the loader extension)
//! implemented on aqueduct's safe API, so that unmodified HSA clients (rocminfo, LLVM's GPU
//! loader, libomptarget, liboffload, HIP) run on aqueduct: one driver underneath.
//!
//! Every export carries ROCr's symbol version `ROCR_1` (see `exports`), and the library's
//! SONAME is ROCr's (`build.rs`). Handles are indices into the runtime's tables, except where
//! clients read the object behind a handle themselves: a signal handle is the address of its
//! `amd_signal_t`, a queue is an `amd_queue_t` whose first member is the `hsa_queue_t`.
//!
//! The crate is a one-way stack (`tests/architecture.rs` checks it), lowest first:
//!
//! - `status`, `error`, `value`, `table`, `model`, `loaded_code_object`: statuses, the crate's
//!   error, attribute values, handle tables, the agents, pools and ISAs the info functions
//!   answer from, loaded-code-object handles;
//! - `objects`: what a program creates (signals, queues, memory, executables, copy engines,
//!   handlers) in tables with the operations on them, and the runtime's threads; nothing there
//!   knows the runtime;
//! - `runtime`: the live runtime (device, machine, objects), `hsa_init` / `hsa_shut_down`,
//!   reference counted;
//! - `api`: the other entry points, one module per area of the C API, each finding the
//!   runtime through `runtime::runtime()`;
//! - `exports`: the list of every export and its symbol version.

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
