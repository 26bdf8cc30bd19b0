//! Trust (spec section 8), computed when read from the signed events, never stored:
//!
//! ```text
//! score = (sum(w * r) + 3 * 3.0) / (sum(w) + 3) - 0.25 * mismatches + referral + bench
//! w     = 0.5 ^ (age_days / 90)
//! ```
//!
//! clamped to 1.00 ..= 5.00. `r` is each rating (1-5) of a task one of the lineage's keys did
//! as the agent, `age_days` the rating's age (its signed `created_at` against the hub's
//! clock; never negative). `mismatches` counts the lineage's tasks, as agent or buyer, whose
//! PAID and RECEIVED disagree (the hub never decides who was right, so both sides carry it:
//! docs/decisions.md 262). `referral` is +0.05 for each of the first three tasks completed by
//! each key whose PROFILE names a key of the lineage in `referred_by`, at most +0.50 in all.
//! `bench` is `0.15 x accuracy` of the lineage's best bench run submitted in the last 90 days
//! when it has 7 or more of its 10 answers right, else 0 ([`crate::bench`], section 6e).

use kd_core::db::{Connection, Result};
use serde_json::{Value, json};

use crate::store;

/// The prior: three ratings of 3.0.
const PRIOR_WEIGHT: f64 = 3.0;
const PRIOR_RATING: f64 = 3.0;
/// The half-life of a rating's weight, in days.
const HALF_LIFE_DAYS: f64 = 90.0;
/// What each mismatched settlement costs.
const MISMATCH_COST: f64 = 0.25;
/// What each completed task of a referred key earns its referrer, for how many tasks of each,
/// and at most in all.
const REFERRAL_PER_TASK: f64 = 0.05;
const REFERRAL_TASKS: i64 = 3;
const REFERRAL_MAX: f64 = 0.50;

/// The inputs of one lineage's score.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inputs {
    /// Each rating: `(stars, age in days)`.
    pub ratings: Vec<(f64, f64)>,
    /// Mismatched settlements.
    pub mismatches: i64,
    /// For each referred key, its completed tasks (already capped at three).
    pub referred: Vec<i64>,
    /// The bench bonus (0.15 × accuracy of the best run in 90 days at 7/10 or better).
    pub bench: f64,
}

/// The score of `inputs` by the formula, clamped, and its referral part.
#[must_use]
pub fn score(inputs: &Inputs) -> (f64, f64) {
    let (weighted, weights) =
        inputs
            .ratings
            .iter()
            .fold((0.0, 0.0), |(sum, weights), (stars, age_days)| {
                let w = 0.5_f64.powf(age_days.max(0.0) / HALF_LIFE_DAYS);
                (sum + w * stars, weights + w)
            });
    let referral =
        (REFERRAL_PER_TASK * inputs.referred.iter().sum::<i64>() as f64).min(REFERRAL_MAX);
    let raw = (weighted + PRIOR_WEIGHT * PRIOR_RATING) / (weights + PRIOR_WEIGHT)
        - MISMATCH_COST * inputs.mismatches as f64
        + referral
        + inputs.bench;
    (raw.clamp(1.0, 5.0), referral)
}

/// The inputs of the lineage `keys` at `now_s` (Unix seconds).
///
/// # Errors
/// The store's.
pub(crate) fn inputs(conn: &Connection, keys: &[String], now_s: i64) -> Result<Inputs> {
    let mut inputs = Inputs::default();
    for key in keys {
        for (stars, created_at) in store::ratings_received(conn, key)? {
            let age_days = (now_s - created_at) as f64 / 86_400.0;
            inputs.ratings.push((stars as f64, age_days));
        }
        inputs.mismatches += store::mismatches(conn, key)?;
        inputs
            .referred
            .extend(store::referred_completions(conn, key, REFERRAL_TASKS)?);
    }
    inputs.bench = crate::bench::bonus(crate::bench::best(conn, keys, now_s)?.as_ref());
    Ok(inputs)
}

/// The `trust` object of an agent view: `{score (2 decimals), ratings, mismatches, referral,
/// bench}`.
///
/// # Errors
/// The store's.
pub(crate) fn view(conn: &Connection, keys: &[String], now_s: i64) -> Result<Value> {
    let inputs = inputs(conn, keys, now_s)?;
    let (score, referral) = score(&inputs);
    Ok(json!({
        "score": round2(score),
        "ratings": inputs.ratings.len(),
        "mismatches": inputs.mismatches,
        "referral": round2(referral),
        "bench": round2(inputs.bench),
    }))
}

fn round2(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(ratings: &[(f64, f64)], mismatches: i64, referred: &[i64]) -> f64 {
        round2(
            score(&Inputs {
                ratings: ratings.to_vec(),
                mismatches,
                referred: referred.to_vec(),
                bench: 0.0,
            })
            .0,
        )
    }

    #[test]
    fn the_spec_s_worked_figures_hold() {
        // "A new agent is 3.00. One 5-star moves it to 3.50. Each mismatched settlement
        // costs 0.25."
        assert_eq!(of(&[], 0, &[]), 3.0);
        assert_eq!(of(&[(5.0, 0.0)], 0, &[]), 3.5);
        assert_eq!(of(&[], 1, &[]), 2.75);
        // A rating 90 days old weighs half: (0.5 * 5 + 9) / 3.5.
        assert_eq!(of(&[(5.0, 90.0)], 0, &[]), round2(11.5 / 3.5));
        // Referral: 0.05 a task, three a referred key (capped before), 0.50 in all.
        assert_eq!(of(&[], 0, &[3, 1]), 3.2);
        assert_eq!(of(&[], 0, &[3; 5]), 3.5);
    }

    #[test]
    fn the_score_is_clamped_to_one_and_five() {
        assert_eq!(of(&[], 12, &[]), 1.0);
        let many = vec![(5.0, 0.0); 1000];
        assert_eq!(of(&many, 0, &[3; 5]), 5.0);
    }
}
