//! Dependencies point one way (issue 10; docs/architecture.md "Layers"):
//! protocol ← core ← kernel ← areas ← server ← cli. The crates' manifests say which crate may
//! depend on which, and inside kd-karmadue the areas never name the server's modules or HTTP.

use std::path::Path;

/// Each workspace crate and the workspace crates it may depend on.
const ALLOWED_EDGES: &[(&str, &[&str])] = &[
    ("crates/protocol", &[]),
    ("crates/core", &["kd-protocol"]),
    ("crates/kernel", &["kd-protocol", "kd-core"]),
    ("crates/ronin", &["kd-protocol", "kd-core"]),
    ("crates/linkdbots", &["kd-protocol", "kd-core", "kd-kernel"]),
    (
        "crates/karmadue",
        &[
            "kd-protocol",
            "kd-core",
            "kd-kernel",
            "kd-ronin",
            "kd-linkdbots",
        ],
    ),
    (
        "crates/cli",
        &[
            "kd-protocol",
            "kd-core",
            "kd-kernel",
            "kd-ronin",
            "kd-linkdbots",
            "kd-karmadue",
        ],
    ),
    (
        "bench",
        &[
            "kd-protocol",
            "kd-core",
            "kd-kernel",
            "kd-ronin",
            "kd-linkdbots",
            "kd-karmadue",
        ],
    ),
];

/// The workspace crates a manifest's `[dependencies]` (not dev or build) names.
fn workspace_dependencies(manifest: &str) -> Vec<String> {
    let mut in_dependencies = false;
    let mut found = Vec::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]";
            continue;
        }
        if in_dependencies && line.starts_with("kd-") {
            let name: String = line
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            found.push(name);
        }
    }
    found
}

#[test]
fn each_crate_depends_only_on_the_layers_below_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let workspace = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let mut offenders = Vec::new();
    for (dir, allowed) in ALLOWED_EDGES {
        assert!(
            workspace.contains(&format!("\"{dir}\"")),
            "{dir} is not a workspace member"
        );
        let manifest = std::fs::read_to_string(root.join(dir).join("Cargo.toml")).unwrap();
        for dependency in workspace_dependencies(&manifest) {
            if !allowed.contains(&dependency.as_str()) {
                offenders.push(format!("{dir} depends on {dependency}"));
            }
        }
    }
    // Every member is in the table, so a new crate states its layer.
    let members = workspace
        .lines()
        .find(|line| line.trim_start().starts_with("members"))
        .unwrap();
    for member in members.split('"').skip(1).step_by(2) {
        assert!(
            ALLOWED_EDGES.iter().any(|(dir, _)| dir == &member),
            "{member} has no row in ALLOWED_EDGES"
        );
    }
    assert!(
        offenders.is_empty(),
        "dependencies against the layers: {offenders:?}"
    );
}

#[test]
fn the_manifest_reader_sees_dependencies_and_skips_dev_dependencies() {
    let manifest = "[dependencies]\nkd-core.workspace = true\nserde = \"1\"\n\n[dev-dependencies]\nkd-karmadue = { path = \"x\" }\n";
    assert_eq!(workspace_dependencies(manifest), vec!["kd-core"]);
}

/// The server's modules inside kd-karmadue: the composition root and the adapters.
const SERVER_FILES: &[&str] = &[
    "crates/karmadue/src/http/",
    "crates/karmadue/src/lib.rs",
    "crates/karmadue/src/hub.rs",
    "crates/karmadue/src/directory.rs",
    "crates/karmadue/src/tools.rs",
    "crates/karmadue/src/docs.rs",
    "crates/karmadue/src/fixtures.rs",
];

#[test]
fn areas_never_name_the_server_or_http() {
    let files = crate::sql::workspace_files(|path| path.extension().is_some_and(|ext| ext == "rs"));
    let mut offenders = Vec::new();
    let mut checked = 0;
    for (relative, path) in &files {
        if !relative.starts_with("crates/karmadue/src/")
            || SERVER_FILES
                .iter()
                .any(|server| relative.starts_with(server))
        {
            continue;
        }
        checked += 1;
        let text = std::fs::read_to_string(path).unwrap();
        for needle in [
            "crate::http",
            "crate::hub",
            "crate::tools",
            "axum::",
            "hyper::",
        ] {
            if text.contains(needle) {
                offenders.push(format!("{relative}: {needle}"));
            }
        }
    }
    assert!(checked > 30, "the lint read only {checked} area files");
    assert!(
        offenders.is_empty(),
        "areas naming the server or HTTP: {offenders:?}"
    );
}
