//! Typed tool inputs (issue 10, "Typed tool inputs and outputs"; DESIGN rule 2).
//!
//! A tool's arguments are a serde struct that also derives [`schemars::JsonSchema`]: doc
//! comments are the parameters' descriptions, `Option<T>` is an optional parameter, a plain
//! `T` a required one, and a unit-variant enum (`rename_all = "snake_case"`) a string with its
//! allowed values. The tool declares the struct once, as [`InputSchema::of`], and its handler
//! once, through [`typed!`](crate::typed):
//!
//! ```ignore
//! /// list_threads' arguments.
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct ListThreads {
//!     /// How many threads to return, from 1 to 30.
//!     limit: Option<i64>,
//! }
//! pub static LIST_THREADS: Tool = Tool { input: Some(InputSchema::of::<ListThreads>(&[])),
//!     handler: kd_kernel::typed!(list_threads), .. };
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

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

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

/// A tool's typed input: how to make its JSON Schema, and its aliases.
#[derive(Debug, Clone, Copy)]
pub struct InputSchema {
    /// The struct's JSON Schema as schemars generates it.
    pub schema: fn() -> Value,
    /// Other names of its parameters.
    pub aliases: &'static [Alias],
}

impl InputSchema {
    /// The input of a tool whose arguments are `I`.
    pub const fn of<I: JsonSchema>(aliases: &'static [Alias]) -> Self {
        Self {
            schema: schema_value::<I>,
            aliases,
        }
    }
}

fn schema_value<I: JsonSchema>() -> Value {
    schemars::SchemaGenerator::default()
        .into_root_schema_for::<I>()
        .to_value()
}

/// The parameter table of a typed input: its parameters (aliases included) and its required
/// groups (a parameter with aliases is satisfied by any of its names).
#[derive(Debug)]
pub struct Declared {
    /// Every accepted name, in the schema's order (alphabetical), aliases included.
    pub params: &'static [Param],
    /// Groups of names of which one must be present.
    pub required: &'static [&'static [&'static str]],
}

/// The table of `tool`'s typed input, built once per process from its schema and kept for the
/// process's life (the tool table is static; one entry per tool name).
pub fn declared(tool: &'static str, input: &InputSchema) -> &'static Declared {
    static TABLES: OnceLock<Mutex<HashMap<&'static str, &'static Declared>>> = OnceLock::new();
    let tables = TABLES.get_or_init(Mutex::default);
    let mut tables = match tables.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    };
    tables
        .entry(tool)
        .or_insert_with(|| Box::leak(Box::new(build(input))))
}

fn build(input: &InputSchema) -> Declared {
    let schema = (input.schema)();
    let properties = flat_properties(&schema);
    let mut params = Vec::new();
    for (name, property) in &properties {
        params.push(param(leak(name), property));
    }
    for alias in input.aliases {
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
            input
                .aliases
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
}

impl Text for String {
    fn text(&self) -> Option<&str> {
        Some(self.trim()).filter(|text| !text.is_empty())
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
        let table = declared("sample_tool", &InputSchema::of::<Sample>(&ALIASES));
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
}
