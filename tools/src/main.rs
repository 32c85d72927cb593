//! The `aqueduct` command-line tool.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod info;
mod inspect;

/// aqueduct: a pure-Rust userspace driver for AMD GPUs.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show the backend, the KFD interface version and the GPUs.
    Info,
    /// Show the code objects, kernels, variables and functions in a code object, an offload
    /// bundle or a host binary with a `.hip_fatbin` section.
    Inspect {
        /// The file to read.
        file: std::path::PathBuf,
        /// Print JSON (schema in README.md).
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info => info::run(),
        Command::Inspect { file, json } => inspect::run(&file, json),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("aqueduct: {err}");
            ExitCode::FAILURE
        }
    }
}
