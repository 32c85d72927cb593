//! How fast the simulated command processor answers a doorbell (issue 23's moonshot), apart
//! from any kernel and from the completion path: the host publishes a barrier-AND packet (no
//! dependencies, no kernel) on a profiling queue, and the packet's start timestamp says when
//! the CP began it. The simulated GPU clock is `CLOCK_MONOTONIC_RAW` (`amdgpu_sim::clock`),
//! so the host's clock read just before the publish and the CP's start timestamp are on one
//! time line: one hop, not a round trip.
//!
//! Two states of the CP: parked (its thread asleep, longer than its spin window after the
//! last packet), and busy (the packet published [`BUSY_GAP`] after the host saw the previous
//! one complete, inside the window). And the spin window's price: the CPU time the CP's
//! thread uses for one burst of work (one packet, from the doorbell until it parks again).

use std::time::{Duration, Instant};

use amdgpu_sim::clock::monotonic_raw_ns;
use amdgpu_sim::cp::SPIN_WINDOW;
use aqueduct::{Device, GpuAgent, MemoryOrder, QueueOptions};

use super::cp_thread::CpThread;
use super::report::Figure;
use super::{Error, median, progress};

/// How long after the host saw the previous packet complete the busy series publishes the
/// next: well inside [`SPIN_WINDOW`].
const BUSY_GAP: Duration = Duration::from_micros(20);
/// The longest a processor may take to park, or a packet to complete, before the path gives up.
const LIMIT: Duration = Duration::from_secs(30);

/// One answered doorbell.
#[derive(Debug, Clone, Copy)]
struct Answer {
    /// µs from the host's clock read before the publish to the packet's start timestamp.
    one_way: f64,
    /// µs from that clock read until the host saw the completion (two hops).
    round_trip: f64,
    /// µs the CP's thread waited for a core meanwhile (run-queue wait), if the kernel says.
    cp_waited: Option<f64>,
    /// µs the host's thread waited for a core meanwhile.
    host_waited: Option<f64>,
    /// When the host saw the completion.
    seen: Instant,
}

/// The doorbell figures; `floor` is `wakeup_floor`'s median (µs, a round trip: two wake-ups).
/// Nothing is measured where no simulated CP thread serves the queue (hardware).
pub fn measure(
    device: &Device,
    gpu: &GpuAgent,
    iterations: usize,
    floor: f64,
    figures: &mut Vec<Figure>,
) -> Result<(), Error> {
    progress("doorbell → the CP starts a barrier packet, CP parked and CP busy");
    let before = CpThread::threads();
    let queue = device.create_queue(
        gpu,
        &QueueOptions {
            profiling: true,
            ..QueueOptions::default()
        },
    )?;
    let Some(cp) = CpThread::of_queue(queue.gpu_id(), queue.queue_id(), &before, LIMIT) else {
        eprintln!("aqueduct bench: no simulated command processor thread: doorbell paths skipped");
        return Ok(());
    };
    let host = CpThread::current();
    let frequency = gpu.timestamp_frequency_hz.max(1);
    let signal = device.signal(1)?;
    let waited = |thread: Option<CpThread>, before: Option<Duration>| {
        let after = thread?.run_delay()?;
        Some(after.saturating_sub(before?).as_secs_f64() * 1e6)
    };
    // Publish one barrier packet, not before `not_before` (spinning until then), and wait
    // (spinning) until the host sees it complete.
    let answer = |not_before: Option<Instant>| -> Result<Answer, Error> {
        signal.store(1, MemoryOrder::Relaxed)?;
        let (cp_before, host_before) = (cp.run_delay(), host.and_then(CpThread::run_delay));
        while not_before.is_some_and(|at| Instant::now() < at) {
            std::hint::spin_loop();
        }
        let published = monotonic_raw_ns();
        queue.barrier_and(&[], Some(&signal))?;
        let deadline = Instant::now() + LIMIT;
        while signal.load(MemoryOrder::Acquire)? != 0 {
            if Instant::now() >= deadline {
                return Err("a barrier packet did not complete within 30 s".into());
            }
            std::hint::spin_loop();
        }
        let seen = monotonic_raw_ns();
        let seen_at = Instant::now();
        let start = signal.timestamps()?.start;
        let start_ns = u128::from(start) * 1_000_000_000 / u128::from(frequency);
        Ok(Answer {
            one_way: (start_ns as f64 - published as f64) / 1e3,
            round_trip: seen.saturating_sub(published) as f64 / 1e3,
            cp_waited: waited(Some(cp), cp_before),
            host_waited: waited(host, host_before),
            seen: seen_at,
        })
    };
    // The first packet: the CP's first look at the queue's memory (not a figure).
    answer(None)?;
    let parked = |since: Instant| {
        if cp.wait_parked(since, 2 * SPIN_WINDOW, LIMIT) {
            Ok(())
        } else {
            Err("the simulated CP did not park within 30 s of its last packet")
        }
    };

    let mut idle = Vec::with_capacity(iterations);
    let mut burst_cpu = Vec::with_capacity(iterations);
    parked(Instant::now())?;
    for _ in 0..iterations {
        let cpu_before = cp.cpu_time();
        idle.push(answer(None)?);
        parked(Instant::now())?;
        if let (Some(before), Some(after)) = (cpu_before, cp.cpu_time()) {
            burst_cpu.push(after.saturating_sub(before).as_secs_f64() * 1e6);
        }
    }

    let mut busy = Vec::with_capacity(iterations);
    // Wake the CP: the series' first answer then finds it inside its window (not a figure).
    let mut previous = answer(None)?;
    let busy_cpu_before = cp.cpu_time();
    let busy_started = Instant::now();
    for _ in 0..iterations {
        previous = answer(Some(previous.seen + BUSY_GAP))?;
        busy.push(previous);
    }
    let busy_wall = busy_started.elapsed();
    // A thread's CPU time is brought up to date when it leaves the core: read it once the CP
    // has parked after the series (its last spin window, counted, is in the note's figure).
    parked(Instant::now())?;
    let busy_cpu = busy_cpu_before
        .zip(cp.cpu_time())
        .map(|(before, after)| after.saturating_sub(before));

    let wakeup = floor / 2.0;
    let idle_samples: Vec<f64> = idle.iter().map(|a| a.one_way).collect();
    let busy_samples: Vec<f64> = busy.iter().map(|a| a.one_way).collect();
    figures.push(Figure {
        id: "doorbell_answer_idle",
        name: "doorbell → the CP starts a barrier packet, CP parked",
        unit: "µs",
        goal: "≤ 1.5× one wake-up (half of wakeup_floor)",
        note: format!(
            "one hop: the host's clock before Queue::barrier_and to the packet's start \
             timestamp (simulated GPU clock = CLOCK_MONOTONIC_RAW), the CP's thread asleep \
             and more than 2× its {} µs spin window past its last packet; median {:.2}× one \
             wake-up ({wakeup:.1} µs, half the floor's round trip); {}",
            SPIN_WINDOW.as_micros(),
            median(&idle_samples) / wakeup,
            account(&idle)
        ),
        samples: idle_samples,
    });
    figures.push(Figure {
        id: "doorbell_answer_busy",
        name: "doorbell → the CP starts a barrier packet, CP busy within 100 µs",
        unit: "µs",
        goal: "≤ 2 µs",
        note: format!(
            "as doorbell_answer_idle, the packet published {} µs after the host saw the one \
             before complete (inside the CP's spin window); median {:.2}× one wake-up; {}",
            BUSY_GAP.as_micros(),
            median(&busy_samples) / wakeup,
            account(&busy)
        ),
        samples: busy_samples,
    });
    if !burst_cpu.is_empty() {
        let busy_note = busy_cpu.map_or_else(String::new, |cpu| {
            format!(
                "; in the busy series (one packet every {:.1} µs) it used {:.1} µs of CPU per \
                 packet, the series' last spin window included",
                busy_wall.as_secs_f64() * 1e6 / iterations as f64,
                cpu.as_secs_f64() * 1e6 / iterations as f64
            )
        });
        figures.push(Figure {
            id: "cp_spin_window_cpu",
            name: "the CP thread's CPU time per burst of one packet (spin window included)",
            unit: "µs",
            goal: "report (the window is 100 µs: at most about that much spinning a burst)",
            note: format!(
                "CPU time (/proc/self/task/<tid>/schedstat) of the queue's CP thread from \
                 parked, through one barrier packet and its {} µs spin window, to parked \
                 again{busy_note}; idle, it parks and uses none",
                SPIN_WINDOW.as_micros()
            ),
            samples: burst_cpu,
        });
    }
    Ok(())
}

/// Where a series' time went: the round trip, and the run-queue waits of both threads.
fn account(answers: &[Answer]) -> String {
    let of = |pick: &dyn Fn(&Answer) -> Option<f64>| {
        let values: Vec<f64> = answers.iter().filter_map(pick).collect();
        if values.is_empty() {
            "(not reported)".to_owned()
        } else {
            format!("{:.1} µs", median(&values))
        }
    };
    format!(
        "round trip to the host seeing the completion (two hops) {}; waits for a core \
         (schedstat run delay) during an answer: the CP's thread {}, the host's {} (medians)",
        of(&|a| Some(a.round_trip)),
        of(&|a| a.cp_waited),
        of(&|a| a.host_waited)
    )
}
