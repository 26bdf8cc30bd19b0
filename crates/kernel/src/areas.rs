//! The areas' own state, held by the kernel without knowing its types: one value per type
//! (the catalog's search index, identity's name index, people's mail wake-up, ...). The server
//! inserts each area's state when it builds the kernel; a handler takes its own with
//! [`crate::Ctx::area`].

use std::any::{Any, TypeId, type_name};
use std::collections::HashMap;
use std::fmt;

use crate::error::ToolError;

/// A map from a type to the one value of it.
#[derive(Default)]
pub struct AreaState {
    values: HashMap<TypeId, (&'static str, Box<dyn Any + Send + Sync>)>,
}

impl fmt::Debug for AreaState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&str> = self.values.values().map(|(name, _)| *name).collect();
        names.sort_unstable();
        f.debug_struct("AreaState").field("types", &names).finish()
    }
}

impl AreaState {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `value`, replacing an earlier value of its type.
    #[must_use]
    pub fn with<T: Any + Send + Sync>(mut self, value: T) -> Self {
        self.values
            .insert(TypeId::of::<T>(), (type_name::<T>(), Box::new(value)));
        self
    }

    /// The value of type `T`, if the server inserted one.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.values
            .get(&TypeId::of::<T>())
            .and_then(|(_, value)| value.downcast_ref())
    }

    /// The value of type `T`.
    ///
    /// # Errors
    /// `internal` naming the type when the server did not insert one (a wiring mistake).
    pub fn require<T: Any + Send + Sync>(&self) -> Result<&T, ToolError> {
        self.get().ok_or_else(|| {
            ToolError::internal(format!(
                "no {} in the kernel's area state",
                type_name::<T>()
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_one_value_per_type_and_names_a_missing_one() {
        let state = AreaState::new().with(7_u32).with("text").with(9_u32);
        assert_eq!(state.get::<u32>(), Some(&9));
        assert_eq!(state.get::<&str>(), Some(&"text"));
        let missing = state.require::<u64>().map(|_| ()).unwrap_err();
        assert!(missing.cause_text().contains("u64"));
    }
}
