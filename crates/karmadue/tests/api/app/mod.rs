//! `TestApp`: a hub on a loopback port with a manual clock and seeded randomness, plus the
//! client calls tests need (MCP, REST, signed calls, log length).

use std::sync::Arc;

use ed25519_dalek::{Signer, SigningKey};
use kd_core::clock::{Clock, ManualClock};
use kd_core::config::Config;
use kd_core::random::SeededRandom;
use kd_karmadue::Hub;
use kd_protocol::b64;
use serde_json::{Value, json};

/// The clock's start: 2026-10-11T06:26:40Z (the spec's worked-example timestamp).
pub const START_MS: i64 = 1_791_700_000_000;

pub struct TestApp {
    pub base: String,
    pub clock: ManualClock,
    pub hub: Arc<Hub>,
    http: ureq::Agent,
    /// The PostgreSQL database this app's data folder owns, dropped with the app (a
    /// PostgreSQL pass of the suite would otherwise leave some 200 databases on the server).
    scratch_database: Option<String>,
    /// Why this test wrote projection rows itself, behind the log (a fixture no tool writes):
    /// set, the rebuild comparison at drop is skipped for this hub (the log check still runs).
    behind_the_log: std::sync::OnceLock<&'static str>,
    _dir: tempfile::TempDir,
    _runtime: tokio::runtime::Runtime,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        // A hub opened on another app's PostgreSQL database (the multi-process tests) leaves
        // the log check to the app that owns the database, which may already have dropped it.
        let shares_a_database = on_postgres() && self.scratch_database.is_none();
        if !std::thread::panicking() && !shares_a_database {
            self.check_log();
        }
        if let (Some(name), Some(admin)) = (
            self.scratch_database.take(),
            kd_core::db::testing::admin_url(),
        ) {
            self.hub.store.close();
            let _ = kd_core::db::drop_postgres_database(&admin, &name);
        }
    }
}

pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub text: String,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text)
            .unwrap_or_else(|error| panic!("not JSON ({error}): {}", self.text))
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// A registered test agent and its key.
pub struct Agent {
    pub agent_id: String,
    pub handle: String,
    pub key: SigningKey,
    pub registration: Value,
}

impl Agent {
    pub fn public_key(&self) -> String {
        b64::encode_url(self.key.verifying_key().as_bytes())
    }
}

impl TestApp {
    pub fn start() -> Self {
        Self::start_with(|_| {})
    }

    /// A hub whose catalog holds the bundled snapshot (and the demo fixtures), copied into the
    /// app's own temporary folder (removed with the app).
    pub fn with_catalog() -> Self {
        let template = catalog_template();
        Self::start_with(move |config| {
            let data = &config.data_dir;
            std::fs::create_dir_all(data.join("keys")).unwrap();
            match &template.postgres {
                Some(name) => {
                    config.database_url =
                        Some(kd_core::config::Secret::new(copy_postgres_template(name)));
                }
                None => {
                    std::fs::copy(
                        template.data.join("karmadue.sqlite"),
                        data.join("karmadue.sqlite"),
                    )
                    .unwrap();
                }
            }
            // The server keys the template's database was made with (and pinned).
            for entry in std::fs::read_dir(template.data.join("keys")).unwrap() {
                let path = entry.unwrap().path();
                std::fs::copy(&path, data.join("keys").join(path.file_name().unwrap())).unwrap();
            }
        })
    }

    pub fn start_with(adjust: impl FnOnce(&mut Config)) -> Self {
        let dir = tempfile::Builder::new()
            .prefix(&format!("app-{}-", std::process::id()))
            .tempdir_in(scratch_root())
            .unwrap();
        let (runtime, listener, mut config) = runtime_and_config(dir.path());
        let addr = config.listen;
        // Tests that are not about the per-minute limits make many calls from one address
        // at one instant; they get the same table with roomier limits. The limit tests
        // (standing.rs) put the default table back.
        config.access_tiers = kd_core::tiers::AccessTiers::default().scaled(1000);
        adjust(&mut config);
        if on_postgres() && config.database_url.is_none() {
            // A hub restarted on the same data folder (a restart test) finds its database
            // again, as a SQLite hub finds its file.
            let remembered = config.data_dir.join("test-database-url");
            let url = std::fs::read_to_string(&remembered).unwrap_or_else(|_| {
                let url = kd_core::db::testing::scratch_postgres().unwrap();
                std::fs::create_dir_all(&config.data_dir).unwrap();
                std::fs::write(&remembered, &url).unwrap();
                url
            });
            config.database_url = Some(kd_core::config::Secret::new(url));
        }
        // A database is this app's to drop when its data folder is the app's own (a restart
        // test that hands two apps one folder keeps it).
        let scratch_database = config
            .database_url
            .as_ref()
            .filter(|_| on_postgres() && config.data_dir.starts_with(dir.path()))
            .and_then(|url| {
                url.expose()
                    .rsplit('/')
                    .next()
                    .map(|tail| tail.split('?').next().unwrap_or(tail).to_owned())
            })
            .filter(|name| name.starts_with("kd_t_"));
        // Ronin's own address (`--ronin-listen`), bound here as `karmadue serve` binds it.
        let ronin_listener = config.ronin_listen.map(|address| {
            let listener = runtime
                .block_on(tokio::net::TcpListener::bind(address))
                .unwrap();
            config.ronin_listen = Some(listener.local_addr().unwrap());
            listener
        });
        let clock = ManualClock::new(START_MS);
        let hub = kd_karmadue::open(
            config,
            Arc::new(clock.clone()),
            Arc::new(SeededRandom::new(7)),
        )
        .unwrap();
        runtime.spawn(kd_karmadue::serve_with_ronin(
            listener,
            ronin_listener,
            Arc::clone(&hub),
            std::future::pending(),
        ));
        let http = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        Self {
            base: format!("http://{addr}"),
            clock,
            hub,
            http,
            scratch_database,
            behind_the_log: std::sync::OnceLock::new(),
            _dir: dir,
            _runtime: runtime,
        }
    }

    /// Any HTTP request.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        body: Option<&[u8]>,
        headers: &[(&str, &str)],
    ) -> Reply {
        self.request_to(&format!("{}{path}", self.base), method, body, headers)
    }

    /// Any HTTP request to a whole URL (another listen address of the hub's).
    pub fn request_to(
        &self,
        url: &str,
        method: &str,
        body: Option<&[u8]>,
        headers: &[(&str, &str)],
    ) -> Reply {
        let mut builder = ureq::http::Request::builder().method(method).uri(url);
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        let request = builder
            .body(body.map(<[u8]>::to_vec).unwrap_or_default())
            .unwrap();
        let mut response = self.http.run(request).unwrap();
        let headers = response
            .headers()
            .iter()
            .map(|(name, value)| {
                (
                    name.to_string(),
                    value.to_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap_or_default();
        Reply {
            status,
            headers,
            text,
        }
    }

    /// POSTs a raw body to the MCP endpoint.
    pub fn mcp_raw(&self, body: &str, headers: &[(&str, &str)]) -> Reply {
        let mut all = vec![
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
        ];
        all.extend_from_slice(headers);
        self.request("POST", "/functions/v1/mcp", Some(body.as_bytes()), &all)
    }

    /// A JSON-RPC request to the MCP endpoint; returns the whole reply message.
    pub fn rpc(&self, method: &str, params: Value) -> Value {
        let body =
            json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }).to_string();
        let reply = self.mcp_raw(&body, &[]);
        assert_eq!(reply.status, 200, "{}", reply.text);
        reply.json()
    }

    /// `tools/call` over MCP with the exact argument text; returns (structuredContent, isError).
    pub fn call_text(
        &self,
        tool: &str,
        arguments: &str,
        headers: &[(&str, &str)],
    ) -> (Value, bool) {
        let body = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{{\"name\":\"{tool}\",\"arguments\":{arguments}}}}}"
        );
        let reply = self.mcp_raw(&body, headers);
        assert_eq!(reply.status, 200, "{}", reply.text);
        let message = reply.json();
        let result = &message["result"];
        assert!(result.is_object(), "no result: {message}");
        let structured = result["structuredContent"].clone();
        let text: Value =
            serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(
            text, structured,
            "text content and structuredContent differ"
        );
        assert!(
            structured["request_id"]
                .as_str()
                .unwrap()
                .starts_with("req_")
        );
        (structured, result["isError"].as_bool().unwrap())
    }

    /// `tools/call` over MCP, unsigned.
    pub fn call(&self, tool: &str, arguments: Value) -> Value {
        self.call_text(tool, &arguments.to_string(), &[]).0
    }

    /// A REST call of a tool: (status, body).
    pub fn rest(&self, tool: &str, body: &str, headers: &[(&str, &str)]) -> (u16, Value) {
        let mut all = vec![("content-type", "application/json")];
        all.extend_from_slice(headers);
        let reply = self.request(
            "POST",
            &format!("/functions/v1/public-api/v1/tools/{tool}"),
            Some(body.as_bytes()),
            &all,
        );
        (reply.status, reply.json())
    }

    /// The kd-mcp-v1 headers for `arguments` (exact text), signed by `key`.
    pub fn sign(
        &self,
        key: &SigningKey,
        tool: &str,
        agent_id: &str,
        arguments: &str,
        nonce: &str,
    ) -> Vec<(String, String)> {
        let timestamp = self.clock.now_unix();
        sign_at(key, tool, agent_id, arguments, nonce, timestamp)
    }

    /// A signed MCP call with a fresh nonce.
    pub fn signed(&self, agent: &Agent, tool: &str, arguments: Value) -> Value {
        let text = arguments.to_string();
        let nonce = fresh_nonce();
        let headers = self.sign(&agent.key, tool, &agent.agent_id, &text, &nonce);
        let borrowed: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        self.call_text(tool, &text, &borrowed).0
    }

    /// Registers an agent named `name` with a fresh key (deterministic from `name`).
    pub fn register(&self, name: &str) -> Agent {
        let mut seed = [0u8; 32];
        for (index, byte) in name.bytes().enumerate() {
            seed[index % 32] ^= byte.wrapping_add(u8::try_from(index % 251).unwrap());
        }
        seed[31] ^= 0x5a;
        self.register_with_key(name, SigningKey::from_bytes(&seed))
    }

    pub fn register_with_key(&self, name: &str, key: SigningKey) -> Agent {
        let registration = self.try_register(name, &key, "test-suite");
        assert_eq!(registration["ok"], true, "{registration}");
        let data = &registration["data"];
        Agent {
            agent_id: data["agent_id"].as_str().unwrap().to_owned(),
            handle: data["handle"].as_str().unwrap().to_owned(),
            key,
            registration: data.clone(),
        }
    }

    pub fn challenge(&self) -> (String, String) {
        let challenge = self.call("register_challenge", json!({}));
        assert_eq!(challenge["ok"], true, "{challenge}");
        (
            challenge["data"]["challenge_id"]
                .as_str()
                .unwrap()
                .to_owned(),
            challenge["data"]["payload"].as_str().unwrap().to_owned(),
        )
    }

    pub fn try_register(&self, name: &str, key: &SigningKey, platform: &str) -> Value {
        let (challenge_id, payload) = self.challenge();
        self.call(
            "register_agent",
            json!({
                "name": name,
                "platform": platform,
                "public_key": b64::encode_url(key.verifying_key().as_bytes()),
                "challenge_id": challenge_id,
                "signature": b64::encode_url(&key.sign(payload.as_bytes()).to_bytes()),
            }),
        )
    }

    /// Gives `agent` the admission-passed stamp (90 days) through the stamps API, as passing
    /// the admission test does (tools of the admission-passed tier: publish_ask, posting).
    pub fn admit(&self, agent: &Agent) {
        self.admit_for(agent, 90 * 86_400_000);
    }

    /// Gives `agent` the admission-passed stamp for `lifetime_ms` from now.
    pub fn admit_for(&self, agent: &Agent, lifetime_ms: i64) {
        use kd_karmadue::standing::stamps::{self, ADMISSION_PASSED, NewStamp};
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let stamp_id = format!(
            "kdst_a{:023x}",
            NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        );
        let agent_id = agent.agent_id.clone();
        let expires = self.clock.now_ms() + lifetime_ms;
        self.block_on(self.hub.store.write(move |txn| {
            stamps::issue(
                txn,
                "hub",
                NewStamp {
                    stamp_id,
                    agent_id,
                    stamp: ADMISSION_PASSED,
                    expires_ms: Some(expires),
                    issuer: "hub".into(),
                    credential_id: None,
                    detail: json!({}),
                },
            )
        }))
        .unwrap()
        .unwrap();
    }

    /// Runs a future on the hub's runtime (for library calls such as `ledger::publish`).
    pub fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        self._runtime.block_on(future)
    }

    /// Rows in the event log.
    pub fn log_len(&self) -> i64 {
        self.hub
            .store
            .read_blocking(kd_core::eventlog::count)
            .unwrap()
    }

    /// Every row of the log is of a declared kind and its payload prints the same through its
    /// struct (`kd_karmadue::events`); with `KD_TEST_REBUILD=1`, `ledger rebuild` also finds
    /// the rebuilt projections equal to the live ones. Run when the app is dropped.
    /// This app shares another app's PostgreSQL database: it neither drops it nor checks its
    /// log at drop (the owner checks the whole shared log).
    pub fn sharing_the_database(mut self) -> Self {
        self.scratch_database = None;
        self
    }

    /// Marks this hub as holding projection rows the test wrote itself, `why` naming the
    /// fixture: `ledger rebuild` cannot find them in the log, so the drop check does not
    /// compare a rebuild (it still reads every row of the log back into its kind).
    pub fn writes_behind_the_log(&self, why: &'static str) {
        let _ = self.behind_the_log.set(why);
    }

    fn check_log(&self) {
        let rebuild = std::env::var("KD_TEST_REBUILD").is_ok_and(|value| value == "1")
            && self.behind_the_log.get().is_none();
        let scratch = tempfile::tempdir_in(scratch_root()).unwrap();
        let result = self.hub.store.read_blocking(move |conn| {
            let mut after = 0;
            loop {
                let rows = kd_core::eventlog::rows_after(conn, after, 5000)?;
                let Some(last) = rows.last() else { break };
                after = last.seq;
                for row in &rows {
                    let recoded = kd_karmadue::kinds::recode(&row.kind, &row.payload);
                    match recoded {
                        Some(Ok(text)) if text == row.payload => {}
                        other => {
                            return Ok(Err(format!(
                                "row {} ({}): {other:?} for {}",
                                row.seq, row.kind, row.payload
                            )));
                        }
                    }
                }
            }
            if !rebuild {
                return Ok(Ok(()));
            }
            let differences = kd_karmadue::rebuild::rebuild(conn, scratch.path(), &mut |_| {})
                .map_err(|error| kd_core::store::StoreError::Invalid(error.to_string()))?;
            Ok(if differences.is_empty() {
                Ok(())
            } else {
                Err(differences
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("\n"))
            })
        });
        match result {
            Ok(Ok(())) | Err(kd_core::store::StoreError::Closed) => {}
            Ok(Err(problem)) => panic!("log check at drop: {problem}"),
            Err(error) => panic!("checking the log: {error}"),
        }
    }

    /// The whole chain verifies.
    pub fn assert_chain_ok(&self) {
        let report = self
            .hub
            .store
            .read_blocking(kd_core::eventlog::verify_chain)
            .unwrap();
        assert!(report.is_ok(), "{report:?}");
    }
}

/// kd-mcp-v1 headers at an explicit timestamp.
pub fn sign_at(
    key: &SigningKey,
    tool: &str,
    agent_id: &str,
    arguments: &str,
    nonce: &str,
    timestamp: i64,
) -> Vec<(String, String)> {
    let canonical = kd_protocol::canonical::canonical_text(arguments).unwrap();
    let text = kd_protocol::signing::text_to_sign(
        tool,
        agent_id,
        timestamp,
        nonce,
        &kd_protocol::canonical::arguments_hash(&canonical),
    );
    vec![
        (
            "x-kd-signature".into(),
            b64::encode_url(&key.sign(text.as_bytes()).to_bytes()),
        ),
        ("x-kd-timestamp".into(), timestamp.to_string()),
        ("x-kd-nonce".into(), nonce.to_owned()),
    ]
}

pub fn fresh_nonce() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    format!("test-nonce-{:012}", COUNTER.fetch_add(1, Ordering::SeqCst))
}

/// A two-worker runtime, a listener on a free loopback port, and the hub's configuration for
/// it (data under `dir/data`, no bundled catalog).
pub fn runtime_and_config(
    dir: &std::path::Path,
) -> (tokio::runtime::Runtime, tokio::net::TcpListener, Config) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let mut config = Config::new(addr, dir.join("data"), None);
    config.bundled_catalog = false;
    (runtime, listener, config)
}

mod browser;

pub use browser::{Browser, hidden, urlencode};

mod scratch;

pub use scratch::on_postgres;
use scratch::{catalog_template, copy_postgres_template, scratch_root};
