//! The words of a `discover_resources` answer the server writes itself (trusted, never
//! lifted): the message, the `query` summary and each result's ranking note.

use serde_json::{Value, json};

use super::index::{self, Analyzers, Record};
use super::rank::{self, Hit, Placement};
use super::{Page, Request};
use crate::catalog::model::{Claim, Resource};

pub(super) fn query_json(page: &Page) -> Value {
    let plan = &page.plan;
    let words: Vec<Value> = plan
        .concepts
        .iter()
        .map(|concept| {
            let synonyms: Vec<&str> = concept
                .alternatives
                .iter()
                .skip(1)
                .map(|alternative| alternative.word.as_str())
                .collect();
            json!({ "word": concept.label, "synonyms": synonyms })
        })
        .collect();
    json!({
        "words": words,
        "hinted_categories": plan.hints.iter().map(|category| category.words()).collect::<Vec<_>>(),
        "generic_words": plan.generic,
        "ignored_words": plan.ignored,
        "unknown_words": page.unknown,
        "fuzzy_words": page.fuzzy,
        "exact_name": page.exact_name,
    })
}

/// The answer's `message`: what was searched and why it matched (or did not).
pub(super) fn message(page: &Page, request: &Request) -> String {
    let plan = &page.plan;
    if plan.listing {
        return format!(
            "No need given: all {} records, most popular, curated and best evidenced first. Pass need to search.",
            page.total
        );
    }
    if page.total == 0 {
        return nothing_matched(page, request);
    }
    if plan.category_listing {
        let categories: Vec<&str> = plan.hints.iter().map(|category| category.words()).collect();
        return format!(
            "{} records: {} names only a kind of record, so this lists {} by popularity, curation and evidence. Add what it should do to search.",
            page.total,
            plan.generic.join(", "),
            categories
                .join(" or ")
                .replacen("an ", "every ", 1)
                .replacen("a ", "every ", 1)
        );
    }
    matched(page, request)
}

/// The message of a search that found nothing: which words no record holds, and what to try.
fn nothing_matched(page: &Page, request: &Request) -> String {
    let plan = &page.plan;
    let mut text = String::from("Nothing matched.");
    if plan.common_only {
        let words: Vec<&str> = plan.ignored.iter().map(String::as_str).collect();
        text.push_str(&format!(
            " The need has only common words, and no title holds {}; say what the tool should do.",
            joined(&words, "and")
        ));
    } else if !page.unknown.is_empty() {
        let words: Vec<&str> = page.unknown.iter().map(String::as_str).collect();
        text.push_str(&format!(" No record mentions {}.", joined(&words, "or")));
    } else if plan.concepts.is_empty() {
        text.push_str(" The need has only common words; say what the tool should do.");
    }
    if !request.include_demo {
        text.push_str(" Try other words, or fewer of them.");
    }
    text
}

/// The message of a search that matched: the words that drove it, then what else to know.
fn matched(page: &Page, request: &Request) -> String {
    let plan = &page.plan;
    let words: Vec<&str> = plan
        .concepts
        .iter()
        .map(|concept| concept.label.as_str())
        .collect();
    let mut text = format!(
        "{} records matched {}.",
        page.total,
        if words.is_empty() {
            "the name".to_owned()
        } else {
            words.join(", ")
        }
    );
    if !plan.generic.is_empty()
        && !plan.hints.is_empty()
        && plan
            .concepts
            .iter()
            .all(|concept| !plan.generic.contains(&concept.label))
    {
        let categories: Vec<&str> = plan.hints.iter().map(|category| category.words()).collect();
        text.push_str(&format!(
            " The generic words ({}) only hinted at {}; they did not drive the match.",
            plan.generic.join(", "),
            categories.join(" or ")
        ));
    }
    if !page.unknown.is_empty() && !plan.common_only {
        let words: Vec<&str> = page.unknown.iter().map(String::as_str).collect();
        text.push_str(&format!(" No record mentions {}.", joined(&words, "or")));
    }
    if !page.fuzzy.is_empty() {
        text.push_str(&format!(
            " {} matched by a close spelling in titles.",
            page.fuzzy.join(", ")
        ));
    }
    if request.offset > 0 && page.hits.is_empty() {
        text.push_str(" This page is past the last result.");
    }
    text
}

/// The server's own sentence on why a record ranked where it did (trusted; not lifted).
pub(super) fn ranking_note(
    page: &Page,
    hit: &Hit,
    placement: Placement,
    resource: &Resource,
    claims: &[Claim],
    analyzers: &Analyzers,
) -> String {
    let mut parts = if page.plan.listing {
        vec!["Listed by popularity, curation and evidence (no need given)".to_owned()]
    } else {
        match_parts(page, hit, resource, analyzers)
    };
    parts.extend(signal_parts(page, hit, placement, resource, claims));
    let mut note = parts.join("; ");
    if let Some(first) = note.get(..1) {
        let upper = first.to_uppercase();
        note.replace_range(..1, &upper);
    }
    note.push('.');
    note
}

/// Where each concept matched (title, name, description, type; as which synonym), whether the
/// need is the record's name, its coverage and the category hint it meets.
fn match_parts(page: &Page, hit: &Hit, resource: &Resource, analyzers: &Analyzers) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    let plan = &page.plan;
    let title = analyzers.stems(&resource.title);
    let description = analyzers.stems(resource.description.as_deref().unwrap_or_default());
    let locator = analyzers.stems(&index::locator_words(&resource.locator));
    let kind = analyzers.stems(&resource.kind);
    let mut matched = Vec::new();
    for concept in &plan.concepts {
        let mut places = Vec::new();
        let mut via = None;
        for (place, stems) in [
            ("title", &title),
            ("name", &locator),
            ("description", &description),
            ("type", &kind),
        ] {
            if let Some(alternative) = concept
                .alternatives
                .iter()
                .find(|alternative| stems.contains(&alternative.stem))
            {
                places.push(place);
                if alternative.weight < 1.0 && via.is_none() {
                    via = Some(alternative.word.clone());
                }
            }
        }
        if !places.is_empty() {
            let synonym = via.map(|word| format!(" (as {word})")).unwrap_or_default();
            matched.push(format!(
                "{}{synonym} in the {}",
                concept.label,
                plain_list(&places)
            ));
        } else if page.fuzzy.contains(&concept.label) {
            matched.push(format!("a title word spelled close to {}", concept.label));
        }
    }
    let names: Vec<String> = index::record_names(&record_of(resource));
    if plan.names.iter().any(|name| names.contains(name)) {
        parts.push("Its name is exactly the need".into());
    } else if page.fuzzy_name && matched.is_empty() {
        parts.push("Its name is spelled close to the need".into());
    }
    if !matched.is_empty() {
        parts.push(format!("Matches {}", matched.join("; ")));
    }
    if hit.score.coverage < 1.0 && page.plan.concepts.len() > 1 {
        parts.push(format!(
            "covers {:.0}% of the need's words",
            hit.score.coverage * 100.0
        ));
    }
    if plan
        .hints
        .iter()
        .any(|category| hit.signals.category() & category.code() != 0)
    {
        let words: Vec<&str> = plan.hints.iter().map(|category| category.words()).collect();
        parts.push(format!("is {}, as the need hints", words.join(" or ")));
    }
    parts
}

/// Popularity, curation, evidence, risk, archived, demo and owner overflow, as they apply.
fn signal_parts(
    page: &Page,
    hit: &Hit,
    placement: Placement,
    resource: &Resource,
    claims: &[Claim],
) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    if let Some(popularity) = &resource.popularity_label {
        parts.push(format!("popularity: {popularity}"));
    }
    if resource.curated {
        parts.push("a curated, well-known tool".into());
    }
    if claims.iter().any(|claim| claim.counts_as_verification) && !resource.demo {
        parts.push("has verification-grade evidence".into());
    } else {
        parts.push("no verification-grade evidence yet".into());
    }
    if hit.signals.risky() {
        if page.plan.asks_risky {
            parts.push("flagged risky (gets past bot defences), which the need asks for".into());
        } else {
            parts.push("flagged risky (gets past bot defences), so ranked lower".into());
        }
    }
    if resource.archived {
        parts.push("archived upstream, so sorted after current records".into());
    }
    if resource.demo {
        parts.push("a DEMO record, sorted last and never evidence".into());
    }
    if placement == Placement::OwnerOverflow {
        parts.push(format!(
            "moved after other owners' results: more than {} results from {}",
            rank::PER_OWNER,
            resource.owner
        ));
    }
    parts
}

/// `a`, `a and b`, `a, b and c`.
fn plain_list(items: &[&str]) -> String {
    joined(items, "and")
}

/// `a`, `a <last> b`, `a, b <last> c` (`last`: "and" or "or").
fn joined(items: &[&str], last: &str) -> String {
    match items {
        [] => String::new(),
        [only] => (*only).to_owned(),
        [rest @ .., end] => format!("{} {last} {end}", rest.join(", ")),
    }
}

fn record_of(resource: &Resource) -> Record {
    Record {
        resource_id: resource.resource_id.clone(),
        source: resource.source.clone(),
        title: resource.title.clone(),
        kind: resource.kind.clone(),
        locator: resource.locator.clone(),
        description: resource.description.clone(),
        owner: resource.owner.clone(),
        popularity: resource.popularity,
        curated: resource.curated,
        verified: false,
        archived: resource.archived,
        demo: resource.demo,
        risky: resource.risky,
    }
}
