//! Synthetic catalogs for the search bench: a seeded vocabulary (real domain words first, then
//! made-up ones, Zipf-distributed), generated records written to a SQLite store, and the
//! `synthetic` and `profile` runs over them.

use super::*;

/// A plausible vocabulary: real domain words first (most frequent), then made-up words.
fn vocabulary(rng: &mut StdRng) -> Vec<String> {
    let domain = "mcp server tool api data search agent file database client python node typescript model llm \
        ai cloud web browser github git slack email calendar postgres sql sqlite redis docker kubernetes aws azure \
        google notion jira figma stripe payment weather youtube transcript speech text audio image video pdf \
        markdown memory graph vector embedding query index cache queue stream log monitor metric alert deploy \
        build test code review lint format parse convert export import sync backup storage bucket upload \
        download scrape crawl fetch http rest graphql websocket auth oauth token key secret user team project \
        task issue ticket chat message notification schedule event time zone map location translate summarize \
        analyze report dashboard chart table spreadsheet excel csv json yaml xml config cli terminal shell \
        automation workflow pipeline integration connector plugin extension framework library sdk wrapper \
        local offline device mobile desktop server-side realtime fast simple secure open source lightweight";
    let mut words: Vec<String> = domain.split_whitespace().map(str::to_owned).collect();
    let syllables = [
        "ka", "lo", "mi", "ter", "zen", "qua", "ri", "pho", "dex", "lin", "vor", "sa", "tri",
        "bel", "gon", "ux", "ar", "mo", "pi", "den",
    ];
    while words.len() < 20_000 {
        let parts = rng.gen_range(2..=4);
        let word: String = (0..parts)
            .map(|_| syllables[rng.gen_range(0..syllables.len())])
            .collect();
        words.push(word);
    }
    words
}

/// Zipf-like pick: index ~ floor(n^u) with u uniform, so early words are far more common.
fn zipf(rng: &mut StdRng, len: usize) -> usize {
    let exponent: f64 = rng.r#gen::<f64>();
    ((len as f64).powf(exponent) as usize)
        .saturating_sub(1)
        .min(len - 1)
}

pub(super) fn synthetic(sizes: &[usize]) -> Outcome<()> {
    for &size in sizes {
        let folder = bench_root().join(format!("synthetic-{size}"));
        let data = folder.join("data");
        let database = data.join("karmadue.sqlite");
        let mut rng = StdRng::seed_from_u64(42);
        let words = vocabulary(&mut rng);
        if !database.exists() {
            std::fs::create_dir_all(&data)?;
            let started = Instant::now();
            drop(open_store(&data)?); // schema
            write_catalog(&database, size, &words, &mut rng)?;
            eprintln!(
                "wrote {size} synthetic resources in {:.1} s",
                started.elapsed().as_secs_f64()
            );
        }
        let store = open_store(&data)?;
        println!("\n## Synthetic catalog of {size} resources\n");
        let index_folder = folder.join("search");
        if index_folder.exists() {
            std::fs::remove_dir_all(&index_folder)?;
        }
        for on_disk in [false, true] {
            if on_disk && size > 100_000 && std::env::var_os("KD_BENCH_DISK_1M").is_none() {
                continue;
            }
            let index = if on_disk {
                SearchIndex::on_disk(&index_folder)
            } else {
                SearchIndex::in_memory()
            };
            let place = if on_disk { "disk" } else { "memory" };
            measure_synthetic(&store, &index, place, size, &words, &index_folder)?;
        }
    }
    Ok(())
}

/// rank_page and discover on one synthetic catalog's index (built first) for 300 queries.
fn measure_synthetic(
    store: &kd_core::store::Store,
    index: &SearchIndex,
    place: &str,
    size: usize,
    words: &[String],
    index_folder: &Path,
) -> Outcome<()> {
    let on_disk = place == "disk";
    store.read_blocking(|conn| -> Outcome<()> {
        let started = Instant::now();
        let (live, _) = index.current(conn).map_err(|error| error.cause_text())?;
        let build = started.elapsed();
        let segments = live.searcher().segment_readers().len();
        println!(
            "index in {place}: built in {:.1} s ({segments} segments){}; peak RSS {} MB",
            build.as_secs_f64(),
            size_note(on_disk, index_folder),
            peak_rss_mb()
        );
        let mut query_rng = StdRng::seed_from_u64(7);
        let queries = synthetic_queries(&mut query_rng, words, 300);
        let borrowed: Vec<(Option<&str>, usize)> = queries
            .iter()
            .map(|(need, offset)| (Some(need.as_str()), *offset))
            .collect();
        let mut run = |need: Option<&str>, offset: usize| -> Outcome<()> {
            let request = request(need, offset);
            search::rank_page(&live, index.analyzers(), &request)
                .map(|_| ())
                .map_err(|error| error.message.into())
        };
        run_queries(
            &format!("{size}, {place}, rank_page"),
            1,
            &borrowed,
            &mut run,
        )?;
        let mut full = |need: Option<&str>, offset: usize| -> Outcome<()> {
            let request = request(need, offset);
            search::discover(index, conn, &request)
                .map(|_| ())
                .map_err(|error| error.message.into())
        };
        run_queries(
            &format!("{size}, {place}, discover"),
            1,
            &borrowed[..100],
            &mut full,
        )?;
        Ok(())
    })
}

/// The slowest needs on a synthetic catalog (kept on disk between runs), with their totals.
pub(super) fn profile(size: usize) -> Outcome<()> {
    let folder = bench_root().join(format!("synthetic-{size}"));
    let data = folder.join("data");
    if !data.join("karmadue.sqlite").exists() {
        synthetic(&[size])?;
    }
    let store = open_store(&data)?;
    let index = SearchIndex::on_disk(folder.join("search-profile"));
    let mut rng = StdRng::seed_from_u64(42);
    let words = vocabulary(&mut rng);
    store.read_blocking(|conn| -> Outcome<()> {
        let started = Instant::now();
        let (live, freshness) = index.current(conn).map_err(|error| error.cause_text())?;
        println!(
            "index {freshness:?} in {:.1} s, {} segments",
            started.elapsed().as_secs_f64(),
            live.searcher().segment_readers().len()
        );
        let mut query_rng = StdRng::seed_from_u64(7);
        let queries = synthetic_queries(&mut query_rng, &words, 300);
        let mut timed = Vec::new();
        for (need, offset) in &queries {
            let request = Request {
                need: Some(need.clone()),
                limit: 8,
                offset: *offset,
                include_demo: false,
            };
            search::rank_page(&live, index.analyzers(), &request).map_err(|error| error.message)?;
            let started = Instant::now();
            let page = search::rank_page(&live, index.analyzers(), &request)
                .map_err(|error| error.message)?;
            timed.push((started.elapsed(), need.clone(), page.total));
        }
        let mut times: Vec<Duration> = timed.iter().map(|(time, _, _)| *time).collect();
        report("profile rank_page", &mut times);
        timed.sort_by_key(|(time, _, _)| std::cmp::Reverse(*time));
        for (time, need, total) in timed.iter().take(15) {
            println!(
                "{:>8.2} ms  {total:>8} matches  {need:?}",
                time.as_secs_f64() * 1000.0
            );
        }
        Ok(())
    })
}

/// 1–3 Zipf-sampled words (70%), a word with one letter changed (15%), a realistic need (15%);
/// every fifth query asks for page 3.
fn synthetic_queries(rng: &mut StdRng, words: &[String], count: usize) -> Vec<(String, usize)> {
    (0..count)
        .map(|index| {
            let roll: f64 = rng.r#gen();
            let need = if roll < 0.70 {
                let length = rng.gen_range(1..=3);
                (0..length)
                    .map(|_| words[zipf(rng, words.len())].clone())
                    .collect::<Vec<_>>()
                    .join(" ")
            } else if roll < 0.85 {
                let mut word: Vec<char> = words[zipf(rng, words.len())].chars().collect();
                let at = rng.gen_range(0..word.len());
                word[at] = if word[at] == 'x' { 'q' } else { 'x' };
                word.into_iter().collect()
            } else {
                NEEDS[rng.gen_range(0..NEEDS.len() - 1)].to_owned()
            };
            (need, if index % 5 == 0 { 16 } else { 0 })
        })
        .collect()
}

fn write_catalog(database: &Path, size: usize, words: &[String], rng: &mut StdRng) -> Outcome<()> {
    let txn = kd_core::db::Connection::open(&kd_core::db::Location::Sqlite(database.to_owned()))?;
    txn.execute_batch("PRAGMA synchronous = OFF; BEGIN")?;
    {
        let mut insert = txn.prepare_cached(
            "INSERT INTO resources (resource_id, source, locator, title, type, description, owner, license, version,
                released_ms, released_source, popularity, popularity_label, curated, archived, risky, demo, package_ids,
                registered_by, record_hash, imported_ms, updated_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'MIT', '1.0.0', 0, 'import', ?8, NULL, ?9, ?10, 0, 0, '[]', NULL, 'x', 0, 0)",
        )?;
        let types = [
            "mcp_server",
            "package",
            "package",
            "mcp_server",
            "repo",
            "skill",
        ];
        let owners = (size / 5).max(1);
        for number in 0..size {
            let title_words = rng.gen_range(1..=4);
            let title: Vec<&str> = (0..title_words)
                .map(|_| words[zipf(rng, words.len())].as_str())
                .collect();
            let slug = title.join("-");
            let description_words = rng.gen_range(8..=25);
            let description: Vec<&str> = (0..description_words)
                .map(|_| words[zipf(rng, words.len())].as_str())
                .collect();
            let owner = format!("owner{}", zipf(rng, owners));
            let source = if number % 3 == 0 { "github" } else { "npm" };
            let (resource_id, locator) = if source == "github" {
                (
                    format!("kd:res:github:{owner}/{slug}-{number}"),
                    format!("https://github.com/{owner}/{slug}-{number}"),
                )
            } else {
                (
                    format!("kd:res:npm:{slug}-{number}"),
                    format!("npm:{slug}-{number}"),
                )
            };
            // Pareto-like popularity: most records near 0, a few near 1.
            let popularity = (1.0 - rng.r#gen::<f64>().powf(0.15)).clamp(0.0, 1.0);
            insert.execute(kd_core::params![
                resource_id,
                source,
                locator,
                slug,
                types[number % types.len()],
                description.join(" "),
                owner,
                popularity,
                rng.gen_bool(0.005),
                rng.gen_bool(0.01),
            ])?;
        }
        let mut claim = txn.prepare_cached(
            "INSERT INTO claims (claim_id, resource_id, version, kind, value, method, evidence_type, evidence_label,
                counts_as_verification, source, observed_ms, status, demo)
             SELECT 'clm_' || resource_id, resource_id, '1.0.0', 'license', 'MIT', 'license-file-read@1', 'kd_check',
                'bench', 1, NULL, 0, 'public', 0 FROM resources WHERE (rowid * 2654435761) % 50 = 0",
        )?;
        claim.execute([])?;
    }
    txn.execute_batch("COMMIT")?;
    Ok(())
}
