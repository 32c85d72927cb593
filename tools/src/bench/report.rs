//! How `aqueduct bench` prints its figures: a table for people, JSON for scripts, or markdown
//! rows for the README's figure table (each row with the command and the machine).

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
        let mut sorted = self.samples.clone();
        sorted.sort_by(f64::total_cmp);
        if sorted.is_empty() {
            return 0.0;
        }
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss,
            reason = "a rank below the sample count"
        )]
        let index = ((sorted.len() - 1) as f64 * p.clamp(0.0, 1.0)).round() as usize;
        sorted[index]
    }
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
}

impl Run<'_> {
    /// The command line that reproduces these figures.
    fn command(&self) -> String {
        let machine = std::env::var("AQUEDUCT_SIM_MACHINE")
            .ok()
            .filter(|_| self.simulated)
            .map_or_else(String::new, |m| format!("AQUEDUCT_SIM_MACHINE={m} "));
        format!("{machine}aqueduct bench --iterations {}", self.iterations)
    }

    fn build() -> &'static str {
        if cfg!(debug_assertions) {
            "debug build"
        } else {
            "release build"
        }
    }
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
    })
}

fn markdown(figures: &[Figure], run: &Run<'_>) -> String {
    use std::fmt::Write as _;
    let gpu = if run.simulated {
        format!("simulated GPU ({}, {})", run.device, run.target)
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
