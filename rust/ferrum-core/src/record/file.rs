//! Files written atomically (temporary file in the same directory, fsync,
//! rename), so a crash or failed write never leaves a half-written record.
//!
//! A process killed mid-write leaves its temporary file behind. Each one is
//! named `.<target name>.<pid>.<n>.tmp`, so the next save of the same target
//! finds the ones whose writer is gone and removes them: a save never touches
//! the temporary file of a process that is still alive, so two processes may
//! save the same path at once.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::error::{Error, Result};

/// This process's temporary files still being written (a file with this
/// process's id that is not among them was left by an earlier process that
/// had the same id).
static IN_FLIGHT: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);
static NEXT: AtomicU64 = AtomicU64::new(0);

fn in_flight<T>(f: impl FnOnce(&mut HashSet<PathBuf>) -> T) -> T {
    let mut guard = IN_FLIGHT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    f(guard.get_or_insert_with(HashSet::new))
}

/// A failed step of [`write_atomic`], wrapping the OS's error so its code
/// survives the added context (see [`os_code`]).
#[derive(Debug)]
struct Step {
    what: &'static str,
    source: io::Error,
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.what, self.source)
    }
}

impl std::error::Error for Step {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// The OS's error code (errno) behind `e`, also when [`write_atomic`] added
/// which step failed.
pub fn os_code(e: &io::Error) -> Option<i32> {
    e.raw_os_error().or_else(|| e.get_ref()?.downcast_ref::<Step>()?.source.raw_os_error())
}

impl Error {
    /// A file-system error on `path`, keeping the OS's error code (also when
    /// [`write_atomic`] wrapped it with the step that failed). Here rather
    /// than in `error.rs`, so that errors do not depend on the record layer.
    pub fn file(op: &'static str, path: &Path, e: &io::Error) -> Self {
        Error::File { op, path: path.display().to_string(), errno: os_code(e), message: e.to_string() }
    }
}

/// Write `data` to `path` atomically. The error says which step failed
/// and keeps the OS error's kind and code ([`os_code`]).
pub fn write_atomic(path: &Path, data: &[u8]) -> io::Result<()> {
    let fail = |what: &'static str, e: io::Error| io::Error::new(e.kind(), Step { what, source: e });
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => Path::new(".").to_path_buf(),
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    remove_stale(&dir, &name);
    let tmp = dir.join(format!(".{name}.{}.{}.tmp", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
    in_flight(|files| files.insert(tmp.clone()));
    let result = (|| {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| fail("cannot create a temporary file", e))?;
        f.write_all(data).map_err(|e| fail("write failed", e))?;
        f.sync_all().map_err(|e| fail("fsync failed", e))?;
        fs::rename(&tmp, path).map_err(|e| fail("rename failed", e))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    in_flight(|files| files.remove(&tmp));
    result
}

/// The writer's process id of a temporary file of `name`: `.<name>.<pid>.<n>.tmp`
/// (or `.<name>.<pid>.tmp`, as earlier versions named them).
fn writer_pid(file: &OsStr, name: &str) -> Option<u32> {
    let file = file.to_str()?;
    let middle = file.strip_prefix('.')?.strip_prefix(name)?.strip_prefix('.')?.strip_suffix(".tmp")?;
    let mut parts = middle.split('.');
    let pid = parts.next()?.parse().ok()?;
    match (parts.next(), parts.next()) {
        (None, _) => Some(pid),
        (Some(n), None) if n.parse::<u64>().is_ok() => Some(pid),
        _ => None,
    }
}

/// Remove the temporary files of `name` in `dir` that no live writer owns.
/// Best effort: a file that cannot be listed or removed stays.
fn remove_stale(dir: &Path, name: &str) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let me = std::process::id();
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(pid) = writer_pid(&file, name) else { continue };
        let path = entry.path();
        let stale = if pid == me { !in_flight(|files| files.contains(&path)) } else { !is_alive(pid) };
        if stale {
            let _ = fs::remove_file(&path);
        }
    }
}

#[cfg(unix)]
fn is_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    if pid <= 0 {
        return false;
    }
    // Signal 0 checks that the process exists; EPERM means it does, owned by another user.
    // SAFETY: kill with signal 0 sends nothing; it only reports whether `pid` exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn is_alive(_pid: u32) -> bool {
    // Without a portable liveness check, keep every file rather than risk a live writer's.
    true
}

pub fn read(path: &Path) -> Result<Vec<u8>> {
    fs::read(path).map_err(|e| Error::file("load record", path, &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ferrum-file-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn dead_pid() -> u32 {
        // A child that has exited and been waited for: its id names no process.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn temporary_names_parse_only_for_their_target() {
        let pid = |f: &str| writer_pid(OsStr::new(f), "model.mpk");
        assert_eq!(pid(".model.mpk.123.4.tmp"), Some(123));
        assert_eq!(pid(".model.mpk.123.tmp"), Some(123));
        assert_eq!(pid(".model.mpk.x.tmp"), None);
        assert_eq!(pid(".model.mpk.gz.123.4.tmp"), None);
        assert_eq!(pid(".other.mpk.123.4.tmp"), None);
        assert_eq!(pid("model.mpk"), None);
    }

    #[test]
    fn a_save_removes_stale_temporaries_and_keeps_live_ones() {
        let dir = scratch("stale");
        let target = dir.join("model.mpk");
        let dead = dead_pid();
        let stale = [dir.join(format!(".model.mpk.{dead}.0.tmp")), dir.join(format!(".model.mpk.{dead}.tmp"))];
        // Our own id, not in flight: left by an earlier process with the same id.
        let reused = dir.join(format!(".model.mpk.{}.999999.tmp", std::process::id()));
        let live = dir.join(".model.mpk.1.0.tmp"); // pid 1 is always alive
        let other = dir.join(format!(".other.mpk.{dead}.0.tmp"));
        for f in stale.iter().chain([&reused, &live, &other]) {
            fs::write(f, b"partial").unwrap();
        }
        write_atomic(&target, b"record").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"record");
        for f in stale.iter().chain([&reused]) {
            assert!(!f.exists(), "{} should be removed", f.display());
        }
        assert!(live.exists() && other.exists());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn concurrent_saves_of_one_path_never_mix() {
        let dir = scratch("concurrent");
        let target = dir.join("model.mpk");
        std::thread::scope(|s| {
            for t in 0..4u8 {
                let target = &target;
                s.spawn(move || {
                    for _ in 0..20 {
                        write_atomic(target, &vec![t; 100_000]).unwrap();
                    }
                });
            }
        });
        let data = fs::read(&target).unwrap();
        assert_eq!(data.len(), 100_000);
        assert!(data.iter().all(|b| *b == data[0]));
        let left: Vec<_> = fs::read_dir(&dir).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(left, vec![OsStr::new("model.mpk").to_owned()]);
        let _ = fs::remove_dir_all(&dir);
    }
}
