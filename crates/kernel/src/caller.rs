//! Who is calling: the proof headers an adapter read ([`RequestAuth`]) resolved into a
//! [`Caller`] — anonymous, an agent proven by its kd-mcp-v1 signature or by its owner's
//! session, or a signed-in person (spec "Signing a write"; DESIGN rule 3). Nothing is written
//! here; the nonce is spent in the write ([`crate::ctx::Ctx::signed_write`]).

use std::net::IpAddr;
use std::sync::Arc;

use kd_protocol::ids::AgentId;
use kd_protocol::keys::AgentPublicKey;
use kd_protocol::signing::{self, Nonce};

use crate::directory::AgentRecord;
use crate::error::{ErrorCode, ToolError};
use crate::pipeline::Kernel;
use crate::registry::{Access, Args, Tool};
use crate::tiers::{AgentFacts, Subject};

impl Kernel {
    pub(crate) async fn resolve_caller(
        &self,
        tool: &Tool,
        args: &Args,
        canonical: &str,
        auth: RequestAuth,
    ) -> Result<Caller, ToolError> {
        if let Some(connected) = auth.connector.clone() {
            return self.connected_caller(tool, args, connected, auth.ip).await;
        }
        match tool.access {
            Access::Open => Ok(Caller::Anonymous { ip: auth.ip }),
            // A read may name its agent (x-karmadue-agent) and sign; then the signature must
            // verify: a bad one is refused, never silently downgraded (permissions document).
            Access::Read if auth.agent_header.is_none() && auth.signature.is_none() => {
                Ok(Caller::Anonymous { ip: auth.ip })
            }
            Access::Read => {
                let agent = auth.agent_header.clone().ok_or_else(|| {
                    ToolError::new(
                        ErrorCode::SignatureRequired,
                        "A signed read names its agent in x-karmadue-agent. Leave the signature headers out to read anonymously.",
                    )
                })?;
                let signed = self.check_signature(tool, &agent, canonical, auth).await?;
                Ok(Caller::Agent(signed))
            }
            Access::AgentOrPerson if args.str(&["agent_id"]).is_none() => {
                // No agent named: a signed-in person, or nobody.
                if auth.bearer.is_none() {
                    return Err(ToolError::new(
                        ErrorCode::SignatureRequired,
                        format!(
                            "{} needs agent_id and a kd-mcp-v1 signature, or a signed-in person's Authorization: Bearer <session token> without agent_id",
                            tool.name
                        ),
                    ));
                }
                self.person_caller(auth).await
            }
            Access::Person => self.person_caller(auth).await,
            Access::Signed | Access::AgentOrPerson => {
                let agent = args
                    .str(&["agent_id"])
                    .ok_or_else(|| {
                        ToolError::validation(
                            "agent_id",
                            "agent_id is required in the arguments of a signed write",
                        )
                    })?
                    .to_owned();
                if (auth.signature.is_some() || auth.timestamp.is_some() || auth.nonce.is_some())
                    && let Some(header) = auth.agent_header.as_deref()
                    && header != agent
                {
                    return Err(ToolError::new(
                        ErrorCode::AgentMismatch,
                        "x-karmadue-agent must equal agent_id in the arguments",
                    ));
                }
                let signs =
                    auth.signature.is_some() || auth.timestamp.is_some() || auth.nonce.is_some();
                if !signs && let Some(token) = auth.bearer.clone() {
                    return self
                        .owner_session(&agent, token.expose(), auth.ip)
                        .await
                        .map(Caller::Agent);
                }
                let signed = self.check_signature(tool, &agent, canonical, auth).await?;
                Ok(Caller::Agent(signed))
            }
        }
    }

    /// A connected app's call (spec "Using KarmaDue from Claude or ChatGPT"): the hosted agent
    /// of its connection, proven by the access token the server checked. `agent_id` is filled
    /// in by the pipeline; a write naming another agent is `agent_mismatch` (a read may name
    /// the agent it reads). Every tool but a
    /// person's runs as the hosted agent (an open read too). A revoked hosted agent
    /// is `forbidden`, a paused one may still read.
    async fn connected_caller(
        &self,
        tool: &Tool,
        args: &Args,
        connected: ConnectorAuth,
        ip: Option<IpAddr>,
    ) -> Result<Caller, ToolError> {
        // Open tools run as the hosted agent too, so every connector reply carries its
        // standing and quota (spec "Connector limits").
        if tool.access == Access::Person {
            return Err(person_required());
        }
        // A read's agent_id names what it reads (verify_agent of another agent is public), not
        // who calls; every other tool's names the writer.
        // A malformed id is the validation error the self-keyed endpoint gives; only a
        // well-formed id of another agent is a mismatch (docs/decisions.md 432).
        if tool.access != Access::Read
            && let Some(named) = args.str(&["agent_id"])
        {
            let named: AgentId = named.parse().map_err(|_| malformed_agent_id())?;
            if named != connected.agent_id {
                return Err(connector_mismatch(&connected.agent_id));
            }
        }
        let now_ms = self.clock.now_ms();
        let directory = Arc::clone(&self.directory);
        let lookup = connected.agent_id;
        let record = self
            .store
            .read(move |conn| directory.agent(conn, &lookup, now_ms))
            .await?
            .ok_or_else(|| ToolError::internal("a connection's hosted agent is missing"))?;
        if !record.active {
            return Err(revoked());
        }
        if record.paused && tool.access != Access::Read && !self.counts_as_read(tool) {
            return Err(paused());
        }
        Ok(Caller::Agent(SignedRequest {
            agent_id: connected.agent_id,
            ip,
            proof: Proof::Connector {
                connection_id: connected.connection_id,
                person_id: connected.person_id,
            },
            facts: record.facts,
        }))
    }

    /// A signed-in person: the live session of `Authorization: Bearer`, else
    /// `identity_required`.
    async fn person_caller(&self, auth: RequestAuth) -> Result<Caller, ToolError> {
        let token = auth.bearer.clone().ok_or_else(person_required)?;
        let token = token.expose().to_owned();
        let now_ms = self.clock.now_ms();
        let session = self
            .store
            .read(move |conn| kd_core::people::session(conn, &token, now_ms))
            .await
            .map_err(ToolError::from)?
            .ok_or_else(person_required)?;
        Ok(Caller::Person {
            person_id: session.person_id,
            ip: auth.ip,
        })
    }

    /// The owner path of a signed tool (spec "Signing a write"): `Authorization: Bearer
    /// <session token>` of the person who owns `agent_text`. An unknown or ended session is
    /// `signature_required`; a signed-in person who does not own the agent is `forbidden`.
    async fn owner_session(
        &self,
        agent_text: &str,
        token: &str,
        ip: Option<IpAddr>,
    ) -> Result<SignedRequest, ToolError> {
        let agent_id: AgentId = agent_text.parse().map_err(|_| malformed_agent_id())?;
        let now_ms = self.clock.now_ms();
        let token = token.to_owned();
        let directory = Arc::clone(&self.directory);
        let (session, owner) = self
            .store
            .read(move |conn| -> Result<_, ToolError> {
                let session = kd_core::people::session(conn, &token, now_ms)?;
                let owner = directory
                    .agent(conn, &agent_id, now_ms)?
                    .map(|record| (record.owner_id, record.facts));
                Ok((session, owner))
            })
            .await?;
        let Some(session) = session else {
            return Err(ToolError::new(
                ErrorCode::SignatureRequired,
                "The bearer session is unknown, signed out or expired. Sign in again, or sign the request (kd-mcp-v1).",
            ));
        };
        let Some((owner, facts)) = owner else {
            return Err(ToolError::not_found(
                "agent_id",
                "No agent has this agent_id.",
            ));
        };
        if owner.as_deref() != Some(session.person_id.as_str()) {
            return Err(ToolError::new(
                ErrorCode::Forbidden,
                "You are signed in, but you do not own this agent.",
            ));
        }
        Ok(SignedRequest {
            agent_id,
            ip,
            proof: Proof::OwnerSession {
                person_id: session.person_id,
            },
            facts,
        })
    }

    /// The header checks of kd-mcp-v1 that need no lookup, in the spec's order:
    /// signature_required, stale_signature, bad_nonce, the agent id's form, bad_signature
    /// (not base64url of 64 bytes).
    fn signature_headers(
        &self,
        tool: &Tool,
        agent_text: &str,
        auth: &RequestAuth,
    ) -> Result<Headers, ToolError> {
        let (Some(signature), Some(timestamp), Some(nonce)) = (
            auth.signature.as_deref(),
            auth.timestamp.as_deref(),
            auth.nonce.as_deref(),
        ) else {
            return Err(ToolError::new(
                ErrorCode::SignatureRequired,
                format!(
                    "{} needs a kd-mcp-v1 signature: send x-kd-signature, x-kd-timestamp and x-kd-nonce (get_signing_payload shows the text to sign)",
                    tool.name
                ),
            ));
        };
        let timestamp = signing::parse_timestamp_header(timestamp)
            .filter(|timestamp| signing::timestamp_fresh(*timestamp, self.clock.now_unix()))
            .ok_or_else(|| {
                ToolError::new(
                    ErrorCode::StaleSignature,
                    "x-kd-timestamp must be Unix time in whole seconds within 300 seconds of the server clock",
                )
                .with("server_time", self.clock.now_unix())
            })?;
        let nonce = Nonce::parse(nonce).map_err(|_| {
            ToolError::new(
                ErrorCode::BadNonce,
                "x-kd-nonce must be 16 to 128 characters from A-Z a-z 0-9 _ -",
            )
        })?;
        let agent_id: AgentId = agent_text.parse().map_err(|_| malformed_agent_id())?;
        let signature_bytes = kd_protocol::b64::decode_signature(signature).map_err(|_| {
            ToolError::new(
                ErrorCode::BadSignature,
                "x-kd-signature is not base64url (or base64) of 64 bytes",
            )
        })?;
        if signature_bytes.len() != SIGNATURE_BYTES {
            return Err(ToolError::new(
                ErrorCode::BadSignature,
                format!(
                    "x-kd-signature decodes to {} bytes; an Ed25519 signature is {SIGNATURE_BYTES} bytes (86 base64url characters)",
                    signature_bytes.len()
                ),
            ));
        }
        Ok(Headers {
            signature_bytes,
            timestamp,
            nonce,
            agent_id,
        })
    }

    /// The kd-mcp-v1 checks, in the spec's order: signature_required, stale_signature,
    /// bad_nonce, agent_mismatch, bad_signature. `replay` is decided in the write transaction
    /// ([`Ctx::signed_write`]) so that it holds exactly under concurrency.
    async fn check_signature(
        &self,
        tool: &Tool,
        agent_text: &str,
        canonical: &str,
        auth: RequestAuth,
    ) -> Result<SignedRequest, ToolError> {
        let Headers {
            signature_bytes,
            timestamp,
            nonce,
            agent_id,
        } = self.signature_headers(tool, agent_text, &auth)?;
        let now_ms = self.clock.now_ms();
        let directory = Arc::clone(&self.directory);
        let lookup = agent_id;
        let stored = self
            .store
            .read(move |conn| directory.agent(conn, &lookup, now_ms))
            .await?;
        let Some(AgentRecord {
            public_key: public_key_text,
            active,
            paused: is_paused,
            facts,
            ..
        }) = stored
        else {
            return Err(ToolError::not_found(
                "agent_id",
                "No agent has this agent_id.",
            ));
        };
        if !active {
            return Err(revoked());
        }
        if public_key_text.is_empty() {
            return Err(ToolError::new(
                ErrorCode::BadSignature,
                "This agent is a connected app's hosted agent: it has no key, and it writes only through the OAuth connector.",
            ));
        }
        let public_key = stored_key(&public_key_text)?;
        let text = signing::text_to_sign(
            tool.name,
            agent_text,
            timestamp,
            nonce.as_str(),
            &kd_protocol::canonical::arguments_hash(canonical),
        );
        public_key.verify_strict(text.as_bytes(), &signature_bytes).map_err(|_| {
            ToolError::new(
                ErrorCode::BadSignature,
                "The signature does not verify with this agent's key over the kd-mcp-v1 text (get_signing_payload shows the exact text).",
            )
        })?;
        // Only a verified caller learns that its owner paused it. A pause stops writes; the
        // agent can still read (its standing, its history).
        if is_paused && tool.access != Access::Read && !self.counts_as_read(tool) {
            return Err(paused());
        }
        Ok(SignedRequest {
            agent_id,
            ip: auth.ip,
            proof: Proof::Signature {
                public_key: public_key_text,
                nonce: nonce.as_str().to_owned(),
            },
            facts,
        })
    }
}

/// The length of an Ed25519 signature.
pub const SIGNATURE_BYTES: usize = 64;

/// A request that carries no signature header and no bearer session.
pub(crate) fn unproven(auth: &RequestAuth) -> bool {
    auth.connector.is_none()
        && auth.signature.is_none()
        && auth.timestamp.is_none()
        && auth.nonce.is_none()
        && auth.bearer.is_none()
}

/// Loads a key the store already holds. It passed the full registration checks (canonical, not
/// weak, torsion-free) when it was registered, so only the decoding is repeated here: the
/// torsion check costs a scalar multiplication on every signed request (docs/performance.md).
///
/// # Errors
/// `internal` when the stored text is not a 32-byte base64url key.
pub fn stored_key(text: &str) -> Result<AgentPublicKey, ToolError> {
    let bytes: [u8; 32] = kd_protocol::b64::decode_url(text)
        .ok()
        .and_then(|bytes| bytes.try_into().ok())
        .ok_or_else(|| ToolError::internal("a stored agent key is not 32 base64url bytes"))?;
    AgentPublicKey::from_bytes_unchecked_registered(bytes).map_err(ToolError::internal)
}

/// What an adapter read off the request for authentication. Nothing else of HTTP goes below
/// the adapters.
#[derive(Debug, Clone, Default)]
pub struct RequestAuth {
    /// `x-kd-signature`.
    pub signature: Option<String>,
    /// `x-kd-timestamp`.
    pub timestamp: Option<String>,
    /// `x-kd-nonce`.
    pub nonce: Option<String>,
    /// `x-karmadue-agent`.
    pub agent_header: Option<String>,
    /// The client's address.
    pub ip: Option<IpAddr>,
    /// The token of `Authorization: Bearer <token>`: an owner's session (spec "Signing a
    /// write"). Redacted in `Debug`; never logged.
    pub bearer: Option<kd_core::config::Secret>,
    /// A connected app's call: the hosted agent and connection of the OAuth access token the
    /// connector endpoint checked (the token itself is not passed on).
    pub connector: Option<ConnectorAuth>,
    /// `x-kd-visa`: a visa presented with the call ([`kd_protocol::visa`]), checked once the
    /// caller is proven.
    pub visa: Option<String>,
}

/// What the connector endpoint learned from a live access token (spec "Using KarmaDue from
/// Claude or ChatGPT"): the connection's hosted agent (type `hosted_connector`, no key) writes
/// by the token and the approved scopes instead of a signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectorAuth {
    /// The hosted agent of the (person, app) pair.
    pub agent_id: AgentId,
    /// The connection (`kdcn_…`).
    pub connection_id: String,
    /// The person who approved it.
    pub person_id: String,
    /// What every reply to this connection carries as `next_unlock` instead of the agent
    /// ladder's: the next permission to ask the person for (permissions document "Connected
    /// apps ... Their next_unlock names the next permission to ask the owner for"), built by the
    /// connector, which knows the grant; null when nothing more can be approved.
    pub next_unlock: serde_json::Value,
}

impl Caller {
    /// Who the limits and unlocks are about.
    pub fn subject(&self) -> Subject {
        match self {
            Self::Anonymous { ip } => Subject::Ip(*ip),
            Self::Agent(signed) => Subject::Agent {
                agent_id: signed.agent_id.to_string(),
                facts: signed.facts,
            },
            Self::Person { person_id, .. } => Subject::Person(person_id.clone()),
        }
    }
}

/// Who is calling, decided before the handler runs.
#[derive(Debug, Clone)]
pub enum Caller {
    /// No proven identity.
    Anonymous {
        /// The client's address.
        ip: Option<IpAddr>,
    },
    /// A write for an agent, proven by its kd-mcp-v1 signature or by its owner's session.
    Agent(SignedRequest),
    /// A signed-in person (a live session sent as `Authorization: Bearer`), for
    /// [`Access::Person`] tools.
    Person {
        /// The person.
        person_id: String,
        /// The client's address.
        ip: Option<IpAddr>,
    },
}

fn person_required() -> ToolError {
    ToolError::new(
        ErrorCode::IdentityRequired,
        "This tool is for a signed-in person: send Authorization: Bearer <session token> from the KarmaDue app.",
    )
}

/// A request for an agent whose writer is proven ([`Proof`]); a signature's nonce is not spent
/// yet.
#[derive(Debug, Clone)]
pub struct SignedRequest {
    /// The agent the write is for.
    pub agent_id: AgentId,
    /// The client's address.
    pub ip: Option<IpAddr>,
    /// How the writer was proven.
    pub proof: Proof,
    /// Its standing when the call was resolved.
    pub facts: AgentFacts,
}

/// How a write for an agent was proven (spec "Signing a write").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Proof {
    /// The agent's kd-mcp-v1 signature verified.
    Signature {
        /// The key that verified, base64url.
        public_key: String,
        /// The request nonce, spent by [`Ctx::signed_write`].
        nonce: String,
    },
    /// `Authorization: Bearer <session>` of the person who owns the agent. No nonce.
    OwnerSession {
        /// The owner.
        person_id: String,
    },
    /// A connected app's access token, for its hosted agent. No nonce; every event the write
    /// appends records `auth_method: oauth`.
    Connector {
        /// The connection.
        connection_id: String,
        /// The person who approved it (the agent's owner).
        person_id: String,
    },
}

impl SignedRequest {
    /// The event actor: the agent for a signature, `person:<id>` for the owner's session.
    pub fn actor(&self) -> String {
        match &self.proof {
            Proof::Signature { .. } | Proof::Connector { .. } => self.agent_id.to_string(),
            Proof::OwnerSession { person_id } => format!("person:{person_id}"),
        }
    }
}

/// The validation error of an `agent_id` that is not a lowercase uuid with dashes.
fn malformed_agent_id() -> ToolError {
    ToolError::validation("agent_id", "agent_id must be a lowercase uuid with dashes")
}

/// `agent_mismatch` for a connected app that named another agent.
fn connector_mismatch(hosted: &AgentId) -> ToolError {
    ToolError::new(
        ErrorCode::AgentMismatch,
        format!(
            "A connected app writes as its own hosted agent, {hosted}: leave agent_id out (the server fills it in) or send that one."
        ),
    )
}

pub(crate) fn paused() -> ToolError {
    ToolError::new(
        ErrorCode::Forbidden,
        "This agent is paused by its owner; its writes are refused until the owner resumes it.",
    )
}

pub(crate) fn revoked() -> ToolError {
    ToolError::new(
        ErrorCode::Forbidden,
        "This agent is revoked; it can no longer write.",
    )
}

/// A signed request's headers, read and checked in form.
struct Headers {
    /// The decoded 64-byte signature.
    signature_bytes: Vec<u8>,
    /// `x-kd-timestamp`, Unix seconds, within the window.
    timestamp: i64,
    /// `x-kd-nonce`.
    nonce: Nonce,
    /// The agent the request names.
    agent_id: AgentId,
}
