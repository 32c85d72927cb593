//! `DRM_IOCTL_VERSION` and the `DRM_IOCTL_AMDGPU_INFO` queries.

use std::os::fd::RawFd;

use kfd::Sys;
use kfd::ioctl::call_unchecked;
use zerocopy::{FromBytes, IntoBytes};

use crate::Error;
use crate::abi::{
    DeviceInfo, FirmwareInfo, InfoArgs, MemoryInfo, QueryFw, VersionArgs, VramGttInfo, query,
};
use crate::request;

/// What `DRM_IOCTL_VERSION` reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriverVersion {
    /// Driver name (`amdgpu`).
    pub name: String,
    /// Driver date.
    pub date: String,
    /// Driver description.
    pub desc: String,
    /// `(major, minor, patchlevel)`.
    pub version: (i32, i32, i32),
}

/// Longest driver string accepted (the kernel's are a few dozen bytes).
const MAX_VERSION_STRING: u64 = 4096;

/// `DRM_IOCTL_VERSION`, in the usual two calls: lengths first, then the strings.
pub fn driver_version(sys: &dyn Sys, fd: RawFd) -> Result<DriverVersion, Error> {
    let mut args = VersionArgs::default();
    // SAFETY: all buffer pointers are 0, so the kernel writes only the struct.
    unsafe { call_unchecked::<request::Version>(sys, fd, &mut args)? };
    if args.name_len > MAX_VERSION_STRING
        || args.date_len > MAX_VERSION_STRING
        || args.desc_len > MAX_VERSION_STRING
    {
        return Err(Error::Malformed("DRM_IOCTL_VERSION string lengths"));
    }
    let mut name = vec![0u8; args.name_len as usize];
    let mut date = vec![0u8; args.date_len as usize];
    let mut desc = vec![0u8; args.desc_len as usize];
    args.name = name.as_mut_ptr() as u64;
    args.date = date.as_mut_ptr() as u64;
    args.desc = desc.as_mut_ptr() as u64;
    // SAFETY: each pointer/length pair describes a live, exclusively borrowed Vec; the kernel
    // writes at most `*_len` bytes to each.
    unsafe { call_unchecked::<request::Version>(sys, fd, &mut args)? };
    let text = |bytes: Vec<u8>, len: u64| {
        let len = (len as usize).min(bytes.len());
        String::from_utf8_lossy(&bytes[..len])
            .trim_end_matches('\0')
            .to_owned()
    };
    Ok(DriverVersion {
        name: text(name, args.name_len),
        date: text(date, args.date_len),
        desc: text(desc, args.desc_len),
        version: (
            args.version_major,
            args.version_minor,
            args.version_patchlevel,
        ),
    })
}

/// Issue one AMDGPU_INFO query whose answer is a `T`.
fn info<T: FromBytes + IntoBytes + Default>(
    sys: &dyn Sys,
    fd: RawFd,
    query: u32,
    query_fw: QueryFw,
) -> Result<T, Error> {
    let mut answer = T::default();
    let bytes = answer.as_mut_bytes();
    let mut args = InfoArgs {
        return_pointer: bytes.as_mut_ptr() as u64,
        return_size: bytes.len() as u32,
        query,
        query_fw,
    };
    // SAFETY: `return_pointer`/`return_size` describe `answer`, a live plain-data value; the
    // kernel writes at most `return_size` bytes and any byte pattern is a valid `T`.
    unsafe { call_unchecked::<request::AmdgpuInfo>(sys, fd, &mut args)? };
    Ok(answer)
}

/// AMDGPU_INFO_DEV_INFO.
pub fn device_info(sys: &dyn Sys, fd: RawFd) -> Result<DeviceInfo, Error> {
    info(sys, fd, query::DEV_INFO, QueryFw::default())
}

/// AMDGPU_INFO_VRAM_GTT.
pub fn vram_gtt(sys: &dyn Sys, fd: RawFd) -> Result<VramGttInfo, Error> {
    info(sys, fd, query::VRAM_GTT, QueryFw::default())
}

/// AMDGPU_INFO_MEMORY.
pub fn memory(sys: &dyn Sys, fd: RawFd) -> Result<MemoryInfo, Error> {
    info(sys, fd, query::MEMORY, QueryFw::default())
}

/// AMDGPU_INFO_FW_VERSION for one firmware (`fw_type` from [`crate::abi::firmware`]).
pub fn firmware_version(
    sys: &dyn Sys,
    fd: RawFd,
    fw_type: u32,
    ip_instance: u32,
    index: u32,
) -> Result<FirmwareInfo, Error> {
    info(
        sys,
        fd,
        query::FW_VERSION,
        QueryFw {
            fw_type,
            ip_instance,
            index,
            pad: 0,
        },
    )
}
