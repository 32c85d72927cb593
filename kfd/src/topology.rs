//! The KFD topology in sysfs, read through the [`Sys`] seam into typed nodes.
//!
//! Layout (kfd.md §2.1): `generation_id`, `system_properties`, and `nodes/<N>/` with `gpu_id`,
//! `name`, `properties`, `mem_banks/<M>/properties` (+ `used_memory`), `caches/<C>/properties`,
//! `io_links/<L>/properties` and `p2p_links/<L>/properties`. CPU NUMA nodes and GPUs share one
//! numbering; a CPU node's `gpu_id` is 0. The walk is bracketed by two reads of
//! `generation_id` and repeated if the topology changed meanwhile, as libhsakmt does.
//!
//! A node's caches are not part of the snapshot: they are read on demand
//! ([`Topology::read_caches`]). A GPU lists one cache per compute unit and more (about 150 files
//! for an MI210), most of the files of the topology; nothing in opening the driver needs them,
//! and reading them made most of the cost of opening it (and of `hsa_init` over aqueduct). They
//! describe fixed hardware, so a later read finds what the snapshot would have held.
//!
//! Unknown property names are kept and reported, never an error; text that is not `name value`
//! lines is an error naming the file and line. Nothing here panics on sysfs input.

mod cache;
mod io_link;
mod mem_bank;
mod node;
pub(crate) mod property_text;
mod target;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

pub use cache::{Cache, CacheProperties};
pub use io_link::{IoLink, IoLinkProperties, LinkDirectory, LinkType};
pub use mem_bank::{HeapType, MemBank, MemBankProperties};
pub use node::NodeProperties;
pub use property_text::{PropertyText, PropertyTextError, PropertyValue};
pub use target::{FeatureSetting, GfxVersion, GfxVersionError, Processor, TargetId};

use crate::abi::sysfs::{self, files, system};
use crate::errno::Errno;
use crate::sys::Sys;
use crate::topology::property_text::{parse_single_number, typed_properties};

/// How many times a walk is repeated while `generation_id` keeps changing.
const GENERATION_ATTEMPTS: u32 = 8;

/// Why the topology could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("topology file {path}: {kind}", path = path.display())]
pub struct TopologyError {
    /// The file or directory.
    pub path: PathBuf,
    /// What went wrong.
    pub kind: TopologyErrorKind,
}

/// The kinds of [`TopologyError`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TopologyErrorKind {
    /// Reading failed.
    #[error("cannot read: {0}")]
    Read(Errno),
    /// The text is malformed.
    #[error(transparent)]
    Text(#[from] PropertyTextError),
    /// A property's value does not fit its field.
    #[error("property {name}: {why}")]
    Property {
        /// The property.
        name: &'static str,
        /// What is wrong.
        why: &'static str,
    },
    /// `generation_id` changed during every attempt to read the tree.
    #[error("the topology kept changing while it was read ({0} attempts)")]
    Unstable(u32),
}

typed_properties! {
    /// `system_properties`.
    pub struct SystemProperties {
        /// OEM id.
        platform_oem: u64 = system::PLATFORM_OEM,
        /// Platform id.
        platform_id: u64 = system::PLATFORM_ID,
        /// Platform revision.
        platform_rev: u64 = system::PLATFORM_REV,
    }
}

/// What a node's `gpu_id` file says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// `gpu_id` 0: a CPU (NUMA) node.
    Cpu,
    /// A GPU and its gpu_id.
    Gpu(u32),
    /// `gpu_id` could not be read (the device cgroup denies the GPU: libhsakmt skips it).
    Hidden(Errno),
}

/// One topology node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// Its number under `nodes/`.
    pub index: u32,
    /// CPU, GPU or hidden.
    pub kind: NodeKind,
    /// The `name` file (ASIC name), if readable.
    pub name: Option<String>,
    /// The `properties` file.
    pub properties: NodeProperties,
    /// `mem_banks/*`, by index. (`caches/*` are read on demand: [`Topology::read_caches`].)
    pub mem_banks: Vec<MemBank>,
    /// `io_links/*` then `p2p_links/*`, by index.
    pub io_links: Vec<IoLink>,
}

impl Node {
    /// The gpu_id of a GPU node.
    pub const fn gpu_id(&self) -> Option<u32> {
        match self.kind {
            NodeKind::Gpu(id) => Some(id),
            _ => None,
        }
    }

    /// Total bytes of the node's VRAM banks.
    pub fn vram_bytes(&self) -> u64 {
        self.mem_banks
            .iter()
            .filter(|bank| bank.heap_type().is_vram())
            .map(|bank| bank.properties.size_in_bytes)
            .fold(0, u64::saturating_add)
    }

    /// Whether the host can reach all of this node's VRAM (a large-BAR bank is present).
    pub fn has_public_vram(&self) -> bool {
        self.mem_banks
            .iter()
            .any(|bank| bank.heap_type() == HeapType::FrameBufferPublic)
    }
}

/// A snapshot of the whole topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    /// The `generation_id` the snapshot belongs to.
    pub generation_id: u64,
    /// `system_properties`.
    pub system: SystemProperties,
    /// Every node, by index.
    pub nodes: Vec<Node>,
}

impl Topology {
    /// Read the topology at its usual place ([`sysfs::TOPOLOGY_ROOT`]).
    pub fn read(sys: &dyn Sys) -> Result<Self, TopologyError> {
        Self::read_from(sys, Path::new(sysfs::TOPOLOGY_ROOT))
    }

    /// Read the topology under `root`.
    pub fn read_from(sys: &dyn Sys, root: &Path) -> Result<Self, TopologyError> {
        let generation_path = root.join(files::GENERATION_ID);
        for _ in 0..GENERATION_ATTEMPTS {
            let before = read_number(sys, &generation_path)?;
            let system = read_typed(sys, &root.join(files::SYSTEM_PROPERTIES), |t| {
                SystemProperties::from_text(t)
            })?;
            let nodes = read_nodes(sys, &root.join(files::NODES))?;
            let after = read_number(sys, &generation_path)?;
            if before == after {
                return Ok(Self {
                    generation_id: after,
                    system,
                    nodes,
                });
            }
        }
        Err(TopologyError {
            path: generation_path,
            kind: TopologyErrorKind::Unstable(GENERATION_ATTEMPTS),
        })
    }

    /// The caches (`caches/*`, by index) of node `node` at the usual place.
    pub fn read_caches(sys: &dyn Sys, node: u32) -> Result<Vec<Cache>, TopologyError> {
        Self::read_caches_from(sys, Path::new(sysfs::TOPOLOGY_ROOT), node)
    }

    /// The caches of node `node` of the topology under `root`; none where the node lists none.
    pub fn read_caches_from(
        sys: &dyn Sys,
        root: &Path,
        node: u32,
    ) -> Result<Vec<Cache>, TopologyError> {
        read_caches(sys, &root.join(files::NODES).join(node.to_string()))
    }

    /// The GPU nodes, in node order.
    pub fn gpus(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().filter(|n| n.gpu_id().is_some())
    }

    /// The node of a gpu_id.
    pub fn gpu(&self, gpu_id: u32) -> Option<&Node> {
        self.nodes.iter().find(|n| n.gpu_id() == Some(gpu_id))
    }
}

fn read_error(path: &Path, errno: Errno) -> TopologyError {
    TopologyError {
        path: path.to_owned(),
        kind: TopologyErrorKind::Read(errno),
    }
}

fn read_number(sys: &dyn Sys, path: &Path) -> Result<u64, TopologyError> {
    let bytes = sys.read_file(path).map_err(|e| read_error(path, e))?;
    parse_single_number(&bytes).map_err(|e| TopologyError {
        path: path.to_owned(),
        kind: e.into(),
    })
}

fn read_text(sys: &dyn Sys, path: &Path) -> Result<PropertyText, TopologyError> {
    let bytes = sys.read_file(path).map_err(|e| read_error(path, e))?;
    PropertyText::parse(&bytes).map_err(|e| TopologyError {
        path: path.to_owned(),
        kind: e.into(),
    })
}

fn read_typed<T>(
    sys: &dyn Sys,
    path: &Path,
    decode: impl FnOnce(&PropertyText) -> Result<T, (&'static str, &'static str)>,
) -> Result<T, TopologyError> {
    let text = read_text(sys, path)?;
    decode(&text).map_err(|(name, why)| TopologyError {
        path: path.to_owned(),
        kind: TopologyErrorKind::Property { name, why },
    })
}

/// The numeric names among `names`, sorted (other names are not topology entries).
fn numbered(names: &[std::ffi::OsString]) -> Vec<u32> {
    let mut numbers: Vec<u32> = names
        .iter()
        .filter_map(|name| name.to_str()?.parse().ok())
        .collect();
    numbers.sort_unstable();
    numbers
}

/// The numeric entries of a directory, sorted; a missing directory is empty.
fn numbered_entries(sys: &dyn Sys, dir: &Path) -> Result<Vec<u32>, TopologyError> {
    match sys.read_dir(dir) {
        Ok(names) => Ok(numbered(&names)),
        Err(Errno::ENOENT) => Ok(Vec::new()),
        Err(errno) => Err(read_error(dir, errno)),
    }
}

fn read_nodes(sys: &dyn Sys, nodes_dir: &Path) -> Result<Vec<Node>, TopologyError> {
    let names = sys
        .read_dir(nodes_dir)
        .map_err(|errno| read_error(nodes_dir, errno))?;
    numbered(&names)
        .into_iter()
        .map(|index| read_node(sys, index, &nodes_dir.join(index.to_string())))
        .collect()
}

fn read_node(sys: &dyn Sys, index: u32, dir: &Path) -> Result<Node, TopologyError> {
    let gpu_id_path = dir.join(files::GPU_ID);
    let kind = match sys.read_file(&gpu_id_path) {
        Ok(bytes) => {
            let id = parse_single_number(&bytes).map_err(|e| TopologyError {
                path: gpu_id_path.clone(),
                kind: e.into(),
            })?;
            match u32::try_from(id) {
                Ok(0) => NodeKind::Cpu,
                Ok(id) => NodeKind::Gpu(id),
                Err(_) => {
                    return Err(TopologyError {
                        path: gpu_id_path,
                        kind: TopologyErrorKind::Property {
                            name: files::GPU_ID,
                            why: "value does not fit 32 bits",
                        },
                    });
                }
            }
        }
        Err(errno @ (Errno::EPERM | Errno::EACCES)) => NodeKind::Hidden(errno),
        Err(errno) => return Err(read_error(&gpu_id_path, errno)),
    };
    let name = sys
        .read_file(&dir.join(files::NAME))
        .ok()
        .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_owned());
    let properties = read_typed(sys, &dir.join(files::PROPERTIES), NodeProperties::from_text)?;

    let banks_dir = dir.join(files::MEM_BANKS);
    let mut mem_banks = Vec::new();
    for bank in numbered_entries(sys, &banks_dir)? {
        let bank_dir = banks_dir.join(bank.to_string());
        let properties = read_typed(
            sys,
            &bank_dir.join(files::PROPERTIES),
            MemBankProperties::from_text,
        )?;
        let used_memory = sys
            .read_file(&bank_dir.join(files::USED_MEMORY))
            .ok()
            .and_then(|bytes| parse_single_number(&bytes).ok());
        mem_banks.push(MemBank {
            index: bank,
            properties,
            used_memory,
        });
    }

    let mut io_links = Vec::new();
    for (directory, name) in [
        (LinkDirectory::Io, files::IO_LINKS),
        (LinkDirectory::PeerToPeer, files::P2P_LINKS),
    ] {
        let links_dir = dir.join(name);
        for link in numbered_entries(sys, &links_dir)? {
            let properties = read_typed(
                sys,
                &links_dir.join(link.to_string()).join(files::PROPERTIES),
                IoLinkProperties::from_text,
            )?;
            io_links.push(IoLink {
                directory,
                index: link,
                properties,
            });
        }
    }

    Ok(Node {
        index,
        kind,
        name,
        properties,
        mem_banks,
        io_links,
    })
}

/// The caches of the node directory `dir`.
fn read_caches(sys: &dyn Sys, dir: &Path) -> Result<Vec<Cache>, TopologyError> {
    let caches_dir = dir.join(files::CACHES);
    let mut caches = Vec::new();
    for cache in numbered_entries(sys, &caches_dir)? {
        let path = caches_dir.join(cache.to_string()).join(files::PROPERTIES);
        let text = read_text(sys, &path)?;
        let properties =
            CacheProperties::from_text(&text).map_err(|(name, why)| TopologyError {
                path: path.clone(),
                kind: TopologyErrorKind::Property { name, why },
            })?;
        let sibling_map = text
            .list(sysfs::cache::SIBLING_MAP)
            .map(<[u64]>::to_vec)
            .or_else(|| text.number(sysfs::cache::SIBLING_MAP).map(|n| vec![n]))
            .unwrap_or_default();
        let properties = CacheProperties {
            unknown: properties
                .unknown
                .into_iter()
                .filter(|(name, _)| name != sysfs::cache::SIBLING_MAP)
                .collect(),
            ..properties
        };
        caches.push(Cache {
            index: cache,
            properties,
            sibling_map,
        });
    }
    Ok(caches)
}
