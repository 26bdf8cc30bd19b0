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

/// The tiers inside kd-karmadue, lowest first (docs/architecture.md "Layers"). A module may
/// name modules of its own tier and of the tiers below it, never one above: a call up a tier
/// is a defect.
const TIERS: &[&str] = &[
    "foundation",
    "principals",
    "evidence",
    "work",
    "views",
    "composition",
];

/// Every top-level module of kd-karmadue and its tier. A new area takes its place here first:
/// a module missing from the table fails [`every_area_calls_only_its_tier_and_those_below`].
const AREA_TIERS: &[(&str, &str)] = &[
    // What every area shares and that names no area: the log's vocabulary, the replay trait,
    // the pruning budget, the daily schedule, the ledger folder and log reads, bundled files.
    ("events", "foundation"),
    ("replay", "foundation"),
    ("prune", "foundation"),
    ("schedule", "foundation"),
    ("ledger", "foundation"),
    ("data_files", "foundation"),
    // Who acts: agents and their keys, people and owner links, tiers and stamps, connected apps.
    ("identity", "principals"),
    ("people", "principals"),
    ("standing", "principals"),
    ("connector", "principals"),
    // What is known: the catalog, the forum, outcomes, pre-flight receipts, findings.
    ("catalog", "evidence"),
    ("forum", "evidence"),
    ("outcomes", "evidence"),
    ("preflight", "evidence"),
    ("findings", "evidence"),
    // What agents do for each other: verification help, admission (and the coming
    // marketplace, jobs, Arena and crews).
    ("help", "work"),
    ("jobs", "work"),
    ("market", "work"),
    ("admission", "work"),
    ("signals", "work"),
    // Read models that join areas to answer one tool.
    ("views", "views"),
    ("stream", "views"),
    // The composition root and the server.
    ("kinds", "composition"),
    ("rebuild", "composition"),
    ("tools", "composition"),
    ("hub", "composition"),
    ("directory", "composition"),
    ("docs", "composition"),
    ("fixtures", "composition"),
    ("http", "composition"),
];

fn tier_of(module: &str) -> Option<usize> {
    let (_, tier) = AREA_TIERS.iter().find(|(name, _)| *name == module)?;
    TIERS.iter().position(|t| t == tier)
}

/// `text` without comments and test code: a `//` comment to its line's end, and an item under
/// `#[cfg(test)]` (a `mod x;` line, or a braced item up to its closing brace), are blanked,
/// lines kept so positions stay true.
fn without_test_code(text: &str) -> String {
    let code: String = text
        .lines()
        .map(|line| {
            // A `//` outside a string literal starts a comment.
            let cut = line
                .match_indices("//")
                .find(|(at, _)| line[..*at].matches('"').count() % 2 == 0)
                .map_or(line.len(), |(at, _)| at);
            format!("{}\n", &line[..cut])
        })
        .collect();
    let mut out = String::with_capacity(code.len());
    let mut rest = code.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        let end = match (item.find(';'), item.find('{')) {
            (Some(semi), Some(brace)) if semi < brace => semi + 1,
            (Some(semi), None) => semi + 1,
            (_, Some(brace)) => {
                let mut depth = 0usize;
                let mut end = item.len();
                for (i, c) in item[brace..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = brace + i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (None, None) => item.len(),
        };
        out.extend(
            item[..end]
                .chars()
                .map(|c| if c == '\n' { '\n' } else { ' ' }),
        );
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The top-level modules `text` names as `crate::<module>`, also inside a
/// `crate::{a, b::c}` group, each with its 1-based line.
fn crate_references(text: &str) -> Vec<(String, usize)> {
    let mut found = Vec::new();
    for (at, _) in text.match_indices("crate::") {
        if text[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue; // kd_karmadue::crate_x or some_crate::…
        }
        let line = text[..at].matches('\n').count() + 1;
        let after = &text[at + "crate::".len()..];
        let names: Vec<&str> = if let Some(group) = after.strip_prefix('{') {
            let mut depth = 1usize;
            let mut end = group.len();
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = i;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            top_level_items(&group[..end])
        } else {
            vec![after]
        };
        for name in names {
            let name: String = name
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.push((name, line));
            }
        }
    }
    found
}

/// The comma-separated items of a `use` group at depth 0.
fn top_level_items(group: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                items.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&group[start..]);
    items
}

/// The upward and unknown edges of one source file of kd-karmadue, `relative` to `src/`
/// (`identity/store/mod.rs`), as `file:line: reason`.
fn tier_offences(relative: &str, text: &str, modules: &[String]) -> Vec<String> {
    let top = relative.split('/').next().unwrap_or(relative);
    let top = top.strip_suffix(".rs").unwrap_or(top);
    if top == "lib" {
        return Vec::new(); // the crate root composes everything
    }
    let Some(own) = tier_of(top) else {
        return vec![format!(
            "{relative}: module `{top}` has no row in AREA_TIERS"
        )];
    };
    let mut offences = Vec::new();
    for (name, line) in crate_references(&without_test_code(text)) {
        if name == top || !modules.contains(&name) {
            continue; // itself, or an item of the crate root (Kernel, StartError, …)
        }
        match tier_of(&name) {
            None => offences.push(format!(
                "{relative}:{line}: `{name}` has no row in AREA_TIERS"
            )),
            Some(tier) if tier > own => offences.push(format!(
                "{relative}:{line}: {top} ({}) calls up into {name} ({})",
                TIERS[own], TIERS[tier]
            )),
            Some(_) => {}
        }
    }
    offences
}

/// The top-level modules `lib.rs` declares.
fn declared_modules(lib: &str) -> Vec<String> {
    lib.lines()
        .filter_map(|line| {
            let line = line.trim();
            let rest = line
                .strip_prefix("pub mod ")
                .or_else(|| line.strip_prefix("mod "))?;
            Some(rest.trim_end_matches(';').to_owned())
        })
        .collect()
}

#[test]
fn every_area_calls_only_its_tier_and_those_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules = declared_modules(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let mut offences = Vec::new();
    for module in &modules {
        if tier_of(module).is_none() {
            offences.push(format!("module `{module}` has no row in AREA_TIERS"));
        }
    }
    let files = crate::sql::workspace_files(|path| path.extension().is_some_and(|ext| ext == "rs"));
    let mut checked = 0;
    for (relative, path) in &files {
        let Some(inside) = relative.strip_prefix("crates/karmadue/src/") else {
            continue;
        };
        // A test module's own file (`mod tests;` beside `#[cfg(test)]`).
        if inside.ends_with("/tests.rs") || inside.contains("/tests/") {
            continue;
        }
        checked += 1;
        offences.extend(tier_offences(
            inside,
            &std::fs::read_to_string(path).unwrap(),
            &modules,
        ));
    }
    assert!(checked > 150, "the check read only {checked} files");
    assert!(
        offences.is_empty(),
        "calls against the area tiers:\n{}",
        offences.join("\n")
    );
}

#[test]
fn the_tier_check_refuses_an_upward_call_and_an_unplaced_module() {
    let modules: Vec<String> = ["identity", "forum", "views", "arena", "kinds"]
        .map(str::to_owned)
        .to_vec();
    // identity (principals) reaching a view and the forum (evidence), in both `use` shapes.
    let planted = "use crate::views::Scores;\nfn f() {\n    crate::{forum::x, identity::y};\n}\n";
    let offences = tier_offences("identity/register.rs", planted, &modules);
    assert_eq!(
        offences,
        [
            "identity/register.rs:1: identity (principals) calls up into views (views)",
            "identity/register.rs:3: identity (principals) calls up into forum (evidence)",
        ]
    );
    // A call down, or inside the tier, passes; test code is not read.
    let fine = "use crate::identity::AgentRow; // not crate::kinds\n/// [`crate::http`]\n#[cfg(test)]\nmod tests {\n    use crate::kinds::ALL;\n}\n";
    assert!(tier_offences("views/scores.rs", fine, &modules).is_empty());
    // A module without a row, as caller or callee.
    assert_eq!(
        tier_offences("arena/mod.rs", "", &modules),
        ["arena/mod.rs: module `arena` has no row in AREA_TIERS"]
    );
    assert_eq!(
        tier_offences("views/x.rs", "use crate::arena::Ladder;", &modules),
        ["views/x.rs:1: `arena` has no row in AREA_TIERS"]
    );
}

#[test]
fn every_tier_in_the_table_is_a_known_tier() {
    for (module, tier) in AREA_TIERS {
        assert!(TIERS.contains(tier), "{module}: unknown tier {tier}");
    }
}
