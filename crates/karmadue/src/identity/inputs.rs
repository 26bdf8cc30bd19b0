//! Typed inputs that take another name as a field of their own (identity, people, standing).
//!
//! An [`Alias`](kd_kernel::input::Alias) row moves the other name's value to the parameter's
//! own name before the handler sees it. Where the handler's refusal names the name that was
//! sent ("No agent has this subject_id."), the other name is a field of its own instead,
//! described "Alias for x.", and the handler reads both. A field of its own is optional, so the
//! struct alone no longer says "one of the two is required": [`input_requiring!`] states the
//! required groups as the tool always had them, and validation refuses a missing group first,
//! with the same message, before the caller's proof is checked.

/// The [`InputSchema`](kd_kernel::input::InputSchema) of the struct `$input` with the required
/// groups `$required` (each a list of names of which one must be present) instead of the
/// struct's own required fields: `input_requiring!(GetReceipt, &[&["receipt_id",
/// "credential_id"]])`. No alias rows.
macro_rules! input_requiring {
    ($input:ty, $required:expr) => {{
        fn table(
            aliases: &'static [kd_kernel::input::Alias],
        ) -> &'static kd_kernel::input::Declared {
            static TABLE: ::std::sync::OnceLock<kd_kernel::input::Declared> =
                ::std::sync::OnceLock::new();
            TABLE.get_or_init(|| kd_kernel::input::Declared {
                required: $required,
                ..kd_kernel::input::Declared::of::<$input>(aliases)
            })
        }
        kd_kernel::input::InputSchema {
            table,
            aliases: &[],
        }
    }};
}

pub(crate) use input_requiring;

/// The first of `names` that was sent (present and not null), as the untyped arguments read a
/// name and its other names: `first_sent(&[&input.email, &input.human_email]).text()` is empty
/// when `email` was sent empty, whatever `human_email` says.
pub fn first_sent<'a>(names: &[&'a Option<String>]) -> &'a Option<String> {
    names
        .iter()
        .copied()
        .find(|value| value.is_some())
        .unwrap_or(&None)
}

/// Which of `names` carries text (the first whose value is not empty after trimming), else
/// `names[0]`: the field a refusal of the text names.
pub fn sent_name(names: &[&'static str], values: &[&Option<String>]) -> &'static str {
    use kd_kernel::input::Text as _;
    names
        .iter()
        .zip(values)
        .find(|(_, value)| value.text().is_some())
        .map_or(
            names.first().copied().unwrap_or("arguments"),
            |(name, _)| *name,
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use kd_kernel::input::Text as _;

    #[test]
    fn the_first_name_sent_wins_even_when_empty() {
        let (empty, other) = (Some(" ".to_owned()), Some("x".to_owned()));
        assert_eq!(first_sent(&[&empty, &other]).text(), None);
        assert_eq!(first_sent(&[&None, &other]).text(), Some("x"));
        assert_eq!(first_sent(&[&None, &None]), &None);
        assert_eq!(sent_name(&["a", "b"], &[&empty, &other]), "b");
        assert_eq!(sent_name(&["a", "b"], &[&None, &None]), "a");
    }
}
