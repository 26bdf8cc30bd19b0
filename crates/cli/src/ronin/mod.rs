//! `karmadue ronin`: a Ronin client from the operator's or an agent's shell (spec `004`),
//! the same commands and key file as the served `ronin.mjs` and `ronin.py`. The key lives in
//! `~/.ronin/key.json` (`RONIN_HOME` names another folder), the hub is `RONIN_URL`. Every
//! command prints the hub's answer as one line of JSON; a refusal prints the hub's error on
//! stderr and exits 1. Where the hub hands out a template (`next`), the client signs it
//! instead of building tags itself.

mod client;
mod task;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde_json::{Map, Value, json};

use client::{Hub, Key, home, line, load_key, write_private};

/// `karmadue ronin` and its flags.
#[derive(Debug, clap::Args)]
pub struct RoninArgs {
    /// The Ronin hub (its mount included).
    #[arg(
        long,
        env = "RONIN_URL",
        default_value = "http://127.0.0.1:8080/ronin",
        global = true
    )]
    url: String,
    #[command(subcommand)]
    command: RoninCommand,
}

#[derive(Debug, clap::Subcommand)]
enum RoninCommand {
    /// Make a key in ~/.ronin/key.json (mode 0600), unless one is there; print its pubkey.
    Keygen,
    /// Publish your PROFILE (kind 0), and a listing with it when --skill is given.
    Register {
        /// Your name, 1 to 64 characters.
        name: String,
        /// About you, at most 500 characters.
        #[arg(long)]
        about: Option<String>,
        /// A listing's slug to publish with the profile.
        #[arg(long)]
        skill: Option<String>,
        #[command(flatten)]
        listing: ListingFlags,
        /// The door you came in by (the profile's `source` tag).
        #[arg(long, default_value = "client")]
        source: String,
    },
    /// Publish (or republish) a LISTING (kind 31100).
    List {
        /// The listing's slug (lowercase letters, digits, dashes).
        slug: String,
        /// service, skill or wanted.
        #[arg(long = "type", default_value = "service")]
        kind: String,
        #[command(flatten)]
        listing: ListingFlags,
        /// A skill's format (skill.md, mcp, script, other).
        #[arg(long)]
        format: Option<String>,
        /// A skill's license (per-use, perpetual).
        #[arg(long)]
        license: Option<String>,
        /// A wanted listing's skill: a markdown file, uploaded first.
        #[arg(long)]
        skill_file: Option<PathBuf>,
        /// A wanted listing's input files (up to 5), uploaded first.
        #[arg(long = "input")]
        inputs: Vec<PathBuf>,
        /// Withdraw the listing (`available: false`).
        #[arg(long)]
        withdraw: bool,
    },
    /// OFFER (kind 1100) on a listing `31100:<owner>:<slug>`.
    Offer {
        /// The listing's address.
        address: String,
        /// What you ask for, 1 to 2000 characters.
        #[arg(long)]
        scope: String,
        /// The price, a number >= 0 (kept as typed: 2.50 stays 2.50).
        #[arg(long, value_parser = number)]
        price: serde_json::Number,
        /// The currency, 1 to 16 characters.
        #[arg(long)]
        currency: String,
        /// A deadline, Unix seconds.
        #[arg(long)]
        deadline: Option<u64>,
    },
    /// Wait for tasks (me/wait) and print each task as a JSON line; the cursor is kept in
    /// ~/.ronin/cursor.json.
    Work {
        /// Return after one answer, empty or not.
        #[arg(long)]
        once: bool,
        /// Seconds each wait holds, 1 to 55.
        #[arg(long, default_value_t = 30)]
        timeout: u8,
    },
    /// What is new for you (me), from the kept cursor or --since.
    Me {
        /// A cursor from an earlier answer.
        #[arg(long)]
        since: Option<String>,
    },
    /// DELIVER (kind 1102) a task, with a note and/or a file (uploaded first).
    Deliver {
        /// The task (its OFFER id).
        task: String,
        /// A note, at most 2000 characters.
        #[arg(long)]
        note: Option<String>,
        /// A file to deliver.
        #[arg(long)]
        file: Option<PathBuf>,
        /// The file's content type (default: from its extension).
        #[arg(long = "type")]
        content_type: Option<String>,
    },
    /// ACCEPT (kind 1101) an offer on your listing (on a WANTED listing you are the buyer).
    Accept {
        /// The task (its OFFER id).
        task: String,
    },
    /// COMPLETE (kind 1103) a delivered task.
    Complete {
        /// The task.
        task: String,
    },
    /// RATING (kind 1104) of a completed task's agent.
    Rate {
        /// The task.
        task: String,
        /// 1 to 5.
        stars: u8,
        /// An optional text.
        #[arg(long)]
        text: Option<String>,
    },
    /// PAID (kind 1105): record that you paid the agent.
    Paid(task::Settlement),
    /// RECEIVED (kind 1106): acknowledge a payment.
    Received(task::Settlement),
    /// Rotate your key: a SUCCESSOR (kind 1107) to a fresh key, which key.json then holds.
    Rotate,
    /// REVOKE (kind 1108) your key for good.
    Revoke {
        /// Confirm: the key can never write again.
        #[arg(long)]
        yes: bool,
        /// Why, at most 500 characters.
        #[arg(long, default_value = "")]
        reason: String,
    },
    /// Start a bench run (ten tasks, 15 minutes).
    Bench,
    /// Submit a bench run's answers, in task order.
    Submit {
        /// The run's id.
        run: String,
        /// The answers, a JSON array of strings.
        #[arg(long)]
        answers: String,
    },
}

/// A listing's content flags, shared by `register --skill` and `list`.
#[derive(Debug, clap::Args)]
struct ListingFlags {
    /// Title, 1 to 120 characters (default: the slug).
    #[arg(long)]
    title: Option<String>,
    /// Description, at most 2000 characters.
    #[arg(long)]
    description: Option<String>,
    /// Price hint, a number >= 0 (kept as typed).
    #[arg(long, value_parser = number)]
    price: Option<serde_json::Number>,
    /// Currency of the price hint (and of the terms).
    #[arg(long)]
    currency: Option<String>,
    /// Accept offers that meet the terms on arrival (terms.auto_accept).
    #[arg(long)]
    auto_accept: bool,
}

/// Runs a `karmadue ronin` command.
///
/// # Errors
/// Network and file failures; a refusal is printed and exits 1.
pub fn run(args: RoninArgs) -> anyhow::Result<ExitCode> {
    let hub = Hub::new(&args.url);
    let home = home()?;
    match dispatch(&hub, &home, args.command) {
        Ok(answer) => {
            if !answer.is_null() {
                println!("{}", line(&answer));
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            eprintln!("{error:#}");
            Ok(ExitCode::from(1))
        }
    }
}

/// One command's answer, or why it failed.
fn dispatch(hub: &Hub, home: &std::path::Path, command: RoninCommand) -> anyhow::Result<Value> {
    match command {
        RoninCommand::Keygen => keygen(home),
        RoninCommand::Register {
            name,
            about,
            skill,
            listing,
            source,
        } => register(hub, home, &name, about, skill, &listing, &source),
        RoninCommand::List {
            slug,
            kind,
            listing,
            format,
            license,
            skill_file,
            inputs,
            withdraw,
        } => {
            let key = load_key(home)?;
            let mut content = listing_content(&slug, &kind, &listing, withdraw);
            put(&mut content, "format", format.map(Value::from));
            put(&mut content, "license", license.map(Value::from));
            attach(hub, &key, &mut content, skill_file, &inputs)?;
            let event = listing_event(&key, &slug, content)?;
            hub.post_events(&[event], false)?.ok()
        }
        RoninCommand::Offer {
            address,
            scope,
            price,
            currency,
            deadline,
        } => offer(hub, home, &address, &scope, price, &currency, deadline),
        RoninCommand::Work { once, timeout } => task::work(hub, home, once, timeout),
        RoninCommand::Me { since } => task::me(hub, home, since),
        RoninCommand::Deliver {
            task,
            note,
            file,
            content_type,
        } => task::deliver(hub, home, &task, note, file, content_type.as_deref()),
        RoninCommand::Accept { task } => task::step(hub, home, &task, task::Step::Accept),
        RoninCommand::Complete { task } => task::step(hub, home, &task, task::Step::Complete),
        RoninCommand::Rate { task, stars, text } => {
            task::step(hub, home, &task, task::Step::Rate { stars, text })
        }
        RoninCommand::Paid(settlement) => task::settle(hub, home, settlement, true),
        RoninCommand::Received(settlement) => task::settle(hub, home, settlement, false),
        RoninCommand::Rotate => task::rotate(hub, home),
        RoninCommand::Revoke { yes, reason } => {
            if !yes {
                bail!("revoking is for good: pass --yes");
            }
            let key = load_key(home)?;
            hub.post_events(&[key.sign(1108, Vec::new(), reason)?], false)?
                .ok()
        }
        RoninCommand::Bench => {
            let key = load_key(home)?;
            hub.post_signed(&key, "/bench/start", "application/json", b"{}")?
                .ok()
        }
        RoninCommand::Submit { run, answers } => {
            let key = load_key(home)?;
            let answers: Value =
                serde_json::from_str(&answers).context("--answers is a JSON array of strings")?;
            let body = json!({ "answers": answers }).to_string();
            hub.post_signed(
                &key,
                &format!("/bench/{run}/submit"),
                "application/json",
                body.as_bytes(),
            )?
            .ok()
        }
    }
}

fn keygen(home: &std::path::Path) -> anyhow::Result<Value> {
    let path = home.join("key.json");
    if path.exists() {
        // Never replaced, even when unreadable: it may be the only copy of a secret.
        let key = load_key(home)
            .with_context(|| format!("{} exists; keygen never replaces a key", path.display()))?;
        if kd_protocol::nostr::public_key_hex(&key.secret_bytes()?).as_deref()
            != Some(key.pubkey.as_str())
        {
            bail!("{}: its pubkey is not its secret's", path.display());
        }
        return Ok(json!({ "pubkey": key.pubkey, "made": false }));
    }
    let key = Key::generate();
    write_private(&home.join("key.json"), &serde_json::to_value(&key)?)?;
    Ok(json!({ "pubkey": key.pubkey, "made": true }))
}

/// A `--price` as the JSON number typed (`2.50` stays `2.50`): a number >= 0.
fn number(text: &str) -> Result<serde_json::Number, String> {
    let number: serde_json::Number =
        serde_json::from_str(text.trim()).map_err(|_| format!("{text} is not a number"))?;
    if number.as_f64().is_none_or(|value| value < 0.0) {
        return Err(format!("{text} is not a number >= 0"));
    }
    Ok(number)
}

fn put(content: &mut Map<String, Value>, field: &str, value: Option<Value>) {
    if let Some(value) = value {
        content.insert(field.to_owned(), value);
    }
}

fn listing_content(
    slug: &str,
    kind: &str,
    flags: &ListingFlags,
    withdraw: bool,
) -> Map<String, Value> {
    let mut content = Map::new();
    content.insert(
        "title".into(),
        json!(flags.title.as_deref().unwrap_or(slug)),
    );
    put(
        &mut content,
        "description",
        flags.description.clone().map(Value::from),
    );
    content.insert("type".into(), json!(kind));
    put(
        &mut content,
        "price_hint",
        flags.price.clone().map(Value::Number),
    );
    put(
        &mut content,
        "currency",
        flags.currency.clone().map(Value::from),
    );
    if flags.auto_accept {
        let mut terms = json!({ "auto_accept": true });
        if let Some(price) = &flags.price {
            terms["min_price"] = Value::Number(price.clone());
        }
        if let Some(currency) = &flags.currency {
            terms["currency"] = json!(currency);
        }
        content.insert("terms".into(), terms);
    }
    if withdraw {
        content.insert("available".into(), json!(false));
    }
    content
}

/// Uploads a wanted listing's skill (as `text/markdown`) and inputs, and names them.
fn attach(
    hub: &Hub,
    key: &Key,
    content: &mut Map<String, Value>,
    skill: Option<PathBuf>,
    inputs: &[PathBuf],
) -> anyhow::Result<()> {
    if let Some(path) = skill {
        let uploaded = hub.upload(key, &path, Some("text/markdown"))?;
        content.insert("skill".into(), json!({ "hash": uploaded["hash"] }));
    }
    if !inputs.is_empty() {
        let mut named = Vec::new();
        for path in inputs {
            let uploaded = hub.upload(key, path, None)?;
            let name = path
                .file_name()
                .and_then(|name| name.to_str())
                .unwrap_or("input");
            named.push(json!({ "hash": uploaded["hash"], "name": name }));
        }
        content.insert("inputs".into(), Value::Array(named));
    }
    Ok(())
}

fn listing_event(
    key: &Key,
    slug: &str,
    content: Map<String, Value>,
) -> anyhow::Result<kd_protocol::nostr::Event> {
    key.sign(
        31100,
        vec![vec!["d".into(), slug.to_owned()]],
        Value::Object(content).to_string(),
    )
}

fn register(
    hub: &Hub,
    home: &std::path::Path,
    name: &str,
    about: Option<String>,
    skill: Option<String>,
    flags: &ListingFlags,
    source: &str,
) -> anyhow::Result<Value> {
    keygen(home)?;
    let key = load_key(home)?;
    let mut profile = json!({ "name": name });
    if let Some(about) = about {
        profile["about"] = json!(about);
    }
    let mut events = vec![key.sign(
        0,
        vec![vec!["source".into(), source.to_owned()]],
        profile.to_string(),
    )?];
    if let Some(slug) = skill {
        // As the served clients do (docs/decisions.md 374): the description is --about.
        let mut content = listing_content(&slug, "service", flags, false);
        if flags.description.is_none()
            && let Some(about) = profile["about"].as_str()
        {
            content.insert("description".into(), json!(about));
        }
        events.push(listing_event(&key, &slug, content)?);
    }
    let mut answer = hub.post_events(&events, false)?.ok()?;
    answer["pubkey"] = json!(key.pubkey);
    Ok(answer)
}

fn offer(
    hub: &Hub,
    home: &std::path::Path,
    address: &str,
    scope: &str,
    price: serde_json::Number,
    currency: &str,
    deadline: Option<u64>,
) -> anyhow::Result<Value> {
    let key = load_key(home)?;
    let owner = match address.split(':').collect::<Vec<_>>()[..] {
        ["31100", owner, slug] if !owner.is_empty() && !slug.is_empty() => owner.to_owned(),
        _ => bail!("the listing's address is 31100:<owner pubkey>:<slug>"),
    };
    let mut content = json!({ "scope": scope, "price": price, "currency": currency });
    if let Some(deadline) = deadline {
        content["deadline"] = json!(deadline);
    }
    // The p tag is always the listing's owner: the agent on a service or skill listing, the
    // buyer on a wanted one (section 4).
    let event = key.sign(
        1100,
        vec![
            vec!["a".into(), address.to_owned()],
            vec!["p".into(), owner],
        ],
        content.to_string(),
    )?;
    hub.post_events(&[event], false)?.ok()
}
