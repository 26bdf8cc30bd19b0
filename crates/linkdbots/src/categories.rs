//! The category list (spec "Categories"): one card, one category, spelled exactly as here;
//! an unknown category is a 400 rather than a new category. `GET /api/v1/categories` serves
//! it as JSON.
//!
//! The list is live (decisions 337, 338): a signed-in person proposes a category
//! ([`propose`], the hub's `/linkdbots/dashboard/categories` page), the hub's operator decides
//! it ([`decide`], `karmadue linkdbots categories accept|reject ID`), and an accepted one
//! joins [`CATEGORIES`] everywhere ([`live`]): cards, `GET /categories`, the leaderboards,
//! `GET /learn` and a playbook's category. The SQL is in [`crate::categories_store`].

use kd_core::db::Connection;
use kd_core::random::Random;
use kd_core::store::Store;
use serde_json::{Value, json};

use crate::ApiError;
use crate::categories_store::{self, CategoryProposalRow};

/// Every category, with what it covers, in the spec's order.
pub const CATEGORIES: &[(&str, &str)] = &[
    ("code.review", "Review a code change and report findings"),
    (
        "code.feature",
        "Implement a new feature in an existing codebase",
    ),
    ("code.bugfix", "Diagnose and fix a defect"),
    (
        "code.refactor",
        "Restructure code without changing behavior",
    ),
    ("code.test", "Write or repair automated tests"),
    (
        "code.docs",
        "Write or update the documentation for a codebase",
    ),
    (
        "code.migrate",
        "Move code onto a new version, framework, or API",
    ),
    (
        "code.security-audit",
        "Audit code or dependencies for security problems",
    ),
    ("code.perf", "Profile slow code and make it faster"),
    ("ops.deploy", "Deploy, release, or roll back software"),
    (
        "ops.incident",
        "Investigate and mitigate a production incident",
    ),
    ("ops.monitor", "Set up alerting or watch a service's health"),
    ("ops.provision", "Provision or configure infrastructure"),
    ("ops.backup", "Back up or restore data and systems"),
    ("qa", "Exercise a build by hand and report what breaks"),
    ("email.triage", "Sort, label, and prioritize incoming email"),
    ("email.reply", "Draft or send replies to email"),
    ("email.draft", "Compose a new outbound email"),
    (
        "email.spam",
        "Clear out spam and unsubscribe from junk mail",
    ),
    (
        "email.newsletter",
        "Read the newsletters and pull out what matters",
    ),
    ("calendar.schedule", "Find times and schedule meetings"),
    (
        "meeting.notes",
        "Turn a meeting transcript into notes and actions",
    ),
    (
        "research.summary",
        "Research a topic and summarize findings",
    ),
    ("research.compare", "Compare options and recommend one"),
    (
        "research.market",
        "Research a market, a competitor, or a company",
    ),
    (
        "research.fact-check",
        "Check claims against sources and report what holds up",
    ),
    ("data.analysis", "Analyze a dataset and report results"),
    ("data.pipeline", "Build or fix a data pipeline or query"),
    (
        "data.scrape",
        "Pull structured data off a website or an API",
    ),
    ("data.clean", "Clean, normalize, or de-duplicate a dataset"),
    ("data.viz", "Turn numbers into a chart or a dashboard"),
    (
        "data.report",
        "Assemble a recurring report from live numbers",
    ),
    ("writing.draft", "Write a document, post, or article"),
    ("writing.edit", "Edit or proofread existing text"),
    ("writing.social", "Write posts for social media"),
    (
        "writing.longform",
        "Write something long: a guide, a chapter, a whitepaper",
    ),
    ("translation", "Translate text between languages"),
    (
        "support.reply",
        "Answer a customer or user support question",
    ),
    ("support.triage", "Sort and route an incoming support queue"),
    (
        "support.escalate",
        "Escalate a support case with the context attached",
    ),
    (
        "sales.outreach",
        "Draft outreach or follow-up to a prospect",
    ),
    (
        "sales.lead-research",
        "Research a lead or an account before contact",
    ),
    (
        "sales.followup",
        "Chase an open deal or a conversation that stalled",
    ),
    ("sales.crm", "Update and tidy the records in a CRM"),
    (
        "finance.expense",
        "Sort receipts and file an expense report",
    ),
    ("finance.invoice", "Create, send, or chase an invoice"),
    (
        "finance.reconcile",
        "Reconcile transactions against the books",
    ),
    (
        "legal.review",
        "Review a contract or policy and flag the risks",
    ),
    (
        "legal.summarize",
        "Summarize a legal document in plain language",
    ),
    ("hr.screen", "Screen candidates against what a role needs"),
    ("hr.onboard", "Run the onboarding checklist for a new hire"),
    ("design.mockup", "Produce a UI mockup or design spec"),
    ("design.review", "Critique a design and say what to change"),
    ("design.assets", "Produce or resize image and icon assets"),
    ("browser.task", "Complete a task by operating a web browser"),
    (
        "browser.form-fill",
        "Fill in and submit a form on a website",
    ),
    ("browser.monitor", "Watch a page and report when it changes"),
    (
        "browser.purchase",
        "Buy or book something through a website",
    ),
    ("file.organize", "Rename, move, or organize files"),
    ("file.convert", "Convert files from one format to another"),
    ("file.dedupe", "Find and remove duplicate files"),
    ("media.transcribe", "Turn audio or video into text"),
    (
        "media.edit",
        "Cut, trim, or clean up audio, video, or images",
    ),
    (
        "media.generate",
        "Generate an image, a clip, or a voice track",
    ),
    ("product.spec", "Write a product spec or a requirements doc"),
    ("product.roadmap", "Shape a roadmap and sequence what ships"),
    (
        "learning.tutor",
        "Explain a topic and answer the follow-up questions",
    ),
    ("learning.quiz", "Make practice questions or flashcards"),
    (
        "personal.reminder",
        "Track a personal errand, chore, or reminder",
    ),
    (
        "personal.shopping",
        "Find something to buy and where to get it",
    ),
    (
        "moderation",
        "Check content against the rules and flag what breaks them",
    ),
    ("planning", "Break work into a plan with steps and owners"),
    ("other", "Anything not covered by another category"),
];

/// Whether `name` is a category, exactly as spelled.
pub fn is_category(name: &str) -> bool {
    CATEGORIES.iter().any(|(category, _)| *category == name)
}

/// The longest category name.
pub const NAME_MAX: usize = 40;
/// The longest description of a proposed category, in characters.
pub const DESCRIPTION_MAX: usize = 120;
/// How many categories one person proposes a UTC day.
pub const PROPOSALS_PER_DAY: i64 = 3;

/// A category of the live list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Category {
    /// The name cards carry, e.g. `code.lint`.
    pub name: String,
    /// What it covers.
    pub description: String,
    /// False for one a person proposed and the moderator accepted.
    pub builtin: bool,
}

/// The live list: [`CATEGORIES`] in the spec's order, then the accepted proposals in the
/// order they were proposed.
///
/// # Errors
/// The store's failure.
pub fn live(conn: &Connection) -> Result<Vec<Category>, ApiError> {
    let mut list: Vec<Category> = CATEGORIES
        .iter()
        .map(|(name, description)| Category {
            name: (*name).to_owned(),
            description: (*description).to_owned(),
            builtin: true,
        })
        .collect();
    for row in categories_store::with_status(conn, "accepted")? {
        list.push(Category {
            name: row.name,
            description: row.description,
            builtin: false,
        });
    }
    Ok(list)
}

/// The category `name` of the live list, if it is one.
///
/// # Errors
/// The store's failure.
pub fn find(conn: &Connection, name: &str) -> Result<Option<Category>, ApiError> {
    Ok(live(conn)?
        .into_iter()
        .find(|category| category.name == name))
}

/// The names of the accepted proposals (the live list beyond [`CATEGORIES`]).
///
/// # Errors
/// The store's failure.
pub fn accepted(conn: &Connection) -> Result<Vec<String>, ApiError> {
    Ok(categories_store::with_status(conn, "accepted")?
        .into_iter()
        .map(|row| row.name)
        .collect())
}

/// Whether `name` is built in or among `accepted`.
pub fn is_live(name: &str, accepted: &[String]) -> bool {
    is_category(name) || accepted.iter().any(|known| known == name)
}

/// A proposed name, or why it cannot be one: 2 to [`NAME_MAX`] characters, one to three
/// parts joined by `.`, each part lowercase ASCII letters and digits with single `-` inside
/// (as `code.security-audit`, `qa`).
///
/// # Errors
/// [`ApiError::invalid`].
pub fn check_name(name: &str) -> Result<String, ApiError> {
    let part_ok = |part: &str| {
        !part.is_empty()
            && part
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !part.starts_with('-')
            && !part.ends_with('-')
            && !part.contains("--")
    };
    let parts: Vec<&str> = name.split('.').collect();
    if (2..=NAME_MAX).contains(&name.len()) && parts.len() <= 3 && parts.iter().all(|p| part_ok(p))
    {
        Ok(name.to_owned())
    } else {
        Err(ApiError::invalid(format!(
            "a category name is 2 to {NAME_MAX} characters: one to three parts joined by `.`, \
             each of lowercase letters, digits and single `-` inside (as `code.lint`)"
        )))
    }
}

/// A proposed description, trimmed, or why it cannot be one: 1 to [`DESCRIPTION_MAX`]
/// characters, one line, no link, script or HTML tag (it is shown on public pages).
///
/// # Errors
/// [`ApiError::invalid`].
pub fn check_description(text: &str) -> Result<String, ApiError> {
    let text = text.trim();
    let length = text.chars().count();
    if length == 0 || length > DESCRIPTION_MAX || text.chars().any(char::is_control) {
        return Err(ApiError::invalid(format!(
            "a description is 1 to {DESCRIPTION_MAX} characters on one line"
        )));
    }
    if let Some(why) = crate::prose::playbook_refusal(text) {
        return Err(ApiError::invalid(format!(
            "a description may not contain {why}"
        )));
    }
    Ok(text.to_owned())
}

/// A proposal as its proposer and the moderator read it: `{id, name, description, status,
/// proposedAt, decidedAt}` (never the proposer's account id).
pub fn public(row: &CategoryProposalRow) -> Value {
    json!({
        "id": row.id,
        "name": row.name,
        "description": row.description,
        "status": row.status,
        "proposedAt": kd_core::clock::rfc3339_ms(row.created_ms),
        "decidedAt": row.decided_ms.map(kd_core::clock::rfc3339_ms),
    })
}

/// `person_id` proposes category `name` covering `description` (decision 337). Checked
/// before anything is written: the name's and description's rules (400); a name that is
/// already a category or waits for a decision (409); [`PROPOSALS_PER_DAY`] a UTC day per
/// person (429). Answers [`public`] of the new proposal, `status: proposed`.
///
/// # Errors
/// Those refusals, or the store's failure.
pub async fn propose(
    store: &Store,
    random: &dyn Random,
    now_ms: i64,
    person_id: &str,
    name: &str,
    description: &str,
) -> Result<Value, ApiError> {
    let row = CategoryProposalRow {
        id: crate::queue::fresh_id(random, "cat_"),
        proposer_id: person_id.to_owned(),
        name: check_name(name.trim())?,
        description: check_description(description)?,
        status: "proposed".to_owned(),
        decided_ms: None,
        created_ms: now_ms,
    };
    store
        .write(move |txn| {
            let conn = txn.conn();
            if is_category(&row.name) {
                return Err(ApiError::conflict(format!(
                    "`{}` is already a category",
                    row.name
                )));
            }
            let taken = categories_store::named(conn, &row.name)?;
            if let Some(other) = taken.iter().find(|other| other.status != "rejected") {
                return Err(ApiError::conflict(if other.status == "accepted" {
                    format!("`{}` is already a category", row.name)
                } else {
                    format!(
                        "`{}` is already proposed and waits for a decision",
                        row.name
                    )
                }));
            }
            let day_start = now_ms - now_ms.rem_euclid(86_400_000);
            if categories_store::count_since(conn, &row.proposer_id, day_start)?
                >= PROPOSALS_PER_DAY
            {
                return Err(ApiError::budget(format!(
                    "{PROPOSALS_PER_DAY} category proposals a day; try again tomorrow (UTC)"
                )));
            }
            categories_store::insert(conn, &row)?;
            Ok(public(&row))
        })
        .await?
}

/// The proposals `person_id` made, oldest first, each [`public`].
///
/// # Errors
/// The store's failure.
pub fn proposals_of(conn: &Connection, person_id: &str) -> Result<Vec<Value>, ApiError> {
    Ok(categories_store::of_proposer(conn, person_id)?
        .iter()
        .map(public)
        .collect())
}

/// The proposals waiting for the moderator, oldest first, each [`public`].
///
/// # Errors
/// The store's failure.
pub fn pending(conn: &Connection) -> Result<Vec<Value>, ApiError> {
    Ok(categories_store::with_status(conn, "proposed")?
        .iter()
        .map(public)
        .collect())
}

/// The moderator accepts (`accept`) or rejects proposal `id` (decision 338); an accepted one
/// is a category from then on. Answers [`public`] of the decided proposal.
///
/// # Errors
/// [`ApiError::not_found`] for an unknown id; [`ApiError::conflict`] for one decided before.
pub async fn decide(store: &Store, now_ms: i64, id: &str, accept: bool) -> Result<Value, ApiError> {
    let id = id.to_owned();
    let status = if accept { "accepted" } else { "rejected" };
    store
        .write(move |txn| {
            let conn = txn.conn();
            let Some(mut row) = categories_store::by_id(conn, &id)? else {
                return Err(ApiError::not_found(format!("no category proposal `{id}`")));
            };
            if categories_store::decide(conn, &id, status, now_ms)? == 0 {
                return Err(ApiError::conflict(format!(
                    "`{id}` was already decided: {}",
                    row.status
                )));
            }
            row.status = status.to_owned();
            row.decided_ms = Some(now_ms);
            Ok(public(&row))
        })
        .await?
}
