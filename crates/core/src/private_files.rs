//! Owner-only modes for what the hub keeps on disk (docs/decisions.md 171 and 491). The data
//! folder holds the database (password hashes, emails, the mail outbox), the server keys and
//! the search index: the folder and the keys folder are made (or tightened to) 0700 and the
//! SQLite files 0600, set explicitly so the process's umask does not decide. SQLite makes its
//! `-wal` and `-shm` files later with the database file's mode, so they follow it.

use std::path::Path;

/// Makes `dir` (and its parents) if needed and sets it to 0700.
///
/// # Errors
/// The I/O error of making the folder or setting its mode.
pub fn make_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    set_mode(dir, 0o700)
}

/// Sets the SQLite database at `path` and its `-wal` and `-shm` files (those that exist) to
/// 0600.
///
/// # Errors
/// The I/O error of setting a mode.
pub fn make_database_private(path: &Path) -> std::io::Result<()> {
    for suffix in ["", "-wal", "-shm"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        let file = Path::new(&name);
        if file.exists() {
            set_mode(file, 0o600)?;
        }
    }
    Ok(())
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) -> std::io::Result<()> {
    Ok(())
}
