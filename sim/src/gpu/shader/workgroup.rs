//! Running one workgroup: its waves take turns on the worker thread, switching when a wave
//! ends, reaches s_barrier, sleeps, or has run a time slice; a barrier releases once every wave
//! that has not ended has arrived. LDS lives with the workgroup.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::gpu::dispatch::DispatchError;
use crate::gpu::shader::exec::{Exec, Shared, Stop};
use crate::gpu::shader::launch::Launch;
use crate::gpu::shader::lds::Lds;
use crate::gpu::shader::memory::DeviceMemory;
use crate::gpu::shader::program::Program;
use crate::gpu::shader::wave::Wave;

/// A worker's reusable state: wave register files and LDS.
#[derive(Debug, Default)]
pub struct Worker {
    waves: Vec<Wave>,
    lds: Lds,
    /// Waves run.
    pub waves_run: u64,
    /// Instructions executed.
    pub instructions: u64,
}

impl Worker {
    /// A worker with no waves allocated yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Run workgroup `index` of `launch` to completion. `first_slot` is the first of the
    /// worker's private scratch slots (one per wave of a full workgroup).
    pub fn run_group<'a>(
        &mut self,
        launch: &Launch,
        index: u64,
        first_slot: u64,
        shared: &Shared<'a>,
        mem: &mut DeviceMemory<'a>,
        program: &mut Arc<Program>,
    ) -> Result<(), DispatchError> {
        let id = launch.group_id(index);
        let extent = launch.group_extent(id);
        let n = launch.waves_in(extent) as usize;
        while self.waves.len() < n {
            self.waves.push(Wave::new());
        }
        for (w, wave) in self.waves[..n].iter_mut().enumerate() {
            launch.init_wave(wave, id, extent, w as u32, first_slot + w as u64);
        }
        self.lds.reset(launch.lds_bytes as usize);
        let result = self.schedule(n, shared, mem, program);
        for wave in &self.waves[..n] {
            self.instructions += wave.instructions;
        }
        self.waves_run += n as u64;
        result
    }

    fn schedule<'a>(
        &mut self,
        n: usize,
        shared: &Shared<'a>,
        mem: &mut DeviceMemory<'a>,
        program: &mut Arc<Program>,
    ) -> Result<(), DispatchError> {
        loop {
            let mut running = 0;
            let mut asleep = 0;
            for w in 0..n {
                let wave = &mut self.waves[w];
                if wave.ended || wave.at_barrier {
                    continue;
                }
                running += 1;
                if shared.abort.load(Ordering::Relaxed) {
                    return Err(DispatchError::Aborted);
                }
                let mut exec = Exec::new(wave, &mut self.lds, mem, shared);
                let stop = exec.run(program);
                shared.slices_run.fetch_add(1, Ordering::Relaxed);
                match stop? {
                    Stop::Sleep => asleep += 1,
                    Stop::Ended | Stop::Barrier | Stop::Yield => {}
                }
            }
            if asleep > 0 && asleep == running {
                // Every wave that ran went to sleep: on hardware the SIMD idles for
                // 64 × SIMM16 clocks (s_sleep; tens of nanoseconds for the small counts
                // polling loops use, far below what the host can sleep for). Give the host
                // core to whatever else is runnable (the RPC server a polling wave waits on,
                // another worker), which is what an idle SIMD does for the rest of the chip.
                // Not a real sleep: a wave must not stall for a timer tick per poll.
                std::thread::yield_now();
            }
            let waves = &mut self.waves[..n];
            let live = waves.iter().filter(|w| !w.ended).count();
            if live == 0 {
                return Ok(());
            }
            if running == 0 || waves.iter().filter(|w| !w.ended).all(|w| w.at_barrier) {
                // Every live wave waits at the barrier: release them together.
                for w in waves.iter_mut() {
                    w.at_barrier = false;
                }
            }
        }
    }
}
