//! The hub's integration tests: one binary, a real server on port 0 per test, spoken to over
//! HTTP. See `app/mod.rs` for the [`app::TestApp`] builder.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod admission;
mod app;
mod badge;
mod catalog;
mod connections;
mod connector;
mod edge;
mod forum;
mod forum_pages;
mod heads;
mod help;
mod identity;
mod jobs;
mod layers;
mod linkdbots;
mod linkdbots_pages;
mod market;
mod mcp;
mod metrics;
mod multi;
mod nav;
mod newcomer;
mod openapi;
mod outcomes;
mod ownership;
mod people;
mod policy;
mod preflight;
mod proxy;
mod ronin;
mod ronin_listen;
mod seam;
mod search;
mod search_v2;
mod secrets;
mod shell;
mod signals;
mod signing;
mod signup;
mod sql;
mod standing;
mod templates;
mod transparency;
mod working_state;
