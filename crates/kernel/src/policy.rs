//! What each tool declares beyond its arguments (issue 31): the tier that unlocks it by
//! default, what a connected app may do with it, how it is billed, whether the daily quota
//! holds it back, and whose standing its reply shows. The pipeline reads the declaration
//! ([`crate::registry::Tool::policy`]); the default `access_tiers` unlocks
//! ([`crate::tiers::fill_unlocks`]), the connector's offer and the visa check are derived from
//! it, so no list elsewhere names a tool.
//!
//! Declarations stay short through `const` starting points, each stating the whole policy:
//! `ToolPolicy::READ`, `ToolPolicy::write(Connector::Never)`, then
//! `.unlocked_at(Tier::Registered, 1)`, `.exempt_from_quota()` and the like.

use crate::tiers::{ADMISSION_PASSED, ANONYMOUS, OWNER_LINKED_ADMITTED, REGISTERED};

/// A tool's declared policy. Every [`crate::registry::Tool`] states one; there is no default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolPolicy {
    /// The tier whose `unlocks` name the tool in the default `access_tiers` table, with its
    /// place in that list (`None`: no tier gates it). An operator's table may say otherwise.
    pub unlock: Option<Unlock>,
    /// What a connected app (the OAuth connector) may do with it.
    pub connector: Connector,
    /// Which per-minute limit a call counts against.
    pub billing: Billing,
    /// An owner-linked agent may call it with no actions left today (rotate, revoke, release:
    /// with a leaked key burning the day's actions, the agent or its owner must still act).
    pub quota_exempt: bool,
    /// Whose standing (`tier`, `next_unlock`, `quota`) the reply shows.
    pub reply: ReplyStanding,
}

/// A tier of the agent ladder, lowest first (the rows of the `access_tiers` table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    /// No proof: counted per address.
    Anonymous,
    /// A registered passport.
    Registered,
    /// The admission-passed stamp.
    AdmissionPassed,
    /// Admission-passed and owner-linked.
    OwnerLinkedAdmitted,
}

impl Tier {
    /// The tier's row in the table ([`crate::tiers::ANONYMOUS`] …).
    pub const fn index(self) -> usize {
        match self {
            Self::Anonymous => ANONYMOUS,
            Self::Registered => REGISTERED,
            Self::AdmissionPassed => ADMISSION_PASSED,
            Self::OwnerLinkedAdmitted => OWNER_LINKED_ADMITTED,
        }
    }
}

/// Where a tool sits in the default `access_tiers` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unlock {
    /// The first tier that may call it.
    pub tier: Tier,
    /// Its place in that tier's `unlocks` (lowest first; ties keep the registry's order).
    pub rank: u8,
}

/// What a connected app may do with a tool (spec "Connector permissions").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connector {
    /// A read, offered to every connection.
    Read,
    /// Offered to every connection: bringing finds to the person, withdrawing its own, reading
    /// its own history.
    EveryConnection,
    /// Offered when the person approved this scope; a visa naming it stands in for the tool's
    /// stamps (docs/decisions.md 404).
    Scope(&'static str),
    /// Never offered: tools about one's own key, and what a connected app may never do (keys,
    /// invitations, crews, spending, the person's own tools).
    Never,
}

impl Connector {
    /// The scope a grant or a visa must name, for a [`Connector::Scope`] tool.
    pub const fn scope(self) -> Option<&'static str> {
        match self {
            Self::Scope(scope) => Some(scope),
            _ => None,
        }
    }
}

/// Which per-minute limit a call counts against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Billing {
    /// The tier's reads and the tool's own read limit; never an action of the daily quota.
    Read,
    /// The tier's writes; an action when it records one.
    Write,
}

/// Whose standing the reply shows, besides the caller as resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyStanding {
    /// The caller's, as resolved before the call.
    Caller,
    /// The caller's, read again after success: the call can change the caller's own tier (an
    /// admission pass).
    CallerAgain,
    /// The agent the reply's `data.agent_id` names: the call proved that new agent's key
    /// (register_agent's challenge signature).
    NewAgent,
}

impl ToolPolicy {
    /// A read: offered to every connection, billed as a read, no tier gate.
    pub const READ: Self = Self {
        unlock: None,
        connector: Connector::Read,
        billing: Billing::Read,
        quota_exempt: false,
        reply: ReplyStanding::Caller,
    };

    /// A write with what a connected app may do with it: billed as a write, no tier gate,
    /// held back by the daily quota.
    pub const fn write(connector: Connector) -> Self {
        Self {
            unlock: None,
            connector,
            billing: Billing::Write,
            quota_exempt: false,
            reply: ReplyStanding::Caller,
        }
    }

    /// Unlocked at `tier` in the default table, `rank`th in its `unlocks`.
    pub const fn unlocked_at(mut self, tier: Tier, rank: u8) -> Self {
        self.unlock = Some(Unlock { tier, rank });
        self
    }

    /// What a connected app may do with it instead.
    pub const fn on_connector(mut self, connector: Connector) -> Self {
        self.connector = connector;
        self
    }

    /// Billed as `billing` instead (a read-only tool that stores a row every call is billed as
    /// a write; a signed read as a read).
    pub const fn billed(mut self, billing: Billing) -> Self {
        self.billing = billing;
        self
    }

    /// Callable with no actions left today.
    pub const fn exempt_from_quota(mut self) -> Self {
        self.quota_exempt = true;
        self
    }

    /// The reply shows `reply`'s standing.
    pub const fn replies_with(mut self, reply: ReplyStanding) -> Self {
        self.reply = reply;
        self
    }
}
