//! The handle of a loaded code object (`hsa_loaded_code_object_t`): which executable, and
//! which of the code objects loaded into it, in load order.
//!
//! `hsa_executable_load_agent_code_object` hands such handles out and the loader extension
//! (`hsa_ven_amd_loader_*`) takes them back, so both name this module and neither the other.

/// Positions per executable in a loaded-code-object handle.
const POSITIONS: u64 = 1 << 16;

/// The handle of the code object loaded at `position` in `executable`.
pub fn handle(executable: u64, position: usize) -> u64 {
    executable * POSITIONS + position as u64
}

/// The executable and position a handle names (a position too large for `usize` becomes
/// `usize::MAX`, which names no loaded code object).
pub fn parts(handle: u64) -> (u64, usize) {
    let position = usize::try_from(handle % POSITIONS).unwrap_or(usize::MAX);
    (handle / POSITIONS, position)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_names_its_executable_and_position() {
        let h = handle(0x1234_5678, 3);
        assert_eq!(parts(h), (0x1234_5678, 3));
        assert_ne!(handle(1, 0), handle(0, 1));
    }
}
