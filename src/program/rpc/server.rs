//! The server thread: finds ports with work, serves each call to its end, and sleeps when
//! there is none ([`super::wait`]).
//!
//! Served: `NOOP`, `EXIT`, `ABORT`, `WRITE_TO_STDOUT`, `WRITE_TO_STDERR`,
//! `WRITE_TO_STDOUT_NEWLINE`, `MALLOC`, `FREE`. `EXIT`, `ABORT` and an opcode the server does
//! not serve end the program: the server records why, aborts the program's queue (so no wave
//! is left waiting for an answer that never comes) and stops. Unlike LLVM's loader it never
//! ends the host process.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Instant;

use tracing::debug;

use super::mailbox::Mailbox;
use super::opcodes;
use super::port::{Interrupted, ServerPort};
use super::wait::Waiter;
use crate::program::output::Sink;
use crate::{Buffer, Device, GpuAgent, MemoryLocation, Queue};
use unload_safe_thread::UnloadSafeThread;

/// The longest [`Server::drain`] waits.
const DRAIN_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Bytes of one lane's write kept; the rest is received and dropped.
const WRITE_LIMIT: u64 = 1 << 20;

/// Why the program ended from inside the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Terminal {
    /// `exit(status)`.
    Exit(i32),
    /// `abort()`.
    Abort,
    /// A call the server does not serve.
    UnhandledOpcode(u32),
    /// The shared buffer became unreachable (the device was shut down, say).
    Failed(String),
}

#[derive(Debug, Default)]
struct State {
    terminal: Option<Terminal>,
    /// Full scans of every port that found no work.
    empty_scans: u64,
    finished: bool,
    /// The thread's CPU time when it ended.
    cpu_time: Option<std::time::Duration>,
}

/// What the runner and the server thread share.
#[derive(Debug)]
pub struct Shared {
    waiter: Waiter,
    state: Mutex<State>,
    changed: Condvar,
    pub(crate) stdout: Sink,
    pub(crate) stderr: Sink,
}

/// The running server.
#[derive(Debug)]
pub struct Server {
    shared: Arc<Shared>,
    thread: Option<UnloadSafeThread>,
}

/// What the server needs to serve calls.
pub struct Context {
    /// The shared buffer.
    pub mailbox: Mailbox,
    /// Where `MALLOC` allocates.
    pub device: Device,
    /// The program's GPU.
    pub gpu: GpuAgent,
    /// The program's queue, aborted when the program ends from inside the server.
    pub queue: Queue,
}

impl Server {
    /// Start serving.
    pub fn start(context: Context, stdout: Sink, stderr: Sink) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            waiter: Waiter::default(),
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            stdout,
            stderr,
        });
        let for_thread = Arc::clone(&shared);
        // Not `std::thread`: spawning one leaves a thread-local destructor on the calling
        // thread, which keeps a plugin that embeds aqueduct mapped after its `dlclose`
        // (`unload_safe_thread` says why; `tests/dlopen_unload.rs` runs a
        // program in the plugin to prove it).
        let thread = UnloadSafeThread::spawn("aqueduct-rpc", move || {
            serve(&for_thread, &context);
        })?;
        Ok(Self {
            shared,
            thread: Some(thread),
        })
    }

    /// Why the program ended from inside the server, if it did.
    pub fn terminal(&self) -> Option<Terminal> {
        self.lock().terminal.clone()
    }

    /// Wait until every call published before now has been served: two full scans that
    /// found no work (the first may have begun before now), or a terminal event, or the
    /// server's end, or `deadline` (at most [`DRAIN_LIMIT`] from now: a wave that ended in
    /// the middle of a call leaves the server waiting for a packet that never comes).
    pub fn drain(&self, deadline: Option<Instant>) -> Option<Terminal> {
        let limit = Instant::now() + DRAIN_LIMIT;
        let deadline = deadline.map_or(limit, |d| d.min(limit));
        let mut state = self.lock();
        let target = state.empty_scans + 2;
        self.shared.waiter.wake();
        while state.terminal.is_none() && !state.finished && state.empty_scans < target {
            let Some(wait) = deadline.checked_duration_since(Instant::now()) else {
                break;
            };
            state = self
                .shared
                .changed
                .wait_timeout(state, wait)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        state.terminal.clone()
    }

    /// Stop the thread and wait for it; returns the captured output (stdout, stderr) and
    /// the thread's CPU time.
    pub fn stop(mut self) -> (Vec<u8>, Vec<u8>, Option<std::time::Duration>) {
        self.join();
        let cpu_time = self.lock().cpu_time;
        (
            self.shared.stdout.take(),
            self.shared.stderr.take(),
            cpu_time,
        )
    }

    fn join(&mut self) {
        if let Some(thread) = self.thread.take() {
            self.shared.waiter.stop();
            if !thread.join() {
                debug!("the RPC server thread panicked");
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.join();
    }
}

impl Shared {
    fn update(&self, f: impl FnOnce(&mut State)) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut state);
        self.changed.notify_all();
    }
}

/// The heap the program's `malloc` takes from: freed when the server ends.
#[derive(Default)]
struct Heap {
    blocks: HashMap<u64, Buffer>,
}

fn serve(shared: &Shared, context: &Context) {
    let mut heap = Heap::default();
    let mut start = 0;
    super::wait::tighten_timer_slack();
    let mut idle_since = Instant::now();
    let terminal = loop {
        if shared.waiter.stopped() {
            break None;
        }
        match context.mailbox.pending(start) {
            Ok(Some(port)) => {
                start = port + 1;
                match serve_port(shared, context, &mut heap, port) {
                    Ok(None) => idle_since = Instant::now(),
                    Ok(Some(terminal)) => break Some(terminal),
                    Err(Interrupted::Stopped) => break None,
                    Err(Interrupted::Failed(error)) => {
                        break Some(Terminal::Failed(error.to_string()));
                    }
                }
            }
            Ok(None) if start > 0 => start = 0,
            Ok(None) => {
                shared.update(|state| state.empty_scans += 1);
                if !shared.waiter.pause(idle_since) {
                    break None;
                }
            }
            Err(error) => break Some(Terminal::Failed(error.to_string())),
        }
    };
    if let Some(terminal) = terminal {
        debug!(?terminal, "GPU program ended from the RPC server");
        shared.update(|state| {
            state.terminal.get_or_insert(terminal);
        });
        // Nothing else may wait for an answer now: stop every wave.
        let _ = context.queue.abort();
    }
    drop(heap);
    let cpu_time = super::usage::thread_cpu_time();
    shared.update(|state| {
        state.finished = true;
        state.cpu_time = cpu_time;
    });
}

fn serve_port(
    shared: &Shared,
    context: &Context,
    heap: &mut Heap,
    index: u32,
) -> Result<Option<Terminal>, Interrupted> {
    let mut port = ServerPort::open(&context.mailbox, &shared.waiter, index)?;
    match port.opcode() {
        opcodes::NOOP => {
            port.recv()?;
        }
        opcodes::EXIT => {
            port.recv()?;
            port.send(|_| [0; 8])?;
            let packets = port.recv()?;
            let status = packets.first().map_or(0, |(_, p)| p[0] as u32 as i32);
            // The client ends its wave without closing the port.
            return Ok(Some(Terminal::Exit(status)));
        }
        opcodes::ABORT => {
            port.recv()?;
            port.send(|_| [0; 8])?;
            port.recv()?;
            return Ok(Some(Terminal::Abort));
        }
        opcode @ (opcodes::WRITE_TO_STDOUT
        | opcodes::WRITE_TO_STDERR
        | opcodes::WRITE_TO_STDOUT_NEWLINE) => {
            let sink = if opcode == opcodes::WRITE_TO_STDERR {
                &shared.stderr
            } else {
                &shared.stdout
            };
            let strings = port.recv_n(WRITE_LIMIT)?;
            let newline = opcode == opcodes::WRITE_TO_STDOUT_NEWLINE;
            let written: Vec<(u32, usize)> = strings
                .iter()
                .map(|(lane, bytes)| (*lane, sink.write(bytes, newline)))
                .collect();
            port.send(|lane| {
                let n = written.iter().find(|w| w.0 == lane).map_or(0, |w| w.1);
                [n as u64, 0, 0, 0, 0, 0, 0, 0]
            })?;
        }
        opcodes::MALLOC => {
            let requests = port.recv()?;
            let pointers: Vec<(u32, u64)> = requests
                .iter()
                .map(|(lane, packet)| (*lane, heap.allocate(context, packet[0])))
                .collect();
            port.send(|lane| {
                let p = pointers.iter().find(|p| p.0 == lane).map_or(0, |p| p.1);
                [p, 0, 0, 0, 0, 0, 0, 0]
            })?;
        }
        opcodes::FREE => {
            for (_, packet) in port.recv()? {
                heap.blocks.remove(&packet[0]);
            }
        }
        other => return Ok(Some(Terminal::UnhandledOpcode(other))),
    }
    port.close()?;
    Ok(None)
}

impl Heap {
    /// A block of `size` bytes of the GPU's device memory; 0 (NULL) when it cannot be had.
    fn allocate(&mut self, context: &Context, size: u64) -> u64 {
        let Ok(bytes) = usize::try_from(size) else {
            return 0;
        };
        if bytes == 0 {
            return 0;
        }
        match context
            .device
            .alloc(&context.gpu, MemoryLocation::Device, bytes)
        {
            Ok(buffer) => {
                let address = buffer.gpu_address();
                self.blocks.insert(address, buffer);
                address
            }
            Err(error) => {
                debug!(%error, size, "GPU program malloc failed");
                0
            }
        }
    }
}
