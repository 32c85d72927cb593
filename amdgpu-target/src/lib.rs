//! The one AMDGPU target type every aqueduct crate shares: the processor (gfx90a, gfx942,
//! gfx1100, the `gfx*-generic` families), the settings of its `xnack` and `sramecc` features,
//! the generic version, how to read it from a target-id string, from KFD's
//! `gfx_target_version` or from a code object's `e_flags`, and the rule that decides whether
//! code built for one target runs on an agent (code-objects.md §1.2–§1.5, kfd.md §2.3).
//!
//! Pure: no I/O, no knowledge of the kernel driver or of ELF files beyond the `e_flags` word.
//!
//! ```
//! use amdgpu_target::TargetId;
//!
//! let agent = TargetId::for_agent(90010, false, true).expect("gfx90a");
//! assert_eq!(agent.to_string(), "gfx90a:sramecc+:xnack-");
//! let code = TargetId::parse("gfx90a:xnack-")?;
//! code.runs_on(&agent)?;
//! # Ok::<(), amdgpu_target::Error>(())
//! ```
#![warn(missing_docs)]

mod error;
pub mod gfx_version;
pub mod processor;
pub mod target_id;

pub use error::{Error, Result};
pub use gfx_version::{GfxVersion, GfxVersionError};
pub use processor::Processor;
pub use target_id::{Feature, FeatureSetting, TargetId};
