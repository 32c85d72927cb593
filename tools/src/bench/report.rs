//! How `aqueduct bench` prints its figures: a table for people, JSON for scripts, or markdown
//! rows for the README's figure table (each row with the command and the machine).

use super::compare::{self, Comparison, LibrarySide};
use super::figures::{self, Outcome};
use super::host::Host;

/// One measured path.
pub struct Figure {
    /// A stable key for scripts (`dispatch_spin`, `valu_lane_ops`, ...).
    pub id: &'static str,
    /// What was measured, for people.
    pub name: &'static str,
    /// The unit of every sample.
    pub unit: &'static str,
    /// The goal the README's table sets for this path (issue 12), or "report".
    pub goal: &'static str,
    /// One value per run.
    pub samples: Vec<f64>,
    /// How it was measured.
    pub note: String,
}

impl Figure {
    /// The `p`-quantile (0 ≤ p ≤ 1) of the samples, nearest rank; 0 without samples.
    pub fn percentile(&self, p: f64) -> f64 {
        percentile(&self.samples, p)
    }

    /// The median of `samples` (nearest rank; 0 without samples).
    pub fn median_of(samples: &[f64]) -> f64 {
        percentile(samples, 0.5)
    }
}

/// The `p`-quantile (0 ≤ p ≤ 1) of `samples`, nearest rank; 0 without samples.
fn percentile(samples: &[f64], p: f64) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() - 1) as f64 * p.clamp(0.0, 1.0)).round() as usize;
    sorted[index]
}

/// The output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// An aligned table.
    Table,
    /// One JSON object (schema 1).
    Json,
    /// Markdown: the machine, the command, and one table row per figure.
    Markdown,
}

/// Where and how the figures were taken.
pub struct Run<'a> {
    /// The device's description.
    pub device: &'a str,
    /// Whether the device is the simulator.
    pub simulated: bool,
    /// The GPU's target id.
    pub target: &'a str,
    /// Samples asked for per path.
    pub iterations: usize,
    /// The host machine.
    pub host: &'a Host,
    /// aqueduct's and ROCr's figures for the same paths (`--rocr`).
    pub comparison: Option<&'a Comparison>,
    /// Whether only the comparison was measured (`--comparison-only`).
    pub comparison_only: bool,
    /// HIP's side (`--hip`).
    pub hip: HipStatus<'a>,
}

/// Whether HIP's side was asked for (`--hip`), and why it was not measured if it was not (its
/// figures, when measured, are among the others, ids `hip_…`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HipStatus<'a> {
    /// No `--hip`.
    NotAsked,
    /// Measured.
    Measured,
    /// Asked for but not measured: why.
    NotMeasured(&'a str),
}

impl Run<'_> {
    /// The command line that reproduces these figures.
    fn command(&self) -> String {
        let interposer = interposer_profile();
        let machine = std::env::var("AQUEDUCT_SIM_MACHINE")
            .ok()
            .filter(|_| self.simulated || interposer.is_some())
            .map_or_else(String::new, |m| format!("AQUEDUCT_SIM_MACHINE={m} "));
        let machine = match interposer {
            Some(profile) => format!(
                "{machine}LD_PRELOAD=target/{profile}/libamdgpu_sim_preload.so \
                 AQUEDUCT_BACKEND=hw "
            ),
            None => machine,
        };
        let hip = if self.hip == HipStatus::NotAsked {
            ""
        } else {
            " --hip"
        };
        let rocr = self.comparison.map_or_else(String::new, |c| {
            use std::fmt::Write as _;
            let mut flags = " --rocr".to_owned();
            if c.rocr_library != compare::ROCR_LIBRARY {
                let _ = write!(flags, " --rocr-from {}", c.rocr_library);
            }
            if self.comparison_only {
                flags.push_str(" --comparison-only");
            }
            if let Some(library) = &c.library {
                let _ = write!(flags, " --rocr-library {}", library.asked);
            }
            flags
        });
        format!(
            "{machine}aqueduct bench --iterations {}{hip}{rocr}",
            self.iterations
        )
    }

    fn build() -> &'static str {
        if cfg!(debug_assertions) {
            "debug build"
        } else {
            "release build"
        }
    }
}

/// Whether this process runs under the simulator's LD_PRELOAD interposer (then "/dev/kfd" is
/// the simulated GPU, reached through the real system-call path).
fn under_interposer() -> bool {
    interposer_profile().is_some()
}

/// The cargo profile directory (`debug`, `release`) of the preloaded interposer, if any.
fn interposer_profile() -> Option<String> {
    let preload = std::env::var("LD_PRELOAD").ok()?;
    let library = preload
        .split([':', ' '])
        .map(std::path::Path::new)
        .find(|path| {
            path.file_name()
                .is_some_and(|name| name == "libamdgpu_sim_preload.so")
        })?;
    let profile = library
        .parent()
        .and_then(std::path::Path::file_name)
        .and_then(|name| name.to_str())
        .filter(|name| *name != "deps")
        .unwrap_or("debug");
    Some(profile.to_owned())
}

/// Print `figures` in `format`.
pub fn print(figures: &[Figure], run: &Run<'_>, format: Format) {
    match format {
        Format::Json => println!("{}", json(figures, run)),
        Format::Markdown => print!("{}", markdown(figures, run)),
        Format::Table => {
            println!(
                "{} ({}), {} iterations",
                run.device, run.target, run.iterations
            );
            println!(
                "{:<64} {:>12} {:>12} {:>12}  unit",
                "path", "median", "p10", "p90"
            );
            for f in figures {
                println!(
                    "{:<64} {:>12.2} {:>12.2} {:>12.2}  {}",
                    f.name,
                    f.percentile(0.5),
                    f.percentile(0.1),
                    f.percentile(0.9),
                    f.unit
                );
            }
            if let HipStatus::NotMeasured(why) = run.hip {
                println!("HIP: {why}");
            }
            if let Some(comparison) = run.comparison {
                print!("\n{}", comparison_table(comparison));
            }
        }
    }
}

fn json(figures: &[Figure], run: &Run<'_>) -> serde_json::Value {
    let rows: Vec<serde_json::Value> = figures
        .iter()
        .map(|f| {
            serde_json::json!({
                "id": f.id,
                "name": f.name,
                "unit": f.unit,
                "goal": f.goal,
                "samples": f.samples.len(),
                "median": f.percentile(0.5),
                "p10": f.percentile(0.1),
                "p90": f.percentile(0.9),
                "min": f.percentile(0.0),
                "max": f.percentile(1.0),
                "note": f.note,
            })
        })
        .collect();
    serde_json::json!({
        "schema": 1,
        "device": run.device,
        "simulated": run.simulated,
        "interposer": under_interposer(),
        "target": run.target,
        "iterations": run.iterations,
        "command": run.command(),
        "build": Run::build(),
        "host": {
            "cpu": run.host.cpu,
            "cores": run.host.cores,
            "kernel": run.host.kernel,
        },
        "figures": rows,
        "comparison": run.comparison.map(comparison_json),
        "hip": match run.hip {
            HipStatus::NotAsked => serde_json::Value::Null,
            HipStatus::Measured => serde_json::json!({ "status": "measured" }),
            HipStatus::NotMeasured(why) => {
                serde_json::json!({ "status": "not_measured", "reason": why })
            }
        },
    })
}

/// How the comparison was made, for the table's and the markdown's heading.
fn comparison_heading(comparison: &Comparison) -> String {
    let library = if comparison.library.is_some() {
        " and the HSA library given with --rocr-library on ROCr's paths (its goal: a median at \
         most the stated multiple of ROCr's)"
    } else {
        ""
    };
    format!(
        "aqueduct vs ROCr{library}, the same paths on the same device: each runtime in {} fresh \
         child processes of this run (a kernel binds one KFD process per address space, so two \
         cannot share one); init has one sample per process",
        comparison.processes
    )
}

/// A side's median and p10 – p90, or why there is none.
fn side_cell(outcome: &Outcome, id: &str) -> String {
    match outcome {
        Outcome::Measured(m) => {
            let samples = m.samples.get(id);
            if samples.is_empty() {
                "—".to_owned()
            } else {
                format!(
                    "{} ({} – {})",
                    figure(percentile(samples, 0.5)),
                    figure(percentile(samples, 0.1)),
                    figure(percentile(samples, 0.9))
                )
            }
        }
        Outcome::NotInstalled(_) => "not installed".to_owned(),
        Outcome::Unavailable(_) => "unavailable".to_owned(),
    }
}

/// What ran on a side, or why it did not.
fn side_detail(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Measured(m) => m.detail.clone(),
        Outcome::NotInstalled(why) => format!("not installed ({why})"),
        Outcome::Unavailable(why) => format!("unavailable ({why})"),
    }
}

/// The library's median over ROCr's for `path`, where both were measured.
fn ratio_to_rocr(comparison: &Comparison, path: &figures::Path) -> Option<f64> {
    let library = comparison.library.as_ref()?;
    let median = |outcome: &Outcome| match outcome {
        Outcome::Measured(m) if !m.samples.get(path.id).is_empty() => {
            Some(percentile(m.samples.get(path.id), 0.5))
        }
        _ => None,
    };
    let theirs = median(&comparison.rocr).filter(|m| *m > 0.0)?;
    Some(median(&library.outcome)? / theirs)
}

/// The ratio cell: `0.31× (goal ≤ 0.5×, met)`, or why there is none.
fn ratio_cell(comparison: &Comparison, path: &figures::Path) -> String {
    let goal = path.goal_vs_rocr;
    match (ratio_to_rocr(comparison, path), goal) {
        (Some(ratio), Some(goal)) => format!(
            "{}× (goal ≤ {goal}×, {})",
            figure(ratio),
            if ratio <= goal { "met" } else { "missed" }
        ),
        (Some(ratio), None) => format!("{}× (report)", figure(ratio)),
        (None, Some(goal)) => format!("— (goal ≤ {goal}×)"),
        (None, None) => "—".to_owned(),
    }
}

fn comparison_table(comparison: &Comparison) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "{}", comparison_heading(comparison));
    let _ = writeln!(out, "  aqueduct: {}", side_detail(&comparison.aqueduct));
    let _ = writeln!(out, "  ROCr: {}", side_detail(&comparison.rocr));
    if let Some(library) = &comparison.library {
        let _ = writeln!(
            out,
            "  library ({}): {}",
            library.asked,
            side_detail(&library.outcome)
        );
    }
    for stall in &comparison.rocr_stalls {
        let _ = writeln!(out, "  ROCr's child stalled and was started again: {stall}");
    }
    let _ = write!(
        out,
        "{:<58} {:>26} {:>26}",
        "path", "aqueduct median (p10 – p90)", "ROCr median (p10 – p90)"
    );
    if comparison.library.is_some() {
        let _ = write!(
            out,
            " {:>26} {:>30}",
            "library median (p10 – p90)", "library / ROCr"
        );
    }
    let _ = writeln!(out, "  unit");
    for path in &figures::PATHS {
        let _ = write!(
            out,
            "{:<58} {:>26} {:>26}",
            path.name,
            side_cell(&comparison.aqueduct, path.id),
            side_cell(&comparison.rocr, path.id)
        );
        if let Some(library) = &comparison.library {
            let _ = write!(
                out,
                " {:>26} {:>30}",
                side_cell(&library.outcome, path.id),
                ratio_cell(comparison, path)
            );
        }
        let _ = writeln!(out, "  µs");
    }
    out
}

fn side_json(outcome: &Outcome, id: &str) -> serde_json::Value {
    match outcome {
        Outcome::Measured(m) if !m.samples.get(id).is_empty() => {
            let samples = m.samples.get(id);
            serde_json::json!({
                "samples": samples.len(),
                "median": percentile(samples, 0.5),
                "p10": percentile(samples, 0.1),
                "p90": percentile(samples, 0.9),
                "min": percentile(samples, 0.0),
                "max": percentile(samples, 1.0),
            })
        }
        _ => serde_json::Value::Null,
    }
}

fn runtime_json(outcome: &Outcome) -> serde_json::Value {
    match outcome {
        Outcome::Measured(m) => serde_json::json!({"status": outcome.status(), "detail": m.detail}),
        Outcome::NotInstalled(why) | Outcome::Unavailable(why) => {
            serde_json::json!({"status": outcome.status(), "reason": why})
        }
    }
}

fn comparison_json(comparison: &Comparison) -> serde_json::Value {
    let paths: Vec<serde_json::Value> = figures::PATHS
        .iter()
        .map(|p| {
            let mut row = serde_json::json!({
                "id": p.id,
                "name": p.name,
                "calls": p.calls,
                "unit": "µs",
                "aqueduct": side_json(&comparison.aqueduct, p.id),
                "rocr": side_json(&comparison.rocr, p.id),
            });
            if let Some(library) = &comparison.library {
                let ratio = ratio_to_rocr(comparison, p);
                row["library"] = side_json(&library.outcome, p.id);
                // The library's median over ROCr's, issue 21's goal for it (a maximum ratio;
                // null: reported only) and whether it was met (null without both).
                row["library_vs_rocr"] = serde_json::json!({
                    "ratio": ratio,
                    "goal": p.goal_vs_rocr,
                    "met": ratio.zip(p.goal_vs_rocr).map(|(r, g)| r <= g),
                });
            }
            row
        })
        .collect();
    serde_json::json!({
        "processes": comparison.processes,
        "how": comparison_heading(comparison),
        "aqueduct": runtime_json(&comparison.aqueduct),
        "rocr": {
            "library": comparison.rocr_library,
            "status": comparison.rocr.status(),
            "detail": match &comparison.rocr {
                Outcome::Measured(m) => Some(m.detail.as_str()),
                _ => None,
            },
            "reason": match &comparison.rocr {
                Outcome::NotInstalled(why) | Outcome::Unavailable(why) => Some(why.as_str()),
                Outcome::Measured(_) => None,
            },
            // Each ROCr child killed for making no progress (and started again).
            "stalls": comparison.rocr_stalls,
        },
        "library": comparison.library.as_ref().map(library_json),
        "paths": paths,
    })
}

fn library_json(library: &LibrarySide) -> serde_json::Value {
    let mut value = runtime_json(&library.outcome);
    value["asked"] = library.asked.clone().into();
    value["file"] = library.file.clone().into();
    if let Outcome::Measured(m) = &library.outcome {
        // What its children mapped: the file itself, and no ROCr or libhsakmt (checked).
        value["loaded"] = m.loaded.clone().into();
    }
    value
}

fn comparison_markdown(comparison: &Comparison, command: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "\n{}.\n", comparison_heading(comparison));
    let _ = write!(
        out,
        "aqueduct: {}. ROCr: {}.",
        side_detail(&comparison.aqueduct).replace('|', "\\|"),
        side_detail(&comparison.rocr).replace('|', "\\|")
    );
    if let Some(library) = &comparison.library {
        let _ = write!(
            out,
            " Library: {}.",
            side_detail(&library.outcome).replace('|', "\\|")
        );
    }
    out.push_str("\n\n| what | aqueduct, µs: median (p10 – p90) | ROCr, µs: median (p10 – p90) |");
    if comparison.library.is_some() {
        out.push_str(" library, µs: median (p10 – p90) | library / ROCr |");
    }
    out.push_str(" calls | command |\n|---|---|---|");
    if comparison.library.is_some() {
        out.push_str("---|---|");
    }
    out.push_str("---|---|\n");
    for path in &figures::PATHS {
        let _ = write!(
            out,
            "| {} | {} | {} |",
            path.name,
            side_cell(&comparison.aqueduct, path.id),
            side_cell(&comparison.rocr, path.id),
        );
        if let Some(library) = &comparison.library {
            let _ = write!(
                out,
                " {} | {} |",
                side_cell(&library.outcome, path.id),
                ratio_cell(comparison, path)
            );
        }
        let _ = writeln!(out, " {} | `{command}` |", path.calls.replace('|', "\\|"));
    }
    out
}

fn markdown(figures: &[Figure], run: &Run<'_>) -> String {
    use std::fmt::Write as _;
    let gpu = if run.simulated {
        format!("simulated GPU ({}, {})", run.device, run.target)
    } else if under_interposer() {
        format!(
            "simulated GPU served through the LD_PRELOAD interposer ({}, {})",
            run.device, run.target
        )
    } else {
        format!("real GPU ({}, {})", run.device, run.target)
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Machine: {}, {} cores, Linux {}; {gpu}. Command: `{}` ({}).\n",
        run.host.cpu,
        run.host.cores,
        run.host.kernel,
        run.command(),
        Run::build()
    );
    out.push_str("| what | median | p10 – p90 | goal | how | command |\n");
    out.push_str("|---|---|---|---|---|---|\n");
    for f in figures {
        let _ = writeln!(
            out,
            "| {} | {} {} | {} – {} | {} | {} | `{}` |",
            f.name,
            figure(f.percentile(0.5)),
            f.unit,
            figure(f.percentile(0.1)),
            figure(f.percentile(0.9)),
            f.goal,
            f.note.replace('|', "\\|"),
            run.command()
        );
    }
    if let HipStatus::NotMeasured(why) = run.hip {
        let _ = writeln!(out, "\nHIP's side (`--hip`): {why}.");
    }
    if let Some(comparison) = run.comparison {
        out.push_str(&comparison_markdown(comparison, &run.command()));
    }
    out
}

/// Three significant digits, no exponent.
fn figure(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude >= 100.0 {
        format!("{value:.0}")
    } else if magnitude >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure_of(samples: &[f64]) -> Figure {
        Figure {
            id: "x",
            name: "a path",
            unit: "µs",
            goal: "≤ 10 µs",
            samples: samples.to_vec(),
            note: "a | b".into(),
        }
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        let f = figure_of(&[5.0, 1.0, 3.0, 2.0, 4.0]);
        assert!((f.percentile(0.5) - 3.0).abs() < f64::EPSILON);
        assert!((f.percentile(0.0) - 1.0).abs() < f64::EPSILON);
        assert!((f.percentile(1.0) - 5.0).abs() < f64::EPSILON);
        assert!(figure_of(&[]).percentile(0.5).abs() < f64::EPSILON);
    }

    #[test]
    fn markdown_rows_name_the_machine_and_the_command() {
        let host = Host {
            cpu: "Some CPU".into(),
            cores: 2,
            kernel: "6.1.0".into(),
        };
        let run = Run {
            device: "simulator: 1 x MI210",
            simulated: true,
            target: "gfx90a",
            iterations: 50,
            host: &host,
            comparison: None,
            comparison_only: false,
            hip: HipStatus::NotAsked,
        };
        let text = markdown(&[figure_of(&[12.345, 11.0, 13.0])], &run);
        assert!(
            text.starts_with("Machine: Some CPU, 2 cores, Linux 6.1.0; simulated GPU"),
            "{text}"
        );
        assert!(
            text.contains("| a path | 12.3 µs | 11.0 – 13.0 | ≤ 10 µs | a \\| b |"),
            "{text}"
        );
        assert!(text.contains("aqueduct bench --iterations 50`"), "{text}");
    }
}
