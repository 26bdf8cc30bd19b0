//! The query a plan becomes: per concept a dis-max of its forms over the weighted fields (or a
//! fuzzy title match for a word no record holds), each adding its coverage bit; a category
//! listing's one clause; and the record names equal (or close) to the need. Words never pass
//! through a query parser.

use tantivy::Term;
use tantivy::query::{
    AllQuery, BooleanQuery, BoostQuery, ConstScoreQuery, DisjunctionMaxQuery, EmptyQuery,
    FuzzyTermQuery, Occur, Query, TermQuery,
};
use tantivy::schema::IndexRecordOption;

use super::index::{AliveStatistics, Fields};
use super::plan::{Concept, Plan, fuzzy_distance};
use super::rank::{COVERED, NAME_BIT};
use kd_kernel::error::ToolError;
use tantivy::query::{Bm25StatisticsProvider, QueryClone};

/// Text score of an exact name match (the need is the record's id, locator, title or package
/// name).
pub const NAME_BONUS: f32 = 8.0;
/// Text score of a name one edit away.
pub const NAME_NEAR_BONUS: f32 = 12.0;
/// Text score of a name two edits away.
pub const NAME_FAR_BONUS: f32 = 6.0;
/// Text score of a title word one or two edits away from a word no record holds.
pub const FUZZY_TITLE_WEIGHT: f32 = 4.0;
/// Text score of a title word that starts with the word as typed (a word not finished yet).
pub const PREFIX_WEIGHT: f32 = 4.0;
/// Text score a record named by the need's most specific word gets for each other word.
pub const NAMED_TEXT: f32 = 1.0;
/// Dis-max tie breaker: a concept scores its best field and form, plus this share of the rest.
pub const TIE_BREAKER: f32 = 0.3;
/// Text score of being of the listed category (a need of generic words only).
pub const CATEGORY_TEXT: f32 = 1.0;

/// Stems that occur in the `type` field.
const KIND_WORDS: &[&str] = &["mcp", "server", "packag", "repo", "skill"];

/// The query, and what the planner learnt while making it.
pub struct Built {
    /// The query to run.
    pub query: Box<dyn Query>,
    /// Concept labels no record holds and no title is close to.
    pub unknown: Vec<String>,
    /// Concept labels matched through a fuzzy title match.
    pub fuzzy: Vec<String>,
    /// An exact name of some record equals the need.
    pub exact_name: bool,
    /// A name close to the need was tried.
    pub fuzzy_name: bool,
    /// Live records holding a name equal (or, when tried, close) to the need.
    pub name_holders: u64,
    /// Concepts that can match (the denominator of coverage).
    pub concepts: usize,
    /// Per coverage bit, how specific that concept is (IDF of its most common form).
    pub weights: [f32; NAME_BIT],
}

type Clause = (Occur, Box<dyn Query>);

/// A concept's boosted forms and the document frequency of its most common form.
type Forms = (Vec<Box<dyn Query>>, u64);

/// Builds the query for `plan`.
///
/// # Errors
/// `internal` when the index cannot be read.
pub fn build(
    plan: &Plan,
    fields: &Fields,
    stats: &AliveStatistics<'_>,
) -> Result<Built, ToolError> {
    let mut built = Built {
        query: Box::new(EmptyQuery),
        unknown: Vec::new(),
        fuzzy: Vec::new(),
        exact_name: false,
        fuzzy_name: false,
        name_holders: 0,
        concepts: 0,
        weights: [0.0; NAME_BIT],
    };
    if plan.listing {
        built.query = Box::new(AllQuery);
        return Ok(built);
    }
    let documents = stats.total_num_docs().map_err(ToolError::internal_from)? as f32;
    let mut matched: Vec<(&str, Vec<Box<dyn Query>>)> = Vec::new();
    for concept in &plan.concepts {
        let Some((disjuncts, most_common)) = concept_forms(concept, fields, stats, &mut built)?
        else {
            continue;
        };
        // A concept that half the catalog mentions says little; a rare one says much.
        let Some(weight) = built.weights.get_mut(matched.len()) else {
            break; // The plan keeps at most MAX_CONCEPTS concepts.
        };
        *weight = (1.0 + documents / (1.0 + most_common as f32)).ln().max(0.1);
        matched.push((concept.label.as_str(), disjuncts));
    }
    named_by_the_rarest(&mut matched, &built.weights, fields, stats)?;
    let mut concept_clauses: Vec<Clause> = matched
        .into_iter()
        .enumerate()
        .map(|(bit, (_, disjuncts))| covered(disjuncts, bit))
        .collect();
    if plan.category_listing {
        concept_clauses.push(category_clause(plan, fields));
        built.weights[0] = 1.0;
    }
    built.concepts = concept_clauses.len();
    let mut top: Vec<Clause> = Vec::new();
    if !concept_clauses.is_empty() {
        let minimum = plan.minimum_match().min(concept_clauses.len()).max(1);
        top.push((
            Occur::Should,
            Box::new(BooleanQuery::with_minimum_required_clauses(
                concept_clauses,
                minimum,
            )),
        ));
    }
    let names = name_clauses(plan, fields, stats, &mut built)?;
    if !names.is_empty() {
        top.push((Occur::Should, Box::new(DisjunctionMaxQuery::new(names))));
    }
    if !top.is_empty() {
        built.query = Box::new(BooleanQuery::new(top));
    }
    Ok(built)
}

/// The forms of `concept` some record holds, as boosted term queries, with the document
/// frequency of its most common form; a fuzzy title match when no record holds any (noted in
/// `built.fuzzy`); `None` when not even that (noted in `built.unknown`).
fn concept_forms(
    concept: &Concept,
    fields: &Fields,
    stats: &AliveStatistics<'_>,
    built: &mut Built,
) -> Result<Option<Forms>, ToolError> {
    let mut disjuncts: Vec<Box<dyn Query>> = Vec::new();
    let mut most_common = 0u64;
    for alternative in &concept.alternatives {
        for (field, weight) in fields.weighted() {
            // The type holds a handful of words (mcp, server, package, repo, skill): only
            // those are worth a look there. A common word is looked for in titles only.
            if (field == fields.kind && !KIND_WORDS.contains(&alternative.stem.as_str()))
                || (concept.title_only && field != fields.title)
            {
                continue;
            }
            let term = Term::from_field_text(field, &alternative.stem);
            let count = stats.doc_freq(&term).map_err(ToolError::internal_from)?;
            if count > 0 {
                most_common = most_common.max(count);
                let query = TermQuery::new(term, IndexRecordOption::WithFreqs);
                disjuncts.push(Box::new(BoostQuery::new(
                    Box::new(query),
                    weight * alternative.weight,
                )));
            }
        }
    }
    if let Some(prefix) = &concept.prefix
        && stats
            .has_prefix(fields.title_words, prefix)
            .map_err(ToolError::internal_from)?
    {
        // The word as typed so far: the start of a title word (`kube` → kubernetes).
        let term = Term::from_field_text(fields.title_words, prefix);
        let query = FuzzyTermQuery::new_prefix(term, 0, false);
        disjuncts.push(Box::new(BoostQuery::new(Box::new(query), PREFIX_WEIGHT)));
    }
    if disjuncts.is_empty() {
        for word in &concept.fuzzy {
            let term = Term::from_field_text(fields.title_words, word);
            let fuzzy = FuzzyTermQuery::new(term, fuzzy_distance(word.chars().count()), true);
            // Only a close spelling some title holds counts: otherwise the word is unknown.
            if stats
                .matches_any(&fuzzy)
                .map_err(ToolError::internal_from)?
            {
                disjuncts.push(Box::new(BoostQuery::new(
                    Box::new(fuzzy),
                    FUZZY_TITLE_WEIGHT,
                )));
            }
        }
        if disjuncts.is_empty() {
            built.unknown.push(concept.label.clone());
            return Ok(None);
        }
        built.fuzzy.push(concept.label.clone());
    }
    Ok(Some((disjuncts, most_common)))
}

/// A record named by the need's most specific word (`Sentry` for "sentry error monitoring",
/// `vosk` for "vosk speech recognition") is the thing the need names: it counts as matching
/// the need's other words too (docs/decisions.md 247). Only for a need of two or more
/// concepts whose most specific word some record is named.
fn named_by_the_rarest(
    matched: &mut [(&str, Vec<Box<dyn Query>>)],
    weights: &[f32; NAME_BIT],
    fields: &Fields,
    stats: &AliveStatistics<'_>,
) -> Result<(), ToolError> {
    if matched.len() < 2 {
        return Ok(());
    }
    let Some(rarest) = (0..matched.len()).max_by(|left, right| {
        weights[*left]
            .total_cmp(&weights[*right])
            .then_with(|| right.cmp(left))
    }) else {
        return Ok(());
    };
    let term = Term::from_field_text(fields.names, matched[rarest].0);
    if stats.doc_freq(&term).map_err(ToolError::internal_from)? == 0 {
        return Ok(());
    }
    let named = ConstScoreQuery::new(
        Box::new(TermQuery::new(term, IndexRecordOption::Basic)),
        NAMED_TEXT,
    );
    for (index, (_, disjuncts)) in matched.iter_mut().enumerate() {
        if index != rarest {
            disjuncts.push(named.box_clone());
        }
    }
    Ok(())
}

/// A concept's clause: must match one of its forms, and adds its coverage bit.
fn covered(disjuncts: Vec<Box<dyn Query>>, bit: usize) -> Clause {
    let matched: Box<dyn Query> = Box::new(DisjunctionMaxQuery::with_tie_breaker(
        disjuncts,
        TIE_BREAKER,
    ));
    let counted: Box<dyn Query> = Box::new(ConstScoreQuery::new(
        Box::new(AllQuery),
        COVERED * (1u32 << bit) as f32,
    ));
    (
        Occur::Should,
        Box::new(BooleanQuery::new(vec![
            (Occur::Must, matched),
            (Occur::Should, counted),
        ])),
    )
}

/// A category listing's one concept: every record of a hinted category matches with the same
/// small text score, so popularity, curation and evidence order them.
fn category_clause(plan: &Plan, fields: &Fields) -> Clause {
    let kinds: Vec<Box<dyn Query>> = plan
        .hints
        .iter()
        .map(|category| -> Box<dyn Query> {
            let term = Term::from_field_text(fields.kind, category.kind_stem());
            Box::new(TermQuery::new(term, IndexRecordOption::Basic))
        })
        .collect();
    let matched: Box<dyn Query> = Box::new(ConstScoreQuery::new(
        Box::new(BooleanQuery::union(kinds)),
        COVERED + CATEGORY_TEXT,
    ));
    (Occur::Should, matched)
}

/// The names equal to the need (noted in `built.exact_name`) or, for
/// a need with a typo or an identifier, one or two edits away (`built.fuzzy_name`). None for a
/// category listing, which is by popularity and evidence only.
fn name_clauses(
    plan: &Plan,
    fields: &Fields,
    stats: &AliveStatistics<'_>,
    built: &mut Built,
) -> Result<Vec<Box<dyn Query>>, ToolError> {
    let mut names: Vec<Box<dyn Query>> = Vec::new();
    if plan.category_listing {
        return Ok(names);
    }
    let full = COVERED * (1u32 << NAME_BIT) as f32;
    let mut held: Vec<Box<dyn Query>> = Vec::new();
    for name in &plan.names {
        let term = Term::from_field_text(fields.names, name);
        if stats.doc_freq(&term).map_err(ToolError::internal_from)? > 0 {
            held.push(Box::new(TermQuery::new(
                term.clone(),
                IndexRecordOption::Basic,
            )));
            let query = TermQuery::new(term, IndexRecordOption::Basic);
            names.push(Box::new(ConstScoreQuery::new(
                Box::new(query),
                full + NAME_BONUS,
            )));
        }
    }
    if !held.is_empty() {
        built.name_holders = stats
            .count(&BooleanQuery::union(held))
            .map_err(ToolError::internal_from)?;
    }
    built.exact_name = !names.is_empty();
    // Names one or two edits away: only for a need with a word no record holds (a typo), or
    // one that looks like an identifier. Well-spelled words skip the dictionary walk.
    let typo = !built.fuzzy.is_empty() || !built.unknown.is_empty() || plan.identifier;
    if names.is_empty()
        && typo
        && let Some(name) = &plan.fuzzy_name
    {
        // One edit away outranks two edits away.
        for (distance, bonus) in [(1, NAME_NEAR_BONUS), (2, NAME_FAR_BONUS)] {
            if distance > fuzzy_distance(name.chars().count()) {
                break;
            }
            let term = Term::from_field_text(fields.names, name);
            let fuzzy = FuzzyTermQuery::new(term, distance, true);
            built.name_holders = built
                .name_holders
                .max(stats.count(&fuzzy).map_err(ToolError::internal_from)?);
            names.push(Box::new(ConstScoreQuery::new(
                Box::new(fuzzy),
                full + bonus,
            )));
        }
        built.fuzzy_name = true;
    }
    Ok(names)
}
