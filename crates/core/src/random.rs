//! Randomness as a parameter (DESIGN rule 6). Ids, challenges and keys draw from a
//! [`Random`]; production uses the operating system's generator, tests a seeded one.

use std::sync::Mutex;

use rand::rngs::{OsRng, StdRng};
use rand::{RngCore, SeedableRng};

/// A source of random bytes.
pub trait Random: Send + Sync + std::fmt::Debug {
    /// Fills `buffer` with random bytes.
    fn fill(&self, buffer: &mut [u8]);

    /// `N` random bytes.
    fn bytes<const N: usize>(&self) -> [u8; N]
    where
        Self: Sized,
    {
        let mut buffer = [0u8; N];
        self.fill(&mut buffer);
        buffer
    }
}

/// `N` random bytes from any [`Random`], including trait objects.
pub fn random_bytes<const N: usize>(random: &dyn Random) -> [u8; N] {
    let mut buffer = [0u8; N];
    random.fill(&mut buffer);
    buffer
}

/// `prefix` followed by `2 * N` lowercase hex characters of fresh randomness, e.g. an id.
pub fn random_id<const N: usize>(random: &dyn Random, prefix: &str) -> String {
    format!("{prefix}{}", hex::encode(random_bytes::<N>(random)))
}

/// The operating system's generator.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemRandom;

impl Random for SystemRandom {
    fn fill(&self, buffer: &mut [u8]) {
        OsRng.fill_bytes(buffer);
    }
}

/// A reproducible generator for tests.
#[derive(Debug)]
pub struct SeededRandom(Mutex<StdRng>);

impl SeededRandom {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Self(Mutex::new(StdRng::seed_from_u64(seed)))
    }
}

impl Random for SeededRandom {
    fn fill(&self, buffer: &mut [u8]) {
        match self.0.lock() {
            Ok(mut rng) => rng.fill_bytes(buffer),
            Err(poisoned) => poisoned.into_inner().fill_bytes(buffer),
        }
    }
}
