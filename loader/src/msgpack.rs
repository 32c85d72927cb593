//! A small borrowing MessagePack reader for the metadata note: strings are borrowed from the
//! note, integers are accepted in any width, and nesting is bounded so that hostile input cannot
//! exhaust the stack. Markers are classified by `rmp`.

use rmp::Marker;

/// How deep maps and arrays may nest. AMDGPU metadata nests four levels (root, kernel list,
/// kernel, argument list, argument); anything far deeper is hostile.
const MAX_DEPTH: u32 = 32;

/// A decoding failure, described for the person reading the error.
pub(crate) type DecodeError = String;

/// A scalar or container header read from the stream.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Item<'a> {
    Nil,
    Bool(bool),
    Uint(u64),
    Int(i64),
    Float(f64),
    /// A string's bytes, not yet checked to be UTF-8 (keys are matched as bytes).
    Str(&'a [u8]),
    Bin(&'a [u8]),
    Array(u32),
    Map(u32),
    Ext,
}

impl Item<'_> {
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Item::Nil => "nil",
            Item::Bool(_) => "a boolean",
            Item::Uint(_) | Item::Int(_) => "an integer",
            Item::Float(_) => "a float",
            Item::Str(_) => "a string",
            Item::Bin(_) => "binary data",
            Item::Array(_) => "an array",
            Item::Map(_) => "a map",
            Item::Ext => "an extension value",
        }
    }
}

/// A cursor over MessagePack bytes.
#[derive(Debug)]
pub(crate) struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0 }
    }

    /// Bytes not read yet.
    pub(crate) fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.data.len())
            .ok_or_else(|| {
                format!(
                    "msgpack value at byte {} needs {n} bytes, only {} remain",
                    self.pos,
                    self.remaining()
                )
            })?;
        let bytes = &self.data[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    fn be(&mut self, n: usize) -> Result<u64, DecodeError> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, &b| acc << 8 | u64::from(b)))
    }

    fn str(&mut self, len: u64) -> Result<&'a [u8], DecodeError> {
        self.take(usize::try_from(len).unwrap_or(usize::MAX))
    }

    /// Read one item; for containers, only the header (the caller reads the elements).
    pub(crate) fn item(&mut self) -> Result<Item<'a>, DecodeError> {
        let byte = self.take(1)?[0];
        Ok(match Marker::from_u8(byte) {
            Marker::FixPos(v) => Item::Uint(u64::from(v)),
            Marker::FixNeg(v) => Item::Int(i64::from(v)),
            Marker::Null => Item::Nil,
            Marker::True => Item::Bool(true),
            Marker::False => Item::Bool(false),
            Marker::U8 => Item::Uint(self.be(1)?),
            Marker::U16 => Item::Uint(self.be(2)?),
            Marker::U32 => Item::Uint(self.be(4)?),
            Marker::U64 => Item::Uint(self.be(8)?),
            Marker::I8 => Item::Int(i64::from(self.be(1)? as u8 as i8)),
            Marker::I16 => Item::Int(i64::from(self.be(2)? as u16 as i16)),
            Marker::I32 => Item::Int(i64::from(self.be(4)? as u32 as i32)),
            Marker::I64 => Item::Int(self.be(8)? as i64),
            Marker::F32 => Item::Float(f64::from(f32::from_bits(self.be(4)? as u32))),
            Marker::F64 => Item::Float(f64::from_bits(self.be(8)?)),
            Marker::FixStr(len) => Item::Str(self.str(u64::from(len))?),
            Marker::Str8 => {
                let len = self.be(1)?;
                Item::Str(self.str(len)?)
            }
            Marker::Str16 => {
                let len = self.be(2)?;
                Item::Str(self.str(len)?)
            }
            Marker::Str32 => {
                let len = self.be(4)?;
                Item::Str(self.str(len)?)
            }
            Marker::Bin8 | Marker::Bin16 | Marker::Bin32 => {
                let width = match Marker::from_u8(byte) {
                    Marker::Bin8 => 1,
                    Marker::Bin16 => 2,
                    _ => 4,
                };
                let len = self.be(width)?;
                Item::Bin(self.take(usize::try_from(len).unwrap_or(usize::MAX))?)
            }
            Marker::FixArray(len) => Item::Array(u32::from(len)),
            Marker::Array16 => Item::Array(self.be(2)? as u32),
            Marker::Array32 => Item::Array(self.be(4)? as u32),
            Marker::FixMap(len) => Item::Map(u32::from(len)),
            Marker::Map16 => Item::Map(self.be(2)? as u32),
            Marker::Map32 => Item::Map(self.be(4)? as u32),
            Marker::FixExt1 => self.ext(1)?,
            Marker::FixExt2 => self.ext(2)?,
            Marker::FixExt4 => self.ext(4)?,
            Marker::FixExt8 => self.ext(8)?,
            Marker::FixExt16 => self.ext(16)?,
            Marker::Ext8 => {
                let len = self.be(1)?;
                self.ext(len)?
            }
            Marker::Ext16 => {
                let len = self.be(2)?;
                self.ext(len)?
            }
            Marker::Ext32 => {
                let len = self.be(4)?;
                self.ext(len)?
            }
            Marker::Reserved => {
                return Err(format!(
                    "reserved msgpack marker 0xc1 at byte {}",
                    self.pos - 1
                ));
            }
        })
    }

    fn ext(&mut self, len: u64) -> Result<Item<'a>, DecodeError> {
        // One type byte, then the payload.
        self.take(1)?;
        self.take(usize::try_from(len).unwrap_or(usize::MAX))?;
        Ok(Item::Ext)
    }

    /// Skip the elements of a container whose header `item` was just read.
    pub(crate) fn skip_contents(&mut self, item: Item<'a>, depth: u32) -> Result<(), DecodeError> {
        let count = match item {
            Item::Array(n) => u64::from(n),
            Item::Map(n) => 2 * u64::from(n),
            _ => return Ok(()),
        };
        if depth >= MAX_DEPTH {
            return Err(format!("msgpack nesting deeper than {MAX_DEPTH}"));
        }
        for _ in 0..count {
            // Every element takes at least one byte: a count larger than the input is caught
            // by `take` before it can spin.
            let inner = self.item()?;
            self.skip_contents(inner, depth + 1)?;
        }
        Ok(())
    }

    /// Skip one whole value.
    pub(crate) fn skip_value(&mut self, depth: u32) -> Result<(), DecodeError> {
        let item = self.item()?;
        self.skip_contents(item, depth)
    }

    /// Check that a container's element count could possibly fit in the bytes that remain
    /// (each element takes at least one byte), before the caller reserves memory for it.
    pub(crate) fn plausible_count(&self, count: u32, per_element: u64) -> Result<(), DecodeError> {
        if u64::from(count) * per_element > self.remaining() as u64 {
            return Err(format!(
                "msgpack container claims {count} elements but only {} bytes remain",
                self.remaining()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_width() {
        let mut buf = Vec::new();
        rmp::encode::write_map_len(&mut buf, 2).unwrap();
        rmp::encode::write_str(&mut buf, "a").unwrap();
        rmp::encode::write_u64(&mut buf, 1 << 40).unwrap();
        rmp::encode::write_str(&mut buf, "b").unwrap();
        rmp::encode::write_array_len(&mut buf, 3).unwrap();
        rmp::encode::write_i32(&mut buf, -70000).unwrap();
        rmp::encode::write_bool(&mut buf, true).unwrap();
        rmp::encode::write_u8(&mut buf, 7).unwrap();
        let mut r = Reader::new(&buf);
        assert_eq!(r.item(), Ok(Item::Map(2)));
        assert_eq!(r.item(), Ok(Item::Str(b"a")));
        assert_eq!(r.item(), Ok(Item::Uint(1 << 40)));
        assert_eq!(r.item(), Ok(Item::Str(b"b")));
        assert_eq!(r.item(), Ok(Item::Array(3)));
        assert_eq!(r.item(), Ok(Item::Int(-70000)));
        assert_eq!(r.item(), Ok(Item::Bool(true)));
        assert_eq!(r.item(), Ok(Item::Uint(7)));
        assert_eq!(r.remaining(), 0);
        assert!(r.item().is_err());
        let mut r = Reader::new(&buf);
        r.skip_value(0).unwrap();
        assert_eq!(r.remaining(), 0);
    }

    #[test]
    fn refuses_hostile_input() {
        // Deep nesting.
        let deep = vec![0x91u8; 10_000];
        assert!(Reader::new(&deep).skip_value(0).is_err());
        // A huge count with no elements.
        let huge = [0xdd, 0xff, 0xff, 0xff, 0xff];
        assert!(Reader::new(&huge).skip_value(0).is_err());
        // A string running past the end.
        assert!(Reader::new(&[0xa5, b'a']).item().is_err());
        assert!(Reader::new(&[0xc1]).item().is_err());
    }
}
