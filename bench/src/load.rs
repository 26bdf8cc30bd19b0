//! The load generator: registers bench agents, pre-signs `rename_agent` calls, and drives C
//! keep-alive connections for a fixed time, counting only responses that complete inside the
//! timed window (after the warm-up).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use ed25519_dalek::{Signer, SigningKey};
use serde_json::{Value, json};

use crate::cpu;
use crate::http::{self, Conn};

/// Letters that fold to themselves in the hub's name reservation (no `r`, `n`, `v`, `i`, `l`, no
/// digits), so codes built from them stay apart after folding.
const CODE_LETTERS: &[u8] = b"bcdfghjkmpqstwxz";

/// A registered bench agent.
pub struct Agent {
    /// Its id.
    pub agent_id: String,
    /// Its key.
    pub key: SigningKey,
    /// The two names it alternates between.
    pub names: [String; 2],
    /// Which of `names` it holds now.
    pub current: usize,
}

/// A deterministic key for bench agent `index`.
pub fn agent_key(index: usize) -> SigningKey {
    let mut seed = [0x42u8; 32];
    seed[..8].copy_from_slice(&(index as u64).to_le_bytes());
    SigningKey::from_bytes(&seed)
}

/// The two names of agent `index`: "Bench Agent cd cd A" / "... B". The code appears twice, so
/// two agents' names are at least two edits apart after folding (no clash), while an agent's
/// own A and B are one edit apart (allowed for your own name).
pub fn agent_names(index: usize) -> [String; 2] {
    let mut code = Vec::new();
    let mut rest = index;
    loop {
        code.push(CODE_LETTERS[rest % CODE_LETTERS.len()]);
        rest /= CODE_LETTERS.len();
        if rest == 0 && code.len() >= 2 {
            break;
        }
    }
    let code = String::from_utf8_lossy(&code).into_owned();
    [
        format!("Bench Agent {code} {code} A"),
        format!("Bench Agent {code} {code} B"),
    ]
}

/// Registers `count` agents (challenge, then `register_agent`), sequentially.
///
/// # Errors
/// When a registration is refused or the server misbehaves.
pub async fn register_agents(addr: SocketAddr, count: usize) -> anyhow::Result<Vec<Agent>> {
    let host = addr.to_string();
    let mut conn = Conn::connect(addr).await?;
    let mut agents = Vec::with_capacity(count);
    for index in 0..count {
        let key = agent_key(index);
        let names = agent_names(index);
        let challenge = call(&mut conn, &host, "register_challenge", &json!({})).await?;
        let challenge_id = text_at(&challenge, "challenge_id")?;
        let payload = text_at(&challenge, "payload")?;
        let signature = key.sign(payload.as_bytes());
        let registered = call(
            &mut conn,
            &host,
            "register_agent",
            &json!({
                "name": names[0],
                "platform": "kd-bench",
                "public_key": kd_protocol::b64::encode_url(key.verifying_key().as_bytes()),
                "challenge_id": challenge_id,
                "signature": kd_protocol::b64::encode_url(&signature.to_bytes()),
            }),
        )
        .await?;
        agents.push(Agent {
            agent_id: text_at(&registered, "agent_id")?,
            key,
            names,
            current: 0,
        });
    }
    Ok(agents)
}

fn text_at(data: &Value, field: &str) -> anyhow::Result<String> {
    data[field]
        .as_str()
        .map(str::to_owned)
        .with_context(|| format!("no {field} in {data}"))
}

/// An unsigned `tools/call`; returns `structuredContent.data` or fails with the refusal.
async fn call(conn: &mut Conn, host: &str, tool: &str, arguments: &Value) -> anyhow::Result<Value> {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": tool, "arguments": arguments },
    })
    .to_string();
    let response = conn
        .round_trip(&http::mcp_request(host, &body, &[]))
        .await?;
    let status = response.status;
    let message: Value = serde_json::from_slice(response.body)
        .with_context(|| format!("{tool}: HTTP {status}, body not JSON"))?;
    let structured = &message["result"]["structuredContent"];
    if structured["ok"] != true {
        bail!("{tool} refused: {message}");
    }
    Ok(structured["data"].clone())
}

/// One pre-built request.
pub struct Prepared {
    bytes: Vec<u8>,
    /// For a rename: the agent (index into the agent list) and the name index it renames to.
    rename: Option<(usize, usize)>,
}

/// The requests of one connection.
pub struct Plan {
    requests: Vec<Prepared>,
    /// Cycle through `requests` (reads) instead of using each once (signed writes).
    cycle: bool,
    /// What a successful response body holds: `"isError":false` for a tool call, `"result"`
    /// for a JSON-RPC `ping`.
    ok_marker: &'static [u8],
}

/// The success marker of a `tools/call` response.
const TOOL_OK: &[u8] = br#""isError":false"#;

/// Pre-signs `per_connection` `rename_agent` calls for each of `connections` connections. Each
/// agent belongs to exactly one connection, so its renames are sequential and alternate
/// between its two names (each one succeeds). `nonce_base` keeps nonces unique across plans.
/// Signing runs on all cores; the timestamp is now, so the plan must be used within 300 s.
pub fn signed_write_plans(
    host: &str,
    agents: &[Agent],
    connections: usize,
    per_connection: usize,
    nonce_base: u64,
) -> Vec<Plan> {
    let timestamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
        .to_string();
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let connection_ids: Vec<usize> = (0..connections).collect();
    let chunk = connections.div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = connection_ids
            .chunks(chunk)
            .map(|ids| {
                let timestamp = timestamp.as_str();
                scope.spawn(move || {
                    ids.iter()
                        .map(|&connection| {
                            write_plan(
                                host,
                                agents,
                                connections,
                                connection,
                                per_connection,
                                nonce_base,
                                timestamp,
                            )
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().unwrap_or_default())
            .collect()
    })
}

fn write_plan(
    host: &str,
    agents: &[Agent],
    connections: usize,
    connection: usize,
    count: usize,
    nonce_base: u64,
    timestamp: &str,
) -> Plan {
    let timestamp_secs: i64 = timestamp.parse().unwrap_or_default();
    let owned: Vec<usize> = (connection..agents.len()).step_by(connections).collect();
    let mut holds: BTreeMap<usize, usize> = owned.iter().map(|&a| (a, agents[a].current)).collect();
    let mut requests = Vec::with_capacity(count);
    for sequence in 0..count {
        let index = owned[sequence % owned.len()];
        let agent = &agents[index];
        let slot = holds.entry(index).or_default();
        let next = 1 - *slot;
        *slot = next;
        let arguments =
            json!({ "agent_id": agent.agent_id, "name": agent.names[next] }).to_string();
        let nonce = format!(
            "kdbench-{:016}",
            nonce_base + (connection * count + sequence) as u64
        );
        let Ok(canonical) = kd_protocol::canonical::canonical_text(&arguments) else {
            continue;
        };
        let text = kd_protocol::signing::text_to_sign(
            "rename_agent",
            &agent.agent_id,
            timestamp_secs,
            &nonce,
            &kd_protocol::canonical::arguments_hash(&canonical),
        );
        let signature = kd_protocol::b64::encode_url(&agent.key.sign(text.as_bytes()).to_bytes());
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{sequence},"method":"tools/call","params":{{"name":"rename_agent","arguments":{arguments}}}}}"#
        );
        requests.push(Prepared {
            bytes: http::mcp_request(
                host,
                &body,
                &[
                    ("x-kd-signature", &signature),
                    ("x-kd-timestamp", timestamp),
                    ("x-kd-nonce", &nonce),
                ],
            ),
            rename: Some((index, next)),
        });
    }
    Plan {
        requests,
        cycle: false,
        ok_marker: TOOL_OK,
    }
}

/// `verify_agent` by id, each connection cycling through every agent from its own offset.
pub fn read_plans(host: &str, agents: &[Agent], connections: usize) -> Vec<Plan> {
    (0..connections)
        .map(|connection| Plan {
            requests: (0..agents.len())
                .map(|k| {
                    let agent = &agents[(connection + k) % agents.len()];
                    let body = format!(
                        r#"{{"jsonrpc":"2.0","id":{k},"method":"tools/call","params":{{"name":"verify_agent","arguments":{{"agent_id":"{}"}}}}}}"#,
                        agent.agent_id
                    );
                    Prepared {
                        bytes: http::mcp_request(host, &body, &[]),
                        rename: None,
                    }
                })
                .collect(),
            cycle: true,
            ok_marker: TOOL_OK,
        })
        .collect()
}

/// The catalog row the `get_resource` phase reads (imported by [`import_resource`]).
pub const BENCH_RESOURCE: &str = "kd:res:npm:kd-bench-resource";

/// Imports the one catalog row the `get_resource` phase reads: an npm package with a
/// description, a version and downloads, as the bundled catalog's rows have.
pub async fn import_resource(hub: &kd_karmadue::Hub) -> anyhow::Result<()> {
    let row = serde_json::json!({
        "id": BENCH_RESOURCE, "locator": "npm:kd-bench-resource", "title": "kd-bench-resource",
        "type": "mcp_server", "version": "1.4.2", "downloads_a_month": 48_213,
        "description": "A filesystem MCP server: read, write and search files under one root, with an allow list of folders.",
    });
    let report = kd_karmadue::catalog::import::import_lines(
        hub,
        "kd-bench",
        std::io::Cursor::new(row.to_string()),
        |_| {},
    )
    .await
    .map_err(|error| anyhow::anyhow!("import: {}", error.message))?;
    anyhow::ensure!(
        report.bad.is_empty(),
        "import refused the bench row: {:?}",
        report.bad
    );
    Ok(())
}

/// `get_resource` of `resource_id`, the same request on every connection.
pub fn resource_plans(host: &str, connections: usize, resource_id: &str) -> Vec<Plan> {
    (0..connections)
        .map(|_| Plan {
            requests: (0..64)
                .map(|k| {
                    let body = format!(
                        r#"{{"jsonrpc":"2.0","id":{k},"method":"tools/call","params":{{"name":"get_resource","arguments":{{"resource_id":"{resource_id}"}}}}}}"#
                    );
                    Prepared {
                        bytes: http::mcp_request(host, &body, &[]),
                        rename: None,
                    }
                })
                .collect(),
            cycle: true,
            ok_marker: TOOL_OK,
        })
        .collect()
}

/// The transport floor: the JSON-RPC `ping` (no tool, no arguments, no store, no signature)
/// over the same connections and client as the tool calls, POSTed to `path`. Against the hub
/// it costs what every MCP request costs before any tool work (HTTP/1.1, the middleware, the
/// JSON-RPC envelope, the client); against the bare server (`floor::serve`) what the HTTP
/// stack alone costs.
pub fn ping_plans(host: &str, connections: usize, path: &str) -> Vec<Plan> {
    (0..connections)
        .map(|_| Plan {
            requests: (0..64)
                .map(|k| Prepared {
                    bytes: http::post(
                        host,
                        path,
                        &format!(r#"{{"jsonrpc":"2.0","id":{k},"method":"ping"}}"#),
                        &[],
                    ),
                    rename: None,
                })
                .collect(),
            cycle: true,
            ok_marker: br#""result""#,
        })
        .collect()
}

/// What one timed run measured.
#[derive(Debug, Default)]
pub struct PhaseResult {
    /// Length of the timed window, seconds.
    pub seconds: f64,
    /// Successful calls completed inside the window.
    pub ok: u64,
    /// Refused or failed calls completed inside the window.
    pub errors: u64,
    /// Successful calls over the whole run (warm-up and stragglers included).
    pub ok_total: u64,
    /// Refused or failed calls over the whole run.
    pub errors_total: u64,
    /// Latencies (microseconds) of calls completed inside the window, sorted.
    pub latencies_us: Vec<u32>,
    /// Refusal codes seen over the whole run.
    pub error_codes: BTreeMap<String, u64>,
    /// Some connection ran out of pre-signed requests before the end.
    pub exhausted: bool,
    /// CPU use inside the window.
    pub cpu: cpu::Usage,
    /// Renames that succeeded: (agent, name index), in order per agent.
    pub renamed: Vec<(usize, usize)>,
}

impl PhaseResult {
    /// Successful calls per second in the window.
    pub fn rate(&self) -> f64 {
        if self.seconds > 0.0 {
            self.ok as f64 / self.seconds
        } else {
            0.0
        }
    }

    /// The `q` quantile of the window's latencies, milliseconds.
    pub fn quantile_ms(&self, q: f64) -> f64 {
        if self.latencies_us.is_empty() {
            return 0.0;
        }
        let rank = ((self.latencies_us.len() - 1) as f64 * q).round() as usize;
        f64::from(self.latencies_us[rank.min(self.latencies_us.len() - 1)]) / 1000.0
    }
}

#[derive(Default)]
struct ConnResult {
    ok: u64,
    errors: u64,
    ok_total: u64,
    errors_total: u64,
    latencies_us: Vec<u32>,
    error_codes: BTreeMap<String, u64>,
    exhausted: bool,
    renamed: Vec<(usize, usize)>,
}

/// Drives every plan on its own connection: `warmup`, then a timed window of `duration`.
///
/// # Errors
/// When a connection fails.
pub async fn run(
    addr: SocketAddr,
    plans: Vec<Plan>,
    warmup: Duration,
    duration: Duration,
) -> anyhow::Result<PhaseResult> {
    run_on(&[addr], plans, warmup, duration).await
}

/// [`run`] with the load split between hubs: plan `i` connects to `addrs[i % addrs.len()]`
/// (hubs on one database; every loopback hub accepts the plans' `Host`).
///
/// # Errors
/// When a connection fails, or `addrs` is empty.
pub async fn run_on(
    addrs: &[SocketAddr],
    plans: Vec<Plan>,
    warmup: Duration,
    duration: Duration,
) -> anyhow::Result<PhaseResult> {
    if addrs.is_empty() {
        bail!("no hub to send the load to");
    }
    let mut conns = Vec::with_capacity(plans.len());
    for index in 0..plans.len() {
        conns.push(Conn::connect(addrs[index % addrs.len()]).await?);
    }
    let start = Instant::now();
    let window_start = start + warmup;
    let end = window_start + duration;
    let sampler = tokio::spawn(async move {
        tokio::time::sleep_until(window_start.into()).await;
        let before = cpu::Snapshot::take();
        tokio::time::sleep_until(end.into()).await;
        cpu::Snapshot::take().since(&before)
    });
    let tasks: Vec<_> = plans
        .into_iter()
        .zip(conns)
        .map(|(plan, conn)| tokio::spawn(drive(conn, plan, window_start, end)))
        .collect();
    let mut result = PhaseResult {
        seconds: duration.as_secs_f64(),
        ..PhaseResult::default()
    };
    for task in tasks {
        let conn = task.await??;
        result.ok += conn.ok;
        result.errors += conn.errors;
        result.ok_total += conn.ok_total;
        result.errors_total += conn.errors_total;
        result.latencies_us.extend(conn.latencies_us);
        for (code, n) in conn.error_codes {
            *result.error_codes.entry(code).or_default() += n;
        }
        result.exhausted |= conn.exhausted;
        result.renamed.extend(conn.renamed);
    }
    result.cpu = sampler.await?;
    result.latencies_us.sort_unstable();
    Ok(result)
}

async fn drive(
    mut conn: Conn,
    plan: Plan,
    window_start: Instant,
    end: Instant,
) -> anyhow::Result<ConnResult> {
    let mut result = ConnResult {
        latencies_us: Vec::with_capacity(64 * 1024),
        ..ConnResult::default()
    };
    let mut index = 0usize;
    loop {
        if Instant::now() >= end {
            break;
        }
        let prepared = if plan.cycle {
            plan.requests.get(index % plan.requests.len().max(1))
        } else {
            plan.requests.get(index)
        };
        let Some(prepared) = prepared else {
            result.exhausted = true;
            break;
        };
        index += 1;
        let sent = Instant::now();
        let response = conn.round_trip(&prepared.bytes).await?;
        let done = Instant::now();
        let ok = response.status == 200 && http::find(response.body, plan.ok_marker).is_some();
        let in_window = done >= window_start && done <= end;
        if ok {
            result.ok_total += 1;
            if let Some(rename) = prepared.rename {
                result.renamed.push(rename);
            }
        } else {
            result.errors_total += 1;
            *result
                .error_codes
                .entry(error_code(response.status, response.body))
                .or_default() += 1;
        }
        if in_window {
            if ok {
                result.ok += 1;
            } else {
                result.errors += 1;
            }
            let micros = done.duration_since(sent).as_micros();
            result
                .latencies_us
                .push(u32::try_from(micros).unwrap_or(u32::MAX));
        }
    }
    Ok(result)
}

/// The refusal code of a failed call (`structuredContent.error.code`), or the HTTP status.
fn error_code(status: u16, body: &[u8]) -> String {
    let marker = br#""code":""#;
    http::find(body, marker)
        .and_then(|at| {
            let rest = &body[at + marker.len()..];
            let len = rest.iter().position(|&b| b == b'"')?;
            Some(String::from_utf8_lossy(&rest[..len]).into_owned())
        })
        .unwrap_or_else(|| format!("http {status}"))
}
