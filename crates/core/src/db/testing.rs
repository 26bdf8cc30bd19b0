//! Scratch databases for tests and benchmarks: which backend a test run uses, and fresh
//! PostgreSQL databases on the server `scripts/test` starts.
//!
//! - `KD_TEST_PG_URL`: the PostgreSQL server (an admin URL, e.g.
//!   `postgres://postgres@127.0.0.1:5432/postgres`).
//! - `KD_TEST_DATABASE=postgres`: run the API suites' hubs on PostgreSQL (default: SQLite).
//! - `KD_REQUIRE_PG=1`: a test that needs the server fails instead of skipping when it is
//!   not configured.

use std::sync::atomic::{AtomicU64, Ordering};

use super::{Backend, create_postgres_database};

/// The backend the test hubs of this run use (`KD_TEST_DATABASE`).
///
/// # Panics
/// When `KD_TEST_DATABASE` names neither backend, or names PostgreSQL without
/// `KD_TEST_PG_URL`.
pub fn backend() -> Backend {
    match std::env::var("KD_TEST_DATABASE").as_deref() {
        Err(_) | Ok("" | "sqlite") => Backend::Sqlite,
        Ok("postgres" | "postgresql") => {
            assert!(
                admin_url().is_some(),
                "KD_TEST_DATABASE=postgres needs KD_TEST_PG_URL (scripts/test starts a server)"
            );
            Backend::Postgres
        }
        Ok(other) => panic!("KD_TEST_DATABASE={other}: expected sqlite or postgres"),
    }
}

/// The test server's admin URL (`KD_TEST_PG_URL`), when one is configured.
///
/// # Panics
/// When `KD_REQUIRE_PG=1` and no server is configured.
pub fn admin_url() -> Option<String> {
    match std::env::var("KD_TEST_PG_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var("KD_REQUIRE_PG").as_deref() != Ok("1"),
                "KD_REQUIRE_PG=1 but KD_TEST_PG_URL is not set"
            );
            None
        }
    }
}

/// A name no other database of this test server has: `kd_t_<pid>_<n>_<nanos>`.
pub fn fresh_name() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.subsec_nanos());
    format!(
        "kd_t_{}_{}_{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A new, empty database on the test server (its URL), or `None` when no server is
/// configured.
///
/// # Panics
/// When the server refuses (a test cannot go on without it), or as [`admin_url`].
pub fn scratch_postgres() -> Option<String> {
    let admin = admin_url()?;
    Some(
        create_postgres_database(&admin, &fresh_name(), None)
            .unwrap_or_else(|error| panic!("could not create a test database: {error}")),
    )
}
