//! Copies and fills on a compute queue: [`Queue::copy`] and [`Queue::fill`] launch the
//! driver's blit kernels like any kernel, and
//! [`CommandListBuilder::copy`] and [`CommandListBuilder::fill`] record them in a command
//! list with the same barrier and dependency rules as recorded launches.

use super::BlitKernels;
use crate::buffer::Buffer;
use crate::error::Result;
use crate::launch::{CommandListBuilder, Launch, LaunchOptions};
use crate::queue::Queue;

impl Queue {
    /// Copy `bytes` from `src_offset` of `src` to `dst_offset` of `dst` with the driver's
    /// copy kernel, a dispatch on this queue ordered with its launches as `options` say
    /// (`barrier: true` to start after every earlier packet). Any byte count and any
    /// alignment; both buffers must be of this queue's device and mapped on its GPU, the
    /// ranges inside them and not overlapping. The launch keeps both buffers alive until it
    /// completes.
    ///
    /// ```
    /// # if aqueduct::backend::choose().ok() != Some(aqueduct::backend::BackendChoice::Simulator) { return Ok(()); }
    /// use aqueduct::{Device, LaunchOptions, MemoryLocation, QueueOptions};
    /// let device = Device::open()?;
    /// let gpu = &device.gpus()?[0];
    /// let queue = device.create_queue(gpu, &QueueOptions::default())?;
    /// let a = device.alloc(gpu, MemoryLocation::Device, 100)?;
    /// let b = device.alloc(gpu, MemoryLocation::Device, 100)?;
    /// a.write(0, &(0..100u8).collect::<Vec<_>>())?;
    /// let ordered = LaunchOptions { barrier: true, ..LaunchOptions::default() };
    /// queue.fill(&b, 0, 100, 0xdead_beef, &ordered)?;
    /// queue.copy(&b, 1, &a, 10, 7, &ordered)?.wait(None)?; // bytes 10..17 of a to 1..8 of b
    /// let bytes = b.to_vec::<u8>()?;
    /// assert_eq!(bytes[..9], [0xef, 10, 11, 12, 13, 14, 15, 16, 0xef]);
    /// # Ok::<(), aqueduct::Error>(())
    /// ```
    pub fn copy(
        &self,
        dst: &Buffer,
        dst_offset: usize,
        src: &Buffer,
        src_offset: usize,
        bytes: usize,
        options: &LaunchOptions<'_>,
    ) -> Result<Launch> {
        let kernels = BlitKernels::of(self)?;
        let blit = kernels.copy(
            (self.owned.device(), self.gpu_id()),
            dst,
            dst_offset,
            src,
            src_offset,
            bytes,
        )?;
        self.launch_with(&blit.kernel, &blit.geometry, &blit.args, options)
    }

    /// Fill `bytes` at `offset` of `dst` with `value` repeated (byte `i` of the range gets
    /// byte `i % 4` of `value`, little-endian) with the driver's fill kernel, ordered as
    /// `options` say. Any byte count and any alignment; checked as [`Queue::copy`].
    pub fn fill(
        &self,
        dst: &Buffer,
        offset: usize,
        bytes: usize,
        value: u32,
        options: &LaunchOptions<'_>,
    ) -> Result<Launch> {
        let kernels = BlitKernels::of(self)?;
        let blit = kernels.fill(
            (self.owned.device(), self.gpu_id()),
            dst,
            offset,
            bytes,
            value,
        )?;
        self.launch_with(&blit.kernel, &blit.geometry, &blit.args, options)
    }
}

impl CommandListBuilder<'_> {
    /// Record a copy of `bytes` from `src_offset` of `src` to `dst_offset` of `dst`: one
    /// dispatch of the driver's copy kernel, checked as [`Queue::copy`] checks it and ordered
    /// as a recorded launch is (after [`CommandListBuilder::barrier`] it waits for every
    /// earlier packet; the next launch waits for it only with a barrier). The list keeps both
    /// buffers alive for its life.
    ///
    /// ```
    /// # if aqueduct::backend::choose().ok() != Some(aqueduct::backend::BackendChoice::Simulator) { return Ok(()); }
    /// use aqueduct::{Device, MemoryLocation, QueueOptions};
    /// let device = Device::open()?;
    /// let gpu = &device.gpus()?[0];
    /// let queue = device.create_queue(gpu, &QueueOptions::default())?;
    /// let [a, b] = [0, 1].map(|_| device.alloc(gpu, MemoryLocation::Device, 4096).unwrap());
    /// let mut list = queue.record();
    /// list.fill(&a, 0, 4096, 7)?; // a = 7, 7, ...
    /// list.barrier();
    /// list.copy(&b, 3, &a, 0, 4093)?; // after the fill
    /// let mut list = list.finish()?;
    /// list.replay()?;
    /// list.finish(None)?;
    /// assert_eq!(b.to_vec::<u32>()?[1], 0x0700_0000);
    /// # Ok::<(), aqueduct::Error>(())
    /// ```
    pub fn copy(
        &mut self,
        dst: &Buffer,
        dst_offset: usize,
        src: &Buffer,
        src_offset: usize,
        bytes: usize,
    ) -> Result<()> {
        let queue = self.queue();
        let kernels = BlitKernels::of(queue)?;
        let blit = kernels.copy(
            (queue.owned.device(), queue.gpu_id()),
            dst,
            dst_offset,
            src,
            src_offset,
            bytes,
        )?;
        self.launch(&blit.kernel, &blit.geometry, &blit.args)?;
        Ok(())
    }

    /// Record a fill of `bytes` at `offset` of `dst` with `value` repeated, checked as
    /// [`Queue::fill`] checks it and ordered as [`CommandListBuilder::copy`].
    pub fn fill(&mut self, dst: &Buffer, offset: usize, bytes: usize, value: u32) -> Result<()> {
        let queue = self.queue();
        let kernels = BlitKernels::of(queue)?;
        let blit = kernels.fill(
            (queue.owned.device(), queue.gpu_id()),
            dst,
            offset,
            bytes,
            value,
        )?;
        self.launch(&blit.kernel, &blit.geometry, &blit.args)?;
        Ok(())
    }
}
