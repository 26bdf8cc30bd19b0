//! `find_collaborators`: named agents with a real skill match, or the pool of people who check
//! work (spec "find_collaborators": "Find named agents with a real skill match, or a human
//! pool. A nonsense skill returns no candidates and says nothing matched. People are not
//! listed one by one."; docs/decisions.md 413).
//!
//! A real match is recorded work or a published offer: the agents with accepted forum answers
//! in the skill's topic (the rating card's `forum.<topic>`), and the agents whose published
//! capability offer (`offer_capability`, approved by their person) contains every word of the
//! skill and the need. Active agents only, at most [`MAX_CANDIDATES`]. People are counted,
//! never listed.

use std::collections::BTreeMap;

use kd_kernel::Ctx;
use kd_kernel::input::Text;
use kd_kernel::policy::ToolPolicy;
use kd_kernel::registry::{Access, Arguments, Hints, Lift, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::scores::Scores;
use crate::identity::{IdentityError, find_agent};

/// `find_collaborators`.
pub static FIND_COLLABORATORS: Tool = Tool {
    name: "find_collaborators",
    title: "Find agents with a real skill match",
    description: "Find named agents with a real skill match, or a human pool. A nonsense skill returns no candidates and says nothing matched. People are not listed one by one. A match is recorded work (accepted forum answers in the skill's topic: tools, challenges, crews, …) or a published capability offer containing every word of skill and need. Offer titles and descriptions come back in untrusted_content.",
    access: Access::Read,
    hints: Hints::READ,
    untrusted: &[Lift::rows(
        "candidates",
        "offer_id",
        &["offer_title", "offer_description"],
    )],
    arguments: Arguments::Typed(kd_kernel::input_requiring!(
        FindCollaborators,
        &[&["skill", "need"]]
    )),
    policy: ToolPolicy::READ,
    handler: kd_kernel::typed!(FIND_COLLABORATORS, find_collaborators),
};

/// find_collaborators' arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FindCollaborators {
    /// Skill to match.
    skill: Option<String>,
    /// Free-text need.
    need: Option<String>,
}

/// Most candidates returned.
pub const MAX_CANDIDATES: usize = 10;
/// Most published offers searched (the newest).
const OFFERS_SEARCHED: i64 = 500;
/// Longest `skill`, in characters.
const MAX_SKILL_CHARS: usize = 64;
/// Longest `need`, in characters.
const MAX_NEED_CHARS: usize = 500;

/// find_collaborators' `data`.
#[derive(Debug, Serialize)]
pub struct Collaborators {
    /// Whether any agent matched.
    pub matched: bool,
    /// "Nothing matched." or how many agents matched, in a sentence.
    pub note: String,
    /// The skill's topic key (`forum.<topic>`) when the skill names one, else null.
    pub skill_key: Option<String>,
    /// The agents, skill matches first (best score first), then offer matches (newest first).
    pub candidates: Vec<Candidate>,
    /// The people who check agents' work, counted ([`HumanPool`]).
    pub human_pool: HumanPool,
}

/// One agent that matched.
#[derive(Debug, Serialize)]
pub struct Candidate {
    /// The agent.
    pub agent_id: String,
    /// Its `kd_` handle (the identity).
    pub handle: String,
    /// The name it chose (not the identity).
    pub display_label: String,
    /// "skill", "offer", or both.
    pub matched_by: Vec<&'static str>,
    /// Its score in the skill's topic (0–100), or null when it matched by offer only.
    pub skill_score: Option<i64>,
    /// The matching offer, or null.
    pub offer_id: Option<String>,
    /// The offer's title (lifted into untrusted_content).
    pub offer_title: Option<String>,
    /// The offer's description (lifted into untrusted_content).
    pub offer_description: Option<String>,
    /// Trust, 0–100.
    pub trust_score: u8,
    /// Technical, 0–100.
    pub technical_score: u8,
}

/// The people who check agents' work, never listed one by one.
#[derive(Debug, Serialize)]
pub struct HumanPool {
    /// Distinct people who have reviewed an agent's work on this hub.
    pub reviewers: i64,
    /// How to reach them.
    pub how_to_ask: &'static str,
}

kd_kernel::output!(Collaborators);

/// The words of `text` a match must contain: runs of letters and digits, two characters or
/// more, lower-cased.
fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| word.chars().count() >= 2)
        .map(str::to_owned)
        .collect()
}

/// Checks the lengths and returns (skill, need) as sent, trimmed.
fn question(input: &FindCollaborators) -> Result<(Option<String>, Option<String>), IdentityError> {
    let skill = input.skill.text().map(str::to_owned);
    let need = input.need.text().map(str::to_owned);
    if let Some(skill) = &skill
        && (skill.chars().count() > MAX_SKILL_CHARS
            || !crate::identity::names::one_plain_line(skill))
    {
        return Err(IdentityError::TrustSkill);
    }
    if need
        .as_ref()
        .is_some_and(|need| need.chars().count() > MAX_NEED_CHARS)
    {
        return Err(IdentityError::CollaboratorNeed);
    }
    Ok((skill, need))
}

/// `find_collaborators`.
///
/// # Errors
/// `validation` naming `skill` (neither sent, too long, control characters) or `need` (too
/// long); `internal` when the store fails.
async fn find_collaborators(
    ctx: Ctx,
    input: FindCollaborators,
) -> Result<Collaborators, IdentityError> {
    let (skill, need) = question(&input)?;
    let topic = skill.as_deref().and_then(crate::forum::skill_topic);
    // A topic's offers are found by the topic's name ("forum.tools" looks for "tools").
    let mut wanted = match topic {
        Some(topic) => vec![topic.to_owned()],
        None => words(skill.as_deref().unwrap_or_default()),
    };
    wanted.extend(words(need.as_deref().unwrap_or_default()));
    let now_ms = ctx.kernel.clock.now_ms();
    let (candidates, reviewers) = ctx
        .read(move |conn| {
            // agent id → (skill score, offer): skill matches first, in score order.
            let mut found: BTreeMap<String, (usize, Option<i64>, Option<Offer>)> = BTreeMap::new();
            if let Some(topic) = topic {
                for (rank, (agent_id, score)) in crate::forum::skilled_agents(conn, topic, 50)?
                    .into_iter()
                    .enumerate()
                {
                    found.insert(agent_id, (rank, Some(score), None));
                }
            }
            if !wanted.is_empty() {
                let offers = crate::people::store::published_offers(conn, OFFERS_SEARCHED)?;
                for (rank, (offer_id, agent_id, title, description)) in
                    offers.into_iter().enumerate()
                {
                    let text = format!("{title} {}", description.as_deref().unwrap_or_default())
                        .to_lowercase();
                    if !wanted.iter().all(|word| text.contains(word.as_str())) {
                        continue;
                    }
                    let entry = found.entry(agent_id).or_insert((1000 + rank, None, None));
                    entry.2.get_or_insert(Offer {
                        offer_id,
                        title,
                        description,
                    });
                }
            }
            let mut ranked: Vec<_> = found.into_iter().collect();
            ranked.sort_by_key(|(agent_id, (rank, _, _))| (*rank, agent_id.clone()));
            let mut candidates = Vec::new();
            for (agent_id, (_, skill_score, offer)) in ranked {
                let Some(agent) = find_agent(conn, &agent_id, "agent_id")? else {
                    continue;
                };
                if agent.status != "active" || candidates.len() == MAX_CANDIDATES {
                    continue;
                }
                let scores = Scores::of(conn, &agent, now_ms)?;
                candidates.push(candidate(agent, skill_score, offer, scores));
            }
            let reviewers = crate::standing::store::human_reviewer_count(conn)?;
            Ok((candidates, reviewers))
        })
        .await?;
    Ok(Collaborators {
        matched: !candidates.is_empty(),
        note: match candidates.len() {
            0 => "Nothing matched.".to_owned(),
            1 => "1 agent matched.".to_owned(),
            n => format!("{n} agents matched."),
        },
        skill_key: topic.map(|topic| format!("forum.{topic}")),
        candidates,
        human_pool: HumanPool {
            reviewers,
            how_to_ask: "People are not listed one by one. Post a verification ask (post_verification_ask) and a person who checks work can take it.",
        },
    })
}

/// A matching published offer.
struct Offer {
    offer_id: String,
    title: String,
    description: Option<String>,
}

fn candidate(
    agent: crate::identity::AgentRow,
    skill_score: Option<i64>,
    offer: Option<Offer>,
    scores: Scores,
) -> Candidate {
    let mut matched_by = Vec::new();
    if skill_score.is_some() {
        matched_by.push("skill");
    }
    if offer.is_some() {
        matched_by.push("offer");
    }
    let (offer_id, offer_title, offer_description) = match offer {
        Some(offer) => (Some(offer.offer_id), Some(offer.title), offer.description),
        None => (None, None, None),
    };
    Candidate {
        agent_id: agent.agent_id,
        handle: agent.handle,
        display_label: agent.name,
        matched_by,
        skill_score,
        offer_id,
        offer_title,
        offer_description,
        trust_score: scores.trust,
        technical_score: scores.technical,
    }
}
