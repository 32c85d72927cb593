//! Which paths the interposer serves: the device files, and the sysfs and `/dev/dri`
//! directories that the [mirror](crate::mirror) holds.

use std::ffi::CStr;

/// Directories whose whole subtree the mirror serves (normalised, no trailing slash). On a
/// machine without the GPU these do not exist; under the interposer they hold only what the
/// simulated machine has.
const MIRRORED: [&str; 6] = [
    "/sys/devices/virtual/kfd",
    "/sys/class/kfd",
    "/sys/class/drm",
    "/sys/module/amdgpu",
    "/dev/dri",
    // The loaded modules: the host's, and amdgpu.
    "/proc/modules",
];

/// Name prefixes (not whole directories) the mirror serves: the DRM character devices by
/// number (major 226).
const MIRRORED_NAMES: [&str; 1] = ["/sys/dev/char/226:"];

/// What a path names.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Served {
    /// `/dev/kfd`.
    Kfd,
    /// `/dev/dri/renderD<minor>` (the minor may not exist on the simulated machine).
    Render(u32),
    /// Some other name directly under `/dev/dri` (a `card` node): the simulated machine has
    /// none.
    OtherDriNode,
    /// A path in a mirrored subtree: the normalised absolute path.
    Mirrored(String),
    /// This process' link to one of its fds (`/proc/self/fd/N`, `/proc/thread-self/fd/N`,
    /// `/proc/<own pid>/fd/N`, `/dev/fd/N`): the callers serve it when `N` is a simulated fd
    /// (the kernel shows the device file there) and leave it to the host otherwise.
    OwnFd(i32),
    /// Everything else: the host's.
    Host,
}

/// Lexically normalise an absolute path (`.`, `..`, repeated slashes); `None` for a relative
/// or non-UTF-8 path.
fn normalise(path: &[u8]) -> Option<String> {
    let path = std::str::from_utf8(path).ok()?;
    if !path.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    let mut out = String::with_capacity(path.len());
    for part in parts {
        out.push('/');
        out.push_str(part);
    }
    if out.is_empty() {
        out.push('/');
    }
    Some(out)
}

/// Classify `path` (as passed to `open`, `stat`, ...). Cheap for the paths a program opens
/// most (anything not under `/dev` or `/sys`).
pub(crate) fn classify(path: &CStr) -> Served {
    let bytes = path.to_bytes();
    let maybe = bytes.starts_with(b"/dev")
        || bytes.starts_with(b"/sys")
        || bytes.starts_with(b"/proc/")
        || {
            // `/x/../dev/kfd` and `//dev/kfd` name the device too.
            bytes.first() == Some(&b'/') && (bytes.windows(2).any(|w| w == b"/." || w == b"//"))
        };
    if !maybe {
        return Served::Host;
    }
    let Some(path) = normalise(bytes) else {
        return Served::Host;
    };
    classify_normalised(path)
}

/// The fd number of a path naming one of this process' fd links, if it is one.
fn own_fd(path: &str) -> Option<i32> {
    let number = if let Some(rest) = path.strip_prefix("/dev/fd/") {
        rest
    } else {
        let rest = path.strip_prefix("/proc/")?;
        let (process, rest) = rest.split_once('/')?;
        let ours = process == "self"
            || process == "thread-self"
            || process.parse::<u32>().ok() == Some(std::process::id());
        if !ours {
            return None;
        }
        rest.strip_prefix("fd/")?
    };
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    number.parse().ok()
}

fn classify_normalised(path: String) -> Served {
    if path == "/dev/kfd" {
        return Served::Kfd;
    }
    if let Some(fd) = own_fd(&path) {
        return Served::OwnFd(fd);
    }
    if let Some(node) = path.strip_prefix("/dev/dri/") {
        return match node.strip_prefix("renderD").map(str::parse) {
            Some(Ok(minor)) => Served::Render(minor),
            // `/dev/dri/by-path/...` and the like: not on the simulated machine either.
            _ => Served::OtherDriNode,
        };
    }
    let mirrored = MIRRORED.iter().any(|root| {
        path.strip_prefix(root)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    });
    let mirrored = mirrored || MIRRORED_NAMES.iter().any(|prefix| path.starts_with(prefix));
    if mirrored {
        Served::Mirrored(path)
    } else {
        Served::Host
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(path: &CStr) -> Served {
        classify(path)
    }

    #[test]
    fn devices_mirrored_trees_and_the_host() {
        assert_eq!(of(c"/dev/kfd"), Served::Kfd);
        assert_eq!(of(c"//dev/./kfd"), Served::Kfd);
        assert_eq!(of(c"/tmp/../dev/kfd"), Served::Kfd);
        assert_eq!(of(c"/dev/dri/renderD128"), Served::Render(128));
        assert_eq!(of(c"/dev/dri/card0"), Served::OtherDriNode);
        assert_eq!(of(c"/dev/dri/renderDx"), Served::OtherDriNode);
        assert_eq!(
            of(c"/sys/class/kfd/kfd/topology/nodes/1/properties"),
            Served::Mirrored("/sys/class/kfd/kfd/topology/nodes/1/properties".into())
        );
        assert_eq!(of(c"/dev/dri"), Served::Mirrored("/dev/dri".into()));
        assert_eq!(of(c"/dev/dri/"), Served::Mirrored("/dev/dri".into()));
        assert_eq!(of(c"/sys/class/drmx"), Served::Host);
        assert_eq!(
            of(c"/sys/dev/char/226:128/device/drm"),
            Served::Mirrored("/sys/dev/char/226:128/device/drm".into())
        );
        assert_eq!(of(c"/sys/dev/char/1:3"), Served::Host);
        assert_eq!(of(c"/dev/null"), Served::Host);
        assert_eq!(of(c"/dev/kfd2"), Served::Host);
        assert_eq!(of(c"dev/kfd"), Served::Host);
        assert_eq!(of(c"/proc/self/maps"), Served::Host);
        assert_eq!(of(c"/proc/self/fd/7"), Served::OwnFd(7));
        assert_eq!(of(c"/proc/thread-self/fd/12"), Served::OwnFd(12));
        assert_eq!(of(c"/dev/fd/3"), Served::OwnFd(3));
        let own = std::ffi::CString::new(format!("/proc/{}/fd/5", std::process::id())).unwrap();
        assert_eq!(of(&own), Served::OwnFd(5));
        assert_eq!(of(c"/proc/1/fd/5"), Served::Host);
        assert_eq!(of(c"/proc/self/fd"), Served::Host);
        assert_eq!(of(c"/proc/self/fd/5x"), Served::Host);
        assert_eq!(of(c"/proc/self/fdinfo/5"), Served::Host);
        assert_eq!(
            of(c"/proc/modules"),
            Served::Mirrored("/proc/modules".into())
        );
    }
}
