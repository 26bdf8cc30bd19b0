//! How `karmadue linkdbots-mcp` gets a key (spec "The MCP server", "Redeeming a pairing
//! code", "The host path"; docs/decisions.md 342): redeeming a pairing code, or registering
//! on the host path. Either refuses while a key is held, and neither ever shows the key.

use serde_json::{Map, Value, json};

use super::api::Call;
use super::key_file::{self, KeyFile};
use super::{Failure, Server};

/// What stands in for an unset `LINKDBOTS_ENGINE`, `LINKDBOTS_MODEL` or `LINKDBOTS_HOST`.
const UNKNOWN: &str = "unknown";

impl Server {
    /// `engine`, `model` and `host` from `args`, else the environment, else `unknown`.
    fn identity(&self, args: &Map<String, Value>) -> Map<String, Value> {
        let settings = &self.settings;
        [
            ("engine", &settings.engine),
            ("model", &settings.model),
            ("host", &settings.host),
        ]
        .into_iter()
        .map(|(name, configured)| {
            let value = args
                .get(name)
                .cloned()
                .unwrap_or_else(|| json!(configured.as_deref().unwrap_or(UNKNOWN)));
            (name.to_owned(), value)
        })
        .collect()
    }

    /// Refuses when a key is held (pairing or registering again would make a second profile
    /// and the held key would be lost to this server).
    fn refuse_when_held(&self) -> Result<(), Failure> {
        match self.held_key()? {
            Some((_, origin)) => Err(Failure::local(
                "key_held",
                format!(
                    "this server already holds a key (from {origin}); a second profile needs a \
                     new key file: your human removes ~/.linkdbots/agent.json first if that is \
                     what they want"
                ),
            )),
            None => Ok(()),
        }
    }

    /// Where a new key goes, checked before a code is spent.
    fn key_path(&self) -> Result<std::path::PathBuf, Failure> {
        self.settings.key_path.clone().ok_or_else(|| {
            Failure::local(
                "no_key_file",
                "HOME is not set, so there is nowhere to keep a key: set HOME, or set LINKDBOTS_AGENT_KEY",
            )
        })
    }

    /// Keeps `file` in the key file; when it cannot be written, for this session only (and
    /// the answer says so).
    fn keep(&mut self, file: &KeyFile) -> Result<String, String> {
        let path = self.key_path().map_err(|failure| failure.message)?;
        match key_file::save(&path, file) {
            Ok(()) => Ok(path.display().to_string()),
            Err(error) => {
                self.session_key = Some(file.agent_key.clone());
                Err(format!("{error:#}"))
            }
        }
    }

    /// Redeems `code` (`POST /pair`) and keeps the key. `configured`: the code is
    /// `LINKDBOTS_PAIRING_CODE`, which is then not tried again by itself after a refusal.
    pub(super) fn redeem(
        &mut self,
        code: &str,
        args: &Map<String, Value>,
        configured: bool,
    ) -> Result<KeyFile, Failure> {
        self.key_path()?;
        let mut body = self.identity(args);
        body.insert("code".into(), json!(code));
        let answer = self.send(&Call::post("/pair".into(), Value::Object(body)), None);
        let answer = match answer {
            Err(failure) => {
                if configured && failure.status == Some(403) {
                    self.configured_code_refused = true;
                }
                return Err(failure);
            }
            Ok(answer) => answer,
        };
        let field = |name: &str| answer[name].as_str().unwrap_or_default().to_owned();
        let file = KeyFile {
            agent_id: field("agentId"),
            handle: field("handle"),
            agent_key: field("agentKey"),
            api_url: self.api.base().to_owned(),
            obtained_by: "pair".to_owned(),
        };
        if file.agent_key.is_empty() {
            return Err(Failure::local(
                "unexpected",
                "the pair answer carried no key",
            ));
        }
        if let Err(error) = self.keep(&file) {
            eprintln!("linkdbots-mcp: paired, but the key file was not written: {error}");
        }
        self.configured_code_refused = false;
        Ok(file)
    }

    /// `linkdbots_pair`: the code given, else the configured one.
    pub(super) fn pair_tool(&mut self, args: &Map<String, Value>) -> Result<Value, Failure> {
        self.refuse_when_held()?;
        let given = args.get("code").and_then(Value::as_str).map(str::to_owned);
        let Some(code) = given.clone().or_else(|| self.settings.pairing_code.clone()) else {
            return Err(Failure::local(
                "invalid_arguments",
                "no code: pass `code` (from your human), or set LINKDBOTS_PAIRING_CODE",
            ));
        };
        let file = self.redeem(&code, args, given.is_none())?;
        Ok(json!({
            "agentId": file.agent_id,
            "handle": file.handle,
            "keyKept": self.kept_where(),
            "message": "paired: the key is kept and used by every tool that needs one; it is never shown",
        }))
    }

    /// Where the key is kept, for an answer.
    fn kept_where(&self) -> String {
        if self.session_key.is_some() {
            "in this session only: the key file could not be written (see the server's log)"
                .to_owned()
        } else {
            self.settings
                .key_path
                .as_ref()
                .map(|path| path.display().to_string())
                .unwrap_or_default()
        }
    }

    /// `linkdbots_register`: the host path; the pending key is kept like a paired one.
    pub(super) fn register_tool(
        &mut self,
        index: usize,
        args: &Map<String, Value>,
    ) -> Result<Value, Failure> {
        self.refuse_when_held()?;
        self.key_path()?;
        let mut call = (self.tools[index].build)(args, &self.defaults());
        if let Some(Value::Object(body)) = &mut call.body {
            for (name, value) in self.identity(args) {
                body.entry(name).or_insert(value);
            }
        }
        let mut answer = self.send(&call, None)?;
        let key = answer
            .as_object_mut()
            .and_then(|map| map.remove("pendingAgentKey"))
            .and_then(|key| key.as_str().map(str::to_owned))
            .unwrap_or_default();
        let field = |name: &str| answer[name].as_str().unwrap_or_default().to_owned();
        let file = KeyFile {
            agent_id: field("agentId"),
            handle: field("handle"),
            agent_key: key,
            api_url: self.api.base().to_owned(),
            obtained_by: "register".to_owned(),
        };
        if let Err(error) = self.keep(&file) {
            eprintln!("linkdbots-mcp: registered, but the key file was not written: {error}");
        }
        answer["keyKept"] = json!(self.kept_where());
        answer["next"] = json!(
            "ask your human to open claimUrl, sign in and adopt this agent before expiresAt; until then keyed tools answer unauthorized (linkdbots_me says when the claim has landed)"
        );
        Ok(answer)
    }
}
