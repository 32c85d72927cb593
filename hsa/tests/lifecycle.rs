//! `hsa_init` / `hsa_shut_down` reference counted and safe from 16 threads at once; every call
//! after the last shut down returns `HSA_STATUS_ERROR_NOT_INITIALIZED` instead of crashing.
//! In-process (the built-in simulator); one test, since the runtime is process-wide.

use std::ffi::c_void;
use std::sync::Barrier;
use std::time::Duration;

use hsa_runtime64::Status;
use hsa_runtime64::api::agent::{hsa_agent_get_info, hsa_iterate_agents};
use hsa_runtime64::api::system::hsa_system_get_info;
use hsa_runtime64::runtime::{hsa_init, hsa_shut_down, reference_count};
use hsa_runtime64::status::hsa_status_string;

const THREADS: usize = 16;
const ROUNDS: usize = 20;

unsafe extern "C" fn count_agent(_agent: u64, data: *mut c_void) -> Status {
    // SAFETY: `data` is the `u32` counter the test passes.
    unsafe { *data.cast::<u32>() += 1 };
    Status::SUCCESS
}

fn agents() -> (Status, u32) {
    let mut count = 0u32;
    // SAFETY: the callback writes only the counter passed as data.
    let status = unsafe { hsa_iterate_agents(Some(count_agent), (&raw mut count).cast()) };
    (status, count)
}

#[test]
fn init_and_shut_down_are_counted_thread_safe_and_calls_after_the_last_fail_cleanly() {
    test_support::watchdog::within(Duration::from_secs(300), || {
        // Nothing works before the first init (except the status strings).
        assert_eq!(hsa_shut_down(), Status::NOT_INITIALIZED);
        assert_eq!(agents().0, Status::NOT_INITIALIZED);
        let mut text = std::ptr::null();
        // SAFETY: `text` is a valid out pointer.
        let status = unsafe { hsa_status_string(Status::NOT_INITIALIZED, &raw mut text) };
        assert_eq!(status, Status::SUCCESS);
        assert!(!text.is_null());

        // 16 threads, each initialising and shutting down again and again, with one
        // reference held throughout by the main thread in the first half.
        assert_eq!(hsa_init(), Status::SUCCESS);
        let start = Barrier::new(THREADS);
        std::thread::scope(|scope| {
            for _ in 0..THREADS {
                scope.spawn(|| {
                    start.wait();
                    for _ in 0..ROUNDS {
                        assert_eq!(hsa_init(), Status::SUCCESS);
                        let (status, count) = agents();
                        assert_eq!(status, Status::SUCCESS);
                        assert!(count >= 2, "{count} agents");
                        assert_eq!(hsa_shut_down(), Status::SUCCESS);
                    }
                });
            }
        });
        assert_eq!(reference_count(), 1);
        assert_eq!(hsa_shut_down(), Status::SUCCESS);
        assert_eq!(reference_count(), 0);

        // Now with nobody holding a reference: every round may open and close the device.
        std::thread::scope(|scope| {
            for _ in 0..THREADS {
                scope.spawn(|| {
                    for _ in 0..3 {
                        assert_eq!(hsa_init(), Status::SUCCESS);
                        assert_eq!(agents().0, Status::SUCCESS);
                        assert_eq!(hsa_shut_down(), Status::SUCCESS);
                    }
                });
            }
        });
        assert_eq!(reference_count(), 0);

        // After the last shut down: not initialised, never a crash, even with handles that
        // were valid before.
        assert_eq!(agents().0, Status::NOT_INITIALIZED);
        let mut major = 0u16;
        // SAFETY: `major` is a valid out pointer for a uint16_t.
        let status = unsafe { hsa_system_get_info(0, (&raw mut major).cast()) };
        assert_eq!(status, Status::NOT_INITIALIZED);
        let mut name = [0u8; 64];
        // SAFETY: `name` holds the 64 bytes HSA_AGENT_INFO_NAME writes.
        let status = unsafe { hsa_agent_get_info(1, 0, name.as_mut_ptr().cast()) };
        assert_eq!(status, Status::NOT_INITIALIZED);
        assert_eq!(hsa_shut_down(), Status::NOT_INITIALIZED);

        // And a fresh init works again.
        assert_eq!(hsa_init(), Status::SUCCESS);
        // SAFETY: as above.
        let status = unsafe { hsa_agent_get_info(1, 0, name.as_mut_ptr().cast()) };
        assert_eq!(status, Status::SUCCESS);
        assert_eq!(hsa_shut_down(), Status::SUCCESS);
    });
}
