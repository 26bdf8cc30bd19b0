//! Ordering: paging, ties broken by resource id, at most two places per owner.

use super::*;

#[test]
fn paging_walks_every_result_once_and_archived_records_come_last() {
    let app = shared();
    let first = discover(app, json!({ "need": "postgres" }));
    assert_eq!(
        (
            data(&first)["limit"].as_u64(),
            data(&first)["offset"].as_u64()
        ),
        (Some(8), Some(0))
    );
    assert_eq!(data(&first)["next_offset"], 8);
    let total = data(&first)["total"].as_u64().unwrap() as usize;
    let rows = every_result(app, "postgres", false);
    assert_eq!(rows.len(), total, "pages cover every match");
    let mut seen = std::collections::HashSet::new();
    for row in &rows {
        assert!(
            seen.insert(row["resource_id"].as_str().unwrap().to_owned()),
            "repeated: {}",
            row["resource_id"]
        );
    }
    let first_archived = rows
        .iter()
        .position(|row| row["archived_upstream"] == true)
        .expect("the archived postgres server matches");
    assert!(
        rows[first_archived..]
            .iter()
            .all(|row| row["archived_upstream"] == true),
        "archived rows sort last"
    );
    let again = discover(app, json!({ "need": "postgres", "offset": 8 }));
    let second = discover(app, json!({ "need": "postgres", "offset": 8 }));
    assert_eq!(ids(&again), ids(&second), "the same page twice is the same");
    assert_eq!(
        ids(&again),
        rows[8..16]
            .iter()
            .map(|row| row["resource_id"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    );
    let last = discover(app, json!({ "need": "postgres", "offset": total - 1 }));
    assert_eq!(data(&last)["next_offset"], Value::Null);
    let past = discover(app, json!({ "need": "postgres", "offset": total + 10 }));
    assert_eq!(
        (
            data(&past)["results"].as_array().unwrap().len(),
            &data(&past)["next_offset"]
        ),
        (0, &Value::Null)
    );
}

#[test]
fn equal_scores_are_ordered_by_resource_id_without_gaps_or_repeats() {
    let app = TestApp::start();
    let names = [
        "zz-tie-c", "zz-tie-a", "zz-tie-e", "zz-tie-b", "zz-tie-d", "zz-tie-g", "zz-tie-f",
    ];
    let rows: Vec<Value> = names
        .iter()
        .map(|name| npm_row(name, "Tiebreak widget for gizmos."))
        .collect();
    import(&app, &rows);
    let mut walked = Vec::new();
    let mut offset = Some(0);
    while let Some(at) = offset {
        let reply = discover(
            &app,
            json!({ "need": "tiebreak gizmos", "limit": 3, "offset": at }),
        );
        walked.extend(ids(&reply));
        offset = data(&reply)["next_offset"].as_u64();
    }
    let mut sorted: Vec<String> = names
        .iter()
        .map(|name| format!("kd:res:npm:{name}"))
        .collect();
    sorted.sort();
    assert_eq!(walked, sorted);
}

#[test]
fn an_owner_gets_at_most_two_places_before_every_other_owner() {
    let app = shared();
    let rows = every_result(app, "aws", false);
    let current: Vec<&Value> = rows
        .iter()
        .filter(|row| row["archived_upstream"] == false)
        .collect();
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut overflow_started = false;
    let mut overflowed = 0;
    for row in &current {
        let owner = row["owner"].as_str().unwrap();
        let count = seen.entry(owner).or_insert(0);
        *count += 1;
        let note = row["ranking_note"].as_str().unwrap();
        if *count > 2 {
            overflow_started = true;
            overflowed += 1;
            assert!(note.contains("moved after other owners"), "{note}");
        } else {
            assert!(
                !overflow_started,
                "{owner}'s first or second record came after another owner's third"
            );
        }
    }
    assert!(overflowed > 0, "awslabs has many aws records");
    let first_page = &current[..8];
    let owners: Vec<&str> = first_page
        .iter()
        .map(|row| row["owner"].as_str().unwrap())
        .collect();
    for owner in &owners {
        assert!(
            owners.iter().filter(|other| *other == owner).count() <= 2,
            "{owners:?}"
        );
    }
}
