//! The crate's error type.

/// Why a target id cannot be read, or why code cannot run on an agent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `e_flags` names no processor this crate knows, a reserved one, or a feature the processor
    /// does not have.
    #[error("e_flags {flags:#x}: {reason}")]
    BadFlags {
        /// The `e_flags` word.
        flags: u32,
        /// What is wrong with it.
        reason: String,
    },
    /// A target-id string could not be read.
    #[error("target id `{text}`: {reason}")]
    BadTargetId {
        /// The text as given.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Code built for one target cannot run on an agent.
    #[error("code object for {code} cannot run on {agent}: {reason}")]
    Incompatible {
        /// The code's target id (`gfx90a:xnack-`), as [`crate::TargetId`] displays it.
        code: String,
        /// The agent's target id.
        agent: String,
        /// Why not.
        reason: &'static str,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
