//! The kernel's shared state and the one call pipeline every adapter uses:
//! raw arguments → canonical text → validated [`Args`] → resolved [`Caller`] → handler.
//!
//! Who is calling is decided here, once, before a handler runs (DESIGN rule 3); handlers never
//! see HTTP. Every refusal on the way happens before anything is written.

use std::net::IpAddr;
use std::sync::Arc;

use kd_core::clock::Clock;
use kd_core::config::Config;
use kd_core::keys::ServerKey;
use kd_core::random::Random;
use kd_core::store::Store;
use serde_json::{Map, Value};

use kd_core::limits::Charge;

use crate::areas::AreaState;
use crate::caller::{Caller, RequestAuth, unproven};
use crate::ctx::Ctx;
use crate::directory::Directory;
use crate::error::{ErrorCode, ToolError};
use crate::policy::{Billing, ReplyStanding};
use crate::registry::{Access, Args, Tool};
use crate::reply::{Answer, Called};
use crate::tiers::{AgentFacts, Subject};

/// Everything the call pipeline shares between requests. The server builds it (the
/// composition root) and hands it the tools, the areas' state and the [`Directory`].
#[derive(Debug)]
pub struct Kernel {
    /// The configuration it was started with.
    pub config: Config,
    /// The store and its writer.
    pub store: Store,
    /// `kd-passport-1`.
    pub passport_key: ServerKey,
    /// Injected time.
    pub clock: Arc<dyn Clock>,
    /// Injected randomness.
    pub random: Arc<dyn Random>,
    /// The tools this process serves (the registry, plus fixtures in conformance mode).
    pub tools: Vec<&'static Tool>,
    /// The per-minute limits of the access tiers (`kd_core::limits`: in memory on SQLite, in the database on PostgreSQL).
    pub limiter: kd_core::limits::Limiter,
    /// This hub's own metrics registry (`telemetry`; served at `/metrics`).
    pub metrics: crate::telemetry::HubMetrics,
    /// The areas' lookups the pipeline needs about callers (keys, owners, nonces, quota).
    pub directory: Arc<dyn Directory>,
    /// The areas' own state (search index, name index, ...), one value per type.
    pub areas: AreaState,
}

/// The adapter a tool call came through (a label of the tool-call metrics).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// `POST /functions/v1/mcp`.
    Mcp,
    /// The public REST API.
    Rest,
    /// A form of the hub's HTML pages (a signed-in person's forum reply, report, confirm).
    Page,
}

impl Transport {
    /// `mcp`, `rest` or `page`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mcp => "mcp",
            Self::Rest => "rest",
            Self::Page => "page",
        }
    }
}

impl Kernel {
    /// Looks up a served tool by name.
    pub fn tool(&self, name: &str) -> Option<&'static Tool> {
        self.tools.iter().copied().find(|tool| tool.name == name)
    }

    /// A fresh request id, `req_` and 16 hex characters. The HTTP layer draws one per request
    /// (`http::observe`); handlers take that one rather than calling this.
    pub fn request_id(&self) -> String {
        kd_core::random::random_id::<8>(self.random.as_ref(), "req_")
    }

    /// Runs one tool call: canonicalises and validates the raw arguments, resolves the
    /// caller from the signature headers, applies the tier gate and the per-minute limits,
    /// and calls the handler. The reply's standing (`tier`, `next_unlock`, `quota`) comes
    /// with the outcome, refusals included.
    ///
    /// `raw_arguments` is the exact JSON text the client sent (None: no arguments, `{}`).
    /// A refusal in the outcome was returned before anything was written (handlers refuse
    /// before they write).
    ///
    /// The tool's name and the outcome's code are recorded in the current (request) span and
    /// counted with the call's duration under `transport`.
    pub async fn call(
        self: &Arc<Self>,
        tool: &'static Tool,
        raw_arguments: Option<&str>,
        auth: RequestAuth,
        request_id: String,
        transport: Transport,
    ) -> Called {
        let started = std::time::Instant::now();
        let span = tracing::Span::current();
        span.record("tool", tracing::field::display(tool.name));
        let mut subject = Subject::Ip(auth.ip);
        let connected_unlock = auth
            .connector
            .as_ref()
            .map(|connected| connected.next_unlock.clone());
        let outcome = self
            .call_inner(tool, raw_arguments, auth, request_id, &mut subject)
            .await;
        // A write that can change the caller's own standing (an admission pass): read it again
        // so the reply shows the tier it now has.
        if outcome.is_ok()
            && tool.policy.reply == ReplyStanding::CallerAgain
            && let Subject::Agent { agent_id, facts } = &mut subject
            && let Ok(fresh) = self.facts(agent_id).await
        {
            *facts = fresh;
        }
        // The challenge signature proved the new agent's key: the reply shows its tier.
        if let Ok(answer) = &outcome
            && tool.policy.reply == ReplyStanding::NewAgent
            && let Some(agent_id) = answer.data.get("agent_id").and_then(Value::as_str)
            && let Ok(facts) = self.facts(agent_id).await
        {
            subject = Subject::Agent {
                agent_id: agent_id.to_owned(),
                facts,
            };
        }
        let mut standing = self.standing(&subject).await;
        // A connected app climbs no agent ladder: its next unlock is a permission its person
        // approves (docs/decisions.md 428).
        if let Some(unlock) = connected_unlock {
            standing.insert("next_unlock".into(), unlock);
        }
        let code = match &outcome {
            Ok(_) => "ok",
            Err(error) => {
                // The daily action quota refuses inside the write (standing::quota::check).
                if error.code == ErrorCode::RateLimited && error.extra.contains_key("quota") {
                    self.metrics.rate_limited("quota");
                }
                error.code.as_str()
            }
        };
        span.record("code", tracing::field::display(code));
        self.metrics
            .tool_call(tool.name, transport.as_str(), code, started.elapsed());
        Called { outcome, standing }
    }

    /// A refusal an adapter decided before the pipeline (unknown tool, a body it cannot read),
    /// with the standing fields of an unproven caller at `ip`.
    pub fn refused(&self, error: ToolError, ip: Option<IpAddr>) -> Called {
        Called {
            outcome: Err(error),
            standing: self.tier_fields(&Subject::Ip(ip)),
        }
    }

    /// A refusal the connector decided before the pipeline (a tool the grant does not offer),
    /// with the standing of the connection's hosted agent and the connection's own
    /// `next_unlock` (docs/decisions.md 428): the caller is proven by its access token.
    pub async fn refused_connected(
        &self,
        error: ToolError,
        connected: &crate::caller::ConnectorAuth,
        ip: Option<IpAddr>,
    ) -> Called {
        let agent_id = connected.agent_id.to_string();
        let subject = match self.facts(&agent_id).await {
            Ok(facts) => Subject::Agent { agent_id, facts },
            Err(_) => Subject::Ip(ip),
        };
        let mut standing = self.standing(&subject).await;
        standing.insert("next_unlock".into(), connected.next_unlock.clone());
        Called {
            outcome: Err(error),
            standing,
        }
    }

    /// `tier` and `next_unlock` of `subject`.
    fn tier_fields(&self, subject: &Subject) -> Map<String, Value> {
        let tiers = &self.config.access_tiers;
        let mut fields = Map::new();
        fields.insert("tier".into(), crate::tiers::tier_json(tiers, subject));
        fields.insert(
            "next_unlock".into(),
            crate::tiers::next_unlock(tiers, subject),
        );
        fields
    }

    /// The standing fields of a reply for `subject`: `tier`, `next_unlock`, and `quota` for an
    /// owner-linked agent (read after the call, so it counts this call's action).
    async fn standing(&self, subject: &Subject) -> Map<String, Value> {
        let mut standing = self.tier_fields(subject);
        if let Subject::Agent {
            agent_id,
            facts:
                AgentFacts {
                    actions_per_day: Some(actions_per_day),
                    ..
                },
        } = subject
        {
            let agent_id = agent_id.clone();
            let actions_per_day = *actions_per_day;
            let now_ms = self.clock.now_ms();
            let directory = Arc::clone(&self.directory);
            let quota = self
                .store
                .read(move |conn| directory.quota(conn, &agent_id, actions_per_day, now_ms))
                .await;
            if let Ok(quota) = quota {
                standing.insert("quota".into(), quota);
            }
        }
        standing
    }

    async fn call_inner(
        self: &Arc<Self>,
        tool: &'static Tool,
        raw_arguments: Option<&str>,
        auth: RequestAuth,
        request_id: String,
        subject: &mut Subject,
    ) -> Result<Answer, ToolError> {
        self.admit_address(tool, &auth).await?;
        let charged_as_anonymous = unproven(&auth);
        let ip = auth.ip;
        let visa = auth.visa.clone();
        let connected = auth.connector.is_some();
        let (args, caller) = match self.prove(tool, raw_arguments, auth, subject).await {
            Ok(proven) => proven,
            // Proof headers that proved nothing (junk, a bad or stale signature, an ended
            // session): the request counts as anonymous all the same, so junk x-kd-* headers
            // cannot escape the anonymous limits. Past them the refusal is rate_limited.
            Err(error) if !charged_as_anonymous => {
                let address = Subject::Ip(ip);
                let charges = self.tier_charges(tool, &address);
                self.take(tool, &charges, &address, true).await?;
                return Err(error);
            }
            Err(error) => return Err(error),
        };
        *subject = caller.subject();
        let stood_in = match &visa {
            Some(visa) => self.check_visa(visa, tool, subject)?,
            None => false,
        };
        // A connected app reaches a scoped tool only when its person approved that scope (the
        // connector offers nothing else): the approval stands in for the agent ladder's
        // stamps, as a visa does (docs/decisions.md 409).
        let stood_in = stood_in || (connected && tool.policy.connector.scope().is_some());
        self.admit(tool, subject, charged_as_anonymous, stood_in)
            .await?;
        let written = Arc::new(std::sync::Mutex::new(None));
        let ctx = Ctx {
            kernel: Arc::clone(self),
            caller,
            request_id,
            tool,
            written: Arc::clone(&written),
        };
        let mut data = (tool.handler)(ctx, args).await?;
        let untrusted = crate::registry::lift_untrusted(tool.untrusted, &mut data);
        let written = written.lock().ok().and_then(|slot| slot.clone());
        // No receipt from a hub that keeps no transparency log (kd-bench's baseline).
        let written = written.filter(|_| self.config.transparency);
        // One signature per writer batch, made by the first of its writes to get here.
        let receipt = written.and_then(|event| {
            event.batch.get()?.receipt(
                &self.passport_key,
                &kd_core::tlog::note::origin_of(&self.config.public_url),
                &self.config.public_url,
                event.seq,
            )
        });
        Ok(Answer {
            data,
            untrusted,
            lifts: !tool.untrusted.is_empty(),
            receipt,
        })
    }

    /// The caller and the validated arguments: the tier gate of an unproven signed tool, the
    /// canonical text, validation, then the proof ([`Self::resolve_caller`]). Arguments that
    /// fail validation are refused; `subject` is then the sender when its proof holds over
    /// the arguments as sent ([`Self::sender`]).
    async fn prove(
        &self,
        tool: &'static Tool,
        raw_arguments: Option<&str>,
        auth: RequestAuth,
        subject: &mut Subject,
    ) -> Result<(Args, Caller), ToolError> {
        // A gated signed tool called with no proof at all: the caller has no passport to show,
        // which the permissions document answers with identity_required and how to get one.
        // When the arguments name a registered agent, that agent only forgot to sign: the
        // signature check below answers signature_required (docs/decisions.md 256).
        if matches!(tool.access, Access::Signed | Access::AgentOrPerson)
            && unproven(&auth)
            && let Err(refusal) =
                crate::tiers::gate(&self.config.access_tiers, tool.name, &Subject::Ip(auth.ip))
            && !self.names_a_registered_agent(raw_arguments).await
        {
            return Err(refusal);
        }
        let canonical = kd_protocol::canonical::canonical_text(raw_arguments.unwrap_or("{}"))
            .map_err(|error| {
                let field = error.field().unwrap_or("arguments").to_owned();
                ToolError::validation(field, format!("arguments: {error}"))
            })?;
        // The handler acts on exactly the document that was printed (and signed).
        let mut document: Value = serde_json::from_str(&canonical).map_err(ToolError::internal)?;
        // A connected app's hosted agent is filled in by the server (spec "Using KarmaDue
        // from Claude or ChatGPT"); one naming another agent is refused as agent_mismatch.
        // A read that names its subject another way (verify_agent's credential_id, the
        // subject_id of read_scores, get_rating_card and trust_query) is left as sent.
        if let (Some(connected), Some(fields)) = (&auth.connector, document.as_object_mut())
            && !fields.contains_key("agent_id")
            && !(tool.access == Access::Read
                && (fields.contains_key("credential_id") || fields.contains_key("subject_id")))
            && tool.access != Access::Open
            && tool.params().iter().any(|param| param.name == "agent_id")
        {
            fields.insert("agent_id".into(), connected.agent_id.to_string().into());
        }
        let args = match tool.validate(document) {
            Ok(args) => args,
            Err(refusal) => {
                if !unproven(&auth) {
                    *subject = self.sender(tool, &canonical, auth).await;
                }
                return Err(refusal);
            }
        };
        let caller = self.resolve_caller(tool, &args, &canonical, auth).await?;
        Ok((args, caller))
    }

    /// Who sent a call whose arguments failed validation (docs/decisions.md 427): the proven
    /// caller when the signature, session or access token holds over the arguments as sent
    /// (the text signed is their canonical text, valid or not), so the refusal shows the
    /// caller's own tier; otherwise the address, as for any proof that proved nothing.
    /// Nothing is written either way (a signature's nonce is kept only by a write).
    async fn sender(&self, tool: &'static Tool, canonical: &str, auth: RequestAuth) -> Subject {
        let ip = auth.ip;
        let Ok(Value::Object(sent)) = serde_json::from_str::<Value>(canonical) else {
            return Subject::Ip(ip);
        };
        self.resolve_caller(tool, &Args::unchecked(sent), canonical, auth)
            .await
            .map_or(Subject::Ip(ip), |caller| caller.subject())
    }

    /// Whether a tool counts as a read for the per-minute limits: its declared billing
    /// ([`crate::policy::Billing`]; get_history, a signed read, is billed as a read,
    /// register_challenge, read only but a row per call, as a write).
    pub fn counts_as_read(&self, tool: &Tool) -> bool {
        tool.policy.billing == Billing::Read
    }

    /// The first charge, before anything else is done with the request (spec "Search": every
    /// request counts per IP): the address's ceiling (the top tier's limits, so that many
    /// agents behind one address cannot multiply it), and for a request that carries no proof
    /// at all the anonymous tier's limits and the read tool's own limit, per address. Charged
    /// even when the call is refused later.
    async fn admit_address(&self, tool: &Tool, auth: &RequestAuth) -> Result<(), ToolError> {
        let tiers = &self.config.access_tiers;
        let address = Subject::Ip(auth.ip);
        let bucket = address.bucket();
        let read = self.counts_as_read(tool);
        let Some(top) = tiers.tiers.last() else {
            return Ok(());
        };
        let mut charges = vec![Charge {
            cost: 1,
            key: format!("{bucket}:all:{}", if read { "reads" } else { "writes" }),
            limit: if read {
                top.reads_per_minute
            } else {
                top.writes_per_minute
            },
        }];
        if unproven(auth) {
            charges.extend(self.tier_charges(tool, &address));
        }
        self.take(tool, &charges, &address, true).await
    }

    /// The tier gate, then the per-minute limits of a proven caller (its tier's reads or
    /// writes, and a read tool's own limit, per agent or person). A refusal records nothing.
    /// `charged_as_anonymous`: `admit_address` already charged the anonymous tier (the request
    /// carried no proof at all). A request with proof headers that resolved to no caller (a
    /// read with a stray bearer, say) is anonymous all the same and is charged here.
    /// `stood_in`: a checked visa names the tool's scope and stands in for its stamps.
    async fn admit(
        &self,
        tool: &Tool,
        subject: &Subject,
        charged_as_anonymous: bool,
        stood_in: bool,
    ) -> Result<(), ToolError> {
        // A person on a tool open to people: the agent ladder's stamps are for agents.
        let person_path =
            tool.access == Access::AgentOrPerson && matches!(subject, Subject::Person(_));
        if !person_path && !stood_in {
            crate::tiers::gate(&self.config.access_tiers, tool.name, subject)?;
        }
        if matches!(subject, Subject::Ip(_)) && charged_as_anonymous {
            return Ok(());
        }
        let charges = self.tier_charges(tool, subject);
        self.take(tool, &charges, subject, false).await
    }

    fn tier_charges(&self, tool: &Tool, subject: &Subject) -> Vec<Charge> {
        let tiers = &self.config.access_tiers;
        let spec = &tiers.tiers[subject.tier().min(tiers.tiers.len() - 1)];
        let bucket = subject.bucket();
        if self.counts_as_read(tool) {
            vec![
                Charge {
                    cost: 1,
                    key: format!("{bucket}:reads"),
                    limit: spec.reads_per_minute,
                },
                Charge {
                    cost: 1,
                    key: format!("{bucket}:tool:{}", tool.name),
                    limit: tiers
                        .tool_reads_per_minute
                        .get(tool.name)
                        .copied()
                        .unwrap_or(tiers.default_tool_reads_per_minute),
                },
            ]
        } else {
            vec![Charge {
                cost: 1,
                key: format!("{bucket}:writes"),
                limit: spec.writes_per_minute,
            }]
        }
    }

    /// Takes the charges, or says which limit was full: `rate_limited` with `retry_after_s`
    /// and `limit`.
    async fn take(
        &self,
        tool: &Tool,
        charges: &[Charge],
        subject: &Subject,
        address: bool,
    ) -> Result<(), ToolError> {
        let tiers = &self.config.access_tiers;
        let spec = &tiers.tiers[subject.tier().min(tiers.tiers.len() - 1)];
        self.limiter
            .take(charges, self.clock.now_ms())
            .await
            .map_err(ToolError::internal)?
            .map_err(|limited| {
                let retry_after_s = (limited.retry_after_ms + 999).div_euclid(1000).max(1);
                let charge = &charges[limited.charge];
                self.metrics.rate_limited(if charge.key.contains(":all:") {
                    "address"
                } else if charge.key.contains(":tool:") {
                    "tool"
                } else {
                    "tier"
                });
                let kind = if self.counts_as_read(tool) {
                    "reads"
                } else {
                    "writes"
                };
                let message = if charge.key.contains(":all:") {
                    format!(
                        "Too many requests from this address: at most {} {kind} a minute from one address, whoever signs them. Try again in {retry_after_s} seconds.",
                        charge.limit
                    )
                } else if charge.key.contains(":tool:") {
                    format!(
                        "Too many requests: {} allows {} calls a minute per caller. Try again in {retry_after_s} seconds.",
                        tool.name, charge.limit
                    )
                } else {
                    format!(
                        "Too many requests: the {} tier allows {} {kind} a minute{}. Try again in {retry_after_s} seconds.",
                        spec.tier,
                        charge.limit,
                        if address { " per address" } else { "" }
                    )
                };
                ToolError::new(ErrorCode::RateLimited, message)
                    .with("retry_after_s", retry_after_s)
                    .with("limit", charge.limit)
            })
    }

    /// The standing of an agent read now (after a write that may have changed it).
    /// Whether the raw arguments' `agent_id` is the id of an agent the directory holds.
    /// Unreadable arguments or a malformed id name no agent.
    async fn names_a_registered_agent(&self, raw_arguments: Option<&str>) -> bool {
        let Some(agent) = raw_arguments
            .and_then(|text| serde_json::from_str::<Value>(text).ok())
            .and_then(|document| document.get("agent_id")?.as_str()?.parse().ok())
        else {
            return false;
        };
        let agent: kd_protocol::ids::AgentId = agent;
        let now_ms = self.clock.now_ms();
        let directory = Arc::clone(&self.directory);
        self.store
            .read(move |conn| directory.agent(conn, &agent, now_ms))
            .await
            .is_ok_and(|record| record.is_some())
    }

    async fn facts(&self, agent_id: &str) -> Result<AgentFacts, ToolError> {
        let agent: kd_protocol::ids::AgentId = agent_id
            .parse()
            .map_err(|_| ToolError::internal("a resolved agent id is not a uuid"))?;
        let now_ms = self.clock.now_ms();
        let directory = Arc::clone(&self.directory);
        let record = self
            .store
            .read(move |conn| directory.agent(conn, &agent, now_ms))
            .await?;
        Ok(record.map(|record| record.facts).unwrap_or_default())
    }
}
