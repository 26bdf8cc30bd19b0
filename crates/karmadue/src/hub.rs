//! The composition root's state: the kernel (built here with the tools, the areas' state and
//! the [`crate::directory::AreaDirectory`]) plus what only the server holds (Ronin's router
//! state, the pre-sign-in form tokens, the cancellable MCP requests).

use std::sync::Arc;

use kd_core::tiers::AccessTiers;
use kd_kernel::{Kernel, Tool};

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

/// The tools a hub serves: the registry, plus the conformance fixtures when asked.
pub fn served_tools(conformance_fixtures: bool) -> Vec<&'static Tool> {
    let mut served: Vec<&'static Tool> = tools::ALL.to_vec();
    if conformance_fixtures {
        served.extend(crate::fixtures::TOOLS.iter());
    }
    served
}

/// The `access_tiers` table a hub serving `tools` runs with: `table` with each tier whose
/// `unlocks` it leaves out filled from the tools' declarations (`kd_kernel::tiers::fill_unlocks`;
/// docs/decisions.md 438). The default table is all filled; an operator's file that names a
/// tier's `unlocks` keeps them.
pub fn access_tiers(mut table: AccessTiers, tools: &[&Tool]) -> AccessTiers {
    kd_kernel::tiers::fill_unlocks(&mut table, tools);
    table
}

/// The default table as a hub serves it (`karmadue tiers` prints it): the bundled texts and
/// limits with the unlocks every tool of the registry declares.
pub fn default_access_tiers() -> AccessTiers {
    access_tiers(AccessTiers::default(), tools::ALL)
}
