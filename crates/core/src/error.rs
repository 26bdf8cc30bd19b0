//! Printing an error with its causes: the one chain walk the areas' error types and the
//! kernel's `Cause` share when a failure of the hub's own is logged (issue 10, "causes kept as
//! `source()` chains and logged once").

use std::error::Error;
use std::fmt;

/// Displays an error and every `source()` under it, outermost first, joined by `": "`:
/// `outer: inner: root`.
///
/// ```
/// # use kd_core::error::Chain;
/// let io = std::io::Error::other("disk full");
/// assert_eq!(Chain(&io).to_string(), "disk full");
/// ```
#[derive(Clone, Copy)]
pub struct Chain<'a>(pub &'a (dyn Error + 'static));

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(error) = source {
            write!(f, ": {error}")?;
            source = error.source();
        }
        Ok(())
    }
}

impl fmt::Debug for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("reading the log")]
    struct Outer(#[source] std::io::Error);

    #[derive(Debug, thiserror::Error)]
    #[error("rebuilding")]
    struct Top(#[source] Outer);

    #[test]
    fn every_cause_is_printed_outermost_first() {
        let error = Top(Outer(std::io::Error::other("disk full")));
        assert_eq!(
            Chain(&error).to_string(),
            "rebuilding: reading the log: disk full"
        );
        assert_eq!(
            format!("{:?}", Chain(&error)),
            "rebuilding: reading the log: disk full"
        );
    }
}
