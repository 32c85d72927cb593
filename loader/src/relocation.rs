//! Dynamic relocations (code-objects.md §3): read and checked once when a code object is parsed,
//! applied to every image it is loaded into. The set a loadable object may carry is
//! {NONE, ABS32_LO, ABS32_HI, ABS64, ABS32, RELATIVE64}; the static-only types are refused.
//! An undefined symbol is resolved from the caller's external definitions or is an error, never
//! silently its addend (unlike ROCr's `S+A == 0` test).

use std::collections::HashMap;

use object::LittleEndian as LE;
use object::elf::Rela64;
use object::read::ReadRef as _;

use crate::dynamic::RELA_ENTRY_SIZE;
use crate::error::{Error, Result};
use crate::segment::ImageLayout;
use crate::symbol::{
    STB_LOCAL, STB_WEAK, STT_AMDGPU_HSA_KERNEL, STT_COMMON, STT_FUNC, STT_NOTYPE, STT_OBJECT,
    STT_SECTION, Symbol,
};

/// A relocation type (`R_AMDGPU_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RelocationKind {
    /// `R_AMDGPU_NONE` (0): padding.
    None,
    /// `R_AMDGPU_ABS32_LO` (1): `(S + A) & 0xffffffff`.
    Abs32Lo,
    /// `R_AMDGPU_ABS32_HI` (2): `(S + A) >> 32`.
    Abs32Hi,
    /// `R_AMDGPU_ABS64` (3): `S + A`.
    Abs64,
    /// `R_AMDGPU_ABS32` (6): `S + A`, which must fit in 32 bits.
    Abs32,
    /// `R_AMDGPU_RELATIVE64` (13): `B + A`.
    Relative64,
}

impl RelocationKind {
    /// The type for `r_type`, or an error for the static-only and unknown types.
    pub fn from_r_type(r_type: u32) -> std::result::Result<Self, String> {
        Ok(match r_type {
            0 => Self::None,
            1 => Self::Abs32Lo,
            2 => Self::Abs32Hi,
            3 => Self::Abs64,
            6 => Self::Abs32,
            13 => Self::Relative64,
            4 | 5 | 7..=11 | 14 => {
                return Err(format!(
                    "{} is a static relocation that the linker resolves; it cannot be applied at load time",
                    r_type_name(r_type)
                ));
            }
            _ => return Err(format!("unknown relocation type {r_type}")),
        })
    }

    /// The `r_type` number.
    pub fn r_type(self) -> u32 {
        match self {
            Self::None => 0,
            Self::Abs32Lo => 1,
            Self::Abs32Hi => 2,
            Self::Abs64 => 3,
            Self::Abs32 => 6,
            Self::Relative64 => 13,
        }
    }

    /// The name `llvm-readelf` prints.
    pub fn name(self) -> &'static str {
        r_type_name(self.r_type())
    }

    /// Bytes the relocation writes.
    pub fn width(self) -> u64 {
        match self {
            Self::None => 0,
            Self::Abs64 | Self::Relative64 => 8,
            Self::Abs32Lo | Self::Abs32Hi | Self::Abs32 => 4,
        }
    }
}

/// The `R_AMDGPU_*` name of a relocation type number.
pub fn r_type_name(r_type: u32) -> &'static str {
    match r_type {
        0 => "R_AMDGPU_NONE",
        1 => "R_AMDGPU_ABS32_LO",
        2 => "R_AMDGPU_ABS32_HI",
        3 => "R_AMDGPU_ABS64",
        4 => "R_AMDGPU_REL32",
        5 => "R_AMDGPU_REL64",
        6 => "R_AMDGPU_ABS32",
        7 => "R_AMDGPU_GOTPCREL",
        8 => "R_AMDGPU_GOTPCREL32_LO",
        9 => "R_AMDGPU_GOTPCREL32_HI",
        10 => "R_AMDGPU_REL32_LO",
        11 => "R_AMDGPU_REL32_HI",
        13 => "R_AMDGPU_RELATIVE64",
        14 => "R_AMDGPU_REL16",
        _ => "R_AMDGPU_UNKNOWN",
    }
}

/// One dynamic relocation as the file states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Relocation {
    /// `r_offset`: the virtual address of the place.
    pub offset: u64,
    /// The type.
    pub kind: RelocationKind,
    /// The `.dynsym` index of the symbol (0: none).
    pub symbol: u32,
    /// `r_addend`.
    pub addend: i64,
}

/// What a relocation's `S` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// No symbol: `S = 0`.
    Zero,
    /// A symbol defined in this object at this virtual address (no interposition, as ROCr).
    Defined(u64),
    /// An absolute symbol (`SHN_ABS`).
    Absolute(u64),
    /// An undefined symbol: index into the external names.
    External(u32),
}

#[derive(Debug, Clone, Copy)]
struct Prepared {
    place: u64,
    kind: RelocationKind,
    target: Target,
    addend: i64,
    index: u32,
}

/// An undefined symbol the relocations need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalReference {
    /// The symbol's name.
    pub name: String,
    /// Whether it is weak (resolves to 0 when nobody defines it, as ELF specifies).
    pub weak: bool,
    /// The first relocation that refers to it.
    pub first_use: usize,
}

/// The checked relocations of one code object, ready to apply.
#[derive(Debug, Clone, Default)]
pub struct RelocationPlan {
    relocations: Vec<Relocation>,
    prepared: Vec<Prepared>,
    externals: Vec<ExternalReference>,
}

/// The caller's definitions of symbols a code object leaves undefined (host-defined variables,
/// or the exports of code objects loaded before it).
pub trait ExternalSymbols {
    /// The GPU address of `name`, if defined.
    fn resolve(&self, name: &str) -> Option<u64>;
}

/// No external definitions.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoExternals;

impl ExternalSymbols for NoExternals {
    fn resolve(&self, _: &str) -> Option<u64> {
        None
    }
}

impl<S: std::hash::BuildHasher> ExternalSymbols for HashMap<String, u64, S> {
    fn resolve(&self, name: &str) -> Option<u64> {
        self.get(name).copied()
    }
}

impl ExternalSymbols for std::collections::BTreeMap<String, u64> {
    fn resolve(&self, name: &str) -> Option<u64> {
        self.get(name).copied()
    }
}

impl<F: Fn(&str) -> Option<u64>> ExternalSymbols for F {
    fn resolve(&self, name: &str) -> Option<u64> {
        self(name)
    }
}

impl RelocationPlan {
    /// Read and check `count` relocations from `bytes` against `symbols` (`.dynsym`).
    pub(crate) fn parse(
        tables: &[&[u8]],
        symbols: &[Symbol<'_>],
        layout: &ImageLayout,
    ) -> Result<Self> {
        let mut raw: Vec<&Rela64<LE>> = Vec::new();
        for bytes in tables {
            let count = bytes.len() as u64 / RELA_ENTRY_SIZE;
            let entries: &[Rela64<LE>] = bytes
                .read_slice_at(0, count as usize)
                .map_err(|()| Error::malformed("dynamic relocations", "cannot read entries"))?;
            raw.extend(entries);
        }
        let mut plan = Self {
            relocations: Vec::with_capacity(raw.len()),
            prepared: Vec::with_capacity(raw.len()),
            externals: Vec::new(),
        };
        let mut external_index: HashMap<&str, u32> = HashMap::new();
        for (index, rela) in raw.iter().enumerate() {
            let offset = rela.r_offset.get(LE);
            let info = rela.r_info.get(LE);
            let r_type = info as u32;
            let symbol = (info >> 32) as u32;
            let addend = rela.r_addend.get(LE);
            let fail = |detail: String| Error::Relocation {
                index,
                kind: r_type_name(r_type).to_owned(),
                offset,
                detail,
            };
            let kind = RelocationKind::from_r_type(r_type).map_err(&fail)?;
            plan.relocations.push(Relocation {
                offset,
                kind,
                symbol,
                addend,
            });
            if kind == RelocationKind::None {
                continue;
            }
            let place = layout.offset_of(offset, kind.width()).ok_or_else(|| {
                fail(format!(
                    "the place lies outside the image {:#x}..+{:#x}",
                    layout.start_vaddr, layout.size
                ))
            })?;
            let sym = symbols.get(symbol as usize).ok_or_else(|| {
                fail(format!(
                    "symbol index {symbol} is beyond .dynsym's {} entries",
                    symbols.len()
                ))
            })?;
            let target = if kind == RelocationKind::Relative64 {
                if symbol != 0 {
                    return Err(fail(
                        "RELATIVE64 must not name a symbol (STN_UNDEF expected)".to_owned(),
                    ));
                }
                Target::Zero
            } else if symbol == 0 {
                Target::Zero
            } else if sym.is_defined() {
                if !matches!(
                    sym.kind,
                    STT_NOTYPE
                        | STT_OBJECT
                        | STT_FUNC
                        | STT_SECTION
                        | STT_COMMON
                        | STT_AMDGPU_HSA_KERNEL
                ) {
                    return Err(fail(format!(
                        "symbol `{}` has type {}, which a relocation cannot use",
                        sym.name,
                        sym.kind_name()
                    )));
                }
                if sym.is_absolute() {
                    Target::Absolute(sym.value)
                } else {
                    Target::Defined(sym.value)
                }
            } else {
                if sym.name.is_empty() {
                    return Err(fail(format!("undefined symbol {symbol} has no name")));
                }
                if sym.binding == STB_LOCAL {
                    return Err(fail(format!("undefined symbol `{}` is local", sym.name)));
                }
                let next = plan.externals.len() as u32;
                let slot = *external_index.entry(sym.name).or_insert_with(|| {
                    plan.externals.push(ExternalReference {
                        name: sym.name.to_owned(),
                        weak: sym.binding == STB_WEAK,
                        first_use: index,
                    });
                    next
                });
                Target::External(slot)
            };
            plan.prepared.push(Prepared {
                place,
                kind,
                target,
                addend,
                index: index as u32,
            });
        }
        Ok(plan)
    }

    /// The relocations as the file states them, in order.
    pub fn relocations(&self) -> &[Relocation] {
        &self.relocations
    }

    /// The undefined symbols the relocations refer to.
    pub fn externals(&self) -> &[ExternalReference] {
        &self.externals
    }

    /// Apply every relocation to `image` (the placed image), whose first byte is at GPU address
    /// `image_base`, for a code object whose image starts at virtual address `start_vaddr`.
    pub(crate) fn apply(
        &self,
        image: &mut [u8],
        image_base: u64,
        start_vaddr: u64,
        externals: &dyn ExternalSymbols,
    ) -> Result<()> {
        // The load delta B: a virtual address v lands at v + B.
        let delta = image_base.wrapping_sub(start_vaddr);
        let mut resolved = Vec::with_capacity(self.externals.len());
        for ext in &self.externals {
            match externals.resolve(&ext.name) {
                Some(address) => resolved.push(address),
                None if ext.weak => resolved.push(0),
                None => {
                    return Err(Error::UndefinedSymbol {
                        name: ext.name.clone(),
                        index: ext.first_use,
                    });
                }
            }
        }
        for r in &self.prepared {
            let s = match r.target {
                Target::Zero => 0,
                Target::Defined(vaddr) => vaddr.wrapping_add(delta),
                Target::Absolute(value) => value,
                Target::External(slot) => resolved[slot as usize],
            };
            let value = s.wrapping_add(r.addend as u64);
            let place = r.place as usize;
            match r.kind {
                RelocationKind::None => {}
                RelocationKind::Abs64 => write(image, place, &value.to_le_bytes()),
                RelocationKind::Relative64 => {
                    let value = delta.wrapping_add(r.addend as u64);
                    write(image, place, &value.to_le_bytes());
                }
                RelocationKind::Abs32 => {
                    let value = u32::try_from(value).map_err(|_| Error::Relocation {
                        index: r.index as usize,
                        kind: r.kind.name().to_owned(),
                        offset: self.relocations[r.index as usize].offset,
                        detail: format!("S + A = {value:#x} does not fit in 32 bits"),
                    })?;
                    write(image, place, &value.to_le_bytes());
                }
                RelocationKind::Abs32Lo => write(image, place, &(value as u32).to_le_bytes()),
                RelocationKind::Abs32Hi => {
                    write(image, place, &((value >> 32) as u32).to_le_bytes());
                }
            }
        }
        Ok(())
    }
}

#[inline]
fn write(image: &mut [u8], place: usize, bytes: &[u8]) {
    // The place was checked against the image size when the relocation was parsed, and
    // `image` is at least that long.
    image[place..place + bytes.len()].copy_from_slice(bytes);
}
