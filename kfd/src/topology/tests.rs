//! Topology reading over an in-memory sysfs tree.

use std::collections::BTreeMap;
use std::ffi::{OsString, c_int, c_void};
use std::num::NonZeroUsize;
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::Mutex;

use super::*;
use crate::ioctl::Opcode;
use crate::sys::{Backend, MapFlags, MmapAdvise, OFlag, ProtFlags};

/// A sysfs tree in memory; every other system call fails with ENOSYS. `generation_bumps`
/// makes the first reads of `generation_id` return increasing values.
#[derive(Debug, Default)]
struct FakeSysfs {
    files: BTreeMap<PathBuf, Result<Vec<u8>, Errno>>,
    generation_reads: Mutex<u64>,
    generation_bumps: u64,
}

impl FakeSysfs {
    fn file(mut self, path: &str, text: &str) -> Self {
        self.files
            .insert(PathBuf::from(path), Ok(text.as_bytes().to_vec()));
        self
    }

    fn denied(mut self, path: &str, errno: Errno) -> Self {
        self.files.insert(PathBuf::from(path), Err(errno));
        self
    }
}

impl Sys for FakeSysfs {
    fn backend(&self) -> Backend {
        Backend::Simulator("fake sysfs".to_owned())
    }
    fn open(&self, _: &Path, _: OFlag) -> Result<RawFd, Errno> {
        Err(Errno::ENOSYS)
    }
    fn close(&self, _: RawFd) -> Result<(), Errno> {
        Err(Errno::ENOSYS)
    }
    unsafe fn ioctl(&self, _: RawFd, _: Opcode, _: *mut c_void) -> Result<c_int, Errno> {
        Err(Errno::ENOSYS)
    }
    unsafe fn mmap(
        &self,
        _: Option<NonZeroUsize>,
        _: NonZeroUsize,
        _: ProtFlags,
        _: MapFlags,
        _: Option<RawFd>,
        _: u64,
    ) -> Result<NonNull<c_void>, Errno> {
        Err(Errno::ENOSYS)
    }
    unsafe fn munmap(&self, _: NonNull<c_void>, _: usize) -> Result<(), Errno> {
        Err(Errno::ENOSYS)
    }
    unsafe fn madvise(&self, _: NonNull<c_void>, _: usize, _: MmapAdvise) -> Result<(), Errno> {
        Err(Errno::ENOSYS)
    }
    fn read_file(&self, path: &Path) -> Result<Vec<u8>, Errno> {
        if path.ends_with(files::GENERATION_ID) && self.generation_bumps > 0 {
            let mut reads = self.generation_reads.lock().unwrap();
            *reads += 1;
            let value = (*reads).min(self.generation_bumps);
            return Ok(format!("{value}\n").into_bytes());
        }
        self.files.get(path).cloned().unwrap_or(Err(Errno::ENOENT))
    }
    fn read_dir(&self, path: &Path) -> Result<Vec<OsString>, Errno> {
        let mut names: Vec<OsString> = self
            .files
            .keys()
            .filter_map(|file| file.strip_prefix(path).ok())
            .filter_map(|rest| rest.components().next())
            .map(|c| c.as_os_str().to_owned())
            .collect();
        names.dedup();
        if names.is_empty() {
            Err(Errno::ENOENT)
        } else {
            Ok(names)
        }
    }
    fn process_id(&self) -> i32 {
        1
    }
    fn page_size(&self) -> usize {
        4096
    }
}

const ROOT: &str = "/sys/devices/virtual/kfd/kfd/topology";

const CPU_NODE: &str = "cpu_cores_count 16\nsimd_count 0\nmem_banks_count 1\ncaches_count 0\n\
    io_links_count 1\np2p_links_count 0\ncpu_core_id_base 0\nsimd_id_base 0\n\
    max_waves_per_simd 0\nlds_size_in_kb 0\ngds_size_in_kb 0\nnum_gws 0\nwave_front_size 0\n\
    array_count 0\nsimd_arrays_per_engine 0\ncu_per_simd_array 0\nsimd_per_cu 0\n\
    max_slots_scratch_cu 0\ngfx_target_version 0\nvendor_id 0\ndevice_id 0\nlocation_id 0\n\
    domain 0\ndrm_render_minor 0\nhive_id 0\nnum_sdma_engines 0\nnum_sdma_xgmi_engines 0\n\
    num_sdma_queues_per_engine 0\nnum_cp_queues 0\nmax_engine_clk_ccompute 3000\n";

/// An MI210 node (gfx90a) with the values of device-presets.md.
const MI210_NODE: &str = "cpu_cores_count 0\nsimd_count 416\nmem_banks_count 1\ncaches_count 1\n\
    io_links_count 1\np2p_links_count 0\ncpu_core_id_base 0\nsimd_id_base 2147487744\n\
    max_waves_per_simd 8\nlds_size_in_kb 64\ngds_size_in_kb 0\nnum_gws 64\nwave_front_size 64\n\
    array_count 8\nsimd_arrays_per_engine 1\ncu_per_simd_array 14\nsimd_per_cu 4\n\
    max_slots_scratch_cu 32\ngfx_target_version 90010\nvendor_id 4098\ndevice_id 29711\n\
    location_id 768\ndomain 0\ndrm_render_minor 128\nhive_id 0\nnum_sdma_engines 2\n\
    num_sdma_xgmi_engines 3\nnum_sdma_queues_per_engine 8\nnum_cp_queues 24\n\
    max_engine_clk_fcompute 1700\nlocal_mem_size 0\nfw_version 78\ncapability 746094208\n\
    debug_prop 1495\nsdma_fw_version 8\nunique_id 1234\nnum_xcc 1\nmax_engine_clk_ccompute 3000\n\
    some_future_property 5\n";

fn machine() -> FakeSysfs {
    FakeSysfs::default()
        .file(&format!("{ROOT}/generation_id"), "3\n")
        .file(
            &format!("{ROOT}/system_properties"),
            "platform_oem 0\nplatform_id 0\nplatform_rev 0\n",
        )
        .file(&format!("{ROOT}/nodes/0/gpu_id"), "0\n")
        .file(&format!("{ROOT}/nodes/0/name"), "\n")
        .file(&format!("{ROOT}/nodes/0/properties"), CPU_NODE)
        .file(
            &format!("{ROOT}/nodes/0/mem_banks/0/properties"),
            "heap_type 0\nsize_in_bytes 67108864000\nflags 0\nwidth 64\nmem_clk_max 3200\n",
        )
        .file(
            &format!("{ROOT}/nodes/0/io_links/0/properties"),
            "type 2\nversion_major 0\nversion_minor 0\nnode_from 0\nnode_to 1\nweight 20\n\
             min_latency 0\nmax_latency 0\nmin_bandwidth 0\nmax_bandwidth 0\n\
             recommended_transfer_size 0\nflags 1\n",
        )
        .file(&format!("{ROOT}/nodes/1/gpu_id"), "45412\n")
        .file(&format!("{ROOT}/nodes/1/name"), "aldebaran\n")
        .file(&format!("{ROOT}/nodes/1/properties"), MI210_NODE)
        .file(
            &format!("{ROOT}/nodes/1/mem_banks/0/properties"),
            "heap_type 1\nsize_in_bytes 68702699520\nflags 0\nwidth 4096\nmem_clk_max 1600\n",
        )
        .file(&format!("{ROOT}/nodes/1/mem_banks/0/used_memory"), "4096\n")
        .file(
            &format!("{ROOT}/nodes/1/caches/0/properties"),
            "processor_id_low 2147487744\nlevel 1\nsize 16\ncache_line_size 64\n\
             cache_lines_per_tag 1\nassociation 4\nlatency 1\ntype 5\nsibling_map 1,0,0,0\n",
        )
        .file(
            &format!("{ROOT}/nodes/1/io_links/0/properties"),
            "type 2\nversion_major 0\nversion_minor 0\nnode_from 1\nnode_to 0\nweight 20\n\
             min_latency 0\nmax_latency 0\nmin_bandwidth 312\nmax_bandwidth 64000\n\
             recommended_transfer_size 0\nrecommended_sdma_engine_id_mask 3\nflags 1\n",
        )
}

#[test]
fn reads_cpu_and_gpu_nodes_with_everything_under_them() {
    let topology = Topology::read(&machine()).unwrap();
    assert_eq!(topology.generation_id, 3);
    assert_eq!(topology.nodes.len(), 2);
    let cpu = &topology.nodes[0];
    assert_eq!(cpu.kind, NodeKind::Cpu);
    assert_eq!(cpu.properties.cpu_cores_count, 16);
    assert_eq!(cpu.mem_banks[0].heap_type(), HeapType::System);
    assert_eq!(cpu.io_links[0].link_type(), LinkType::PciExpress);

    let gpu = topology.gpu(45412).unwrap();
    assert_eq!(gpu.index, 1);
    assert_eq!(gpu.name.as_deref(), Some("aldebaran"));
    assert_eq!(gpu.properties.compute_units(), Some(104));
    assert_eq!(
        gpu.properties.gfx_version().unwrap().processor_name(),
        "gfx90a"
    );
    assert_eq!(gpu.vram_bytes(), 68702699520);
    assert!(gpu.has_public_vram());
    assert_eq!(gpu.mem_banks[0].used_memory, Some(4096));
    let caches = Topology::read_caches(&machine(), gpu.index).unwrap();
    assert_eq!(caches[0].properties.size, 16);
    assert_eq!(caches[0].sibling_map, vec![1, 0, 0, 0]);
    assert!(caches[0].properties.unknown.is_empty());
    assert!(
        Topology::read_caches(&machine(), cpu.index)
            .unwrap()
            .is_empty()
    );
    assert_eq!(gpu.io_links[0].properties.max_bandwidth, 64000);
    assert_eq!(
        gpu.io_links[0].properties.recommended_sdma_engine_id_mask,
        Some(3)
    );
    assert_eq!(
        gpu.properties.unknown,
        vec![("some_future_property".to_owned(), PropertyValue::Number(5))]
    );
    assert_eq!(topology.gpus().count(), 1);
}

#[test]
fn a_denied_gpu_id_hides_the_node() {
    let sys = machine().denied(&format!("{ROOT}/nodes/1/gpu_id"), Errno::EPERM);
    let topology = Topology::read(&sys).unwrap();
    assert_eq!(topology.nodes[1].kind, NodeKind::Hidden(Errno::EPERM));
    assert_eq!(topology.gpus().count(), 0);
}

#[test]
fn malformed_text_names_file_and_line() {
    let sys = machine().file(
        &format!("{ROOT}/nodes/1/properties"),
        "simd_count 416\nbogus\n",
    );
    let err = Topology::read(&sys).unwrap_err();
    assert_eq!(
        err.path,
        PathBuf::from(format!("{ROOT}/nodes/1/properties"))
    );
    assert!(matches!(
        err.kind,
        TopologyErrorKind::Text(PropertyTextError::Malformed { line: 2, .. })
    ));
    assert!(err.to_string().contains("nodes/1/properties"), "{err}");
}

#[test]
fn a_missing_properties_file_is_a_read_error() {
    let mut sys = machine();
    sys.files
        .remove(&PathBuf::from(format!("{ROOT}/nodes/1/properties")));
    let err = Topology::read(&sys).unwrap_err();
    assert_eq!(err.kind, TopologyErrorKind::Read(Errno::ENOENT));
}

#[test]
fn no_kfd_means_no_topology() {
    let err = Topology::read(&FakeSysfs::default()).unwrap_err();
    assert_eq!(err.kind, TopologyErrorKind::Read(Errno::ENOENT));
}

#[test]
fn a_changing_generation_is_retried_then_reported() {
    let mut settles = machine();
    settles.generation_bumps = 3;
    assert_eq!(Topology::read(&settles).unwrap().generation_id, 3);

    let mut never_settles = machine();
    never_settles.generation_bumps = u64::MAX;
    assert_eq!(
        Topology::read(&never_settles).unwrap_err().kind,
        TopologyErrorKind::Unstable(GENERATION_ATTEMPTS)
    );
}
