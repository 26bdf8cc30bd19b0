//! Which tier a caller is in, what a tool needs, and what unlocks next (permissions document
//! "What your passport unlocks").

use std::net::IpAddr;

use kd_core::tiers::{AccessTiers, TierSpec};
use serde_json::{Value, json};

use crate::error::{ErrorCode, ToolError};
use crate::registry::Tool;

/// Tier positions in the table (lowest first).
pub const ANONYMOUS: usize = 0;
/// A registered passport.
pub const REGISTERED: usize = 1;
/// The admission-passed stamp.
pub const ADMISSION_PASSED: usize = 2;
/// Admission-passed and owner-linked.
pub const OWNER_LINKED_ADMITTED: usize = 3;

/// What the hub knows of an agent's standing when a call is resolved (read in the same query
/// as its key).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AgentFacts {
    /// The owner's `actions_per_day` when the agent is owner-linked (an approved link).
    pub actions_per_day: Option<i64>,
    /// The latest expiry of a live admission-passed stamp (Unix ms), if it has one.
    pub admission_until: Option<i64>,
}

impl AgentFacts {
    /// Linked to a person by an approved request.
    pub fn owner_linked(&self) -> bool {
        self.actions_per_day.is_some()
    }

    /// Holds a live admission-passed stamp.
    pub fn admitted(&self) -> bool {
        self.admission_until.is_some()
    }
}

/// Who the limits and unlocks are about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// No proven identity: counted per address.
    Ip(Option<IpAddr>),
    /// A proven agent.
    Agent {
        /// Its id.
        agent_id: String,
        /// Its standing.
        facts: AgentFacts,
    },
    /// A signed-in person (Person tools): registered limits, counted per person.
    Person(String),
}

impl Subject {
    /// The subject's tier position. An owner-linked agent without admission keeps registered
    /// limits (permissions document).
    pub fn tier(&self) -> usize {
        match self {
            Self::Ip(_) => ANONYMOUS,
            Self::Person(_) => REGISTERED,
            Self::Agent { facts, .. } => match (facts.admitted(), facts.owner_linked()) {
                (true, true) => OWNER_LINKED_ADMITTED,
                (true, false) => ADMISSION_PASSED,
                _ => REGISTERED,
            },
        }
    }

    /// The prefix of this subject's limit buckets.
    pub fn bucket(&self) -> String {
        match self {
            Self::Ip(Some(ip)) => format!("ip:{ip}"),
            Self::Ip(None) => "ip:unknown".to_owned(),
            Self::Agent { agent_id, .. } => format!("agent:{agent_id}"),
            Self::Person(person_id) => format!("person:{person_id}"),
        }
    }

    /// The `per` the limits are counted by.
    fn per(&self) -> &'static str {
        match self {
            Self::Ip(_) => "ip",
            Self::Agent { .. } => "agent",
            Self::Person(_) => "person",
        }
    }
}

/// The tier a tool needs: the first tier whose `unlocks` names it (None: no tier gate).
pub fn required_tier(tiers: &AccessTiers, tool: &str) -> Option<usize> {
    tiers
        .tiers
        .iter()
        .position(|tier| tier.unlocks().iter().any(|name| name == tool))
}

/// Fills each tier whose `unlocks` is absent from the tools' declarations
/// ([`crate::policy::ToolPolicy::unlock`]): the tools declaring that tier, by their rank, ties
/// in `tools`' order, less any tool a tier of the table names itself (so a table that lists a
/// tool elsewhere moves it). A tier that names its `unlocks` keeps them as written.
pub fn fill_unlocks(tiers: &mut AccessTiers, tools: &[&Tool]) {
    let named: Vec<String> = tiers
        .tiers
        .iter()
        .flat_map(|tier| tier.unlocks().iter().cloned())
        .collect();
    for (index, tier) in tiers.tiers.iter_mut().enumerate() {
        if tier.unlocks.is_some() {
            continue;
        }
        let mut declared: Vec<(u8, &str)> = tools
            .iter()
            .filter_map(|tool| {
                let unlock = tool.policy.unlock?;
                (unlock.tier.index() == index && !named.iter().any(|name| name == tool.name))
                    .then_some((unlock.rank, tool.name))
            })
            .collect();
        declared.sort_by_key(|(rank, _)| *rank);
        tier.unlocks = Some(
            declared
                .into_iter()
                .map(|(_, name)| name.to_owned())
                .collect(),
        );
    }
}

/// The `tier` object of a reply: `{tier, label, reads_per_minute, writes_per_minute, per}`.
pub fn tier_json(tiers: &AccessTiers, subject: &Subject) -> Value {
    let spec = &tiers.tiers[subject.tier().min(tiers.tiers.len() - 1)];
    json!({
        "tier": spec.tier,
        "label": spec.label,
        "reads_per_minute": spec.reads_per_minute,
        "writes_per_minute": spec.writes_per_minute,
        "per": subject.per(),
    })
}

/// `next_unlock`: the next tier up, the stamp that would unlock it, what it unlocks and how to
/// get it; null at the top. An owner-linked agent without admission is one stamp
/// (admission-passed) from the top tier.
pub fn next_unlock(tiers: &AccessTiers, subject: &Subject) -> Value {
    let linked_not_admitted = matches!(
        subject,
        Subject::Agent { facts, .. } if facts.owner_linked() && !facts.admitted()
    );
    let (next, stamp_from) = match subject.tier() {
        REGISTERED if linked_not_admitted => (OWNER_LINKED_ADMITTED, ADMISSION_PASSED),
        // A person is not an agent: nothing of the agent ladder unlocks for them.
        REGISTERED if matches!(subject, Subject::Person(_)) => return Value::Null,
        tier => (tier + 1, tier + 1),
    };
    let (Some(spec), Some(stamp)) = (tiers.tiers.get(next), tiers.tiers.get(stamp_from)) else {
        return Value::Null;
    };
    json!({
        "tier": spec.tier,
        "label": spec.label,
        "missing_stamp": stamp.missing_stamp,
        "how_to_get": stamp.how_to_get,
        "unlocks": unlocks_up_to(tiers, next, subject.tier()),
        "also": spec.also,
        "reads_per_minute": spec.reads_per_minute,
        "writes_per_minute": spec.writes_per_minute,
    })
}

/// Tools unlocked above `from` up to and including `to`.
fn unlocks_up_to(tiers: &AccessTiers, to: usize, from: usize) -> Vec<String> {
    tiers
        .tiers
        .iter()
        .enumerate()
        .filter(|(index, _)| *index > from && *index <= to)
        .flat_map(|(_, tier)| tier.unlocks().iter().cloned())
        .collect()
}

/// The name in `missing_stamp` of the one step of the ladder that is not a stamp: the owner
/// link a person approves (docs/decisions.md 429). `/standards` lists the stamps.
pub const OWNER_LINK: &str = "owner-link";

/// The gate of a tool: `identity_required` with no passport, `stamp_required` without the
/// stamp, naming `missing_stamp` (the first step missing), `missing_steps` (every step missing:
/// the owner-linked-and-admitted tier may lack both admission-passed and the owner link),
/// `required_tier` and `how_to_get`. Checked before the handler: nothing is recorded.
///
/// # Errors
/// The refusal.
pub fn gate(tiers: &AccessTiers, tool: &str, subject: &Subject) -> Result<(), ToolError> {
    let Some(required) = required_tier(tiers, tool) else {
        return Ok(());
    };
    // The tier rows whose steps are missing, lowest first.
    let lacking: Vec<usize> = match subject {
        Subject::Ip(_) if required > ANONYMOUS => vec![REGISTERED],
        // People use the app for what the agent ladder gates.
        Subject::Person(_) if required > REGISTERED => vec![ADMISSION_PASSED],
        Subject::Agent { facts, .. } if required >= ADMISSION_PASSED => {
            let mut lacking = Vec::new();
            if !facts.admitted() {
                lacking.push(ADMISSION_PASSED);
            }
            if required >= OWNER_LINKED_ADMITTED && !facts.owner_linked() {
                lacking.push(OWNER_LINKED_ADMITTED);
            }
            lacking
        }
        _ => Vec::new(),
    };
    let Some(&first) = lacking.first() else {
        return Ok(());
    };
    let spec: &TierSpec = &tiers.tiers[required];
    let steps: Vec<String> = lacking
        .iter()
        .filter_map(|index| tiers.tiers[*index].missing_stamp.clone())
        .collect();
    // Both steps missing: the top tier's own steps name both, in order.
    let how_to_get = &tiers.tiers[*lacking.last().unwrap_or(&first)].how_to_get;
    let (code, message) = if matches!(subject, Subject::Ip(_)) {
        (
            ErrorCode::IdentityRequired,
            format!(
                "{tool} needs a registered passport ({} tier or higher). Register your own key first; nothing was recorded.",
                spec.tier
            ),
        )
    } else {
        let named: Vec<String> = steps.iter().map(|step| step_words(step)).collect();
        (
            ErrorCode::StampRequired,
            format!(
                "{tool} needs the {} tier or higher; missing: {}. Nothing was recorded.",
                spec.tier,
                named.join(" and ")
            ),
        )
    };
    Err(ToolError::new(code, message)
        .with("missing_stamp", steps.first().cloned().unwrap_or_default())
        .with("missing_steps", json!(steps))
        .with("required_tier", spec.tier.clone())
        .with("how_to_get", json!(how_to_get)))
}

/// A missing step in words: the owner link is a step a person approves, every other one a
/// stamp.
fn step_words(step: &str) -> String {
    if step == OWNER_LINK {
        "the owner link (a step, not a stamp: your person links you)".to_owned()
    } else {
        format!("the {step} stamp")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(admitted: bool, linked: bool) -> Subject {
        Subject::Agent {
            agent_id: "a".into(),
            facts: AgentFacts {
                actions_per_day: linked.then_some(40),
                admission_until: admitted.then_some(1),
            },
        }
    }

    /// The bundled table with the unlocks the gates below read.
    fn table() -> AccessTiers {
        let mut tiers = AccessTiers::default();
        let unlocks: [&[&str]; 4] = [
            &["discover_resources"],
            &["set_watchlist"],
            &["publish_ask"],
            &["request_visa"],
        ];
        for (tier, names) in tiers.tiers.iter_mut().zip(unlocks) {
            tier.unlocks = Some(names.iter().map(|name| (*name).to_owned()).collect());
        }
        tiers
    }

    #[test]
    fn absent_unlocks_are_filled_from_the_declarations_and_named_ones_kept() {
        use crate::policy::{Connector, Tier, ToolPolicy};
        use crate::registry::{Arguments, Hints};
        fn noop(_ctx: crate::Ctx, _args: crate::Args) -> crate::HandlerFuture {
            Box::pin(async { Ok(Value::Null) })
        }
        const fn tool(name: &'static str, policy: ToolPolicy) -> Tool {
            Tool {
                name,
                title: name,
                description: name,
                arguments: Arguments::Listed {
                    params: &[],
                    required: &[],
                },
                access: crate::Access::Signed,
                hints: Hints::WRITE,
                untrusted: &[],
                policy,
                handler: noop,
            }
        }
        let write = ToolPolicy::write(Connector::Never);
        let (a, b, c, d) = (
            tool("a", write.unlocked_at(Tier::Registered, 2)),
            tool("b", write.unlocked_at(Tier::Registered, 1)),
            tool("c", write.unlocked_at(Tier::AdmissionPassed, 1)),
            tool("d", write),
        );
        let tools = [&a, &b, &c, &d];
        let mut tiers = AccessTiers::default();
        fill_unlocks(&mut tiers, &tools);
        let unlocks: Vec<&[String]> = tiers.tiers.iter().map(TierSpec::unlocks).collect();
        assert_eq!(unlocks, [&[][..], &["b", "a"], &["c"], &[]]);
        // A table that names a tier's unlocks keeps them; a tool it names is not filled in
        // again where it declares.
        let mut tiers = AccessTiers::default();
        tiers.tiers[3].unlocks = Some(vec!["a".into()]);
        fill_unlocks(&mut tiers, &tools);
        let unlocks: Vec<&[String]> = tiers.tiers.iter().map(TierSpec::unlocks).collect();
        assert_eq!(unlocks, [&[][..], &["b"], &["c"], &["a"]]);
        assert_eq!(required_tier(&tiers, "a"), Some(OWNER_LINKED_ADMITTED));
        assert_eq!(required_tier(&tiers, "d"), None);
    }

    #[test]
    fn tiers_follow_stamps_and_the_owner_link() {
        assert_eq!(Subject::Ip(None).tier(), ANONYMOUS);
        assert_eq!(agent(false, false).tier(), REGISTERED);
        assert_eq!(agent(false, true).tier(), REGISTERED);
        assert_eq!(agent(true, false).tier(), ADMISSION_PASSED);
        assert_eq!(agent(true, true).tier(), OWNER_LINKED_ADMITTED);
    }

    #[test]
    fn next_unlock_names_the_missing_stamp() {
        let tiers = table();
        assert_eq!(
            next_unlock(&tiers, &Subject::Ip(None))["missing_stamp"],
            "passport"
        );
        assert_eq!(
            next_unlock(&tiers, &agent(false, false))["missing_stamp"],
            "admission-passed"
        );
        let linked = next_unlock(&tiers, &agent(false, true));
        assert_eq!(linked["tier"], "owner_linked_admitted");
        assert_eq!(linked["missing_stamp"], "admission-passed");
        assert_eq!(
            next_unlock(&tiers, &agent(true, false))["missing_stamp"],
            "owner-link"
        );
        assert_eq!(next_unlock(&tiers, &agent(true, true)), Value::Null);
    }

    #[test]
    fn gates_refuse_with_the_right_code() {
        let tiers = table();
        assert!(gate(&tiers, "discover_resources", &Subject::Ip(None)).is_ok());
        let anonymous = gate(&tiers, "set_watchlist", &Subject::Ip(None)).unwrap_err();
        assert_eq!(anonymous.code, ErrorCode::IdentityRequired);
        assert_eq!(anonymous.extra["required_tier"], "registered");
        let stamp = gate(&tiers, "publish_ask", &agent(false, true)).unwrap_err();
        assert_eq!(stamp.code, ErrorCode::StampRequired);
        assert_eq!(stamp.extra["missing_stamp"], "admission-passed");
        assert_eq!(stamp.extra["missing_steps"], json!(["admission-passed"]));
        // The top tier needs two steps; a registered agent lacks both (docs/decisions.md 429).
        let both = gate(&tiers, "request_visa", &agent(false, false)).unwrap_err();
        assert_eq!(
            both.extra["missing_steps"],
            json!(["admission-passed", "owner-link"])
        );
        assert!(
            both.message
                .contains("admission-passed stamp and the owner link (a step, not a stamp"),
            "{}",
            both.message
        );
        let link = gate(&tiers, "request_visa", &agent(true, false)).unwrap_err();
        assert_eq!(link.extra["missing_steps"], json!(["owner-link"]));
        assert!(
            !link.message.contains("owner-link stamp"),
            "{}",
            link.message
        );
        assert!(gate(&tiers, "request_visa", &agent(true, true)).is_ok());
        let admission = gate(&tiers, "request_visa", &agent(false, true)).unwrap_err();
        assert_eq!(
            admission.extra["missing_steps"],
            json!(["admission-passed"])
        );
        assert!(gate(&tiers, "publish_ask", &agent(true, false)).is_ok());
        assert!(gate(&tiers, "get_resource", &Subject::Ip(None)).is_ok());
    }
}
