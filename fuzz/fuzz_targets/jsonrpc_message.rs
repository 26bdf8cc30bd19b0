//! Fuzz target: `kd_protocol::fuzz_checks::jsonrpc_message` (its doc says what it checks).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kd_protocol::fuzz_checks::jsonrpc_message(data));
