//! amdgpu's IP-discovery sysfs tree: `<pci device>/ip_discovery/die/<die>/<hw_id>/<instance>/`
//! with one directory per hardware block the discovery table lists, as
//! `amdgpu_discovery_sysfs_init` builds it (Linux `drivers/gpu/drm/amd/amdgpu/amdgpu_discovery.c`):
//!
//! - `die/<die_id>/num_ips` (`"%d\n"`), one directory per hardware id (named by its number),
//!   and beside it a link named after the block (`hw_id_names[]`: `GC`, `SDMA0`, `NBIF`, …) to
//!   that directory. sysfs makes that a symlink; this tree has no links, so the name is served
//!   as a second path to the same files.
//! - `<hw_id>/<number_instance>/` with `hw_id`, `num_instance`, `major`, `minor`, `revision`
//!   (each `"%d\n"`), `harvest` (`"0x%01X\n"`), `num_base_addresses` (`"%d\n"`) and
//!   `base_addr` (one `"0x%08X\n"` line per segment).
//!
//! The blocks and versions per ASIC are the IP versions the kernel switches on for these parts
//! (`amdgpu_discovery_set_*_ip_blocks`): Aldebaran (MI210, gfx90a) has GC 9.4.2, SDMA 4.4.0,
//! MP0/MP1 13.0.2, OSSSYS 4.4.0, UMC 6.7.0, VCN 2.6.0; the MI300 series (gfx942) GC 9.4.3,
//! SDMA 4.4.2, NBIO 7.9.0, MP0/MP1 13.0.6, OSSSYS 4.4.2, UMC 12.0.0, VCN 4.0.3. Unsure: the NBIO
//! version of Aldebaran (7.4.4 here, the `nbio_v7_4` revision the kernel's Aldebaran RAS code
//! tests for), the HDP and MMHUB versions, how the SDMA engines are split between the SDMA0 and
//! SDMA1 hardware ids (alternately here, as Arcturus lists them), the single die with one GC
//! instance per XCC that the MI300X is reported as here (the real part lists its XCDs and AIDs
//! in more detail), and the base addresses, which are Vega10's register-segment bases
//! (`vega10_ip_offset.h`) rather than these ASICs' own.

use std::fmt::Write as _;

use crate::gpu::target::GfxTarget;

/// Hardware ids (`soc15_hw_ip.h`) and the names `hw_id_names[]` gives them.
mod hw_id {
    pub(super) const MP1: u16 = 1;
    pub(super) const GC: u16 = 11;
    pub(super) const VCN: u16 = 12;
    pub(super) const MMHUB: u16 = 34;
    pub(super) const OSSSYS: u16 = 40;
    pub(super) const HDP: u16 = 41;
    pub(super) const SDMA0: u16 = 42;
    pub(super) const SDMA1: u16 = 43;
    pub(super) const NBIF: u16 = 108;
    pub(super) const UMC: u16 = 150;
    pub(super) const MP0: u16 = 255;

    /// `hw_id_names[id]`.
    pub(super) fn name(id: u16) -> &'static str {
        match id {
            MP1 => "MP1",
            GC => "GC",
            VCN => "UVD",
            MMHUB => "MMHUB",
            OSSSYS => "OSSSYS",
            HDP => "HDP",
            SDMA0 => "SDMA0",
            SDMA1 => "SDMA1",
            NBIF => "NBIF",
            UMC => "UMC",
            _ => "MP0",
        }
    }
}

/// One entry of the discovery table: a hardware block instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct IpInstance {
    /// The hardware id (`soc15_hw_ip.h`).
    pub(crate) hw_id: u16,
    /// `number_instance`.
    pub(crate) instance: u8,
    /// IP version major, minor, revision.
    pub(crate) version: (u8, u8, u8),
    /// Register segment base addresses (dword offsets).
    pub(crate) base_addresses: Vec<u32>,
}

/// The blocks a GPU of `target` with `xccs` XCCs and `sdma_engines` SDMA engines lists on its
/// one die, in hardware-id order.
pub(crate) fn discovery_table(target: GfxTarget, xccs: u32, sdma_engines: u32) -> Vec<IpInstance> {
    let (gc, sdma, nbio, mp, osssys, hdp, mmhub, umc, vcn) = match target {
        GfxTarget::Gfx90a => (
            (9, 4, 2),
            (4, 4, 0),
            (7, 4, 4),
            (13, 0, 2),
            (4, 4, 0),
            (4, 4, 2),
            (9, 4, 2),
            (6, 7, 0),
            (2, 6, 0),
        ),
        GfxTarget::Gfx942 => (
            (9, 4, 3),
            (4, 4, 2),
            (7, 9, 0),
            (13, 0, 6),
            (4, 4, 2),
            (4, 4, 2),
            (1, 8, 0),
            (12, 0, 0),
            (4, 0, 3),
        ),
        // Navi 31 as the kernel's amdgpu_discovery.c sets it up for IP_VERSION(11, 0, 0):
        // SDMA 6.0.0, NBIO 4.3.0, MP1 13.0.0, OSSSYS 6.0.0, HDP 6.0.0, MMHUB 3.0.0, UMC 8.10.0,
        // VCN 4.0.0. From memory of the kernel's per-ASIC switch, not read from a board's
        // table: unsure, like the base addresses below (Vega10's, for every preset).
        GfxTarget::Gfx1100 => (
            (11, 0, 0),
            (6, 0, 0),
            (4, 3, 0),
            (13, 0, 0),
            (6, 0, 0),
            (6, 0, 0),
            (3, 0, 0),
            (8, 10, 0),
            (4, 0, 0),
        ),
    };
    let one = |hw_id, version, base_addresses: &[u32]| IpInstance {
        hw_id,
        instance: 0,
        version,
        base_addresses: base_addresses.to_vec(),
    };
    let mut table = vec![
        one(hw_id::MP1, mp, &[0x0001_6000]),
        one(hw_id::VCN, vcn, &[0x0000_7800, 0x0000_7E00]),
        one(hw_id::MMHUB, mmhub, &[0x0001_A000]),
        one(hw_id::OSSSYS, osssys, &[0x0000_10A0]),
        one(hw_id::HDP, hdp, &[0x0000_0F20]),
        one(
            hw_id::NBIF,
            nbio,
            &[0x0000_0000, 0x0000_0014, 0x0000_0D20, 0x0001_0400],
        ),
        one(hw_id::UMC, umc, &[0x0001_4000]),
        one(hw_id::MP0, mp, &[0x0001_6000]),
    ];
    table.extend((0..xccs).map(|xcc| IpInstance {
        hw_id: hw_id::GC,
        instance: xcc as u8,
        version: gc,
        base_addresses: vec![0x0000_2000, 0x0000_A000],
    }));
    table.extend((0..sdma_engines).map(|engine| {
        let (hw_id, base) = if engine % 2 == 0 {
            (hw_id::SDMA0, 0x0000_1260)
        } else {
            (hw_id::SDMA1, 0x0000_1860)
        };
        IpInstance {
            hw_id,
            instance: (engine / 2) as u8,
            version: sdma,
            base_addresses: vec![base],
        }
    }));
    table.sort_by_key(|ip| (ip.hw_id, ip.instance));
    table
}

/// The files of one instance directory, in the kernel's attribute order.
fn instance_files(ip: &IpInstance) -> Vec<(&'static str, String)> {
    let (major, minor, revision) = ip.version;
    let base_addr = ip.base_addresses.iter().fold(String::new(), |mut text, b| {
        let _ = writeln!(text, "0x{b:08X}");
        text
    });
    vec![
        ("hw_id", format!("{}\n", ip.hw_id)),
        ("num_instance", format!("{}\n", ip.instance)),
        ("major", format!("{major}\n")),
        ("minor", format!("{minor}\n")),
        ("revision", format!("{revision}\n")),
        ("harvest", "0x0\n".to_owned()),
        (
            "num_base_addresses",
            format!("{}\n", ip.base_addresses.len()),
        ),
        ("base_addr", base_addr),
    ]
}

/// One node of the tree, relative to `ip_discovery/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum DiscoveryNode {
    /// A directory and its entry names.
    Dir(String, Vec<String>),
    /// A file and its text.
    File(String, String),
}

/// The whole `ip_discovery` tree for `table` (die 0), paths relative to `ip_discovery`
/// (the root itself is `""`).
pub(crate) fn sysfs_tree(table: &[IpInstance]) -> Vec<DiscoveryNode> {
    let mut nodes = vec![
        DiscoveryNode::Dir(String::new(), vec!["die".to_owned()]),
        DiscoveryNode::Dir("die".to_owned(), vec!["0".to_owned()]),
    ];
    let mut ids: Vec<u16> = table.iter().map(|ip| ip.hw_id).collect();
    ids.dedup();
    let mut die_names = vec!["num_ips".to_owned()];
    for &id in &ids {
        die_names.push(id.to_string());
        die_names.push(hw_id::name(id).to_owned());
    }
    nodes.push(DiscoveryNode::Dir("die/0".to_owned(), die_names));
    nodes.push(DiscoveryNode::File(
        "die/0/num_ips".to_owned(),
        format!("{}\n", table.len()),
    ));
    for &id in &ids {
        let instances: Vec<&IpInstance> = table.iter().filter(|ip| ip.hw_id == id).collect();
        for dir in [id.to_string(), hw_id::name(id).to_owned()] {
            let base = format!("die/0/{dir}");
            nodes.push(DiscoveryNode::Dir(
                base.clone(),
                instances.iter().map(|ip| ip.instance.to_string()).collect(),
            ));
            for ip in &instances {
                let inst = format!("{base}/{}", ip.instance);
                let files = instance_files(ip);
                nodes.push(DiscoveryNode::Dir(
                    inst.clone(),
                    files.iter().map(|(n, _)| (*n).to_owned()).collect(),
                ));
                nodes.extend(
                    files
                        .into_iter()
                        .map(|(n, text)| DiscoveryNode::File(format!("{inst}/{n}"), text)),
                );
            }
        }
    }
    nodes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aldebaran_lists_gc_9_4_2_and_five_sdma_engines() {
        let table = discovery_table(GfxTarget::Gfx90a, 1, 5);
        let gc: Vec<_> = table.iter().filter(|ip| ip.hw_id == hw_id::GC).collect();
        assert_eq!(gc.len(), 1);
        assert_eq!(gc[0].version, (9, 4, 2));
        let sdma = table
            .iter()
            .filter(|ip| matches!(ip.hw_id, hw_id::SDMA0 | hw_id::SDMA1))
            .count();
        assert_eq!(sdma, 5);
    }

    #[test]
    fn names_link_to_the_same_files_as_numbers() {
        let tree = sysfs_tree(&discovery_table(GfxTarget::Gfx942, 8, 2));
        let file = |path: &str| {
            tree.iter().find_map(|n| match n {
                DiscoveryNode::File(p, text) if p == path => Some(text.clone()),
                _ => None,
            })
        };
        assert_eq!(file("die/0/11/7/minor").as_deref(), Some("4\n"));
        assert_eq!(file("die/0/GC/7/revision").as_deref(), Some("3\n"));
        assert_eq!(
            file("die/0/NBIF/0/base_addr").as_deref(),
            Some("0x00000000\n0x00000014\n0x00000D20\n0x00010400\n")
        );
        assert_eq!(file("die/0/42/0/harvest").as_deref(), Some("0x0\n"));
    }
}
