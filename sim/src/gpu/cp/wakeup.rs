//! Doorbell wake-up: the state the kernel-driver model changes from outside a processor
//! (doorbell values, UPDATE_QUEUE, DESTROY_QUEUE) and the parking that keeps an idle or waiting
//! processor off the CPU.
//!
//! A processor takes a [`Ticket`] before it looks at queue memory and parks with it; any event
//! that happened since (a doorbell, an update, a stop, a nudge) makes the park return at once,
//! so a doorbell rung between "the ring looked empty" and "park" is never lost.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use crate::gpu::queue::ProcessorProgress;

/// Where the ring is and whether the queue may run (CREATE_QUEUE, then UPDATE_QUEUE).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct QueueConfig {
    /// GPU address of the ring.
    pub(crate) ring_va: u64,
    /// Ring size in bytes.
    pub(crate) ring_bytes: u64,
    /// `queue_percentage`; 0 suspends the queue.
    pub(crate) percentage: u32,
    /// `queue_priority` (recorded; the model runs every queue on its own thread).
    pub(crate) priority: u32,
}

impl QueueConfig {
    /// Whether UPDATE_QUEUE suspended the queue. Bits 15:8 of the percentage select an XCC for
    /// PM4 queues on multi-XCC parts (kfd.md §5.2); only the low byte is the percentage.
    pub(crate) fn suspended(&self) -> bool {
        self.percentage.trailing_zeros() >= 8
    }
}

/// While the processor is parked: the ticket it parked with, the looks begun when the park
/// began, and whether only an event can end it (no timeout).
type Parked = Option<(Ticket, u64, bool)>;

/// What `Control::sleeping` holds: the processor is awake (running, or spinning after work), so
/// an event needs only to be counted.
const AWAKE: u8 = 0;
/// Parked (or about to park) until any event: a doorbell, an update, a stop, a nudge.
const ASLEEP_UNTIL_ANY_EVENT: u8 = 1;
/// Parked (or about to park) polling memory with a timeout (a barrier's condition): a doorbell
/// does not change what it waits for, so only the other events wake it early. On hardware a
/// doorbell only moves the write pointer of a CP that is busy waiting on a barrier.
const ASLEEP_POLLING_MEMORY: u8 = 2;

/// No CPU known (`rung_on_cpu` before the first doorbell).
const NO_CPU: u32 = u32::MAX;

/// The CPU the calling thread runs on ([`NO_CPU`] if the kernel does not say). Cheap: glibc
/// reads it from the thread's rseq area or the vDSO.
fn current_cpu() -> u32 {
    // SAFETY: sched_getcpu has no preconditions; it returns -1 on error.
    u32::try_from(unsafe { libc::sched_getcpu() }).unwrap_or(NO_CPU)
}

/// Where [`Control::park`] has got to, for tests that force an interleaving between its steps
/// and an event from another thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ParkStep {
    /// The park lock is held; the sleep is not yet announced.
    BeforeAnnounce,
    /// The sleep is announced; the last look at `events` has not happened.
    Announced,
}

/// The events a processor last saw; parking with a stale ticket returns immediately.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ticket(u64);

/// Shared between a queue's processor thread, its [`RunningQueue`](crate::gpu::queue::RunningQueue)
/// handle and the engine (which nudges processors waiting on memory).
///
/// The hot path is lock-free: a doorbell is two atomic read-modify-writes, a store and a load,
/// and it takes the lock and makes the futex system call only when the processor is parked
/// and the doorbell is what it waits for (an eventcount). The processor announces that it is
/// about to sleep (`sleeping`, sequentially consistent) before its last look at `events`, and an
/// event bumps `events` (sequentially consistent) before it looks at `sleeping`, so at least one
/// of the two sees the other: either the processor sees the new event and does not sleep, or the
/// event sees the sleeper and wakes it under the lock it sleeps with, which it cannot miss.
/// After work the processor spins for a while ([`Control::spin`]) before it parks, awake, so
/// that a producer launching back to back pays no wake-up.
#[derive(Debug)]
pub(crate) struct Control {
    /// Counts every event that may let a parked processor make progress.
    events: AtomicU64,
    /// The highest doorbell value stored so far (a doorbell holds the index of the last packet
    /// made ready); meaningful once `rung` is set.
    doorbell: AtomicU64,
    /// Whether a doorbell has been rung at all.
    rung: AtomicBool,
    /// The CPU the last doorbell was rung from ([`NO_CPU`] before any, or where the kernel
    /// does not say): a spin on that CPU only keeps the producer off it.
    rung_on_cpu: AtomicU32,
    /// Where the ring is (changed by UPDATE_QUEUE only, so the lock is uncontended).
    config: Mutex<QueueConfig>,
    /// Looks begun ([`Control::observe`] calls).
    looks: AtomicU64,
    /// [`AWAKE`], or how the processor is parked or about to park: an event it waits for
    /// must then wake it.
    sleeping: AtomicU8,
    /// Wake-ups an event had to make (the lock and the futex call), for tests.
    wakeups: AtomicU64,
    /// What the processor parked with; the lock `wake` sleeps with.
    parked: Mutex<Parked>,
    wake: Condvar,
    /// Set by DESTROY_QUEUE; the shader core polls it to abandon a running dispatch.
    abort: AtomicBool,
    /// Whether the processor is parked waiting for memory to change (a barrier dependency, a
    /// barrier value, a halted queue's `queue_inactive_signal`), which other processors'
    /// signal updates may satisfy.
    polling_memory: AtomicBool,
    /// Processors of the engine parked polling memory (this one counts itself while it is).
    pollers: Arc<AtomicUsize>,
}

impl Control {
    /// Control for a queue created with `config`, on its own (tests).
    #[cfg(test)]
    pub(crate) fn new(config: QueueConfig) -> Self {
        Self::counted(config, Arc::default())
    }

    /// Control for a queue created with `config`, counting itself in `pollers` while it polls
    /// memory.
    fn counted(config: QueueConfig, pollers: Arc<AtomicUsize>) -> Self {
        Self {
            events: AtomicU64::new(0),
            doorbell: AtomicU64::new(0),
            rung: AtomicBool::new(false),
            rung_on_cpu: AtomicU32::new(NO_CPU),
            config: Mutex::new(config),
            looks: AtomicU64::new(0),
            sleeping: AtomicU8::new(AWAKE),
            wakeups: AtomicU64::new(0),
            parked: Mutex::new(None),
            wake: Condvar::new(),
            abort: AtomicBool::new(false),
            polling_memory: AtomicBool::new(false),
            pollers,
        }
    }

    fn parked(&self) -> MutexGuard<'_, Parked> {
        // A panic while holding this lock cannot leave the value inconsistent (every update
        // is a plain store), so a poisoned lock is still usable.
        self.parked.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn config(&self) -> QueueConfig {
        *self.config.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Count an event, and wake the processor if it is parked waiting for it (a doorbell
    /// wakes only a processor parked until any event).
    fn signal(&self, doorbell: bool) {
        self.events.fetch_add(1, Ordering::SeqCst);
        let sleeping = self.sleeping.load(Ordering::SeqCst);
        if sleeping == ASLEEP_UNTIL_ANY_EVENT || (sleeping == ASLEEP_POLLING_MEMORY && !doorbell) {
            // Taking the lock waits until the processor is inside `Condvar::wait` (or has
            // given up parking), so the notification cannot fall between its check and its
            // sleep.
            drop(self.parked());
            self.wake.notify_all();
            self.wakeups.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The driver stored `value` to the queue's doorbell.
    pub(crate) fn ring_doorbell(&self, value: u64) {
        // Backward doorbell values (a slow producer ringing after a faster one) do not move
        // the write index back; they still count as an event.
        self.doorbell.fetch_max(value, Ordering::AcqRel);
        self.rung_on_cpu.store(current_cpu(), Ordering::Relaxed);
        self.rung.store(true, Ordering::Release);
        self.signal(true);
    }

    /// UPDATE_QUEUE.
    pub(crate) fn update(&self, config: QueueConfig) {
        *self.config.lock().unwrap_or_else(PoisonError::into_inner) = config;
        self.signal(false);
    }

    /// DESTROY_QUEUE: stop the processor and abort a running dispatch.
    pub(crate) fn stop(&self) {
        self.abort.store(true, Ordering::SeqCst);
        self.signal(false);
    }

    /// Wake the processor if it is waiting for memory another processor may have changed.
    pub(crate) fn nudge_if_polling(&self) {
        if self.polling_memory.load(Ordering::Acquire) {
            self.signal(false);
        }
    }

    /// Wake-ups events have had to make so far (each a lock and a futex call on the thread
    /// that caused the event).
    #[cfg(test)]
    fn wakeups(&self) -> u64 {
        self.wakeups.load(Ordering::Relaxed)
    }

    /// The abort flag handed to the shader core.
    pub(crate) fn abort_flag(&self) -> &AtomicBool {
        &self.abort
    }

    /// Whether the queue is being destroyed.
    pub(crate) fn stopped(&self) -> bool {
        self.abort.load(Ordering::Acquire)
    }

    /// A ticket for the events seen so far, with the highest doorbell value and the current
    /// configuration.
    pub(crate) fn observe(&self) -> (Ticket, Option<u64>, QueueConfig) {
        self.looks.fetch_add(1, Ordering::Relaxed);
        // Every event counted in the ticket made its doorbell value or configuration visible
        // before it counted itself (a SeqCst read-modify-write releases).
        let ticket = Ticket(self.events.load(Ordering::SeqCst));
        let doorbell = self
            .rung
            .load(Ordering::Acquire)
            .then(|| self.doorbell.load(Ordering::Acquire));
        (ticket, doorbell, self.config())
    }

    /// Whether an event newer than `ticket` has happened (or the queue is stopping).
    fn stale(&self, ticket: Ticket) -> bool {
        self.stopped() || self.events.load(Ordering::SeqCst) != ticket.0
    }

    /// Looks begun, and whether the processor sleeps now (for tests, through
    /// [`RunningQueue::progress`](crate::gpu::queue::RunningQueue::progress)).
    pub(crate) fn progress(&self) -> ProcessorProgress {
        let parked = *self.parked();
        // A park whose ticket is stale is about to end: the processor no longer sleeps.
        let parked = parked.filter(|(ticket, ..)| !self.stale(*ticket));
        ProcessorProgress {
            looks: self.looks.load(Ordering::Relaxed),
            asleep_after_look: parked.map(|(_, looks, _)| looks),
            asleep_until_event: parked.is_some_and(|(.., until_event)| until_event),
        }
    }

    /// Stay awake, spinning, until an event newer than `ticket` happens (true) or `until`
    /// passes (false). While it spins the processor is not parked, so events (doorbells above
    /// all) cost whoever causes them no wake-up; the price is the CPU it burns, which the
    /// caller bounds.
    ///
    /// The spin keeps its core: it does not yield between rounds. A yield looks polite, but on
    /// an EEVDF scheduler (Linux 6.6 and later) each `sched_yield` of a thread that has
    /// company on its core pushes its deadline a whole slice (about a millisecond) later, so a
    /// processor that yielded through its window waited milliseconds for a core when the
    /// doorbell came, and again when it was next woken (`aqueduct bench`'s
    /// `doorbell_answer_*` on a loaded 2-core machine: 2–4 ms, nearly all of it run-queue
    /// wait). Holding the core costs a producer that shares it at most the window (the caller
    /// bounds it to `SPIN_WINDOW`), not a slice.
    ///
    /// Nor does it spin on the CPU the last doorbell came from: there the producer cannot run
    /// (so cannot ring) until the spin ends, and the spin only delays it. It returns at once
    /// (false: park) instead, and the producer's next doorbell wakes it.
    pub(crate) fn spin(&self, ticket: Ticket, until: Instant) -> bool {
        /// Looks at `events` between two reads of the clock.
        const LOOKS_PER_ROUND: u32 = 16;
        loop {
            let producer = self.rung_on_cpu.load(Ordering::Relaxed);
            if producer != NO_CPU && producer == current_cpu() {
                return self.stale(ticket);
            }
            for _ in 0..LOOKS_PER_ROUND {
                if self.stale(ticket) {
                    return true;
                }
                std::hint::spin_loop();
            }
            if Instant::now() >= until {
                return self.stale(ticket);
            }
        }
    }

    /// Park until an event newer than `ticket` happens or `timeout` passes (no timeout: only
    /// an event ends the park). Returns at once if the queue is stopping.
    pub(crate) fn park(&self, ticket: Ticket, timeout: Option<Duration>) {
        self.park_with(ticket, timeout, ASLEEP_UNTIL_ANY_EVENT, &mut |_| {});
    }

    /// Park while polling memory that no doorbell changes (a barrier's condition): until an
    /// event other than a doorbell (an update, a stop, another processor's signal update)
    /// happens after `ticket`, or `timeout` passes. Doorbells rung meanwhile are not lost:
    /// they count, and the processor sees them at its next look.
    pub(crate) fn park_polling_memory(&self, ticket: Ticket, timeout: Duration) {
        self.park_with(ticket, Some(timeout), ASLEEP_POLLING_MEMORY, &mut |_| {});
    }

    /// [`Control::park`] as `asleep` says, calling `step` at each step of the protocol (tests
    /// run the other side of a race there).
    fn park_with(
        &self,
        ticket: Ticket,
        timeout: Option<Duration>,
        asleep: u8,
        step: &mut dyn FnMut(ParkStep),
    ) {
        if self.stale(ticket) {
            return;
        }
        let mut parked = self.parked();
        *parked = Some((
            ticket,
            self.looks.load(Ordering::Relaxed),
            timeout.is_none(),
        ));
        let polling = timeout.is_some();
        if polling {
            self.pollers.fetch_add(1, Ordering::SeqCst);
            self.polling_memory.store(true, Ordering::SeqCst);
        }
        step(ParkStep::BeforeAnnounce);
        // Announce the sleep before the last look at `events` (see the type's documentation).
        self.sleeping.store(asleep, Ordering::SeqCst);
        step(ParkStep::Announced);
        let still_waiting = |_: &mut Parked| !self.stale(ticket);
        let mut parked = match timeout {
            Some(timeout) => {
                self.wake
                    .wait_timeout_while(parked, timeout, still_waiting)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0
            }
            None => self
                .wake
                .wait_while(parked, still_waiting)
                .unwrap_or_else(PoisonError::into_inner),
        };
        self.sleeping.store(AWAKE, Ordering::SeqCst);
        *parked = None;
        drop(parked);
        if polling {
            self.polling_memory.store(false, Ordering::Release);
            self.pollers.fetch_sub(1, Ordering::Release);
        }
    }
}

/// The processors of one engine. A processor that updates a signal nudges the others that
/// are polling memory, so a barrier waiting on another queue's completion signal resumes at
/// once instead of at its next poll. This is a latency shortcut only: waiters poll anyway
/// (host stores, and kernels' stores, nudge nobody).
#[derive(Debug, Default)]
pub(crate) struct SignalWatchers {
    controls: Mutex<Vec<Weak<Control>>>,
    /// How many of them are parked polling memory: with none, a completion nudges nobody
    /// without taking the lock.
    pollers: Arc<AtomicUsize>,
}

impl SignalWatchers {
    fn lock(&self) -> MutexGuard<'_, Vec<Weak<Control>>> {
        // Pushes and retains cannot leave the list inconsistent.
        self.controls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Control for a new processor of this engine (and forget the ones whose queues are
    /// gone).
    pub(crate) fn control(&self, config: QueueConfig) -> Arc<Control> {
        let control = Arc::new(Control::counted(config, self.pollers.clone()));
        let mut controls = self.lock();
        controls.retain(|c| c.strong_count() > 0);
        controls.push(Arc::downgrade(&control));
        control
    }

    /// Nudge every processor but `me` that is polling memory.
    pub(crate) fn nudge_others(&self, me: &Arc<Control>) {
        // A processor that counts itself just after this load is not nudged: it re-polls at
        // the end of its backoff step, as it does for updates that nudge nobody (the flag
        // this replaces had the same window).
        if self.pollers.load(Ordering::SeqCst) == 0 {
            return;
        }
        let controls = self.lock();
        for control in controls.iter().filter_map(Weak::upgrade) {
            if !Arc::ptr_eq(&control, me) {
                control.nudge_if_polling();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use test_support::watchdog::{DEFAULT_DEADLINE, within};

    fn config() -> QueueConfig {
        QueueConfig {
            ring_va: 0x1000,
            ring_bytes: 4096,
            percentage: 100,
            priority: 7,
        }
    }

    /// Park `control` with `park` on another thread and return once it is asleep: the ticket
    /// it parked with and its thread.
    fn asleep_on_another_thread(
        control: &Arc<Control>,
        park: impl FnOnce(&Control, Ticket) + Send + 'static,
    ) -> (Ticket, std::thread::JoinHandle<()>) {
        let (ticket, ..) = control.observe();
        let thread = {
            let control = control.clone();
            std::thread::spawn(move || park(&control, ticket))
        };
        assert!(test_support::wait::until(Duration::from_secs(30), || {
            control.progress().asleep_after_look == Some(1)
        }));
        (ticket, thread)
    }

    #[test]
    fn doorbells_keep_the_highest_value() {
        let control = Control::new(config());
        assert_eq!(control.observe().1, None);
        control.ring_doorbell(5);
        control.ring_doorbell(3);
        assert_eq!(control.observe().1, Some(5));
    }

    // The next three can fail only by hanging (a lost wake-up): the watchdog makes that a
    // failure.

    #[test]
    fn an_event_after_the_ticket_ends_the_park_at_once() {
        within(DEFAULT_DEADLINE, || {
            let control = Control::new(config());
            let (ticket, ..) = control.observe();
            control.ring_doorbell(0);
            control.park(ticket, None);
        });
    }

    #[test]
    fn a_doorbell_from_another_thread_wakes_a_parked_processor() {
        within(DEFAULT_DEADLINE, || {
            let control = Arc::new(Control::new(config()));
            let (ticket, ..) = control.observe();
            let ringer = {
                let control = control.clone();
                std::thread::spawn(move || control.ring_doorbell(9))
            };
            control.park(ticket, None);
            ringer.join().unwrap();
            assert_eq!(control.observe().1, Some(9));
        });
    }

    #[test]
    fn stop_sets_abort_and_wakes() {
        within(DEFAULT_DEADLINE, || {
            let control = Arc::new(Control::new(config()));
            let (ticket, ..) = control.observe();
            let stopper = {
                let control = control.clone();
                std::thread::spawn(move || control.stop())
            };
            control.park(ticket, None);
            stopper.join().unwrap();
            assert!(control.stopped());
            assert!(control.abort_flag().load(Ordering::Relaxed));
        });
    }

    #[test]
    fn progress_counts_looks_and_says_when_the_processor_sleeps() {
        let control = Arc::new(Control::new(config()));
        assert_eq!(control.progress(), ProcessorProgress::default());
        let (ticket, sleeper) = asleep_on_another_thread(&control, |c, t| c.park(t, None));
        assert!(control.progress().asleep_until_event);
        control.ring_doorbell(1);
        // Woken (its ticket is stale) even before its thread runs again.
        assert_eq!(control.progress().asleep_after_look, None);
        sleeper.join().unwrap();
        assert_eq!(
            control.progress(),
            ProcessorProgress {
                looks: 1,
                asleep_after_look: None,
                asleep_until_event: false,
            }
        );
        // A stale ticket does not sleep, so it does not say so.
        control.park(ticket, None);
        assert_eq!(control.progress().asleep_after_look, None);
    }

    // The wake-up protocol's races, each interleaving forced step by step (the other side of
    // the race runs at a named step of the park). They can fail by hanging (a lost wake-up):
    // the watchdog makes that a failure.

    #[test]
    fn a_doorbell_before_the_sleep_is_announced_is_seen_by_the_last_look() {
        within(DEFAULT_DEADLINE, || {
            let control = Arc::new(Control::new(config()));
            let (ticket, ..) = control.observe();
            let mut step = |step: ParkStep| {
                if step == ParkStep::BeforeAnnounce {
                    // The whole doorbell, on another thread, while the processor holds the
                    // park lock but has not announced its sleep: it sees an awake processor
                    // and only counts itself.
                    let ringer = control.clone();
                    std::thread::spawn(move || ringer.ring_doorbell(4))
                        .join()
                        .unwrap();
                }
            };
            control.park_with(ticket, None, ASLEEP_UNTIL_ANY_EVENT, &mut step);
            assert_eq!(control.wakeups(), 0, "an awake processor needs no wake-up");
            assert_eq!(control.observe().1, Some(4));
        });
    }

    #[test]
    fn a_doorbell_between_the_announcement_and_the_last_look_is_not_lost() {
        within(DEFAULT_DEADLINE, || {
            let control = Arc::new(Control::new(config()));
            let (ticket, ..) = control.observe();
            let mut ringer = None;
            let mut step = |step: ParkStep| {
                if step == ParkStep::Announced {
                    // The doorbell counts itself after the announcement and before the last
                    // look (then it sees the sleeper and waits for the park lock, which the
                    // processor holds until it is inside the wait or has given up).
                    let other = control.clone();
                    ringer = Some(std::thread::spawn(move || other.ring_doorbell(6)));
                    assert!(test_support::wait::until(Duration::from_secs(30), || {
                        control.events.load(Ordering::SeqCst) != ticket.0
                    }));
                }
            };
            control.park_with(ticket, None, ASLEEP_UNTIL_ANY_EVENT, &mut step);
            ringer.expect("the ringer ran").join().unwrap();
            assert_eq!(control.observe().1, Some(6));
        });
    }

    #[test]
    fn a_doorbell_while_the_processor_spins_ends_the_spin_without_a_wakeup() {
        within(DEFAULT_DEADLINE, || {
            let control = Arc::new(Control::new(config()));
            let (ticket, ..) = control.observe();
            let ringer = {
                let control = control.clone();
                std::thread::spawn(move || control.ring_doorbell(2))
            };
            // Far longer than the watchdog: only the doorbell ends it.
            assert!(control.spin(ticket, Instant::now() + Duration::from_secs(3600)));
            ringer.join().unwrap();
            assert_eq!(control.wakeups(), 0);
            // A spin whose window has passed says so at once.
            let (ticket, ..) = control.observe();
            assert!(!control.spin(ticket, Instant::now()));
        });
    }

    #[test]
    fn a_processor_does_not_spin_on_the_cpu_its_producer_rang_from() {
        // It can fail only by hanging (a spin of an hour): the watchdog makes that a failure.
        within(DEFAULT_DEADLINE, || {
            // SAFETY: sched_getcpu has no preconditions.
            let cpu = usize::try_from(unsafe { libc::sched_getcpu() }).unwrap();
            pin_to(cpu);
            let control = Control::new(config());
            // The producer rings from this CPU, then the processor (this thread, on the same
            // CPU) would spin: it parks instead, since the producer could not run meanwhile.
            control.ring_doorbell(1);
            let (ticket, ..) = control.observe();
            assert!(!control.spin(ticket, Instant::now() + Duration::from_secs(3600)));
            // An event newer than the ticket still ends it with true.
            control.ring_doorbell(2);
            assert!(control.spin(ticket, Instant::now() + Duration::from_secs(3600)));
        });
    }

    /// Pin the calling thread to CPU `cpu`.
    fn pin_to(cpu: usize) {
        // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET writes inside it, and
        // sched_setaffinity reads `size_of::<cpu_set_t>()` bytes of it for this thread (0).
        let pinned = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw const set)
        };
        assert_eq!(pinned, 0, "sched_setaffinity to CPU {cpu}");
    }

    /// Times the calling thread has been given a CPU (`schedstat`'s third field, "timeslices
    /// run on this cpu"); `None` where the kernel does not report it.
    fn timeslices() -> Option<u64> {
        std::fs::read_to_string("/proc/thread-self/schedstat")
            .ok()?
            .split_whitespace()
            .nth(2)?
            .parse()
            .ok()
    }

    #[test]
    fn a_spinning_processor_keeps_its_core_beside_a_thread_that_wants_it() {
        // Not a speed test: it counts how often the spinning thread gives its core away. A
        // processor that yielded between rounds (as it once did) was switched out thousands of
        // times in this spin, once a round, each time pushing its scheduler deadline later;
        // holding the core it is switched out only at the scheduler's own preemptions.
        within(DEFAULT_DEADLINE, || {
            if timeslices().is_none_or(|n| n == 0) {
                test_support::hardware::skip(
                    "a_spinning_processor_keeps_its_core_beside_a_thread_that_wants_it",
                    "the kernel reports no /proc/thread-self/schedstat",
                );
                return;
            }
            // SAFETY: sched_getcpu has no preconditions.
            let cpu = usize::try_from(unsafe { libc::sched_getcpu() }).unwrap();
            pin_to(cpu);
            let done = Arc::new(AtomicBool::new(false));
            // A thread on the same core that gives it back at every chance: it runs whenever
            // the spinner lets it.
            let rival = {
                let done = done.clone();
                std::thread::spawn(move || {
                    pin_to(cpu);
                    while !done.load(Ordering::Relaxed) {
                        std::thread::yield_now();
                    }
                })
            };
            let control = Control::new(config());
            let (ticket, ..) = control.observe();
            let before = timeslices().unwrap();
            assert!(!control.spin(ticket, Instant::now() + Duration::from_millis(20)));
            let switched = timeslices().unwrap() - before;
            done.store(true, Ordering::Relaxed);
            rival.join().unwrap();
            assert!(
                switched < 100,
                "the spinning processor gave its core away {switched} times in 20 ms"
            );
        });
    }

    #[test]
    fn a_doorbell_does_not_wake_a_processor_polling_memory_but_an_update_does() {
        within(DEFAULT_DEADLINE, || {
            let control = Arc::new(Control::new(config()));
            // Far longer than the watchdog: only a wake-up ends it.
            let (_, poller) = asleep_on_another_thread(&control, |c, t| {
                c.park_polling_memory(t, Duration::from_secs(3600));
            });
            control.ring_doorbell(3);
            assert_eq!(control.wakeups(), 0, "a doorbell woke a barrier wait");
            control.update(config());
            assert_eq!(control.wakeups(), 1);
            poller.join().unwrap();
            // The doorbell was counted all the same.
            assert_eq!(control.observe().1, Some(3));
        });
    }

    #[test]
    fn a_doorbell_wakes_a_processor_parked_until_any_event() {
        within(DEFAULT_DEADLINE, || {
            let control = Arc::new(Control::new(config()));
            let (_, sleeper) = asleep_on_another_thread(&control, |c, t| c.park(t, None));
            control.ring_doorbell(1);
            assert_eq!(control.wakeups(), 1);
            sleeper.join().unwrap();
        });
    }

    #[test]
    fn percentage_zero_suspends_and_the_xcc_byte_is_ignored() {
        let mut c = config();
        assert!(!c.suspended());
        c.percentage = 0;
        assert!(c.suspended());
        c.percentage = 0x0100;
        assert!(c.suspended());
    }
}
