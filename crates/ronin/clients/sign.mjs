// sign.mjs: the bare signer of Ronin ({{RONIN_URL}}), written from its contract (NIP-01 ids,
// BIP-340 Schnorr on secp256k1, NIP-98 request auth). Needs Node 20.19+ and two packages:
//
//   npm i @noble/curves @noble/hashes
//
// From a script:  import { keygen, sign, proof, nip98 } from './sign.mjs'
// From a shell:   node sign.mjs keygen                          -> {"secret":hex,"pubkey":hex}
//                 node sign.mjs proof <new_secret> <old_pubkey> -> the SUCCESSOR proof (hex)
//
// It never sends anything anywhere; it only signs.

import { schnorr } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes, randomBytes } from '@noble/hashes/utils.js';
import { pathToFileURL } from 'node:url';

const HEX64 = /^[0-9a-f]{64}$/;

function secretBytes(secretHex) {
  if (typeof secretHex !== 'string' || !HEX64.test(secretHex)) {
    throw new Error('the secret must be 64 lowercase hex digits');
  }
  return hexToBytes(secretHex);
}

/** The x-only public key (64 hex) of a secret (64 hex). */
export function publicKey(secretHex) {
  return bytesToHex(schnorr.getPublicKey(secretBytes(secretHex)));
}

/** A fresh key: {secret, pubkey}, both 64 lowercase hex. */
export function keygen() {
  for (;;) {
    const secret = bytesToHex(randomBytes(32));
    try {
      return { secret, pubkey: publicKey(secret) };
    } catch {
      // Zero or not below the curve order: draw again (about 2^-128 likely).
    }
  }
}

/** sha256 of a string's UTF-8 bytes or of bytes, as 64 hex. */
export function sha256Hex(data) {
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  return bytesToHex(sha256(bytes));
}

/**
 * Signs a template {kind, tags, content} (a `why` or any other field is left out) and returns
 * the full event {id, pubkey, created_at, kind, tags, content, sig}. The id is sha256 of
 * JSON.stringify([0, pubkey, created_at, kind, tags, content]) (NIP-01); sig is BIP-340 over
 * the id with fresh aux randomness. created_at defaults to now (unix seconds).
 */
export function sign(template, secretHex, createdAt = Math.floor(Date.now() / 1000)) {
  const secret = secretBytes(secretHex);
  const pubkey = bytesToHex(schnorr.getPublicKey(secret));
  const kind = template.kind;
  const tags = template.tags ?? [];
  const content = typeof template.content === 'string' ? template.content : JSON.stringify(template.content ?? '');
  const id = sha256Hex(JSON.stringify([0, pubkey, createdAt, kind, tags, content]));
  const sig = bytesToHex(schnorr.sign(hexToBytes(id), secret, randomBytes(32)));
  return { id, pubkey, created_at: createdAt, kind, tags, content, sig };
}

/**
 * The SUCCESSOR proof (section 7): the NEW key's BIP-340 signature over sha256 of the OLD
 * public key's 32 bytes, as 128 hex.
 */
export function proof(newSecretHex, oldPubkeyHex) {
  if (!HEX64.test(oldPubkeyHex)) throw new Error('the old public key must be 64 lowercase hex digits');
  const digest = sha256(hexToBytes(oldPubkeyHex));
  return bytesToHex(schnorr.sign(digest, secretBytes(newSecretHex), randomBytes(32)));
}

/**
 * The NIP-98 Authorization header value for one request: "Nostr " + base64 of a kind 27235
 * event with tags u (the exact absolute URL, query included), method, a random nonce and,
 * when a body is given (string or bytes), ["payload", sha256 hex of the body's bytes].
 * Each header works once, within 60 s.
 */
export function nip98(url, method, secretHex, body) {
  const tags = [['u', url], ['method', method.toUpperCase()], ['nonce', bytesToHex(randomBytes(16))]];
  if (body !== undefined && body !== null) tags.push(['payload', sha256Hex(body)]);
  const event = sign({ kind: 27235, tags, content: '' }, secretHex);
  return 'Nostr ' + Buffer.from(JSON.stringify(event), 'utf8').toString('base64');
}

async function main(argv) {
  const [command, ...rest] = argv;
  if (command === 'keygen' && rest.length === 0) {
    console.log(JSON.stringify(keygen()));
  } else if (command === 'proof' && rest.length === 2) {
    console.log(proof(rest[0], rest[1]));
  } else {
    console.error('usage: node sign.mjs keygen | proof <new_secret> <old_pubkey>');
    process.exit(2);
  }
}

// Run as a program (node sign.mjs ...), not when imported.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((error) => {
    console.error(error.message);
    process.exit(1);
  });
}
