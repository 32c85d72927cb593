//! The ELF symbol hash tables, `DT_HASH` (System V) and `DT_GNU_HASH`: they give the size of a
//! section-less `.dynsym`, and a lookup that must agree with a linear scan (code-objects.md
//! §11). Every word read is bounds-checked: the tables are untrusted input.

use crate::error::{Error, Result};

fn word(table: &[u8], index: u64, what: &str) -> Result<u32> {
    let at = usize::try_from(index.saturating_mul(4)).unwrap_or(usize::MAX);
    table
        .get(at..at.saturating_add(4))
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| {
            Error::malformed(
                what,
                format!("word {index} lies beyond the table's {} bytes", table.len()),
            )
        })
}

/// The System V ELF hash of a name.
pub fn sysv_hash(name: &[u8]) -> u32 {
    let mut h: u32 = 0;
    for &c in name {
        h = (h << 4).wrapping_add(u32::from(c));
        let g = h & 0xf000_0000;
        if g != 0 {
            h ^= g >> 24;
        }
        h &= !g;
    }
    h
}

/// The GNU hash of a name (djb2).
pub fn gnu_hash(name: &[u8]) -> u32 {
    name.iter().fold(5381u32, |h, &c| {
        h.wrapping_mul(33).wrapping_add(u32::from(c))
    })
}

/// A `DT_HASH` table: `nbucket`, `nchain`, buckets, chains (all 32-bit).
#[derive(Debug, Clone, Copy)]
pub struct SysvHashTable<'data> {
    table: &'data [u8],
    nbucket: u32,
    nchain: u32,
}

impl<'data> SysvHashTable<'data> {
    /// Read the header of a table whose bytes start at `table` (and may run on).
    pub fn parse(table: &'data [u8]) -> Result<Self> {
        let nbucket = word(table, 0, "DT_HASH")?;
        let nchain = word(table, 1, "DT_HASH")?;
        let words = 2 + u64::from(nbucket) + u64::from(nchain);
        word(table, words - 1, "DT_HASH")?;
        Ok(Self {
            table,
            nbucket,
            nchain,
        })
    }

    /// The number of symbols in `.dynsym` (`nchain`).
    pub fn symbol_count(&self) -> u32 {
        self.nchain
    }

    /// Look `name` up; `name_of(index)` gives a symbol's name. `Ok(None)` if absent.
    pub fn lookup<'n>(
        &self,
        name: &str,
        mut name_of: impl FnMut(u32) -> Result<&'n str>,
    ) -> Result<Option<u32>> {
        if self.nbucket == 0 {
            return Ok(None);
        }
        let bucket = sysv_hash(name.as_bytes()) % self.nbucket;
        let mut index = word(self.table, 2 + u64::from(bucket), "DT_HASH bucket")?;
        // A chain visits each symbol at most once; more steps than symbols means a cycle.
        for _ in 0..=self.nchain {
            if index == 0 {
                return Ok(None);
            }
            if index >= self.nchain {
                return Err(Error::malformed(
                    "DT_HASH",
                    format!("chain names symbol {index} of {}", self.nchain),
                ));
            }
            if name_of(index)? == name {
                return Ok(Some(index));
            }
            index = word(
                self.table,
                2 + u64::from(self.nbucket) + u64::from(index),
                "DT_HASH chain",
            )?;
        }
        Err(Error::malformed("DT_HASH", "a chain loops"))
    }
}

/// A `DT_GNU_HASH` table for ELF64 (64-bit Bloom words).
#[derive(Debug, Clone, Copy)]
pub struct GnuHashTable<'data> {
    table: &'data [u8],
    nbuckets: u32,
    symoffset: u32,
    bloom_size: u32,
}

impl<'data> GnuHashTable<'data> {
    /// Read the header of a table whose bytes start at `table` (and may run on).
    pub fn parse(table: &'data [u8]) -> Result<Self> {
        let this = Self {
            table,
            nbuckets: word(table, 0, "DT_GNU_HASH")?,
            symoffset: word(table, 1, "DT_GNU_HASH")?,
            bloom_size: word(table, 2, "DT_GNU_HASH")?,
        };
        // Word 3 is the Bloom shift, which a lookup that skips the filter does not need.
        word(table, 3, "DT_GNU_HASH")?;
        if this.nbuckets > 0 {
            word(table, this.bucket_word(this.nbuckets - 1), "DT_GNU_HASH")?;
        }
        Ok(this)
    }

    fn bucket_word(&self, bucket: u32) -> u64 {
        4 + 2 * u64::from(self.bloom_size) + u64::from(bucket)
    }

    fn chain_word(&self, index: u32) -> u64 {
        4 + 2 * u64::from(self.bloom_size)
            + u64::from(self.nbuckets)
            + u64::from(index - self.symoffset)
    }

    /// The number of symbols in `.dynsym`: one past the last symbol any chain reaches.
    pub fn symbol_count(&self) -> Result<u32> {
        let mut last = None;
        for bucket in 0..self.nbuckets {
            let start = word(self.table, self.bucket_word(bucket), "DT_GNU_HASH bucket")?;
            if start != 0 {
                last = Some(last.map_or(start, |l: u32| l.max(start)));
            }
        }
        let Some(mut index) = last else {
            return Ok(self.symoffset);
        };
        if index < self.symoffset {
            return Err(Error::malformed(
                "DT_GNU_HASH",
                format!(
                    "bucket names symbol {index} below symoffset {}",
                    self.symoffset
                ),
            ));
        }
        loop {
            let hash = word(self.table, self.chain_word(index), "DT_GNU_HASH chain")?;
            if hash & 1 != 0 {
                return index
                    .checked_add(1)
                    .ok_or_else(|| Error::malformed("DT_GNU_HASH", "symbol count overflows"));
            }
            index = index
                .checked_add(1)
                .ok_or_else(|| Error::malformed("DT_GNU_HASH", "chain runs past 2^32"))?;
        }
    }

    /// Look `name` up; `name_of(index)` gives a symbol's name. `Ok(None)` if absent. The Bloom
    /// filter is not consulted: it only speeds up misses.
    pub fn lookup<'n>(
        &self,
        name: &str,
        mut name_of: impl FnMut(u32) -> Result<&'n str>,
    ) -> Result<Option<u32>> {
        if self.nbuckets == 0 {
            return Ok(None);
        }
        let hash = gnu_hash(name.as_bytes());
        let mut index = word(
            self.table,
            self.bucket_word(hash % self.nbuckets),
            "DT_GNU_HASH bucket",
        )?;
        if index == 0 {
            return Ok(None);
        }
        if index < self.symoffset {
            return Err(Error::malformed(
                "DT_GNU_HASH",
                format!(
                    "bucket names symbol {index} below symoffset {}",
                    self.symoffset
                ),
            ));
        }
        loop {
            let chain = word(self.table, self.chain_word(index), "DT_GNU_HASH chain")?;
            if chain | 1 == hash | 1 && name_of(index)? == name {
                return Ok(Some(index));
            }
            if chain & 1 != 0 {
                return Ok(None);
            }
            index = index
                .checked_add(1)
                .ok_or_else(|| Error::malformed("DT_GNU_HASH", "chain runs past 2^32"))?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_match_the_reference_values() {
        // Values from the System V ABI and glibc's dl-hash / dl-new-hash.
        assert_eq!(sysv_hash(b""), 0);
        assert_eq!(sysv_hash(b"printf"), 0x077905a6);
        assert_eq!(gnu_hash(b""), 0x00001505);
        assert_eq!(gnu_hash(b"printf"), 0x156b2bb8);
    }

    #[test]
    fn hostile_tables_are_errors() {
        // nbucket huge, table tiny.
        let t = [0xffu8, 0xff, 0xff, 0xff, 1, 0, 0, 0];
        assert!(SysvHashTable::parse(&t).is_err());
        // A chain that loops: nbucket 1, nchain 2, bucket -> 1, chain[1] -> 1.
        let words = [1u32, 2, 1, 0, 1];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let table = SysvHashTable::parse(&bytes).unwrap();
        assert!(table.lookup("x", |_| Ok("y")).is_err());
        // A GNU chain without an end marker running off the table.
        let words = [1u32, 1, 0, 0, 1, 2];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let table = GnuHashTable::parse(&bytes).unwrap();
        assert!(table.symbol_count().is_err());
    }
}
