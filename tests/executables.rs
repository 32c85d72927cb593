//! Executables through the safe API on the simulator: globals by name around a launch,
//! function symbols against llvm-readelf, preloaded-kernarg entry points, externals from an
//! earlier executable, init/fini kernels and setup/teardown callbacks exactly once per load
//! (16 threads sharing one load), unloading one executable leaving another working, and the
//! errors for a wrong target and an unresolved symbol.

mod support;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use aqueduct::code_object_source::CodeObjectSource;
use aqueduct::kernarg::{Arg, Geometry};
use aqueduct::{
    Buffer, Device, Error, ErrorKind, Executable, GpuAgent, Kernel, LoadOptions, MemoryLocation,
    QueueOptions,
};
use support::{code_object, device, gpu, kernel_path};
use test_support::watchdog;

const WAIT: Duration = Duration::from_secs(60);

/// Launch `kernel` once on a fresh queue and wait for it.
/// Launch `kernel` once on a queue of its own and wait for it.
fn launch(device: &Device, gpu: &GpuAgent, kernel: &Kernel, geometry: Geometry, args: &[Arg<'_>]) {
    let queue = device.create_queue(gpu, &QueueOptions::default()).unwrap();
    queue
        .launch(kernel, &geometry, args)
        .and_then(|launch| launch.wait(Some(WAIT)))
        .unwrap_or_else(|e| panic!("{}: {e}", kernel.name));
}

fn u32_buffer(device: &Device, gpu: &GpuAgent, len: usize) -> Buffer {
    let buffer = device
        .alloc(gpu, MemoryLocation::HostFine, 4 * len)
        .unwrap();
    buffer.fill(0xff).unwrap();
    buffer
}

fn read_u32s(executable: &Executable, name: &str, len: usize) -> Vec<u32> {
    let mut bytes = vec![0u8; 4 * len];
    executable.read_variable(name, 0, &mut bytes).unwrap();
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn write_u32s(executable: &Executable, name: &str, values: &[u32]) {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    executable.write_variable(name, 0, &bytes).unwrap();
}

#[test]
fn device_globals_are_read_and_written_by_name_around_a_launch() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let executable = device
        .load_code_object(&gpu, &code_object("gfx90a", "bss.co5"))
        .unwrap();
    let kernel = executable.kernel("bss.kd").unwrap();
    assert_eq!(kernel.name, "bss");
    let n = 64u32;
    assert_eq!(read_u32s(&executable, "bss_counters", 1024), vec![0; 1024]);
    let before: Vec<u32> = (0..n).map(|i| 1000 + 7 * i).collect();
    write_u32s(&executable, "bss_counters", &before);
    let out = u32_buffer(&device, &gpu, n as usize);
    launch(
        &device,
        &gpu,
        &kernel,
        Geometry::d1(n, 64),
        &[Arg::ptr(out.gpu_address()), Arg::u32(n)],
    );
    // The kernel saw what the host wrote...
    assert_eq!(out.to_vec::<u32>().unwrap(), before);
    // ...and the host sees what the kernel wrote.
    let after = read_u32s(&executable, "bss_counters", n as usize);
    let expected: Vec<u32> = (0..n).map(|i| 1000 + 7 * i + i + 1).collect();
    assert_eq!(after, expected);
    // Out of range and unknown names are errors, not panics.
    let err = executable
        .write_variable("bss_counters", 4093, &[0; 4])
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(executable.variable("no_such_global").is_err());
}

/// `(name, st_value)` of every `FUNC` in the golden `.symtab` that is not a kernel's entry
/// (a kernel has a `<name>.kd` object symbol).
fn golden_functions(readelf: &str) -> BTreeMap<String, u64> {
    let symtab = readelf
        .split("Symbol table '.symtab'")
        .nth(1)
        .expect(".symtab in the golden text");
    let rows: Vec<Vec<&str>> = symtab
        .lines()
        .skip(2)
        .take_while(|l| !l.trim().is_empty() && l.contains(':'))
        .map(|l| l.split_whitespace().collect())
        .filter(|cols: &Vec<&str>| cols.len() == 8)
        .collect();
    let kernels: Vec<String> = rows
        .iter()
        .filter_map(|c| c[7].strip_suffix(".kd").map(str::to_owned))
        .collect();
    rows.iter()
        .filter(|c| c[3] == "FUNC" && !kernels.iter().any(|k| k == c[7]))
        .map(|c| (c[7].to_owned(), u64::from_str_radix(c[1], 16).unwrap()))
        .collect()
}

#[test]
fn function_symbols_match_llvm_readelf() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    for (file, expected_count) in [
        ("device_call.co5", 3),
        ("device_call.co6", 4),
        ("indirect_call.co5", 4),
        ("indirect_call.co6", 5),
    ] {
        let golden_path: PathBuf = [
            env!("CARGO_MANIFEST_DIR"),
            "tests/loader-oracle/golden/gfx90a",
            &format!("{file}.readelf"),
        ]
        .iter()
        .collect();
        let golden = golden_functions(&std::fs::read_to_string(&golden_path).unwrap());
        assert_eq!(golden.len(), expected_count, "{file}: {golden:?}");
        let executable = device
            .load_code_object(&gpu, &code_object("gfx90a", file))
            .unwrap();
        let delta = executable.image().delta();
        let listed: BTreeMap<String, u64> = executable
            .functions()
            .unwrap()
            .into_iter()
            .map(|f| (f.name, f.address.wrapping_sub(delta)))
            .collect();
        assert_eq!(listed, golden, "{file}");
        let base = executable.image().base();
        for (name, vaddr) in &golden {
            let function = executable.function(name).unwrap();
            assert_eq!(function.address, base + vaddr, "{file} {name}");
        }
    }
    // dc_mix is exported, the static helpers are not.
    let executable = device
        .load_code_object(&gpu, &code_object("gfx90a", "device_call.co5"))
        .unwrap();
    assert!(executable.function("dc_mix").unwrap().exported);
    assert!(!executable.function("dc_window_sum").unwrap().exported);
}

#[test]
fn a_preloaded_kernarg_kernel_reports_both_entry_points_and_runs() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    for file in ["preload.co5", "preload.co6"] {
        let executable = device
            .load_file(&gpu, kernel_path("gfx90a", file), &LoadOptions::default())
            .unwrap();
        let kernel = executable.kernel("preload").unwrap();
        assert_eq!(
            kernel.preload_entry_address,
            Some(kernel.entry_address + 256),
            "{file}"
        );
        let n = 100u32;
        let out = u32_buffer(&device, &gpu, n as usize);
        launch(
            &device,
            &gpu,
            &kernel,
            Geometry::d1(n, 64),
            &[
                Arg::ptr(out.gpu_address()),
                Arg::u32(3),
                Arg::u32(17),
                Arg::u32(n),
            ],
        );
        let expected: Vec<u32> = (0..n).map(|i| 3 * i + 17).collect();
        assert_eq!(out.to_vec::<u32>().unwrap(), expected, "{file}");
        // An ordinary kernel has one entry point.
        let plain = device
            .load_code_object(&gpu, &code_object("gfx90a", "bss.co5"))
            .unwrap();
        assert_eq!(plain.kernel("bss").unwrap().preload_entry_address, None);
    }
}

/// `init_fini` with its `fini_counter` pointed at a fresh host counter.
fn init_fini(device: &Device, gpu: &GpuAgent, options: &LoadOptions) -> (Executable, Buffer) {
    let executable = device
        .load_with(gpu, &code_object("gfx90a", "init_fini.co5"), options)
        .unwrap();
    let counter = device.alloc(gpu, MemoryLocation::HostFine, 4).unwrap();
    counter.fill(0).unwrap();
    executable
        .write_variable("fini_counter", 0, &counter.gpu_address().to_le_bytes())
        .unwrap();
    (executable, counter)
}

fn counter_value(counter: &Buffer) -> u32 {
    counter.to_vec::<u32>().unwrap()[0]
}

#[test]
fn init_and_fini_kernels_run_exactly_once_per_load() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let names = {
        let (executable, _) = init_fini(&device, &gpu, &LoadOptions::default());
        executable.kernel_names().unwrap()
    };
    assert!(names.iter().any(|n| n == "amdgcn.device.init"), "{names:?}");
    assert!(names.iter().any(|n| n == "amdgcn.device.fini"), "{names:?}");
    for round in 0..2 {
        let (executable, counter) = init_fini(&device, &gpu, &LoadOptions::default());
        // The init kernel ran before the executable was handed out, once.
        assert_eq!(read_u32s(&executable, "init_runs", 1), [1], "round {round}");
        let out = u32_buffer(&device, &gpu, 2);
        let reader = executable.kernel("init_fini_read").unwrap();
        launch(
            &device,
            &gpu,
            &reader,
            Geometry::d1(1, 1),
            &[Arg::ptr(out.gpu_address())],
        );
        assert_eq!(out.to_vec::<u32>().unwrap(), [1, 11]);
        // A second handle (a clone, or the same bytes loaded again) is the same load.
        let again = device
            .load_code_object(&gpu, &code_object("gfx90a", "init_fini.co5"))
            .unwrap();
        assert!(again.same_load(&executable));
        // A kernel keeps its code loaded too: the load lives until the last of them goes.
        drop(reader);
        let clone = executable.clone();
        drop(executable);
        drop(again);
        assert_eq!(counter_value(&counter), 0, "fini ran while a handle lives");
        drop(clone);
        assert_eq!(
            counter_value(&counter),
            1,
            "round {round}: fini once at unload"
        );
    }
    // A private load is a load of its own: its own init run, its own fini.
    let (shared, shared_counter) = init_fini(&device, &gpu, &LoadOptions::default());
    let (private, private_counter) = init_fini(&device, &gpu, &LoadOptions::new().private());
    assert!(!private.same_load(&shared));
    assert_eq!(read_u32s(&private, "init_runs", 1), [1]);
    drop(private);
    assert_eq!(counter_value(&private_counter), 1);
    assert_eq!(counter_value(&shared_counter), 0);
    drop(shared);
    assert_eq!(counter_value(&shared_counter), 1);
}

#[test]
fn sixteen_threads_loading_at_once_share_one_load_with_one_setup_and_one_teardown() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let bytes = code_object("gfx90a", "init_fini.co5");
    let setups = Arc::new(AtomicUsize::new(0));
    let teardowns = Arc::new(AtomicUsize::new(0));
    let options = {
        let setups = Arc::clone(&setups);
        let teardowns = Arc::clone(&teardowns);
        LoadOptions::new()
            .on_setup(move |executable| {
                // The init kernel has run before setup.
                let mut runs = [0u8; 4];
                executable.read_variable("init_runs", 0, &mut runs)?;
                assert_eq!(u32::from_le_bytes(runs), 1);
                setups.fetch_add(1, Ordering::SeqCst);
                // Widen the window in which the other threads ask for the same load.
                std::thread::sleep(Duration::from_millis(20));
                Ok(())
            })
            .on_teardown(move |executable| {
                // The executable still works during teardown.
                assert!(executable.variable("init_runs").is_ok());
                teardowns.fetch_add(1, Ordering::SeqCst);
            })
    };
    let _watchdog = watchdog::arm(
        watchdog::HANG_DEADLINE,
        "sixteen threads loading at once (a Barrier, then the loads)",
    );
    let start = Barrier::new(16);
    let handles: Vec<Executable> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..16)
            .map(|_| {
                scope.spawn(|| {
                    start.wait();
                    device.load_with(&gpu, &bytes, &options).unwrap()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    assert_eq!(setups.load(Ordering::SeqCst), 1);
    assert_eq!(teardowns.load(Ordering::SeqCst), 0);
    assert!(handles.iter().all(|h| h.same_load(&handles[0])));
    let bases: Vec<u64> = handles.iter().map(|h| h.image().base()).collect();
    assert!(bases.iter().all(|b| *b == bases[0]));
    // One load: one init run.
    assert_eq!(read_u32s(&handles[0], "init_runs", 1), [1]);
    let counter = device.alloc(&gpu, MemoryLocation::HostFine, 4).unwrap();
    counter.fill(0).unwrap();
    handles[0]
        .write_variable("fini_counter", 0, &counter.gpu_address().to_le_bytes())
        .unwrap();
    // Drop the handles from 16 threads at once: one teardown, one fini.
    let _watchdog = watchdog::arm(
        watchdog::HANG_DEADLINE,
        "sixteen threads dropping their handles at once",
    );
    let drop_start = Barrier::new(16);
    std::thread::scope(|scope| {
        for handle in handles {
            let drop_start = &drop_start;
            scope.spawn(move || {
                drop_start.wait();
                drop(handle);
            });
        }
    });
    assert_eq!(setups.load(Ordering::SeqCst), 1);
    assert_eq!(teardowns.load(Ordering::SeqCst), 1);
    assert_eq!(counter_value(&counter), 1);
    // A new load after the last one went is a new load: setup again.
    let fresh = device.load_with(&gpu, &bytes, &options).unwrap();
    assert_eq!(setups.load(Ordering::SeqCst), 2);
    assert_eq!(read_u32s(&fresh, "init_runs", 1), [1]);
    drop(fresh);
    assert_eq!(teardowns.load(Ordering::SeqCst), 2);
}

#[test]
fn a_failed_setup_fails_the_load_without_teardown() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let teardowns = Arc::new(AtomicUsize::new(0));
    let options = {
        let teardowns = Arc::clone(&teardowns);
        LoadOptions::new()
            .on_setup(|_| Err(Error::InvalidArgument("setup refused".to_owned())))
            .on_teardown(move |_| {
                teardowns.fetch_add(1, Ordering::SeqCst);
            })
    };
    let err = device
        .load_with(&gpu, &code_object("gfx90a", "bss.co5"), &options)
        .unwrap_err();
    assert!(err.to_string().contains("setup refused"), "{err}");
    assert_eq!(teardowns.load(Ordering::SeqCst), 0);
    // The failed load left nothing behind: the next load is a fresh one.
    let executable = device
        .load_code_object(&gpu, &code_object("gfx90a", "bss.co5"))
        .unwrap();
    assert_eq!(read_u32s(&executable, "bss_counters", 4), [0; 4]);
}

#[test]
fn unloading_one_executable_leaves_the_other_working() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let first = device
        .load_code_object(&gpu, &code_object("gfx90a", "bss.co5"))
        .unwrap();
    let second = device
        .load_with(
            &gpu,
            &code_object("gfx90a", "bss.co5"),
            &LoadOptions::new().private(),
        )
        .unwrap();
    assert!(!first.same_load(&second));
    write_u32s(&first, "bss_counters", &[5, 5, 5, 5]);
    write_u32s(&second, "bss_counters", &[40, 41, 42, 43]);
    let kernel = second.kernel("bss").unwrap();
    let out = u32_buffer(&device, &gpu, 4);
    launch(
        &device,
        &gpu,
        &kernel,
        Geometry::d1(4, 4),
        &[Arg::ptr(out.gpu_address()), Arg::u32(4)],
    );
    drop(first);
    // The survivor's globals kept their values and its kernel still runs.
    assert_eq!(read_u32s(&second, "bss_counters", 4), [41, 43, 45, 47]);
    launch(
        &device,
        &gpu,
        &kernel,
        Geometry::d1(4, 4),
        &[Arg::ptr(out.gpu_address()), Arg::u32(4)],
    );
    assert_eq!(out.to_vec::<u32>().unwrap(), [41, 43, 45, 47]);
    assert_eq!(read_u32s(&second, "bss_counters", 4), [42, 45, 48, 51]);
}

#[test]
fn an_external_resolves_against_an_earlier_executable_only_when_asked() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let bytes = code_object("gfx90a", "extern_sym.co5");
    let err = device.load_code_object(&gpu, &bytes).unwrap_err();
    assert!(
        matches!(&err, Error::UnresolvedSymbol { name } if name == "aq_external_var"),
        "{err:?}"
    );
    assert!(err.to_string().contains("aq_external_var"), "{err}");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);

    let provider = device
        .load_code_object(&gpu, &code_object("gfx90a", "init_fini.co5"))
        .unwrap();
    // Loaded, but not linked with: still an error.
    assert!(matches!(
        device.load_code_object(&gpu, &bytes),
        Err(Error::UnresolvedSymbol { .. })
    ));
    let user = device
        .load_with(&gpu, &bytes, &LoadOptions::new().link_with(&[&provider]))
        .unwrap();
    write_u32s(&provider, "aq_external_var", &[70, 71, 72, 73]);
    let out = u32_buffer(&device, &gpu, 3);
    let kernel = user.kernel("extern_sym").unwrap();
    launch(
        &device,
        &gpu,
        &kernel,
        Geometry::d1(1, 1),
        &[Arg::ptr(out.gpu_address())],
    );
    assert_eq!(out.to_vec::<u32>().unwrap(), [72, 70, 2]);
    // The user keeps the provider loaded: dropping our handle does not unload it.
    drop(provider);
    launch(
        &device,
        &gpu,
        &kernel,
        Geometry::d1(1, 1),
        &[Arg::ptr(out.gpu_address())],
    );
    assert_eq!(out.to_vec::<u32>().unwrap(), [72, 70, 2]);
}

#[test]
fn a_wrong_target_is_an_error_naming_both_targets() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    assert!(gpu.target_id.to_string().starts_with("gfx90a"));
    let err = device
        .load_code_object(&gpu, &code_object("gfx942", "bss.co5"))
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("gfx942") && text.contains("gfx90a"), "{text}");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    // A bundle without an entry for the device names what it holds and the device.
    let bundle = kernel_path("fixtures", "vector_add.hipfb");
    let source = CodeObjectSource::open(&bundle).unwrap();
    assert!(source.is_mapped());
    let executable = device
        .load_source(&gpu, &source, &LoadOptions::default())
        .unwrap();
    assert!(executable.kernel("vector_add").is_ok());
    assert_eq!(executable.image().target().processor.name, "gfx90a");
}

#[test]
fn loads_from_mapped_files_bundles_and_host_binaries_pick_the_device_target() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let plain = device
        .load_file(
            &gpu,
            kernel_path("gfx90a", "vector_add.co5"),
            &LoadOptions::default(),
        )
        .unwrap();
    for fixture in [
        "vector_add.hipfb",
        "vector_add.ccob2.hipfb",
        "vector_add.ccob3.hipfb",
        "hip_fatbin_host.so",
        "hip_fatbin_host.o",
    ] {
        let executable = device
            .load_file(
                &gpu,
                kernel_path("fixtures", fixture),
                &LoadOptions::default(),
            )
            .unwrap_or_else(|e| panic!("{fixture}: {e}"));
        assert_eq!(executable.image().target().processor.name, "gfx90a");
        // The gfx90a entry is byte for byte gfx90a/vector_add.co5: the same load.
        assert!(executable.same_load(&plain), "{fixture}");
        let n = 100u32;
        let a = device
            .alloc(&gpu, MemoryLocation::HostFine, 4 * n as usize)
            .unwrap();
        let b = device
            .alloc(&gpu, MemoryLocation::HostFine, 4 * n as usize)
            .unwrap();
        let c = u32_buffer(&device, &gpu, n as usize);
        let xs: Vec<i32> = (0..n as i32).collect();
        let ys: Vec<i32> = (0..n as i32).map(|i| 1000 - 3 * i).collect();
        a.write(0, &xs).unwrap();
        b.write(0, &ys).unwrap();
        let kernel = executable.kernel("vector_add").unwrap();
        launch(
            &device,
            &gpu,
            &kernel,
            Geometry::d1(n, 64),
            &[
                Arg::ptr(a.gpu_address()),
                Arg::ptr(b.gpu_address()),
                Arg::ptr(c.gpu_address()),
                Arg::u32(n),
            ],
        );
        let sums: Vec<i32> = c.to_vec().unwrap();
        let expected: Vec<i32> = (0..n as i32).map(|i| 1000 - 2 * i).collect();
        assert_eq!(sums, expected, "{fixture}");
    }
    let missing = device
        .load_file(
            &gpu,
            kernel_path("gfx90a", "no_such.co5"),
            &LoadOptions::default(),
        )
        .unwrap_err();
    assert!(missing.to_string().contains("no_such.co5"), "{missing}");
}

#[test]
fn at_shutdown_fini_kernels_do_not_run_and_teardown_runs_once_after() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let teardowns = Arc::new(AtomicUsize::new(0));
    let seen_closed = Arc::new(AtomicUsize::new(0));
    let options = {
        let teardowns = Arc::clone(&teardowns);
        let seen_closed = Arc::clone(&seen_closed);
        LoadOptions::new().on_teardown(move |executable| {
            teardowns.fetch_add(1, Ordering::SeqCst);
            if matches!(executable.variable("init_runs"), Err(Error::Closed)) {
                seen_closed.fetch_add(1, Ordering::SeqCst);
            }
        })
    };
    let (executable, counter) = init_fini(&device, &gpu, &options);
    // (After the shutdown the counter's memory is gone too: what is checked is that nothing
    // ran early and that the teardown comes exactly once, seeing the executable closed.)
    assert_eq!(counter_value(&counter), 0);
    device.shutdown().unwrap();
    assert_eq!(teardowns.load(Ordering::SeqCst), 0);
    assert!(matches!(
        executable.kernel("init_fini_read"),
        Err(Error::Closed)
    ));
    drop(executable);
    assert_eq!(teardowns.load(Ordering::SeqCst), 1);
    assert_eq!(seen_closed.load(Ordering::SeqCst), 1);
}

/// A kernel keeps its code loaded: taking it from a temporary executable handle and launching
/// after the handle is gone runs the kernel (it used to free the code first: a memory fault).
#[test]
fn a_kernel_keeps_its_code_loaded_after_the_executable_handle_is_gone() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let kernel = device
        .load_code_object(&gpu, &code_object("gfx90a", "vector_add.co5"))
        .unwrap()
        .kernel("vector_add")
        .unwrap();
    let n = 256u32;
    let buffers: Vec<Buffer> = (0..3)
        .map(|_| u32_buffer(&device, &gpu, n as usize))
        .collect();
    buffers[0].write(0, &vec![5u32; n as usize]).unwrap();
    buffers[1].write(0, &vec![6u32; n as usize]).unwrap();
    let queue = device
        .create_queue(&gpu, &aqueduct::QueueOptions::default())
        .unwrap();
    let args: Vec<Arg<'_>> = buffers
        .iter()
        .map(|b| Arg::ptr(b.gpu_address()))
        .chain([Arg::u32(n)])
        .collect();
    queue
        .launch(&kernel, &Geometry::d1(n, 64), &args)
        .unwrap()
        .wait(Some(WAIT))
        .unwrap();
    assert_eq!(buffers[2].to_vec::<u32>().unwrap(), vec![11; n as usize]);
}
