//! Command-line flags that `run` and `exec` share: `--target` picks the GPU, and the launch
//! sizes (`--grid`/`--block`, `--threads`/`--blocks`) take one to three numbers.

use aqueduct::{Device, GpuAgent};

type Error = Box<dyn std::error::Error>;

/// The GPU `--target` names (a full target id or a processor name), or the first GPU.
pub fn pick_gpu(device: &Device, target: Option<&str>) -> Result<GpuAgent, Error> {
    let gpus = device.gpus()?;
    let Some(wanted) = target else {
        return gpus
            .first()
            .cloned()
            .ok_or_else(|| "the device has no GPU".into());
    };
    gpus.iter()
        .find(|g| g.target_id.to_string() == wanted || g.target_id.processor.name == wanted)
        .cloned()
        .ok_or_else(|| {
            let have: Vec<String> = gpus.iter().map(|g| g.target_id.to_string()).collect();
            format!("--target {wanted}: no such GPU (the device has {have:?})").into()
        })
}

/// One to three sizes of flag `--{what}`, padded with 1s; none may be 0.
pub fn dims(sizes: &[u32], what: &str) -> Result<[u32; 3], Error> {
    let dims = match sizes {
        [x] => [*x, 1, 1],
        [x, y] => [*x, *y, 1],
        [x, y, z] => [*x, *y, *z],
        _ => return Err(format!("--{what} takes 1 to 3 sizes, e.g. 64 or 8,8").into()),
    };
    if dims.contains(&0) {
        return Err(format!("--{what}: sizes must be at least 1").into());
    }
    Ok(dims)
}
