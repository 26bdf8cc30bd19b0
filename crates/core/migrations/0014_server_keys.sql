-- The public half of each server key the database's hubs sign with (kd-passport-1, Ronin's
-- operator key), pinned by the first hub that opened the database. Every later hub process,
-- on this machine or another, must hold the same key (docs/decisions.md 153): one that does
-- not refuses to start, rather than signing passports, receipts and heads with a key no
-- verifier expects. Configuration, not a fact: never part of the log.
CREATE TABLE server_keys (
    key_id     TEXT    PRIMARY KEY,           -- kd-passport-1 | ronin-operator
    public_key TEXT    NOT NULL,              -- base64url Ed25519, or hex x-only secp256k1
    pinned_ms  INTEGER NOT NULL
) STRICT;
