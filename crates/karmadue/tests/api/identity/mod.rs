//! Identity tools: registration with the agent's own key, names, passports, rotation,
//! revocation, history and reads.

use ed25519_dalek::{Signer, SigningKey};
use kd_protocol::b64;
use serde_json::json;

use crate::app::TestApp;

mod collaborators;
mod lookups;
mod names;
mod registration;
mod trust_query;
mod visas;
