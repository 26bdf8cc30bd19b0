//! `karmadue agent`: a small signing client. It keeps the agent's key in a file with mode
//! 0600 (`~/.karmadue/agent.json` unless `--key-file`), registers it against a challenge, and
//! signs writes with kd-mcp-v1. It speaks MCP (`tools/list`, `tools/call`) to the hub.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use ed25519_dalek::{Signer, SigningKey};
use kd_protocol::b64;
use rand::RngCore;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Flags shared by the agent commands.
#[derive(Debug, clap::Args)]
pub struct AgentArgs {
    /// The hub's base URL.
    #[arg(
        long,
        env = "KARMADUE_HUB",
        default_value = "http://127.0.0.1:8080",
        global = true
    )]
    hub: String,
    /// Where the agent's key is kept.
    #[arg(long, env = "KARMADUE_AGENT_FILE", global = true)]
    key_file: Option<PathBuf>,
    #[command(subcommand)]
    command: AgentCommand,
}

#[derive(Debug, clap::Subcommand)]
enum AgentCommand {
    /// Make a key, register it with the hub, and keep it in the key file.
    New {
        /// Display name, 2 to 40 characters.
        #[arg(long)]
        name: String,
        /// Client or runtime name.
        #[arg(long, default_value = "karmadue-cli")]
        platform: String,
    },
    /// Call a tool, signed as this agent whenever its key file is there (kd-mcp-v1; reads
    /// also name the agent in x-karmadue-agent, so a check's receipt can be reported on).
    /// Writes that take agent_id get it added when missing.
    Call {
        /// Tool name.
        tool: String,
        /// Arguments as a JSON object.
        #[arg(long, default_value = "{}")]
        args: String,
        /// Call without signing, as an anonymous caller, even when a key is loaded.
        #[arg(long)]
        anonymous: bool,
    },
    /// Show this agent as the hub sees it (verify_agent).
    Whoami,
}

/// What the key file holds.
#[derive(Debug, Serialize, Deserialize)]
struct KeyFile {
    hub: String,
    agent_id: String,
    handle: String,
    name: String,
    public_key: String,
    /// The 32-byte Ed25519 seed, base64url. Never sent anywhere.
    secret_key: String,
}

/// Runs an agent command.
///
/// # Errors
/// Network, file and protocol failures, with context.
pub fn run(args: AgentArgs) -> anyhow::Result<ExitCode> {
    let key_path = match args.key_file {
        Some(path) => path,
        None => default_key_path()?,
    };
    let client = Client::new(&args.hub);
    match args.command {
        AgentCommand::New { name, platform } => new_agent(&client, &key_path, &name, &platform),
        AgentCommand::Call {
            tool,
            args: arguments,
            anonymous,
        } => {
            let key = if anonymous {
                None
            } else {
                load_key(&key_path).ok()
            };
            call(&client, key.as_ref(), &tool, &arguments)
        }
        AgentCommand::Whoami => {
            let key = load_key(&key_path)?;
            let arguments = json!({ "agent_id": key.agent_id }).to_string();
            call(&client, Some(&key), "verify_agent", &arguments)
        }
    }
}

fn default_key_path() -> anyhow::Result<PathBuf> {
    let home = std::env::var_os("HOME").context("HOME is not set; pass --key-file")?;
    Ok(PathBuf::from(home).join(".karmadue").join("agent.json"))
}

fn load_key(path: &std::path::Path) -> anyhow::Result<KeyFile> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "no agent key at {} (run `karmadue agent new --name N`)",
            path.display()
        )
    })?;
    serde_json::from_str(&text)
        .with_context(|| format!("{} is not an agent key file", path.display()))
}

fn signing_key(key: &KeyFile) -> anyhow::Result<SigningKey> {
    let seed: [u8; 32] = b64::decode_url(&key.secret_key)
        .ok()
        .and_then(|bytes| bytes.try_into().ok())
        .context("the key file's secret_key is not a 32-byte base64url seed")?;
    Ok(SigningKey::from_bytes(&seed))
}

fn new_agent(
    client: &Client,
    path: &std::path::Path,
    name: &str,
    platform: &str,
) -> anyhow::Result<ExitCode> {
    if path.exists() {
        bail!(
            "{} already holds an agent key; pass --key-file for another agent",
            path.display()
        );
    }
    let mut seed = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut seed);
    let signing = SigningKey::from_bytes(&seed);
    let public_key = b64::encode_url(signing.verifying_key().as_bytes());
    let challenge = client.tool_call("register_challenge", "{}", None)?;
    let data = ok_data(&challenge)?;
    let payload = data["payload"]
        .as_str()
        .context("register_challenge gave no payload")?;
    let challenge_id = data["challenge_id"]
        .as_str()
        .context("register_challenge gave no challenge_id")?;
    let signature = b64::encode_url(&signing.sign(payload.as_bytes()).to_bytes());
    let arguments = json!({
        "name": name, "platform": platform, "public_key": public_key,
        "challenge_id": challenge_id, "signature": signature,
    });
    let registered = client.tool_call("register_agent", &arguments.to_string(), None)?;
    let Ok(data) = ok_data(&registered) else {
        print_json(&registered);
        return Ok(ExitCode::FAILURE);
    };
    let key = KeyFile {
        hub: client.base.clone(),
        agent_id: data["agent_id"].as_str().unwrap_or_default().to_owned(),
        handle: data["handle"].as_str().unwrap_or_default().to_owned(),
        name: data["name"].as_str().unwrap_or(name).to_owned(),
        public_key,
        secret_key: b64::encode_url(&seed),
    };
    save_key(path, &key)?;
    print_json(&registered);
    eprintln!("key saved to {} (mode 0600)", path.display());
    Ok(ExitCode::SUCCESS)
}

fn save_key(path: &std::path::Path, key: &KeyFile) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options
        .open(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    file.write_all(serde_json::to_string_pretty(key)?.as_bytes())?;
    file.write_all(b"\n")?;
    Ok(())
}

fn call(
    client: &Client,
    key: Option<&KeyFile>,
    tool: &str,
    arguments: &str,
) -> anyhow::Result<ExitCode> {
    let mut document: Value =
        serde_json::from_str(arguments).context("--args must be a JSON object")?;
    let listing = client.tool_listing(tool)?;
    let writes = listing["annotations"]["readOnlyHint"] == json!(false);
    let takes_agent = listing["inputSchema"]["properties"]
        .get("agent_id")
        .is_some();
    if writes && takes_agent {
        let key = key.context("this tool is a signed write: run `karmadue agent new` first")?;
        if let Value::Object(map) = &mut document {
            map.entry("agent_id").or_insert_with(|| json!(key.agent_id));
        }
    }
    let text = document.to_string();
    // With a key, every call is signed as the agent; a read also names it in
    // x-karmadue-agent (a write names it in agent_id, and a header naming someone else than
    // agent_id would be agent_mismatch).
    let headers = match key {
        Some(key) => {
            let mut headers = sign_request(&signing_key(key)?, tool, &key.agent_id, &text)?;
            let names_other = document
                .get("agent_id")
                .and_then(Value::as_str)
                .is_some_and(|named| named != key.agent_id);
            if !(writes && names_other) {
                headers.push(("x-karmadue-agent".into(), key.agent_id.clone()));
            }
            Some(headers)
        }
        None => None,
    };
    let result = client.tool_call(tool, &text, headers)?;
    print_json(&result);
    Ok(if result["ok"] == json!(true) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The kd-mcp-v1 headers for one request.
fn sign_request(
    signing: &SigningKey,
    tool: &str,
    agent_id: &str,
    arguments: &str,
) -> anyhow::Result<Vec<(String, String)>> {
    let canonical = kd_protocol::canonical::canonical_text(arguments)
        .map_err(|error| anyhow::anyhow!("arguments: {error}"))?;
    let timestamp = i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .as_secs(),
    )?;
    let mut nonce_bytes = [0u8; 18];
    rand::rngs::OsRng.fill_bytes(&mut nonce_bytes);
    let nonce = b64::encode_url(&nonce_bytes);
    let text = kd_protocol::signing::text_to_sign(
        tool,
        agent_id,
        timestamp,
        &nonce,
        &kd_protocol::canonical::arguments_hash(&canonical),
    );
    let signature = b64::encode_url(&signing.sign(text.as_bytes()).to_bytes());
    Ok(vec![
        ("x-kd-signature".into(), signature),
        ("x-kd-timestamp".into(), timestamp.to_string()),
        ("x-kd-nonce".into(), nonce),
    ])
}

fn ok_data(result: &Value) -> anyhow::Result<&Value> {
    if result["ok"] == json!(true) {
        Ok(&result["data"])
    } else {
        bail!("{}", result["error"])
    }
}

fn print_json(value: &Value) {
    let text = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
    // A closed pipe (`| head`) is not an error worth a panic.
    let _ = writeln!(std::io::stdout().lock(), "{text}");
}

/// A minimal MCP client over one HTTP endpoint.
struct Client {
    base: String,
    agent: ureq::Agent,
}

impl Client {
    fn new(base: &str) -> Self {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build();
        Self {
            base: base.trim_end_matches('/').to_owned(),
            agent: config.into(),
        }
    }

    fn rpc(
        &self,
        method: &str,
        params: &str,
        headers: Option<Vec<(String, String)>>,
    ) -> anyhow::Result<Value> {
        let body = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":{},\"params\":{params}}}",
            json!(method)
        );
        let mut request = self
            .agent
            .post(format!("{}/functions/v1/mcp", self.base))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25");
        for (name, value) in headers.unwrap_or_default() {
            request = request.header(name, value);
        }
        let mut response = request
            .send(body)
            .with_context(|| format!("cannot reach the hub at {}", self.base))?;
        let text = response.body_mut().read_to_string()?;
        let message: Value =
            serde_json::from_str(&text).with_context(|| format!("the hub answered: {text}"))?;
        if let Some(error) = message.get("error") {
            bail!("{}", error["message"].as_str().unwrap_or("JSON-RPC error"));
        }
        Ok(message["result"].clone())
    }

    fn tool_listing(&self, tool: &str) -> anyhow::Result<Value> {
        let result = self.rpc("tools/list", "{}", None)?;
        result["tools"]
            .as_array()
            .and_then(|tools| {
                tools
                    .iter()
                    .find(|entry| entry["name"] == json!(tool))
                    .cloned()
            })
            .with_context(|| format!("the hub does not serve a tool named {tool}"))
    }

    /// Calls a tool with the exact argument text (which the signature covers) and returns
    /// its structured content.
    fn tool_call(
        &self,
        tool: &str,
        arguments: &str,
        headers: Option<Vec<(String, String)>>,
    ) -> anyhow::Result<Value> {
        let params = format!("{{\"name\":{},\"arguments\":{arguments}}}", json!(tool));
        let result = self.rpc("tools/call", &params, headers)?;
        Ok(result["structuredContent"].clone())
    }
}
