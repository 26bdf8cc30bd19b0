//! Each tool's declared policy (issue 31; docs/decisions.md 438). The compiler makes every
//! tool state one (`Tool::policy` has no default); these check that the declarations agree
//! with each other and with the tools' hints, and that what is derived from them (the default
//! tiers table, the connector's offer, the visa's scopes, billing, the quota) answers as the
//! name lists it replaced did.

use kd_core::tiers::AccessTiers;
use kd_karmadue::connector::{SCOPE_LISTINGS, SCOPE_OUTCOMES, permission};
use kd_karmadue::hub;
use kd_kernel::policy::{Billing, Connector, ReplyStanding};
use kd_kernel::registry::{Access, Tool};
use serde_json::Value;

/// The default `access_tiers` table as the hub served it before the tools declared their
/// tiers (crates/core/src/access_tiers.json with its `unlocks`).
const TABLE_BEFORE: &str = include_str!("snapshots/access_tiers_default.json");

/// Every tool a hub can serve: the registry and the conformance fixtures.
fn served() -> Vec<&'static Tool> {
    hub::served_tools(true)
}

/// The names of the served tools `keep` picks, in the registry's order.
fn names(keep: impl Fn(&Tool) -> bool) -> Vec<&'static str> {
    served()
        .into_iter()
        .filter(|tool| keep(tool))
        .map(|tool| tool.name)
        .collect()
}

#[test]
fn the_default_table_filled_from_the_declarations_is_the_table_it_was() {
    let filled = hub::default_access_tiers();
    let before: Value = serde_json::from_str(TABLE_BEFORE).unwrap();
    assert_eq!(serde_json::to_value(&filled).unwrap(), before);
    // `karmadue tiers` prints the same text as before.
    assert_eq!(
        serde_json::to_string_pretty(&filled).unwrap(),
        TABLE_BEFORE.trim_end()
    );
    // The fixtures declare no tier: a conformance hub's table is the same.
    assert_eq!(hub::access_tiers(AccessTiers::default(), &served()), filled);
}

#[test]
fn every_unlock_names_a_served_tool_that_declares_that_tier() {
    let before = AccessTiers::from_json(TABLE_BEFORE).unwrap();
    for (index, tier) in before.tiers.iter().enumerate() {
        for name in tier.unlocks() {
            let tool = served()
                .into_iter()
                .find(|tool| tool.name == name)
                .unwrap_or_else(|| panic!("{} unlocks {name}, which is not served", tier.tier));
            assert_eq!(
                tool.policy.unlock.map(|unlock| unlock.tier.index()),
                Some(index),
                "{name}"
            );
        }
    }
    for tool in served() {
        if let Some(unlock) = tool.policy.unlock {
            assert!(
                before.tiers[unlock.tier.index()]
                    .unlocks()
                    .iter()
                    .any(|name| name == tool.name),
                "{} declares {:?}",
                tool.name,
                unlock.tier
            );
        }
    }
}

#[test]
fn the_connector_offers_what_it_offered() {
    for tool in served() {
        let plain_read = tool.hints.read_only && matches!(tool.access, Access::Open | Access::Read);
        // Every plain read but the two key tools (below) is offered, as the hints rule did.
        if plain_read {
            assert!(
                matches!(tool.policy.connector, Connector::Read | Connector::Never),
                "{}",
                tool.name
            );
        }
        match tool.policy.connector {
            Connector::Read => assert!(plain_read, "{} is offered as a read", tool.name),
            Connector::EveryConnection => {
                assert_eq!(tool.access, Access::Signed, "{}", tool.name);
            }
            Connector::Scope(scope) => {
                assert!(!tool.hints.read_only, "{} is scoped", tool.name);
                assert_eq!(tool.policy.billing, Billing::Write, "{}", tool.name);
                // A scope the consent screen has a switch for.
                assert!(permission::addable(scope), "{}: {scope}", tool.name);
            }
            Connector::Never => {}
        }
    }
    // The lists the connector kept by name, now derived from the declarations.
    assert_eq!(
        names(|tool| tool.policy.connector == Connector::EveryConnection),
        [
            "get_history",
            "notify_human_of_finding",
            "withdraw_finding",
            // Quotes for connected apps; committing is refused with spend_cap (decision 463).
            "request_verification"
        ]
    );
    assert_eq!(
        names(|tool| tool.hints.read_only && tool.policy.connector == Connector::Never),
        ["register_challenge", "get_signing_payload"]
    );
    assert_eq!(
        names(|tool| tool.policy.connector == Connector::Scope(SCOPE_OUTCOMES)),
        ["report_outcome"]
    );
    assert_eq!(
        names(|tool| tool.policy.connector == Connector::Scope(SCOPE_LISTINGS)),
        [
            "publish_ask",
            "post_listing",
            "create_thread",
            "reply",
            "mark_accepted",
            "report_post",
            "retract_post"
        ]
    );
}

#[test]
fn billing_quota_and_reply_standing_are_what_the_lists_said() {
    let table = hub::default_access_tiers();
    for tool in served() {
        if tool.policy.billing == Billing::Read {
            // A read, or a signed read with a read limit of its own (get_history).
            assert!(
                tool.hints.read_only || table.tool_reads_per_minute.contains_key(tool.name),
                "{} is billed as a read",
                tool.name
            );
        }
    }
    for name in table.tool_reads_per_minute.keys() {
        let tool = served().into_iter().find(|tool| tool.name == name).unwrap();
        assert_eq!(tool.policy.billing, Billing::Read, "{name}");
    }
    assert_eq!(
        names(|tool| tool.hints.read_only && tool.policy.billing == Billing::Write),
        ["register_challenge"]
    );
    assert_eq!(
        names(|tool| tool.policy.quota_exempt),
        ["rotate_agent_key", "release_agent", "revoke_agent"]
    );
    assert!(
        served()
            .iter()
            .filter(|tool| tool.policy.quota_exempt)
            .all(|tool| tool.access == Access::Signed)
    );
    assert_eq!(
        names(|tool| tool.policy.reply == ReplyStanding::CallerAgain),
        ["submit_admission_test"]
    );
    assert_eq!(
        names(|tool| tool.policy.reply == ReplyStanding::NewAgent),
        ["register_agent"]
    );
}

#[test]
fn the_permissions_pages_visa_scopes_name_exactly_the_scoped_tools() {
    let page = kd_karmadue::docs::permissions(&hub::default_access_tiers());
    let line = page
        .lines()
        .find(|line| line.starts_with("- `visa_scope`:"))
        .unwrap();
    for tool in served() {
        let named = line.contains(&format!("`{}`", tool.name));
        assert_eq!(
            named,
            tool.policy.connector.scope().is_some(),
            "{}",
            tool.name
        );
        if let Some(scope) = tool.policy.connector.scope() {
            let after = &line[line.find(&format!("`{}`", tool.name)).unwrap()..];
            assert!(
                after.split(';').next().unwrap().contains(scope),
                "{}: {scope}",
                tool.name
            );
        }
    }
}
