//! `GET /linkdbots/api/v1/benchmarks/{category}` latency over a million cards (issue 14), in
//! process: the Linkdbots router answers the request (store read of the category's window,
//! outliers, medians, the per-success figures, the JSON), no network.
//!
//! ```text
//! cargo bench -p kd-linkdbots --bench board                    # 1,000,000 cards, SQLite
//! cargo bench -p kd-linkdbots --bench board -- 200000          # another size
//! KD_BENCH_DATABASE_URL=postgres://… cargo bench -p kd-linkdbots --bench board
//! ```
//!
//! The cards are generated from a seed (so every run reads the same rows) and written once
//! into `target/kd-bench/linkdbots-<n>` (SQLite; reused while it holds `n` cards) or into the
//! PostgreSQL database named (emptied of cards first). The shape: half of all cards in
//! `code.review` (its window is the 100,000 most recent, decision 203), the rest spread over
//! twenty other categories; 300 (model, engine, host) rows; log-normal costs and tokens with
//! a few very expensive runs (so the outlier rule has work); an outcome on 80 % of cards,
//! digests 2 %, host-signed 10 %. Each category is requested 10 times, then `ROUNDS` times
//! (`KD_BENCH_ROUNDS`) measured, twice: cold (each request to a new router, whose leaderboard
//! cache is empty: the window read and the computation) and warm (one router: the cached
//! leaderboard after the one-row version read). p50, p99 and max per category, with the
//! response size.

use std::error::Error;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use kd_core::clock::SystemClock;
use kd_core::db::Location;
use kd_core::store::{Store, StoreMetrics};
use kd_linkdbots::ApiError;
use kd_linkdbots::store::{CardRow, insert_card};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tower::ServiceExt as _;

type Outcome<T> = Result<T, Box<dyn Error>>;

/// Requests measured per category (`KD_BENCH_ROUNDS` to change).
const ROUNDS: usize = 200;

/// The categories requested: the big one and two small ones.
const MEASURED: &[&str] = &["code.review", "code.bugfix", "data.analysis"];

/// The categories besides `code.review` that get cards.
const OTHERS: &[&str] = &[
    "code.feature",
    "code.bugfix",
    "code.refactor",
    "code.test",
    "code.docs",
    "ops.deploy",
    "ops.incident",
    "qa",
    "email.triage",
    "email.reply",
    "research.summary",
    "research.compare",
    "data.analysis",
    "data.pipeline",
    "writing.draft",
    "writing.edit",
    "translation",
    "support.reply",
    "browser.task",
    "other",
];

/// Writes per store write.
const CHUNK: usize = 20_000;

fn main() -> Outcome<()> {
    let total: usize = std::env::args()
        .skip(1)
        .find_map(|arg| arg.replace('_', "").parse().ok())
        .unwrap_or(1_000_000);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run(total))
}

async fn run(total: usize) -> Outcome<()> {
    let (store, name) = open(total)?;
    let held = count(&store).await?;
    if held == i64::try_from(total)? {
        println!("{name}: reusing {total} cards");
    } else {
        let started = Instant::now();
        store
            .write(|txn| {
                txn.conn()
                    .execute("DELETE FROM linkdbots_cards", [])
                    .map_err(ApiError::from)
            })
            .await??;
        fill(&store, total).await?;
        println!(
            "{name}: wrote {total} cards in {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }
    let fresh = || -> axum::Router {
        kd_linkdbots::router(kd_linkdbots::Linkdbots::new(
            store.clone(),
            Arc::new(SystemClock),
            Arc::new(kd_core::random::SystemRandom),
        ))
    };
    println!(
        "GET /linkdbots/api/v1/benchmarks/{{category}}: cold (a process that has not computed \
         it: the window read and the figures) and warm (the leaderboard this process computed \
         last, decision 346)"
    );
    for category in MEASURED {
        measure(&fresh, category, true).await?;
        measure(&fresh, category, false).await?;
    }
    store.close();
    Ok(())
}

/// The store: `KD_BENCH_DATABASE_URL` (PostgreSQL) or a SQLite file under `target/kd-bench`.
fn open(total: usize) -> Outcome<(Store, String)> {
    let (location, name) = if let Ok(url) = std::env::var("KD_BENCH_DATABASE_URL") {
        (Location::Postgres(url), "PostgreSQL".to_owned())
    } else {
        let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../target/kd-bench")
            .join(format!("linkdbots-{total}"));
        std::fs::create_dir_all(&folder)?;
        (
            Location::Sqlite(folder.join("db.sqlite")),
            format!("SQLite {}", folder.display()),
        )
    };
    let store = Store::open_at(&location, Arc::new(SystemClock), StoreMetrics::default())?;
    Ok((store, name))
}

async fn count(store: &Store) -> Outcome<i64> {
    Ok(store
        .read(|conn| {
            conn.query_row("SELECT COUNT(*) FROM linkdbots_cards", [], |row| row.get(0))
                .map_err(ApiError::from)
        })
        .await?)
}

/// One generated card, `index` of `total`, occurring within the last 30 days of `now_ms`.
fn card(rng: &mut StdRng, index: usize, total: usize, now_ms: i64) -> CardRow {
    let category = if rng.gen_bool(0.5) {
        "code.review"
    } else {
        OTHERS[rng.gen_range(0..OTHERS.len())]
    };
    let row = rng.gen_range(0..300_u32);
    let digest = rng.gen_bool(0.02);
    let expensive = if rng.gen_bool(0.01) { 50.0 } else { 1.0 };
    let cost =
        (f64::from(row % 17 + 1) * 40_000.0 * (rng.gen_range(-1.0..1.0_f64)).exp() * expensive)
            as i64;
    let tokens = (f64::from(row % 23 + 2) * 3_000.0 * (rng.gen_range(-1.0..1.0_f64)).exp()) as i64;
    let outcome = (!digest && rng.gen_bool(0.8)).then(|| {
        if rng.gen_bool(0.3 + f64::from(row % 7) / 10.0) {
            "success"
        } else {
            "failure"
        }
    });
    let signed = rng.gen_bool(0.1);
    let age = (total - index) as i64 * 30 * 86_400_000 / total as i64;
    CardRow {
        id: format!("crd_bench{index:015}"),
        agent_id: None,
        category: category.to_owned(),
        tokens_in: Some(tokens * 8 / 10),
        tokens_out: Some(tokens * 2 / 10),
        cost_micros: Some(cost),
        turns: Some(rng.gen_range(1..40)),
        tool_calls: Some(rng.gen_range(0..80)),
        wall_ms: Some(rng.gen_range(5_000..900_000)),
        model: format!("model-{}", row % 30),
        engine: format!("engine-{}", row / 30 % 5),
        host: format!("host-{}", row % 2),
        occurred_ms: now_ms - age,
        outcome: outcome.map(str::to_owned),
        is_digest: digest,
        playbook_refs: "[]".to_owned(),
        provenance: if signed {
            "host-signed"
        } else {
            "self-reported"
        }
        .to_owned(),
        host_key_id: signed.then(|| "bench-host".to_owned()),
        source: None,
        source_item: None,
        created_ms: now_ms - age,
    }
}

async fn fill(store: &Store, total: usize) -> Outcome<()> {
    let mut rng = StdRng::seed_from_u64(14);
    let now_ms = store.clock().now_ms();
    let mut index = 0;
    while index < total {
        let end = (index + CHUNK).min(total);
        let cards: Vec<CardRow> = (index..end)
            .map(|i| card(&mut rng, i, total, now_ms))
            .collect();
        store
            .write(move |txn| {
                for card in &cards {
                    insert_card(txn.conn(), card)?;
                }
                Ok::<_, ApiError>(())
            })
            .await??;
        index = end;
    }
    Ok(())
}

async fn measure(fresh: &dyn Fn() -> axum::Router, category: &str, cold: bool) -> Outcome<()> {
    let shared = fresh();
    let path = format!("/api/v1/benchmarks/{category}");
    let rounds = std::env::var("KD_BENCH_ROUNDS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(ROUNDS);
    let mut times = Vec::with_capacity(rounds);
    let mut size = 0;
    for round in 0..rounds + 10 {
        let request = Request::get(&path).body(Body::empty())?;
        let started = Instant::now();
        let router = if cold { fresh() } else { shared.clone() };
        let response = router.oneshot(request).await?;
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX).await?;
        let took = started.elapsed();
        if status != StatusCode::OK {
            return Err(format!("{path}: {status} {}", String::from_utf8_lossy(&body)).into());
        }
        size = body.len();
        if round >= 10 {
            times.push(took);
        }
    }
    times.sort();
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "  {category:<14} {:<5} p50 {:>8.3} ms   p99 {:>8.3} ms   max {:>8.3} ms   ({size} bytes)",
        if cold { "cold" } else { "warm" },
        ms(at(0.5)),
        ms(at(0.99)),
        ms(at(1.0)),
    );
    Ok(())
}
