//! The machine's floor for a simulated round trip: how fast one thread wakes a parked thread
//! and is woken back (a futex each way: `std::thread::park`/`unpark` are futex waits and wakes
//! on Linux). A simulated command processor that sleeps between packets cannot answer a
//! doorbell faster than one such wake-up, so the CP round trips are reported as multiples of
//! it: the same multiple means the same thing on a 2-core VM and on a large idle machine.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::Instant;

/// Round trips per sample.
const ROUND_TRIPS: u64 = 200;

/// `samples` figures of one futex ping-pong round trip between two threads, in µs (each the
/// mean of [`ROUND_TRIPS`] round trips).
pub fn wakeup_round_trips(samples: usize) -> Vec<f64> {
    // The ball: odd when the partner must answer, even when the main thread may go on.
    let ball = Arc::new(AtomicU64::new(0));
    let main = thread::current();
    let partner_ball = Arc::clone(&ball);
    let total = samples as u64 * ROUND_TRIPS;
    let partner = thread::spawn(move || {
        for round in 0..total {
            // Wait for serve `2 * round + 1`.
            while partner_ball.load(Ordering::Acquire) != 2 * round + 1 {
                thread::park();
            }
            partner_ball.store(2 * round + 2, Ordering::Release);
            main.unpark();
        }
    });
    let mut figures = Vec::with_capacity(samples);
    let mut round = 0u64;
    for _ in 0..samples {
        let started = Instant::now();
        for _ in 0..ROUND_TRIPS {
            ball.store(2 * round + 1, Ordering::Release);
            partner.thread().unpark();
            while ball.load(Ordering::Acquire) != 2 * round + 2 {
                thread::park();
            }
            round += 1;
        }
        figures.push(started.elapsed().as_secs_f64() * 1e6 / ROUND_TRIPS as f64);
    }
    // The partner has answered every serve: it ends by itself.
    let _ = partner.join();
    figures
}
