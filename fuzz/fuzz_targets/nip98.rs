//! Fuzz target: `kd_protocol::fuzz_checks::nip98` (its doc says what it checks).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kd_protocol::fuzz_checks::nip98(data));
