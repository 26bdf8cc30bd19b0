//! The limiter in memory and in the database (PostgreSQL, when the test server is
//! configured): the same answers from both.

use std::sync::Arc;

use super::*;
use crate::clock::ManualClock;
use crate::db::{Location, testing};
use crate::store::StoreMetrics;

fn charge(key: &str, limit: u32) -> Charge {
    Charge::one(key, limit)
}

/// An in-memory limiter, and one shared through a fresh PostgreSQL database (with the store
/// that holds it) when a server is configured.
fn limiters() -> Vec<(Limiter, Option<Store>)> {
    let mut all = vec![(Limiter::in_memory(), None)];
    if let Some(url) = testing::scratch_postgres() {
        let store = Store::open_at(
            &Location::Postgres(url),
            Arc::new(ManualClock::new(0)),
            StoreMetrics::default(),
        )
        .unwrap();
        all.push((Limiter::for_store(&store), Some(store)));
    }
    all
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn take(limiter: &Limiter, charges: &[Charge], at: i64) -> Result<(), Limited> {
    runtime().block_on(limiter.take(charges, at)).unwrap()
}

#[test]
fn a_bucket_admits_its_limit_per_rolling_minute() {
    for (limiter, _store) in limiters() {
        let reads = [charge("a:reads", 3)];
        for at in [0, 10_000, 20_000] {
            assert_eq!(take(&limiter, &reads, at), Ok(()));
        }
        assert_eq!(
            take(&limiter, &reads, 30_000),
            Err(Limited {
                charge: 0,
                retry_after_ms: 30_000
            }),
            "shared: {}",
            limiter.is_shared()
        );
        assert!(take(&limiter, &reads, 59_999).is_err());
        assert_eq!(take(&limiter, &reads, 60_000), Ok(()));
    }
}

#[test]
fn a_refused_call_takes_no_slot_anywhere() {
    for (limiter, _store) in limiters() {
        let both = [charge("a:reads", 5), charge("a:tool:x", 1)];
        assert_eq!(take(&limiter, &both, 0), Ok(()));
        assert_eq!(take(&limiter, &both, 1).unwrap_err().charge, 1);
        for at in 2..6 {
            assert_eq!(
                take(&limiter, &[charge("a:reads", 5), charge("a:tool:y", 9)], at),
                Ok(())
            );
        }
        assert!(take(&limiter, &[charge("a:reads", 5)], 7).is_err());
        assert!(
            take(&limiter, &[charge("z:none", 0)], 7).is_err(),
            "a limit of 0 admits none"
        );
    }
}

#[test]
fn a_batch_takes_its_whole_cost_or_nothing() {
    for (limiter, _store) in limiters() {
        let batch = |cost, limit| Charge {
            key: "key:a".into(),
            limit,
            cost,
        };
        assert_eq!(take(&limiter, &[batch(59, 60)], 0), Ok(()));
        let refused = take(
            &limiter,
            &[
                Charge {
                    key: "ip:x".into(),
                    limit: 600,
                    cost: 2,
                },
                batch(2, 60),
            ],
            1_000,
        )
        .unwrap_err();
        assert_eq!(refused.charge, 1);
        assert_eq!(refused.retry_after_s(), 59);
        assert_eq!(
            take(
                &limiter,
                &[Charge {
                    key: "ip:x".into(),
                    limit: 600,
                    cost: 598
                }],
                1_000
            ),
            Ok(())
        );
        assert_eq!(take(&limiter, &[batch(1, 60)], 2_000), Ok(()));
        assert!(take(&limiter, &[batch(1, 60)], 2_000).is_err());
        assert_eq!(take(&limiter, &[batch(59, 60)], 60_001), Ok(()));
    }
}

#[test]
fn concurrent_callers_never_get_more_than_the_limit() {
    for (limiter, _store) in limiters() {
        let limiter = Arc::new(limiter);
        let admitted = runtime().block_on(async {
            let mut tasks = Vec::new();
            for _ in 0..100 {
                let limiter = Arc::clone(&limiter);
                tasks.push(tokio::spawn(async move {
                    limiter.take(&[charge("k", 30)], 5).await.unwrap().is_ok()
                }));
            }
            let mut admitted = 0;
            for task in tasks {
                admitted += u32::from(task.await.unwrap());
            }
            admitted
        });
        assert_eq!(admitted, 30, "shared: {}", limiter.is_shared());
    }
}

/// Two limiters on one database (two hub processes) share the counts exactly.
#[test]
fn two_processes_on_one_database_share_a_limit() {
    let Some(url) = testing::scratch_postgres() else {
        return;
    };
    let open = || {
        Store::open_at(
            &Location::Postgres(url.clone()),
            Arc::new(ManualClock::new(0)),
            StoreMetrics::default(),
        )
        .unwrap()
    };
    let (first, second) = (open(), open());
    let limiters = [
        Arc::new(Limiter::for_store(&first)),
        Arc::new(Limiter::for_store(&second)),
    ];
    let admitted = runtime().block_on(async {
        let mut tasks = Vec::new();
        for n in 0..60 {
            let limiter = Arc::clone(&limiters[n % 2]);
            tasks.push(tokio::spawn(async move {
                limiter
                    .take(&[charge("ip:1", 25)], 1_000)
                    .await
                    .unwrap()
                    .is_ok()
            }));
        }
        let mut admitted = 0;
        for task in tasks {
            admitted += u32::from(task.await.unwrap());
        }
        admitted
    });
    assert_eq!(admitted, 25);
}
