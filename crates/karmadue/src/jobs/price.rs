//! The published price table of human checks (docs/decisions.md 460): USD, records only
//! (DECISIONS 6: no money moves).
//!
//! | method | public | private |
//! |---|---|---|
//! | `human-check@1` (default) | $0 | $5.00 |
//! | `license-review@1` | $0 | $10.00 |
//! | `mcp-conformance@2` | $0 | $25.00 |
//!
//! A public check's result is public, and like verification help (payouts off) it costs $0;
//! a private one is priced per method.

/// The method ids, in the table's order.
pub const METHOD_IDS: [&str; 3] = ["human-check@1", "license-review@1", "mcp-conformance@2"];
/// The method used when none is named.
pub const DEFAULT_METHOD: &str = "human-check@1";
/// The scopes.
pub const SCOPES: [&str; 2] = ["public", "private"];
/// The scope used when none is named.
pub const DEFAULT_SCOPE: &str = "public";
/// Private prices, USD cents, in [`METHOD_IDS`]' order.
const PRIVATE_CENTS: [i64; 3] = [500, 1000, 2500];
/// The rule in one sentence, as quotes show it.
pub const RULE: &str = "Public checks are $0 (the result is public); private checks cost $5.00 (human-check@1), $10.00 (license-review@1) or $25.00 (mcp-conformance@2). Prices are records: no money moves.";

/// The price of `method` at `scope`, in USD cents; `None` for a method or scope not in the
/// table.
pub fn cents(method: &str, scope: &str) -> Option<i64> {
    let index = METHOD_IDS.iter().position(|id| *id == method)?;
    match scope {
        "public" => Some(0),
        "private" => Some(PRIVATE_CENTS[index]),
        _ => None,
    }
}

/// `cents` as dollars with two decimals, e.g. `$5.00`.
pub fn dollars(cents: i64) -> String {
    format!("${}.{:02}", cents / 100, cents % 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_prices_every_method_and_scope() {
        assert_eq!(cents("human-check@1", "public"), Some(0));
        assert_eq!(cents("mcp-conformance@2", "private"), Some(2500));
        assert_eq!(cents("nope@1", "public"), None);
        assert_eq!(cents("human-check@1", "secret"), None);
        assert_eq!(dollars(1005), "$10.05");
    }
}
