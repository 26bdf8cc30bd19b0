//! Standard output that survives a closed pipe. Rust ignores SIGPIPE, so a write to a pipe
//! whose reader is gone (`karmadue ledger verify | head -1`) fails with `BrokenPipe`, and
//! `println!` panics on it. [`line`] stops printing instead: the command goes on and exits
//! with its own status (a broken ledger is still exit 1), saying nothing more.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once a write to standard output failed; later lines are dropped.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes one line to standard output, unless it is closed.
pub fn line(args: std::fmt::Arguments<'_>) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    let written = out
        .write_fmt(args)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    if let Err(error) = written {
        CLOSED.store(true, Ordering::Relaxed);
        if error.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("error: cannot write to standard output: {error}");
        }
    }
}
