//! The composition root's state: the kernel (built here with the tools, the areas' state and
//! the [`crate::directory::AreaDirectory`]) plus what only the server holds (Ronin's router
//! state, the pre-sign-in form tokens, the cancellable MCP requests).

use std::sync::Arc;

use kd_kernel::{Kernel, Policy, Tool};

use crate::tools;

/// A running hub: the kernel every handler sees, and the server's own state. It dereferences
/// to the [`Kernel`] (`hub.store`, `hub.config`, ...) so the adapters read one value.
#[derive(Debug)]
pub struct Hub {
    /// The call pipeline and everything it shares (store, keys, clock, tools, areas' state).
    pub kernel: Arc<Kernel>,
    /// Ronin, mounted under `/ronin` (its own crate; this hub's store, clock and keys folder).
    pub ronin: kd_ronin::Ronin,
    /// Linkdbots, mounted under `/linkdbots` (its own crate; this hub's store, clock, random).
    pub linkdbots: kd_linkdbots::Linkdbots,
    /// The CSRF tokens of the forms before sign-in (`http::form_token`).
    pub form_tokens: crate::http::form_token::FormTokens,
    /// The running MCP requests a `notifications/cancelled` may stop (`http::cancel`).
    pub in_flight: crate::http::cancel::InFlight,
}

impl std::ops::Deref for Hub {
    type Target = Kernel;

    fn deref(&self) -> &Kernel {
        &self.kernel
    }
}

/// The tools the pipeline treats specially, by name (the kernel knows none).
pub const POLICY: Policy = Policy {
    // An admission pass changes the caller's own tier: the reply reads it again.
    changes_own_standing: &["submit_admission_test"],
    // The challenge signature proved the new agent's key: the reply shows its tier.
    proves_new_agent: &["register_agent"],
    // Read only for MCP, but a row per call: billed as a write (docs/decisions.md 173).
    stores_a_row: &["register_challenge"],
    // With a leaked key burning the day's actions, the agent (or its owner) must still be
    // able to rotate, revoke or release.
    quota_exempt: &["rotate_agent_key", "revoke_agent", "release_agent"],
    // A visa stands in for the stamps on the tools its scopes name: the connector's scopes.
    visa_scope: crate::connector::visa_scope,
};

/// The tools a hub serves: the registry, plus the conformance fixtures when asked.
pub fn served_tools(conformance_fixtures: bool) -> Vec<&'static Tool> {
    let mut served: Vec<&'static Tool> = tools::ALL.to_vec();
    if conformance_fixtures {
        served.extend(crate::fixtures::TOOLS.iter());
    }
    served
}
