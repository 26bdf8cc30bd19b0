//! Ranking: the collector that scores every match of the query (`query`) with the ranking
//! formula (see the parent module), and the final order with "at most 2 per owner first".
//!
//! Every match is scored (no early termination), and the order is total: tier, then score,
//! then resource id. So pages never overlap or skip, and two indexes with the same records
//! give the same order.

use std::cmp::Ordering;
use std::sync::Arc;

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::{ColumnValues, StrColumn};
use tantivy::{DocId, Score, SegmentOrdinal, SegmentReader};

use super::index::Signals;

/// The unit of the coverage bits: concept `i` adds `COVERED × 2^i` to the raw score on top of
/// its text score, and an exact or near name adds `COVERED × 2^NAME_BIT`; text scores stay far
/// below `COVERED`, so which concepts a record matched is read back exactly from its score.
pub const COVERED: f32 = 1024.0;
/// The coverage bit of a name match (above the concept bits).
pub const NAME_BIT: usize = super::plan::MAX_CONCEPTS;

/// Relevance multiplier = FLOOR + (1 − FLOOR) × coverage² (coverage: share of concepts matched).
pub const COVERAGE_FLOOR: f32 = 0.35;
/// Prior = 1 + POPULARITY × popularity + CURATED × curated + VERIFIED × verified.
pub const POPULARITY_WEIGHT: f32 = 0.8;
/// See [`POPULARITY_WEIGHT`].
pub const CURATED_WEIGHT: f32 = 0.6;
/// See [`POPULARITY_WEIGHT`].
pub const VERIFIED_WEIGHT: f32 = 0.6;
/// Multiplier for a record of the category the need's generic words name ("connector").
pub const CATEGORY_LIFT: f32 = 1.6;
/// Multiplier for an agent-ready record (MCP server, skill, listed repository) when the need
/// names no category.
pub const DEFAULT_CATEGORY_LIFT: f32 = 1.2;
/// Multiplier for a risky record when the need does not ask for one.
pub const RISK_FACTOR: f32 = 0.4;
/// At most this many records may hold the need as their name for them to come first.
pub const NAME_TIER_HOLDERS: u64 = 3;
/// Records of one owner that may come before every other owner's.
pub const PER_OWNER: usize = 2;

/// The non-text part of the ranking, fixed per search.
#[derive(Debug, Clone, Copy)]
pub struct Ranking {
    /// Category bits that get a lift (0: none).
    pub hints: u64,
    /// The lift for those categories ([`CATEGORY_LIFT`] or [`DEFAULT_CATEGORY_LIFT`]).
    pub lift: f32,
    /// The need asks for risky capabilities.
    pub asks_risky: bool,
    /// Demo records are counted and shown.
    pub include_demo: bool,
    /// Per coverage bit, the concept's weight (see [`super::query::Built::weights`]).
    pub weights: [f32; NAME_BIT],
    /// No need: every record scores 1 before the prior.
    pub listing: bool,
    /// A record named as the need comes first (tier 0): the need is an identifier, or at most
    /// [`NAME_TIER_HOLDERS`] records hold that name (a name many records share is a word).
    pub name_tier: bool,
}

/// `score = ln(1 + fitted) × multiplier`, before the logarithm.
#[derive(Debug, Clone, Copy)]
struct Parts {
    fitted: f32,
    multiplier: f32,
    text: f32,
    coverage: f32,
}

/// An upper bound of `ln(1 + x)` for `x ≥ 0`, from the bits of `1 + x`: log2 of a float is its
/// exponent plus log2 of its mantissa m ∈ [1, 2), and log2(m) ≤ (m − 1) + 0.0861. Cheap, and
/// never below the true value, so rejecting on it is exact.
fn ln_1p_upper(x: f32) -> f32 {
    let bits = (1.0 + x).to_bits();
    let exponent = ((bits >> 23) & 0xFF) as f32 - 127.0;
    let mantissa = f32::from_bits((bits & 0x007F_FFFF) | 0x3F80_0000);
    (exponent + (mantissa - 1.0) + 0.0870) * std::f32::consts::LN_2
}

/// One record's score, decomposed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scored {
    /// The final score.
    pub score: f32,
    /// The text score (BM25 and name bonuses).
    pub text: f32,
    /// Share of concepts matched, 0..1.
    pub coverage: f32,
}

impl Ranking {
    /// The ranking formula (module doc of `catalog::search`).
    pub fn score(&self, raw: Score, signals: Signals) -> Scored {
        let parts = self.parts(raw, signals);
        Scored {
            score: parts.fitted.ln_1p() * parts.multiplier,
            text: parts.text,
            coverage: parts.coverage,
        }
    }

    /// The record's tier (see [`Hit::tier`]): a name match is read from the name bit of `raw`.
    pub fn tier(&self, raw: Score, signals: Signals) -> u8 {
        if signals.archived() || signals.demo() {
            return 2;
        }
        // At most 2^(NAME_BIT + 1) − 1 units, so the conversion is exact.
        let units = (raw / COVERED).floor() as u32;
        if self.name_tier && !self.listing && units & (1 << NAME_BIT) != 0 {
            0
        } else {
            1
        }
    }

    /// The pieces of [`Ranking::score`]: `score = ln(1 + fitted) × multiplier`.
    fn parts(&self, raw: Score, signals: Signals) -> Parts {
        let (text, coverage) = if self.listing {
            (1.0, 1.0)
        } else {
            self.decode(raw)
        };
        let fit = COVERAGE_FLOOR + (1.0 - COVERAGE_FLOOR) * coverage * coverage;
        // The lift counts in proportion to the fit: popularity never carries a half match.
        let lift = POPULARITY_WEIGHT * signals.popularity()
            + if signals.curated() {
                CURATED_WEIGHT
            } else {
                0.0
            }
            + if signals.verified() {
                VERIFIED_WEIGHT
            } else {
                0.0
            };
        let prior = 1.0 + lift * coverage * coverage;
        let category = if signals.category() & self.hints != 0 {
            self.lift
        } else {
            1.0
        };
        let risk = if signals.risky() && !self.asks_risky {
            RISK_FACTOR
        } else {
            1.0
        };
        // ln (in `score`): a strong title match beats a passing mention, but not by so much
        // that popularity, curation and evidence stop mattering.
        Parts {
            fitted: text * fit,
            multiplier: prior * category * risk,
            text,
            coverage,
        }
    }

    /// (text score, weighted share of concepts matched) from a raw score.
    fn decode(&self, raw: Score) -> (f32, f32) {
        let units = (raw / COVERED).floor();
        let text = raw - units * COVERED;
        // At most 2^(NAME_BIT + 1) − 1 units, so the conversion is exact.
        let mask = units as u32;
        if mask & (1 << NAME_BIT) != 0 {
            return (text, 1.0);
        }
        let total: f32 = self.weights.iter().sum();
        let covered: f32 = (0..NAME_BIT)
            .filter(|bit| mask & (1 << bit) != 0)
            .map(|bit| self.weights[bit])
            .sum();
        (
            text,
            if total > 0.0 {
                (covered / total).min(1.0)
            } else {
                0.0
            },
        )
    }
}

/// A ranked record.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The resource.
    pub resource_id: String,
    /// Its score.
    pub score: Scored,
    /// 0: a current record whose name is the need (or, for a need with a typo, one or two
    /// edits away); 1: other current records; 2: archived upstream or demo (sorted after every
    /// current record).
    pub tier: u8,
    /// Owner hash.
    pub owner: u64,
    /// Its signals.
    pub signals: Signals,
}

/// Matches counted, and the best `depth` in (tier, score, resource id) order.
#[derive(Debug, Clone, Default)]
pub struct Ranked {
    /// Every match (demo records only when included).
    pub total: u64,
    /// The best, in order.
    pub hits: Vec<Hit>,
}

/// Collects the best `depth` records under [`Ranking`].
pub struct TopRanked {
    /// The ranking.
    pub ranking: Ranking,
    /// How many to keep.
    pub depth: usize,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    tier: u8,
    score: Scored,
    id_ord: u64,
    doc: DocId,
    signals: Signals,
}

fn entry_order(left: &Entry, right: &Entry) -> Ordering {
    left.tier
        .cmp(&right.tier)
        .then_with(|| right.score.score.total_cmp(&left.score.score))
        .then_with(|| left.id_ord.cmp(&right.id_ord))
}

fn hit_order(left: &Hit, right: &Hit) -> Ordering {
    left.tier
        .cmp(&right.tier)
        .then_with(|| right.score.score.total_cmp(&left.score.score))
        .then_with(|| left.resource_id.cmp(&right.resource_id))
}

/// The per-segment side of [`TopRanked`].
pub struct SegmentTop {
    ranking: Ranking,
    depth: usize,
    signals: Arc<dyn ColumnValues<u64>>,
    owners: Arc<dyn ColumnValues<u64>>,
    ids: Option<StrColumn>,
    buffer: Vec<Entry>,
    threshold: Option<Entry>,
    total: u64,
}

impl SegmentTop {
    fn shrink(&mut self) {
        if self.buffer.len() > self.depth {
            let depth = self.depth;
            self.buffer.select_nth_unstable_by(depth - 1, entry_order);
            self.buffer.truncate(depth);
            self.threshold = self.buffer.iter().copied().max_by(entry_order);
        }
    }
}

impl SegmentCollector for SegmentTop {
    type Fruit = tantivy::Result<Ranked>;

    fn collect(&mut self, doc: DocId, raw: Score) {
        let signals = Signals(self.signals.get_val(doc));
        if signals.demo() && !self.ranking.include_demo {
            return;
        }
        self.total += 1;
        let tier = self.ranking.tier(raw, signals);
        let parts = self.ranking.parts(raw, signals);
        // Most matches lose to the threshold on tier, or on an upper bound of their score:
        // the logarithm and the id column are only computed for candidates.
        if let Some(threshold) = &self.threshold
            && (tier > threshold.tier
                || (tier == threshold.tier
                    && ln_1p_upper(parts.fitted) * parts.multiplier < threshold.score.score))
        {
            return;
        }
        let score = Scored {
            score: parts.fitted.ln_1p() * parts.multiplier,
            text: parts.text,
            coverage: parts.coverage,
        };
        let id_ord = self
            .ids
            .as_ref()
            .and_then(|ids| ids.ords().first(doc))
            .unwrap_or(u64::MAX);
        let entry = Entry {
            tier,
            score,
            id_ord,
            doc,
            signals,
        };
        if let Some(threshold) = &self.threshold
            && entry_order(&entry, threshold) != Ordering::Less
        {
            return;
        }
        self.buffer.push(entry);
        if self.buffer.len() >= self.depth.saturating_mul(2).max(16) {
            self.shrink();
        }
    }

    fn harvest(mut self) -> Self::Fruit {
        self.shrink();
        self.buffer.sort_by(entry_order);
        let mut hits = Vec::with_capacity(self.buffer.len());
        let mut text = String::new();
        for entry in &self.buffer {
            text.clear();
            if let Some(ids) = &self.ids {
                ids.ord_to_str(entry.id_ord, &mut text)?;
            }
            hits.push(Hit {
                resource_id: text.clone(),
                score: entry.score,
                tier: entry.tier,
                owner: self.owners.get_val(entry.doc),
                signals: entry.signals,
            });
        }
        Ok(Ranked {
            total: self.total,
            hits,
        })
    }
}

impl Collector for TopRanked {
    type Fruit = Ranked;
    type Child = SegmentTop;

    fn for_segment(
        &self,
        _segment: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<SegmentTop> {
        let fast = reader.fast_fields();
        Ok(SegmentTop {
            ranking: self.ranking,
            depth: self.depth.max(1),
            signals: fast.column_first_or_default::<u64>("signals")?,
            owners: fast.column_first_or_default::<u64>("owner")?,
            ids: fast.str("id")?,
            buffer: Vec::new(),
            threshold: None,
            total: 0,
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, fruits: Vec<tantivy::Result<Ranked>>) -> tantivy::Result<Ranked> {
        let mut merged = Ranked::default();
        for fruit in fruits {
            let fruit = fruit?;
            merged.total += fruit.total;
            merged.hits.extend(fruit.hits);
        }
        merged.hits.sort_by(hit_order);
        merged.hits.truncate(self.depth.max(1));
        Ok(merged)
    }
}

/// Where a hit ended up in the final order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// In score order.
    Ranked,
    /// A third (or later) record of the same owner: moved after the other owners' records.
    OwnerOverflow,
}

/// The final order of `hits` (already in (tier, score, id) order): within each tier, the
/// records of owners with fewer than [`PER_OWNER`] places so far (counted across tiers), then
/// the rest. Returns the order as indexes into `hits`
/// with placements, and how long a prefix of it is certain when `hits` is only the best part of
/// all matches (`complete` false).
pub fn final_order(hits: &[Hit], complete: bool) -> (Vec<(usize, Placement)>, usize) {
    let mut order = Vec::with_capacity(hits.len());
    let mut certain = 0;
    let last_tier = hits.last().map_or(0, |hit| hit.tier);
    // An owner's places count across tiers: a record named as the need uses one of them.
    let mut seen: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    for tier in 0..=2u8 {
        let mut overflow = Vec::new();
        let mut first = 0;
        for (index, hit) in hits.iter().enumerate().filter(|(_, hit)| hit.tier == tier) {
            let count = seen.entry(hit.owner).or_insert(0);
            *count += 1;
            if *count <= PER_OWNER {
                order.push((index, Placement::Ranked));
                first += 1;
            } else {
                overflow.push((index, Placement::OwnerOverflow));
            }
        }
        let overflow_count = overflow.len();
        order.extend(overflow);
        if !complete {
            if tier < last_tier {
                certain += first + overflow_count;
            } else if tier == last_tier {
                certain += first;
            }
        }
    }
    if complete {
        certain = order.len();
    }
    (order, certain)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(id: &str, owner: u64, score: f32, tier: u8) -> Hit {
        Hit {
            resource_id: id.into(),
            score: Scored {
                score,
                text: score,
                coverage: 1.0,
            },
            tier,
            owner,
            signals: Signals(0),
        }
    }

    #[test]
    fn a_third_record_of_one_owner_moves_after_the_others_and_archived_stay_last() {
        let hits = vec![
            hit("a1", 1, 9.0, 1),
            hit("a2", 1, 8.0, 1),
            hit("a3", 1, 7.0, 1),
            hit("b1", 2, 6.0, 1),
            hit("c1", 3, 5.0, 2),
        ];
        let (order, certain) = final_order(&hits, true);
        let ids: Vec<&str> = order
            .iter()
            .map(|(index, _)| hits[*index].resource_id.as_str())
            .collect();
        assert_eq!(ids, vec!["a1", "a2", "b1", "a3", "c1"]);
        assert_eq!(order[3].1, Placement::OwnerOverflow);
        assert_eq!(certain, 5);
        let (_, partial) = final_order(&hits[..4], false);
        assert_eq!(
            partial, 3,
            "a later owner-3 record could still come before a3"
        );
    }

    #[test]
    fn the_cheap_logarithm_bound_is_never_below_the_logarithm() {
        let mut x = 0.0f32;
        while x < 2.0e5 {
            assert!(ln_1p_upper(x) >= x.ln_1p(), "{x}");
            assert!(
                ln_1p_upper(x) <= x.ln_1p() + 0.07,
                "{x}: tight enough to reject most matches"
            );
            x = x * 1.01 + 0.001;
        }
    }

    #[test]
    fn the_formula_reads_coverage_back_from_the_score() {
        let mut weights = [0.0; NAME_BIT];
        weights[0] = 3.0;
        weights[1] = 1.0;
        let ranking = Ranking {
            hints: 0,
            lift: 1.0,
            asks_risky: false,
            include_demo: false,
            weights,
            listing: false,
            name_tier: false,
        };
        let rare_only = ranking.score(COVERED + 4.0, Signals(0));
        let common_only = ranking.score(2.0 * COVERED + 4.0, Signals(0));
        let both = ranking.score(3.0 * COVERED + 4.0, Signals(0));
        let by_name = ranking.score(COVERED * (1 << NAME_BIT) as f32 + 4.0, Signals(0));
        assert!(
            (rare_only.coverage - 0.75).abs() < 1e-6 && (common_only.coverage - 0.25).abs() < 1e-6
        );
        assert!((both.coverage - 1.0).abs() < 1e-6 && (by_name.coverage - 1.0).abs() < 1e-6);
        assert!((both.text - 4.0).abs() < 1e-3);
        assert!(both.score > rare_only.score && rare_only.score > common_only.score);
    }
}
