//! The `aqueduct` command-line tool.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod bench;
mod exec;
mod flags;
mod info;
mod inspect;
mod run;

/// aqueduct: a pure-Rust userspace driver for AMD GPUs.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show the backend, the KFD interface version and every agent (CPUs and GPUs).
    ///
    /// Example: AQUEDUCT_SIM_MACHINE=mi300x aqueduct info --json
    #[command(verbatim_doc_comment)]
    Info {
        /// Print JSON (schema 1: see README.md).
        #[arg(long)]
        json: bool,
    },
    /// Show the code objects, kernels, variables and functions in a code object, an offload
    /// bundle or a host binary with a `.hip_fatbin` section.
    Inspect {
        /// The file to read.
        file: std::path::PathBuf,
        /// Print JSON (schema in README.md).
        #[arg(long)]
        json: bool,
    },
    /// Measure whole paths on the current device: dispatch → completion (spinning and
    /// waiting), packets per second, loading an executable, a kernel's GPU time, VALU
    /// throughput, device open → close, signal updates. Medians and percentiles; progress on
    /// stderr.
    ///
    /// Example: aqueduct bench --iterations 200 --json
    #[command(verbatim_doc_comment)]
    Bench {
        /// Samples per path (at least 10).
        #[arg(long, default_value_t = 100)]
        iterations: usize,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Print markdown rows for the README's figure table (with the machine and the
        /// command); `scripts/figures.sh` runs this on a release build.
        #[arg(long, conflicts_with = "json")]
        markdown: bool,
        /// Also measure ROCr (libhsa-runtime64, loaded at run time) on the same paths (init,
        /// queue creation, dispatch round trip, shutdown, reinit) and print its figures beside
        /// aqueduct's. Each runtime runs in fresh child processes of this run. Where ROCr is
        /// not installed or sees no GPU, its columns say so and the run still succeeds. On
        /// the simulator, run under the LD_PRELOAD interposer so that both see the same GPU:
        /// AQUEDUCT_BACKEND=hw sim/preload/run-under.sh target/release/aqueduct bench --rocr
        #[arg(long, verbatim_doc_comment)]
        rocr: bool,
        /// With --rocr, also measure this HSA library (aqueduct's libhsa-runtime64.so.1, or
        /// the directory holding it, as scripts/hsa-runtime-dir prints) on ROCr's paths, in
        /// fresh children of the same run, and print it beside ROCr with the ratio to ROCr and
        /// issue 21's goals (init ≤ 0.5×, queue creation ≤ 0.1×, dispatch ≤ 1×, shutdown
        /// ≤ 0.5×). Its children must map that file and no ROCr or libhsakmt, else its
        /// column says what they mapped.
        #[arg(long, requires = "rocr", verbatim_doc_comment)]
        rocr_library: Option<String>,
        /// The library ROCr itself is loaded from with --rocr (a file name the dynamic loader
        /// searches, or a path).
        #[arg(long, requires = "rocr", default_value = bench::ROCR_LIBRARY)]
        rocr_from: String,
        /// With --rocr: measure only the comparison with ROCr, not aqueduct's own paths
        /// (what the soaks under load run).
        #[arg(long, requires = "rocr")]
        comparison_only: bool,
        /// Also measure HIP's launch paths (hipLaunchKernel host cost, launch +
        /// hipDeviceSynchronize, back-to-back launches, a 10-kernel chain, hipGraphLaunch of
        /// the chain captured from a stream) with a HIP program this run builds with hipcc,
        /// and print them beside aqueduct's (ids hip_*). Without hipcc or a GPU for HIP the
        /// run says why and goes on. On the simulator, run under the interposer:
        /// AQUEDUCT_BACKEND=hw sim/preload/run-under.sh target/release/aqueduct bench --hip
        #[arg(long, verbatim_doc_comment)]
        hip: bool,
    },
    /// One runtime's side of `bench --rocr`, in a fresh process: prints its samples as JSON.
    #[command(hide = true)]
    BenchChild {
        /// The runtime to measure.
        #[arg(long, value_enum)]
        runtime: bench::Runtime,
        /// Samples per path; 0 measures only the first init and its shutdown.
        #[arg(long)]
        iterations: usize,
        /// The HSA library to load: ROCr's, or the library measured in its place.
        #[arg(long, default_value = bench::ROCR_LIBRARY)]
        rocr_library: String,
    },
    /// Launch one kernel of a code object (or of the matching entry of a bundle) and wait.
    ///
    /// Example: aqueduct run tests/kernels/bin/gfx90a/vector_add.co5 vector_add --grid 1024
    /// --block 64 --arg buf=a.bin --arg buf=b.bin --arg buf:zero=4096 --arg u32=1024
    /// --out 2=c.bin
    #[command(verbatim_doc_comment)]
    Run(run::RunRequest),
    /// Run a GPU program (linked with LLVM libc's GPU start code) as LLVM's amdhsa-loader
    /// does: `_begin`, `_start` with the shape asked for, `_end`, host calls served; its
    /// stdout/stderr on ours, our environment as its envp, its exit code as ours
    /// (134: memory fault, illegal instruction or abort; 124: --timeout; 125: aqueduct failed).
    ///
    /// Example: aqueduct exec --threads 64 --blocks 2 --timeout 30
    /// tests/kernels/bin/programs/gfx90a/echo_args one two
    #[command(verbatim_doc_comment)]
    Exec(exec::ExecRequest),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let command = match cli.command {
        Command::Exec(request) => return exec::run(&request),
        other => other,
    };
    let result = match command {
        Command::Info { json: false } => info::run(),
        Command::Info { json: true } => info::run_json(),
        Command::Inspect { file, json } => inspect::run(&file, json),
        Command::Bench {
            iterations,
            json,
            markdown,
            rocr,
            rocr_library,
            rocr_from,
            comparison_only,
            hip,
        } => bench::run(
            iterations,
            match (json, markdown) {
                (true, _) => bench::Format::Json,
                (_, true) => bench::Format::Markdown,
                _ => bench::Format::Table,
            },
            rocr.then(|| bench::Against {
                rocr: &rocr_from,
                library: rocr_library.as_deref(),
            }),
            if comparison_only {
                bench::Scope::Comparison
            } else {
                bench::Scope::Every
            },
            hip,
        ),
        Command::BenchChild {
            runtime,
            iterations,
            rocr_library,
        } => {
            bench::child(runtime, iterations, &rocr_library);
            Ok(())
        }
        Command::Run(request) => run::run(&request),
        Command::Exec(_) => unreachable!("handled above"),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("aqueduct: {err}");
            ExitCode::FAILURE
        }
    }
}
