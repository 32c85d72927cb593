//! Why the interposer could not start its machine. Said once on stderr; the program then sees
//! a machine without the GPU (its device paths answer ENOENT). What the simulated kernel
//! answers the program are plain errno values, as the real kernel's are.

/// Why no simulated machine.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PreloadError {
    /// `AMDGPU_SIM_CONFIG` is malformed.
    #[error("AMDGPU_SIM_CONFIG: {0}")]
    Config(String),
    /// The simulator refused the configuration, or a host call it needs failed.
    #[error(transparent)]
    Machine(#[from] amdgpu_sim::SimError),
    /// The sysfs mirror could not be written.
    #[error("cannot write the sysfs mirror: {0}")]
    Mirror(#[from] std::io::Error),
}
