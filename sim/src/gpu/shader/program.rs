//! The decode cache: machine code is decoded once per code object (per executable mapping)
//! and shared by every wave and dispatch that runs it.
//!
//! A [`Program`] covers one executable mapping and decodes lazily, instruction by instruction,
//! the first time a PC is fetched (code, data and padding share the mapping, so decoding
//! eagerly would decode data). Programs are cached by mapping address; when the VM's generation
//! changes, a cached program is kept only if every instruction it decoded still has the same
//! words in memory.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::gpu::shader::decode::{self as gfx9_decode, DecodeError, base_dwords, decode};
use crate::gpu::shader::gfx11::decode as gfx11_decode;
use crate::gpu::shader::gfx11::lower::lower;
use crate::gpu::shader::isa::Inst;
use crate::gpu::shader::memory::DeviceMemory;
use crate::gpu::target::GfxTarget;
use crate::gpu::vm::{Access, GpuVm, HostSpan, MemoryFault};

/// Dwords per lazily allocated page of decode slots.
const PAGE_DWORDS: usize = 1024;

/// Programs kept by a [`CodeCache`].
const CACHE_PROGRAMS: usize = 64;

/// Words read at a PC: the longest instruction of either ISA the core runs (GFX9's or
/// GFX11's), so that no instruction is cut short whichever decoder reads them.
pub const MAX_INST_DWORDS: usize = if gfx9_decode::MAX_INST_DWORDS > gfx11_decode::MAX_INST_DWORDS {
    gfx9_decode::MAX_INST_DWORDS
} else {
    gfx11_decode::MAX_INST_DWORDS
};

/// One decoded (or undecodable) instruction and the words it was decoded from.
#[derive(Debug)]
pub struct Slot {
    /// The instruction, or why the words do not decode.
    pub decoded: Result<Inst, DecodeError>,
    /// The words read at the PC (up to [`MAX_INST_DWORDS`]).
    pub words: [u32; MAX_INST_DWORDS],
    /// How many of `words` were readable.
    pub available: u8,
    /// The instruction's length in dwords: the decoded one's, or for a GFX11 instruction that
    /// decodes but has no GFX9 counterpart the decoded GFX11 length (so an NSA image
    /// instruction is reported whole), otherwise its encoding's base size.
    pub dwords: u8,
    /// Instructions executed after `decoded` at the same PC (the second half of a GFX11
    /// VOPD); empty otherwise.
    pub more: Box<[Inst]>,
}

impl Slot {
    /// The instruction's own words (if it did not decode: those of its encoding's base size).
    pub fn encoding(&self) -> Vec<u32> {
        self.words[..usize::from(self.dwords.min(self.available))].to_vec()
    }
}

type Page = Box<[OnceLock<Slot>]>;

/// Decoded code of one executable mapping.
pub struct Program {
    span: HostSpan,
    target: GfxTarget,
    generation: AtomicU64,
    pages: Box<[OnceLock<Page>]>,
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program")
            .field("span", &self.span)
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

impl Program {
    fn new(span: HostSpan, target: GfxTarget, generation: u64) -> Self {
        let dwords = ((span.va_end - span.va_start) / 4) as usize;
        let pages = dwords.div_ceil(PAGE_DWORDS);
        Self {
            span,
            target,
            generation: AtomicU64::new(generation),
            pages: (0..pages).map(|_| OnceLock::new()).collect(),
        }
    }

    /// Whether `pc` lies in this program's mapping.
    #[inline]
    pub fn contains(&self, pc: u64) -> bool {
        pc >= self.span.va_start && pc < self.span.va_end
    }

    /// The target the code is decoded for.
    pub fn target(&self) -> GfxTarget {
        self.target
    }

    /// The slot for `pc`, decoding it on first use. `pc` must be 4-aligned and inside the
    /// mapping ([`Program::contains`]).
    #[inline]
    pub fn fetch(&self, pc: u64) -> &Slot {
        let index = ((pc - self.span.va_start) / 4) as usize;
        let page = self.pages[index / PAGE_DWORDS]
            .get_or_init(|| (0..PAGE_DWORDS).map(|_| OnceLock::new()).collect());
        page[index % PAGE_DWORDS].get_or_init(|| self.decode_at(pc))
    }

    fn decode_at(&self, pc: u64) -> Slot {
        let mut words = [0u32; MAX_INST_DWORDS];
        let available = DeviceMemory::fetch_code(&self.span, pc, &mut words);
        let code = &words[..available];
        let (decoded, more, dwords) = if self.target.is_gfx9() {
            let decoded = decode(code, self.target);
            let dwords = decoded
                .as_ref()
                .map_or(base_dwords(words[0]), |i| usize::from(i.dwords));
            (decoded, Box::default(), dwords)
        } else {
            match gfx11_decode::decode(code) {
                Ok(g) => match lower(&g) {
                    Ok(l) => (
                        Ok(l.first),
                        l.more.into_boxed_slice(),
                        usize::from(g.dwords),
                    ),
                    Err(e) => (Err(e), Box::default(), usize::from(g.dwords)),
                },
                Err(e) => (Err(e), Box::default(), base_dwords(words[0])),
            }
        };
        Slot {
            decoded,
            words,
            available: available as u8,
            dwords: dwords as u8,
            more,
        }
    }

    /// Whether every decoded slot still matches memory.
    fn still_valid(&self) -> bool {
        for (p, page) in self.pages.iter().enumerate() {
            let Some(page) = page.get() else { continue };
            for (i, slot) in page.iter().enumerate() {
                let Some(slot) = slot.get() else { continue };
                let pc = self.span.va_start + 4 * (p * PAGE_DWORDS + i) as u64;
                let mut words = [0u32; MAX_INST_DWORDS];
                let n = DeviceMemory::fetch_code(&self.span, pc, &mut words);
                if n != usize::from(slot.available) || words[..n] != slot.words[..n] {
                    return false;
                }
            }
        }
        true
    }
}

/// Decoded programs shared by all dispatches of a shader core.
#[derive(Debug, Default)]
pub struct CodeCache {
    programs: Mutex<Vec<Arc<Program>>>,
}

impl CodeCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The program containing `pc`, from the cache or freshly created. Fails if `pc` is not in
    /// an executable mapping.
    pub fn program_for(
        &self,
        vm: &dyn GpuVm,
        pc: u64,
        target: GfxTarget,
    ) -> Result<Arc<Program>, MemoryFault> {
        let generation = vm.generation();
        let span = vm.translate(pc, 4, Access::Execute)?;
        let mut programs = self
            .programs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(i) = programs.iter().position(|p| {
            p.target == target
                && p.span.va_start == span.va_start
                && p.span.va_end == span.va_end
                && p.span.host == span.host
        }) {
            let program = Arc::clone(&programs[i]);
            if program.generation.load(Ordering::Acquire) == generation {
                return Ok(program);
            }
            // Mappings changed somewhere: keep the decoded code only if its bytes did not
            // (the same host memory is still mapped at the same range).
            if program.still_valid() {
                program.generation.store(generation, Ordering::Release);
                return Ok(program);
            }
            programs.remove(i);
        }
        // A miss: first forget programs whose memory nothing but this cache holds any more
        // (their buffer was freed). Kept, they would keep freed device memory mapped in the
        // process, up to CACHE_PROGRAMS code objects after the process freed them all.
        programs.retain(|p| Arc::strong_count(&p.span.keep_alive) > 1);
        let program = Arc::new(Program::new(span, target, generation));
        if programs.len() == CACHE_PROGRAMS {
            programs.pop();
        }
        programs.insert(0, Arc::clone(&program));
        Ok(program)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Weak;

    use super::*;
    use crate::gpu::host_vm::HostVm;

    #[test]
    fn a_gfx11_nsa_image_instruction_is_held_whole_and_the_next_decodes_after_it() {
        // image_sample_c_d_o v[0:3], [v4, v5, v6, v7, v[8:14]], s[0:7], s[8:11] dmask:0xf
        // dim:SQ_RSRC_IMG_3D; s_endpgm (llvm-mc-22 -mcpu=gfx1100).
        let code: [u32; 4] = [0xf0ac0f09, 0x08000004, 0x08070605, 0xbfb00000];
        let vm = HostVm::new();
        let buffer = vm.map(4096, 256, false, true);
        let bytes: Vec<u8> = code.iter().flat_map(|w| w.to_le_bytes()).collect();
        buffer.write(0, &bytes);
        let cache = CodeCache::new();
        let program = cache
            .program_for(&vm, buffer.va(), GfxTarget::Gfx1100)
            .unwrap();
        let slot = program.fetch(buffer.va());
        assert!(matches!(slot.decoded, Err(DecodeError::NotSimulated(_))));
        assert_eq!(slot.encoding(), code[..3]);
        let next = program.fetch(buffer.va() + 4 * u64::from(slot.dwords));
        assert_eq!(next.encoding(), [0xbfb00000]);
        assert_eq!(next.decoded.as_ref().map(|i| i.dwords), Ok(1));
    }

    #[test]
    fn a_miss_forgets_programs_whose_memory_was_freed() {
        let vm = HostVm::new();
        let cache = CodeCache::new();
        let first = vm.map(4096, 256, false, true);
        let target = GfxTarget::Gfx90a;
        let program = cache.program_for(&vm, first.va(), target).unwrap();
        let memory: Weak<dyn std::any::Any + Send + Sync> =
            Arc::downgrade(&program.span.keep_alive);
        drop(program);
        // While the buffer lives, the cache keeps its program (a hit returns the same one).
        let again = cache.program_for(&vm, first.va(), target).unwrap();
        assert!(Arc::ptr_eq(&again, &cache.programs.lock().unwrap()[0]));
        drop(again);
        // Freed: only the cache holds the memory, until the next miss lets it go.
        vm.unmap(first.va());
        drop(first);
        assert!(memory.upgrade().is_some(), "the cache kept it so far");
        let second = vm.map(4096, 256, false, true);
        let _other = cache.program_for(&vm, second.va(), target).unwrap();
        assert!(memory.upgrade().is_none(), "freed code stayed mapped");
        assert_eq!(cache.programs.lock().unwrap().len(), 1);
    }
}
