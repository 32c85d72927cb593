//! `nodes/N/caches/C/properties`: one cache of a node (kfd.md §2.1, §2.5).

use crate::abi::sysfs::cache;
use crate::topology::property_text::typed_properties;

typed_properties! {
    /// The `properties` file of one cache (the `sibling_map` list is in [`Cache`]).
    pub struct CacheProperties {
        /// Lowest processor id the cache serves.
        processor_id_low: u32 = cache::PROCESSOR_ID_LOW,
        /// Cache level (1, 2, 3…).
        level: u32 = cache::LEVEL,
        /// Size in KiB.
        size: u32 = cache::SIZE,
        /// Line size in bytes.
        cache_line_size: u32 = cache::CACHE_LINE_SIZE,
        /// Lines per tag.
        cache_lines_per_tag: u32 = cache::CACHE_LINES_PER_TAG,
        /// Associativity.
        association: u32 = cache::ASSOCIATION,
        /// Latency.
        latency: u32 = cache::LATENCY,
        /// `HSA_CACHE_TYPE_*` bits: 1 data, 2 instruction, 4 CPU, 8 HSA CU.
        cache_type: u32 = cache::TYPE,
    }
}

/// One cache of a node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cache {
    /// Its index under `caches/`.
    pub index: u32,
    /// Its properties.
    pub properties: CacheProperties,
    /// Which processors share it, one 0/1 entry per processor from `processor_id_low`.
    pub sibling_map: Vec<u64>,
}
