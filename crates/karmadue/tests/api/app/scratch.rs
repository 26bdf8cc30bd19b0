//! Where test hubs keep their data: the scratch folder, the backend choice and the bundled
//! catalog template every TestApp::with_catalog copies.

use super::*;

/// The folder test data lives in: cargo's target tmp folder. The first call removes what
/// earlier runs left there (folders named after a process that is gone), so that apps a test
/// keeps for the whole run (a shared `static`) do not pile up across runs.
pub(super) fn scratch_root() -> &'static std::path::Path {
    static CLEANED: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    CLEANED.get_or_init(|| {
        let Ok(entries) = std::fs::read_dir(root) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let pid = name.strip_prefix("catalog-template-").or_else(|| {
                name.strip_prefix("app-")
                    .and_then(|rest| rest.split('-').next())
            });
            if let Some(pid) = pid
                && pid != std::process::id().to_string()
                && !std::path::Path::new("/proc").join(pid).exists()
            {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    });
    root
}

/// The backend this run's hubs use: `KD_TEST_DATABASE=postgres` runs every hub of the suite
/// on a fresh database of the test PostgreSQL server (`KD_TEST_PG_URL`), SQLite otherwise.
pub fn on_postgres() -> bool {
    kd_core::db::testing::backend() == kd_core::db::Backend::Postgres
}

/// The bundled catalog, loaded once per test process and copied by [`TestApp::with_catalog`]
/// (loading the snapshot takes seconds; copying it does not): a data folder in cargo's target
/// tmp folder under this process's id (folders left by earlier runs whose process is gone are
/// removed first), and on PostgreSQL a template database.
pub(super) struct CatalogTemplate {
    pub(super) data: std::path::PathBuf,
    pub(super) postgres: Option<String>,
}

pub(super) fn catalog_template() -> &'static CatalogTemplate {
    static TEMPLATE: std::sync::OnceLock<CatalogTemplate> = std::sync::OnceLock::new();
    TEMPLATE.get_or_init(|| {
        let root = scratch_root();
        let dir = root.join(format!("catalog-template-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let mut config = Config::new("127.0.0.1:0".parse().unwrap(), dir.join("data"), None);
        config.bundled_catalog = true;
        let postgres = on_postgres().then(|| {
            let name = kd_core::db::testing::fresh_name();
            let admin = kd_core::db::testing::admin_url().unwrap();
            config.database_url = Some(kd_core::config::Secret::new(
                kd_core::db::create_postgres_database(&admin, &name, None).unwrap(),
            ));
            name
        });
        let hub = kd_karmadue::open(
            config,
            Arc::new(ManualClock::new(START_MS)),
            Arc::new(SeededRandom::new(1)),
        )
        .unwrap();
        let report = runtime
            .block_on(kd_karmadue::prepare(&hub))
            .unwrap()
            .unwrap();
        assert!(report.report.bad.is_empty(), "{:?}", report.report.bad);
        hub.store.close();
        drop(hub);
        drop(runtime);
        if postgres.is_none() {
            let conn =
                kd_core::db::Connection::open_sqlite(dir.join("data").join("karmadue.sqlite"))
                    .unwrap();
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                .unwrap();
        }
        CatalogTemplate {
            data: dir.join("data"),
            postgres,
        }
    })
}

/// A copy of the catalog template database (PostgreSQL copies a database only while nobody
/// is connected to it: the template's last connections are closed first).
pub(super) fn copy_postgres_template(template: &str) -> String {
    let admin = kd_core::db::testing::admin_url().unwrap();
    let conn =
        kd_core::db::Connection::open(&kd_core::db::Location::Postgres(admin.clone())).unwrap();
    for _ in 0..50 {
        conn.query_row(
            "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = ?1 AND pid <> pg_backend_pid()",
            [template],
            |_| Ok(()),
        )
        .unwrap();
        match kd_core::db::create_postgres_database(
            &admin,
            &kd_core::db::testing::fresh_name(),
            Some(template),
        ) {
            Ok(url) => return url,
            Err(error) if error.to_string().contains("being accessed") => {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            Err(error) => panic!("copying the catalog template: {error}"),
        }
    }
    panic!("the catalog template stayed in use")
}
