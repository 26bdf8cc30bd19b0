//! Owner-only modes for what the hub keeps on disk: [`kd_core::private_files`], which the
//! server keys' folder shares (docs/decisions.md 171 and 491).

pub use kd_core::private_files::{make_database_private, make_private_dir};
