//! [`KernargLayout`]: a kernel's kernarg segment worked out once from its metadata, then filled
//! for each launch straight into the caller's memory without allocating.

use amdgpu_loader::metadata::{AddressSpace, KernelKind};
use amdgpu_loader::{
    HiddenArg, ImplicitArgs, Kernel, KernelDescriptor, KernelMetadata, KernelSymbol, ValueKind,
};

use super::error::KernargError;
use super::geometry::{Geometry, KernelLimits};
use super::hidden::{HiddenValues, LaunchContext};
use super::value::{Arg, sized};
use ArgKind::Pointer;

/// Alignment of a `__local` argument's LDS area when the metadata gives no `.pointee_align`.
/// Unsure: CLR aligns each area to the argument's alignment; 16 satisfies every OpenCL type up
/// to `long2`/`double2` and costs at most 12 bytes.
const DEFAULT_LOCAL_ALIGN: u32 = 16;

/// How an explicit argument is passed, as its metadata says.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArgKind {
    /// A device address ([`Arg::Pointer`]); the text says what it points at, e.g.
    /// `global buffer pointer`, `constant buffer pointer`, `image descriptor pointer`.
    Pointer(&'static str),
    /// The bytes themselves ([`Arg::Scalar`] or [`Arg::Bytes`] of exactly the size).
    ByValue,
    /// The group-segment offset of a dynamic LDS area ([`Arg::Local`]).
    Local {
        /// Alignment of the area.
        align: u32,
    },
    /// A kind aqueduct cannot pass (device-enqueue queues, kinds newer than the loader): its
    /// `.value_kind`.
    Unsupported(String),
}

/// One explicit argument of a kernel: what [`KernargLayout::write`] checks a value against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExplicitArg {
    metadata_index: usize,
    name: Option<String>,
    offset: u32,
    size: u32,
    kind: ArgKind,
}

impl ExplicitArg {
    /// Index in the metadata's `.args` (hidden arguments included).
    pub fn metadata_index(&self) -> usize {
        self.metadata_index
    }

    /// The argument's `.name`, if the metadata has one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Offset in the kernarg segment.
    pub fn offset(&self) -> u32 {
        self.offset
    }

    /// Bytes in the kernarg segment.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// How it is passed.
    pub fn kind(&self) -> &ArgKind {
        &self.kind
    }

    /// What the kernel expects here, for error messages.
    pub(crate) fn expected(&self) -> String {
        let size = sized(self.size as usize);
        match &self.kind {
            ArgKind::Pointer(what) => format!("{size} {what} (a device pointer)"),
            ArgKind::ByValue => format!("{size} by_value scalar or aggregate"),
            ArgKind::Local { .. } => {
                "a dynamic_shared_pointer (give its LDS bytes with Arg::local)".to_owned()
            }
            ArgKind::Unsupported(kind) => format!("a `{kind}` argument"),
        }
    }
}

/// One hidden argument to write: where, how wide, which kind, and whether the kernel's
/// metadata lists it (its index in `.args`) or it only has a place in the implicit block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct HiddenSlot {
    offset: u32,
    size: u32,
    kind: HiddenArg,
    listed: Option<usize>,
}

/// The preloaded part of a kernarg segment (code-objects.md §8), in bytes.
///
/// Preloading changes nothing in the segment: it is filled as usual and the kernarg pointer
/// stays enabled; the command processor copies these bytes into user SGPRs when it supports
/// preloading. An AQL dispatch needs nothing more (the CP reads the kernel descriptor). A
/// PM4-style direct dispatch must start the kernel at entry + 256 and write these dwords into
/// `COMPUTE_USER_DATA` after the other user SGPRs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreloadedKernargs {
    /// Offset of the first preloaded byte in the kernarg segment.
    pub offset: u32,
    /// Bytes preloaded (a multiple of 4).
    pub len: u32,
}

/// What the AQL dispatch packet needs from a launch, as checked and computed by
/// [`KernargLayout::write`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DispatchShape {
    /// `grid_size_x/y/z`.
    pub grid_size: [u32; 3],
    /// `workgroup_size_x/y/z`.
    pub workgroup_size: [u16; 3],
    /// Dimensions, for the packet's `setup` field.
    pub dimensions: u16,
    /// `group_segment_size`: static LDS + `__local` argument areas + dynamic LDS.
    pub group_segment_size: u32,
    /// Bytes of kernarg segment written.
    pub kernarg_size: u32,
}

/// A kernel's kernarg segment: where each explicit argument goes and what kind it is, and
/// where each hidden argument goes, computed once from the loader's metadata. [`Self::write`]
/// then checks a launch's arguments and geometry and fills the segment in place.
///
/// ```
/// use aqueduct::kernarg::{Arg, Geometry, KernargLayout, LaunchContext};
/// use aqueduct::loader::CodeObject;
///
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/kernels/bin/gfx90a/vector_add.co5");
/// let bytes = std::fs::read(path)?;
/// let code_object = CodeObject::parse(&bytes)?;
/// let layout = KernargLayout::for_symbol(code_object.kernel("vector_add").expect("kernel"))?;
/// let mut segment = vec![0u8; layout.size() as usize]; // in practice: kernarg memory
/// let (a, b, c) = (0x10_0000u64, 0x20_0000u64, 0x30_0000u64);
/// let shape = layout.write(
///     &mut segment,
///     &Geometry::d1(1000, 64),
///     &[Arg::ptr(a), Arg::ptr(b), Arg::ptr(c), Arg::u32(1000)],
///     &LaunchContext::default(),
/// )?;
/// assert_eq!(shape.workgroup_size, [64, 1, 1]);
/// assert_eq!(&segment[24..28], &1000u32.to_le_bytes());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernargLayout {
    kernel: String,
    size: u32,
    align: u32,
    explicit: Vec<ExplicitArg>,
    hidden: Vec<HiddenSlot>,
    implicit: Option<ImplicitArgs>,
    static_lds: u32,
    limits: KernelLimits,
    preload: Option<PreloadedKernargs>,
    kind: KernelKind,
    dynamic_stack: bool,
}

impl KernargLayout {
    /// The layout of a loaded kernel.
    pub fn new(kernel: &Kernel<'_>) -> Result<Self, KernargError> {
        Self::from_parts(&Parts {
            name: kernel.metadata.map_or(kernel.name, |m| m.name.as_str()),
            metadata: kernel.metadata,
            implicit: kernel.implicit_args,
            size: kernel.kernarg_size,
            align: kernel.kernarg_align,
            static_lds: kernel.group_segment_size,
            descriptor: kernel.descriptor,
        })
    }

    /// The layout of a kernel of a parsed (not necessarily loaded) code object.
    pub fn for_symbol(symbol: &KernelSymbol) -> Result<Self, KernargError> {
        Self::from_parts(&Parts {
            name: symbol.source_name(),
            metadata: symbol.metadata.as_ref(),
            implicit: symbol.implicit_args,
            size: symbol.kernarg_size(),
            align: symbol.kernarg_align(),
            static_lds: symbol.descriptor.group_segment_fixed_size,
            descriptor: &symbol.descriptor,
        })
    }

    fn from_parts(parts: &Parts<'_>) -> Result<Self, KernargError> {
        let kernel = parts.name.to_owned();
        let inconsistent = |detail: String| KernargError::Metadata {
            kernel: kernel.clone(),
            detail,
        };
        let size = parts.size;
        let args = parts.metadata.map_or(&[][..], |m| &m.args[..]);
        let fits = |offset: u32, len: u32| u64::from(offset) + u64::from(len) <= u64::from(size);

        let mut explicit = Vec::new();
        let mut hidden = Vec::new();
        for (index, arg) in args.iter().enumerate() {
            if !fits(arg.offset, arg.size) {
                return Err(inconsistent(format!(
                    "argument {index} ({}) at {}..{} lies outside the {size}-byte kernarg segment",
                    arg.value_kind.name(),
                    arg.offset,
                    u64::from(arg.offset) + u64::from(arg.size)
                )));
            }
            let kind = match &arg.value_kind {
                ValueKind::Hidden(kind) => {
                    hidden.push(HiddenSlot {
                        offset: arg.offset,
                        size: arg.size.min(8),
                        kind: *kind,
                        listed: Some(index),
                    });
                    continue;
                }
                ValueKind::GlobalBuffer => Pointer(match arg.address_space {
                    Some(AddressSpace::Constant) => "constant buffer pointer",
                    _ => "global buffer pointer",
                }),
                ValueKind::Image => Pointer("image descriptor pointer"),
                ValueKind::Sampler => Pointer("sampler descriptor pointer"),
                ValueKind::Pipe => Pointer("pipe pointer"),
                ValueKind::ByValue => ArgKind::ByValue,
                ValueKind::DynamicSharedPointer => ArgKind::Local {
                    align: arg
                        .pointee_align
                        .filter(|a| a.is_power_of_two())
                        .unwrap_or(DEFAULT_LOCAL_ALIGN)
                        .max(4),
                },
                ValueKind::Queue | ValueKind::Unknown(_) => {
                    ArgKind::Unsupported(arg.value_kind.name().to_owned())
                }
            };
            if matches!(kind, Pointer(_)) && arg.size != 8 {
                return Err(inconsistent(format!(
                    "argument {index} is a {} of {} bytes; pointers are 8 bytes",
                    arg.value_kind.name(),
                    arg.size
                )));
            }
            if matches!(kind, ArgKind::Local { .. }) && !(arg.size == 4 || arg.size == 8) {
                return Err(inconsistent(format!(
                    "argument {index} is a dynamic_shared_pointer of {} bytes; LDS offsets are 4",
                    arg.size
                )));
            }
            explicit.push(ExplicitArg {
                metadata_index: index,
                name: arg.name.clone(),
                offset: arg.offset,
                size: arg.size,
                kind,
            });
        }
        let hidden = place_hidden(parts.implicit, hidden);

        let preload = match parts.descriptor.kernarg_preload_length() {
            0 => None,
            dwords => {
                let range = PreloadedKernargs {
                    offset: parts.descriptor.kernarg_preload_offset() * 4,
                    len: dwords * 4,
                };
                if !fits(range.offset, range.len) {
                    return Err(inconsistent(format!(
                        "the descriptor preloads bytes {}..{} of a {size}-byte kernarg segment",
                        range.offset,
                        range.offset + range.len
                    )));
                }
                Some(range)
            }
        };
        let limits = parts
            .metadata
            .map_or_else(KernelLimits::default, |m| KernelLimits {
                max_flat_workgroup_size: m.max_flat_workgroup_size,
                reqd_workgroup_size: m.reqd_workgroup_size,
                uniform_work_group_size: m.uniform_work_group_size.unwrap_or(false),
            });
        Ok(Self {
            kernel,
            size,
            align: parts.align,
            explicit,
            hidden,
            implicit: parts.implicit,
            static_lds: parts.static_lds,
            limits,
            preload,
            kind: parts.metadata.map_or(KernelKind::Normal, |m| m.kind),
            dynamic_stack: parts.descriptor.uses_dynamic_stack(),
        })
    }

    /// The kernel's name (its metadata `.name`, else its link name).
    pub fn kernel_name(&self) -> &str {
        &self.kernel
    }

    /// Bytes of kernarg segment [`Self::write`] fills (the kernel's kernarg size).
    pub fn size(&self) -> u32 {
        self.size
    }

    /// Alignment the segment's GPU address needs (at least 16).
    pub fn align(&self) -> u32 {
        self.align
    }

    /// Bytes to reserve per segment in kernarg memory: the size rounded up to the alignment.
    pub fn reserved_size(&self) -> u32 {
        self.size.next_multiple_of(self.align.max(1))
    }

    /// The explicit arguments the caller supplies, in order.
    pub fn explicit_args(&self) -> &[ExplicitArg] {
        &self.explicit
    }

    /// Where the implicit-argument block is, and its layout (V4 or V5/V6), if the kernel has
    /// hidden arguments.
    pub fn implicit_args(&self) -> Option<ImplicitArgs> {
        self.implicit
    }

    /// The preloaded range, if the kernel descriptor asks for preloading.
    pub fn preloaded(&self) -> Option<PreloadedKernargs> {
        self.preload
    }

    /// Static LDS bytes (the descriptor's `group_segment_fixed_size`).
    pub fn static_lds(&self) -> u32 {
        self.static_lds
    }

    /// Whether this is a normal, init or fini kernel.
    pub fn kernel_kind(&self) -> KernelKind {
        self.kind
    }

    /// Whether the kernel's call stack may grow past its fixed private size (recursion,
    /// indirect calls, variable-sized frames: the descriptor's `USES_DYNAMIC_STACK`), so a
    /// launch must provide stack space beyond it.
    pub fn uses_dynamic_stack(&self) -> bool {
        self.dynamic_stack
    }

    /// Check `args` and `geometry` against the kernel, then fill `segment` (at least
    /// [`Self::size`] bytes; only those are touched): every byte of the segment is zeroed, each
    /// explicit argument lands at its metadata offset, and the hidden arguments are filled as
    /// the module documentation of [`super::hidden`] says. Nothing is allocated unless an
    /// error is returned. On error the segment's contents are unspecified.
    pub fn write(
        &self,
        segment: &mut [u8],
        geometry: &Geometry,
        args: &[Arg<'_>],
        context: &LaunchContext,
    ) -> Result<DispatchShape, KernargError> {
        let size = self.size as usize;
        let Some(segment) = segment.get_mut(..size) else {
            return Err(KernargError::BufferTooSmall {
                kernel: self.kernel.clone(),
                len: segment.len(),
                needed: size,
            });
        };
        geometry
            .check(&self.limits)
            .map_err(|detail| self.geometry_error(detail))?;
        if args.len() != self.explicit.len() {
            return Err(KernargError::ArgumentCount {
                kernel: self.kernel.clone(),
                expected: self.explicit.len(),
                given: args.len(),
            });
        }
        segment.fill(0);
        let mut lds_end = u64::from(self.static_lds);
        for (index, (slot, arg)) in self.explicit.iter().zip(args).enumerate() {
            let at = slot.offset as usize;
            let width = slot.size as usize;
            match (&slot.kind, arg) {
                (ArgKind::Pointer(_), Arg::Pointer(_) | Arg::Memory(_)) => {
                    let address = arg.address().unwrap_or_default();
                    segment[at..at + 8].copy_from_slice(&address.to_le_bytes());
                }
                (ArgKind::ByValue, _) if arg.value_bytes().map(<[u8]>::len) == Some(width) => {
                    segment[at..at + width].copy_from_slice(arg.value_bytes().unwrap_or_default());
                }
                (ArgKind::Local { align }, Arg::Local(bytes)) => {
                    let start = lds_end.next_multiple_of(u64::from(*align));
                    lds_end = start + u64::from(*bytes);
                    // Past 4 GiB the LDS check below refuses the launch anyway.
                    let offset = u32::try_from(start).unwrap_or(u32::MAX);
                    let value = u64::from(offset).to_le_bytes();
                    segment[at..at + width].copy_from_slice(&value[..width]);
                }
                (ArgKind::Unsupported(kind), _) => {
                    return Err(KernargError::Unsupported {
                        kernel: self.kernel.clone(),
                        index: slot.metadata_index,
                        what: kind.clone(),
                        why: "aqueduct cannot pass arguments of this kind",
                    });
                }
                _ => {
                    return Err(KernargError::ArgumentMismatch {
                        kernel: self.kernel.clone(),
                        index,
                        name: slot.name.clone(),
                        expected: slot.expected(),
                        given: arg.describe(),
                    });
                }
            }
        }
        let group_segment = lds_end + u64::from(geometry.dynamic_lds());
        if group_segment > u64::from(context.lds_limit) {
            return Err(self.geometry_error(format!(
                "the launch needs {group_segment} bytes of LDS per work-group ({} static, the \
                 rest __local arguments and dynamic LDS); the device has {}",
                self.static_lds, context.lds_limit
            )));
        }
        let group_segment_size = group_segment as u32;
        let dynamic_lds = group_segment_size - self.static_lds;
        let values = HiddenValues::new(geometry, dynamic_lds, context);
        for slot in &self.hidden {
            let missing = slot.listed.zip(context.missing_service(slot.kind));
            if let Some((index, why)) = missing {
                return Err(KernargError::Unsupported {
                    kernel: self.kernel.clone(),
                    index,
                    what: slot.kind.name().to_owned(),
                    why,
                });
            }
            put(
                segment,
                slot.offset as usize,
                slot.size,
                values.get(slot.kind),
            );
        }
        let grid = geometry.grid();
        let group = geometry.workgroup();
        Ok(DispatchShape {
            grid_size: grid,
            // Checked: at most 1024 work-items per group.
            workgroup_size: group.map(|g| g as u16),
            dimensions: geometry.dims().into(),
            group_segment_size,
            kernarg_size: self.size,
        })
    }

    fn geometry_error(&self, detail: String) -> KernargError {
        KernargError::Geometry {
            kernel: self.kernel.clone(),
            detail,
        }
    }
}

/// Whether aqueduct writes 0 to `kind` whatever the launch (see [`super::hidden`]).
fn always_zero(kind: HiddenArg) -> bool {
    matches!(
        kind,
        HiddenArg::None
            | HiddenArg::MultigridSyncArg
            | HiddenArg::DefaultQueue
            | HiddenArg::CompletionAction
    )
}

/// Write the low `width` bytes of `value` at `at`, with fixed-size copies for the usual widths
/// (the hot path writes about twenty hidden fields per launch).
fn put(segment: &mut [u8], at: usize, width: u32, value: u64) {
    let bytes = value.to_le_bytes();
    match width {
        8 => segment[at..at + 8].copy_from_slice(&bytes),
        4 => segment[at..at + 4].copy_from_slice(&bytes[..4]),
        2 => segment[at..at + 2].copy_from_slice(&bytes[..2]),
        _ => segment[at..at + width as usize].copy_from_slice(&bytes[..width as usize]),
    }
}

/// What a layout is computed from (a loaded [`Kernel`] or a parsed [`KernelSymbol`]).
struct Parts<'a> {
    name: &'a str,
    metadata: Option<&'a KernelMetadata>,
    implicit: Option<ImplicitArgs>,
    size: u32,
    align: u32,
    static_lds: u32,
    descriptor: &'a KernelDescriptor,
}

/// The hidden arguments to write: every place the implicit block's layout defines (inside the
/// segment), each marked with the metadata index of the argument that lists it, then the
/// listed arguments the layout does not place (kinds without a slot in it, such as
/// `hidden_none`). The whole block is filled because a kernel may read unlisted fields through
/// the implicit-argument pointer (code-objects.md §7.1: "reserve and fill the whole 256
/// bytes").
fn place_hidden(implicit: Option<ImplicitArgs>, listed: Vec<HiddenSlot>) -> Vec<HiddenSlot> {
    let mut slots: Vec<HiddenSlot> = Vec::new();
    if let Some(block) = implicit {
        for kind in HiddenArg::all() {
            let (Some(offset), Some((_, size))) = (block.offset_of(kind), block.layout.slot(kind))
            else {
                continue;
            };
            let listed_here = listed
                .iter()
                .find(|l| l.kind == kind && l.offset == offset)
                .and_then(|l| l.listed);
            // V4 shares one place between printf and hostcall buffers: the listed one wins.
            if let Some(existing) = slots.iter_mut().find(|s| s.offset == offset) {
                if existing.listed.is_none() && listed_here.is_some() {
                    *existing = HiddenSlot {
                        offset,
                        size,
                        kind,
                        listed: listed_here,
                    };
                }
                continue;
            }
            slots.push(HiddenSlot {
                offset,
                size,
                kind,
                listed: listed_here,
            });
        }
    }
    for arg in listed {
        if !slots.iter().any(|s| s.listed == arg.listed) {
            slots.push(arg);
        }
    }
    // The segment is zeroed first: fields that are always 0 need no write.
    slots.retain(|s| !always_zero(s.kind));
    slots
}
