//! The simulated kernel driver of one machine: the machine-wide state, the sysfs topology, the
//! open files, the KFD processes by pid and the CPU mappings made through the simulator. The
//! ways in (the `Sys` implementation) reach files, ioctls and mmap through it.

use std::collections::HashMap;
use std::sync::Arc;

use crate::driver::cpu_mappings::CpuMappings;
use crate::driver::files::FileTable;
use crate::driver::fork_gate::TableMutex;
use crate::driver::process::Process;
use crate::driver::shared::Shared;
use crate::driver::topology::Topology;

/// The kernel driver of one machine, behind its [`crate::Machine`] handles.
pub(crate) struct Kernel {
    pub shared: Arc<Shared>,
    pub topology: Topology,
    pub files: FileTable,
    pub processes: TableMutex<HashMap<i32, Arc<Process>>>,
    pub cpu_mappings: CpuMappings,
    /// The pid that built the machine: in a forked child, only the child's own process is
    /// touched (another process' locks may have been held at the fork).
    creator_pid: i32,
}

impl Kernel {
    /// A kernel with no open files, processes or mappings yet, made by the calling process.
    pub(crate) fn new(shared: Arc<Shared>, topology: Topology) -> Self {
        Self {
            shared,
            topology,
            files: FileTable::new(),
            processes: TableMutex::new(HashMap::new()),
            cpu_mappings: CpuMappings::default(),
            creator_pid: nix::unistd::getpid().as_raw(),
        }
    }

    /// The calling process unmapped `[start, start + len)` (a `munmap`, or a `MAP_FIXED`
    /// mapping replacing the range): the MMU notifier takes the GPU mappings of the userptr
    /// BOs over the range, before or without the pages going.
    pub(crate) fn notify_unmap(&self, start: usize, len: usize) {
        let pid = nix::unistd::getpid().as_raw();
        if let Some(process) = self.process_by_pid(pid) {
            process.invalidate_user_range(start as u64, len as u64);
        }
    }

    /// The KFD process of `pid`, if it has opened `/dev/kfd`.
    pub(crate) fn process_by_pid(&self, pid: i32) -> Option<Arc<Process>> {
        self.processes.lock().get(&pid).cloned()
    }

    /// The KFD process of the caller, created on first open (`kfd_create_process`).
    pub(crate) fn process_for_open(&self, pid: i32) -> Arc<Process> {
        let mut processes = self.processes.lock();
        if let Some(p) = processes.get(&pid).filter(|p| !p.has_exited()) {
            return p.clone();
        }
        let process = Process::new(pid, self.shared.clone());
        processes.insert(pid, process.clone());
        process
    }

    /// Processes this (possibly forked) process may touch.
    pub(crate) fn touchable_processes(&self) -> Vec<Arc<Process>> {
        let me = nix::unistd::getpid().as_raw();
        let processes = self.processes.lock();
        processes
            .values()
            .filter(|p| me == self.creator_pid || p.pid == me)
            .cloned()
            .collect()
    }
}

impl Drop for Kernel {
    fn drop(&mut self) {
        let processes: Vec<Arc<Process>> = self.processes.lock().drain().map(|(_, p)| p).collect();
        let me = nix::unistd::getpid().as_raw();
        for process in processes {
            if me == self.creator_pid || process.pid == me {
                process.exit();
            } else {
                // Another process' state in a forked child: its processor threads do not
                // exist here and its locks may be held; leave it alone.
                std::mem::forget(process);
            }
        }
        drop(self.cpu_mappings.clear());
        drop(self.files.clear());
    }
}
