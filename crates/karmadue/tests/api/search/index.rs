//! The index: imports found at once, fresh and kept-current builds agree, disk reopening.

use super::*;

#[test]
fn a_resource_imported_after_the_index_was_built_is_found_by_the_next_search() {
    let app = TestApp::start();
    let before = discover(&app, json!({ "need": "frobnicator" }));
    assert_eq!(data(&before)["total"], 0);
    import(
        &app,
        &[npm_row(
            "zz-frobnicator",
            "Frobnicator MCP server for widget telemetry.",
        )],
    );
    let after = discover(&app, json!({ "need": "frobnicator" }));
    assert_eq!(ids(&after), vec!["kd:res:npm:zz-frobnicator"]);
    import(
        &app,
        &[npm_row(
            "zz-frobnicator",
            "Quuxifier for sprocket dashboards.",
        )],
    );
    assert_eq!(
        ids(&discover(&app, json!({ "need": "quuxifier" }))),
        vec!["kd:res:npm:zz-frobnicator"]
    );
    assert_eq!(
        data(&discover(&app, json!({ "need": "telemetry" })))["total"],
        0,
        "the old text is gone"
    );
}

#[test]
fn ranking_is_the_same_whether_the_index_was_built_fresh_or_kept_current() {
    use kd_karmadue::catalog::search::{Request, SearchIndex, rank_page};
    let app = TestApp::with_catalog();
    let needs = [
        "postgres mcp server",
        "slack",
        "speech to text on device",
        "aws",
        "vector database",
    ];
    for need in needs {
        discover(&app, json!({ "need": need }));
    }
    // Changed rows replace documents (leaving deleted ones in the kept index) and new rows add.
    import(
        &app,
        &[
            npm_row(
                "slack-mcp-server",
                "Slack MCP server: channels, threads and search for Slack workspaces.",
            ),
            npm_row(
                "@modelcontextprotocol/server-postgres",
                "Postgres MCP server, read only.",
            ),
            npm_row("zz-postgres-slack-bridge", "Bridges Slack and Postgres."),
        ],
    );
    let fresh = SearchIndex::in_memory();
    app.hub
        .store
        .read_blocking(|conn| -> Result<(), kd_kernel::error::ToolError> {
            let (kept, _) = app
                .hub
                .areas
                .get::<kd_karmadue::catalog::search::SearchIndex>()
                .unwrap()
                .current(conn)?;
            let (rebuilt, _) = fresh.current(conn)?;
            assert!(
                kept.searcher()
                    .segment_readers()
                    .iter()
                    .any(|segment| segment.num_deleted_docs() > 0),
                "the kept index has deleted documents"
            );
            for need in needs {
                for offset in [0, 8, 40] {
                    let request = Request {
                        need: Some(need.to_owned()),
                        limit: 8,
                        offset,
                        include_demo: false,
                    };
                    let one = rank_page(
                        &kept,
                        app.hub
                            .areas
                            .get::<kd_karmadue::catalog::search::SearchIndex>()
                            .unwrap()
                            .analyzers(),
                        &request,
                    )?;
                    let other = rank_page(&rebuilt, fresh.analyzers(), &request)?;
                    let view = |page: &kd_karmadue::catalog::search::Page| -> Vec<(String, u32)> {
                        page.hits
                            .iter()
                            .map(|(hit, _)| (hit.resource_id.clone(), hit.score.score.to_bits()))
                            .collect()
                    };
                    assert_eq!(one.total, other.total, "{need}");
                    assert_eq!(view(&one), view(&other), "{need} at {offset}");
                }
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn a_disk_index_is_reopened_when_still_current_and_kept_in_memory_when_its_folder_is_busy() {
    use kd_karmadue::catalog::search::{Freshness, SearchIndex};
    let app = TestApp::start();
    import(&app, &[npm_row("zz-alpha", "Alpha widget.")]);
    let folder = tempfile::tempdir().unwrap();
    let open = |index: &SearchIndex| {
        app.hub
            .store
            .read_blocking(|conn| {
                index
                    .current(conn)
                    .map(|(live, freshness)| (live.on_disk, freshness))
            })
            .unwrap()
    };
    let first = SearchIndex::on_disk(folder.path());
    assert_eq!(open(&first), (true, Freshness::Rebuilt));
    let busy = SearchIndex::on_disk(folder.path());
    assert_eq!(
        open(&busy),
        (false, Freshness::Rebuilt),
        "a second user of the folder keeps its index in memory"
    );
    drop(first);
    let again = SearchIndex::on_disk(folder.path());
    assert_eq!(open(&again), (true, Freshness::Reopened));
    import(&app, &[npm_row("zz-beta", "Beta widget.")]);
    assert_eq!(open(&again), (true, Freshness::CaughtUp));
    drop(again);
    import(&app, &[npm_row("zz-gamma", "Gamma widget.")]);
    let later = SearchIndex::on_disk(folder.path());
    assert_eq!(
        open(&later),
        (true, Freshness::CaughtUp),
        "reopened, then the new event applied"
    );
}
