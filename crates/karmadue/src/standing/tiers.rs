//! Which tier a caller is in, what a tool needs, and what unlocks next (permissions document
//! "What your passport unlocks").

use std::net::IpAddr;

use kd_core::tiers::{AccessTiers, TierSpec};
use serde_json::{Value, json};

use crate::error::{ErrorCode, ToolError};

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

pub use super::store::{FACTS_COLUMNS, facts_from};

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
        .position(|tier| tier.unlocks.iter().any(|name| name == tool))
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
        .flat_map(|(_, tier)| tier.unlocks.iter().cloned())
        .collect()
}

/// The gate of a tool: `identity_required` with no passport, `stamp_required` without the
/// stamp, naming `missing_stamp`, `required_tier` and `how_to_get`. Checked before the handler:
/// nothing is recorded.
///
/// # Errors
/// The refusal.
pub fn gate(tiers: &AccessTiers, tool: &str, subject: &Subject) -> Result<(), ToolError> {
    let Some(required) = required_tier(tiers, tool) else {
        return Ok(());
    };
    let (has, lacking): (bool, usize) = match subject {
        Subject::Ip(_) => (required == ANONYMOUS, REGISTERED),
        // People use the app for what the agent ladder gates.
        Subject::Person(_) => (required <= REGISTERED, ADMISSION_PASSED),
        Subject::Agent { facts, .. } => match required {
            ANONYMOUS | REGISTERED => (true, REGISTERED),
            ADMISSION_PASSED => (facts.admitted(), ADMISSION_PASSED),
            _ if !facts.admitted() => (false, ADMISSION_PASSED),
            _ => (facts.owner_linked(), OWNER_LINKED_ADMITTED),
        },
    };
    if has {
        return Ok(());
    }
    let spec: &TierSpec = &tiers.tiers[required];
    let stamp = &tiers.tiers[lacking];
    let missing = stamp.missing_stamp.clone().unwrap_or_default();
    let (code, message) = if matches!(subject, Subject::Ip(_)) {
        (
            ErrorCode::IdentityRequired,
            format!(
                "{tool} needs a registered passport ({} tier or higher). Register your own key first; nothing was recorded.",
                spec.tier
            ),
        )
    } else {
        (
            ErrorCode::StampRequired,
            format!(
                "{tool} needs the {missing} stamp ({} tier or higher). Nothing was recorded.",
                spec.tier
            ),
        )
    };
    Err(ToolError::new(code, message)
        .with("missing_stamp", missing)
        .with("required_tier", spec.tier.clone())
        .with("how_to_get", json!(stamp.how_to_get)))
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
        let tiers = AccessTiers::default();
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
        let tiers = AccessTiers::default();
        assert!(gate(&tiers, "discover_resources", &Subject::Ip(None)).is_ok());
        let anonymous = gate(&tiers, "set_watchlist", &Subject::Ip(None)).unwrap_err();
        assert_eq!(anonymous.code, ErrorCode::IdentityRequired);
        assert_eq!(anonymous.extra["required_tier"], "registered");
        let stamp = gate(&tiers, "publish_ask", &agent(false, true)).unwrap_err();
        assert_eq!(stamp.code, ErrorCode::StampRequired);
        assert_eq!(stamp.extra["missing_stamp"], "admission-passed");
        assert!(gate(&tiers, "publish_ask", &agent(true, false)).is_ok());
        assert!(gate(&tiers, "get_resource", &Subject::Ip(None)).is_ok());
    }
}
