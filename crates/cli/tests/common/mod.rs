//! What the binary's tests share: a hub served on a free port, and the agent client.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, dead_code)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_karmadue");

pub struct Hub {
    pub child: Child,
    pub url: String,
    /// What `serve` printed after its first line, up to the tool count.
    pub banner: Vec<String>,
}

impl Drop for Hub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn start_hub(data_dir: &Path) -> Hub {
    start_hub_with(data_dir, &[])
}

pub fn start_hub_with(data_dir: &Path, extra: &[&std::ffi::OsStr]) -> Hub {
    start_hub_as(Command::new(BIN), data_dir, extra)
}

/// `serve` run by `command` (the binary itself, or a shell that sets something up first).
pub fn start_hub_as(mut command: Command, data_dir: &Path, extra: &[&std::ffi::OsStr]) -> Hub {
    let mut child = command
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--bundled-catalog",
            "false",
            "--data-dir",
        ])
        .arg(data_dir)
        .args(extra)
        .env("KARMADUE_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let first = lines.next().unwrap().unwrap();
    let addr = first
        .strip_prefix("KarmaDue hub listening on ")
        .expect(&first)
        .trim()
        .to_owned();
    let mut banner = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        let last = line.trim_start().starts_with("tools");
        banner.push(line);
        if last {
            break;
        }
    }
    std::thread::spawn(move || for _ in lines {});
    Hub {
        child,
        url: format!("http://{addr}"),
        banner,
    }
}

pub fn agent(hub: &Hub, key_file: &Path, args: &[&str]) -> (bool, serde_json::Value, String) {
    let output = Command::new(BIN)
        .arg("agent")
        .args(args)
        .env("KARMADUE_HUB", &hub.url)
        .env("KARMADUE_AGENT_FILE", key_file)
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    let json = serde_json::from_str(&stdout).unwrap_or(serde_json::Value::Null);
    (output.status.success(), json, stderr)
}
