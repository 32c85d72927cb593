//! A port opened by the server: LLVM's `Port<true>` send/recv state machine (rpc.h), with
//! waits that back off to sleeping and give up when the program is over.

use std::sync::atomic::{Ordering, fence};

use super::mailbox::{Mailbox, Packet};
use super::wait::Waiter;
use crate::error::Result;

/// Why a port exchange stopped before it finished.
#[derive(Debug)]
pub enum Interrupted {
    /// The program ended (or is being stopped) while the server waited for the GPU.
    Stopped,
    /// The shared buffer could not be reached.
    Failed(crate::Error),
}

impl From<crate::Error> for Interrupted {
    fn from(error: crate::Error) -> Self {
        Self::Failed(error)
    }
}

/// One port the server owns work on.
#[derive(Debug)]
pub struct ServerPort<'a> {
    mailbox: &'a Mailbox,
    waiter: &'a Waiter,
    index: u32,
    out: u32,
    lane_mask: u64,
    opcode: u32,
    receive: bool,
    owns_buffer: bool,
}

impl<'a> ServerPort<'a> {
    /// Open `index`, which [`Mailbox::pending`] found with work.
    pub fn open(mailbox: &'a Mailbox, waiter: &'a Waiter, index: u32) -> Result<Self> {
        let out = mailbox.load_outbox(index)?;
        fence(Ordering::Acquire);
        let (lane_mask, opcode) = mailbox.header(index)?;
        // Lanes beyond the buffer's lane count cannot be live.
        let lanes = mailbox.layout().lanes;
        let lane_mask = if lanes >= 64 {
            lane_mask
        } else {
            lane_mask & ((1u64 << lanes) - 1)
        };
        Ok(Self {
            mailbox,
            waiter,
            index,
            out,
            lane_mask,
            opcode,
            receive: false,
            owns_buffer: true,
        })
    }

    /// The opcode the client asked for.
    pub fn opcode(&self) -> u32 {
        self.opcode
    }

    /// The lanes the client has live.
    pub fn lanes(&self) -> impl Iterator<Item = u32> + use<> {
        let mask = self.lane_mask;
        (0..64).filter(move |lane| mask >> lane & 1 == 1)
    }

    fn invert_outbox(&mut self) -> Result<()> {
        self.out = u32::from(self.out == 0);
        self.mailbox.store_outbox(self.index, self.out)
    }

    /// Wait until the server owns the buffer (its inbox differs from its outbox).
    fn wait_for_ownership(&self, mut inbox: u32) -> std::result::Result<(), Interrupted> {
        let since = std::time::Instant::now();
        while inbox == self.out {
            if !self.waiter.pause(since) {
                return Err(Interrupted::Stopped);
            }
            inbox = self.mailbox.load_inbox(self.index)?;
        }
        fence(Ordering::Acquire);
        Ok(())
    }

    /// Receive one packet per live lane.
    pub fn recv(&mut self) -> std::result::Result<Vec<(u32, Packet)>, Interrupted> {
        if self.receive {
            self.invert_outbox()?;
            self.owns_buffer = false;
        }
        let inbox = if self.owns_buffer {
            self.out ^ 1
        } else {
            self.mailbox.load_inbox(self.index)?
        };
        self.wait_for_ownership(inbox)?;
        let packets = self
            .lanes()
            .map(|lane| Ok((lane, self.mailbox.read_packet(self.index, lane)?)))
            .collect::<Result<Vec<_>>>()?;
        self.receive = true;
        self.owns_buffer = true;
        Ok(packets)
    }

    /// Send one packet per live lane, `fill(lane)` giving each.
    pub fn send(
        &mut self,
        mut fill: impl FnMut(u32) -> Packet,
    ) -> std::result::Result<(), Interrupted> {
        let inbox = if self.owns_buffer {
            self.out ^ 1
        } else {
            self.mailbox.load_inbox(self.index)?
        };
        self.wait_for_ownership(inbox)?;
        for lane in self.lanes() {
            self.mailbox.write_packet(self.index, lane, &fill(lane))?;
        }
        self.invert_outbox()?;
        self.owns_buffer = false;
        self.receive = false;
        Ok(())
    }

    /// Receive a byte string per live lane (LLVM's `recv_n`): a first packet with the length
    /// and 56 bytes, then 64-byte packets while any lane has bytes left. Lengths above
    /// `limit` are cut to it (the rest is still received and dropped).
    pub fn recv_n(&mut self, limit: u64) -> std::result::Result<Vec<(u32, Vec<u8>)>, Interrupted> {
        let first = self.recv()?;
        let mut strings: Vec<(u32, u64, Vec<u8>)> = first
            .iter()
            .map(|(lane, packet)| {
                let size = packet[0];
                let mut bytes = Vec::with_capacity(size.min(limit) as usize);
                append(&mut bytes, &packet[1..], size.min(56).min(limit));
                (*lane, size, bytes)
            })
            .collect();
        let longest = strings.iter().map(|s| s.1).max().unwrap_or(0);
        let mut at = 56u64;
        while at < longest {
            let packets = self.recv()?;
            for (lane, packet) in packets {
                if let Some(string) = strings.iter_mut().find(|s| s.0 == lane)
                    && at < string.1
                {
                    let want = (string.1 - at).min(64);
                    let room = limit.saturating_sub(at).min(want);
                    append(&mut string.2, &packet, room);
                }
            }
            at += 64;
        }
        Ok(strings
            .into_iter()
            .map(|(lane, _, bytes)| (lane, bytes))
            .collect())
    }

    /// Give the buffer back to the client if the server still owns it.
    pub fn close(mut self) -> Result<()> {
        if self.owns_buffer {
            self.invert_outbox()?;
        }
        Ok(())
    }
}

fn append(bytes: &mut Vec<u8>, words: &[u64], count: u64) {
    let all: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    bytes.extend_from_slice(&all[..(count as usize).min(all.len())]);
}
