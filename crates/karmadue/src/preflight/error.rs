//! check_before_acting's refusals (issue 10, "one error enum per area"): each a variant with
//! its sentence, converted into the kernel's [`ToolError`] with the spec code and the field it
//! names (spec "check_before_acting", "check_before_acting targets", "Errors"). A store failure
//! is kept whole as the cause of `internal`; a refusal raised outside the area passes through.

use kd_core::db::DbError;
use kd_core::store::StoreError;
use kd_kernel::error::ToolError;

use super::MAX_TARGET_CHARS;

/// Why a check (or the parsing of a target elsewhere: register_resource's locator, the watch
/// list's tools) refused or failed. `field` is the argument named: `target`, `target.<key>`,
/// `locator`, `tools[<i>]`.
#[derive(Debug, thiserror::Error)]
pub enum PreflightError {
    /// No `target` (`target`; `validation`).
    #[error("target is required; there is no default resource")]
    TargetMissing,
    /// `intended_action` and `action` differ (`action`; `validation`).
    #[error(
        "intended_action and action are the same argument; give one, or the same value in both"
    )]
    ActionConflict,
    /// A target object with a key other than [`super::TARGET_KEYS`] (`target.<key>`;
    /// `validation`); `hint` points `resource_id` at `kd_resource_id`.
    #[error(
        "target objects take exactly one of kd_resource_id, url, github_repo; {key:?} is not accepted.{hint}"
    )]
    TargetKey {
        /// The key given.
        key: String,
        /// A sentence for `resource_id`, else empty.
        hint: &'static str,
    },
    /// A target object without exactly one non-null key (`target`; `validation`).
    #[error("A target object needs exactly one of kd_resource_id, url, github_repo.")]
    TargetKeyCount,
    /// A target object's value is not a string (`field`; `validation`).
    #[error("{field} must be a string")]
    NotAString {
        /// `target.<key>`.
        field: String,
    },
    /// `kd_resource_id` is not a `kd:res:` id (`field`; `validation`).
    #[error("kd_resource_id must be a KarmaDue id such as kd:res:github:owner/repo")]
    NotAResourceId {
        /// `target.kd_resource_id`.
        field: String,
    },
    /// `github_repo` is not owner/repo (`field`; `validation`).
    #[error("github_repo must be owner/repo (or a github.com URL)")]
    NotAGitHubRepo {
        /// `target.github_repo`.
        field: String,
    },
    /// `url` names no URL (`field`; `validation`).
    #[error("url must be an https URL")]
    NotAUrl {
        /// `target.url`.
        field: String,
    },
    /// `target` is neither a string nor an object (`target`; `validation`).
    #[error("target must be a string or an object")]
    TargetType,
    /// The text is empty (`field`; `validation`).
    #[error("{field} must not be empty")]
    Empty {
        /// The argument named.
        field: String,
    },
    /// The text is too long or has control characters (`field`; `validation`).
    #[error("{field} must be at most {MAX_TARGET_CHARS} characters without control characters")]
    TooLong {
        /// The argument named.
        field: String,
    },
    /// A github.com URL without owner and repository (`field`; `validation`).
    #[error("A GitHub target needs owner and repository: github.com/owner/repo")]
    GitHubPath {
        /// The argument named.
        field: String,
    },
    /// A hub.docker.com URL that names no image (`field`; `validation`).
    #[error("A Docker Hub target looks like hub.docker.com/r/<owner>/<image>")]
    DockerHubPath {
        /// The argument named.
        field: String,
    },
    /// An image registry URL that names no image (`field`; `validation`).
    #[error("{field} is not an image id such as {host}/owner/image")]
    RegistryImage {
        /// The argument named.
        field: String,
        /// docker.io, ghcr.io or quay.io.
        host: String,
    },
    /// `docker:` / `oci:` without an image id (`field`; `validation`).
    #[error("{field} is not an image id such as docker:owner/image")]
    PrefixedImage {
        /// The argument named.
        field: String,
    },
    /// `npm:` / `pypi:` with an empty or spaced name (`field`; `validation`).
    #[error("{field} names an empty or spaced package")]
    Package {
        /// The argument named.
        field: String,
    },
    /// A string of no recognised form (`field`; `validation`).
    #[error(
        "{field} must be a KarmaDue id (kd:res:...), an https URL, github.com/owner/repo, npm:<package>, a package-page URL, docker:<image>, or a hub.docker.com/r/, docker.io/, ghcr.io/ or quay.io/ image id"
    )]
    Unrecognised {
        /// The argument named.
        field: String,
    },
    /// Only a demo record matches and `include_demo` is off (`target`; `not_found` with
    /// `demo_available: true`).
    #[error(
        "Only a demo example matches this target. Pass include_demo true to inspect it; demo examples are never evidence."
    )]
    DemoOnly,
    /// No record matches (`target`; `not_found`).
    #[error(
        "No real record matches this target. Try discover_resources, or register it with register_resource."
    )]
    NoMatch,
    /// The catalog or receipt store failed (`internal`; the database error is the source).
    #[error("the pre-flight store failed")]
    Store(#[from] DbError),
    /// A receipt could not be written (`internal`; the store error is the source).
    #[error("the pre-flight receipt could not be written")]
    Write(#[from] StoreError),
    /// A refusal or failure raised outside the area (the kernel's checks, another area's
    /// read), passed through as it is.
    #[error(transparent)]
    Kernel(#[from] ToolError),
}

impl From<PreflightError> for ToolError {
    fn from(error: PreflightError) -> Self {
        use PreflightError as E;
        let message = error.to_string();
        match error {
            E::TargetMissing | E::TargetKeyCount | E::TargetType => {
                ToolError::validation("target", message)
            }
            E::ActionConflict => ToolError::validation("action", message),
            E::TargetKey { key, .. } => ToolError::validation(format!("target.{key}"), message),
            E::NotAString { field }
            | E::NotAResourceId { field }
            | E::NotAGitHubRepo { field }
            | E::NotAUrl { field }
            | E::Empty { field }
            | E::TooLong { field }
            | E::GitHubPath { field }
            | E::DockerHubPath { field }
            | E::RegistryImage { field, .. }
            | E::PrefixedImage { field }
            | E::Package { field }
            | E::Unrecognised { field } => ToolError::validation(field, message),
            E::DemoOnly => ToolError::not_found("target", message).with("demo_available", true),
            E::NoMatch => ToolError::not_found("target", message),
            E::Store(_) | E::Write(_) => ToolError::internal_from(error),
            E::Kernel(refusal) => refusal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_carries_its_spec_code_field_and_sentence() {
        let key = ToolError::from(PreflightError::TargetKey {
            key: "resource_id".into(),
            hint: "",
        });
        assert_eq!(key.field.as_deref(), Some("target.resource_id"));
        assert!(key.message.contains("\"resource_id\" is not accepted."));
        let long = ToolError::from(PreflightError::TooLong {
            field: "locator".into(),
        });
        assert_eq!(
            long.message,
            "locator must be at most 2048 characters without control characters"
        );
        let demo = ToolError::from(PreflightError::DemoOnly).to_json();
        assert_eq!(demo["code"], "not_found");
        assert_eq!(demo["field"], "target");
        assert_eq!(demo["demo_available"], true);
        let store = ToolError::from(PreflightError::Store(DbError::NoRows));
        assert_eq!(store.code.as_str(), "internal");
        assert!(store.cause_text().contains("the query returned no rows"));
    }
}
