//! Lints over how HTML is made: every page is a `maud` template (escaped by construction) in
//! `crates/karmadue/src/http/pages/`, so no Rust source writes HTML tags into a string
//! (decision 190). The templates are read too: `maud` markup names elements without `<`, so
//! they hold none either. Unit tests (`#[cfg(test)]` at a file's end) may read rendered HTML
//! back and are not read.

use crate::sql::workspace_files;

/// Tag openings that mean a string holds HTML (matched as written: the code writes tags in
/// lower case, and `Vec<Table>` is not a tag).
const TAGS: &[&str] = &[
    "<!doctype",
    "<!DOCTYPE",
    "<html",
    "<head",
    "<body",
    "<div",
    "<form",
    "<p>",
    "<p ",
    "<a href",
    "<input",
    "<button",
    "<table",
    "<tr>",
    "<td>",
    "<th>",
    "<ul>",
    "<li>",
    "<h1",
    "<h2",
    "<h3",
    "<nav",
    "<main",
    "<section",
    "<label",
    "<blockquote",
    "<pre>",
    "<code>",
    "<br>",
    "<strong>",
    "<textarea",
    "<svg",
    "<rect",
];

/// Where the templates live.
const TEMPLATE_DIR: &str = "crates/karmadue/src/http/pages/";

/// Whether `path` is production source (not an integration test, which reads HTML back).
fn is_source(path: &std::path::Path) -> bool {
    path.extension().is_some_and(|ext| ext == "rs")
        && path.components().any(|part| part.as_os_str() == "src")
}

/// `text` up to its unit tests (a `#[cfg(test)]` module, which ends the file by convention).
fn production_part(text: &str) -> &str {
    text.find("#[cfg(test)]\nmod tests")
        .map_or(text, |at| &text[..at])
}

#[test]
fn no_rust_source_writes_html_tags_into_strings() {
    let files = workspace_files(is_source);
    assert!(
        files.len() > 50,
        "the lint found only {} source files",
        files.len()
    );
    assert!(
        files
            .iter()
            .any(|(relative, _)| relative.starts_with(TEMPLATE_DIR)),
        "no template under {TEMPLATE_DIR}"
    );
    let mut offenders = Vec::new();
    for (relative, path) in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let text = production_part(&text);
        for tag in TAGS {
            if text.contains(tag) {
                offenders.push(format!("{relative}: {tag}"));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "HTML written as Rust strings (use a maud template in {TEMPLATE_DIR}): {offenders:?}"
    );
}

#[test]
fn the_hand_written_escape_is_gone() {
    let mut offenders = Vec::new();
    for (relative, path) in workspace_files(is_source) {
        let text = std::fs::read_to_string(&path).unwrap();
        let text = production_part(&text);
        for needle in ["fn escape(", "\"&lt;\"", "\"&amp;\""] {
            if text.contains(needle) {
                offenders.push(format!("{relative}: {needle}"));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "hand-written HTML escaping: {offenders:?}"
    );
}
