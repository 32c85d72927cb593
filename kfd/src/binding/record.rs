//! The binding record: what a [`ProcessBinding`](super::ProcessBinding) on the real kernel
//! writes down about itself, so that a fresh copy of the driver in the same process (loaded
//! after the copy that made the binding was unloaded with `dlclose`) can find the binding and
//! reuse it (issue 11).
//!
//! The record is read back from process memory that anything in the process may have written,
//! so the parser trusts nothing: fixed little-endian fields, a magic, a format version, a
//! length, a sequence number that is odd while a writer is inside, and a checksum; every
//! count is bounded and every value checked. Whatever does not pass is refused with the
//! reason, and even a record that passes is only a claim: the adopting copy checks each file
//! and the event page against the kernel before it uses them (`super::handoff`).
//!
//! Layout (all little-endian):
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `AQDBIND\0` |
//! | 8 | 4 | format version ([`RECORD_VERSION`]) |
//! | 12 | 4 | total length in bytes |
//! | 16 | 8 | sequence (odd while being written; not covered by the checksum) |
//! | 24 | 8 | FNV-1a 64 of bytes 0..16 and 32..length |
//! | 32 | 40 | pid, kfd fd, kfd device major/minor, interface major/minor, runtime tag and errno, render-file count, event-page flag |
//! | 72 | 16 each | render files: gpu_id, render minor, fd, 0 |
//! | then | 32 | event page (if flagged): address, size, BO handle, registered, mapped-on count |
//! | then | 4 each | gpu_ids the event page is mapped on |

use std::collections::BTreeSet;

use crate::abi::KFD_EVENT_PAGE_SIZE;
use crate::errno::Errno;

use super::{RenderFile, RuntimeState};

/// The record's magic.
pub(crate) const RECORD_MAGIC: [u8; 8] = *b"AQDBIND\0";
/// The record format this driver writes and reads.
pub(crate) const RECORD_VERSION: u32 = 1;
/// Offset of the sequence number.
pub(crate) const SEQUENCE_OFFSET: usize = 16;
/// Offset of the checksum.
const CHECKSUM_OFFSET: usize = 24;
/// Bytes before the body.
const HEADER_LEN: usize = 32;
/// Bytes of the fixed part of the body.
const FIXED_LEN: usize = 40;
/// Bytes of one render-file entry.
const RENDER_ENTRY_LEN: usize = 16;
/// Bytes of the event page's fixed part.
const EVENT_PAGE_LEN: usize = 32;
/// The most GPUs a record describes (KFD topologies have far fewer; a bound on what a
/// hostile record may ask the parser to read).
pub(crate) const MAX_GPUS: usize = 64;
/// The longest record: one page holds it with room to spare.
pub(crate) const MAX_RECORD_LEN: usize =
    HEADER_LEN + FIXED_LEN + MAX_GPUS * RENDER_ENTRY_LEN + EVENT_PAGE_LEN + MAX_GPUS * 4;

/// The event page as the record describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EventPageRecord {
    /// Its address (the same for the CPU and every GPU).
    pub address: u64,
    /// Its size ([`KFD_EVENT_PAGE_SIZE`]).
    pub size: u64,
    /// The BO handle.
    pub handle: u64,
    /// Whether the kernel took it (the first CREATE_EVENT carried it).
    pub registered: bool,
    /// The GPUs it is mapped on.
    pub mapped_on: BTreeSet<u32>,
}

/// What a binding record says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BindingRecord {
    /// The process that made the binding.
    pub pid: i32,
    /// Its `/dev/kfd` fd.
    pub kfd_fd: i32,
    /// The device number `/dev/kfd` had when it was opened.
    pub kfd_device: (u32, u32),
    /// The KFD interface version.
    pub interface: (u32, u32),
    /// What RUNTIME_ENABLE did.
    pub runtime: RuntimeState,
    /// The render-node file bound to each GPU, by gpu_id.
    pub render_files: Vec<(u32, RenderFile)>,
    /// The event page, once made.
    pub event_page: Option<EventPageRecord>,
}

/// Why bytes are not a usable record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RecordFault {
    /// Not a record at all (no magic): somebody else's memory of the same name.
    NotARecord,
    /// A record of another format version (another version of aqueduct).
    Version(u32),
    /// A writer is inside (odd sequence).
    BeingWritten,
    /// Damaged or forged: what is wrong.
    Corrupt(&'static str),
}

impl std::fmt::Display for RecordFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotARecord => f.write_str("not a binding record (no magic)"),
            Self::Version(v) => write!(
                f,
                "a binding record of format version {v} (this aqueduct reads version \
                 {RECORD_VERSION}): the binding was made by another version of aqueduct"
            ),
            Self::BeingWritten => f.write_str("the binding record is being written"),
            Self::Corrupt(why) => write!(f, "a damaged binding record: {why}"),
        }
    }
}

/// FNV-1a 64 over `parts`.
fn checksum(parts: &[&[u8]]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &byte in *part {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

fn runtime_tag(runtime: RuntimeState) -> (u32, i32) {
    match runtime {
        RuntimeState::NotAttempted => (0, 0),
        RuntimeState::Enabled => (1, 0),
        RuntimeState::NotSupported => (2, 0),
        RuntimeState::Refused(errno) => (3, errno.raw()),
    }
}

impl BindingRecord {
    /// The record's bytes, with sequence `sequence` (even: complete).
    pub(crate) fn encode(&self, sequence: u64) -> Vec<u8> {
        let mut out = Vec::with_capacity(MAX_RECORD_LEN);
        out.extend_from_slice(&RECORD_MAGIC);
        out.extend_from_slice(&RECORD_VERSION.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes()); // length, below
        out.extend_from_slice(&sequence.to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes()); // checksum, below
        let (tag, errno) = runtime_tag(self.runtime);
        let renders = &self.render_files[..self.render_files.len().min(MAX_GPUS)];
        for word in [
            self.pid as u32,
            self.kfd_fd as u32,
            self.kfd_device.0,
            self.kfd_device.1,
            self.interface.0,
            self.interface.1,
            tag,
            errno as u32,
            renders.len() as u32,
            u32::from(self.event_page.is_some()),
        ] {
            out.extend_from_slice(&word.to_le_bytes());
        }
        for (gpu_id, file) in renders {
            for word in [*gpu_id, file.minor, file.fd as u32, 0] {
                out.extend_from_slice(&word.to_le_bytes());
            }
        }
        if let Some(page) = &self.event_page {
            let mapped: Vec<u32> = page.mapped_on.iter().copied().take(MAX_GPUS).collect();
            out.extend_from_slice(&page.address.to_le_bytes());
            out.extend_from_slice(&page.size.to_le_bytes());
            out.extend_from_slice(&page.handle.to_le_bytes());
            out.extend_from_slice(&u32::from(page.registered).to_le_bytes());
            out.extend_from_slice(&(mapped.len() as u32).to_le_bytes());
            for gpu_id in mapped {
                out.extend_from_slice(&gpu_id.to_le_bytes());
            }
        }
        let len = out.len() as u32;
        out[12..16].copy_from_slice(&len.to_le_bytes());
        let sum = checksum(&[&out[..SEQUENCE_OFFSET], &out[HEADER_LEN..]]);
        out[CHECKSUM_OFFSET..HEADER_LEN].copy_from_slice(&sum.to_le_bytes());
        out
    }

    /// Parse a record from `bytes` (which may be longer than the record: a whole page).
    pub(crate) fn decode(bytes: &[u8]) -> Result<Self, RecordFault> {
        let mut header = Reader::new(bytes);
        if header.bytes(8) != Some(&RECORD_MAGIC[..]) {
            return Err(RecordFault::NotARecord);
        }
        let corrupt = RecordFault::Corrupt;
        let version = header.u32().ok_or(corrupt("truncated header"))?;
        if version != RECORD_VERSION {
            return Err(RecordFault::Version(version));
        }
        let len = header.u32().ok_or(corrupt("truncated header"))? as usize;
        let sequence = header.u64().ok_or(corrupt("truncated header"))?;
        let stored_sum = header.u64().ok_or(corrupt("truncated header"))?;
        if sequence % 2 == 1 {
            return Err(RecordFault::BeingWritten);
        }
        if !(HEADER_LEN + FIXED_LEN..=MAX_RECORD_LEN).contains(&len) {
            return Err(corrupt("length out of range"));
        }
        let record = bytes.get(..len).ok_or(corrupt("shorter than its length"))?;
        if checksum(&[&record[..SEQUENCE_OFFSET], &record[HEADER_LEN..]]) != stored_sum {
            return Err(corrupt("checksum mismatch"));
        }
        let mut body = Reader::new(&record[HEADER_LEN..]);
        let mut word = || body.u32().ok_or(corrupt("truncated body"));
        let pid = word()? as i32;
        let kfd_fd = word()? as i32;
        let kfd_device = (word()?, word()?);
        let interface = (word()?, word()?);
        let runtime = match (word()?, word()? as i32) {
            (0, _) => RuntimeState::NotAttempted,
            (1, _) => RuntimeState::Enabled,
            (2, _) => RuntimeState::NotSupported,
            (3, errno) => RuntimeState::Refused(Errno::from_raw(errno)),
            _ => return Err(corrupt("unknown runtime state")),
        };
        let render_count = word()? as usize;
        let has_event_page = match word()? {
            0 => false,
            1 => true,
            _ => return Err(corrupt("bad event-page flag")),
        };
        if pid <= 0 || kfd_fd < 0 {
            return Err(corrupt("bad pid or kfd fd"));
        }
        if render_count > MAX_GPUS {
            return Err(corrupt("too many render files"));
        }
        let mut render_files: Vec<(u32, RenderFile)> = Vec::with_capacity(render_count);
        for _ in 0..render_count {
            let (gpu_id, minor, fd, reserved) = (
                body.u32().ok_or(corrupt("truncated render files"))?,
                body.u32().ok_or(corrupt("truncated render files"))?,
                body.u32().ok_or(corrupt("truncated render files"))? as i32,
                body.u32().ok_or(corrupt("truncated render files"))?,
            );
            if gpu_id == 0 || fd < 0 || reserved != 0 {
                return Err(corrupt("bad render file"));
            }
            if render_files.iter().any(|(id, _)| *id == gpu_id) {
                return Err(corrupt("a GPU listed twice"));
            }
            render_files.push((gpu_id, RenderFile { minor, fd }));
        }
        let event_page = if has_event_page {
            let truncated = corrupt("truncated event page");
            let address = body.u64().ok_or(truncated.clone())?;
            let size = body.u64().ok_or(truncated.clone())?;
            let handle = body.u64().ok_or(truncated.clone())?;
            let registered = match body.u32().ok_or(truncated.clone())? {
                0 => false,
                1 => true,
                _ => return Err(corrupt("bad registered flag")),
            };
            let mapped_count = body.u32().ok_or(truncated.clone())? as usize;
            if mapped_count > MAX_GPUS {
                return Err(corrupt("event page mapped on too many GPUs"));
            }
            let mut mapped_on = BTreeSet::new();
            for _ in 0..mapped_count {
                let gpu_id = body.u32().ok_or(truncated.clone())?;
                if gpu_id == 0 || !mapped_on.insert(gpu_id) {
                    return Err(corrupt("bad event-page GPU list"));
                }
            }
            if address == 0 || address % 4096 != 0 || size != KFD_EVENT_PAGE_SIZE as u64 {
                return Err(corrupt("bad event-page address or size"));
            }
            if address.checked_add(size).is_none() {
                return Err(corrupt("event page wraps the address space"));
            }
            Some(EventPageRecord {
                address,
                size,
                handle,
                registered,
                mapped_on,
            })
        } else {
            None
        };
        if body.remaining() != 0 {
            return Err(corrupt("trailing bytes"));
        }
        Ok(Self {
            pid,
            kfd_fd,
            kfd_device,
            interface,
            runtime,
            render_files,
            event_page,
        })
    }
}

/// Bounds-checked little-endian reads.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.bytes.len() < n {
            return None;
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Some(head)
    }

    fn u32(&mut self) -> Option<u32> {
        self.bytes(4)?.try_into().ok().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> Option<u64> {
        self.bytes(8)?.try_into().ok().map(u64::from_le_bytes)
    }

    fn remaining(&self) -> usize {
        self.bytes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> BindingRecord {
        BindingRecord {
            pid: 4242,
            kfd_fd: 3,
            kfd_device: (235, 0),
            interface: (1, 17),
            runtime: RuntimeState::Refused(Errno::EBUSY),
            render_files: vec![
                (0x1234, RenderFile { minor: 128, fd: 4 }),
                (0x5678, RenderFile { minor: 129, fd: 5 }),
            ],
            event_page: Some(EventPageRecord {
                address: 0x7f00_0000_0000,
                size: KFD_EVENT_PAGE_SIZE as u64,
                handle: 0x1234_0000_0000,
                registered: true,
                mapped_on: [0x1234, 0x5678].into_iter().collect(),
            }),
        }
    }

    /// Re-seal `bytes` after tampering with the body, as a forger who knows the format would.
    fn reseal(bytes: &mut [u8]) {
        let len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
        let sum = checksum(&[&bytes[..SEQUENCE_OFFSET], &bytes[HEADER_LEN..len]]);
        bytes[CHECKSUM_OFFSET..HEADER_LEN].copy_from_slice(&sum.to_le_bytes());
    }

    #[test]
    fn a_record_round_trips_inside_a_page() {
        let record = sample();
        let bytes = record.encode(2);
        assert!(bytes.len() <= MAX_RECORD_LEN && MAX_RECORD_LEN <= 4096);
        let mut page = vec![0u8; 4096];
        page[..bytes.len()].copy_from_slice(&bytes);
        assert_eq!(BindingRecord::decode(&page), Ok(record.clone()));
        let bare = BindingRecord {
            event_page: None,
            render_files: Vec::new(),
            runtime: RuntimeState::NotAttempted,
            ..record
        };
        assert_eq!(BindingRecord::decode(&bare.encode(0)), Ok(bare));
    }

    #[test]
    fn foreign_and_torn_records_are_refused() {
        assert_eq!(BindingRecord::decode(&[]), Err(RecordFault::NotARecord));
        assert_eq!(
            BindingRecord::decode(&[0u8; 4096]),
            Err(RecordFault::NotARecord)
        );
        let mut bytes = sample().encode(2);
        bytes[8] = 9;
        assert_eq!(BindingRecord::decode(&bytes), Err(RecordFault::Version(9)));
        let bytes = sample().encode(3);
        assert_eq!(
            BindingRecord::decode(&bytes),
            Err(RecordFault::BeingWritten)
        );
        // The sequence is outside the checksum: a finished write (odd to even) still passes.
        let mut bytes = sample().encode(2);
        bytes[SEQUENCE_OFFSET] = 8;
        assert!(BindingRecord::decode(&bytes).is_ok());
    }

    #[test]
    fn every_truncation_and_every_flipped_bit_is_refused() {
        let bytes = sample().encode(2);
        for cut in 0..bytes.len() {
            assert!(
                BindingRecord::decode(&bytes[..cut]).is_err(),
                "truncated at {cut}"
            );
        }
        for index in 0..bytes.len() {
            if (SEQUENCE_OFFSET..SEQUENCE_OFFSET + 8).contains(&index) {
                continue;
            }
            for bit in 0..8 {
                let mut flipped = bytes.clone();
                flipped[index] ^= 1 << bit;
                assert!(
                    BindingRecord::decode(&flipped).is_err(),
                    "bit {bit} of byte {index} flipped"
                );
            }
        }
    }

    #[test]
    fn well_sealed_lies_are_refused() {
        let body = HEADER_LEN;
        let cases: [(usize, &[u8], &str); 7] = [
            // pid 0
            (body, &0u32.to_le_bytes(), "pid"),
            // a negative kfd fd
            (body + 4, &(-1i32).to_le_bytes(), "fd"),
            // runtime tag 9
            (body + 24, &9u32.to_le_bytes(), "runtime"),
            // a million render files
            (body + 32, &1_000_000u32.to_le_bytes(), "count"),
            // event-page flag 2
            (body + 36, &2u32.to_le_bytes(), "flag"),
            // the second GPU's id equal to the first's
            (
                body + FIXED_LEN + RENDER_ENTRY_LEN,
                &0x1234u32.to_le_bytes(),
                "duplicate",
            ),
            // an event page at an unaligned address
            (
                body + FIXED_LEN + 2 * RENDER_ENTRY_LEN,
                &0x7f00_0000_0010u64.to_le_bytes(),
                "address",
            ),
        ];
        for (offset, value, what) in cases {
            let mut bytes = sample().encode(2);
            bytes[offset..offset + value.len()].copy_from_slice(value);
            reseal(&mut bytes);
            assert!(
                matches!(BindingRecord::decode(&bytes), Err(RecordFault::Corrupt(_))),
                "{what}: {:?}",
                BindingRecord::decode(&bytes)
            );
        }
        // A length field pointing past the end, or beyond the largest record.
        for len in [5000u32, u32::MAX, 10] {
            let mut bytes = sample().encode(2);
            bytes[12..16].copy_from_slice(&len.to_le_bytes());
            assert!(BindingRecord::decode(&bytes).is_err(), "length {len}");
        }
        // Trailing bytes inside the stated length.
        let mut bytes = sample().encode(2);
        bytes.extend_from_slice(&[0; 4]);
        let len = bytes.len() as u32;
        bytes[12..16].copy_from_slice(&len.to_le_bytes());
        reseal(&mut bytes);
        assert_eq!(
            BindingRecord::decode(&bytes),
            Err(RecordFault::Corrupt("trailing bytes"))
        );
    }
}
