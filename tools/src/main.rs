//! The `aqueduct` command-line tool.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod info;

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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info => info::run(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("aqueduct: {err}");
            ExitCode::FAILURE
        }
    }
}
