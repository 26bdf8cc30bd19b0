//! The tool kernel (issue 10; DESIGN rules 2-5): the tool declaration ([`registry`]), the one
//! call pipeline every adapter uses ([`Kernel::call`]: canonical text → arguments → caller →
//! tier gate → limits → handler → reply), each tool's declared policy ([`policy`]), the
//! handler's context ([`Ctx`]), the callers ([`caller`]), the error type with the spec's codes
//! ([`error`]) and the tiers' rules ([`tiers`]). It knows no area: the server (the composition root) hands it the tools, the
//! areas' state ([`AreaState`]) and a [`Directory`] of the caller lookups the areas own.
//!
//! Dependencies point one way: protocol ← core ← kernel ← areas ← server ← cli.

pub mod areas;
pub mod caller;
pub mod ctx;
pub mod directory;
pub mod error;
pub mod input;
pub mod output;
pub mod pipeline;
pub mod policy;
pub mod registry;
pub mod reply;
pub mod telemetry;
pub mod tiers;
pub mod visa;

pub use areas::AreaState;
pub use caller::{Caller, ConnectorAuth, Proof, RequestAuth, SignedRequest};
pub use ctx::Ctx;
pub use directory::{AgentRecord, Directory};
pub use error::{ErrorCode, ToolError};
pub use input::{AgentIdParam, Alias, InputSchema};
pub use output::Output;
pub use pipeline::{Kernel, Transport};
pub use policy::{Billing, Connector, ReplyStanding, Tier, ToolPolicy, Unlock};
pub use registry::{Access, Args, Arguments, HandlerFuture, Hints, Lift, Param, ParamType, Tool};
pub use reply::{Answer, Called};
