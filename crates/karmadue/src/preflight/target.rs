//! Parsing a check_before_acting target ([`parse_target`], [`parse_target_text`]): resource
//! ids, GitHub and package-page URLs, `npm:` / `pypi:` names, docker / OCI image ids.

use serde_json::Value;

use super::error::PreflightError;
use super::{MAX_TARGET_CHARS, TARGET_KEYS};

/// A target, parsed and normalised (case folded where the namespace ignores case).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A KarmaDue id, as given.
    ResourceId(String),
    /// A GitHub repository, optionally a folder in it (lowercase).
    GitHub {
        /// Repository owner.
        owner: String,
        /// Repository name, without `.git`.
        repo: String,
        /// A folder inside it (from `/tree/<branch>/<path>`), when named.
        path: Option<String>,
        /// The URL form, for a locator match (`https://github.com/...`, lowercase).
        url: String,
    },
    /// An npm package name.
    Npm(String),
    /// A PyPI package name.
    Pypi(String),
    /// A docker / OCI image id, normalised by [`normalise_image`].
    Image(String),
    /// Any other https URL: lowercase, no query, fragment or trailing slash.
    Url(String),
}

/// Parses `target` (a string or an object with exactly one of [`TARGET_KEYS`]).
///
/// # Errors
/// `validation` naming `target` (or `target.<key>`) when it is empty, over 2,048 characters,
/// an object with no, several or unknown keys, or a string of no recognised form.
pub fn parse_target(value: &Value) -> Result<Target, PreflightError> {
    match value {
        Value::String(text) => parse_target_text(text, "target"),
        Value::Object(map) => {
            if let Some(unknown) = map.keys().find(|key| !TARGET_KEYS.contains(&key.as_str())) {
                let hint = if unknown == "resource_id" {
                    " Use kd_resource_id inside a target object, or pass the id itself as target."
                } else {
                    ""
                };
                return Err(PreflightError::TargetKey {
                    key: unknown.clone(),
                    hint,
                });
            }
            let given: Vec<(&String, &Value)> =
                map.iter().filter(|(_, value)| !value.is_null()).collect();
            let [(key, inner)] = given.as_slice() else {
                return Err(PreflightError::TargetKeyCount);
            };
            let field = format!("target.{key}");
            let text = inner.as_str().ok_or_else(|| PreflightError::NotAString {
                field: field.clone(),
            })?;
            match key.as_str() {
                "kd_resource_id" => {
                    let text = check_text(text, &field)?;
                    if !text.starts_with("kd:res:") {
                        return Err(PreflightError::NotAResourceId { field });
                    }
                    Ok(Target::ResourceId(text.to_owned()))
                }
                "github_repo" => {
                    let text = check_text(text, &field)?;
                    let lower = text.to_ascii_lowercase();
                    let bare = ["https://", "http://"]
                        .iter()
                        .find_map(|scheme| lower.strip_prefix(scheme))
                        .unwrap_or(&lower);
                    let path = bare
                        .strip_prefix("www.github.com/")
                        .or_else(|| bare.strip_prefix("github.com/"))
                        .map_or_else(|| bare.to_owned(), str::to_owned);
                    github_target(&path, true).ok_or(PreflightError::NotAGitHubRepo { field })
                }
                _ => {
                    let parsed = parse_target_text(text, &field)?;
                    if matches!(
                        parsed,
                        Target::ResourceId(_) | Target::Npm(_) | Target::Pypi(_)
                    ) {
                        return Err(PreflightError::NotAUrl { field });
                    }
                    Ok(parsed)
                }
            }
        }
        _ => Err(PreflightError::TargetType),
    }
}

fn check_text<'a>(text: &'a str, field: &str) -> Result<&'a str, PreflightError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(PreflightError::Empty {
            field: field.to_owned(),
        });
    }
    if text.chars().count() > MAX_TARGET_CHARS || text.chars().any(char::is_control) {
        return Err(PreflightError::TooLong {
            field: field.to_owned(),
        });
    }
    Ok(text)
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// The target a URL on a host with its own shape names (GitHub, Docker Hub, an image
/// registry), or its refusal; `None` for any other host. `host` is lowercase; `path` starts
/// at the first `/` of `without_query` (host and path, no query or fragment).
fn known_host(
    host: &str,
    path: &str,
    without_query: &str,
    field: &str,
) -> Option<Result<Target, PreflightError>> {
    let field = field.to_owned();
    Some(match host {
        "github.com" | "www.github.com" => github_target(&path.to_ascii_lowercase(), false)
            .ok_or(PreflightError::GitHubPath { field }),
        "hub.docker.com" => {
            let image = path.strip_prefix("/r/").map(str::to_owned).or_else(|| {
                path.strip_prefix("/_/")
                    .map(|name| format!("library/{name}"))
            });
            image
                .and_then(|image| normalise_image(&format!("docker.io/{image}")))
                .map(Target::Image)
                .ok_or(PreflightError::DockerHubPath { field })
        }
        "docker.io" | "ghcr.io" | "quay.io" => normalise_image(without_query)
            .map(Target::Image)
            .ok_or_else(|| PreflightError::RegistryImage {
                field,
                host: host.to_owned(),
            }),
        _ => return None,
    })
}

/// Parses a target string; `field` names it in refusals.
///
/// # Errors
/// `validation` naming `field` when the text has no recognised form.
pub fn parse_target_text(raw: &str, field: &str) -> Result<Target, PreflightError> {
    let text = check_text(raw, field)?;
    if text.starts_with("kd:res:") {
        return Ok(Target::ResourceId(text.to_owned()));
    }
    let package = |name: &str| -> Result<String, PreflightError> {
        let name = name.trim();
        if name.is_empty() || name.chars().any(char::is_whitespace) {
            return Err(PreflightError::Package {
                field: field.to_owned(),
            });
        }
        Ok(name.to_owned())
    };
    if let Some(name) = strip_prefix_ignore_case(text, "npm:") {
        return Ok(Target::Npm(package(name)?));
    }
    if let Some(name) = strip_prefix_ignore_case(text, "pypi:") {
        return Ok(Target::Pypi(package(name)?.to_ascii_lowercase()));
    }
    for prefix in ["docker:", "oci:"] {
        if let Some(image) = strip_prefix_ignore_case(text, prefix) {
            return normalise_image(image).map(Target::Image).ok_or_else(|| {
                PreflightError::PrefixedImage {
                    field: field.to_owned(),
                }
            });
        }
    }
    let (has_scheme, rest) = match strip_prefix_ignore_case(text, "https://")
        .or_else(|| strip_prefix_ignore_case(text, "http://"))
    {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    // Host, then the path without query or fragment.
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    let without_query = &rest[..end];
    let (host, path) = match without_query.find('/') {
        Some(slash) => (&without_query[..slash], &without_query[slash..]),
        None => (without_query, ""),
    };
    let host = host.to_ascii_lowercase();
    if let Some(target) = known_host(&host, path, without_query, field) {
        return target;
    }
    if !has_scheme || host.is_empty() {
        return Err(PreflightError::Unrecognised {
            field: field.to_owned(),
        });
    }
    // DECISIONS 12: a package page is recognised by its shape, whatever the host.
    if let Some(name) = package_page_name(path) {
        return Ok(Target::Npm(name));
    }
    let trimmed = path.trim_end_matches('/');
    Ok(Target::Url(format!(
        "https://{host}{}",
        trimmed.to_ascii_lowercase()
    )))
}

/// `/package/<name>` or `/package/@scope/<name>` (anything after is ignored) → the name.
fn package_page_name(path: &str) -> Option<String> {
    let rest = path.strip_prefix("/package/")?;
    let decoded = rest
        .replace("%40", "@")
        .replace("%2F", "/")
        .replace("%2f", "/");
    let mut segments = decoded.split('/').filter(|segment| !segment.is_empty());
    let first = segments.next()?;
    if first.starts_with('@') {
        let name = segments.next()?;
        (first.len() > 1).then(|| format!("{first}/{name}"))
    } else {
        Some(first.to_owned())
    }
}

/// A GitHub target from a lowercase path `/owner/repo[/tree/<branch>/<path>]`. With
/// `bare_path`, anything after `owner/repo` that is not `tree/<branch>/` is a folder path too
/// (`github_repo: "owner/repo/src/x"`).
fn github_target(path: &str, bare_path: bool) -> Option<Target> {
    let segments: Vec<&str> = path
        .split('/')
        .filter(|segment| !segment.is_empty())
        .collect();
    let [owner, repo, rest @ ..] = segments.as_slice() else {
        return None;
    };
    let repo = repo.strip_suffix(".git").unwrap_or(repo);
    if owner.is_empty() || repo.is_empty() {
        return None;
    }
    let repo_url = format!("https://github.com/{owner}/{repo}");
    let (folder, url) = match rest {
        [kind, branch, folder @ ..]
            if (*kind == "tree" || *kind == "blob") && !folder.is_empty() =>
        {
            let folder = folder.join("/");
            let url = format!("{repo_url}/{kind}/{branch}/{folder}");
            (Some(folder), url)
        }
        [kind, ..] if *kind == "tree" || *kind == "blob" => (None, repo_url),
        [] => (None, repo_url),
        folder if bare_path => (Some(folder.join("/")), repo_url),
        // Other pages of a repository (issues, releases, ...) are about the repository.
        _ => (None, repo_url),
    };
    Some(Target::GitHub {
        owner: (*owner).to_owned(),
        repo: repo.to_owned(),
        path: folder,
        url,
    })
}

/// Normalises a docker / OCI image id to `registry/path` in lowercase, without tag or digest:
/// `mcp/fetch`, `docker:mcp/fetch:1.0`, `docker.io/mcp/fetch` → `docker.io/mcp/fetch`;
/// `redis` → `docker.io/library/redis`; `ghcr.io/Owner/Img@sha256:…` → `ghcr.io/owner/img`.
/// Returns None for text that is not an image id.
pub fn normalise_image(text: &str) -> Option<String> {
    let text = text.trim();
    let text = ["https://", "http://"]
        .iter()
        .find_map(|scheme| strip_prefix_ignore_case(text, scheme))
        .unwrap_or(text);
    let text = text
        .split('@')
        .next()?
        .trim_end_matches('/')
        .to_ascii_lowercase();
    let mut segments: Vec<String> = text.split('/').map(str::to_owned).collect();
    if segments.iter().any(|segment| {
        segment.is_empty() || segment.chars().any(|c| c.is_whitespace() || c.is_control())
    }) {
        return None;
    }
    // The tag is on the last segment only (a registry host may carry a port).
    if let Some(last) = segments.last_mut() {
        if let Some(colon) = last.find(':') {
            last.truncate(colon);
        }
        if last.is_empty() {
            return None;
        }
    }
    let first = segments.first()?.clone();
    let has_registry =
        segments.len() > 1 && (first.contains('.') || first.contains(':') || first == "localhost");
    if !has_registry {
        segments.insert(0, "docker.io".into());
    }
    if segments[0] == "docker.io" && segments.len() == 2 {
        segments.insert(1, "library".into());
    }
    if segments.len() < 2 {
        return None;
    }
    Some(segments.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn github(owner: &str, repo: &str, path: Option<&str>) -> Target {
        let url = match path {
            Some(path) => format!("https://github.com/{owner}/{repo}/tree/main/{path}"),
            None => format!("https://github.com/{owner}/{repo}"),
        };
        Target::GitHub {
            owner: owner.into(),
            repo: repo.into(),
            path: path.map(str::to_owned),
            url,
        }
    }

    #[test]
    fn github_targets_fold_case_slashes_git_and_tree_paths() {
        for text in [
            "https://github.com/ModelContextProtocol/Servers",
            "https://github.com/modelcontextprotocol/servers/",
            "https://github.com/modelcontextprotocol/servers.git",
            "github.com/modelcontextprotocol/servers",
            "http://www.github.com/modelcontextprotocol/servers?tab=readme#top",
        ] {
            assert_eq!(
                parse_target_text(text, "target").unwrap(),
                github("modelcontextprotocol", "servers", None),
                "{text}"
            );
        }
        assert_eq!(
            parse_target_text(
                "https://github.com/modelcontextprotocol/servers/tree/main/src/Filesystem/",
                "target"
            )
            .unwrap(),
            github("modelcontextprotocol", "servers", Some("src/filesystem"))
        );
        assert!(parse_target_text("https://github.com/onlyowner", "target").is_err());
    }

    #[test]
    fn package_pages_on_any_host_are_npm_targets() {
        assert_eq!(
            parse_target_text("https://registry.example/package/left-pad", "target").unwrap(),
            Target::Npm("left-pad".into())
        );
        assert_eq!(
            parse_target_text(
                "https://pkgs.example.org/package/@scope/name/v/1.0.0",
                "target"
            )
            .unwrap(),
            Target::Npm("@scope/name".into())
        );
        assert_eq!(
            parse_target_text("https://x.example/package/%40scope%2Fname", "target").unwrap(),
            Target::Npm("@scope/name".into())
        );
        assert_eq!(
            parse_target_text("npm:@scope/name", "target").unwrap(),
            Target::Npm("@scope/name".into())
        );
        assert_eq!(
            parse_target_text("https://example.com/Docs/", "target").unwrap(),
            Target::Url("https://example.com/docs".into())
        );
    }

    #[test]
    fn image_ids_normalise_to_registry_and_path() {
        for (text, want) in [
            ("mcp/fetch", "docker.io/mcp/fetch"),
            ("mcp/fetch:1.2", "docker.io/mcp/fetch"),
            ("docker.io/mcp/fetch@sha256:abc", "docker.io/mcp/fetch"),
            ("redis", "docker.io/library/redis"),
            ("ghcr.io/Owner/Image:latest", "ghcr.io/owner/image"),
            ("localhost:5000/x/y:2", "localhost:5000/x/y"),
        ] {
            assert_eq!(normalise_image(text).as_deref(), Some(want), "{text}");
        }
        assert_eq!(normalise_image("a//b"), None);
        for text in [
            "docker:mcp/fetch",
            "hub.docker.com/r/mcp/fetch",
            "https://hub.docker.com/r/mcp/fetch/",
            "docker.io/mcp/fetch:3",
        ] {
            assert_eq!(
                parse_target_text(text, "target").unwrap(),
                Target::Image("docker.io/mcp/fetch".into()),
                "{text}"
            );
        }
        assert_eq!(
            parse_target_text("quay.io/org/img", "target").unwrap(),
            Target::Image("quay.io/org/img".into())
        );
    }

    #[test]
    fn unrecognised_targets_and_bad_objects_are_refused_naming_the_field() {
        let refusal = |error: PreflightError| kd_kernel::ToolError::from(error);
        assert_eq!(
            refusal(parse_target_text("just words", "target").unwrap_err())
                .field
                .as_deref(),
            Some("target")
        );
        let two = refusal(
            parse_target(&json!({ "url": "https://a.example", "github_repo": "a/b" })).unwrap_err(),
        );
        assert_eq!(two.field.as_deref(), Some("target"));
        let unknown = refusal(parse_target(&json!({ "resource_id": "kd:res:npm:x" })).unwrap_err());
        assert_eq!(unknown.field.as_deref(), Some("target.resource_id"));
        assert!(unknown.message.contains("kd_resource_id"));
        assert_eq!(
            parse_target(&json!({ "github_repo": "Owner/Repo/src/x" })).unwrap(),
            Target::GitHub {
                owner: "owner".into(),
                repo: "repo".into(),
                path: Some("src/x".into()),
                url: "https://github.com/owner/repo".into()
            }
        );
    }
}
