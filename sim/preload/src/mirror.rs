//! The mirror: the simulated machine's sysfs and `/dev/dri` directories, written once into a
//! private directory, so that every way a program reads them (`open`, `fopen`, `opendir`,
//! `stat`, `readlink`, `realpath`, relative opens from a directory fd) is plain libc on real
//! files: the interposer only rewrites the path prefix.
//!
//! What changes while the machine runs (`mem_banks/N/used_memory` of GPU nodes) is rewritten
//! from the simulator each time it is opened.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use amdgpu_sim::{Machine, TOPOLOGY_ROOT};
use kfd::Sys;

/// The KFD class device directory every topology path is under.
const KFD_DEVICE_DIR: &str = "/sys/devices/virtual/kfd/kfd";

/// `DRM_MAJOR`.
pub(crate) const DRM_MAJOR: u32 = 226;

/// The mirror directory's name in the temporary directory: this, the owner's pid, `-`, and a
/// unique suffix.
const MIRROR_PREFIX: &str = "amdgpu-sim-preload-";

/// Remove the mirrors of processes that no longer exist (a process killed by a signal never
/// runs its exit handler). A mirror whose pid belongs to a living process is kept, whoever
/// that process is now. Best effort.
fn remove_abandoned_mirrors() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(MIRROR_PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<i32>().ok())
        else {
            continue;
        };
        let gone = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None)
            == Err(nix::errno::Errno::ESRCH);
        if pid > 0 && gone {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Copy the simulator's directory `dir` and everything below it to `dest`.
fn copy_tree(machine: &Machine, dir: &Path, dest: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dest)?;
    let names = machine.read_dir(dir).map_err(io::Error::from)?;
    for name in names {
        let path = dir.join(&name);
        match machine.read_file(&path) {
            Ok(text) => write(&dest.join(&name), text)?,
            Err(errno) if errno == kfd::Errno::EISDIR => {
                copy_tree(machine, &path, &dest.join(&name))?;
            }
            Err(errno) => return Err(errno.into()),
        }
    }
    Ok(())
}

/// The private directory.
#[derive(Debug)]
pub(crate) struct Mirror {
    root: PathBuf,
    /// Who made it (and removes it at exit): a forked child shares it and leaves it alone.
    owner: i32,
}

fn write(path: &Path, text: impl AsRef<[u8]>) -> io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, text)
}

/// What the render node's sysfs needs of a GPU node, from its topology `properties`.
#[derive(Debug, Default)]
struct GpuNode {
    render_minor: u32,
    vendor_id: u32,
    device_id: u32,
    location_id: u32,
    domain: u32,
    revision: u32,
}

impl GpuNode {
    /// The GPU nodes of `machine`'s topology.
    fn all(machine: &Machine) -> io::Result<Vec<Self>> {
        let nodes = Path::new(TOPOLOGY_ROOT).join("nodes");
        let mut gpus = Vec::new();
        for name in machine.read_dir(&nodes).map_err(io::Error::from)? {
            let text = machine
                .read_file(&nodes.join(&name).join("properties"))
                .map_err(io::Error::from)?;
            let mut node = Self::default();
            let mut is_gpu = false;
            for line in String::from_utf8_lossy(&text).lines() {
                let Some((key, value)) = line.split_once(' ') else {
                    continue;
                };
                let value: u64 = value.trim().parse().unwrap_or(0);
                let field = match key {
                    "drm_render_minor" => &mut node.render_minor,
                    "vendor_id" => &mut node.vendor_id,
                    "device_id" => &mut node.device_id,
                    "location_id" => &mut node.location_id,
                    "domain" => &mut node.domain,
                    "simd_count" => {
                        is_gpu = value > 0;
                        continue;
                    }
                    _ => continue,
                };
                *field = value as u32;
            }
            if is_gpu {
                node.revision = machine
                    .gpus()
                    .iter()
                    .find(|gpu| gpu.render_minor == node.render_minor)
                    .map_or(0, |gpu| gpu.pci_revision);
                gpus.push(node);
            }
        }
        Ok(gpus)
    }
}

impl Mirror {
    /// Write `machine`'s directories into a fresh private directory under the temporary
    /// directory. The caller is inside the simulator (these file operations must reach libc).
    pub(crate) fn build(machine: &Machine) -> io::Result<Self> {
        remove_abandoned_mirrors();
        let pid = std::process::id();
        let template = std::env::temp_dir().join(format!("{MIRROR_PREFIX}{pid}-XXXXXX"));
        let mut template = CString::new(template.as_os_str().as_bytes())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?
            .into_bytes_with_nul();
        // SAFETY: `template` is a writable NUL-terminated buffer ending in XXXXXX.
        let made = unsafe { libc::mkdtemp(template.as_mut_ptr().cast()) };
        if made.is_null() {
            return Err(io::Error::last_os_error());
        }
        template.pop();
        let root = PathBuf::from(OsStr::from_bytes(&template));
        let mirror = Self {
            root,
            owner: std::process::id() as i32,
        };
        if let Err(err) = mirror.fill(machine) {
            mirror.remove();
            return Err(err);
        }
        Ok(mirror)
    }

    fn fill(&self, machine: &Machine) -> io::Result<()> {
        copy_tree(machine, Path::new(KFD_DEVICE_DIR), &self.at(KFD_DEVICE_DIR))?;
        // /sys/class/kfd/kfd is a symlink to the device, as in sysfs.
        let class = self.at("/sys/class/kfd");
        std::fs::create_dir_all(&class)?;
        std::os::unix::fs::symlink("../../devices/virtual/kfd/kfd", class.join("kfd"))?;
        self.add_module()?;
        std::fs::create_dir_all(self.at("/dev/dri"))?;
        std::fs::create_dir_all(self.at("/sys/class/drm"))?;
        std::fs::create_dir_all(self.at("/sys/dev/char"))?;
        for gpu in GpuNode::all(machine)? {
            self.add_render_node(machine, &gpu)?;
        }
        Ok(())
    }

    /// The amdgpu module, loaded: its `/sys/module` directory and its line in `/proc/modules`
    /// after the host's (what `lsmod` and libkmod read). The size is a plausible figure for
    /// amdgpu with KFD (unsure; nothing should depend on it).
    fn add_module(&self) -> io::Result<()> {
        const CORE_SIZE: u32 = 15_007_744;
        let module = self.at("/sys/module/amdgpu");
        std::fs::create_dir_all(module.join("parameters"))?;
        std::fs::create_dir_all(module.join("holders"))?;
        write(&module.join("initstate"), "live\n")?;
        write(&module.join("refcnt"), "0\n")?;
        write(&module.join("coresize"), format!("{CORE_SIZE}\n"))?;
        let mut modules = std::fs::read("/proc/modules").unwrap_or_default();
        let has_amdgpu = modules
            .split(|&b| b == b'\n')
            .any(|line| line.starts_with(b"amdgpu "));
        if !has_amdgpu {
            modules.extend_from_slice(
                format!("amdgpu {CORE_SIZE} 0 - Live 0x0000000000000000\n").as_bytes(),
            );
        }
        write(&self.at("/proc/modules"), modules)
    }

    /// A GPU's render node: its placeholder in `/dev/dri` (listing the directory shows it;
    /// opening and `stat` of the device path never reach it), and its sysfs as amdgpu makes
    /// it: the PCI device directory with the DRM minor below it, reached through
    /// `/sys/dev/char/226:<minor>` and `/sys/class/drm/renderD<minor>` (libdrm finds DRM
    /// devices by `/sys/dev/char/<major>:<minor>/device/drm`, and the bus through the
    /// device's `subsystem` link), with the simulator's `ip_discovery` tree in the device
    /// directory.
    fn add_render_node(&self, machine: &Machine, gpu: &GpuNode) -> io::Result<()> {
        let minor = gpu.render_minor;
        write(&self.at(&format!("/dev/dri/renderD{minor}")), "")?;
        let slot = format!(
            "{:04x}:{:02x}:{:02x}.{:x}",
            gpu.domain,
            (gpu.location_id >> 8) & 0xFF,
            (gpu.location_id >> 3) & 0x1F,
            gpu.location_id & 0x7
        );
        let device_dir = format!("/sys/devices/pci{:04x}:00/{slot}", gpu.domain);
        let device = self.at(&device_dir);
        // The board's subsystem ids are not in the topology: AMD's own vendor id and 0
        // (unsure; nothing in a KFD stack reads them).
        for (name, text) in [
            ("vendor", format!("{:#06x}\n", gpu.vendor_id)),
            ("device", format!("{:#06x}\n", gpu.device_id)),
            ("subsystem_vendor", format!("{:#06x}\n", gpu.vendor_id)),
            ("subsystem_device", "0x0000\n".to_owned()),
            ("revision", format!("{:#04x}\n", gpu.revision)),
            ("class", "0x038000\n".to_owned()),
            (
                "uevent",
                format!(
                    "DRIVER=amdgpu\nPCI_CLASS=38000\nPCI_ID={:04X}:{:04X}\nPCI_SUBSYS_ID={:04X}:0000\nPCI_SLOT_NAME={slot}\n",
                    gpu.vendor_id, gpu.device_id, gpu.vendor_id
                ),
            ),
        ] {
            write(&device.join(name), text)?;
        }
        std::os::unix::fs::symlink("../../../bus/pci", device.join("subsystem"))?;
        copy_tree(
            machine,
            Path::new(&format!(
                "/sys/class/drm/renderD{minor}/device/ip_discovery"
            )),
            &device.join("ip_discovery"),
        )?;
        let render = device.join(format!("drm/renderD{minor}"));
        write(&render.join("dev"), format!("{DRM_MAJOR}:{minor}\n"))?;
        write(
            &render.join("uevent"),
            format!("MAJOR={DRM_MAJOR}\nMINOR={minor}\nDEVNAME=dri/renderD{minor}\n"),
        )?;
        std::os::unix::fs::symlink(format!("../../../{slot}"), render.join("device"))?;
        let from_devices = format!("../..{device_dir}/drm/renderD{minor}");
        let from_devices = from_devices.replacen("/sys", "", 1);
        std::fs::create_dir_all(self.at("/sys/dev/char"))?;
        std::os::unix::fs::symlink(
            &from_devices,
            self.at(&format!("/sys/dev/char/{DRM_MAJOR}:{minor}")),
        )?;
        std::os::unix::fs::symlink(
            &from_devices,
            self.at(&format!("/sys/class/drm/renderD{minor}")),
        )?;
        Ok(())
    }

    fn at(&self, path: &str) -> PathBuf {
        self.at_path(Path::new(path))
    }

    fn at_path(&self, path: &Path) -> PathBuf {
        let relative = path.strip_prefix("/").unwrap_or(path);
        self.root.join(relative)
    }

    /// The mirror's path for the normalised absolute path `path`, refreshed first if it names
    /// a file whose text changes (a GPU's `used_memory`).
    pub(crate) fn path_for(&self, machine: &Machine, path: &str) -> CString {
        let mirrored = self.at(path);
        if path.ends_with("/used_memory")
            && let Ok(text) = machine.read_file(Path::new(path))
        {
            // Written beside it and renamed over it, so that a reader on another thread never
            // sees a half-written value. Best effort: a failure leaves the last value.
            let mut fresh = mirrored.clone().into_os_string();
            fresh.push(format!(".{}", nix::unistd::gettid()));
            if std::fs::write(&fresh, text).is_ok() && std::fs::rename(&fresh, &mirrored).is_err() {
                let _ = std::fs::remove_file(&fresh);
            }
        }
        CString::new(mirrored.into_os_string().into_vec()).unwrap_or_default()
    }

    /// The mirror's root, for turning resolved paths back into the names the program used.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Remove the directory (at exit, by the process that made it).
    pub(crate) fn remove(&self) {
        if std::process::id() as i32 == self.owner {
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirrors_of_dead_processes_are_removed_and_living_ones_kept() {
        // A pid no process has: above the kernel's pid_max limit (4194304).
        let dead = std::env::temp_dir().join(format!("{MIRROR_PREFIX}4194399-test"));
        let living = std::env::temp_dir().join(format!("{MIRROR_PREFIX}1-test"));
        std::fs::create_dir_all(dead.join("sys")).unwrap();
        std::fs::create_dir_all(&living).unwrap();
        remove_abandoned_mirrors();
        assert!(!dead.exists());
        assert!(living.exists(), "pid 1 is alive");
        std::fs::remove_dir(&living).unwrap();
    }

    #[test]
    fn the_mirror_holds_the_topology_and_the_render_nodes() {
        let machine = Machine::mi210().unwrap();
        let mirror = Mirror::build(&machine).unwrap();
        let properties = mirror.at("/sys/devices/virtual/kfd/kfd/topology/nodes/1/properties");
        let text = std::fs::read_to_string(properties).unwrap();
        assert!(text.contains("gfx_target_version 90010"), "{text}");
        let via_class = mirror.at("/sys/class/kfd/kfd/topology/nodes/1/gpu_id");
        let gpu_id: u32 = std::fs::read_to_string(via_class)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(gpu_id, machine.gpus()[0].gpu_id);
        let minor = machine.gpus()[0].render_minor;
        assert!(mirror.at(&format!("/dev/dri/renderD{minor}")).exists());
        let used = mirror.path_for(
            &machine,
            "/sys/devices/virtual/kfd/kfd/topology/nodes/1/mem_banks/0/used_memory",
        );
        let used = std::fs::read_to_string(OsStr::from_bytes(used.as_bytes())).unwrap();
        assert_eq!(used.trim(), "0");
        // The IP-discovery tree, through the class link into the PCI device directory.
        let gc = mirror.at(&format!(
            "/sys/class/drm/renderD{minor}/device/ip_discovery/die/0/11/0"
        ));
        let version: Vec<String> = ["major", "minor", "revision"]
            .iter()
            .map(|f| std::fs::read_to_string(gc.join(f)).unwrap())
            .collect();
        assert_eq!(version, ["9\n", "4\n", "2\n"]);
        let root = mirror.root().to_owned();
        let name = root.file_name().unwrap().to_str().unwrap().to_owned();
        assert!(name.starts_with(&format!("{MIRROR_PREFIX}{}-", std::process::id())));
        mirror.remove();
        assert!(!root.exists());
    }
}
