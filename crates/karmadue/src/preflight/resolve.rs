//! Resolving a parsed target to one real catalog record ([`resolve`]).

use kd_core::db::Connection;

use super::error::PreflightError;
use super::target::{Target, normalise_image};
use crate::catalog::model::{self, Resource};

/// What a target resolved to.
#[derive(Debug, Clone)]
pub struct Resolution {
    /// The record chosen.
    pub resource: Resource,
    /// How it matched: resource_id, github_repo, github_folder, skill_folder, locator,
    /// npm_package, pypi_package, package_id.
    pub matched_by: &'static str,
    /// A plain note when the match is looser than asked (a repository for a folder).
    pub note: Option<&'static str>,
    /// Other real records the same target matched.
    pub also_matched: Vec<String>,
}

/// Resource ids whose lowercase form equals `id`'s, exact match first.
pub(crate) fn ids_ignoring_case(
    conn: &Connection,
    id: &str,
) -> Result<Vec<String>, PreflightError> {
    Ok(crate::catalog::store::ids_ignoring_case(conn, id)?)
}

/// Resource ids whose locator, lowercased, is `url` or `url/`.
pub(crate) fn ids_by_locator(conn: &Connection, url: &str) -> Result<Vec<String>, PreflightError> {
    Ok(crate::catalog::store::ids_by_locator(conn, url)?)
}

/// Resource ids whose package ids hold `image` (both sides normalised).
fn ids_by_image(conn: &Connection, image: &str) -> Result<Vec<String>, PreflightError> {
    let rows = crate::catalog::store::package_ids(conn)?;
    Ok(rows
        .into_iter()
        .filter(|(_, package_ids)| {
            serde_json::from_str::<Vec<String>>(package_ids)
                .unwrap_or_default()
                .iter()
                .filter_map(|package_id| {
                    normalise_image(package_id.strip_prefix("docker:").unwrap_or(package_id))
                })
                .any(|known| known == image)
        })
        .map(|(id, _)| id)
        .collect())
}

/// The record ids `target` may name, in order of preference, each with how it matched
/// (without repeats).
fn candidates(
    conn: &Connection,
    target: &Target,
) -> Result<Vec<(String, &'static str)>, PreflightError> {
    // Candidates in order of preference, each with how it matched.
    let mut candidates: Vec<(String, &'static str)> = Vec::new();
    let mut add = |ids: Vec<String>, how: &'static str| {
        for id in ids {
            if !candidates.iter().any(|(known, _)| *known == id) {
                candidates.push((id, how));
            }
        }
    };
    match target {
        Target::ResourceId(id) => add(ids_ignoring_case(conn, id)?, "resource_id"),
        Target::GitHub {
            owner,
            repo,
            path,
            url,
        } => {
            let repo_url = format!("https://github.com/{owner}/{repo}");
            if let Some(path) = path {
                add(
                    ids_ignoring_case(conn, &format!("kd:res:github:{owner}/{repo}/{path}"))?,
                    "github_folder",
                );
                add(
                    ids_ignoring_case(conn, &format!("kd:res:skill:{owner}/{repo}/{path}"))?,
                    "skill_folder",
                );
                if *url != repo_url {
                    add(ids_by_locator(conn, url)?, "locator");
                }
            }
            // The repository itself, by id or by locator (demo records have only a locator).
            add(
                ids_ignoring_case(conn, &format!("kd:res:github:{owner}/{repo}"))?,
                "github_repo",
            );
            add(ids_by_locator(conn, &repo_url)?, "github_repo");
        }
        Target::Npm(name) => add(
            ids_ignoring_case(conn, &format!("kd:res:npm:{name}"))?,
            "npm_package",
        ),
        Target::Pypi(name) => add(
            ids_ignoring_case(conn, &format!("kd:res:pypi:{name}"))?,
            "pypi_package",
        ),
        Target::Image(image) => add(ids_by_image(conn, image)?, "package_id"),
        Target::Url(url) => add(ids_by_locator(conn, url)?, "locator"),
    }
    Ok(candidates)
}

/// Resolves a target to one record. Real records win over demo records; a target that matches
/// only demo records resolves to one only with `include_demo`.
///
/// # Errors
/// `not_found` naming `target` (with `demo_available: true` when only a demo matched);
/// `internal`.
pub fn resolve(
    conn: &Connection,
    target: &Target,
    include_demo: bool,
) -> Result<Resolution, PreflightError> {
    let candidates = candidates(conn, target)?;
    let mut real: Vec<(Resource, &'static str)> = Vec::new();
    let mut demo: Vec<(Resource, &'static str)> = Vec::new();
    for (id, how) in candidates {
        if let Some(resource) = model::load_resource(conn, &id)? {
            if resource.demo {
                demo.push((resource, how))
            } else {
                real.push((resource, how))
            }
        }
    }
    let folder_asked = matches!(target, Target::GitHub { path: Some(_), .. });
    let pick = |mut found: Vec<(Resource, &'static str)>| {
        let (resource, matched_by) = found.remove(0);
        let note = (folder_asked && matched_by == "github_repo")
            .then_some("No record of this folder: this is the repository's record.");
        Resolution {
            resource,
            matched_by,
            note,
            also_matched: found
                .into_iter()
                .map(|(other, _)| other.resource_id)
                .collect(),
        }
    };
    if !real.is_empty() {
        return Ok(pick(real));
    }
    if !demo.is_empty() {
        if include_demo {
            return Ok(pick(demo));
        }
        return Err(PreflightError::DemoOnly);
    }
    Err(PreflightError::NoMatch)
}
