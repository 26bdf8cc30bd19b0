//! Typed tool inputs (issue 10, "Typed tool inputs and outputs"; DESIGN rule 2).
//!
//! A tool's arguments are a serde struct that also derives [`schemars::JsonSchema`]: doc
//! comments are the parameters' descriptions, `Option<T>` is an optional parameter, a plain
//! `T` a required one, and a unit-variant enum (`rename_all = "snake_case"`) a string with its
//! allowed values. The tool declares the struct once, through [`input!`](crate::input!), and
//! its handler once, through [`typed!`](crate::typed):
//!
//! ```ignore
//! /// list_threads' arguments.
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct ListThreads {
//!     /// How many threads to return, from 1 to 30.
//!     limit: Option<i64>,
//! }
//! pub static LIST_THREADS: Tool = Tool {
//!     arguments: Arguments::Typed(kd_kernel::input!(ListThreads)),
//!     handler: kd_kernel::typed!(LIST_THREADS, list_threads), .. };
//! async fn list_threads(ctx: Ctx, input: ListThreads) -> Result<Value, ToolError> { .. }
//! ```
//!
//! The schema `tools/list` shows is generated from the struct and flattened to the plain shape
//! every client reads (per property: `type`, `description`, `enum`; no `$ref`, no `format`).
//! The same table checks the arguments before serde sees them, so an unknown name, a wrong
//! type, an enum value or a missing required argument is refused with the same `validation`
//! message on every tool ([`crate::registry::Tool::validate`]). The handler's struct is then
//! parsed from the canonical document the signature covered, so it acts on exactly what was
//! signed. The table keeps the struct's field order (the tool reference and the "takes: …"
//! message list the parameters in it; a GET route's query parameters follow it).
//!
//! Aliases (an older or REST name for a parameter) are declared once, as [`Alias`] rows on the
//! input: the schema lists each as its own property ("Alias for name."), a required parameter
//! is satisfied by either name, and before parsing the alias's value moves to the parameter's
//! own name when that is absent or null (the parameter's own name wins when both are given).
//! When the handler must know which of the names was sent (its message names it), declare the
//! other name as a field of its own instead, described "Alias for x.", and read both.
//!
//! The parameters every area shares are declared once here. `agent_id` of a tool whose caller
//! is the signer (the pipeline checks the name against the signature; the handler reads the
//! caller from its context) is the kernel's: [`InputSchema::agent_id`] adds it to the table
//! ([`AGENT_ID_DOC`]) and [`crate::registry::Args::parse`] takes it off before the struct is
//! parsed, so the struct does not spell it. A tool that reads `agent_id` itself (a subject, a
//! person-or-agent tool) declares the field, described by [`AGENT_ID_DOC`].

mod table;
mod text;

pub use text::{Text, first_sent, sent_name};

/// Another name a parameter is accepted under.
#[derive(Debug, Clone, Copy)]
pub struct Alias {
    /// The other name.
    pub name: &'static str,
    /// The parameter it stands for (a property of the input struct).
    pub of: &'static str,
    /// Text after "Alias for `of`" in the description (e.g. " (the REST name)"); usually "".
    pub note: &'static str,
}

impl Alias {
    /// `name` is another name for `of`.
    pub const fn new(name: &'static str, of: &'static str) -> Self {
        Self { name, of, note: "" }
    }
}

/// What `agent_id` says on every tool that takes it.
pub const AGENT_ID_DOC: &str = "Agent id. Identity comes from the signature or the owner session. The x-karmadue-agent header is optional.";

/// Whether the kernel's `agent_id` parameter must be sent ([`InputSchema::agent_id`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentIdParam {
    /// Required: the caller names itself on every call.
    Required,
    /// Optional: the signature's `x-karmadue-agent` header may name it instead.
    Optional,
}

/// A tool's typed input: its parameter table (built once, on first use), its aliases and
/// whether the kernel declares `agent_id` for it. Made by [`input!`](crate::input!).
#[derive(Debug, Clone, Copy)]
pub struct InputSchema {
    /// The table of the input struct for this schema, built on the first call and kept for the
    /// process's life (each `input!` has its own cell). Read it through [`InputSchema::declared`].
    pub table: fn(&InputSchema) -> &'static Declared,
    /// Other names of its parameters.
    pub aliases: &'static [Alias],
    /// `Some` when `agent_id` is the kernel's (the signer's name; the struct has no such
    /// field): listed first, taken off the arguments before parsing.
    pub agent_id: Option<AgentIdParam>,
    /// Required groups that replace the struct's own ([`input_requiring!`](crate::input_requiring!)).
    pub required: Option<&'static [&'static [&'static str]]>,
}

impl InputSchema {
    /// The same input with the kernel's `agent_id` parameter: `input!(ReportOutcome)
    /// .agent_id(AgentIdParam::Optional)`.
    #[must_use]
    pub const fn agent_id(self, need: AgentIdParam) -> Self {
        Self {
            agent_id: Some(need),
            ..self
        }
    }

    /// The parameter table (built on the first call).
    pub fn declared(&self) -> &'static Declared {
        (self.table)(self)
    }
}

/// The [`InputSchema`] of a tool whose arguments are the struct `$input` (serde +
/// [`schemars::JsonSchema`]), with optional [`Alias`] rows: `input!(GetResource)`,
/// `input!(ListThreads, &ALIASES)`.
#[macro_export]
macro_rules! input {
    ($input:ty) => {
        $crate::input!($input, &[])
    };
    ($input:ty, $aliases:expr) => {{
        fn table(input: &$crate::input::InputSchema) -> &'static $crate::input::Declared {
            static TABLE: ::std::sync::OnceLock<$crate::input::Declared> =
                ::std::sync::OnceLock::new();
            TABLE.get_or_init(|| $crate::input::Declared::of::<$input>(input))
        }
        $crate::input::InputSchema {
            table,
            aliases: $aliases,
            agent_id: None,
            required: None,
        }
    }};
}

/// The [`InputSchema`] of the struct `$input` with the required groups `$required` (each a
/// list of names of which one must be present) instead of the struct's own required fields,
/// and no alias rows: `input_requiring!(GetReceipt, &[&["receipt_id", "credential_id"]])`.
///
/// For a tool whose other names are fields of their own (its refusals name the name that was
/// sent): each such field is optional, so the struct alone would lose the rule "one of these
/// is required", and the refusal would come from the handler, after the caller's proof is
/// checked. The groups keep it in validation, with its message ("a or b is required").
#[macro_export]
macro_rules! input_requiring {
    ($input:ty, $required:expr) => {{
        $crate::input::InputSchema {
            required: Some($required),
            ..$crate::input!($input)
        }
    }};
}

/// The parameter table of a typed input: its parameters (aliases included) and its required
/// groups (a parameter with aliases is satisfied by any of its names).
#[derive(Debug)]
pub struct Declared {
    /// Every accepted name, in the struct's field order, each alias after its parameter, the
    /// kernel's `agent_id` first.
    pub params: &'static [crate::registry::Param],
    /// Groups of names of which one must be present, in the struct's field order.
    pub required: &'static [&'static [&'static str]],
}

impl Declared {
    /// The table of `I` for `input`. Its texts are leaked: call it once per tool (what
    /// [`input!`](crate::input!) does).
    pub fn of<I>(input: &InputSchema) -> Self
    where
        I: schemars::JsonSchema + serde::de::DeserializeOwned,
    {
        table::declared::<I>(input)
    }
}

/// The schema of a parameter that takes a string or an object (`#[schemars(schema_with =
/// "kd_kernel::input::string_or_object")]`; check_before_acting's target).
pub fn string_or_object(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": ["string", "object"] })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::ParamType;
    use schemars::JsonSchema;
    use serde::Deserialize;

    /// A topic.
    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    #[allow(dead_code)]
    enum Topic {
        Tools,
        General,
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Sample {
        /// Display name.
        name: String,
        /// How many, from 1 to 30.
        limit: Option<i64>,
        /// Topic id.
        topic: Option<Topic>,
        /// Show demo rows.
        include_demo: Option<bool>,
    }

    #[test]
    fn the_table_is_the_struct_flattened_in_field_order_with_aliases_after_their_parameter() {
        static ALIASES: [Alias; 1] = [Alias::new("label", "name")];
        let input = crate::input!(Sample, &ALIASES);
        let table = input.declared();
        assert!(std::ptr::eq(table, input.declared()), "built once");
        let shown: Vec<(&str, ParamType, &str, &[&str])> = table
            .params
            .iter()
            .map(|param| (param.name, param.ty, param.description, param.values))
            .collect();
        assert_eq!(
            shown,
            vec![
                ("name", ParamType::String, "Display name.", &[][..]),
                ("label", ParamType::String, "Alias for name.", &[][..]),
                (
                    "limit",
                    ParamType::Integer,
                    "How many, from 1 to 30.",
                    &[][..]
                ),
                (
                    "topic",
                    ParamType::String,
                    "Topic id.",
                    &["tools", "general"][..]
                ),
                (
                    "include_demo",
                    ParamType::Boolean,
                    "Show demo rows.",
                    &[][..]
                ),
            ]
        );
        assert_eq!(table.required, &[&["name", "label"][..]][..]);
    }

    #[test]
    fn the_kernels_agent_id_comes_first_and_a_required_one_is_the_first_group() {
        let optional = crate::input!(Sample).agent_id(AgentIdParam::Optional);
        let table = optional.declared();
        assert_eq!(table.params[0].name, "agent_id");
        assert_eq!(table.params[0].description, AGENT_ID_DOC);
        assert_eq!(table.required, &[&["name"][..]][..]);
        let required = crate::input!(Sample).agent_id(AgentIdParam::Required);
        assert_eq!(
            required.declared().required,
            &[&["agent_id"][..], &["name"][..]][..]
        );
        let grouped =
            crate::input_requiring!(Sample, &[&["name", "limit"]]).agent_id(AgentIdParam::Required);
        assert_eq!(
            grouped.declared().required,
            &[&["agent_id"][..], &["name", "limit"][..]][..]
        );
    }

    #[test]
    fn serde_renames_are_the_field_order_names() {
        #[derive(Deserialize, JsonSchema)]
        #[allow(dead_code)]
        struct Renamed {
            /// Z.
            zed: Option<String>,
            /// A.
            #[serde(rename = "alpha")]
            a: Option<String>,
        }
        let names: Vec<&str> = crate::input!(Renamed)
            .declared()
            .params
            .iter()
            .map(|param| param.name)
            .collect();
        assert_eq!(names, ["zed", "alpha"]);
    }

    #[test]
    fn the_first_name_sent_wins_even_when_empty() {
        let (empty, other) = (Some(" ".to_owned()), Some("x".to_owned()));
        assert_eq!(first_sent(&[&empty, &other]).text(), None);
        assert_eq!(first_sent(&[&None, &other]).text(), Some("x"));
        assert_eq!(first_sent(&[&None, &None]), &None);
        assert_eq!(sent_name(&["a", "b"], &[&empty, &other]), "b");
        assert_eq!(sent_name(&["a", "b"], &[&None, &None]), "a");
    }

    #[test]
    fn input_requiring_keeps_the_groups_it_is_given() {
        let input = crate::input_requiring!(Sample, &[&["name", "label"], &["limit"]]);
        let table = input.declared();
        assert_eq!(
            table.required,
            &[&["name", "label"][..], &["limit"][..]][..]
        );
        assert!(table.params.iter().any(|param| param.name == "topic"));
    }

    #[test]
    fn required_text_of_names_every_name_and_empty_text_is_absent() {
        let blank = Some("  ".to_owned());
        let error = blank.required_text_of(&["name", "label"]).unwrap_err();
        assert_eq!(error.message, "name or label is required");
        assert_eq!(error.field.as_deref(), Some("name"));
        assert_eq!(
            Some(" x ".to_owned()).required_text_of(&["name"]).unwrap(),
            "x"
        );
    }
}
