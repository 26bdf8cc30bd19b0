// Peer test: Ronin's event door driven by nostr-tools (the reference JavaScript Nostr library),
// so the hub's NIP-01 ids and BIP-340 checks are judged by another implementation's events.
//
//   KD_HUB_URL=http://127.0.0.1:PORT node tests/peers/ronin_nostr_tools.mjs
//
// It checks, against /ronin/api/v1 of a running hub:
// 1. GET /server names an x-only secp256k1 key and a did:key;
// 2. a PROFILE and a LISTING made with nostr-tools finalizeEvent (content with escapes, emoji,
//    control characters and U+2028 in it) are accepted in one batch, with their own ids;
// 3. GET /agents/<pubkey> and GET /events/<id> give back what was signed, and nostr-tools
//    verifyEvent accepts the stored events;
// 4. an event nostr-tools signed and then had a field changed, and one signed by another key,
//    are refused with invalid:; a replayed event is duplicate:.
//
// Prints one line per check and, last, exactly `N passed, M failed`; exits 1 on any failure.

import { finalizeEvent, generateSecretKey, getPublicKey, verifyEvent } from 'nostr-tools/pure';

const BASE = (process.env.KD_HUB_URL || '').replace(/\/+$/, '') + '/ronin/api/v1';
let passed = 0;
let failed = 0;

function check(name, condition, detail) {
  if (condition) {
    passed += 1;
    console.log(`ok   ${name}`);
  } else {
    failed += 1;
    console.log(`FAIL ${name}: ${JSON.stringify(detail)}`);
  }
}

async function call(method, path, body) {
  const response = await fetch(BASE + path, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

const now = Math.floor(Date.now() / 1000);
const secret = generateSecretKey();
const pubkey = getPublicKey(secret);

const server = await call('GET', '/server');
check('server names an x-only key and a did:key', server.status === 200 && /^[0-9a-f]{64}$/.test(server.json.pubkey) && server.json.did.startsWith('did:key:zQ3s'), server);

const about = 'Line one\nquote " backslash \\ tab \t bell \u0007 DEL \u007f sep \u2028 emoji 👩‍💻 café';
const profile = finalizeEvent({ kind: 0, created_at: now, tags: [['source', 'client']], content: JSON.stringify({ name: 'Peer Summaries', about }) }, secret);
const listing = finalizeEvent({
  kind: 31100,
  created_at: now,
  tags: [['d', 'peer-summaries']],
  content: JSON.stringify({ title: 'Peer Summaries', description: 'Summaries by a nostr-tools peer.', type: 'service', price_hint: 2.5, currency: 'USDC', terms: { auto_accept: true, min_price: 2 } }),
}, secret);
const posted = await call('POST', '/events', [profile, listing]);
check('a nostr-tools PROFILE and LISTING are accepted in one batch', posted.status === 200 && posted.json.ok === true, posted);
check('the answer lists their ids and kinds in order', JSON.stringify(posted.json.ids) === JSON.stringify([profile.id, listing.id]) && JSON.stringify(posted.json.kinds) === JSON.stringify([0, 31100]), posted.json);

const agent = await call('GET', `/agents/${pubkey}`);
check('the agent shows the signed name', agent.status === 200 && agent.json.agent.name === 'Peer Summaries', agent);
check('the agent shows the listing', agent.json.agent?.listings?.[0]?.address === `31100:${pubkey}:peer-summaries`, agent.json);
const stored = await call('GET', `/events/${profile.id}`);
check('the stored profile is what was signed', JSON.stringify(stored.json.event) === JSON.stringify({ id: profile.id, pubkey, created_at: now, kind: 0, tags: profile.tags, content: profile.content, sig: profile.sig }), stored.json);
check('nostr-tools verifies the stored event', verifyEvent({ ...stored.json.event }), stored.json.event);

const changed = { ...finalizeEvent({ kind: 0, created_at: now, tags: [], content: JSON.stringify({ name: 'Original' }) }, secret) };
changed.content = JSON.stringify({ name: 'Changed' });
const refused = await call('POST', '/events', changed);
check('a changed event is refused: id', refused.status === 400 && refused.json.error === 'invalid: id is computed incorrectly', refused);
const other = finalizeEvent({ kind: 0, created_at: now, tags: [], content: JSON.stringify({ name: 'Other' }) }, generateSecretKey());
const stolen = { ...other, sig: profile.sig };
const forged = await call('POST', '/events', stolen);
check('a signature from another event is refused', forged.status === 400 && forged.json.error === 'invalid: signature is invalid', forged);
const replay = await call('POST', '/events', profile);
check('a replayed event is a duplicate', replay.status === 409 && replay.json.error === 'duplicate: already have this event', replay);

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
