//! Differential test against a real PostgreSQL: `canonical_text(doc)` must equal what the server
//! prints for `doc::jsonb::text`, byte for byte, and every document the server refuses we refuse
//! (DECISIONS 11: "tested against a real PostgreSQL on generated documents").
//!
//! The server comes from `KD_TEST_PG_URL` (a `postgres://` URL; `scripts/lib/postgres.sh`
//! starts a throwaway one). Without it the test prints "skipped: KD_TEST_PG_URL not set" and
//! passes, unless `KD_REQUIRE_PG=1`, when it fails.
//!
//! Generated documents have unique keys and nesting of at most 64, so both sides accept them.
//! Where we refuse by design and PostgreSQL does not (a repeated key: it keeps the last; a
//! number printing longer than 100 characters; nesting deeper than 64), the damaged-document
//! part counts the case as a deliberate difference.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly on purpose.

mod common;

use common::{EDGE_NUMBERS_FOR_PG, Generator, INVALID_VALUES, embed, mutate};
use kd_protocol::canonical::{CanonicalError, canonical_text};
use postgres::{Client, NoTls};

const DOCUMENTS: usize = 12_000;
const DAMAGED: usize = 4_000;
const BATCH: usize = 500;

fn connect() -> Option<Client> {
    let url = std::env::var("KD_TEST_PG_URL").unwrap_or_default();
    if url.is_empty() {
        assert!(
            std::env::var("KD_REQUIRE_PG").as_deref() != Ok("1"),
            "KD_REQUIRE_PG=1 but KD_TEST_PG_URL is not set (source scripts/lib/postgres.sh; pg_start)"
        );
        eprintln!("skipped: KD_TEST_PG_URL not set");
        return None;
    }
    let mut client = Client::connect(&url, NoTls)
        .unwrap_or_else(|e| panic!("cannot connect to KD_TEST_PG_URL={url}: {e}"));
    let encoding: String = client
        .query_one("SHOW server_encoding", &[])
        .unwrap()
        .get(0);
    assert_eq!(
        encoding, "UTF8",
        "jsonb decodes \\u escapes to UTF-8 only in a UTF8 database"
    );
    Some(client)
}

fn server_version(client: &mut Client) -> String {
    client.query_one("SHOW server_version", &[]).unwrap().get(0)
}

/// PostgreSQL's answer for one document: its text, or the SQLSTATE of its refusal.
fn postgres_prints(client: &mut Client, doc: &str) -> Result<String, String> {
    match client.query_one("SELECT $1::text::jsonb::text", &[&doc]) {
        Ok(row) => Ok(row.get(0)),
        Err(error) => {
            let code = error
                .code()
                .map(|code| code.code().to_owned())
                .unwrap_or_else(|| panic!("not a refusal but a failure for {doc:?}: {error}"));
            // 22P02 invalid json, 22P05 \u0000, 22003 numeric overflow, 54001 stack depth.
            assert!(
                ["22P02", "22P05", "22003", "54001"].contains(&code.as_str()),
                "unexpected SQLSTATE {code} for {doc:?}: {error}"
            );
            Err(code)
        }
    }
}

#[test]
fn generated_documents_print_exactly_as_postgres() {
    let Some(mut client) = connect() else { return };
    let version = server_version(&mut client);
    let mut generator = Generator::new(0x0070_672d_6469_6666);
    let docs: Vec<String> = (0..DOCUMENTS).map(|_| generator.document().text).collect();

    let mut differences = Vec::new();
    for batch in docs.chunks(BATCH) {
        let ours: Vec<String> = batch
            .iter()
            .map(|doc| {
                canonical_text(doc)
                    .unwrap_or_else(|e| panic!("generated document refused ({e}): {doc:?}"))
            })
            .collect();
        let batch_vec = batch.to_vec();
        let rows = client.query(
            "SELECT t.doc::jsonb::text FROM unnest($1::text[]) WITH ORDINALITY AS t(doc, n) ORDER BY t.n",
            &[&batch_vec],
        );
        let theirs: Vec<String> = match rows {
            Ok(rows) => rows.iter().map(|row| row.get(0)).collect(),
            // Find the document PostgreSQL refused.
            Err(error) => {
                for doc in batch {
                    if let Err(code) = postgres_prints(&mut client, doc) {
                        panic!("PostgreSQL refuses ({code}) a document we accept: {doc:?}");
                    }
                }
                panic!("batch query failed: {error}");
            }
        };
        assert_eq!(theirs.len(), batch.len());
        for ((doc, ours), theirs) in batch.iter().zip(&ours).zip(&theirs) {
            if ours != theirs {
                differences.push(format!(
                    "input {doc:?}\n ours   {ours:?}\n theirs {theirs:?}"
                ));
            }
        }
    }
    assert!(
        differences.is_empty(),
        "{} of {DOCUMENTS} documents differ; first ones:\n{}",
        differences.len(),
        differences
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    eprintln!(
        "pg_differential: compared {DOCUMENTS} generated documents with PostgreSQL {version}: 0 differences"
    );
}

#[test]
fn postgres_and_we_refuse_the_same_documents() {
    let Some(mut client) = connect() else { return };
    let mut generator = Generator::new(0x7265_6675_7365);
    let mut docs: Vec<(String, bool)> = Vec::new();
    // One problem each: the kind of refusal must match too.
    for fragment in INVALID_VALUES {
        for _ in 0..4 {
            docs.push((embed(generator.rng(), fragment).0, true));
        }
    }
    for number in EDGE_NUMBERS_FOR_PG {
        docs.push(((*number).to_owned(), true));
        docs.push((format!("{{\"n\": [{number}]}}"), true));
    }
    for depth in [64, 65, 100, 1000] {
        docs.push((format!("{}{}", "[".repeat(depth), "]".repeat(depth)), true));
    }
    for _ in 0..DAMAGED {
        let doc = generator.document().text;
        docs.push((mutate(generator.rng(), &doc), false));
    }

    let (mut same_text, mut both_refuse, mut by_decision) = (0, 0, 0);
    for (doc, single_problem) in &docs {
        match judge(&mut client, doc, *single_problem) {
            Judged::Same => same_text += 1,
            Judged::BothRefuse => both_refuse += 1,
            Judged::OnlyWeRefuseByDesign => by_decision += 1,
        }
    }
    eprintln!(
        "pg_differential: {} documents one by one: {same_text} printed identically, {both_refuse} \
         refused by both, {by_decision} refused only by us by design (repeated key, number over \
         100 characters, nesting over 64)",
        docs.len()
    );
    assert!(same_text > 0 && both_refuse > 0 && by_decision > 0);
}

/// How one document fared on both sides.
enum Judged {
    Same,
    BothRefuse,
    OnlyWeRefuseByDesign,
}

/// Compares our printer with PostgreSQL on `doc`; panics on a difference that is not one of
/// our refusals by design. With `single_problem`, a refusal must also be of the same kind.
fn judge(client: &mut Client, doc: &str, single_problem: bool) -> Judged {
    let theirs = postgres_prints(client, doc);
    let ours = canonical_text(doc);
    match (&ours, &theirs) {
        (Ok(ours), Ok(theirs)) => {
            assert_eq!(ours, theirs, "input {doc:?}");
            Judged::Same
        }
        (Err(error), Ok(_)) => {
            assert!(
                matches!(
                    error,
                    CanonicalError::RepeatedKey { .. }
                        | CanonicalError::ReservedKey { .. }
                        | CanonicalError::NumberTooLong { .. }
                        | CanonicalError::TooDeep { .. }
                ),
                "PostgreSQL accepts {doc:?} but we refuse: {error}"
            );
            Judged::OnlyWeRefuseByDesign
        }
        (Ok(ours), Err(code)) => {
            panic!("PostgreSQL refuses ({code}) {doc:?}, we print {ours:?}")
        }
        (Err(error), Err(code)) => {
            if single_problem {
                let expected = match error {
                    CanonicalError::NulCharacter { .. } => "22P05",
                    CanonicalError::NumberTooLong { .. }
                    | CanonicalError::NumberOutOfRange { .. } => "22003",
                    CanonicalError::TooDeep { .. } => code.as_str(),
                    _ => "22P02",
                };
                assert_eq!(code, expected, "{doc:?}: we say {error}");
            }
            Judged::BothRefuse
        }
    }
}

/// The fuzzer's corpus (`fuzz/corpus/canonical_text`, the inputs libFuzzer kept for new
/// coverage, minimised: docs/reliability.md "Fuzzing") through both printers: the fuzz target
/// checks our two printers against each other, this checks the inputs it found against
/// PostgreSQL.
#[test]
fn the_fuzz_corpus_prints_exactly_as_postgres() {
    let Some(mut client) = connect() else { return };
    let folder =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/canonical_text");
    let (mut compared, mut not_text) = (0, 0);
    for entry in std::fs::read_dir(&folder).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        // PostgreSQL's text parameters cannot hold U+0000 (we refuse it too).
        match String::from_utf8(bytes) {
            Ok(doc) if !doc.contains('\0') => {
                judge(&mut client, &doc, false);
                compared += 1;
            }
            _ => not_text += 1,
        }
    }
    eprintln!(
        "pg_differential: {compared} fuzz corpus inputs compared with PostgreSQL ({not_text} not UTF-8 text)"
    );
    assert!(compared >= 40, "the corpus has {compared} text inputs");
}
