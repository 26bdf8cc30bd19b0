//! Listings: `post_listing`, the listing side of `retract_post` and `report_content`, and the
//! operator's pooled caps (asks and listings together; spec "Operator accounts pool ask and
//! listing caps").

use kd_core::db::{Connection, OptionalExtension};
use kd_core::random::random_id;
use kd_core::store::WriteTxn;
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use kd_kernel::error::ToolError;
use kd_kernel::input::Text;
use kd_kernel::{Caller, Ctx, Proof};

use super::error::MarketError;
use super::events;
use super::output::{ListingPosted, ListingReportFiled, ListingRetracted, ListingView, PooledCaps};
use super::store::{self, Listing};
use super::{
    CATEGORIES, DAY_MS, KINDS, MAX_AREA_CHARS, MAX_DESCRIPTION_CHARS, MAX_POINTS, PostListing,
    ReportContent, RetractPost, TITLE_CHARS, market_url,
};
use crate::admission::{ASKS_PER_OPERATOR_PER_DAY, OPEN_ASKS_PER_OPERATOR};
use crate::catalog::register as catalog_reports;

/// A listing id's prefix.
pub const LISTING_PREFIX: &str = "kdli_";

/// SHA-256 of a listing's text: title, LF, description, LF, area (empty when absent).
pub fn text_sha256(title: &str, description: Option<&str>, area: Option<&str>) -> String {
    let text = [title, description.unwrap_or(""), area.unwrap_or("")].join("\n");
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// A checked post_listing.
struct Draft {
    kind: String,
    category: String,
    points: Option<i64>,
    title: String,
    description: Option<String>,
    area: Option<String>,
    publish: bool,
}

fn no_controls(text: &str, allow_newlines: bool) -> bool {
    !text
        .chars()
        .any(|c| c.is_control() && !(allow_newlines && (c == '\n' || c == '\t')))
}

impl Draft {
    fn from_input(input: PostListing) -> Result<Self, MarketError> {
        let kind = input.kind.text().unwrap_or("give").to_owned();
        if !KINDS.contains(&kind.as_str()) {
            return Err(MarketError::Kind);
        }
        let category = input.category.text().unwrap_or("other").to_owned();
        if !CATEGORIES.contains(&category.as_str()) {
            return Err(MarketError::Category);
        }
        let title = input.title.required_text("title")?.to_owned();
        let length = title.chars().count();
        if length < TITLE_CHARS.0 || length > TITLE_CHARS.1 || !no_controls(&title, false) {
            return Err(MarketError::Title);
        }
        let description = input.description.text().map(str::to_owned);
        if description.as_deref().is_some_and(|text| {
            text.chars().count() > MAX_DESCRIPTION_CHARS || !no_controls(text, true)
        }) {
            return Err(MarketError::Description);
        }
        let area = input.area.text().map(str::to_owned);
        if area
            .as_deref()
            .is_some_and(|text| text.chars().count() > MAX_AREA_CHARS || !no_controls(text, false))
        {
            return Err(MarketError::Area);
        }
        if input
            .points
            .is_some_and(|points| !(0..=MAX_POINTS).contains(&points))
        {
            return Err(MarketError::Points);
        }
        let publish = input.publish.unwrap_or(false);
        let confirmed = input
            .human_confirmation
            .as_ref()
            .and_then(|confirmation| confirmation.get("confirmed"))
            == Some(&Value::Bool(true));
        if publish && !confirmed {
            return Err(MarketError::ConfirmationMissing);
        }
        Ok(Self {
            kind,
            category,
            points: input.points,
            title,
            description,
            area,
            publish,
        })
    }
}

/// The operator's asks and listings: (open, posted in the last 24 hours), when one more fits
/// both pooled caps.
///
/// # Errors
/// [`MarketError::OpenFull`], [`MarketError::DayFull`]; a store failure.
pub fn pooled_caps(conn: &Connection, operator: &str, now: i64) -> Result<(i64, i64), MarketError> {
    let (open_asks, first_expiry) = crate::admission::store::open_asks(conn, operator, now)?;
    let open = open_asks + store::open_listings(conn, operator)?;
    if open >= OPEN_ASKS_PER_OPERATOR {
        let retry_after_s = first_expiry.map_or(3600, |expiry| (expiry - now + 999) / 1000);
        return Err(MarketError::OpenFull {
            limit: OPEN_ASKS_PER_OPERATOR,
            retry_after_s,
        });
    }
    let (asks, oldest_ask) = crate::admission::store::asks_since(conn, operator, now - DAY_MS)?;
    let (listings, oldest_listing) = store::listings_since(conn, operator, now - DAY_MS)?;
    if asks + listings >= ASKS_PER_OPERATOR_PER_DAY {
        let oldest = [oldest_ask, oldest_listing].into_iter().flatten().min();
        return Err(MarketError::DayFull {
            limit: ASKS_PER_OPERATOR_PER_DAY,
            retry_after_s: day_wait_s(oldest, now),
        });
    }
    Ok((open, asks + listings))
}

/// Seconds until the oldest of a day's rows leaves the 24-hour window (at least 1).
pub(super) fn day_wait_s(oldest_ms: Option<i64>, now_ms: i64) -> i64 {
    (oldest_ms.unwrap_or(now_ms) + DAY_MS - now_ms + 999)
        .div_euclid(1000)
        .max(1)
}

/// Publishes `listing` now, by its person's own session (`listing.published`).
fn publish_in(
    txn: &mut WriteTxn<'_>,
    owner: &str,
    listing: &mut Listing,
    now: i64,
) -> Result<(), MarketError> {
    let by = format!("person:{owner}");
    txn.record(
        by.clone(),
        listing.agent_id.clone(),
        &events::ListingPublished {
            listing_id: listing.listing_id.clone(),
            agent_id: listing.agent_id.clone(),
            confirmed_by: by.clone(),
            text_sha256: listing.text_sha256.clone(),
        },
    )?;
    store::publish_listing(txn.conn(), &listing.listing_id, now, &by)?;
    listing.status = "published".into();
    listing.published_ms = Some(now);
    listing.published_by = Some(by);
    Ok(())
}

/// post_listing's next step (platform text).
fn next_step(published: bool, asked_to_publish: bool) -> &'static str {
    if published {
        "Published with your confirmation. Agents find it with search_matches and the connector's search."
    } else if asked_to_publish {
        "Kept as a draft: an agent's call never publishes. Your person publishes it in the KarmaDue app (You, Marketplace) at confirm_url."
    } else {
        "Drafted. It waits for your person: they publish it in the KarmaDue app (You, Marketplace) at confirm_url. Until then nobody else sees it."
    }
}

/// `post_listing`: drafts a listing for an owner-linked agent; publishes it only when the
/// agent's person sends it from their own session with their confirmation.
pub(super) async fn post_listing(
    ctx: Ctx,
    input: PostListing,
) -> Result<ListingPosted, MarketError> {
    let draft = Draft::from_input(input)?;
    let listing_id = random_id::<12>(ctx.kernel.random.as_ref(), LISTING_PREFIX);
    let confirm_url = market_url(&ctx.kernel);
    ctx.signed_write(move |txn, signed| -> Result<_, MarketError> {
        let agent_id = signed.agent_id.to_string();
        let now = txn.now_ms();
        let owner = crate::identity::store::owner_of(txn.conn(), &agent_id)
            .optional()?
            .flatten()
            .ok_or(MarketError::NeedsOwner)?;
        let operator = crate::admission::operator(txn.conn(), &agent_id)?;
        let (open, today) = pooled_caps(txn.conn(), &operator, now)?;
        let by_person =
            matches!(&signed.proof, Proof::OwnerSession { person_id } if *person_id == owner);
        let publish_now = draft.publish && by_person;
        let title_sha256 = hex::encode(Sha256::digest(draft.title.as_bytes()));
        let text_sha256 = text_sha256(
            &draft.title,
            draft.description.as_deref(),
            draft.area.as_deref(),
        );
        let event = txn.record(
            signed.actor(),
            agent_id.clone(),
            &events::ListingDrafted {
                listing_id: listing_id.clone(),
                agent_id: agent_id.clone(),
                owner_id: owner.clone(),
                operator: operator.clone(),
                kind: draft.kind.clone(),
                category: draft.category.clone(),
                points: draft.points,
                title_sha256: title_sha256.clone(),
                text_sha256: text_sha256.clone(),
            },
        )?;
        let mut listing = Listing {
            listing_id: listing_id.clone(),
            agent_id: agent_id.clone(),
            owner_id: owner.clone(),
            operator,
            kind: draft.kind,
            category: draft.category,
            points: draft.points,
            title: draft.title,
            description: draft.description,
            area: draft.area,
            title_sha256,
            text_sha256: text_sha256.clone(),
            status: "draft".into(),
            created_ms: now,
            published_ms: None,
            published_by: None,
            retracted_ms: None,
            reports: 0,
            event_seq: event.seq,
        };
        store::insert_listing(txn.conn(), &listing)?;
        if publish_now {
            publish_in(txn, &owner, &mut listing, now)?;
        }
        let next_step = next_step(publish_now, draft.publish);
        Ok(ListingPosted {
            listing: ListingView::from(&listing),
            published: publish_now,
            next_step,
            confirm_url,
            operator_caps: PooledCaps {
                posts_last_24h: today + 1,
                posts_per_day: ASKS_PER_OPERATOR_PER_DAY,
                open: open + 1,
                open_limit: OPEN_ASKS_PER_OPERATOR,
                shared_by: "every agent of your person, asks and listings together",
            },
            event_seq: event.seq,
        })
    })
    .await
}

/// Cancels `listing_id` of `agent_id` (`listing.retracted`, by `actor`), or answers that it
/// was cancelled before.
///
/// # Errors
/// [`MarketError::NoListing`] naming `field` when it is not the agent's.
pub(super) fn retract(
    txn: &mut WriteTxn<'_>,
    agent_id: &str,
    actor: &str,
    listing_id: &str,
    field: &'static str,
) -> Result<ListingRetracted, MarketError> {
    let listing = store::listing(txn.conn(), listing_id)?
        .filter(|listing| listing.agent_id == agent_id)
        .ok_or(MarketError::NoListing(field))?;
    if listing.status == "retracted" {
        return Ok(ListingRetracted {
            listing_id: listing.listing_id,
            retracted: "listing",
            status: "retracted",
            already: true,
            event_seq: None,
        });
    }
    let now = txn.now_ms();
    store::retract_listing(txn.conn(), listing_id, now)?;
    let event = txn.record(
        actor.to_owned(),
        agent_id.to_owned(),
        &events::ListingRetracted {
            listing_id: listing_id.to_owned(),
            agent_id: agent_id.to_owned(),
        },
    )?;
    Ok(ListingRetracted {
        listing_id: listing.listing_id,
        retracted: "listing",
        status: "retracted",
        already: false,
        event_seq: Some(event.seq),
    })
}

/// retract_post's answer: the forum's, or a listing's.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Retraction {
    /// A forum thread or post.
    Forum(crate::forum::output::Retracted),
    /// A listing.
    Listing(ListingRetracted),
}

kd_kernel::output!(Retraction, Reported);

/// `retract_post`: a listing id cancels the caller's listing; every other id goes to the
/// forum's code unchanged.
pub(super) async fn retract_post(ctx: Ctx, input: RetractPost) -> Result<Retraction, ToolError> {
    let post_id = input.post_id.trim().to_owned();
    if !post_id.starts_with(LISTING_PREFIX) {
        return Ok(Retraction::Forum(
            crate::forum::write::retract_post(ctx, &post_id)
                .await
                .map_err(ToolError::from)?,
        ));
    }
    let retracted = ctx
        .signed_write(move |txn, signed| -> Result<_, MarketError> {
            retract(
                txn,
                &signed.agent_id.to_string(),
                &signed.actor(),
                &post_id,
                "post_id",
            )
        })
        .await?;
    Ok(Retraction::Listing(retracted))
}

/// report_content's answer: the catalog's, or a listing's.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Reported {
    /// A catalog record.
    Resource(crate::catalog::output::ContentReported),
    /// A listing.
    Listing(ListingReportFiled),
}

/// The listing a report target names: `{listing_id}`, or `{resource_id}` naming a listing.
/// `None` for a resource (the catalog reads the target).
fn listing_target(target: Option<&Map<String, Value>>) -> Result<Option<String>, ToolError> {
    let Some(target) = target else {
        return Ok(None);
    };
    if let Some(unknown) = target
        .keys()
        .find(|key| *key != "resource_id" && *key != "listing_id")
    {
        return Err(crate::catalog::CatalogError::TargetKey(unknown.clone()).into());
    }
    if let Some(listing) = target.get("listing_id") {
        let id = listing.as_str().map(str::trim).unwrap_or_default();
        if !id.starts_with(LISTING_PREFIX) || target.contains_key("resource_id") {
            return Err(ToolError::validation(
                "target.listing_id",
                "target.listing_id must be a listing id (kdli_...), given alone",
            ));
        }
        return Ok(Some(id.to_owned()));
    }
    Ok(target
        .get("resource_id")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|id| id.starts_with(LISTING_PREFIX))
        .map(str::to_owned))
}

/// `report_content`: a listing is reported here; a resource goes to the catalog unchanged.
pub(super) async fn report_content(ctx: Ctx, input: ReportContent) -> Result<Reported, ToolError> {
    let Some(listing_id) = listing_target(input.target.as_ref())? else {
        let report = crate::catalog::register::ReportContent {
            target: input.target,
            reason: input.reason,
            details: input.details,
        };
        return Ok(Reported::Resource(
            catalog_reports::report_content(ctx, report).await?,
        ));
    };
    let reason = catalog_reports::bounded_text(
        input.reason.text(),
        "reason",
        catalog_reports::MAX_REASON_CHARS,
    )?
    .ok_or(crate::catalog::CatalogError::ReasonRequired)?;
    let details = catalog_reports::bounded_text(
        input.details.text(),
        "details",
        catalog_reports::MAX_DETAILS_CHARS,
    )?;
    let report_id = random_id::<12>(ctx.kernel.random.as_ref(), "kdcr_");
    let filed = Filed {
        report_id,
        listing_id,
        reason,
        details,
    };
    let reported = match &ctx.caller {
        Caller::Agent(_) => {
            ctx.signed_write(move |txn, signed| {
                file_listing_report(txn, filed, Some(signed.agent_id.to_string()), None)
            })
            .await?
        }
        Caller::Anonymous { ip } | Caller::Person { ip, .. } => {
            let ip = ip.map(|ip| ip.to_string());
            ctx.write(move |txn| file_listing_report(txn, filed, None, ip))
                .await?
        }
    };
    Ok(Reported::Listing(reported))
}

/// A listing report, checked.
struct Filed {
    report_id: String,
    listing_id: String,
    reason: String,
    details: Option<String>,
}

/// Files a report on a published listing with the catalog's content reports (their hourly
/// limit too) and records `listing.reported`.
fn file_listing_report(
    txn: &mut WriteTxn<'_>,
    filed: Filed,
    agent_id: Option<String>,
    ip: Option<String>,
) -> Result<ListingReportFiled, MarketError> {
    let now = txn.now_ms();
    store::listing(txn.conn(), &filed.listing_id)?
        .filter(|listing| listing.status == "published")
        .ok_or(MarketError::NoListing("target.listing_id"))?;
    catalog_reports::file_content_report(
        txn,
        &crate::catalog::store::NewContentReport {
            report_id: &filed.report_id,
            resource_id: &filed.listing_id,
            reason: &filed.reason,
            details: filed.details.as_deref(),
            agent_id: agent_id.as_deref(),
            ip: ip.as_deref(),
            now,
        },
    )?;
    store::add_report(txn.conn(), &filed.listing_id)?;
    let event = txn.record(
        agent_id.clone().unwrap_or_else(|| "anonymous".into()),
        filed.listing_id.clone(),
        &events::ListingReported {
            report_id: filed.report_id.clone(),
            listing_id: filed.listing_id.clone(),
            reporter: agent_id.clone(),
            reason_sha256: hex::encode(Sha256::digest(filed.reason.as_bytes())),
        },
    )?;
    Ok(ListingReportFiled {
        report_id: filed.report_id,
        listing_id: filed.listing_id,
        reason: filed.reason,
        details: filed.details,
        reporter: agent_id,
        status: "received",
        note: "A reviewer reads reports. Nothing on the listing changes until then.",
        event_seq: event.seq,
    })
}
