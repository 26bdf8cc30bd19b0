//! `search_matches`: candidates for a listing or a free-text need, ranked by text relevance.
//!
//! The need's words (the catalog's analyzer: lowercased, ASCII-folded, common words dropped,
//! then stemmed in English, as discover_resources reads a need) are scored against each
//! candidate with BM25 (k1 1.2, b 0.75) over its title (counted twice), description, area and
//! category words, the statistics taken over the candidates. A candidate matching none of the
//! words is not a match: nonsense returns Nothing matched.

use std::collections::{BTreeSet, HashMap};

use kd_kernel::Ctx;
use kd_kernel::input::Text;

use super::error::MarketError;
use super::output::{Candidate, ListingView, Matches};
use super::store::{self, Listing};
use super::{MATCH_LIMIT, MATCH_POOL, SearchMatches};
use crate::catalog::search::{Analyzers, is_stopword};

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// One ranked listing.
#[derive(Debug, Clone)]
pub struct Ranked {
    /// The listing.
    pub listing: Listing,
    /// BM25 score.
    pub score: f64,
    /// How many of the query's stems it matched.
    pub matched: usize,
    /// How many stems the query has.
    pub of: usize,
}

/// The query's distinct stems, common words dropped.
fn query_stems(analyzers: &Analyzers, text: &str) -> Vec<String> {
    let mut seen = BTreeSet::new();
    analyzers
        .words(text)
        .into_iter()
        .filter(|word| !is_stopword(word))
        .map(|word| analyzers.stem(&word))
        .filter(|stem| seen.insert(stem.clone()))
        .collect()
}

/// A listing's stems: the title twice, then description, area and category words.
fn listing_stems(analyzers: &Analyzers, listing: &Listing) -> Vec<String> {
    let title = analyzers.stems(&listing.title);
    let mut stems = title.clone();
    stems.extend(title);
    for text in [listing.description.as_deref(), listing.area.as_deref()]
        .into_iter()
        .flatten()
    {
        stems.extend(analyzers.stems(text));
    }
    stems.extend(analyzers.stems(&listing.category.replace('_', " ")));
    stems
}

/// Ranks `candidates` for `query` and keeps the best `limit` that match at least one word.
pub fn rank_listings(
    analyzers: &Analyzers,
    query: &str,
    candidates: Vec<Listing>,
    limit: usize,
) -> Vec<Ranked> {
    let terms = query_stems(analyzers, query);
    if terms.is_empty() || candidates.is_empty() {
        return Vec::new();
    }
    let docs: Vec<(Listing, HashMap<String, usize>, usize)> = candidates
        .into_iter()
        .map(|listing| {
            let stems = listing_stems(analyzers, &listing);
            let length = stems.len();
            let mut counts = HashMap::new();
            for stem in stems {
                *counts.entry(stem).or_insert(0) += 1;
            }
            (listing, counts, length)
        })
        .collect();
    let n = docs.len() as f64;
    let average = docs
        .iter()
        .map(|(_, _, length)| *length as f64)
        .sum::<f64>()
        / n;
    let idf: Vec<f64> = terms
        .iter()
        .map(|term| {
            let df = docs
                .iter()
                .filter(|(_, counts, _)| counts.contains_key(term))
                .count() as f64;
            (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
        })
        .collect();
    let mut ranked: Vec<Ranked> = docs
        .into_iter()
        .filter_map(|(listing, counts, length)| {
            let mut score = 0.0;
            let mut matched = 0;
            for (term, idf) in terms.iter().zip(&idf) {
                let Some(&tf) = counts.get(term) else {
                    continue;
                };
                matched += 1;
                let tf = tf as f64;
                score += idf * tf * (K1 + 1.0)
                    / (tf + K1 * (1.0 - B + B * length as f64 / average.max(1.0)));
            }
            (matched > 0).then_some(Ranked {
                listing,
                score,
                matched,
                of: terms.len(),
            })
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(b.listing.created_ms.cmp(&a.listing.created_ms))
            .then(a.listing.listing_id.cmp(&b.listing.listing_id))
    });
    ranked.truncate(limit);
    ranked
}

/// The opposite kind: an ask looks for gives, a give for asks.
fn opposite(kind: &str) -> &'static str {
    if kind == "give" { "ask" } else { "give" }
}

/// `search_matches`.
pub(super) async fn search_matches(ctx: Ctx, input: SearchMatches) -> Result<Matches, MarketError> {
    let listing_id = input.listing_id.text().map(str::to_owned);
    let need = input.need.text().map(str::to_owned);
    if need
        .as_deref()
        .is_some_and(|need| need.chars().count() > 500)
    {
        return Err(MarketError::Need);
    }
    if listing_id.is_none() && need.is_none() {
        return Err(MarketError::MatchWhat);
    }
    let (looking_for, query, listing_id, pool) = ctx
        .signed_write(move |txn, signed| -> Result<_, MarketError> {
            let agent_id = signed.agent_id.to_string();
            let operator = crate::admission::operator(txn.conn(), &agent_id)?;
            let mut query = need.unwrap_or_default();
            let mut looking_for = "give";
            let mut excluded = None;
            if let Some(id) = &listing_id {
                let listing = store::listing(txn.conn(), id)?
                    .filter(|listing| {
                        listing.status == "published"
                            || (listing.agent_id == agent_id && listing.status != "retracted")
                    })
                    .ok_or(MarketError::NoListing("listing_id"))?;
                looking_for = opposite(&listing.kind);
                query = [
                    listing.title.as_str(),
                    listing.description.as_deref().unwrap_or(""),
                    &query,
                ]
                .join(" ");
                excluded = Some(listing.listing_id);
            }
            let pool: Vec<Listing> =
                store::published_listings(txn.conn(), Some(looking_for), MATCH_POOL)?
                    .into_iter()
                    .filter(|candidate| {
                        candidate.operator != operator
                            && Some(&candidate.listing_id) != excluded.as_ref()
                    })
                    .collect();
            Ok((looking_for, query, listing_id, pool))
        })
        .await?;
    let ranked = rank_listings(&Analyzers::new(), &query, pool, MATCH_LIMIT);
    let candidates: Vec<Candidate> = ranked
        .into_iter()
        .map(|ranked| Candidate {
            ranking_note: format!(
                "Matches {} of the {} words looked for, in its title, description, area or category.",
                ranked.matched, ranked.of
            ),
            listing: ListingView::from(&ranked.listing),
            score: (ranked.score * 1000.0).round() / 1000.0,
            matched_words: ranked.matched,
        })
        .collect();
    let total = candidates.len();
    Ok(Matches {
        listing_id,
        looking_for,
        message: (total == 0).then_some("Nothing matched."),
        candidates,
        total,
        next_step: "Propose terms to a candidate's agent with propose_terms (my_listing_id, counterparty_id = its agent_id, terms). Only a person approves a deal.",
    })
}
