//! aqueduct's side of the HIP comparison (`--hip`): the paths HIP's launch-cost program
//! measures (`hip/launch_cost.hip`), shaped the same way, so each HIP figure has an aqueduct
//! figure beside it: the host cost of one `Queue::launch`, a 10-kernel dependent chain launched
//! one by one, and the same chain recorded once and replayed as a command list (HIP: a graph
//! captured from a stream).

use std::time::Instant;

use aqueduct::{Geometry, Kernel, Queue};

use super::report::Figure;
use super::{Error, WAIT, micros, nanos};

/// Launches timed together for the host cost (as HIP's side times them).
pub const HOST_BATCH: usize = 32;
/// Kernels of the dependent chain.
pub const CHAIN: usize = 10;

/// Measure the paths `iterations` times on `queue` with the empty kernel.
pub fn measure(
    queue: &Queue,
    empty: &Kernel,
    iterations: usize,
    figures: &mut Vec<Figure>,
) -> Result<(), Error> {
    let one = Geometry::d1(1, 1);
    let mut host = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let started = Instant::now();
        for _ in 0..HOST_BATCH {
            queue.launch(empty, &one, &[])?;
        }
        host.push(nanos(started.elapsed()) / HOST_BATCH as f64);
        queue.finish(WAIT)?;
    }
    figures.push(Figure {
        id: "launch_host",
        name: "Queue::launch of the empty kernel, host cost per launch",
        unit: "ns",
        goal: "report (HIP: hipLaunchKernel)",
        samples: host,
        note: format!(
            "{HOST_BATCH} Queue::launch calls timed together, the CP running, then \
             Queue::finish (not timed)"
        ),
    });

    // Kernels in one queue complete in order (each waits for the one before: the CP runs one
    // packet at a time), as in one HIP stream.
    let mut chain = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let started = Instant::now();
        let mut last = None;
        for _ in 0..CHAIN {
            last = Some(queue.launch(empty, &one, &[])?);
        }
        if let Some(last) = last {
            last.wait(WAIT)?;
        }
        chain.push(micros(started.elapsed()));
    }
    figures.push(Figure {
        id: "chain_10",
        name: "10-kernel dependent chain, launch to completion",
        unit: "µs",
        goal: "report (HIP: 10 launches + hipDeviceSynchronize)",
        samples: chain,
        note: format!("{CHAIN} Queue::launch calls, then a wait on the last"),
    });

    let mut builder = queue.record();
    for _ in 0..CHAIN {
        builder.launch(empty, &one, &[])?;
    }
    let mut list = builder.finish()?;
    let packets = list.packets();
    let mut replay_host = Vec::with_capacity(iterations);
    let mut replay_chain = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let started = Instant::now();
        list.replay()?;
        replay_host.push(nanos(started.elapsed()) / CHAIN as f64);
        list.finish(WAIT)?;
        let started = Instant::now();
        let replayed = list.replay()?;
        list.wait(replayed, WAIT)?;
        replay_chain.push(micros(started.elapsed()));
    }
    figures.push(Figure {
        id: "command_list_chain_10_host",
        name: "command-list replay of the 10-kernel chain, host cost per kernel",
        unit: "ns",
        goal: "report (HIP: hipGraphLaunch)",
        samples: replay_host,
        note: format!(
            "CommandList::replay of {CHAIN} recorded empty-kernel launches ({packets} packets \
             with its completion barrier, one doorbell), the CP running, divided by {CHAIN}; \
             then CommandList::finish (not timed)"
        ),
    });
    figures.push(Figure {
        id: "command_list_chain_10",
        name: "command-list replay of the 10-kernel chain, launch to completion",
        unit: "µs",
        goal: "report (HIP: hipGraphLaunch + hipStreamSynchronize)",
        samples: replay_chain,
        note: "CommandList::replay, then CommandList::wait on that replay".into(),
    });
    Ok(())
}
