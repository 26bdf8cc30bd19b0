//! What a rate-limit charge costs: the in-memory limiter (a SQLite hub) beside the one that
//! counts in PostgreSQL (`rate_slots`, several hub processes), one caller and 16 at once, each
//! call charged to two buckets as a read is (the tier's reads and the tool's own), a second
//! apart in each caller's clock (so each bucket holds its last 60 calls). Prints
//! figures; asserts nothing. The PostgreSQL rows need `KD_TEST_PG_URL` (an admin URL; a
//! scratch database is made on it).
//!
//!     KD_TEST_PG_URL=postgres://postgres@127.0.0.1:5432/postgres cargo bench -p kd-core --bench limits

#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::Arc;
use std::time::Instant;

use kd_core::clock::ManualClock;
use kd_core::db::{Location, testing};
use kd_core::limits::{Charge, Limiter};
use kd_core::store::{Store, StoreMetrics};

const CALLS: usize = 4_000;

fn charges(caller: usize) -> [Charge; 2] {
    [
        Charge::one(format!("ip:10.0.0.{caller}:reads"), 1_000_000),
        Charge::one(format!("ip:10.0.0.{caller}:tool:get_resource"), 1_000_000),
    ]
}

fn run(runtime: &tokio::runtime::Runtime, limiter: &Arc<Limiter>, callers: usize) -> (f64, f64) {
    let started = Instant::now();
    runtime.block_on(async {
        let mut tasks = Vec::new();
        for caller in 0..callers {
            let limiter = Arc::clone(limiter);
            tasks.push(tokio::spawn(async move {
                for n in 0..CALLS / callers {
                    // A call a second: each bucket's window holds its last 60 calls.
                    let at = i64::try_from(n).unwrap() * 1_000;
                    limiter.take(&charges(caller), at).await.unwrap().unwrap();
                }
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
    });
    let seconds = started.elapsed().as_secs_f64();
    #[expect(clippy::cast_precision_loss, reason = "a call count")]
    let calls = CALLS as f64;
    (calls / seconds, seconds / calls * 1e6 * callers as f64)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut limiters = vec![("in memory", Arc::new(Limiter::in_memory()), None)];
    if let Some(url) = testing::scratch_postgres() {
        let store = Store::open_at(
            &Location::Postgres(url),
            Arc::new(ManualClock::new(0)),
            StoreMetrics::default(),
        )
        .unwrap();
        limiters.push((
            "PostgreSQL",
            Arc::new(Limiter::for_store(&store)),
            Some(store),
        ));
    } else {
        println!("(KD_TEST_PG_URL is not set: the PostgreSQL rows are skipped)");
    }
    println!("{CALLS} calls of two charges each");
    println!(
        "{:<12} {:>8} {:>12} {:>14}",
        "limiter", "callers", "calls/s", "µs per call"
    );
    for (name, limiter, _store) in &limiters {
        for callers in [1, 16] {
            let (rate, micros) = run(&runtime, limiter, callers);
            println!("{name:<12} {callers:>8} {rate:>12.0} {micros:>14.1}");
        }
    }
}
