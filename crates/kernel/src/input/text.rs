//! Text arguments as the handlers read them ([`Text`]), and which of a parameter's names was
//! sent ([`first_sent`], [`sent_name`]).

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
