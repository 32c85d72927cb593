//! The GFX11 shader core's VALU throughput, beside the GFX9 core's: the gfx1100 build of
//! `valu_loop` (one wave32) on a simulated Radeon RX 7900 XTX of this process' own.
//!
//! The machine a `Device::open` simulates is chosen once per process (`AQUEDUCT_SIM_MACHINE`,
//! read when the process-wide machine is first built), but `Device::open_on` takes any `Sys`:
//! a private `rx7900xtx` machine, opened and shut down here, needs neither the environment
//! (which a multi-threaded process must not set) nor a child process.

use std::sync::Arc;
use std::time::Duration;

use amdgpu_sim::{Machine, MachineConfig};
use aqueduct::{Arg, Device, Geometry, MemoryLocation, QueueOptions};

use super::report::Figure;
use super::{Error, VALU_ITERATIONS, progress};

/// `tests/kernels/src/valu_loop.cl` built for gfx1100 (wave32, clang's default there).
const VALU_LOOP_GFX1100: &[u8] = include_bytes!("../../../tests/kernels/bin/gfx1100/valu_loop.co5");
/// VALU operations per iteration of the gfx1100 build's loop: 8 instructions, one of them a
/// VOPD dual issue (`v_dual_mul_f32 :: v_dual_and_b32`) counted as its two operations
/// (`tools/tests/bench.rs` counts them in the committed disassembly). The same 9 as gfx90a's:
/// VOPD packs two of them into one instruction word.
pub const VALU_PER_ITERATION_GFX11: u64 = 9;
/// Lanes of one launch: one wave32, so one shader worker runs it.
const LANES: u32 = 32;
const WAIT: Option<Duration> = Some(Duration::from_secs(60));

/// `samples` figures of lane operations per second of `valu_loop` on the GFX11 core.
pub fn valu_throughput(samples: usize) -> Result<Figure, Error> {
    progress("shader throughput, VALU-heavy kernel on the GFX11 core (simulated RX 7900 XTX)");
    let machine = Machine::new(MachineConfig::rx7900xtx())?;
    let device = Device::open_on(Arc::new(machine))?;
    let gpu = device.gpus()?[0].clone();
    let code = device.load_code_object(&gpu, VALU_LOOP_GFX1100)?;
    let kernel = code.kernel("valu_loop")?;
    if kernel.wavefront_size != LANES {
        return Err(format!(
            "gfx1100 valu_loop is built for wave{}, the figure assumes wave{LANES}",
            kernel.wavefront_size
        )
        .into());
    }
    let out = device.alloc(&gpu, MemoryLocation::Device, 4 * LANES as usize)?;
    let queue = device.create_queue(
        &gpu,
        &QueueOptions {
            profiling: true,
            ..QueueOptions::default()
        },
    )?;
    let lane_ops = u64::from(LANES) * u64::from(VALU_ITERATIONS) * VALU_PER_ITERATION_GFX11;
    let mut throughput = Vec::new();
    for _ in 0..samples {
        let done = queue
            .launch(
                &kernel,
                &Geometry::d1(LANES, LANES),
                &[Arg::buffer(&out), Arg::u32(VALU_ITERATIONS)],
            )?
            .wait(WAIT)?;
        if let Some(time) = done.gpu_time.filter(|t| !t.is_zero()) {
            #[allow(clippy::cast_precision_loss, reason = "a figure, not a count")]
            throughput.push(lane_ops as f64 / time.as_secs_f64() / 1e6);
        }
    }
    drop((queue, out, kernel, code));
    device.shutdown()?;
    Ok(Figure {
        id: "valu_lane_ops_gfx11",
        name: "shader throughput, VALU-heavy kernel on the GFX11 core (one wave32)",
        unit: "M lane-ops/s",
        goal: "report (beside the GFX9 core's)",
        samples: throughput,
        note: format!(
            "valu_loop built for gfx1100 on a simulated RX 7900 XTX of its own: {LANES} lanes × \
             {VALU_ITERATIONS} iterations × {VALU_PER_ITERATION_GFX11} VALU operations (a VOPD \
             counted as two) over the kernel's GPU time; one wave runs on one simulator worker"
        ),
    })
}
