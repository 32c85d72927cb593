//! fork(): a child that drops the last handle it inherited of an executable runs neither the
//! teardown callback nor the fini kernels (the load is the parent's); the parent's own last
//! drop runs each once. Its own binary, so no other test thread is forked mid-operation.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use aqueduct::{LoadOptions, MemoryLocation};
use support::{code_object, device, gpu};
use test_support::fork::assert_child_passes;

#[test]
fn a_fork_child_dropping_an_inherited_executable_runs_no_teardown_and_no_fini() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let teardowns = Arc::new(AtomicUsize::new(0));
    let options = {
        let teardowns = Arc::clone(&teardowns);
        LoadOptions::new().on_teardown(move |_| {
            teardowns.fetch_add(1, Ordering::SeqCst);
        })
    };
    let executable = device
        .load_with(&gpu, &code_object("gfx90a", "init_fini.co5"), &options)
        .unwrap();
    let counter = device.alloc(&gpu, MemoryLocation::HostFine, 4).unwrap();
    counter.fill(0).unwrap();
    executable
        .write_variable("fini_counter", 0, &counter.gpu_address().to_le_bytes())
        .unwrap();
    let in_child = Arc::clone(&teardowns);
    // The closure owns the only handle: the child drops it in the check, the parent when the
    // closure goes after the child has finished.
    assert_child_passes(Duration::from_secs(30), move || {
        drop(executable);
        match in_child.load(Ordering::SeqCst) {
            0 => Ok(()),
            n => Err(format!(
                "the child ran the parent's teardown callback {n} times"
            )),
        }
    });
    assert_eq!(teardowns.load(Ordering::SeqCst), 1);
    assert_eq!(
        counter.to_vec::<u32>().unwrap(),
        [1],
        "fini once, in the parent"
    );
}
