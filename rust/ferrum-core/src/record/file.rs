//! Files written atomically (temporary file in the same directory, fsync,
//! rename), so a crash or failed write never leaves a half-written record.

use std::fs;
use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

pub fn write_atomic(path: &Path, data: &[u8]) -> Result<()> {
    let fail = |what: &str, e: std::io::Error| Error::invalid("save record", format!("{}: {what}: {e}", path.display()));
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => Path::new(".").to_path_buf(),
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = fs::File::create(&tmp).map_err(|e| fail("cannot create a temporary file", e))?;
        f.write_all(data).map_err(|e| fail("write failed", e))?;
        f.sync_all().map_err(|e| fail("fsync failed", e))?;
        fs::rename(&tmp, path).map_err(|e| fail("rename failed", e))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

pub fn read(path: &Path) -> Result<Vec<u8>> {
    fs::read(path).map_err(|e| Error::invalid("load record", format!("{}: cannot read: {e}", path.display())))
}
