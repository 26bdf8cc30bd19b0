//! Agents adding to the catalog: `register_resource` (a signed write that lists a locator) and
//! `report_content` (anyone may report a record for review) (spec "register_resource",
//! "report_content").
//!
//! A registered resource gets an id derived from its locator, the same way `check_before_acting`
//! reads targets: a GitHub URL → `kd:res:github:owner/repo[/folder]`, `npm:<name>` or a package
//! page → `kd:res:npm:<name>`, `pypi:<name>` → `kd:res:pypi:<name>`, an image id →
//! `kd:res:oci:<registry/path>`, any other https URL → `kd:res:url:<host/path>` (lowercase, no
//! query, fragment or trailing slash). An existing real record is never overwritten. What a
//! registration says about its maker (a `maintainer` claim) waits with status
//! `awaiting_ownership_check` and is not public until an ownership check (a later feature).
//!
//! Events: `resource.registered` (actor: the agent; subject: the resource) and
//! `content.reported` (actor: the signed agent, or `anonymous`; subject: the resource).

use crate::catalog::events;
use kd_core::random::random_id;
use kd_core::store::WriteTxn;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::CatalogError;
use super::model::{self, Claim, Resource, claim_id};
use super::output::{ContentReported, PendingClaim, Registered};
use crate::preflight::{self, Target};
use kd_kernel::error::ToolError;
use kd_kernel::input::Text;
use kd_kernel::policy::{Connector, ToolPolicy};
use kd_kernel::registry::{Access, Arguments, Hints, Lift, Tool};
use kd_kernel::{Caller, Ctx};
use schemars::JsonSchema;
use serde::Deserialize;

/// The method of the claims a registration implies.
pub const REGISTRATION_METHOD: &str = "registration@1";
/// Longest title, in characters.
pub const MAX_TITLE_CHARS: usize = 200;
/// Longest report reason, in characters.
pub const MAX_REASON_CHARS: usize = 200;
/// Longest report details, in characters.
pub const MAX_DETAILS_CHARS: usize = 2000;
/// Content reports a reporter (a signed agent, or an IP address) may file in a rolling hour.
pub const CONTENT_REPORTS_PER_HOUR: usize = 10;
/// An hour, in milliseconds (the content reports' window).
pub const HOUR_MS: i64 = 3600 * 1000;

/// `register_resource`.
pub static REGISTER_RESOURCE: Tool = Tool {
    name: "register_resource",
    title: "Register a resource",
    description: "Register a locator. Provider-confirmed claims wait for an ownership check. Signed (kd-mcp-v1). An existing record is never overwritten: you get its id and already_listed true.",
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[Lift::rows("", "resource_id", &["title"])],
    arguments: Arguments::Typed(
        kd_kernel::input!(RegisterResource).agent_id(kd_kernel::AgentIdParam::Optional),
    ),
    policy: ToolPolicy::write(Connector::Never),
    handler: kd_kernel::typed!(REGISTER_RESOURCE, register_resource),
};

/// register_resource's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RegisterResource {
    /// URL or other locator.
    locator: String,
    /// Display title.
    title: String,
    /// Resource type.
    r#type: Option<String>,
}

/// report_content's arguments for a resource (the tool is declared by the marketplace,
/// `market::REPORT_CONTENT`, which hands a resource here and keeps a listing).
#[derive(Debug)]
pub struct ReportContent {
    /// Object with resource_id.
    pub target: Option<Map<String, Value>>,
    /// Why you are reporting it.
    pub reason: Option<String>,
    /// What a reviewer should know.
    pub details: Option<String>,
}

/// The identity a locator gives a registered resource: (resource id, stored locator, owner,
/// registry package ids).
///
/// # Errors
/// `validation` naming `locator` when it has no recognised form or is a KarmaDue id.
pub fn identity(locator: &str) -> Result<(String, String, String, Vec<String>), ToolError> {
    match preflight::parse_target_text(locator, "locator")? {
        Target::GitHub {
            owner,
            repo,
            path,
            url,
        } => {
            let id = match &path {
                Some(path) => format!("kd:res:github:{owner}/{repo}/{path}"),
                None => format!("kd:res:github:{owner}/{repo}"),
            };
            Ok((id, url, owner, Vec::new()))
        }
        Target::Npm(name) => {
            let owner = name
                .strip_prefix('@')
                .and_then(|scoped| scoped.split('/').next())
                .unwrap_or(&name)
                .to_lowercase();
            Ok((
                format!("kd:res:npm:{name}"),
                format!("npm:{name}"),
                owner,
                Vec::new(),
            ))
        }
        Target::Pypi(name) => Ok((
            format!("kd:res:pypi:{name}"),
            format!("pypi:{name}"),
            name.clone(),
            Vec::new(),
        )),
        Target::Image(image) => {
            let owner = image.split('/').nth(1).unwrap_or_default().to_owned();
            Ok((
                format!("kd:res:oci:{image}"),
                format!("oci:{image}"),
                owner,
                vec![image],
            ))
        }
        Target::Url(url) => {
            let bare = url.trim_start_matches("https://").to_owned();
            let host = bare.split('/').next().unwrap_or_default().to_owned();
            Ok((format!("kd:res:url:{bare}"), url, host, Vec::new()))
        }
        Target::ResourceId(_) => Err(CatalogError::LocatorIsId.into()),
    }
}

/// `text` when it is at most `max` characters without control characters (line breaks
/// allowed).
///
/// # Errors
/// `validation` naming `name`.
pub fn bounded_text(
    text: Option<&str>,
    name: &'static str,
    max: usize,
) -> Result<Option<String>, CatalogError> {
    let Some(text) = text else {
        return Ok(None);
    };
    if text.chars().count() > max || text.chars().any(|c| c.is_control() && c != '\n') {
        return Err(CatalogError::TextBounds { name, max });
    }
    Ok(Some(text.to_owned()))
}

/// `register_resource`: lists a locator, or answers the record that already has it.
///
/// # Errors
/// `validation` naming `locator`, `title` or `type`; the signature and quota refusals;
/// `internal` when the store fails.
async fn register_resource(ctx: Ctx, input: RegisterResource) -> Result<Registered, CatalogError> {
    let locator_given = input.locator.required_text("locator")?.to_owned();
    let (resource_id, locator, owner, package_ids) = identity(&locator_given)?;
    let title = bounded_text(input.title.text(), "title", MAX_TITLE_CHARS)?
        .filter(|title| !title.contains('\n'))
        .ok_or(CatalogError::TitleRequired)?;
    let kind = checked_kind(input.r#type.text())?;
    let registered = ctx.signed_write(move |txn, signed| -> Result<_, ToolError> {
        let agent_id = signed.agent_id.to_string();
        let mut existing: Vec<String> = preflight::ids_ignoring_case(txn.conn(), &resource_id)?;
        existing.extend(preflight::ids_by_locator(txn.conn(), &locator)?);
        for id in existing {
            if let Some(record) = model::load_resource(txn.conn(), &id)?.filter(|record| !record.demo) {
                return Ok(Registered {
                    resource_id: record.resource_id,
                    registered: false,
                    already_listed: true,
                    source: record.source,
                    locator: record.locator,
                    title: None,
                    kind: None,
                    registered_by: None,
                    pending_claims: None,
                    note: "A record for this locator already exists; it was not changed.",
                    event_seq: None,
                });
            }
        }
        let now = txn.now_ms();
        let (resource, claims) = Registration {
            resource_id: &resource_id,
            locator: &locator,
            title: &title,
            kind: &kind,
            agent_id: &agent_id,
        }
        .record(owner, package_ids, now);
        model::store_resource(txn.conn(), &resource, &claims, now)?;
        let event = txn.record(
            agent_id.clone(),
            resource_id.clone(),
            &events::ResourceRegistered { locator_given, resource, claims: claims.clone() },
        )?;
        Ok(Registered {
            resource_id,
            registered: true,
            already_listed: false,
            source: "registered".into(),
            locator,
            title: Some(title),
            kind: Some(kind),
            registered_by: Some(agent_id),
            pending_claims: Some(claims.into_iter().map(|claim| PendingClaim { claim_id: claim.claim_id, kind: claim.kind, status: claim.status }).collect()),
            note: "Listed. What the registration says about the maker waits for an ownership check and is not public until then; nothing here counts as verification.",
            event_seq: Some(event.seq),
        })
    });
    Ok(registered.await?)
}

/// register_resource's `type`: a short code (default `other`).
fn checked_kind(kind: Option<&str>) -> Result<String, CatalogError> {
    let kind = kind.unwrap_or("other").to_owned();
    let kind_shaped = kind.len() <= 40
        && kind.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
        && kind
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !kind_shaped {
        return Err(CatalogError::TypeShape);
    }
    Ok(kind)
}

/// What a registration names, for its record.
struct Registration<'a> {
    resource_id: &'a str,
    locator: &'a str,
    title: &'a str,
    kind: &'a str,
    agent_id: &'a str,
}

impl Registration<'_> {
    /// The `registered` record and its one pending maintainer claim, at `now` (Unix ms).
    fn record(&self, owner: String, package_ids: Vec<String>, now: i64) -> (Resource, Vec<Claim>) {
        let Self {
            resource_id,
            locator,
            title,
            kind,
            agent_id,
        } = *self;
        let record_hash = hex::encode(Sha256::digest(
            kd_protocol::canonical::canonical_value_text(
                &json!({ "locator": locator, "title": title, "type": kind, "agent_id": agent_id }),
            )
            .as_bytes(),
        ));
        let resource = Resource {
            resource_id: resource_id.to_owned(),
            source: "registered".into(),
            locator: locator.to_owned(),
            title: title.to_owned(),
            kind: kind.to_owned(),
            description: None,
            owner,
            license: None,
            version: None,
            released_ms: None,
            released_source: "registered".into(),
            popularity: 0.0,
            popularity_label: None,
            curated: false,
            archived: false,
            risky: false,
            demo: false,
            package_ids,
            registered_by: Some(agent_id.to_owned()),
            record_hash,
        };
        let claims = vec![Claim {
                claim_id: claim_id(resource_id, "maintainer", REGISTRATION_METHOD, None, Some(agent_id)),
                resource_id: resource_id.to_owned(),
                version: None,
                kind: "maintainer".into(),
                value: Some(agent_id.to_owned()),
                method: REGISTRATION_METHOD.into(),
                evidence_type: "agent_reported".into(),
                evidence_label: "Stated by the registering agent. Waits for an ownership check; not public and not a check.".into(),
                counts_as_verification: false,
                source: Some(locator.to_owned()),
                observed_ms: now,
                status: "awaiting_ownership_check".into(),
                demo: false,
            }];
        (resource, claims)
    }
}

/// A content report, checked and ready to store.
struct ContentReport {
    report_id: String,
    resource_id: String,
    reason: String,
    details: Option<String>,
}

/// report_content's `target`: `{resource_id}` with a `kd:res:` id.
///
/// # Errors
/// `validation` naming `target`, `target.<key>` or `target.resource_id`.
fn content_target(target: Option<&Map<String, Value>>) -> Result<String, CatalogError> {
    let target = target.ok_or(CatalogError::TargetRequired)?;
    if let Some(unknown) = target.keys().find(|key| *key != "resource_id") {
        return Err(CatalogError::TargetKey(unknown.clone()));
    }
    let id = target
        .get("resource_id")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|id| id.starts_with("kd:res:"))
        .ok_or(CatalogError::TargetResourceId)?;
    Ok(id.to_owned())
}

/// Stores one content report for a reviewer, a catalog record's or (from the marketplace) a
/// listing's, after the reporter's hourly limit: [`CONTENT_REPORTS_PER_HOUR`] per agent, or per
/// address when unsigned, counted at `report.now`.
///
/// # Errors
/// `rate_limited` with `retry_after_s` past the limit; `internal` when the store fails.
pub fn file_content_report(
    txn: &mut WriteTxn<'_>,
    report: &super::store::NewContentReport<'_>,
) -> Result<(), ToolError> {
    let times = super::store::content_report_times(
        txn.conn(),
        report.agent_id,
        report.ip.unwrap_or_default(),
        report.now - HOUR_MS,
    )?;
    if times.len() >= CONTENT_REPORTS_PER_HOUR {
        let leaving = times[times.len() - CONTENT_REPORTS_PER_HOUR];
        let retry_after_s = (leaving + HOUR_MS - report.now + 999).div_euclid(1000);
        return Err(CatalogError::ReportsSpent {
            retry_after_s: retry_after_s.max(1),
        }
        .into());
    }
    super::store::insert_content_report(txn.conn(), report)?;
    Ok(())
}

/// Stores a content report and its event, refusing past the hourly limit of `reporter`.
fn store_content_report(
    txn: &mut WriteTxn<'_>,
    report: ContentReport,
    agent_id: Option<String>,
    ip: Option<String>,
) -> Result<ContentReported, ToolError> {
    let now = txn.now_ms();
    if model::load_resource(txn.conn(), &report.resource_id)?.is_none() {
        return Err(CatalogError::NoSuchResource("target.resource_id").into());
    }
    file_content_report(
        txn,
        &super::store::NewContentReport {
            report_id: &report.report_id,
            resource_id: &report.resource_id,
            reason: &report.reason,
            details: report.details.as_deref(),
            agent_id: agent_id.as_deref(),
            ip: ip.as_deref(),
            now,
        },
    )?;
    let event = txn.record(
        agent_id.clone().unwrap_or_else(|| "anonymous".into()),
        report.resource_id.clone(),
        &events::ContentReported {
            report_id: report.report_id.clone(),
            resource_id: report.resource_id.clone(),
            reason: report.reason.clone(),
            details: report.details.clone(),
            reporter: agent_id.clone(),
        },
    )?;
    Ok(ContentReported {
        report_id: report.report_id,
        resource_id: report.resource_id,
        reason: report.reason,
        details: report.details,
        reporter: agent_id,
        status: "received",
        note: "A reviewer reads reports. Nothing on the record changes until then.",
        event_seq: event.seq,
    })
}

/// `report_content`: files a report on a record for a reviewer, signed or anonymous.
///
/// # Errors
/// `validation` naming the target, `reason` or `details`; `not_found` naming
/// `target.resource_id`; `rate_limited` past [`CONTENT_REPORTS_PER_HOUR`]; `internal` when the
/// store fails.
pub async fn report_content(
    ctx: Ctx,
    input: ReportContent,
) -> Result<ContentReported, CatalogError> {
    let resource_id = content_target(input.target.as_ref())?;
    let reason = bounded_text(input.reason.text(), "reason", MAX_REASON_CHARS)?
        .ok_or(CatalogError::ReasonRequired)?;
    let details = bounded_text(input.details.text(), "details", MAX_DETAILS_CHARS)?;
    let report = ContentReport {
        report_id: random_id::<12>(ctx.kernel.random.as_ref(), "kdcr_"),
        resource_id,
        reason,
        details,
    };
    let reported = match &ctx.caller {
        Caller::Agent(_) => {
            ctx.signed_write(move |txn, signed| {
                store_content_report(txn, report, Some(signed.agent_id.to_string()), None)
            })
            .await
        }
        Caller::Anonymous { ip } | Caller::Person { ip, .. } => {
            let ip = ip.map(|ip| ip.to_string());
            ctx.write(move |txn| store_content_report(txn, report, None, ip))
                .await
        }
    };
    Ok(reported?)
}
