//! The `karmadue` binary as a person uses it: `serve` on a free port, the agent client, and
//! `ledger verify` catching a corrupted row.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::io::BufReader;
use std::path::Path;
use std::process::{Command, Stdio};

mod common;

use common::{BIN, agent, start_hub, start_hub_as, start_hub_with};

/// The head files in `heads`, waiting up to 10 s for the first to appear.
fn head_files(heads: &Path) -> Vec<std::path::PathBuf> {
    for _ in 0..200 {
        let files: Vec<_> = std::fs::read_dir(heads)
            .map(|entries| entries.flatten().map(|entry| entry.path()).collect())
            .unwrap_or_default();
        if !files.is_empty() {
            return files;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Vec::new()
}

#[path = "cli/client.rs"]
mod client;
#[path = "cli/commands.rs"]
mod commands;
#[path = "cli/ledger.rs"]
mod ledger;
#[path = "cli/serve.rs"]
mod serve;
