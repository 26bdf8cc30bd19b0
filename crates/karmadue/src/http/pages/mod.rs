//! Every HTML page of the hub, server-rendered with `maud` templates and no JavaScript, each
//! through the one layout ([`layout::page`]: head, navigation, security headers).
//!
//! - [`home`]: `/` (the docs with the tool reference), the Markdown docs, the JWKS documents,
//!   the log head and `/llms.txt`.
//! - [`resource`]: the README badge (`badge.svg`) and the resource page (`/resource`).
//! - [`forum`]: the forum's Human View (`/forum`, `/forum/thread`); [`forum_forms`]: a
//!   signed-in person's reply, report and confirm forms (`/forum/reply`, `/forum/report`,
//!   `/forum/confirm`), which call the forum's tools.
//! - The people's app: [`account`] (`/signup`, `/signin`, `/signout`, `/connect`), [`you`]
//!   (`/you` and its forms), [`consent`] (`/oauth/consent`), [`inbox`] (`/inbox`,
//!   `/findings/adopt`), [`verify_help`] (`/verify-help`), [`jobs`] (`/you/jobs`). The rules live in
//!   [`crate::people`] and [`crate::help::verification`]; these handlers read the form, call one
//!   function and present the result. [`linkdbots`]: the Linkdbots dashboard, HTML
//!   (`/linkdbots/dashboard/connect`, `/queue`, `/agents`, `/host-keys`, `/teams`, the claim
//!   page `/linkdbots/claim` and the roster page `/linkdbots/connect`), and the same as JSON
//!   under `/you/linkdbots/`; [`linkdbots_categories`]: `/linkdbots/dashboard/categories`,
//!   propose a category. Who is asking, the cookies and the CSRF checks are [`session`]'s
//!   extractors.

pub mod account;
pub mod add_permission;
pub mod authorize;
pub mod connected_apps;
pub mod consent;
pub mod forum;
pub mod forum_forms;
pub mod home;
pub mod inbox;
pub mod jobs;
pub mod layout;
pub mod linkdbots;
pub mod linkdbots_categories;
pub mod market;
pub mod resource;
pub mod session;
pub mod standards;
pub mod verify_help;
pub mod you;
