//! `libamdgpu_sim_preload.so`: the simulated AMD GPU for any unmodified program, through
//! `LD_PRELOAD`.
//!
//! ```text
//! LD_PRELOAD=target/debug/libamdgpu_sim_preload.so rocminfo
//! ```
//!
//! The library defines the libc functions a KFD client calls (`open`, `close`, `ioctl`,
//! `mmap`, `munmap`, `dup*`, `fcntl`, the `stat` family, `access`, the extended-attribute
//! reads, `fopen`, `opendir`, `readlink`, `realpath`) and serves from them what the kernel serves on a machine with the
//! GPU: `/dev/kfd`, the render nodes `/dev/dri/renderD*`, and the sysfs directories a client
//! reads (the KFD topology under `/sys/devices/virtual/kfd` and `/sys/class/kfd`,
//! `/sys/class/drm`, `/sys/module/amdgpu`). Everything else goes to the next definition
//! (libc) untouched. Behind it is the same kernel-driver model, command processor and shader
//! core as aqueduct's in-process simulator ([`amdgpu_sim::Machine`]): one model, two ways in.
//!
//! - Simulated fds are real, unique fds (memfds), so `close`, `dup`, `poll` and fd limits
//!   behave; `dup`s share one file, released on the last `close`.
//! - `mmap` of a simulated fd returns the simulator's memory at the address asked for
//!   (`MAP_FIXED` included): the GPU address is the host address, as in the simulator.
//! - Every `munmap`, and every other `MAP_FIXED` mapping (libc makes it), is an unmap for the
//!   simulator too: userptr memory over the range leaves the GPU and the simulator's mappings
//!   there are forgotten (libhsakmt gives a buffer back by mapping anonymous memory over it).
//! - The sysfs directories are written once into a private [mirror] directory and
//!   paths are rewritten to it, so every libc way of reading them works.
//! - Doorbells are watched by a thread ([doorbells]) standing in for the GPU's doorbell unit.
//! - `AQUEDUCT_SIM_MACHINE` picks the machine (`mi210` by default, `mi300x`, `mi210-hive`,
//!   `mi300x-platform`); `AMDGPU_SIM_CONFIG` adjusts it (GPU count, hive, compute units, VRAM,
//!   KFD interface version: [`config`]).
//!
//! What it does not see: calls that bypass libc's exported names (raw `syscall`, glibc's own
//! internal calls such as the `open` inside `fopen`, which are why `fopen` and `opendir` are
//! defined here), relative paths whose directory is not in the mirror, and fds closed by
//! `close_range`/`closefrom` (the table notices a reused number by its identity), and
//! `mremap` (moving a mapping over a simulated one with `MREMAP_FIXED` replaces it unseen).

#![deny(unsafe_op_in_unsafe_fn)]
// The unit-test build leaves the entry points out (below), so what only they use is unused
// there.
#![cfg_attr(test, allow(dead_code))]
// A cdylib has no Rust API: every module is private, and this page documents them (read it
// with `cargo doc --document-private-items`).
#![allow(rustdoc::private_intra_doc_links)]

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
compile_error!(
    "amdgpu-sim-preload defines C variadic functions (open, ioctl, fcntl) with fixed \
     parameters, which reads the optional argument correctly only on x86_64 System V"
);

mod config;
mod doorbells;
// Not in the unit-test binary: there the definitions would replace libc's for the test
// harness itself.
#[cfg(not(test))]
mod entry_points;
mod error;
mod fds;
mod guard;
mod mirror;
mod next;
mod paths;
mod simulator;
