//! The host machine a benchmark ran on, as the figure tables name it: CPU model, cores and
//! kernel release, read from `/proc` (Linux; "unknown" where a file is missing).

/// What the figures ran on, besides the GPU.
#[derive(Debug, Clone)]
pub struct Host {
    /// The CPU's model name (`/proc/cpuinfo`).
    pub cpu: String,
    /// Logical cores this process may use.
    pub cores: usize,
    /// The kernel release (`/proc/sys/kernel/osrelease`).
    pub kernel: String,
}

impl Host {
    /// The machine this process runs on.
    pub fn current() -> Self {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|text| model_name(&text))
            .unwrap_or_else(|| "unknown CPU".to_owned());
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map_or_else(|_| "unknown".to_owned(), |s| s.trim().to_owned());
        Self {
            cpu,
            cores: std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
            kernel,
        }
    }
}

/// The first `model name` of a `/proc/cpuinfo` text (other architectures name it otherwise:
/// `Processor`, `cpu model`; those are tried too).
fn model_name(cpuinfo: &str) -> Option<String> {
    cpuinfo.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        matches!(key.trim(), "model name" | "Processor" | "cpu model")
            .then(|| value.trim().to_owned())
            .filter(|v| !v.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_model_name_is_the_cpu() {
        let text = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7763 64-Core Processor\n\nprocessor\t: 1\nmodel name\t: other\n";
        assert_eq!(
            model_name(text).as_deref(),
            Some("AMD EPYC 7763 64-Core Processor")
        );
        assert_eq!(model_name("processor : 0\n"), None);
    }
}
