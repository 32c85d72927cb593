//! The hidden (implicit) kernel arguments a dispatcher must fill after the explicit ones
//! (code-objects.md §7): where the block starts, how big it is, and where each hidden argument
//! lies in it, for code object V4 (56 bytes) and V5/V6 (256 bytes).

use crate::elf_file::CodeObjectVersion;
use crate::metadata::{HiddenArg, KernelArg, ValueKind};

/// Size of the V5/V6 implicit-argument block (`COV5_SIZE`).
pub const V5_BLOCK_SIZE: u32 = 256;
/// Size of the V4 implicit-argument block (7 × 8 bytes).
pub const V4_BLOCK_SIZE: u32 = 56;

/// Which layout the block follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImplicitLayout {
    /// Code object V4: global offsets, printf/hostcall, default queue, completion action,
    /// multigrid sync, 8 bytes each.
    V4,
    /// Code object V5 and V6: the 256-byte block of `ImplicitArg::Offset_COV5`.
    V5,
}

impl ImplicitLayout {
    /// The layout a code-object version uses.
    pub fn for_version(version: CodeObjectVersion) -> Self {
        match version {
            CodeObjectVersion::V4 => Self::V4,
            CodeObjectVersion::V5 | CodeObjectVersion::V6 => Self::V5,
        }
    }

    /// The block size the layout defines.
    pub fn block_size(self) -> u32 {
        match self {
            Self::V4 => V4_BLOCK_SIZE,
            Self::V5 => V5_BLOCK_SIZE,
        }
    }

    /// Where `kind` lies in the block (offset, size), if the layout defines a fixed place for it.
    pub fn slot(self, kind: HiddenArg) -> Option<(u32, u32)> {
        use HiddenArg as H;
        match self {
            Self::V5 => Some(match kind {
                H::BlockCountX => (0, 4),
                H::BlockCountY => (4, 4),
                H::BlockCountZ => (8, 4),
                H::GroupSizeX => (12, 2),
                H::GroupSizeY => (14, 2),
                H::GroupSizeZ => (16, 2),
                H::RemainderX => (18, 2),
                H::RemainderY => (20, 2),
                H::RemainderZ => (22, 2),
                H::GlobalOffsetX => (40, 8),
                H::GlobalOffsetY => (48, 8),
                H::GlobalOffsetZ => (56, 8),
                H::GridDims => (64, 2),
                H::PrintfBuffer => (72, 8),
                H::HostcallBuffer => (80, 8),
                H::MultigridSyncArg => (88, 8),
                H::HeapV1 => (96, 8),
                H::DefaultQueue => (104, 8),
                H::CompletionAction => (112, 8),
                H::DynamicLdsSize => (120, 4),
                H::PrivateBase => (192, 4),
                H::SharedBase => (196, 4),
                H::QueuePtr => (200, 8),
                H::None => return None,
            }),
            Self::V4 => Some(match kind {
                H::GlobalOffsetX => (0, 8),
                H::GlobalOffsetY => (8, 8),
                H::GlobalOffsetZ => (16, 8),
                H::PrintfBuffer | H::HostcallBuffer => (24, 8),
                H::DefaultQueue => (32, 8),
                H::CompletionAction => (40, 8),
                H::MultigridSyncArg => (48, 8),
                _ => return None,
            }),
        }
    }
}

/// Where a kernel's implicit-argument block is in its kernarg segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ImplicitArgs {
    /// The layout.
    pub layout: ImplicitLayout,
    /// Offset of the block in the kernarg segment.
    pub offset: u32,
    /// Bytes of the block that lie inside the kernarg segment (at most the layout's size).
    pub size: u32,
}

impl ImplicitArgs {
    /// The kernarg offset of `kind`, if the layout places it (whether or not the kernel's
    /// metadata lists it: unlisted fields keep their place, code-objects.md §7.1).
    pub fn offset_of(&self, kind: HiddenArg) -> Option<u32> {
        let (offset, size) = self.layout.slot(kind)?;
        (offset + size <= self.size).then_some(self.offset + offset)
    }
}

/// Find the implicit block from the hidden arguments in `args` and check that each lies where
/// the layout puts it. `Ok(None)` if the kernel has no hidden argument.
pub(crate) fn locate(
    version: CodeObjectVersion,
    args: &[KernelArg],
    kernarg_segment_size: u32,
) -> Result<Option<ImplicitArgs>, String> {
    let layout = ImplicitLayout::for_version(version);
    let mut start: Option<u32> = None;
    let mut first_hidden: Option<u32> = None;
    for (index, arg) in args.iter().enumerate() {
        let ValueKind::Hidden(kind) = arg.value_kind else {
            continue;
        };
        first_hidden = Some(first_hidden.map_or(arg.offset, |f| f.min(arg.offset)));
        let Some((slot, size)) = layout.slot(kind) else {
            continue;
        };
        if arg.size != size {
            return Err(format!(
                "argument {index} ({}) has size {}, the {layout:?} layout gives it {size}",
                kind.name(),
                arg.size
            ));
        }
        let Some(this_start) = arg.offset.checked_sub(slot) else {
            return Err(format!(
                "argument {index} ({}) at offset {} cannot be at +{slot} of the implicit block",
                kind.name(),
                arg.offset
            ));
        };
        match start {
            None => start = Some(this_start),
            Some(s) if s != this_start => {
                return Err(format!(
                    "argument {index} ({}) at offset {} puts the implicit block at {this_start}, \
                     an earlier hidden argument put it at {s}",
                    kind.name(),
                    arg.offset
                ));
            }
            Some(_) => {}
        }
    }
    let Some(offset) = start.or(first_hidden) else {
        return Ok(None);
    };
    let size = kernarg_segment_size
        .saturating_sub(offset)
        .min(layout.block_size());
    Ok(Some(ImplicitArgs {
        layout,
        offset,
        size,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hidden(kind: HiddenArg, offset: u32, size: u32) -> KernelArg {
        KernelArg {
            offset,
            size,
            value_kind: ValueKind::Hidden(kind),
            ..KernelArg::default()
        }
    }

    #[test]
    fn v5_block_follows_explicit_args() {
        // The EXP example: 24 bytes of explicit args, block at 24, 280 bytes in all.
        let args = [
            KernelArg {
                offset: 0,
                size: 8,
                ..KernelArg::default()
            },
            hidden(HiddenArg::BlockCountX, 24, 4),
            hidden(HiddenArg::GroupSizeX, 36, 2),
            hidden(HiddenArg::GlobalOffsetX, 64, 8),
            hidden(HiddenArg::GridDims, 88, 2),
            hidden(HiddenArg::HostcallBuffer, 104, 8),
            hidden(HiddenArg::QueuePtr, 224, 8),
        ];
        let implicit = locate(CodeObjectVersion::V5, &args, 280).unwrap().unwrap();
        assert_eq!((implicit.offset, implicit.size), (24, 256));
        assert_eq!(
            implicit.offset_of(HiddenArg::DynamicLdsSize),
            Some(24 + 120)
        );
        assert_eq!(implicit.offset_of(HiddenArg::RemainderZ), Some(24 + 22));
        // One argument out of place is an error.
        let mut bad = args.clone();
        bad[3].offset = 72;
        assert!(locate(CodeObjectVersion::V5, &bad, 280).is_err());
        bad = args.clone();
        bad[2].size = 4;
        assert!(locate(CodeObjectVersion::V6, &bad, 280).is_err());
        // No hidden arguments: no block.
        assert_eq!(locate(CodeObjectVersion::V5, &args[..1], 8), Ok(None));
    }

    #[test]
    fn v4_block_starts_with_global_offsets() {
        let args = [
            hidden(HiddenArg::GlobalOffsetX, 16, 8),
            hidden(HiddenArg::GlobalOffsetY, 24, 8),
            hidden(HiddenArg::GlobalOffsetZ, 32, 8),
            hidden(HiddenArg::None, 40, 8),
            hidden(HiddenArg::MultigridSyncArg, 64, 8),
        ];
        let implicit = locate(CodeObjectVersion::V4, &args, 72).unwrap().unwrap();
        assert_eq!(implicit.offset, 16);
        assert_eq!(implicit.offset_of(HiddenArg::GlobalOffsetZ), Some(32));
        assert_eq!(implicit.offset_of(HiddenArg::BlockCountX), None);
    }
}
