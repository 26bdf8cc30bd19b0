//! The parameter table of a typed input, built once from its struct: the schemars schema
//! flattened to the plain per-property shape, in the struct's field order (serde's own list of
//! the fields), with the aliases and the kernel's `agent_id` added.

use serde::de::{self, Deserializer, Visitor};
use serde_json::{Map, Value, json};

use super::{AGENT_ID_DOC, AgentIdParam, InputSchema};
use crate::registry::{Param, ParamType};

/// The table of `I` for `input`: every parameter in `I`'s field order, each alias right after
/// the parameter it stands for, and `agent_id` first when the kernel declares it
/// ([`InputSchema::agent_id`]); the required groups in field order (`agent_id`'s first), or
/// the groups [`InputSchema::required`] gives in place of the struct's.
pub(super) fn declared<I>(input: &InputSchema) -> super::Declared
where
    I: schemars::JsonSchema + de::DeserializeOwned,
{
    let schema = schemars::SchemaGenerator::default()
        .into_root_schema_for::<I>()
        .to_value();
    let order = field_order::<I>();
    let properties = flat_properties(&schema);
    let mut named: Vec<(&str, &Value)> = properties
        .iter()
        .map(|(name, property)| (name.as_str(), property))
        .collect();
    named.sort_by_key(|(name, _)| order.iter().position(|field| field == name));
    let mut params = Vec::new();
    let mut required = Vec::new();
    if let Some(need) = input.agent_id {
        params.push(Param::new("agent_id", ParamType::String, AGENT_ID_DOC));
        if need == AgentIdParam::Required {
            required.push(&["agent_id"][..]);
        }
    }
    for (name, property) in named {
        let param = param(leak(name), property);
        params.push(param);
        for alias in input.aliases.iter().filter(|alias| alias.of == name) {
            let description = leak(&format!("Alias for {}{}.", alias.of, alias.note));
            params.push(Param::new(alias.name, param.ty, description));
        }
    }
    if let Some(groups) = input.required {
        required.extend(groups.iter().copied());
    }
    let own = schema["required"]
        .as_array()
        .filter(|_| input.required.is_none());
    for name in own.into_iter().flatten() {
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
    super::Declared {
        params: Box::leak(params.into_boxed_slice()),
        required: Box::leak(required.into_boxed_slice()),
    }
}

/// The names of `I`'s fields in declaration order, as serde deserializes them (after renames):
/// the list serde's derive hands `deserialize_struct`, read by a deserializer that stops there.
/// Empty for an input that is not a struct.
fn field_order<I: de::DeserializeOwned>() -> &'static [&'static str] {
    let mut fields: &'static [&'static str] = &[];
    let _stopped = I::deserialize(FieldList(&mut fields));
    fields
}

/// A deserializer that records the field list of the struct asked of it and stops.
struct FieldList<'a>(&'a mut &'static [&'static str]);

impl<'de> Deserializer<'de> for FieldList<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("only the field list is read"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = fields;
        Err(de::Error::custom("only the field list is read"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
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
