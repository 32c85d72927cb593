//! `nodes/N/io_links/L/properties` and `p2p_links/L/properties`: how nodes reach each other
//! (kfd.md §2.1, §2.5).

use crate::abi::sysfs::io_link;
use crate::topology::property_text::typed_properties;

typed_properties! {
    /// The `properties` file of one IO or peer-to-peer link.
    pub struct IoLinkProperties {
        /// One of the `TYPE_*` values (see [`LinkType`]).
        link_type: u32 = io_link::TYPE,
        /// Major version of the link.
        version_major: u32 = io_link::VERSION_MAJOR,
        /// Minor version of the link.
        version_minor: u32 = io_link::VERSION_MINOR,
        /// Source node.
        node_from: u32 = io_link::NODE_FROM,
        /// Destination node.
        node_to: u32 = io_link::NODE_TO,
        /// Relative cost.
        weight: u32 = io_link::WEIGHT,
        /// Minimum latency.
        min_latency: u32 = io_link::MIN_LATENCY,
        /// Maximum latency.
        max_latency: u32 = io_link::MAX_LATENCY,
        /// Minimum bandwidth.
        min_bandwidth: u32 = io_link::MIN_BANDWIDTH,
        /// Maximum bandwidth.
        max_bandwidth: u32 = io_link::MAX_BANDWIDTH,
        /// Recommended transfer size.
        recommended_transfer_size: u32 = io_link::RECOMMENDED_TRANSFER_SIZE,
        /// SDMA engines recommended for this link (newer kernels).
        recommended_sdma_engine_id_mask: Option<u32> = io_link::RECOMMENDED_SDMA_ENGINE_ID_MASK,
        /// `FLAGS_*` bits.
        flags: u32 = io_link::FLAGS,
    }
}

/// The physical kind of a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinkType {
    /// PCI Express.
    PciExpress,
    /// AMD XGMI (Infinity Fabric).
    Xgmi,
    /// A value this driver does not name.
    Other(u32),
}

impl LinkType {
    /// Decode the `type` property.
    pub const fn from_raw(value: u32) -> Self {
        match value {
            io_link::TYPE_PCIEXPRESS => Self::PciExpress,
            io_link::TYPE_XGMI => Self::Xgmi,
            other => Self::Other(other),
        }
    }
}

/// Which directory a link was listed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinkDirectory {
    /// `io_links/`.
    Io,
    /// `p2p_links/`.
    PeerToPeer,
}

/// One link of a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoLink {
    /// Its directory.
    pub directory: LinkDirectory,
    /// Its index in that directory.
    pub index: u32,
    /// Its properties.
    pub properties: IoLinkProperties,
}

impl IoLink {
    /// The decoded link type.
    pub const fn link_type(&self) -> LinkType {
        LinkType::from_raw(self.properties.link_type)
    }

    /// Whether the link allows peer-to-peer DMA (the `NO_PEER_TO_PEER_DMA` flag is clear).
    pub const fn allows_peer_dma(&self) -> bool {
        self.properties.flags & io_link::FLAGS_NO_PEER_TO_PEER_DMA == 0
    }
}
