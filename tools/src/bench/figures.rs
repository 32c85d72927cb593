//! What `aqueduct bench --rocr` compares: the paths, and each runtime's samples of them or why
//! it has none.

/// One compared path.
pub struct Path {
    /// Stable id (the JSON key of its samples).
    pub id: &'static str,
    /// What was measured, for people.
    pub name: &'static str,
    /// aqueduct's call and ROCr's.
    pub calls: &'static str,
    /// Issue 21's goal for an HSA library measured beside ROCr (`--rocr-library`): its median
    /// at most this many times ROCr's; `None`: reported only.
    pub goal_vs_rocr: Option<f64>,
}

/// Every compared path, in report order.
pub const PATHS: [Path; 7] = [
    Path {
        id: "init",
        name: "init, first in a fresh process",
        calls: "Device::open | hsa_init",
        goal_vs_rocr: Some(0.5),
    },
    Path {
        id: "queue_create",
        name: "queue creation, 256 packets",
        calls: "Device::create_queue | hsa_queue_create",
        goal_vs_rocr: Some(0.1),
    },
    Path {
        id: "queue_destroy",
        name: "queue destruction",
        calls: "drop(Queue) | hsa_queue_destroy",
        goal_vs_rocr: None,
    },
    Path {
        id: "dispatch_spin",
        name: "dispatch → completion, empty kernel, host spinning",
        calls: "launch + Launch::is_complete | AQL packet + hsa_signal_load_scacquire",
        goal_vs_rocr: Some(1.0),
    },
    Path {
        id: "dispatch_event_wait",
        name: "dispatch → completion, empty kernel, waiting on a signal",
        calls: "launch_with + Queue::wait | AQL packet + hsa_signal_wait_scacquire (blocked)",
        goal_vs_rocr: Some(1.0),
    },
    Path {
        id: "shutdown",
        name: "shutdown",
        calls: "Device::shutdown | hsa_shut_down",
        goal_vs_rocr: Some(0.5),
    },
    Path {
        id: "reinit",
        name: "reinit, after a shutdown in the same process",
        calls: "Device::open | hsa_init",
        goal_vs_rocr: None,
    },
];

/// Samples of every path, in µs (empty where not measured).
#[derive(Debug, Default, Clone)]
pub struct Samples {
    /// First init in the process.
    pub init: Vec<f64>,
    /// Queue creation.
    pub queue_create: Vec<f64>,
    /// Queue destruction.
    pub queue_destroy: Vec<f64>,
    /// Dispatch round trip, host spinning.
    pub dispatch_spin: Vec<f64>,
    /// Dispatch round trip, host waiting on the signal.
    pub dispatch_event_wait: Vec<f64>,
    /// Shutdown (after the cold init and after every reinit).
    pub shutdown: Vec<f64>,
    /// Init after a shutdown.
    pub reinit: Vec<f64>,
}

impl Samples {
    /// The samples of the path with `id`.
    pub fn get(&self, id: &str) -> &[f64] {
        match id {
            "init" => &self.init,
            "queue_create" => &self.queue_create,
            "queue_destroy" => &self.queue_destroy,
            "dispatch_spin" => &self.dispatch_spin,
            "dispatch_event_wait" => &self.dispatch_event_wait,
            "shutdown" => &self.shutdown,
            "reinit" => &self.reinit,
            _ => &[],
        }
    }

    pub(super) fn get_mut(&mut self, id: &str) -> Option<&mut Vec<f64>> {
        Some(match id {
            "init" => &mut self.init,
            "queue_create" => &mut self.queue_create,
            "queue_destroy" => &mut self.queue_destroy,
            "dispatch_spin" => &mut self.dispatch_spin,
            "dispatch_event_wait" => &mut self.dispatch_event_wait,
            "shutdown" => &mut self.shutdown,
            "reinit" => &mut self.reinit,
            _ => return None,
        })
    }

    pub(super) fn extend(&mut self, other: &Self) {
        for path in &PATHS {
            if let Some(mine) = self.get_mut(path.id) {
                mine.extend_from_slice(other.get(path.id));
            }
        }
    }
}

/// A runtime's figures.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Every path's samples.
    pub samples: Samples,
    /// What ran: the device, or ROCr's library file and GPU agent.
    pub detail: String,
    /// The HSA runtime files (`libhsa-runtime64*`, `libhsakmt*`) mapped in the child at the
    /// end of its run, from `/proc/self/maps` (empty for aqueduct's side).
    pub loaded: Vec<String>,
}

/// What measuring one runtime gave.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// Figures.
    Measured(Measured),
    /// The runtime's library could not be loaded (why).
    NotInstalled(String),
    /// Loaded, but it could not run the paths here: no GPU to see, a call failed, or the child
    /// crashed or hung (why).
    Unavailable(String),
}

impl Outcome {
    /// The status word of the JSON report.
    pub fn status(&self) -> &'static str {
        match self {
            Self::Measured(_) => "measured",
            Self::NotInstalled(_) => "not_installed",
            Self::Unavailable(_) => "unavailable",
        }
    }

    pub(super) fn to_json(&self) -> serde_json::Value {
        match self {
            Self::Measured(m) => {
                let samples: serde_json::Map<String, serde_json::Value> = PATHS
                    .iter()
                    .map(|p| (p.id.to_owned(), m.samples.get(p.id).into()))
                    .collect();
                serde_json::json!({
                    "status": self.status(),
                    "detail": m.detail,
                    "loaded": m.loaded,
                    "samples": samples,
                })
            }
            Self::NotInstalled(why) | Self::Unavailable(why) => {
                serde_json::json!({"status": self.status(), "reason": why})
            }
        }
    }

    pub(super) fn from_json(value: &serde_json::Value) -> Result<Self, String> {
        let text = |key: &str| {
            value[key]
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("no \"{key}\" in the child's report {value}"))
        };
        match value["status"].as_str() {
            Some("measured") => {
                let mut samples = Samples::default();
                for path in &PATHS {
                    let list = value["samples"][path.id].as_array().ok_or_else(|| {
                        format!("no samples of {} in the child's report", path.id)
                    })?;
                    let target = samples.get_mut(path.id).unwrap_or_else(|| unreachable!());
                    for sample in list {
                        target.push(sample.as_f64().ok_or("a sample that is not a number")?);
                    }
                }
                // A report without the list (a child of an older build) has mapped nothing known.
                let loaded = value["loaded"]
                    .as_array()
                    .map(|files| {
                        files
                            .iter()
                            .filter_map(|f| f.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default();
                Ok(Self::Measured(Measured {
                    samples,
                    detail: text("detail")?,
                    loaded,
                }))
            }
            Some("not_installed") => Ok(Self::NotInstalled(text("reason")?)),
            Some("unavailable") => Ok(Self::Unavailable(text("reason")?)),
            _ => Err(format!("the child's report has no known status: {value}")),
        }
    }
}
