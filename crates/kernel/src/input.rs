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
//! pub static LIST_THREADS: Tool = Tool { input: Some(kd_kernel::input!(ListThreads)),
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
//! signed.
//!
//! Aliases (an older or REST name for a parameter) are declared once, as [`Alias`] rows on the
//! input: the schema lists each as its own property ("Alias for name."), a required parameter
//! is satisfied by either name, and before parsing the alias's value moves to the parameter's
//! own name when that is absent or null (the parameter's own name wins when both are given).
//! When the handler must know which of the names was sent (its message names it), declare the
//! other name as a field of its own instead, described "Alias for x.", and read both.
//!
//! The parameters every area shares are described once here: [`AGENT_ID_DOC`].

use schemars::JsonSchema;
use serde_json::{Map, Value, json};

use crate::registry::{Param, ParamType};

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

/// A tool's typed input: its parameter table (built once, on first use) and its aliases.
/// Made by [`input!`](crate::input!).
#[derive(Debug, Clone, Copy)]
pub struct InputSchema {
    /// The table of the input struct with these aliases, built on the first call and kept
    /// for the process's life (each `input!` has its own cell).
    pub table: fn(&'static [Alias]) -> &'static Declared,
    /// Other names of its parameters.
    pub aliases: &'static [Alias],
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
        fn table(aliases: &'static [$crate::input::Alias]) -> &'static $crate::input::Declared {
            static TABLE: ::std::sync::OnceLock<$crate::input::Declared> =
                ::std::sync::OnceLock::new();
            TABLE.get_or_init(|| $crate::input::Declared::of::<$input>(aliases))
        }
        $crate::input::InputSchema {
            table,
            aliases: $aliases,
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
        fn table(aliases: &'static [$crate::input::Alias]) -> &'static $crate::input::Declared {
            static TABLE: ::std::sync::OnceLock<$crate::input::Declared> =
                ::std::sync::OnceLock::new();
            TABLE.get_or_init(|| $crate::input::Declared {
                required: $required,
                ..$crate::input::Declared::of::<$input>(aliases)
            })
        }
        $crate::input::InputSchema {
            table,
            aliases: &[],
        }
    }};
}

/// The first of `values` that was sent (present and not null), in the order of the
/// parameter's names, its own first, as the untyped arguments read a name and its other names:
/// `first_sent(&[&input.email, &input.human_email]).text()` is empty when `email` was sent
/// empty, whatever `human_email` says.
pub fn first_sent<'a>(values: &[&'a Option<String>]) -> &'a Option<String> {
    values
        .iter()
        .copied()
        .find(|value| value.is_some())
        .unwrap_or(&None)
}

/// Which of `names` carries text (the first whose value in `values`, same order, is not empty
/// after trimming), else `names[0]`: the field a refusal of the text names.
pub fn sent_name(names: &[&'static str], values: &[&Option<String>]) -> &'static str {
    names
        .iter()
        .zip(values)
        .find(|(_, value)| value.text().is_some())
        .map_or(
            names.first().copied().unwrap_or("arguments"),
            |(name, _)| *name,
        )
}

/// The parameter table of a typed input: its parameters (aliases included) and its required
/// groups (a parameter with aliases is satisfied by any of its names).
#[derive(Debug)]
pub struct Declared {
    /// Every accepted name, in the schema's order (alphabetical), aliases included.
    pub params: &'static [Param],
    /// Groups of names of which one must be present, in the struct's field order.
    pub required: &'static [&'static [&'static str]],
}

impl Declared {
    /// The table of `I` with `aliases`. Its texts are leaked: call it once per tool (what
    /// [`input!`](crate::input!) does).
    pub fn of<I: JsonSchema>(aliases: &'static [Alias]) -> Self {
        let schema = schemars::SchemaGenerator::default()
            .into_root_schema_for::<I>()
            .to_value();
        build(&schema, aliases)
    }
}

fn build(schema: &Value, aliases: &'static [Alias]) -> Declared {
    let properties = flat_properties(schema);
    let mut params = Vec::new();
    for (name, property) in &properties {
        params.push(param(leak(name), property));
    }
    for alias in aliases {
        let ty = params
            .iter()
            .find(|param| param.name == alias.of)
            .map_or(ParamType::String, |param| param.ty);
        let description = leak(&format!("Alias for {}{}.", alias.of, alias.note));
        params.push(Param::new(alias.name, ty, description));
    }
    params.sort_by(|a, b| a.name.cmp(b.name));
    let mut required = Vec::new();
    for name in schema["required"].as_array().into_iter().flatten() {
        let Some(name) = name.as_str() else { continue };
        let mut group = vec![leak(name)];
        group.extend(
            aliases
                .iter()
                .filter(|alias| alias.of == name)
                .map(|alias| alias.name),
        );
        required.push(&*Box::leak(group.into_boxed_slice()));
    }
    Declared {
        params: Box::leak(params.into_boxed_slice()),
        required: Box::leak(required.into_boxed_slice()),
    }
}

fn leak(text: &str) -> &'static str {
    Box::leak(text.to_owned().into_boxed_str())
}

fn param(name: &'static str, property: &Value) -> Param {
    let ty = match property["type"].as_str() {
        Some("string") => ParamType::String,
        Some("integer") => ParamType::Integer,
        Some("number") => ParamType::Number,
        Some("boolean") => ParamType::Boolean,
        Some("object") => ParamType::Object,
        Some("array") => ParamType::Array,
        _ if property["type"] == json!(["string", "object"]) => ParamType::StringOrObject,
        _ => ParamType::String,
    };
    let description = leak(property["description"].as_str().unwrap_or(""));
    let values: Vec<&'static str> = property["enum"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(leak)
        .collect();
    Param {
        name,
        ty,
        description,
        values: Box::leak(values.into_boxed_slice()),
    }
}

/// The struct's properties flattened to `{type, description?, enum?}` each: `$ref`s inlined,
/// `null` dropped from an optional's type, `anyOf` of plain types merged into one type list,
/// everything else (format, items, defaults) left out.
fn flat_properties(schema: &Value) -> Map<String, Value> {
    let definitions = schema.get("$defs").cloned().unwrap_or(Value::Null);
    let mut flat = Map::new();
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        flat.insert(name.clone(), flatten(property, &definitions));
    }
    flat
}

fn flatten(property: &Value, definitions: &Value) -> Value {
    let mut types: Vec<Value> = Vec::new();
    let mut values: Option<Vec<Value>> = None;
    let mut description = property.get("description").cloned();
    let resolved = resolve(property, definitions);
    let branches: Vec<Value> = resolved["anyOf"]
        .as_array()
        .into_iter()
        .chain(resolved["oneOf"].as_array())
        .flatten()
        .map(|branch| resolve(branch, definitions))
        .collect();
    for part in std::iter::once(&resolved).chain(&branches) {
        let listed = match &part["type"] {
            Value::Array(list) => list.clone(),
            ty @ Value::String(_) => vec![ty.clone()],
            _ => Vec::new(),
        };
        for ty in listed {
            if ty != "null" && !types.contains(&ty) {
                types.push(ty);
            }
        }
        if let Some(list) = part["enum"].as_array() {
            values
                .get_or_insert_with(Vec::new)
                .extend(list.iter().filter(|value| !value.is_null()).cloned());
        }
        if description.is_none() {
            description = part.get("description").cloned();
        }
    }
    let mut out = Map::new();
    match types.len() {
        0 => {}
        1 => {
            out.insert("type".into(), types.remove(0));
        }
        _ => {
            out.insert("type".into(), Value::Array(types));
        }
    }
    if let Some(description) = description {
        out.insert("description".into(), description);
    }
    if let Some(values) = values {
        out.insert("enum".into(), Value::Array(values));
    }
    Value::Object(out)
}

/// A property with its `$ref` replaced by the definition it names.
fn resolve(property: &Value, definitions: &Value) -> Value {
    if let Some(reference) = property["$ref"].as_str() {
        let name = reference.rsplit('/').next().unwrap_or("");
        return definitions.get(name).cloned().unwrap_or(Value::Null);
    }
    property.clone()
}

/// Text arguments as the handlers read them: trimmed, and empty text counts as absent (what
/// every tool did with its string arguments before they were typed).
pub trait Text {
    /// The trimmed text, or `None` when absent or empty.
    fn text(&self) -> Option<&str>;

    /// The trimmed text of a required argument.
    ///
    /// # Errors
    /// `validation` "`name` is required" naming `name` when absent or empty.
    fn required_text(&self, name: &'static str) -> Result<&str, crate::ToolError> {
        self.text()
            .ok_or_else(|| crate::ToolError::validation(name, format!("{name} is required")))
    }

    /// The trimmed text of a required argument that has other names: the refusal names them
    /// all, as the required check does ("name or label is required").
    ///
    /// # Errors
    /// `validation` naming `names[0]` when absent or empty.
    fn required_text_of(&self, names: &'static [&'static str]) -> Result<&str, crate::ToolError> {
        self.text().ok_or_else(|| {
            crate::ToolError::validation(
                names.first().copied().unwrap_or("arguments"),
                format!("{} is required", names.join(" or ")),
            )
        })
    }
}

impl Text for str {
    fn text(&self) -> Option<&str> {
        Some(self.trim()).filter(|text| !text.is_empty())
    }
}

impl Text for String {
    fn text(&self) -> Option<&str> {
        self.as_str().text()
    }
}

impl Text for Option<String> {
    fn text(&self) -> Option<&str> {
        self.as_ref().and_then(Text::text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
    fn the_table_is_the_struct_flattened_with_aliases_as_their_own_parameters() {
        static ALIASES: [Alias; 1] = [Alias::new("label", "name")];
        let input = crate::input!(Sample, &ALIASES);
        let table = (input.table)(input.aliases);
        assert!(
            std::ptr::eq(table, (input.table)(input.aliases)),
            "built once"
        );
        let shown: Vec<(&str, ParamType, &str, &[&str])> = table
            .params
            .iter()
            .map(|param| (param.name, param.ty, param.description, param.values))
            .collect();
        assert_eq!(
            shown,
            vec![
                (
                    "include_demo",
                    ParamType::Boolean,
                    "Show demo rows.",
                    &[][..]
                ),
                ("label", ParamType::String, "Alias for name.", &[][..]),
                (
                    "limit",
                    ParamType::Integer,
                    "How many, from 1 to 30.",
                    &[][..]
                ),
                ("name", ParamType::String, "Display name.", &[][..]),
                (
                    "topic",
                    ParamType::String,
                    "Topic id.",
                    &["tools", "general"][..]
                ),
            ]
        );
        assert_eq!(table.required, &[&["name", "label"][..]][..]);
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
        let table = (input.table)(input.aliases);
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
