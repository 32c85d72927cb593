//! The simulated machine's shape, from the environment.
//!
//! `AQUEDUCT_SIM_MACHINE` names a preset (`mi210`, the default; `mi300x`; `mi210-hive`;
//! `mi300x-platform`; `mi210-small-bar`; `rx7900xtx`; `rx7900xtx-small-bar`), as for
//! aqueduct's built-in simulator. `AMDGPU_SIM_CONFIG` adjusts it:
//! comma-separated `key=value` items, applied in this order whatever their order in the text:
//!
//! | key | meaning |
//! |---|---|
//! | `gpus` | number of GPUs (copies of the preset's first) |
//! | `hive` | `1`/`0`: the GPUs form an XGMI hive or not |
//! | `cus` | active compute units per GPU |
//! | `vram` | VRAM per GPU, bytes with an optional `K`, `M` or `G` suffix (powers of 1024) |
//! | `kfd_minor` | the KFD interface minor version reported (newer ioctls are refused) |
//!
//! For example `AMDGPU_SIM_CONFIG=gpus=2,hive=1,cus=8,vram=4G`. The machine validates the
//! result (`Machine::new`).

use amdgpu_sim::{MachineConfig, SIM_MACHINE_ENV, preset};

use crate::error::PreloadError;

/// The variable of adjustments.
pub(crate) const CONFIG_ENV: &str = "AMDGPU_SIM_CONFIG";

/// Adjustments parsed from [`CONFIG_ENV`].
#[derive(Debug, Default, PartialEq, Eq)]
struct Adjustments {
    gpus: Option<usize>,
    hive: Option<bool>,
    compute_units: Option<u32>,
    vram: Option<u64>,
    kfd_minor: Option<u32>,
}

fn number<T: std::str::FromStr>(key: &str, value: &str) -> Result<T, String> {
    value
        .parse()
        .map_err(|_| format!("{key}={value:?} is not a number"))
}

fn bytes(value: &str) -> Result<u64, String> {
    let (digits, shift) = match value.as_bytes().last() {
        Some(b'K' | b'k') => (&value[..value.len() - 1], 10),
        Some(b'M' | b'm') => (&value[..value.len() - 1], 20),
        Some(b'G' | b'g') => (&value[..value.len() - 1], 30),
        _ => (value, 0),
    };
    number::<u64>("vram", digits)?
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("vram={value:?} is too large"))
}

fn parse(text: &str) -> Result<Adjustments, String> {
    let mut adjustments = Adjustments::default();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| format!("{item:?} is not key=value"))?;
        let value = value.trim();
        match key.trim() {
            "gpus" => adjustments.gpus = Some(number(key, value)?),
            "hive" => {
                adjustments.hive = Some(match value {
                    "1" | "true" | "yes" => true,
                    "0" | "false" | "no" => false,
                    _ => return Err(format!("hive={value:?}: expected 1 or 0")),
                });
            }
            "cus" => adjustments.compute_units = Some(number(key, value)?),
            "vram" => adjustments.vram = Some(bytes(value)?),
            "kfd_minor" => adjustments.kfd_minor = Some(number(key, value)?),
            other => {
                return Err(format!(
                    "unknown key {other:?} (gpus, hive, cus, vram, kfd_minor)"
                ));
            }
        }
    }
    Ok(adjustments)
}

fn apply(mut config: MachineConfig, adjustments: &Adjustments) -> MachineConfig {
    if let Some(gpus) = adjustments.gpus {
        config = config.with_gpu_count(gpus);
    }
    if let Some(hive) = adjustments.hive {
        config = config.with_xgmi_hive(hive);
    }
    if let Some(compute_units) = adjustments.compute_units {
        config = config.with_compute_units(compute_units);
    }
    if let Some(vram) = adjustments.vram {
        config = config.with_vram(vram);
    }
    if let Some(minor) = adjustments.kfd_minor {
        config = config.with_kfd_minor_version(minor);
    }
    config
}

/// The machine the environment asks for, or why it cannot be had.
pub(crate) fn from_environment() -> Result<MachineConfig, PreloadError> {
    let name = std::env::var(SIM_MACHINE_ENV).unwrap_or_default();
    let config = preset(&name)?;
    let adjustments =
        parse(&std::env::var(CONFIG_ENV).unwrap_or_default()).map_err(PreloadError::Config)?;
    Ok(apply(config, &adjustments))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_parse_and_apply() {
        let adjustments = parse(" gpus=2, hive=1,cus=8 ,vram=4G,kfd_minor=11").unwrap();
        assert_eq!(
            adjustments,
            Adjustments {
                gpus: Some(2),
                hive: Some(true),
                compute_units: Some(8),
                vram: Some(4 << 30),
                kfd_minor: Some(11),
            }
        );
        let config = apply(MachineConfig::mi210(), &adjustments);
        assert_eq!(config.gpus.len(), 2);
        assert!(config.gpus.iter().all(|g| g.compute_units == 8));
        assert!(config.gpus.iter().all(|g| g.vram_bytes == 4 << 30));
        assert_eq!(parse("").unwrap(), Adjustments::default());
        assert_eq!(parse("vram=512M").unwrap().vram, Some(512 << 20));
        assert_eq!(parse("vram=4096").unwrap().vram, Some(4096));
    }

    #[test]
    fn bad_items_are_errors_that_name_them() {
        for (text, says) in [
            ("gpus", "not key=value"),
            ("gpus=two", "not a number"),
            ("hive=maybe", "expected 1 or 0"),
            ("vram=99999999999G", "too large"),
            ("colour=red", "unknown key"),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(says), "{text}: {err}");
        }
    }
}
