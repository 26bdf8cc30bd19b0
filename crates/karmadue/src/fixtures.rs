//! The MCP conformance suite's fixture tools, served only in `--conformance-fixtures` mode
//! (loopback only). They exist so the official suite's `tools-call-*` scenarios can run against
//! the real MCP adapter; they touch no store.

use crate::registry::Tool;

/// The fixture tools.
pub static TOOLS: &[Tool] = &[];
