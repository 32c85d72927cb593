//! The `NT_AMDGPU_METADATA` note (code-objects.md §6): a MessagePack map decoded into typed
//! structs. Every key AMDGPUUsage defines for code object V3–V6 is kept; unknown keys (vendor
//! extensions, newer LLVM) are skipped; a known key with a value of the wrong type, or a missing
//! required key, is an error naming the kernel and the key.

use crate::msgpack::{DecodeError, Item, Reader};

/// The whole metadata map.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Metadata {
    /// `amdhsa.version`: [major, minor]. V4 = 1.1, V5 and V6 = 1.2.
    pub version: Option<(u32, u32)>,
    /// `amdhsa.target`: the target id, e.g. `amdgcn-amd-amdhsa--gfx90a:xnack-`.
    pub target: Option<String>,
    /// `amdhsa.printf`: OpenCL printf format descriptors.
    pub printf: Vec<String>,
    /// `amdhsa.kernels`.
    pub kernels: Vec<KernelMetadata>,
}

/// `.kind` of a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum KernelKind {
    /// An ordinary kernel.
    #[default]
    Normal,
    /// Runs after loading, before any normal kernel.
    Init,
    /// Runs before unloading.
    Fini,
}

impl KernelKind {
    fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "normal" => Self::Normal,
            "init" => Self::Init,
            "fini" => Self::Fini,
            _ => return None,
        })
    }

    /// The metadata spelling.
    pub fn name(self) -> &'static str {
        match self {
            Self::Normal => "normal",
            Self::Init => "init",
            Self::Fini => "fini",
        }
    }
}

/// One entry of `amdhsa.kernels`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelMetadata {
    /// `.name`: the source name.
    pub name: String,
    /// `.symbol`: the kernel descriptor's symbol, e.g. `add.kd`.
    pub symbol: String,
    /// `.language`, e.g. `OpenCL C`, `HIP`.
    pub language: Option<String>,
    /// `.language_version`.
    pub language_version: Option<Vec<u32>>,
    /// `.args`.
    pub args: Vec<KernelArg>,
    /// `.reqd_workgroup_size`.
    pub reqd_workgroup_size: Option<[u32; 3]>,
    /// `.workgroup_size_hint`.
    pub workgroup_size_hint: Option<[u32; 3]>,
    /// `.vec_type_hint`.
    pub vec_type_hint: Option<String>,
    /// `.device_enqueue_symbol`.
    pub device_enqueue_symbol: Option<String>,
    /// `.kernarg_segment_size`: bytes of kernarg segment, explicit and hidden.
    pub kernarg_segment_size: u32,
    /// `.group_segment_fixed_size`: static LDS bytes.
    pub group_segment_fixed_size: u32,
    /// `.private_segment_fixed_size`: scratch bytes per work-item.
    pub private_segment_fixed_size: u32,
    /// `.kernarg_segment_align`: a power of two.
    pub kernarg_segment_align: u32,
    /// `.wavefront_size`.
    pub wavefront_size: u32,
    /// `.sgpr_count`.
    pub sgpr_count: u32,
    /// `.vgpr_count`.
    pub vgpr_count: u32,
    /// `.agpr_count` (gfx908, gfx90a, gfx94x).
    pub agpr_count: Option<u32>,
    /// `.max_flat_workgroup_size`.
    pub max_flat_workgroup_size: u32,
    /// `.sgpr_spill_count`.
    pub sgpr_spill_count: Option<u32>,
    /// `.vgpr_spill_count`.
    pub vgpr_spill_count: Option<u32>,
    /// `.kind`.
    pub kind: KernelKind,
    /// `.max_num_work_groups_x`, `_y`, `_z`.
    pub max_num_work_groups: [Option<u32>; 3],
    /// `.uses_dynamic_stack` (V5+).
    pub uses_dynamic_stack: Option<bool>,
    /// `.workgroup_processor_mode` (V5+).
    pub workgroup_processor_mode: Option<bool>,
    /// `.uniform_work_group_size` (V5+; emitted only when 1).
    pub uniform_work_group_size: Option<bool>,
    /// `.cluster_dims` (V6).
    pub cluster_dims: Option<[u32; 3]>,
}

/// One entry of a kernel's `.args`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelArg {
    /// `.name`.
    pub name: Option<String>,
    /// `.type_name`.
    pub type_name: Option<String>,
    /// `.size` in bytes.
    pub size: u32,
    /// `.offset` in the kernarg segment.
    pub offset: u32,
    /// `.value_kind`.
    pub value_kind: ValueKind,
    /// `.value_type` (deprecated).
    pub value_type: Option<String>,
    /// `.pointee_align` (dynamic shared pointers).
    pub pointee_align: Option<u32>,
    /// `.address_space`.
    pub address_space: Option<AddressSpace>,
    /// `.access`.
    pub access: Option<Access>,
    /// `.actual_access`.
    pub actual_access: Option<Access>,
    /// `.is_const`.
    pub is_const: bool,
    /// `.is_restrict`.
    pub is_restrict: bool,
    /// `.is_volatile`.
    pub is_volatile: bool,
    /// `.is_pipe`.
    pub is_pipe: bool,
}

/// `.value_kind` of an argument.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum ValueKind {
    /// `by_value`: the bytes themselves.
    #[default]
    ByValue,
    /// `global_buffer`: a device pointer.
    GlobalBuffer,
    /// `dynamic_shared_pointer`: the group-segment offset of dynamic LDS.
    DynamicSharedPointer,
    /// `sampler`: an S# pointer.
    Sampler,
    /// `image`: a T# pointer.
    Image,
    /// `pipe`.
    Pipe,
    /// `queue`: a device-enqueue queue.
    Queue,
    /// A `hidden_*` argument the runtime fills.
    Hidden(HiddenArg),
    /// A kind this loader does not know (a newer LLVM's).
    Unknown(String),
}

/// The hidden (implicit) argument kinds (code-objects.md §6.4, §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HiddenArg {
    /// `hidden_none`: space only.
    None,
    /// `hidden_global_offset_x`.
    GlobalOffsetX,
    /// `hidden_global_offset_y`.
    GlobalOffsetY,
    /// `hidden_global_offset_z`.
    GlobalOffsetZ,
    /// `hidden_block_count_x`.
    BlockCountX,
    /// `hidden_block_count_y`.
    BlockCountY,
    /// `hidden_block_count_z`.
    BlockCountZ,
    /// `hidden_group_size_x`.
    GroupSizeX,
    /// `hidden_group_size_y`.
    GroupSizeY,
    /// `hidden_group_size_z`.
    GroupSizeZ,
    /// `hidden_remainder_x`.
    RemainderX,
    /// `hidden_remainder_y`.
    RemainderY,
    /// `hidden_remainder_z`.
    RemainderZ,
    /// `hidden_grid_dims`.
    GridDims,
    /// `hidden_printf_buffer`.
    PrintfBuffer,
    /// `hidden_hostcall_buffer`.
    HostcallBuffer,
    /// `hidden_heap_v1`.
    HeapV1,
    /// `hidden_default_queue`.
    DefaultQueue,
    /// `hidden_completion_action`.
    CompletionAction,
    /// `hidden_multigrid_sync_arg`.
    MultigridSyncArg,
    /// `hidden_dynamic_lds_size`.
    DynamicLdsSize,
    /// `hidden_private_base`.
    PrivateBase,
    /// `hidden_shared_base`.
    SharedBase,
    /// `hidden_queue_ptr`.
    QueuePtr,
}

const HIDDEN_NAMES: &[(&str, HiddenArg)] = &[
    ("hidden_none", HiddenArg::None),
    ("hidden_global_offset_x", HiddenArg::GlobalOffsetX),
    ("hidden_global_offset_y", HiddenArg::GlobalOffsetY),
    ("hidden_global_offset_z", HiddenArg::GlobalOffsetZ),
    ("hidden_block_count_x", HiddenArg::BlockCountX),
    ("hidden_block_count_y", HiddenArg::BlockCountY),
    ("hidden_block_count_z", HiddenArg::BlockCountZ),
    ("hidden_group_size_x", HiddenArg::GroupSizeX),
    ("hidden_group_size_y", HiddenArg::GroupSizeY),
    ("hidden_group_size_z", HiddenArg::GroupSizeZ),
    ("hidden_remainder_x", HiddenArg::RemainderX),
    ("hidden_remainder_y", HiddenArg::RemainderY),
    ("hidden_remainder_z", HiddenArg::RemainderZ),
    ("hidden_grid_dims", HiddenArg::GridDims),
    ("hidden_printf_buffer", HiddenArg::PrintfBuffer),
    ("hidden_hostcall_buffer", HiddenArg::HostcallBuffer),
    ("hidden_heap_v1", HiddenArg::HeapV1),
    ("hidden_default_queue", HiddenArg::DefaultQueue),
    ("hidden_completion_action", HiddenArg::CompletionAction),
    ("hidden_multigrid_sync_arg", HiddenArg::MultigridSyncArg),
    ("hidden_dynamic_lds_size", HiddenArg::DynamicLdsSize),
    ("hidden_private_base", HiddenArg::PrivateBase),
    ("hidden_shared_base", HiddenArg::SharedBase),
    ("hidden_queue_ptr", HiddenArg::QueuePtr),
];

impl HiddenArg {
    /// The metadata spelling, e.g. `hidden_block_count_x`.
    pub fn name(self) -> &'static str {
        HIDDEN_NAMES
            .iter()
            .find(|(_, kind)| *kind == self)
            .map_or("hidden_none", |(name, _)| name)
    }

    /// The kind spelled `name` (e.g. `hidden_block_count_x`).
    pub fn from_name(name: &str) -> Option<Self> {
        use HiddenArg as H;
        Some(match name {
            "hidden_none" => H::None,
            "hidden_global_offset_x" => H::GlobalOffsetX,
            "hidden_global_offset_y" => H::GlobalOffsetY,
            "hidden_global_offset_z" => H::GlobalOffsetZ,
            "hidden_block_count_x" => H::BlockCountX,
            "hidden_block_count_y" => H::BlockCountY,
            "hidden_block_count_z" => H::BlockCountZ,
            "hidden_group_size_x" => H::GroupSizeX,
            "hidden_group_size_y" => H::GroupSizeY,
            "hidden_group_size_z" => H::GroupSizeZ,
            "hidden_remainder_x" => H::RemainderX,
            "hidden_remainder_y" => H::RemainderY,
            "hidden_remainder_z" => H::RemainderZ,
            "hidden_grid_dims" => H::GridDims,
            "hidden_printf_buffer" => H::PrintfBuffer,
            "hidden_hostcall_buffer" => H::HostcallBuffer,
            "hidden_heap_v1" => H::HeapV1,
            "hidden_default_queue" => H::DefaultQueue,
            "hidden_completion_action" => H::CompletionAction,
            "hidden_multigrid_sync_arg" => H::MultigridSyncArg,
            "hidden_dynamic_lds_size" => H::DynamicLdsSize,
            "hidden_private_base" => H::PrivateBase,
            "hidden_shared_base" => H::SharedBase,
            "hidden_queue_ptr" => H::QueuePtr,
            _ => return None,
        })
    }

    /// Every hidden kind.
    pub fn all() -> impl Iterator<Item = HiddenArg> {
        HIDDEN_NAMES.iter().map(|(_, kind)| *kind)
    }
}

impl ValueKind {
    /// Read a `.value_kind` string.
    pub fn from_name(name: &str) -> Self {
        match name {
            "by_value" => Self::ByValue,
            "global_buffer" => Self::GlobalBuffer,
            "dynamic_shared_pointer" => Self::DynamicSharedPointer,
            "sampler" => Self::Sampler,
            "image" => Self::Image,
            "pipe" => Self::Pipe,
            "queue" => Self::Queue,
            _ => HiddenArg::from_name(name)
                .map_or_else(|| Self::Unknown(name.to_owned()), Self::Hidden),
        }
    }

    /// The metadata spelling.
    pub fn name(&self) -> &str {
        match self {
            Self::ByValue => "by_value",
            Self::GlobalBuffer => "global_buffer",
            Self::DynamicSharedPointer => "dynamic_shared_pointer",
            Self::Sampler => "sampler",
            Self::Image => "image",
            Self::Pipe => "pipe",
            Self::Queue => "queue",
            Self::Hidden(kind) => kind.name(),
            Self::Unknown(name) => name,
        }
    }

    /// Whether the runtime, not the caller, supplies this argument.
    pub fn is_hidden(&self) -> bool {
        matches!(self, Self::Hidden(_))
    }
}

/// `.address_space` of a pointer argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressSpace {
    /// `private`.
    Private,
    /// `global`.
    Global,
    /// `constant`.
    Constant,
    /// `local`.
    Local,
    /// `generic`.
    Generic,
    /// `region`.
    Region,
}

impl AddressSpace {
    fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "private" => Self::Private,
            "global" => Self::Global,
            "constant" => Self::Constant,
            "local" => Self::Local,
            "generic" => Self::Generic,
            "region" => Self::Region,
            _ => return None,
        })
    }

    /// The metadata spelling.
    pub fn name(self) -> &'static str {
        match self {
            Self::Private => "private",
            Self::Global => "global",
            Self::Constant => "constant",
            Self::Local => "local",
            Self::Generic => "generic",
            Self::Region => "region",
        }
    }
}

/// `.access` / `.actual_access`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// `read_only`.
    ReadOnly,
    /// `write_only`.
    WriteOnly,
    /// `read_write`.
    ReadWrite,
}

impl Access {
    fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "read_only" => Self::ReadOnly,
            "write_only" => Self::WriteOnly,
            "read_write" => Self::ReadWrite,
            _ => return None,
        })
    }

    /// The metadata spelling.
    pub fn name(self) -> &'static str {
        match self {
            Self::ReadOnly => "read_only",
            Self::WriteOnly => "write_only",
            Self::ReadWrite => "read_write",
        }
    }
}

/// Where in the metadata a value is, for error messages.
struct Place<'k> {
    kernel: Option<&'k str>,
    arg: Option<usize>,
    key: &'k [u8],
}

impl Place<'_> {
    fn err(&self, detail: impl std::fmt::Display) -> DecodeError {
        let kernel = self
            .kernel
            .map(|k| format!("kernel `{k}`: "))
            .unwrap_or_default();
        let arg = self
            .arg
            .map(|a| format!("argument {a}: "))
            .unwrap_or_default();
        format!(
            "{kernel}{arg}key `{}`: {detail}",
            String::from_utf8_lossy(self.key)
        )
    }
}

fn expect_uint(r: &mut Reader<'_>, place: &Place<'_>) -> Result<u64, DecodeError> {
    match r.item()? {
        Item::Uint(v) => Ok(v),
        Item::Int(v) if v >= 0 => Ok(v as u64),
        other => Err(place.err(format!(
            "expected a non-negative integer, found {}",
            other.type_name()
        ))),
    }
}

fn expect_u32(r: &mut Reader<'_>, place: &Place<'_>) -> Result<u32, DecodeError> {
    let v = expect_uint(r, place)?;
    u32::try_from(v).map_err(|_| place.err(format!("{v} does not fit in 32 bits")))
}

fn expect_bool(r: &mut Reader<'_>, place: &Place<'_>) -> Result<bool, DecodeError> {
    match r.item()? {
        Item::Bool(v) => Ok(v),
        Item::Uint(0) => Ok(false),
        Item::Uint(1) => Ok(true),
        other => Err(place.err(format!("expected a boolean, found {}", other.type_name()))),
    }
}

/// A string, checked to be UTF-8.
fn expect_str<'a>(r: &mut Reader<'a>, place: &Place<'_>) -> Result<&'a str, DecodeError> {
    let bytes = expect_key(r, place)?;
    std::str::from_utf8(bytes).map_err(|_| place.err("the string is not UTF-8"))
}

/// A string's bytes: map keys, matched against known ASCII names without decoding them.
fn expect_key<'a>(r: &mut Reader<'a>, place: &Place<'_>) -> Result<&'a [u8], DecodeError> {
    match r.item()? {
        Item::Str(s) => Ok(s),
        other => Err(place.err(format!("expected a string, found {}", other.type_name()))),
    }
}

fn expect_array(r: &mut Reader<'_>, place: &Place<'_>) -> Result<u32, DecodeError> {
    match r.item()? {
        Item::Array(n) => {
            r.plausible_count(n, 1)?;
            Ok(n)
        }
        other => Err(place.err(format!("expected an array, found {}", other.type_name()))),
    }
}

fn expect_map(r: &mut Reader<'_>, place: &Place<'_>) -> Result<u32, DecodeError> {
    match r.item()? {
        Item::Map(n) => {
            r.plausible_count(n, 2)?;
            Ok(n)
        }
        other => Err(place.err(format!("expected a map, found {}", other.type_name()))),
    }
}

fn expect_u32_list(r: &mut Reader<'_>, place: &Place<'_>) -> Result<Vec<u32>, DecodeError> {
    let n = expect_array(r, place)?;
    (0..n).map(|_| expect_u32(r, place)).collect()
}

fn expect_dims(r: &mut Reader<'_>, place: &Place<'_>) -> Result<[u32; 3], DecodeError> {
    let list = expect_u32_list(r, place)?;
    <[u32; 3]>::try_from(list.as_slice())
        .map_err(|_| place.err(format!("expected 3 integers, found {}", list.len())))
}

fn expect_named<T>(
    r: &mut Reader<'_>,
    place: &Place<'_>,
    parse: fn(&str) -> Option<T>,
) -> Result<T, DecodeError> {
    let text = expect_str(r, place)?;
    parse(text).ok_or_else(|| place.err(format!("unknown value `{text}`")))
}

impl Metadata {
    /// Decode one metadata note's payload.
    pub fn from_msgpack(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut metadata = Self::default();
        metadata.merge_msgpack(bytes)?;
        Ok(metadata)
    }

    /// Decode another metadata note into this one, as comgr merges several notes: kernels and
    /// printf strings are appended; `amdhsa.version` and `amdhsa.target` must agree.
    pub fn merge_msgpack(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let mut r = Reader::new(bytes);
        let root = Place {
            kernel: None,
            arg: None,
            key: b"(root)",
        };
        let entries = expect_map(&mut r, &root)?;
        for _ in 0..entries {
            let key = expect_key(&mut r, &root)?;
            let place = Place {
                kernel: None,
                arg: None,
                key,
            };
            match key {
                b"amdhsa.version" => {
                    let list = expect_u32_list(&mut r, &place)?;
                    let [major, minor] = <[u32; 2]>::try_from(list.as_slice())
                        .map_err(|_| place.err("expected [major, minor]"))?;
                    if self.version.is_some_and(|v| v != (major, minor)) {
                        return Err(place.err("two notes disagree"));
                    }
                    self.version = Some((major, minor));
                }
                b"amdhsa.target" => {
                    let target = expect_str(&mut r, &place)?;
                    if self.target.as_deref().is_some_and(|t| t != target) {
                        return Err(place.err("two notes disagree"));
                    }
                    self.target = Some(target.to_owned());
                }
                b"amdhsa.printf" => {
                    let n = expect_array(&mut r, &place)?;
                    for _ in 0..n {
                        self.printf.push(expect_str(&mut r, &place)?.to_owned());
                    }
                }
                b"amdhsa.kernels" => {
                    let n = expect_array(&mut r, &place)?;
                    self.kernels.reserve(n as usize);
                    for _ in 0..n {
                        self.kernels.push(KernelMetadata::decode(&mut r)?);
                    }
                }
                _ => r.skip_value(1)?,
            }
        }
        match self.version {
            Some((major, _)) if major != 1 => Err(format!(
                "amdhsa.version {major}.x is not the 1.x this loader reads"
            )),
            _ => Ok(()),
        }
    }
}

impl KernelMetadata {
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let outer = Place {
            kernel: None,
            arg: None,
            key: b"amdhsa.kernels",
        };
        let entries = expect_map(r, &outer)?;
        let mut k = Self::default();
        let mut seen = Required::default();
        // The name is usually not the first key: errors before it say "kernel ?".
        for _ in 0..entries {
            let key = expect_key(r, &outer)?;
            let kernel_name = if k.name.is_empty() { "?" } else { &k.name };
            let place = Place {
                kernel: Some(kernel_name),
                arg: None,
                key,
            };
            match key {
                b".name" => {
                    k.name = expect_str(r, &place)?.to_owned();
                    seen.name = true;
                }
                b".symbol" => {
                    k.symbol = expect_str(r, &place)?.to_owned();
                    seen.symbol = true;
                }
                b".language" => k.language = Some(expect_str(r, &place)?.to_owned()),
                b".language_version" => k.language_version = Some(expect_u32_list(r, &place)?),
                b".args" => {
                    let n = expect_array(r, &place)?;
                    let mut args = Vec::with_capacity(n as usize);
                    for index in 0..n as usize {
                        args.push(KernelArg::decode(r, kernel_name, index)?);
                    }
                    k.args = args;
                }
                b".reqd_workgroup_size" => k.reqd_workgroup_size = Some(expect_dims(r, &place)?),
                b".workgroup_size_hint" => k.workgroup_size_hint = Some(expect_dims(r, &place)?),
                b".vec_type_hint" => k.vec_type_hint = Some(expect_str(r, &place)?.to_owned()),
                b".device_enqueue_symbol" => {
                    k.device_enqueue_symbol = Some(expect_str(r, &place)?.to_owned());
                }
                b".kernarg_segment_size" => {
                    k.kernarg_segment_size = expect_u32(r, &place)?;
                    seen.kernarg_segment_size = true;
                }
                b".group_segment_fixed_size" => {
                    k.group_segment_fixed_size = expect_u32(r, &place)?;
                    seen.group_segment_fixed_size = true;
                }
                b".private_segment_fixed_size" => {
                    k.private_segment_fixed_size = expect_u32(r, &place)?;
                    seen.private_segment_fixed_size = true;
                }
                b".kernarg_segment_align" => {
                    let align = expect_u32(r, &place)?;
                    if !align.is_power_of_two() {
                        return Err(place.err(format!("{align} is not a power of two")));
                    }
                    k.kernarg_segment_align = align;
                    seen.kernarg_segment_align = true;
                }
                b".wavefront_size" => {
                    let size = expect_u32(r, &place)?;
                    if size != 32 && size != 64 {
                        return Err(place.err(format!("{size} is neither 32 nor 64")));
                    }
                    k.wavefront_size = size;
                    seen.wavefront_size = true;
                }
                b".sgpr_count" => {
                    k.sgpr_count = expect_u32(r, &place)?;
                    seen.sgpr_count = true;
                }
                b".vgpr_count" => {
                    k.vgpr_count = expect_u32(r, &place)?;
                    seen.vgpr_count = true;
                }
                b".agpr_count" => k.agpr_count = Some(expect_u32(r, &place)?),
                b".max_flat_workgroup_size" => {
                    k.max_flat_workgroup_size = expect_u32(r, &place)?;
                    seen.max_flat_workgroup_size = true;
                }
                b".sgpr_spill_count" => k.sgpr_spill_count = Some(expect_u32(r, &place)?),
                b".vgpr_spill_count" => k.vgpr_spill_count = Some(expect_u32(r, &place)?),
                b".kind" => {
                    k.kind = expect_named(r, &place, KernelKind::from_name)?;
                }
                b".max_num_work_groups_x" => {
                    k.max_num_work_groups[0] = Some(expect_u32(r, &place)?);
                }
                b".max_num_work_groups_y" => {
                    k.max_num_work_groups[1] = Some(expect_u32(r, &place)?);
                }
                b".max_num_work_groups_z" => {
                    k.max_num_work_groups[2] = Some(expect_u32(r, &place)?);
                }
                b".uses_dynamic_stack" => k.uses_dynamic_stack = Some(expect_bool(r, &place)?),
                b".workgroup_processor_mode" => {
                    k.workgroup_processor_mode = Some(expect_bool(r, &place)?);
                }
                b".uniform_work_group_size" => {
                    k.uniform_work_group_size = Some(expect_bool(r, &place)?);
                }
                b".cluster_dims" => k.cluster_dims = Some(expect_dims(r, &place)?),
                _ => r.skip_value(3)?,
            }
        }
        seen.check(&k.name)?;
        Ok(k)
    }
}

#[derive(Default)]
struct Required {
    name: bool,
    symbol: bool,
    kernarg_segment_size: bool,
    group_segment_fixed_size: bool,
    private_segment_fixed_size: bool,
    kernarg_segment_align: bool,
    wavefront_size: bool,
    sgpr_count: bool,
    vgpr_count: bool,
    max_flat_workgroup_size: bool,
}

impl Required {
    fn check(&self, kernel: &str) -> Result<(), DecodeError> {
        let keys = [
            (self.name, ".name"),
            (self.symbol, ".symbol"),
            (self.kernarg_segment_size, ".kernarg_segment_size"),
            (self.group_segment_fixed_size, ".group_segment_fixed_size"),
            (
                self.private_segment_fixed_size,
                ".private_segment_fixed_size",
            ),
            (self.kernarg_segment_align, ".kernarg_segment_align"),
            (self.wavefront_size, ".wavefront_size"),
            (self.sgpr_count, ".sgpr_count"),
            (self.vgpr_count, ".vgpr_count"),
            (self.max_flat_workgroup_size, ".max_flat_workgroup_size"),
        ];
        match keys.iter().find(|(present, _)| !present) {
            Some((_, key)) => Err(format!(
                "kernel `{}`: required key `{key}` is missing",
                if kernel.is_empty() { "?" } else { kernel }
            )),
            None => Ok(()),
        }
    }
}

impl KernelArg {
    fn decode(r: &mut Reader<'_>, kernel: &str, index: usize) -> Result<Self, DecodeError> {
        let outer = Place {
            kernel: Some(kernel),
            arg: Some(index),
            key: b".args",
        };
        let entries = expect_map(r, &outer)?;
        let mut a = Self::default();
        let (mut has_size, mut has_offset, mut has_kind) = (false, false, false);
        for _ in 0..entries {
            let key = expect_key(r, &outer)?;
            let place = Place {
                kernel: Some(kernel),
                arg: Some(index),
                key,
            };
            match key {
                // The keys every argument has first.
                b".offset" => {
                    a.offset = expect_u32(r, &place)?;
                    has_offset = true;
                }
                b".size" => {
                    a.size = expect_u32(r, &place)?;
                    has_size = true;
                }
                b".value_kind" => {
                    a.value_kind = ValueKind::from_name(expect_str(r, &place)?);
                    has_kind = true;
                }
                b".name" => a.name = Some(expect_str(r, &place)?.to_owned()),
                b".type_name" => a.type_name = Some(expect_str(r, &place)?.to_owned()),
                b".value_type" => a.value_type = Some(expect_str(r, &place)?.to_owned()),
                b".pointee_align" => a.pointee_align = Some(expect_u32(r, &place)?),
                b".address_space" => {
                    a.address_space = Some(expect_named(r, &place, AddressSpace::from_name)?);
                }
                b".access" => a.access = Some(expect_named(r, &place, Access::from_name)?),
                b".actual_access" => {
                    a.actual_access = Some(expect_named(r, &place, Access::from_name)?);
                }
                b".is_const" => a.is_const = expect_bool(r, &place)?,
                b".is_restrict" => a.is_restrict = expect_bool(r, &place)?,
                b".is_volatile" => a.is_volatile = expect_bool(r, &place)?,
                b".is_pipe" => a.is_pipe = expect_bool(r, &place)?,
                _ => r.skip_value(5)?,
            }
        }
        for (present, key) in [
            (has_size, ".size"),
            (has_offset, ".offset"),
            (has_kind, ".value_kind"),
        ] {
            if !present {
                return Err(format!(
                    "kernel `{kernel}`: argument {index}: required key `{key}` is missing"
                ));
            }
        }
        Ok(a)
    }

    /// The end of the argument in the kernarg segment (`offset + size`).
    pub fn end(&self) -> u64 {
        u64::from(self.offset) + u64::from(self.size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_names_round_trip() {
        for kind in HiddenArg::all() {
            assert_eq!(HiddenArg::from_name(kind.name()), Some(kind));
            assert_eq!(ValueKind::from_name(kind.name()), ValueKind::Hidden(kind));
        }
        assert_eq!(HiddenArg::all().count(), 24);
        assert_eq!(
            ValueKind::from_name("hidden_future"),
            ValueKind::Unknown("hidden_future".into())
        );
        for kind in [KernelKind::Normal, KernelKind::Init, KernelKind::Fini] {
            assert_eq!(KernelKind::from_name(kind.name()), Some(kind));
        }
    }

    fn kernel_map(buf: &mut Vec<u8>, extra: &[(&str, u64)]) {
        use rmp::encode as e;
        let keys: [(&str, u64); 8] = [
            (".kernarg_segment_size", 8),
            (".group_segment_fixed_size", 0),
            (".private_segment_fixed_size", 0),
            (".kernarg_segment_align", 8),
            (".wavefront_size", 64),
            (".sgpr_count", 8),
            (".vgpr_count", 4),
            (".max_flat_workgroup_size", 256),
        ];
        e::write_map_len(buf, 2 + (keys.len() + extra.len()) as u32).unwrap();
        for (k, v) in [(".name", "k"), (".symbol", "k.kd")] {
            e::write_str(buf, k).unwrap();
            e::write_str(buf, v).unwrap();
        }
        for (k, v) in keys.iter().chain(extra) {
            e::write_str(buf, k).unwrap();
            e::write_uint(buf, *v).unwrap();
        }
    }

    fn kernels_only(extra: &[(&str, u64)]) -> Vec<u8> {
        use rmp::encode as e;
        let mut buf = Vec::new();
        e::write_map_len(&mut buf, 1).unwrap();
        e::write_str(&mut buf, "amdhsa.kernels").unwrap();
        e::write_array_len(&mut buf, 1).unwrap();
        kernel_map(&mut buf, extra);
        buf
    }

    #[test]
    fn unknown_keys_are_skipped_and_wrong_types_refused() {
        use rmp::encode as e;
        let mut buf = Vec::new();
        e::write_map_len(&mut buf, 3).unwrap();
        e::write_str(&mut buf, "vendor.extension").unwrap();
        e::write_map_len(&mut buf, 1).unwrap();
        e::write_str(&mut buf, "nested").unwrap();
        e::write_array_len(&mut buf, 2).unwrap();
        e::write_f64(&mut buf, 1.5).unwrap();
        e::write_nil(&mut buf).unwrap();
        e::write_str(&mut buf, "amdhsa.version").unwrap();
        e::write_array_len(&mut buf, 2).unwrap();
        e::write_uint(&mut buf, 1).unwrap();
        e::write_uint(&mut buf, 2).unwrap();
        e::write_str(&mut buf, "amdhsa.kernels").unwrap();
        e::write_array_len(&mut buf, 1).unwrap();
        kernel_map(&mut buf, &[(".vendor.future_key", 7)]);
        let m = Metadata::from_msgpack(&buf).unwrap();
        assert_eq!(m.version, Some((1, 2)));
        assert_eq!(m.kernels[0].name, "k");
        assert_eq!(m.kernels[0].max_flat_workgroup_size, 256);
        // A bad alignment, a wave size that does not exist.
        let err = Metadata::from_msgpack(&kernels_only(&[(".kernarg_segment_align", 12)]));
        assert!(err.unwrap_err().contains("power of two"));
        let err = Metadata::from_msgpack(&kernels_only(&[(".wavefront_size", 48)]));
        assert!(err.unwrap_err().contains("neither 32 nor 64"));
        // A missing required key.
        let mut missing = Vec::new();
        e::write_map_len(&mut missing, 1).unwrap();
        e::write_str(&mut missing, "amdhsa.kernels").unwrap();
        e::write_array_len(&mut missing, 1).unwrap();
        e::write_map_len(&mut missing, 1).unwrap();
        e::write_str(&mut missing, ".name").unwrap();
        e::write_str(&mut missing, "k").unwrap();
        let err = Metadata::from_msgpack(&missing).unwrap_err();
        assert!(err.contains("required key `.symbol`"), "{err}");
        // A known key with the wrong type.
        let mut version = Vec::new();
        e::write_map_len(&mut version, 1).unwrap();
        e::write_str(&mut version, "amdhsa.version").unwrap();
        e::write_str(&mut version, "1.2").unwrap();
        let err = Metadata::from_msgpack(&version).unwrap_err();
        assert!(
            err.contains("amdhsa.version") && err.contains("expected an array"),
            "{err}"
        );
    }
}
