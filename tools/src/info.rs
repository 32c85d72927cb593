//! `aqueduct info`.

use std::path::Path;

use aqueduct::backend::{self, BackendChoice};
use aqueduct::kfd::abi::sysfs::{self, files};
use aqueduct::kfd::sys::OFlag;
use aqueduct::kfd::{Linux, Sys, ioctls};

type Error = Box<dyn std::error::Error>;

pub fn run() -> Result<(), Error> {
    match backend::choose()? {
        BackendChoice::Hardware => hardware(&Linux),
        BackendChoice::Simulator => {
            println!("backend: simulator (no /dev/kfd here)");
            println!("the simulated machine is not built yet; see README.md, \"Status\"");
            Ok(())
        }
    }
}

fn hardware(sys: &dyn Sys) -> Result<(), Error> {
    let kfd = sys
        .open(
            Path::new(sysfs::KFD_DEVICE_PATH),
            OFlag::O_RDWR | OFlag::O_CLOEXEC,
        )
        .map_err(|errno| format!("cannot open {}: {errno}", sysfs::KFD_DEVICE_PATH))?;
    let version = ioctls::get_version(sys, kfd);
    let _ = sys.close(kfd);
    let version = version?;
    println!("backend: {:?}", sys.backend());
    println!(
        "kfd interface: {}.{}",
        version.major_version, version.minor_version
    );
    let nodes = Path::new(sysfs::TOPOLOGY_ROOT).join(files::NODES);
    let mut names = sys
        .read_dir(&nodes)
        .map_err(|errno| format!("cannot list {}: {errno}", nodes.display()))?;
    names.sort_by_key(|n| n.to_string_lossy().parse::<u32>().unwrap_or(u32::MAX));
    for name in names {
        let node = nodes.join(&name);
        let gpu_id = sys
            .read_file(&node.join(files::GPU_ID))
            .map(|b| String::from_utf8_lossy(&b).trim().to_owned());
        let properties = sys
            .read_file(&node.join(files::PROPERTIES))
            .unwrap_or_default();
        let target = String::from_utf8_lossy(&properties)
            .lines()
            .find_map(|l| l.strip_prefix("gfx_target_version ").map(str::to_owned))
            .unwrap_or_default();
        match gpu_id {
            Ok(id) if id != "0" => println!(
                "node {}: gpu_id {id}, gfx_target_version {target}",
                name.to_string_lossy()
            ),
            Ok(_) => println!("node {}: CPU", name.to_string_lossy()),
            Err(errno) => println!(
                "node {}: gpu_id unreadable ({errno})",
                name.to_string_lossy()
            ),
        }
    }
    Ok(())
}
