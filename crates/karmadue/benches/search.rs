//! `discover_resources` latency and indexing time, in process (no HTTP).
//!
//! ```text
//! cargo bench -p kd-karmadue --bench search                     # everything below
//! cargo bench -p kd-karmadue --bench search -- snapshot         # the bundled snapshot only
//! cargo bench -p kd-karmadue --bench search -- synthetic 10000 1000000
//! cargo bench -p kd-karmadue --bench search -- explain "postgres mcp server" "slack"
//! cargo bench -p kd-karmadue --bench search -- real ../shared/data/catalog-full-npm.jsonl.gz \
//!     ../shared/data/catalog-full-pypi.jsonl.gz                 # real rows (1,113,318)
//! cargo bench -p kd-karmadue --bench search -- explain-real "faster-whisper"
//! ```
//!
//! The snapshot is imported once into `target/kd-bench/snapshot` and reused. `real` imports
//! the catalog files it is given (JSON Lines, `.gz` read as such; they are not bundled and are
//! never read by tests) once into `target/kd-bench/real`, then measures the same needs on them. Synthetic catalogs
//! are generated from a seeded word list (plausible titles and descriptions, Zipf-distributed
//! words, Pareto popularity), written to a SQLite store, and indexed through the same
//! `SearchIndex::current` a hub uses. Latency is measured on `rank_page` (the search: plan,
//! query, score every match, order, page) and on `discover` (the whole tool answer: head check,
//! search, reading the page's records and claims).

use std::error::Error;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kd_core::clock::SystemClock;
use kd_core::config::Config;
use kd_core::random::SystemRandom;
use kd_karmadue::catalog::search::{self, Request, SearchIndex};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[path = "search/generated.rs"]
mod generated;

use generated::{profile, synthetic};

type Outcome<T> = Result<T, Box<dyn Error>>;

/// Needs a user might type (the relevance table's, and a few more).
const NEEDS: &[&str] = &[
    "speech to text on device",
    "postgres mcp server",
    "calendar connector",
    "whisper.cp",
    "modelcontextprotcol servers",
    "npm:0nmcp",
    "@21st-dev/magic",
    "github mcp server",
    "slack",
    "browser automation",
    "filesystem",
    "web search",
    "sqlite",
    "kubernetes",
    "stripe payments",
    "notion",
    "jira",
    "email",
    "vector database",
    "pdf",
    "docker",
    "figma",
    "git",
    "memory knowledge graph",
    "weather",
    "youtube transcript",
    "aws",
    "playwrigth",
    "sequential thinking",
    "sentry error monitoring",
    "test driven development skill",
    "offline transcription",
    "postgresql database",
    "redis",
    "fetch web page",
    "time zone conversion",
    "mcp server",
    "python",
    "data",
    "ai agent tools for api integration",
    "xqzvbnm flurble",
    "faster-whisper",
    "vosk",
    "postgres database",
    "web browser automation",
    "kuber",
    "asdkjhqwe zzxq",
    "",
];

fn main() -> Outcome<()> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--"))
        .collect();
    match args.first().map(String::as_str) {
        Some("explain") => explain(&snapshot_data()?, &args[1..]),
        Some("explain-real") => explain(&real_data(&[])?, &args[1..]),
        Some("real") => real(&args[1..]),
        Some("snapshot") => snapshot(),
        Some("profile") => profile(
            args.get(1)
                .and_then(|size| size.parse().ok())
                .unwrap_or(1_000_000),
        ),
        Some("synthetic") => {
            let sizes: Vec<usize> = args[1..]
                .iter()
                .filter_map(|size| size.parse().ok())
                .collect();
            synthetic(if sizes.is_empty() {
                &[10_000, 100_000, 1_000_000]
            } else {
                &sizes
            })
        }
        _ => {
            snapshot()?;
            synthetic(&[10_000, 100_000, 1_000_000])
        }
    }
}

fn bench_root() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"),
        PathBuf::from,
    );
    target.join("kd-bench")
}

/// The bundled snapshot in a store, imported once.
fn snapshot_data() -> Outcome<PathBuf> {
    let data = bench_root().join("snapshot").join("data");
    if data.join("karmadue.sqlite").exists() {
        return Ok(data);
    }
    let started = Instant::now();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let mut config = Config::new("127.0.0.1:0".parse()?, data.clone(), None);
    config.bundled_catalog = true;
    let hub = kd_karmadue::open(config, Arc::new(SystemClock), Arc::new(SystemRandom))?;
    runtime
        .block_on(kd_karmadue::prepare(&hub))
        .map_err(|error| error.cause_text())?;
    hub.store.close();
    eprintln!(
        "imported the bundled snapshot in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(data)
}

fn open_store(data: &Path) -> Outcome<kd_core::store::Store> {
    Ok(kd_core::store::Store::open(
        &data.join("karmadue.sqlite"),
        Arc::new(SystemClock),
    )?)
}

/// The real catalog rows of `files` in a store, imported once (`target/kd-bench/real`); with
/// no files, the store an earlier `real` run left.
fn real_data(files: &[String]) -> Outcome<PathBuf> {
    let data = bench_root().join("real").join("data");
    if data.join("karmadue.sqlite").exists() {
        return Ok(data);
    }
    if files.is_empty() {
        return Err(
            "no real catalog yet: run `real FILE…` with the catalog-full files first".into(),
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let mut config = Config::new("127.0.0.1:0".parse()?, data.clone(), None);
    config.bundled_catalog = false;
    let hub = kd_karmadue::open(config, Arc::new(SystemClock), Arc::new(SystemRandom))?;
    for file in files {
        let started = Instant::now();
        let path = Path::new(file);
        let opened = std::fs::File::open(path).map_err(|error| format!("{file}: {error}"))?;
        let reader: Box<dyn std::io::BufRead> = if file.ends_with(".gz") {
            Box::new(std::io::BufReader::new(flate2::read::GzDecoder::new(
                opened,
            )))
        } else {
            Box::new(std::io::BufReader::new(opened))
        };
        let name = path
            .file_name()
            .map_or_else(String::new, |name| name.to_string_lossy().into_owned());
        let report = runtime
            .block_on(kd_karmadue::catalog::import::import_lines(
                &hub,
                &name,
                reader,
                |_| {},
            ))
            .map_err(|error| error.cause_text())?;
        let seconds = started.elapsed().as_secs_f64();
        eprintln!(
            "imported {file}: {} rows, {} bad, in {seconds:.0} s ({:.0} rows/s)",
            report.imported,
            report.bad.len(),
            report.lines as f64 / seconds.max(1e-9)
        );
    }
    hub.store.close();
    Ok(data)
}

/// The needs of [`NEEDS`] on the real rows of `files` (imported once), index in memory.
fn real(files: &[String]) -> Outcome<()> {
    let store = open_store(&real_data(files)?)?;
    let count = store.read_blocking(|conn| -> Result<i64, kd_core::store::StoreError> {
        Ok(conn.query_row("SELECT COUNT(*) FROM resources", [], |row| row.get(0))?)
    })?;
    println!("\n## Real catalog rows ({count} resources)\n");
    let index = SearchIndex::in_memory();
    store.read_blocking(|conn| -> Outcome<()> {
        let started = Instant::now();
        let (live, _) = index.current(conn).map_err(|error| error.cause_text())?;
        println!(
            "index in memory: built in {:.1} s ({} segments); peak RSS {} MB",
            started.elapsed().as_secs_f64(),
            live.searcher().segment_readers().len(),
            peak_rss_mb()
        );
        measure("real, memory, rank_page", 10, |need, offset| {
            search::rank_page(&live, index.analyzers(), &request(need, offset))
                .map(|_| ())
                .map_err(|error| error.message.into())
        })?;
        measure(
            "real, memory, discover_resources (with records and claims)",
            5,
            |need, offset| {
                search::discover(&index, conn, &request(need, offset))
                    .map(|_| ())
                    .map_err(|error| error.message.into())
            },
        )?;
        slowest(&live, &index)
    })
}

/// The slowest needs of [`NEEDS`] (best of three), with their totals.
fn slowest(live: &search::Live, index: &SearchIndex) -> Outcome<()> {
    let mut timed = Vec::new();
    for need in NEEDS {
        let request = request(Some(*need).filter(|need| !need.is_empty()), 0);
        let mut best = Duration::MAX;
        let mut total = 0;
        for _ in 0..3 {
            let started = Instant::now();
            let page = search::rank_page(live, index.analyzers(), &request)
                .map_err(|error| error.message)?;
            best = best.min(started.elapsed());
            total = page.total;
        }
        timed.push((best, *need, total));
    }
    timed.sort_by_key(|(time, _, _)| std::cmp::Reverse(*time));
    for (time, need, total) in timed.iter().take(8) {
        println!(
            "{:>8.2} ms  {total:>8} matches  {need:?}",
            time.as_secs_f64() * 1000.0
        );
    }
    Ok(())
}

/// A first page (or a later one) of 8 for `need`.
fn request(need: Option<&str>, offset: usize) -> Request {
    Request {
        need: need.map(str::to_owned),
        limit: 8,
        offset,
        include_demo: false,
    }
}

fn explain(data: &Path, needs: &[String]) -> Outcome<()> {
    let store = open_store(data)?;
    let index = SearchIndex::in_memory();
    store.read_blocking(|conn| -> Outcome<()> {
        let started = Instant::now();
        let (live, _) = index.current(conn).map_err(|error| error.cause_text())?;
        eprintln!("index built in {:.2} s", started.elapsed().as_secs_f64());
        if let Some(need) = needs
            .first()
            .filter(|_| std::env::var_os("KD_EXPLAIN_JSON").is_some())
        {
            let request = Request {
                need: Some(need.clone()),
                limit: 3,
                offset: 0,
                include_demo: false,
            };
            let answer = search::discover(&index, conn, &request).map_err(|error| error.message)?;
            println!("{}", serde_json::to_string_pretty(&answer)?);
        }
        for need in needs {
            let request = Request {
                need: Some(need.clone()),
                limit: 12,
                offset: 0,
                include_demo: false,
            };
            let page = search::rank_page(&live, index.analyzers(), &request)
                .map_err(|error| error.message)?;
            println!(
                "\n== {need:?}: total {}, unknown {:?}, fuzzy {:?}, exact name {}",
                page.total, page.unknown, page.fuzzy, page.exact_name
            );
            let words: Vec<String> = page
                .plan
                .concepts
                .iter()
                .map(|concept| {
                    let alternatives: Vec<&str> = concept
                        .alternatives
                        .iter()
                        .map(|alternative| alternative.stem.as_str())
                        .collect();
                    format!("{}={alternatives:?}", concept.label)
                })
                .collect();
            println!("   concepts {words:?} hints {:?}", page.plan.hints);
            for (rank, (hit, placement)) in page.hits.iter().enumerate() {
                let signals = hit.signals;
                println!(
                    "{:>3} {:<70} score {:>7.3} text {:>6.2} cov {:.2} pop {:.2}{}{}{}{}{}",
                    rank + 1,
                    hit.resource_id,
                    hit.score.score,
                    hit.score.text,
                    hit.score.coverage,
                    signals.popularity(),
                    if signals.curated() { " curated" } else { "" },
                    if signals.archived() { " archived" } else { "" },
                    if signals.risky() { " risky" } else { "" },
                    if signals.verified() { " verified" } else { "" },
                    if *placement == search::Placement::OwnerOverflow {
                        " (owner overflow)"
                    } else {
                        ""
                    },
                );
            }
        }
        Ok(())
    })
}

fn snapshot() -> Outcome<()> {
    let data = snapshot_data()?;
    let store = open_store(&data)?;
    let count = store.read_blocking(|conn| -> Result<i64, kd_core::store::StoreError> {
        Ok(conn.query_row("SELECT COUNT(*) FROM resources", [], |row| row.get(0))?)
    })?;
    println!("\n## Bundled snapshot ({count} resources)\n");
    for on_disk in [false, true] {
        let folder = bench_root().join("snapshot-index");
        if folder.exists() {
            std::fs::remove_dir_all(&folder)?;
        }
        let index = if on_disk {
            SearchIndex::on_disk(&folder)
        } else {
            SearchIndex::in_memory()
        };
        let place = if on_disk { "disk" } else { "memory" };
        store.read_blocking(|conn| -> Outcome<()> {
            let started = Instant::now();
            let (live, _) = index.current(conn).map_err(|error| error.cause_text())?;
            let build = started.elapsed();
            let segments = live.searcher().segment_readers().len();
            println!(
                "index in {place}: built in {:.2} s ({segments} segments){}",
                build.as_secs_f64(),
                size_note(on_disk, &folder)
            );
            measure(
                &format!("snapshot, {place}, rank_page"),
                20,
                |need, offset| {
                    let request = request(need, offset);
                    search::rank_page(&live, index.analyzers(), &request)
                        .map(|_| ())
                        .map_err(|error| error.message.into())
                },
            )?;
            measure(
                &format!("snapshot, {place}, discover (with records and claims)"),
                5,
                |need, offset| {
                    let request = request(need, offset);
                    search::discover(&index, conn, &request)
                        .map(|_| ())
                        .map_err(|error| error.message.into())
                },
            )?;
            Ok(())
        })?;
    }
    // Reopening a disk index: no rebuild when the store has not moved.
    let folder = bench_root().join("snapshot-index");
    let index = SearchIndex::on_disk(&folder);
    store.read_blocking(|conn| -> Outcome<()> {
        let started = Instant::now();
        let (_, freshness) = index.current(conn).map_err(|error| error.cause_text())?;
        println!(
            "reopening the disk index: {:.3} s ({freshness:?})",
            started.elapsed().as_secs_f64()
        );
        Ok(())
    })?;
    Ok(())
}

fn size_note(on_disk: bool, folder: &Path) -> String {
    if !on_disk {
        return String::new();
    }
    let bytes: u64 = std::fs::read_dir(folder)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|entry| entry.metadata().ok())
                .map(|meta| meta.len())
                .sum()
        })
        .unwrap_or(0);
    format!(", {:.1} MB on disk", bytes as f64 / 1e6)
}

/// Runs every need of [`NEEDS`] `rounds` times (first page, and page 3 for a third of them)
/// and prints p50 / p99 / max.
fn measure(
    label: &str,
    rounds: usize,
    mut run: impl FnMut(Option<&str>, usize) -> Outcome<()>,
) -> Outcome<()> {
    let queries: Vec<(Option<&str>, usize)> = NEEDS
        .iter()
        .enumerate()
        .map(|(index, need)| {
            (
                Some(*need).filter(|need| !need.is_empty()),
                if index % 3 == 0 { 16 } else { 0 },
            )
        })
        .collect();
    run_queries(label, rounds, &queries, &mut run)
}

fn run_queries(
    label: &str,
    rounds: usize,
    queries: &[(Option<&str>, usize)],
    run: &mut impl FnMut(Option<&str>, usize) -> Outcome<()>,
) -> Outcome<()> {
    for (need, offset) in queries {
        run(*need, *offset)?; // warm up
    }
    let mut times = Vec::with_capacity(rounds * queries.len());
    for _ in 0..rounds {
        for (need, offset) in queries {
            let started = Instant::now();
            run(*need, *offset)?;
            times.push(started.elapsed());
        }
    }
    report(label, &mut times);
    Ok(())
}

fn report(label: &str, times: &mut [Duration]) {
    times.sort_unstable();
    let at = |share: f64| {
        let index = ((times.len() as f64 * share).ceil() as usize).clamp(1, times.len()) - 1;
        times[index].as_secs_f64() * 1000.0
    };
    println!(
        "{label}: {} calls, p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        times.len(),
        at(0.50),
        at(0.99),
        at(1.0)
    );
}

fn peak_rss_mb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with("VmHWM:"))
                .and_then(|line| line.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb / 1024)
}
