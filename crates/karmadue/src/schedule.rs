//! When the daily background jobs (the signed log head, the watchlists' daily check) run
//! next: shared by areas of every tier, naming none.

/// A UTC day, in milliseconds.
const DAY_MS: i64 = 86_400_000;

/// How long a daily job's scheduler sleeps after a run at `now_ms`: until the next UTC
/// midnight, but never more than `tick` (the job is idempotent per day, so looking more often
/// does nothing twice) and never less than a second.
pub fn until_next_run(now_ms: i64, tick: std::time::Duration) -> std::time::Duration {
    let day_ms = DAY_MS;
    let until_midnight = (now_ms.div_euclid(day_ms) + 1) * day_ms - now_ms;
    u64::try_from(until_midnight)
        .map(std::time::Duration::from_millis)
        .unwrap_or(tick)
        .clamp(std::time::Duration::from_secs(1), tick)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn a_daily_job_sleeps_until_midnight_within_a_second_and_a_tick() {
        let tick = Duration::from_secs(600);
        let midnight = 1_791_763_200_000; // 2026-10-12T00:00:00Z
        assert_eq!(
            super::until_next_run(midnight - 120_000, tick),
            Duration::from_secs(120)
        );
        assert_eq!(super::until_next_run(midnight - 3_600_000, tick), tick);
        assert_eq!(
            super::until_next_run(midnight - 200, tick),
            Duration::from_secs(1)
        );
        assert_eq!(super::until_next_run(midnight, tick), tick);
    }
}
