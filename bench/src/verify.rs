//! The raw Ed25519 `verify_strict` rate of this machine, over kd-mcp-v1 texts like the ones the
//! hub verifies, on one thread and on every core (std threads).

use std::hint::black_box;
use std::time::{Duration, Instant};

use anyhow::bail;
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use kd_protocol::keys::AgentPublicKey;

/// One signed kd-mcp-v1 text.
pub struct Sample {
    key: VerifyingKey,
    key_b64: String,
    signature: Signature,
    signature_b64: String,
    text: Vec<u8>,
}

/// Builds `count` samples signed by `keys` (round robin), shaped like `rename_agent` calls.
pub fn samples(keys: &[(String, SigningKey)], count: usize) -> Vec<Sample> {
    let timestamp = 1_791_700_000;
    (0..count)
        .map(|index| {
            let (agent_id, key) = &keys[index % keys.len()];
            let arguments = format!(r#"{{"agent_id":"{agent_id}","name":"Bench sample {index}"}}"#);
            let hash = kd_protocol::canonical::arguments_hash(&arguments);
            let nonce = format!("bench-verify-{index:012}");
            let text = kd_protocol::signing::text_to_sign(
                "rename_agent",
                agent_id,
                timestamp,
                &nonce,
                &hash,
            );
            let signature = key.sign(text.as_bytes());
            Sample {
                key: key.verifying_key(),
                key_b64: kd_protocol::b64::encode_url(key.verifying_key().as_bytes()),
                signature_b64: kd_protocol::b64::encode_url(&signature.to_bytes()),
                signature,
                text: text.into_bytes(),
            }
        })
        .collect()
}

/// What one verification does.
#[derive(Clone, Copy, Debug)]
pub enum Work {
    /// `VerifyingKey::verify_strict` with the key already decoded.
    Raw,
    /// What the hub does per signed request: base64url-decode and fully check the stored key
    /// (`AgentPublicKey::parse_b64url`), decode the signature header, then `verify_strict`.
    HubPath,
    /// The hub path with the stored key decoded as an already-registered key
    /// (`AgentPublicKey::from_bytes_unchecked_registered`: one decompression, no torsion check).
    RegisteredKey,
}

/// Verifications per second on `threads` std threads for about `duration`.
///
/// # Errors
/// When a sample does not verify (a bench bug).
pub fn rate(
    samples: &[Sample],
    work: Work,
    threads: usize,
    duration: Duration,
) -> anyhow::Result<f64> {
    let start = Instant::now();
    let counts: Vec<anyhow::Result<u64>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|thread| {
                std::thread::Builder::new()
                    .name(format!("kd-verify-{thread}"))
                    .spawn_scoped(scope, move || run(samples, work, thread, duration))
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| match handle {
                Ok(handle) => handle
                    .join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("verify thread panicked"))),
                Err(error) => Err(error.into()),
            })
            .collect()
    });
    let elapsed = start.elapsed().as_secs_f64();
    let mut total = 0u64;
    for count in counts {
        total += count?;
    }
    Ok(total as f64 / elapsed)
}

fn run(samples: &[Sample], work: Work, offset: usize, duration: Duration) -> anyhow::Result<u64> {
    let start = Instant::now();
    let mut done = 0u64;
    let mut index = offset * 97;
    loop {
        for _ in 0..32 {
            let sample = &samples[index % samples.len()];
            index += 1;
            let ok = match work {
                Work::Raw => black_box(&sample.key)
                    .verify_strict(black_box(&sample.text), &sample.signature)
                    .is_ok(),
                Work::HubPath => {
                    let key = AgentPublicKey::parse_b64url(black_box(&sample.key_b64));
                    let signature = kd_protocol::b64::decode_signature(&sample.signature_b64);
                    match (key, signature) {
                        (Ok(key), Ok(signature)) => key
                            .verify_strict(black_box(&sample.text), &signature)
                            .is_ok(),
                        _ => false,
                    }
                }
                Work::RegisteredKey => {
                    let key = kd_protocol::b64::decode_url(black_box(&sample.key_b64))
                        .ok()
                        .and_then(|bytes| <[u8; 32]>::try_from(bytes.as_slice()).ok())
                        .and_then(|bytes| {
                            AgentPublicKey::from_bytes_unchecked_registered(bytes).ok()
                        });
                    let signature = kd_protocol::b64::decode_signature(&sample.signature_b64);
                    match (key, signature) {
                        (Some(key), Ok(signature)) => key
                            .verify_strict(black_box(&sample.text), &signature)
                            .is_ok(),
                        _ => false,
                    }
                }
            };
            if !ok {
                bail!("a bench sample did not verify");
            }
        }
        done += 32;
        if start.elapsed() >= duration {
            return Ok(done);
        }
    }
}
