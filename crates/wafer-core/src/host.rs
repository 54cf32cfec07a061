//! What this machine and process can still have: memory (under every
//! limit that would kill the process rather than fail an allocation) and
//! disk space. Asked before anything large is allocated or written, so a
//! run or a file too large is refused with a clear error.

/// Memory this process can still have [bytes], and which limit says so:
/// the smallest of the machine's `MemAvailable`, what the address-space
/// limit (`ulimit -v`, `RLIMIT_AS`) leaves above the process's size, and
/// what its cgroup's memory limit leaves (v2 `memory.max`, v1
/// `memory.limit_in_bytes`). A run over any of them would die by a signal
/// (an allocation abort or the OOM killer) rather than with an error.
pub fn available() -> Option<(u64, &'static str)> {
    [
        mem_available().map(|m| (m, "the machine has")),
        address_space_left().map(|m| (m, "the address-space limit (ulimit -v) leaves")),
        cgroup_left().map(|m| (m, "the cgroup's memory limit leaves")),
    ]
    .into_iter()
    .flatten()
    .min_by_key(|&(m, _)| m)
}

/// Bytes free for this user on the file system holding `dir`, `None` when
/// it cannot be asked.
pub fn disk_free(dir: &std::path::Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: `c` is a NUL-terminated path and `st` a writable statvfs;
    // statvfs writes only into `st` and its result is read only on success.
    #[allow(unsafe_code)]
    let st = unsafe {
        if libc::statvfs(c.as_ptr(), st.as_mut_ptr()) != 0 {
            return None;
        }
        st.assume_init()
    };
    Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// `RLIMIT_AS`'s soft limit less the process's virtual size (from /proc:
/// no system call, no `unsafe`).
fn address_space_left() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    let soft: u64 = line
        .trim_start_matches("Max address space")
        .split_whitespace()
        .next()?
        .parse()
        .ok()?; // "unlimited" does not parse: no limit
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let vm = status.lines().find(|l| l.starts_with("VmSize:"))?;
    let kib: u64 = vm.split_whitespace().nth(1)?.parse().ok()?;
    Some(soft.saturating_sub(kib * 1024))
}

/// The cgroup's memory limit less its usage (v2, then v1); `None` when
/// unlimited or not visible.
fn cgroup_left() -> Option<u64> {
    let read = |p: &str| -> Option<u64> { std::fs::read_to_string(p).ok()?.trim().parse().ok() };
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let path_of = |ctrl: &str| {
        own.lines()
            .find_map(|l| {
                let mut f = l.splitn(3, ':');
                let (_, c, p) = (f.next()?, f.next()?, f.next()?);
                (c == ctrl).then(|| p.to_string())
            })
            .unwrap_or_default()
    };
    let v2 = path_of("");
    let v1 = path_of("memory");
    let candidates = [
        (
            format!("/sys/fs/cgroup{v2}/memory.max"),
            format!("/sys/fs/cgroup{v2}/memory.current"),
        ),
        (
            "/sys/fs/cgroup/memory.max".into(),
            "/sys/fs/cgroup/memory.current".into(),
        ),
        (
            format!("/sys/fs/cgroup/memory{v1}/memory.limit_in_bytes"),
            format!("/sys/fs/cgroup/memory{v1}/memory.usage_in_bytes"),
        ),
        (
            "/sys/fs/cgroup/memory/memory.limit_in_bytes".into(),
            "/sys/fs/cgroup/memory/memory.usage_in_bytes".into(),
        ),
    ];
    candidates.iter().find_map(|(max, cur)| {
        // "max" (v2) does not parse; v1 writes a huge number for none.
        let max = read(max).filter(|&m| m < 1 << 60)?;
        Some(max.saturating_sub(read(cur).unwrap_or(0)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guard_takes_the_smallest_limit_it_can_see() {
        // On Linux at least MemAvailable is there; the smallest wins.
        let (m, what) = available().expect("a limit on Linux");
        assert!(m <= mem_available().unwrap(), "{m} from {what}");
        if let Some(a) = address_space_left() {
            assert!(m <= a);
        }
    }

    #[test]
    fn the_disk_has_room_and_a_missing_folder_says_nothing() {
        assert!(disk_free(std::path::Path::new(".")).is_some_and(|b| b > 0));
        assert_eq!(disk_free(std::path::Path::new("/no/such/folder")), None);
    }
}
