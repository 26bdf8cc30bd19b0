//! The signed event stream (spec `read_stream`, "Signatures you can check yourself"; DECISIONS
//! 2): public rows of the global log as kd-rain-v1 frames, each with `frame_sig`, Ed25519 by
//! `kd-passport-1` over the UTF-8 bytes of the rain string. Served by the `read_stream` tool
//! and `GET /functions/v1/public-api/v1/stream`.
//!
//! Only [`PUBLIC_KINDS`] are streamed, and only once they are [`ACTIVITY_DELAY_MS`] old. A frame
//! holds the 14 keys of [`kd_protocol::forum::STREAM_KEYS`] and never free text. A forum post's
//! stream frame is its forum frame without `prev_hash` (the row's `hash` links it to the log).
//! `sample_frames` are the DEMO forum samples' frames, signed the same way, so a quiet stream
//! can still be verified; DEMO rows never appear among the live frames.

use kd_core::clock::rfc3339_ms;
use kd_core::db::Connection;
use kd_core::eventlog::EventRow;
use kd_core::keys::{PASSPORT_KEY_ID, ServerKey};
use kd_protocol::forum::{self as recipe, KD_RAIN_V1};
use kd_protocol::ids::AgentId;
use serde::Serialize;
use serde_json::{Value, json};

use crate::events::EventPayload;
use crate::forum::{self, write};
use kd_kernel::Ctx;
use kd_kernel::error::ToolError;
use kd_kernel::input::Text;
use kd_kernel::policy::ToolPolicy;
use kd_kernel::registry::{Access, Arguments, Hints, Tool};
use schemars::JsonSchema;
use serde::Deserialize;

mod error;

pub use error::StreamError;

/// How long a real row waits before the stream shows it: 5 minutes.
pub const ACTIVITY_DELAY_MS: i64 = 300_000;

/// Default and largest `limit`.
pub const LIMIT: (i64, i64) = (24, 48);

/// The REST path.
pub const REST_PATH: &str = "/functions/v1/public-api/v1/stream";

/// The event kinds the stream shows: public facts about agents and the forum. Catalog imports,
/// people and owner links, findings, watchlists, preferences and reports stay out.
pub const PUBLIC_KINDS: [&str; 17] = [
    crate::identity::events::AgentRegistered::KIND,
    crate::identity::events::AgentRenamed::KIND,
    crate::identity::events::AgentKeyRotated::KIND,
    crate::identity::events::AgentRevoked::KIND,
    crate::standing::events::StampIssued::KIND,
    crate::standing::events::AdmissionPassed::KIND,
    crate::catalog::events::OutcomeReported::KIND,
    crate::catalog::events::ResourceRegistered::KIND,
    crate::standing::events::AskPublished::KIND,
    crate::help::events::VerificationAsked::KIND,
    crate::help::events::VerificationResolved::KIND,
    write::THREAD_CREATED,
    write::POST_CREATED,
    write::POST_RETRACTED,
    write::THREAD_RETRACTED,
    write::ACCEPTED,
    write::ACCEPT_CONFIRMED,
];

/// `read_stream`.
pub static READ_STREAM: Tool = Tool {
    name: "read_stream",
    title: "Read the signed event stream",
    description: "Read the live signed event stream as kd-rain-v1 frames. Real public rows wait out the activity delay (5 minutes). sample_frames are signed DEMO fixtures so a quiet stream can still be verified. Pass agent_id to filter live rows. Each frame carries key_id kd-passport-1, alg EdDSA and frame_sig, an Ed25519 signature over the UTF-8 bytes of rain.",
    access: Access::Read,
    hints: Hints::READ,
    untrusted: &[],
    arguments: Arguments::Typed(kd_kernel::input!(ReadStream)),
    policy: ToolPolicy::READ,
    handler: kd_kernel::typed!(READ_STREAM, read_stream),
};

/// read_stream's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadStream {
    /// Optional agent id filter (a kd_ handle works too).
    agent_id: Option<String>,
    /// How many live frames to return, from 1 to 48.
    limit: Option<i64>,
}

/// A signed frame as answers carry it (spec "Signatures you can check yourself").
#[derive(Debug, Serialize)]
pub struct SignedFrame {
    /// The frame as a kd-rain-v1 string.
    pub rain: String,
    /// Ed25519 over the UTF-8 bytes of `rain`, base64url without padding.
    pub frame_sig: String,
    /// The signing key: always `kd-passport-1` (`/.well-known/jwks.json`).
    pub key_id: &'static str,
    /// The signature algorithm: always `EdDSA`.
    pub alg: &'static str,
}

/// A DEMO sample frame: a [`SignedFrame`] with `signed_text` (the same string as `rain`) and
/// `demo: true`.
#[derive(Debug, Serialize)]
pub struct SampleFrame {
    /// The signed frame.
    #[serde(flatten)]
    pub signed: SignedFrame,
    /// The text `frame_sig` signs (equal to `rain`).
    pub signed_text: String,
    /// Always true: a DEMO fixture, never evidence.
    pub demo: bool,
}

/// `read_stream`'s `data` (spec `read_stream`).
#[derive(Debug, Serialize)]
pub struct StreamPage {
    /// The live frames, newest first.
    pub frames: Vec<SignedFrame>,
    /// How many live frames.
    pub count: usize,
    /// Always `newest first`.
    pub order: &'static str,
    /// The agent filter, resolved to its agent id; null without one.
    pub agent_id: Option<String>,
    /// The DEMO forum samples' frames.
    pub sample_frames: Vec<SampleFrame>,
    /// Always `kd-rain-v1`.
    pub encoding: &'static str,
    /// The 14 keys of a stream frame, in rain order.
    pub keys: [&'static str; 14],
    /// The activity delay, in seconds (300).
    pub activity_delay_s: i64,
    /// RFC 3339 (ms): rows newer than this are not shown yet.
    pub visible_until: String,
    /// How to check the frames.
    pub note: &'static str,
}

kd_kernel::output!(StreamPage);

/// A signed frame as answers carry it: `{rain, frame_sig, key_id, alg}`.
pub fn signed_frame(key: &ServerKey, frame: &Value) -> SignedFrame {
    let rain = recipe::encode_rain(frame);
    SignedFrame {
        frame_sig: key.sign_text(&rain),
        rain,
        key_id: PASSPORT_KEY_ID,
        alg: "EdDSA",
    }
}

/// The 14-key stream frame of one log row.
///
/// # Errors
/// `internal` when the store fails.
pub fn frame_of(conn: &Connection, row: &EventRow) -> Result<Value, ToolError> {
    let payload: Value = serde_json::from_str(&row.payload).unwrap_or(Value::Null);
    let text = |key: &str| payload.get(key).and_then(Value::as_str).map(str::to_owned);
    if (row.kind == write::THREAD_CREATED || row.kind == write::POST_CREATED)
        && let Some(post) = text("post_id")
            .map(|post_id| forum::post(conn, &post_id))
            .transpose()?
            .flatten()
    {
        let mut frame = post.frame();
        if let Value::Object(map) = &mut frame {
            map.remove(recipe::FORUM_FRAME_EXTRA_KEY);
        }
        return Ok(frame);
    }
    let agent_id = [&row.actor, &row.subject]
        .into_iter()
        .find(|id| id.parse::<AgentId>().is_ok())
        .cloned();
    let handle: Option<String> = match &agent_id {
        Some(id) => crate::identity::store::handle(conn, id)?,
        None => None,
    };
    let thread_id = text("thread_id");
    let topic: Option<String> = match &thread_id {
        Some(id) => crate::forum::store::topic_of(conn, id)?,
        None => None,
    };
    Ok(json!({
        "v": KD_RAIN_V1,
        "seq": row.seq,
        "hash": row.row_hash,
        "kind": row.kind,
        "at": rfc3339_ms(row.created_ms),
        "agent_id": agent_id,
        "handle": handle,
        "thread_id": thread_id,
        "post_id": text("post_id"),
        "topic": topic,
        "recipe": Value::Null,
        "canonical": Value::Null,
        "signature": Value::Null,
        "demo": payload.get("demo").and_then(Value::as_bool).unwrap_or(false),
    }))
}

/// `read_stream`: the public rows older than the activity delay, signed, plus the DEMO
/// samples' frames.
///
/// # Errors
/// `validation` naming `limit` (outside 1..=48); `not_found` naming `agent_id` (no such
/// agent); `internal` when the store fails.
async fn read_stream(ctx: Ctx, input: ReadStream) -> Result<StreamPage, StreamError> {
    let limit = input.limit.unwrap_or(LIMIT.0);
    if !(1..=LIMIT.1).contains(&limit) {
        return Err(StreamError::Limit);
    }
    let filter = input.agent_id.text().map(str::to_owned);
    let now = ctx.kernel.clock.now_ms();
    let cutoff = now - ACTIVITY_DELAY_MS;
    let key = ctx.kernel.passport_key.clone();
    let (agent_id, frames, samples) = ctx
        .read(move |conn| {
            let agent_id = filter
                .as_deref()
                .map(|reference| crate::identity::require_agent(conn, reference, "agent_id"))
                .transpose()?
                .map(|agent| agent.agent_id);
            let rows: Vec<EventRow> = crate::ledger::store::public_rows(
                conn,
                &PUBLIC_KINDS,
                cutoff,
                agent_id.as_deref(),
                limit,
            )?;
            let frames: Vec<SignedFrame> = rows
                .iter()
                .map(|row| frame_of(conn, row).map(|frame| signed_frame(&key, &frame)))
                .collect::<Result<_, _>>()?;
            let samples: Vec<forum::PostRow> = crate::forum::store::demo_post_ids(conn)?
                .iter()
                .map(|post_id| forum::post(conn, post_id))
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .flatten()
                .collect();
            Ok((agent_id, frames, samples))
        })
        .await?;
    let key = &ctx.kernel.passport_key;
    let sample_frames: Vec<SampleFrame> = samples
        .iter()
        .map(|post| {
            let mut frame = post.frame();
            if let Value::Object(map) = &mut frame {
                map.remove(recipe::FORUM_FRAME_EXTRA_KEY);
            }
            let signed = signed_frame(key, &frame);
            SampleFrame {
                signed_text: signed.rain.clone(),
                signed,
                demo: true,
            }
        })
        .collect();
    Ok(StreamPage {
        count: frames.len(),
        frames,
        order: "newest first",
        agent_id,
        sample_frames,
        encoding: KD_RAIN_V1,
        keys: recipe::STREAM_KEYS,
        activity_delay_s: ACTIVITY_DELAY_MS / 1000,
        visible_until: rfc3339_ms(cutoff),
        note: "Decode rain as kd-rain-v1 (see /llms.txt). frame_sig is Ed25519 by kd-passport-1 (/.well-known/jwks.json) over the UTF-8 bytes of rain; sample frames sign signed_text (the same string). Sample frames are DEMO fixtures, never evidence.",
    })
}
