//! Where a program's stdout and stderr go.

use std::io::Write;
use std::sync::{Mutex, PoisonError};

/// Where one of the program's output streams goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Output {
    /// To this process' own stream, each write whole under the stream's lock.
    #[default]
    Inherit,
    /// Into memory, returned in [`Exit`](super::Exit).
    Capture,
}

/// A stream being written.
#[derive(Debug)]
pub(crate) struct Sink {
    output: Output,
    stderr: bool,
    captured: Mutex<Vec<u8>>,
}

impl Sink {
    pub(crate) fn new(output: Output, stderr: bool) -> Self {
        Self {
            output,
            stderr,
            captured: Mutex::new(Vec::new()),
        }
    }

    /// Write `bytes` (and a newline if asked) as one piece: lines from different lanes never
    /// interleave. Returns the bytes written, the newline included (LLVM's server answers
    /// `RPC_WRITE_TO_STDOUT_NEWLINE` with the count plus one, and its `puts` checks for it).
    pub(crate) fn write(&self, bytes: &[u8], newline: bool) -> usize {
        let mut whole = Vec::with_capacity(bytes.len() + 1);
        whole.extend_from_slice(bytes);
        if newline {
            whole.push(b'\n');
        }
        let written = match self.output {
            Output::Capture => {
                self.captured
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .extend_from_slice(&whole);
                true
            }
            Output::Inherit if self.stderr => {
                let mut stream = std::io::stderr().lock();
                stream
                    .write_all(&whole)
                    .and_then(|()| stream.flush())
                    .is_ok()
            }
            Output::Inherit => {
                let mut stream = std::io::stdout().lock();
                stream
                    .write_all(&whole)
                    .and_then(|()| stream.flush())
                    .is_ok()
            }
        };
        if written { whole.len() } else { 0 }
    }

    pub(crate) fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.captured.lock().unwrap_or_else(PoisonError::into_inner))
    }
}
