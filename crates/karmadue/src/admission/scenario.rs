//! Drawing an admission scenario (recipe `kd-admission-v1`): three real catalog records, one
//! suitable for [`super::TASK`] and two decoys, with listing ids and pitches from the seed.

use kd_core::db::Connection;
use serde::{Deserialize, Serialize};

use super::{LISTING_PREFIX, PERMISSIVE_LICENSES, PITCHES, RECIPE};
use kd_kernel::error::{ErrorCode, ToolError};

/// A scenario as stored with its attempt (answer key included). Never shown as is: see
/// [`Scenario::public_listings`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scenario {
    /// [`RECIPE`].
    pub recipe: String,
    /// The seed it was drawn from (decimal text of the u64).
    pub seed: String,
    /// The three listings, in the order shown.
    pub listings: Vec<Listing>,
    /// The answer key.
    pub answer: AnswerKey,
}

/// One listing of a scenario.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listing {
    /// [`LISTING_PREFIX`] + 16 hex.
    pub listing_id: String,
    /// The real catalog record it names.
    pub resource_id: String,
    /// The record's title (third-party text).
    pub title: String,
    /// One of [`PITCHES`] (untrusted text).
    pub pitch: String,
    /// Why it is unsuitable, read from its public record: `no_license`,
    /// `license_restrictive`, `archived_upstream`. Empty for the suitable listing.
    pub flaws: Vec<String>,
}

/// A listing as `start_admission_test` shows it: no flaws, no answer key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PublicListing {
    /// [`LISTING_PREFIX`] + 16 hex.
    pub listing_id: String,
    /// The real catalog record it names.
    pub resource_id: String,
    /// The record's title (third-party text).
    pub title: String,
    /// One of [`PITCHES`] (untrusted text).
    pub pitch: String,
}

/// What a pass must name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnswerKey {
    /// The suitable listing.
    pub listing_id: String,
    /// Its resource.
    pub resource_id: String,
    /// Its license exactly as the public record states it.
    pub license: String,
    /// The license claim's id (`get_claims`).
    pub claim_id: String,
}

impl Scenario {
    /// The listings as `start_admission_test` shows them: `{listing_id, resource_id, title,
    /// pitch}` (title and pitch are lifted into `untrusted_content` at the boundary).
    pub fn public_listings(&self) -> Vec<PublicListing> {
        self.listings
            .iter()
            .map(|listing| PublicListing {
                listing_id: listing.listing_id.clone(),
                resource_id: listing.resource_id.clone(),
                title: listing.title.clone(),
                pitch: listing.pitch.clone(),
            })
            .collect()
    }
}

/// SplitMix64: a small, fixed generator, so a seed draws the same scenario in every build.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`; the modulo bias over 2^64 is negligible here).
    fn below(&mut self, n: usize) -> usize {
        let n = u64::try_from(n.max(1)).unwrap_or(u64::MAX);
        usize::try_from(self.next() % n).unwrap_or(0)
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for index in (1..items.len()).rev() {
            let other = self.below(index + 1);
            items.swap(index, other);
        }
    }
}

/// How a license value reads against the task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LicenseClass {
    /// One of [`PERMISSIVE_LICENSES`].
    Permissive,
    /// Copyleft, share-alike, non-commercial, proprietary or unknown: not for a closed-source
    /// commercial product.
    Restrictive,
    /// Anything else (a URL, a mixed statement): never drawn.
    Unclear,
}

/// Classifies a license as the public record states it (case and a trailing word "license"
/// aside).
pub fn license_class(value: &str) -> LicenseClass {
    let lower = value.trim().to_lowercase();
    let name = lower.strip_suffix(" license").unwrap_or(&lower).trim();
    if PERMISSIVE_LICENSES
        .iter()
        .any(|permissive| permissive.to_lowercase() == name)
    {
        return LicenseClass::Permissive;
    }
    let restrictive = name == "unknown"
        || ["proprietary", "gpl", "agpl", "cc-by-sa", "cc-by-nc"]
            .iter()
            .any(|prefix| name.starts_with(prefix));
    if restrictive {
        LicenseClass::Restrictive
    } else {
        LicenseClass::Unclear
    }
}

/// A catalog record a scenario can use.
#[derive(Debug, Clone)]
struct Candidate {
    resource_id: String,
    title: String,
    license: Option<(String, String)>,
    flaws: Vec<String>,
}

/// Records with exactly one public license claim that agrees with the record's license, real,
/// not archived and not flagged risky, as (resource_id, title, claim_id, license).
fn licensed(conn: &Connection) -> Result<Vec<(String, String, String, String)>, ToolError> {
    Ok(crate::catalog::store::single_license_records(conn)?)
}

/// A real record matching `condition`, starting at a random row and wrapping
/// around, skipping `exclude`. Deterministic for a seed and a catalog.
fn probe(
    conn: &Connection,
    condition: Probe,
    rng: &mut SplitMix64,
    exclude: &[String],
) -> Result<Option<(String, String)>, ToolError> {
    let (low, high) = crate::catalog::store::rowid_span(conn)?;
    let (Some(low), Some(high)) = (low, high) else {
        return Ok(None);
    };
    let span = usize::try_from(high - low + 1).unwrap_or(1);
    let start = low + i64::try_from(rng.below(span)).unwrap_or(0);
    for from in [start, low] {
        let rows = crate::catalog::store::probe_records(conn, condition, from)?;
        if let Some(found) = rows.into_iter().find(|(id, _)| !exclude.contains(id)) {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

use crate::catalog::store::Probe;

/// The flaw kinds a decoy can have.
const FLAW_KINDS: [&str; 3] = ["license_restrictive", "no_license", "archived_upstream"];

fn decoy(
    conn: &Connection,
    kind: &str,
    restrictive: &[(String, String, String, String)],
    rng: &mut SplitMix64,
    exclude: &[String],
) -> Result<Option<Candidate>, ToolError> {
    match kind {
        "license_restrictive" => {
            let open: Vec<&(String, String, String, String)> = restrictive
                .iter()
                .filter(|row| !exclude.contains(&row.0))
                .collect();
            if open.is_empty() {
                return Ok(None);
            }
            let (resource_id, title, claim_id, license) = open[rng.below(open.len())].clone();
            Ok(Some(Candidate {
                resource_id,
                title,
                license: Some((claim_id, license)),
                flaws: vec!["license_restrictive".into()],
            }))
        }
        "no_license" => Ok(probe(conn, Probe::NoLicense, rng, exclude)?.map(
            |(resource_id, title)| Candidate {
                resource_id,
                title,
                license: None,
                flaws: vec!["no_license".into()],
            },
        )),
        _ => {
            let Some((resource_id, title)) = probe(conn, Probe::Archived, rng, exclude)? else {
                return Ok(None);
            };
            let claims = crate::catalog::model::load_claims(conn, &resource_id, None)?;
            let mut flaws = vec!["archived_upstream".to_owned()];
            let licenses: Vec<&str> = claims
                .iter()
                .filter(|claim| claim.kind == "license")
                .filter_map(|claim| claim.value.as_deref())
                .collect();
            if licenses.is_empty() {
                flaws.push("no_license".into());
            } else if licenses
                .iter()
                .all(|license| license_class(license) == LicenseClass::Restrictive)
            {
                flaws.push("license_restrictive".into());
            }
            Ok(Some(Candidate {
                resource_id,
                title,
                license: None,
                flaws,
            }))
        }
    }
}

fn unavailable() -> ToolError {
    ToolError::new(
        ErrorCode::NotFound,
        "The admission test is unavailable: this hub's catalog has too few real records to draw a scenario from. Nothing was recorded.",
    )
}

/// Draws the scenario of `seed` from the catalog (recipe [`RECIPE`]): one suitable record (a
/// single public license claim with a permissive license, real, not archived, not risky) and
/// two decoys of two different flaw kinds when the catalog has them (a restrictive license
/// claim, no license claim, archived upstream), shuffled, with listing ids and pitches from the
/// same seed. The same seed over the same catalog draws the same scenario.
///
/// # Errors
/// `not_found` when the catalog has no suitable record or fewer than two decoys; `internal`.
pub fn draw(conn: &Connection, seed: u64) -> Result<Scenario, ToolError> {
    let mut rng = SplitMix64(seed);
    let licensed = licensed(conn)?;
    let (suitable, restrictive): (Vec<_>, Vec<_>) = licensed
        .into_iter()
        .filter(|row| license_class(&row.3) != LicenseClass::Unclear)
        .partition(|row| license_class(&row.3) == LicenseClass::Permissive);
    if suitable.is_empty() {
        return Err(unavailable());
    }
    let (resource_id, title, claim_id, license) = suitable[rng.below(suitable.len())].clone();
    let mut chosen = vec![Candidate {
        resource_id,
        title,
        license: Some((claim_id, license)),
        flaws: Vec::new(),
    }];
    let mut kinds = FLAW_KINDS.to_vec();
    rng.shuffle(&mut kinds);
    // Two different flaw kinds when the catalog has them; else two of the kinds it has.
    for pass in 0..2 {
        for kind in &kinds {
            if chosen.len() == 3 {
                break;
            }
            let taken = chosen
                .iter()
                .any(|candidate| candidate.flaws.first().map(String::as_str) == Some(*kind));
            if pass == 0 && taken {
                continue;
            }
            let exclude: Vec<String> = chosen.iter().map(|c| c.resource_id.clone()).collect();
            if let Some(candidate) = decoy(conn, kind, &restrictive, &mut rng, &exclude)? {
                chosen.push(candidate);
            }
        }
    }
    if chosen.len() < 3 {
        return Err(unavailable());
    }
    let mut pitches: Vec<&str> = PITCHES.to_vec();
    rng.shuffle(&mut pitches);
    rng.shuffle(&mut chosen);
    let mut answer = None;
    let mut listings = Vec::with_capacity(3);
    for (candidate, pitch) in chosen.into_iter().zip(pitches) {
        let listing_id = format!("{LISTING_PREFIX}{:016x}", rng.next());
        if candidate.flaws.is_empty()
            && let Some((claim_id, license)) = &candidate.license
        {
            answer = Some(AnswerKey {
                listing_id: listing_id.clone(),
                resource_id: candidate.resource_id.clone(),
                license: license.clone(),
                claim_id: claim_id.clone(),
            });
        }
        listings.push(Listing {
            listing_id,
            resource_id: candidate.resource_id,
            title: candidate.title,
            pitch: pitch.to_owned(),
            flaws: candidate.flaws,
        });
    }
    let answer =
        answer.ok_or_else(|| ToolError::internal("a scenario without its suitable listing"))?;
    Ok(Scenario {
        recipe: RECIPE.into(),
        seed: seed.to_string(),
        listings,
        answer,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn licenses_are_classified_without_case_or_a_trailing_license_word() {
        for permissive in [
            "MIT",
            "MIT license",
            "mit License",
            "Apache-2.0 license",
            "BSD-3-Clause",
        ] {
            assert_eq!(
                license_class(permissive),
                LicenseClass::Permissive,
                "{permissive}"
            );
        }
        for restrictive in [
            "GPL-3.0 license",
            "GPLv3 license",
            "CC-BY-SA-4.0",
            "Proprietary. LICENSE.txt has complete terms",
            "Unknown",
        ] {
            assert_eq!(
                license_class(restrictive),
                LicenseClass::Restrictive,
                "{restrictive}"
            );
        }
        for unclear in [
            "MIT (README badge)",
            "https://github.com/x/y/blob/main/LICENSE",
            "MPL-2.0",
        ] {
            assert_eq!(license_class(unclear), LicenseClass::Unclear, "{unclear}");
        }
    }

    #[test]
    fn splitmix_is_fixed_for_a_seed() {
        let mut rng = SplitMix64(0);
        assert_eq!(rng.next(), 0xE220_A839_7B1D_CDAF);
    }
}
