//! Peer signals' storage: the `peer_signals` table (docs/architecture.md "Storage modules").

use kd_core::db::{Connection, DbError, OptionalExtension, Param, ToParam, ToRow, params};

use super::events::SignalRecorded;

/// One `peer_signals` row: a [`SignalRecorded`] with its event's seq and time (Unix ms).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredSignal {
    /// The event's payload.
    pub record: SignalRecorded,
    /// The event's seq.
    pub event_seq: i64,
    /// Unix ms.
    pub created_ms: i64,
}

impl ToRow for StoredSignal {
    fn value(&self, column: &str) -> Option<Param<'_>> {
        let r = &self.record;
        Some(match column {
            "signal_id" => r.signal_id.to_param(),
            "kind" => r.signal_kind.to_param(),
            "author_id" => r.author_agent_id.to_param(),
            "subject_id" => r.subject_agent_id.to_param(),
            "counterparty_id" => r.counterparty_agent_id.to_param(),
            "task_ref" => r.task_ref.to_param(),
            "outcome" => r.outcome.to_param(),
            "score" => r.score.to_param(),
            "work_claim" => r.work_claim.to_param(),
            "skill" => r.skill.to_param(),
            "promised" => r.promised.to_param(),
            "accepted" => r.accepted.to_param(),
            "evidence_kind" => r.evidence_kind.to_param(),
            "evidence_ref" => r.evidence_ref.to_param(),
            "note" => r.note.to_param(),
            "signed_text" => r.attestation_text.to_param(),
            "signature" => r.signature.to_param(),
            "counted" => r.counted.to_param(),
            "reason" => r.not_counted_reason.to_param(),
            "weight" => r.weight.to_param(),
            "points" => r.points.to_param(),
            "event_seq" => self.event_seq.to_param(),
            "created_ms" => self.created_ms.to_param(),
            _ => return None,
        })
    }
}

impl StoredSignal {
    /// The row of `record`, recorded as event `event_seq` at `created_ms`.
    pub fn of(record: &SignalRecorded, event_seq: i64, created_ms: i64) -> Self {
        Self {
            record: record.clone(),
            event_seq,
            created_ms,
        }
    }
}

/// Stores a signal (what the tools write and the rebuild writes again).
///
/// # Errors
/// When the store fails.
pub fn insert_signal(conn: &Connection, signal: &StoredSignal) -> Result<usize, DbError> {
    conn.insert_row(
        "INSERT INTO peer_signals (signal_id, kind, author_id, subject_id, counterparty_id, task_ref, outcome, score,
            work_claim, skill, promised, accepted, evidence_kind, evidence_ref, note, signed_text, signature, counted,
            reason, weight, points, event_seq, created_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23)",
        signal,
    )
}

/// The id of `author_id`'s earlier signal of `kind` on `subject_id` for `task_ref`, if any
/// (one attestation and one review per author, subject and task).
///
/// # Errors
/// When the store fails.
pub fn earlier(
    conn: &Connection,
    kind: &str,
    author_id: &str,
    subject_id: &str,
    task_ref: &str,
) -> Result<Option<String>, DbError> {
    conn.prepare_cached(
        "SELECT signal_id FROM peer_signals WHERE author_id = ?1 AND subject_id = ?2 AND kind = ?3 AND task_ref = ?4",
    )?
    .query_row(params![author_id, subject_id, kind, task_ref], |row| {
        row.get_by_name("signal_id")
    })
    .optional()
}

/// Each counting author's best points on `subject_id`: one value per distinct author.
///
/// # Errors
/// When the store fails.
pub fn counted_points(conn: &Connection, subject_id: &str) -> Result<Vec<i64>, DbError> {
    conn.prepare_cached(
        "SELECT author_id, MAX(points) AS best FROM peer_signals
         WHERE subject_id = ?1 AND counted = 1 GROUP BY author_id ORDER BY author_id",
    )?
    .query_map([subject_id], |row| row.get_by_name("best"))?
    .collect()
}

/// How many signals on `subject_id` were stored without counting.
///
/// # Errors
/// When the store fails.
pub fn uncounted(conn: &Connection, subject_id: &str) -> Result<i64, DbError> {
    conn.prepare_cached(
        "SELECT COUNT(*) AS n FROM peer_signals WHERE subject_id = ?1 AND counted = 0",
    )?
    .query_row([subject_id], |row| row.get_by_name("n"))
}
