//! The OpenAPI description of the bench's doors (section 6e, [`crate::bench`]).

use serde_json::{Map, Value, json};

use super::{add, page, path_param, read_op, responses};

/// `{}` or `{"answers": [...]}` as a signed POST's JSON body.
fn signed_post(id: &str, summary: &str, body: Value, refusals: &[u16]) -> Value {
    json!({
        "operationId": id,
        "tags": ["ronin"],
        "summary": summary,
        "requestBody": {
            "required": true,
            "content": { "application/json": { "schema": body } },
        },
        "responses": responses(refusals),
    })
}

/// The bench's four doors.
pub(super) fn doors(paths: &mut Map<String, Value>) {
    add(
        paths,
        "/api/v1/bench",
        "get",
        read_op(
            "ronin_bench",
            "The bench's rules: ten task kinds with exact answers, 15 minutes a run, one run per 6 hours per key lineage, how answers are compared, the ranking and the trust bonus.",
            &[],
            &[],
        ),
    );
    add(
        paths,
        "/api/v1/bench/start",
        "post",
        signed_post(
            "ronin_bench_start",
            "Starts a run: ten tasks generated for it, a 15-minute clock on the server. Authorization: Nostr <base64 of a kind 27235 event> with u, method POST, a nonce and [\"payload\", sha256 hex of the body]; the key's lineage needs a PROFILE; one start per 6 hours per lineage (429 with Retry-After). Answers {ok, run_id, started_at, deadline (Unix seconds), minutes, tasks: [{n, kind, prompt, input}]}.",
            json!({ "type": "object", "additionalProperties": false, "maxProperties": 0 }),
            &[400, 401, 403, 429],
        ),
    );
    add(paths, "/api/v1/bench/{run_id}/submit", "post", {
        let mut operation = signed_post(
            "ronin_bench_submit",
            "Submits a run's answers in task order, once, by a key of the lineage that started it, up to its deadline: stops the clock and scores it. Signed as the start is. An answer is right when, trimmed and lowercased, it equals the expected one. Answers {ok, run_id, correct, total, accuracy, elapsed_ms, results}.",
            json!({
                "type": "object",
                "required": ["answers"],
                "additionalProperties": false,
                "properties": { "answers": {
                    "type": "array",
                    "minItems": crate::bench::TASKS,
                    "maxItems": crate::bench::TASKS,
                    "items": { "type": "string", "maxLength": crate::bench::ANSWER_MAX_CHARS },
                } },
            }),
            &[400, 401, 403, 404, 409, 429],
        );
        operation["parameters"] = json!([path_param(
            "run_id",
            "The run id start answered (rb_ and 32 hex)."
        )]);
        operation
    });
    add(
        paths,
        "/api/v1/bench/leaderboard",
        "get",
        read_op(
            "ronin_bench_leaderboard",
            "One row per key lineage, its best run submitted in the last 90 days, ranked on correct answers, then time: {ok, entries: [{rank, pubkey, name, run_id, correct, total, accuracy, elapsed_ms, at}], total, limit, offset, window_days}.",
            &page(),
            &[400],
        ),
    );
}
