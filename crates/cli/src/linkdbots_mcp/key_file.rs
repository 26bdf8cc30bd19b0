//! Where `karmadue linkdbots-mcp` keeps its agent key (spec "The MCP server"; docs/decisions.md
//! 342): `$HOME/.linkdbots/agent.json`, the folder mode 0700 and the file 0600, written once
//! (a file that is already there is never overwritten: a key cannot be read back from the
//! API, so replacing one would lose it).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

/// What the key file holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyFile {
    /// The profile's id, `agt_…`.
    pub agent_id: String,
    /// Its handle.
    pub handle: String,
    /// The key, `lkb_agent_…`. Sent only as `Authorization: Bearer` to [`KeyFile::api_url`].
    pub agent_key: String,
    /// The API base it was minted by.
    pub api_url: String,
    /// How it was obtained: `pair`, or `register` (unclaimed until a person claims it).
    pub obtained_by: String,
}

/// `$HOME/.linkdbots/agent.json`, or `None` when `HOME` is unset or empty.
pub fn default_path(home: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    home.filter(|home| !home.is_empty())
        .map(|home| PathBuf::from(home).join(".linkdbots").join("agent.json"))
}

/// The key file at `path`: `None` when there is none.
///
/// # Errors
/// A file that cannot be read or is not a key file (it is never replaced: the error names it).
pub fn load(path: &Path) -> anyhow::Result<Option<KeyFile>> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .with_context(|| format!("{} is not a Linkdbots key file", path.display())),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Writes `key` to `path`, making its folder (mode 0700) when needed; the file is created
/// with mode 0600 and only when there is none.
///
/// # Errors
/// The file already exists, or the folder or file cannot be written.
pub fn save(path: &Path, key: &KeyFile) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder
            .create(dir)
            .with_context(|| format!("cannot make {}", dir.display()))?;
        #[cfg(unix)]
        std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .with_context(|| format!("cannot make {} private", dir.display()))?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).with_context(|| {
        format!(
            "cannot write {} (a key file that is already there is never replaced)",
            path.display()
        )
    })?;
    let mut text = serde_json::to_string_pretty(key)?;
    text.push('\n');
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: &str) -> KeyFile {
        KeyFile {
            agent_id: id.to_owned(),
            handle: "miso".to_owned(),
            agent_key: "lkb_agent_00".to_owned(),
            api_url: "http://127.0.0.1:8080/linkdbots/api/v1".to_owned(),
            obtained_by: "pair".to_owned(),
        }
    }

    #[test]
    fn the_key_file_is_private_and_never_replaced() {
        let home = tempfile::tempdir().unwrap();
        let path = default_path(Some(home.path().as_os_str())).unwrap();
        assert_eq!(path, home.path().join(".linkdbots/agent.json"));
        assert_eq!(load(&path).unwrap(), None);
        save(&path, &key("agt_1")).unwrap();
        assert_eq!(load(&path).unwrap(), Some(key("agt_1")));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o600);
            assert_eq!(mode(path.parent().unwrap()), 0o700);
        }
        // A second save refuses and leaves the first key in place.
        assert!(save(&path, &key("agt_2")).is_err());
        assert_eq!(load(&path).unwrap(), Some(key("agt_1")));
    }

    #[test]
    fn no_home_means_no_key_file_and_a_broken_file_is_an_error_not_a_blank() {
        assert_eq!(default_path(None), None);
        assert_eq!(default_path(Some(std::ffi::OsStr::new(""))), None);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent.json");
        std::fs::write(&path, "{\"agentKey\": 1}").unwrap();
        let error = load(&path).unwrap_err().to_string();
        assert!(error.contains("is not a Linkdbots key file"), "{error}");
    }
}
