//! Typed tool outputs (issue 10, "Typed tool inputs and outputs").
//!
//! A handler written for [`typed!`](crate::typed) returns `Result<O, E>`: `O` is its `data`
//! ([`Output`]), `E` any error that converts into a [`ToolError`] (an area's own error enum,
//! [`crate::error`]). `data` is a struct that derives `serde::Serialize` and is declared an
//! output once, with [`output!`](crate::output!); a handler that still builds its `data` as a
//! `serde_json::Value` returns that (moved, never copied).
//!
//! The struct is serialised once, into the `data` the pipeline lifts the third-party text out
//! of and the adapters print (`Answer`; decision 207's one printing of the reply).

use serde_json::Value;

use crate::error::ToolError;

/// A tool's `data`: what its handler answers.
pub trait Output {
    /// The answer as the JSON `data` object.
    ///
    /// # Errors
    /// `internal` when the value cannot be written as JSON (a map with non-string keys).
    fn into_data(self) -> Result<Value, ToolError>;
}

impl Output for Value {
    fn into_data(self) -> Result<Value, ToolError> {
        Ok(self)
    }
}

/// Declares serde-serialisable types as tool outputs: `kd_kernel::output!(ThreadList,
/// ThreadView);`.
#[macro_export]
macro_rules! output {
    ($($output:ty),+ $(,)?) => {
        $(
            impl $crate::output::Output for $output {
                fn into_data(self) -> ::std::result::Result<::serde_json::Value, $crate::ToolError> {
                    ::serde_json::to_value(self).map_err($crate::ToolError::internal_from)
                }
            }
        )+
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;

    #[derive(Serialize)]
    struct Listed {
        count: usize,
        topic: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        examples_note: Option<&'static str>,
    }
    crate::output!(Listed);

    #[test]
    fn a_struct_is_its_json_and_a_value_passes_through() {
        let data = Listed {
            count: 2,
            topic: None,
            examples_note: None,
        }
        .into_data()
        .unwrap();
        assert_eq!(data, serde_json::json!({ "count": 2, "topic": null }));
        let value = serde_json::json!({ "a": [1, 2] });
        assert_eq!(value.clone().into_data().unwrap(), value);
    }
}
