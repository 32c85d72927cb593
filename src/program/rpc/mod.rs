//! The host side of LLVM libc's GPU RPC protocol (gpu-programs.md §3–§6).
//!
//! - `layout`: the shared buffer's layout and the protocol generations;
//! - `opcodes`: the opcode numbers;
//! - `mailbox`: the server's atomic view of the shared buffer;
//! - `port`: the send/recv state machine of one port;
//! - `wait`: the idle policy (poll every few microseconds after a call, then sleep up to 2 ms);
//! - `server`: the thread and the services;
//! - `usage`: the server thread's CPU time.

pub mod layout;
pub(crate) mod mailbox;
pub mod opcodes;
pub(crate) mod port;
pub(crate) mod server;
pub(crate) mod usage;
pub mod wait;
