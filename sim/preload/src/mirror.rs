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

use amdgpu_sim::{GpuInfo, Machine};
use kfd::Sys;

/// The KFD class device directory every topology path is under.
const KFD_DEVICE_DIR: &str = "/sys/devices/virtual/kfd/kfd";

/// `DRM_MAJOR`.
pub(crate) const DRM_MAJOR: u32 = 226;

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

impl Mirror {
    /// Write `machine`'s directories into a fresh private directory under the temporary
    /// directory. The caller is inside the simulator (these file operations must reach libc).
    pub(crate) fn build(machine: &Machine) -> io::Result<Self> {
        let template = std::env::temp_dir().join("amdgpu-sim-preload-XXXXXX");
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
        self.copy_tree(machine, Path::new(KFD_DEVICE_DIR))?;
        // /sys/class/kfd/kfd is a symlink to the device, as in sysfs.
        let class = self.at("/sys/class/kfd");
        std::fs::create_dir_all(&class)?;
        std::os::unix::fs::symlink("../../devices/virtual/kfd/kfd", class.join("kfd"))?;
        std::fs::create_dir_all(self.at("/sys/module/amdgpu/parameters"))?;
        std::fs::create_dir_all(self.at("/dev/dri"))?;
        std::fs::create_dir_all(self.at("/sys/class/drm"))?;
        for gpu in machine.gpus() {
            self.add_render_node(&gpu)?;
        }
        Ok(())
    }

    /// The render node in `/dev/dri` (an empty placeholder: listing the directory shows it;
    /// opening and `stat` of the device path never reach it) and its DRM class directory.
    fn add_render_node(&self, gpu: &GpuInfo) -> io::Result<()> {
        let minor = gpu.render_minor;
        write(&self.at(&format!("/dev/dri/renderD{minor}")), "")?;
        let class = self.at(&format!("/sys/class/drm/renderD{minor}"));
        write(&class.join("dev"), format!("{DRM_MAJOR}:{minor}\n"))?;
        write(
            &class.join("uevent"),
            format!("MAJOR={DRM_MAJOR}\nMINOR={minor}\nDEVNAME=dri/renderD{minor}\n"),
        )?;
        Ok(())
    }

    /// Copy the simulator's directory `dir` and everything below it.
    fn copy_tree(&self, machine: &Machine, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(self.at_path(dir))?;
        let names = machine.read_dir(dir).map_err(io::Error::from)?;
        for name in names {
            let path = dir.join(&name);
            match machine.read_file(&path) {
                Ok(text) => write(&self.at_path(&path), text)?,
                Err(errno) if errno == kfd::Errno::EISDIR => self.copy_tree(machine, &path)?,
                Err(errno) => return Err(errno.into()),
            }
        }
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
            // Best effort: a failure leaves the last value.
            let _ = std::fs::write(&mirrored, text);
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
        let root = mirror.root().to_owned();
        mirror.remove();
        assert!(!root.exists());
    }
}
