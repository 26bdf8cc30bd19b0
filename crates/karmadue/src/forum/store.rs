//! The forum's storage: `forum_threads`, `forum_posts`, `forum_reports` and
//! `forum_acceptances` (docs/architecture.md "Storage modules"). The reads that show an
//! author join the author's `agents` or `people` row for its handle and label: a named read
//! model.

use kd_core::clock::rfc3339_ms;
use kd_core::db::{Connection, DbError, OptionalExtension, params};
use serde_json::json;

use super::PostRow;
use super::output::{Author, ThreadHead, ThreadRow};

mod acceptance;

pub use acceptance::{
    AcceptablePost, ReportablePost, accept, acceptable_post, accepted_reply, confirm, confirmation,
    insert_report, reportable_post,
};

const POST_COLUMNS: &str = "p.post_id, p.thread_id, t.topic, p.agent_id, COALESCE(a.handle, pe.display_name) AS handle, COALESCE(a.name, pe.display_name) AS label, p.opening, p.body, p.quote_post_id, p.links, p.seq, p.prev_hash, p.row_hash, p.canonical, p.signature, p.status, p.accepted, p.confirmations, p.demo, p.created_ms";

/// A post from the columns of [`POST_COLUMNS`], by name.
fn post_from_row(row: &kd_core::db::Row<'_>) -> kd_core::db::Result<PostRow> {
    let mut columns = row.by_name();
    Ok(PostRow {
        post_id: columns.read("post_id")?,
        thread_id: columns.read("thread_id")?,
        topic: columns.read("topic")?,
        agent_id: columns.read("agent_id")?,
        handle: columns.read("handle")?,
        label: columns.read("label")?,
        opening: columns.read::<i64>("opening")? == 1,
        body: columns.read("body")?,
        quote_post_id: columns.read("quote_post_id")?,
        links: serde_json::from_str(&columns.read::<String>("links")?)
            .unwrap_or_else(|_| json!({})),
        seq: columns.read("seq")?,
        prev_hash: columns.read("prev_hash")?,
        row_hash: columns.read("row_hash")?,
        canonical: columns.read("canonical")?,
        signature: columns.read("signature")?,
        status: columns.read("status")?,
        accepted: columns.read::<i64>("accepted")? == 1,
        confirmations: columns.read("confirmations")?,
        demo: columns.read::<i64>("demo")? == 1,
        created_ms: columns.read("created_ms")?,
    })
}

/// How many visible, real threads a topic has.
///
/// # Errors
/// When the store fails.
pub fn visible_threads_in(conn: &Connection, topic: &str) -> Result<i64, DbError> {
    conn.prepare_cached(
        "SELECT COUNT(*) FROM forum_threads WHERE topic = ?1 AND status = 'visible' AND demo = 0",
    )?
    .query_row([topic], |row| row.get(0))
}

/// Visible threads (real or demo), latest activity first, in their public shape.
///
/// # Errors
/// When the store fails.
pub fn threads(
    conn: &Connection,
    topic: Option<&str>,
    demo: bool,
    limit: i64,
) -> Result<Vec<ThreadRow>, DbError> {
    conn
        .prepare_cached(
            "SELECT t.thread_id, t.topic, t.title, a.handle, a.name, t.replies, t.created_ms, t.last_post_ms, t.opening_post_id,
                    (SELECT post_id FROM forum_posts p WHERE p.thread_id = t.thread_id AND p.accepted = 1 AND p.status = 'visible') AS accepted_post_id
             FROM forum_threads t LEFT JOIN agents a ON a.agent_id = t.agent_id
             WHERE t.status = 'visible' AND t.demo = ?1 AND (CAST(?2 AS TEXT) IS NULL OR t.topic = ?2)
             ORDER BY t.last_post_ms DESC, t.thread_id LIMIT CAST(?3 AS BIGINT)",
        )?
        .query_map(params![i64::from(demo), topic, limit], |row| {
            Ok(ThreadRow {
                head: head_from_row(row, demo)?,
                accepted_post_id: row.get_by_name("accepted_post_id")?,
            })
        })?
        .collect()
}

/// A thread's public shape from the columns `thread_id, topic, title, handle, name, replies,
/// created_ms, last_post_ms, opening_post_id`, by name.
fn head_from_row(row: &kd_core::db::Row<'_>, demo: bool) -> kd_core::db::Result<ThreadHead> {
    let mut columns = row.by_name();
    let (thread_id, topic, title) = (
        columns.read("thread_id")?,
        columns.read("topic")?,
        columns.read("title")?,
    );
    let handle: Option<String> = columns.read("handle")?;
    let label: Option<String> = columns.read("name")?;
    Ok(ThreadHead {
        thread_id,
        topic,
        title,
        author: Author::new(handle.as_deref(), label.as_deref()),
        replies: columns.read("replies")?,
        created_at: rfc3339_ms(columns.read("created_ms")?),
        last_post_at: rfc3339_ms(columns.read("last_post_ms")?),
        opening_post_id: columns.read("opening_post_id")?,
        demo,
    })
}

/// One stored post.
///
/// # Errors
/// When the store fails.
pub fn post(conn: &Connection, post_id: &str) -> Result<Option<PostRow>, DbError> {
    conn
        .prepare_cached(&format!(
            "SELECT {POST_COLUMNS} FROM forum_posts p JOIN forum_threads t ON t.thread_id = p.thread_id
             LEFT JOIN agents a ON a.agent_id = p.agent_id LEFT JOIN people pe ON pe.person_id = p.person_id WHERE p.post_id = ?1"
        ))?
        .query_row([post_id], post_from_row)
        .optional()
}

/// The thread with this id, if there is one.
///
/// # Errors
/// When the store fails.
pub fn thread_id(conn: &Connection, thread_id: &str) -> Result<Option<String>, DbError> {
    conn.prepare_cached("SELECT thread_id FROM forum_threads WHERE thread_id = ?1")?
        .query_row([thread_id], |row| row.get(0))
        .optional()
}

/// The thread of a post.
///
/// # Errors
/// When the store fails.
pub fn thread_of_post(conn: &Connection, post_id: &str) -> Result<Option<String>, DbError> {
    conn.prepare_cached("SELECT thread_id FROM forum_posts WHERE post_id = ?1")?
        .query_row([post_id], |row| row.get(0))
        .optional()
}

/// A thread's status and public shape.
///
/// # Errors
/// When the store fails.
pub fn thread(conn: &Connection, thread_id: &str) -> Result<(String, ThreadHead), DbError> {
    conn
        .prepare_cached(
            "SELECT t.thread_id, t.topic, t.title, a.handle, a.name, t.replies, t.created_ms, t.last_post_ms, t.opening_post_id, t.demo, t.status
             FROM forum_threads t LEFT JOIN agents a ON a.agent_id = t.agent_id WHERE t.thread_id = ?1",
        )?
        .query_row([&thread_id], |row| {
            let demo = row.get_by_name::<i64>("demo")? == 1;
            Ok((row.get_by_name("status")?, head_from_row(row, demo)?))
        })
}

/// A thread's posts in log order.
///
/// # Errors
/// When the store fails.
pub fn thread_posts(conn: &Connection, thread_id: &str) -> Result<Vec<PostRow>, DbError> {
    conn
        .prepare_cached(&format!(
            "SELECT {POST_COLUMNS} FROM forum_posts p JOIN forum_threads t ON t.thread_id = p.thread_id
             LEFT JOIN agents a ON a.agent_id = p.agent_id LEFT JOIN people pe ON pe.person_id = p.person_id WHERE p.thread_id = ?1 ORDER BY p.seq"
        ))?
        .query_map([&thread_id], post_from_row)?
        .collect()
}

/// An agent's visible accepted replies per topic: (topic, accepted, confirmations).
///
/// # Errors
/// When the store fails.
pub fn accepted_by_topic(
    conn: &Connection,
    agent_id: &str,
) -> Result<Vec<(String, i64, i64)>, DbError> {
    conn
        .prepare_cached(
            "SELECT t.topic, COUNT(*), SUM(p.confirmations) FROM forum_posts p JOIN forum_threads t ON t.thread_id = p.thread_id
             WHERE p.agent_id = ?1 AND p.accepted = 1 AND p.status = 'visible' AND t.status = 'visible'
             GROUP BY t.topic ORDER BY t.topic",
        )?
        .query_map([agent_id], |row| Ok((row.get::<String>(0)?, row.get::<i64>(1)?, row.get::<i64>(2)?)))?
        .collect()
}

/// The agents with a visible accepted reply in `topic`, best first by skill score (2 per
/// accepted reply + 1 per counted confirmation), then agent id: (agent_id, accepted,
/// confirmations), at most `limit`.
///
/// # Errors
/// When the store fails.
pub fn skilled_in(
    conn: &Connection,
    topic: &str,
    limit: i64,
) -> Result<Vec<(String, i64, i64)>, DbError> {
    conn
        .prepare_cached(
            "SELECT p.agent_id, COUNT(*), SUM(p.confirmations) FROM forum_posts p JOIN forum_threads t ON t.thread_id = p.thread_id
             WHERE t.topic = ?1 AND p.accepted = 1 AND p.status = 'visible' AND t.status = 'visible'
             GROUP BY p.agent_id ORDER BY 2 * COUNT(*) + SUM(p.confirmations) DESC, p.agent_id LIMIT CAST(?2 AS BIGINT)",
        )?
        .query_map(params![topic, limit], |row| Ok((row.get::<String>(0)?, row.get::<i64>(1)?, row.get::<i64>(2)?)))?
        .collect()
}

/// A thread's opening row: (id, topic, title, body, demo).
pub type ThreadOpening = (String, String, String, String, bool);

/// The latest 500 visible threads with their opening posts: (id, topic, title, body, demo).
///
/// # Errors
/// When the store fails.
pub fn thread_openings(
    conn: &Connection,
    include_demo: bool,
) -> Result<Vec<ThreadOpening>, DbError> {
    conn.prepare_cached(
        "SELECT t.thread_id, t.topic, t.title, p.body, t.demo FROM forum_threads t
             JOIN forum_posts p ON p.post_id = t.opening_post_id
             WHERE t.status = 'visible' AND (t.demo = 0 OR ?1)
             ORDER BY t.demo, t.last_post_ms DESC, t.thread_id LIMIT 500",
    )?
    .query_map([include_demo], |row| {
        Ok((
            row.get::<String>(0)?,
            row.get::<String>(1)?,
            row.get::<String>(2)?,
            row.get::<String>(3)?,
            row.get::<i64>(4)? == 1,
        ))
    })?
    .collect()
}

/// A new thread row.
#[derive(Debug)]
pub struct NewThread<'a> {
    /// Its id.
    pub thread_id: &'a str,
    /// Its topic.
    pub topic: &'a str,
    /// Its title.
    pub title: &'a str,
    /// The opening agent (None: a person).
    pub agent_id: Option<&'a str>,
    /// The opening post.
    pub opening_post_id: &'a str,
    /// A DEMO sample.
    pub demo: bool,
}

/// Stores a new visible thread.
///
/// # Errors
/// When the store fails.
pub fn insert_thread(
    conn: &Connection,
    thread: &NewThread<'_>,
    now_ms: i64,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO forum_threads (thread_id, topic, title, agent_id, opening_post_id, status, demo, replies, last_post_ms, created_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, 'visible', ?6, 0, ?7, ?7)",
    )?
    .execute(params![
        thread.thread_id,
        thread.topic,
        thread.title,
        thread.agent_id,
        thread.opening_post_id,
        i64::from(thread.demo),
        now_ms
    ])?;
    Ok(())
}

/// Counts a new reply on a thread.
///
/// # Errors
/// When the store fails.
pub fn add_reply(conn: &Connection, thread_id: &str, now_ms: i64) -> Result<(), DbError> {
    conn.prepare_cached(
        "UPDATE forum_threads SET replies = replies + 1, last_post_ms = ?2 WHERE thread_id = ?1",
    )?
    .execute(params![thread_id, now_ms])?;
    Ok(())
}

/// Uncounts a reply that left the thread.
///
/// # Errors
/// When the store fails.
pub fn remove_reply(conn: &Connection, thread_id: &str) -> Result<(), DbError> {
    conn.prepare_cached("UPDATE forum_threads SET replies = replies - 1 WHERE thread_id = ?1")?
        .execute([thread_id])?;
    Ok(())
}

/// A post row as stored, with the log row it is.
#[derive(Debug)]
pub struct StoredPost<'a> {
    /// Its id.
    pub post_id: &'a str,
    /// Its thread.
    pub thread_id: &'a str,
    /// The writing agent.
    pub agent_id: Option<&'a str>,
    /// The writing person.
    pub person_id: Option<&'a str>,
    /// It opens the thread.
    pub opening: bool,
    /// Body.
    pub body: &'a str,
    /// Structured part (JSON text).
    pub structured: Option<String>,
    /// The quoted post.
    pub quote_post_id: Option<&'a str>,
    /// Links (JSON text).
    pub links: String,
    /// The post's log row.
    pub row: &'a kd_core::eventlog::EventRow,
    /// The kd-forum-v2 text.
    pub canonical: &'a str,
    /// The hub's signature.
    pub signature: &'a str,
    /// A DEMO sample.
    pub demo: bool,
}

/// Stores a visible post.
///
/// # Errors
/// When the store fails.
pub fn insert_post(conn: &Connection, post: &StoredPost<'_>, now_ms: i64) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO forum_posts (post_id, thread_id, agent_id, person_id, opening, body, structured, quote_post_id, links, seq, prev_hash, row_hash, canonical, signature, status, accepted, confirmations, demo, created_ms)
         VALUES (?1, ?2, ?3, ?16, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, 'visible', 0, 0, ?14, ?15)",
    )?
    .execute(params![
        post.post_id,
        post.thread_id,
        post.agent_id,
        i64::from(post.opening),
        post.body,
        post.structured,
        post.quote_post_id,
        post.links,
        post.row.seq,
        post.row.prev_hash,
        post.row.row_hash,
        post.canonical,
        post.signature,
        i64::from(post.demo),
        now_ms,
        post.person_id,
    ])?;
    Ok(())
}

/// The times of an agent's posts after `after_ms` that count for the newcomer allowance
/// (not retracted, unless reported), oldest first.
///
/// # Errors
/// When the store fails.
pub fn counted_post_times(
    conn: &Connection,
    agent_id: &str,
    after_ms: i64,
) -> Result<Vec<i64>, DbError> {
    conn.prepare_cached(
        "SELECT created_ms FROM forum_posts WHERE agent_id = ?1 AND created_ms > ?2
           AND (status <> 'retracted' OR post_id IN (SELECT post_id FROM forum_reports))
         ORDER BY created_ms",
    )?
    .query_map(params![agent_id, after_ms], |row| row.get(0))?
    .collect()
}

/// A thread: (id, topic, status, demo).
///
/// # Errors
/// When the store fails.
pub fn thread_head(
    conn: &Connection,
    thread_id: &str,
) -> Result<Option<(String, String, String, i64)>, DbError> {
    conn.prepare_cached(
        "SELECT thread_id, topic, status, demo FROM forum_threads WHERE thread_id = ?1",
    )?
    .query_row([thread_id], |row| {
        Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
    })
    .optional()
}

/// Whether `post_id` is a visible post of `thread_id`.
///
/// # Errors
/// When the store fails.
pub fn visible_post_in(conn: &Connection, post_id: &str, thread_id: &str) -> Result<bool, DbError> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM forum_posts WHERE post_id = ?1 AND thread_id = ?2 AND status = 'visible'")?
        .query_row(params![post_id, thread_id], |row| row.get::<i64>(0))
        .optional()?
        .is_some())
}

/// A named thread: (id, opening post, agent, status).
pub type NamedThread = (String, String, Option<String>, String);

/// The thread a thread id or its opening post's id names: (id, opening post, agent, status).
///
/// # Errors
/// When the store fails.
pub fn thread_named(conn: &Connection, reference: &str) -> Result<Option<NamedThread>, DbError> {
    conn.prepare_cached(
        "SELECT thread_id, opening_post_id, agent_id, status FROM forum_threads WHERE thread_id = ?1 OR opening_post_id = ?1",
    )?
    .query_row([reference], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)))
    .optional()
}

/// A post: (thread, agent, status).
///
/// # Errors
/// When the store fails.
pub fn post_head(
    conn: &Connection,
    post_id: &str,
) -> Result<Option<(String, Option<String>, String)>, DbError> {
    conn.prepare_cached("SELECT thread_id, agent_id, status FROM forum_posts WHERE post_id = ?1")?
        .query_row([post_id], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .optional()
}

/// Why a post or thread stops being visible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hide {
    /// Its author took it back.
    Retracted,
    /// A reader reported it.
    Reported,
    /// Its opening post was reported.
    Hidden,
}

impl Hide {
    fn status(self) -> &'static str {
        match self {
            Self::Retracted => "retracted",
            Self::Reported => "reported",
            Self::Hidden => "hidden",
        }
    }
}

/// Hides a thread.
///
/// # Errors
/// When the store fails.
pub fn set_thread_status(
    conn: &Connection,
    thread_id: &str,
    hide: Hide,
    now_ms: i64,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "UPDATE forum_threads SET status = ?3, hidden_ms = ?2 WHERE thread_id = ?1",
    )?
    .execute(params![thread_id, now_ms, hide.status()])?;
    Ok(())
}

/// Hides a post.
///
/// # Errors
/// When the store fails.
pub fn set_post_status(
    conn: &Connection,
    post_id: &str,
    hide: Hide,
    now_ms: i64,
) -> Result<(), DbError> {
    conn.prepare_cached("UPDATE forum_posts SET status = ?3, hidden_ms = ?2 WHERE post_id = ?1")?
        .execute(params![post_id, now_ms, hide.status()])?;
    Ok(())
}

/// How many DEMO sample threads are stored.
///
/// # Errors
/// When the store fails.
pub fn demo_threads(conn: &Connection) -> Result<i64, DbError> {
    conn.prepare_cached("SELECT COUNT(*) FROM forum_threads WHERE demo = 1")?
        .query_row([], |row| row.get(0))
}

/// A thread's topic.
///
/// # Errors
/// When the store fails.
pub fn topic_of(conn: &Connection, thread_id: &str) -> Result<Option<String>, DbError> {
    conn.prepare_cached("SELECT topic FROM forum_threads WHERE thread_id = ?1")?
        .query_row([thread_id], |row| row.get(0))
        .optional()
}

/// The DEMO sample posts, in log order.
///
/// # Errors
/// When the store fails.
pub fn demo_post_ids(conn: &Connection) -> Result<Vec<String>, DbError> {
    conn.prepare_cached("SELECT post_id FROM forum_posts WHERE demo = 1 ORDER BY seq")?
        .query_map([], |row| row.get::<String>(0))?
        .collect()
}
