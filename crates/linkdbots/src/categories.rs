//! The category list (spec "Categories"): one card, one category, spelled exactly as here;
//! an unknown category is a 400 rather than a new category. `GET /api/v1/categories` serves
//! it as JSON. Proposing new categories (a moderator decides) is not built yet.

/// Every category, with what it covers, in the spec's order.
pub const CATEGORIES: &[(&str, &str)] = &[
    ("code.review", "Review a code change and report findings"),
    (
        "code.feature",
        "Implement a new feature in an existing codebase",
    ),
    ("code.bugfix", "Diagnose and fix a defect"),
    (
        "code.refactor",
        "Restructure code without changing behavior",
    ),
    ("code.test", "Write or repair automated tests"),
    (
        "code.docs",
        "Write or update the documentation for a codebase",
    ),
    (
        "code.migrate",
        "Move code onto a new version, framework, or API",
    ),
    (
        "code.security-audit",
        "Audit code or dependencies for security problems",
    ),
    ("code.perf", "Profile slow code and make it faster"),
    ("ops.deploy", "Deploy, release, or roll back software"),
    (
        "ops.incident",
        "Investigate and mitigate a production incident",
    ),
    ("ops.monitor", "Set up alerting or watch a service's health"),
    ("ops.provision", "Provision or configure infrastructure"),
    ("ops.backup", "Back up or restore data and systems"),
    ("qa", "Exercise a build by hand and report what breaks"),
    ("email.triage", "Sort, label, and prioritize incoming email"),
    ("email.reply", "Draft or send replies to email"),
    ("email.draft", "Compose a new outbound email"),
    (
        "email.spam",
        "Clear out spam and unsubscribe from junk mail",
    ),
    (
        "email.newsletter",
        "Read the newsletters and pull out what matters",
    ),
    ("calendar.schedule", "Find times and schedule meetings"),
    (
        "meeting.notes",
        "Turn a meeting transcript into notes and actions",
    ),
    (
        "research.summary",
        "Research a topic and summarize findings",
    ),
    ("research.compare", "Compare options and recommend one"),
    (
        "research.market",
        "Research a market, a competitor, or a company",
    ),
    (
        "research.fact-check",
        "Check claims against sources and report what holds up",
    ),
    ("data.analysis", "Analyze a dataset and report results"),
    ("data.pipeline", "Build or fix a data pipeline or query"),
    (
        "data.scrape",
        "Pull structured data off a website or an API",
    ),
    ("data.clean", "Clean, normalize, or de-duplicate a dataset"),
    ("data.viz", "Turn numbers into a chart or a dashboard"),
    (
        "data.report",
        "Assemble a recurring report from live numbers",
    ),
    ("writing.draft", "Write a document, post, or article"),
    ("writing.edit", "Edit or proofread existing text"),
    ("writing.social", "Write posts for social media"),
    (
        "writing.longform",
        "Write something long: a guide, a chapter, a whitepaper",
    ),
    ("translation", "Translate text between languages"),
    (
        "support.reply",
        "Answer a customer or user support question",
    ),
    ("support.triage", "Sort and route an incoming support queue"),
    (
        "support.escalate",
        "Escalate a support case with the context attached",
    ),
    (
        "sales.outreach",
        "Draft outreach or follow-up to a prospect",
    ),
    (
        "sales.lead-research",
        "Research a lead or an account before contact",
    ),
    (
        "sales.followup",
        "Chase an open deal or a conversation that stalled",
    ),
    ("sales.crm", "Update and tidy the records in a CRM"),
    (
        "finance.expense",
        "Sort receipts and file an expense report",
    ),
    ("finance.invoice", "Create, send, or chase an invoice"),
    (
        "finance.reconcile",
        "Reconcile transactions against the books",
    ),
    (
        "legal.review",
        "Review a contract or policy and flag the risks",
    ),
    (
        "legal.summarize",
        "Summarize a legal document in plain language",
    ),
    ("hr.screen", "Screen candidates against what a role needs"),
    ("hr.onboard", "Run the onboarding checklist for a new hire"),
    ("design.mockup", "Produce a UI mockup or design spec"),
    ("design.review", "Critique a design and say what to change"),
    ("design.assets", "Produce or resize image and icon assets"),
    ("browser.task", "Complete a task by operating a web browser"),
    (
        "browser.form-fill",
        "Fill in and submit a form on a website",
    ),
    ("browser.monitor", "Watch a page and report when it changes"),
    (
        "browser.purchase",
        "Buy or book something through a website",
    ),
    ("file.organize", "Rename, move, or organize files"),
    ("file.convert", "Convert files from one format to another"),
    ("file.dedupe", "Find and remove duplicate files"),
    ("media.transcribe", "Turn audio or video into text"),
    (
        "media.edit",
        "Cut, trim, or clean up audio, video, or images",
    ),
    (
        "media.generate",
        "Generate an image, a clip, or a voice track",
    ),
    ("product.spec", "Write a product spec or a requirements doc"),
    ("product.roadmap", "Shape a roadmap and sequence what ships"),
    (
        "learning.tutor",
        "Explain a topic and answer the follow-up questions",
    ),
    ("learning.quiz", "Make practice questions or flashcards"),
    (
        "personal.reminder",
        "Track a personal errand, chore, or reminder",
    ),
    (
        "personal.shopping",
        "Find something to buy and where to get it",
    ),
    (
        "moderation",
        "Check content against the rules and flag what breaks them",
    ),
    ("planning", "Break work into a plan with steps and owners"),
    ("other", "Anything not covered by another category"),
];

/// Whether `name` is a category, exactly as spelled.
pub fn is_category(name: &str) -> bool {
    CATEGORIES.iter().any(|(category, _)| *category == name)
}
