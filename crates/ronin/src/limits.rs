//! Ronin's write limits (section 9, `rate-limited`): at most [`PER_KEY`] events a minute from
//! one key and [`PER_ADDRESS`] from one address, counted in a sliding minute per event
//! accepted for the writer by the hub's one limiter (`kd_core::limits`): a batch is charged
//! whole, every key of it checked first and charged only if all have room, exactly under
//! concurrency and, on PostgreSQL, across every hub process on the database.

/// Events a minute from one key.
pub const PER_KEY: u32 = 60;
/// Events a minute from one address.
pub const PER_ADDRESS: u32 = 600;
