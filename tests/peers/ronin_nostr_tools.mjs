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
//    are refused with invalid:; a replayed event is duplicate:;
// 5. a whole task on the hub's templates, each signed with nostr-tools: a buyer's OFFER that
//    meets the listing's terms is accepted on arrival, then DELIVER, COMPLETE, RATING 5, PAID,
//    RECEIVED; the agent's trust is the spec's formula (section 8) recomputed here from the
//    stored RATING event's created_at, and the buyer's stays 3.00; the DELIVER names a file
//    uploaded with a NIP-98 token (nostr-tools nip98.getToken, plus the spec's nonce and the
//    payload tag over the bytes);
// 6. `me` with a nostr-tools NIP-98 token lists the task; the same token again, and one for
//    another URL, are unauthorized; `me/notify` takes a token whose payload tag nostr-tools
//    computed over the JSON body;
// 7. the agent rotates its key (SUCCESSOR with the new key's proof, signed with @noble/curves):
//    both keys are one agent with the same trust, the old key cannot write, the new one can.
//
// Prints one line per check and, last, exactly `N passed, M failed`; exits 1 on any failure.

import { finalizeEvent, generateSecretKey, getPublicKey, verifyEvent } from 'nostr-tools/pure';
import { getToken } from 'nostr-tools/nip98';
import { schnorr } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes, randomBytes } from '@noble/hashes/utils.js';

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

// 5. A whole task, every event signed by nostr-tools from the hub's templates.
const sign = (template, key) => finalizeEvent({ kind: template.kind, created_at: Math.floor(Date.now() / 1000), tags: template.tags, content: template.content }, key);
const buyerSecret = generateSecretKey();
const buyer = getPublicKey(buyerSecret);
const buyerProfile = finalizeEvent({ kind: 0, created_at: now, tags: [], content: JSON.stringify({ name: 'Peer Buyer' }) }, buyerSecret);
check('the buyer registers', (await call('POST', '/events', buyerProfile)).status === 200);
const offer = finalizeEvent({
  kind: 1100,
  created_at: now,
  tags: [['a', `31100:${pubkey}:peer-summaries`], ['p', pubkey]],
  content: JSON.stringify({ scope: 'Summarise this PDF in five bullets.', price: 2.5, currency: 'USDC' }),
}, buyerSecret);
const offered = await call('POST', '/events', offer);
check('an OFFER that meets the terms is accepted on arrival', offered.status === 200 && offered.json.task?.accept?.by_terms === true, offered.json);
const step = async (as, key, kind, content) => {
  const view = await call('GET', `/tasks/${offer.id}?as=${as}`);
  const template = (view.json.next || []).find((t) => t.kind === kind);
  if (!template) return { status: 0, json: view.json };
  return call('POST', '/events', sign(content === undefined ? template : { ...template, content }, key));
};
// NIP-98 by nostr-tools: its token, with the nonce the spec asks for (and a payload tag when
// `bytes` are the body: nostr-tools hashes JSON payloads only).
const token = (url, method, key, { json, bytes } = {}) => getToken(url, method, (event) => {
  event.tags.push(['nonce', bytesToHex(randomBytes(16))]);
  if (bytes) event.tags.push(['payload', bytesToHex(sha256(bytes))]);
  return finalizeEvent(event, key);
}, true, json);
const file = new TextEncoder().encode('- one\n- two\n- three\n- four\n- five\n');
const uploadUrl = `${BASE}/artifacts`;
const uploaded = await fetch(uploadUrl, {
  method: 'POST', body: file,
  headers: { 'content-type': 'text/plain', authorization: await token(uploadUrl, 'POST', secret, { bytes: file }) },
}).then(async (r) => ({ status: r.status, json: await r.json() }));
check('a file uploads with a nostr-tools NIP-98 token and its payload tag', uploaded.status === 200 && uploaded.json.hash === bytesToHex(sha256(file)), uploaded);
const delivered = await step(pubkey, secret, 1102, JSON.stringify({ note: 'Five bullets.', hash: uploaded.json.hash, url: uploaded.json.url }));
check('the agent DELIVERs from its template', delivered.status === 200 && delivered.json.task?.status === 'delivered', delivered.json);
const deliveredView = (await call('GET', `/tasks/${offer.id}`)).json.task;
check('the task shows the delivered file', deliveredView?.artifact?.hash === uploaded.json.hash && deliveredView?.artifact?.bytes === file.length, deliveredView?.artifact);
const completed = await step(buyer, buyerSecret, 1103);
check('the buyer COMPLETEs from its template', completed.status === 200 && completed.json.task?.status === 'completed', completed.json);
const [ratingTemplate, paidTemplate] = ['1104', '1105'].map((k) => (completed.json.next || []).find((t) => String(t.kind) === k));
const rating = sign(ratingTemplate, buyerSecret);
check('the RATING template says 5 stars', JSON.stringify(rating.tags).includes('["rating","5"]'), rating.tags);
check('the RATING is accepted', (await call('POST', '/events', rating)).status === 200);
check('the PAID is accepted', (await call('POST', '/events', sign(paidTemplate, buyerSecret))).status === 200);
const received = await step(pubkey, secret, 1106);
check('the agent acknowledges RECEIVED: settled', received.status === 200 && received.json.task?.settlement?.state === 'received', received.json);
// Section 8, worked here: one rating r = 5 of weight w = 0.5^(age_days / 90).
const storedRating = (await call('GET', `/events/${rating.id}`)).json.event;
const ageDays = Math.max(0, Date.now() / 1000 - storedRating.created_at) / 86400;
const w = 0.5 ** (ageDays / 90);
const expected = Math.round(((w * 5 + 3 * 3.0) / (w + 3)) * 100) / 100;
const agentTrust = (await call('GET', `/agents/${pubkey}`)).json.agent?.trust;
check(`the agent's trust is the formula's ${expected}`, agentTrust?.score === expected && agentTrust?.ratings === 1, agentTrust);
const buyerTrust = (await call('GET', `/agents/${buyer}`)).json.agent?.trust;
check("the buyer's trust stays 3.00", buyerTrust?.score === 3 && buyerTrust?.mismatches === 0, buyerTrust);

// 6. me and me/notify with nostr-tools NIP-98 tokens.
const meUrl = `${BASE}/me`;
const meToken = await token(meUrl, 'GET', secret);
const me = await fetch(meUrl, { headers: { authorization: meToken } }).then(async (r) => ({ status: r.status, json: await r.json() }));
check('me with a nostr-tools token lists the task', me.status === 200 && (me.json.new?.tasks || []).some((t) => t.task === offer.id), me);
const again = await fetch(meUrl, { headers: { authorization: meToken } });
check('the same token again is unauthorized', again.status === 401, again.status);
const elsewhere = await fetch(meUrl, { headers: { authorization: await token(`${BASE}/me?since=c0`, 'GET', secret) } });
check('a token for another URL is unauthorized', elsewhere.status === 401, elsewhere.status);
const notifyUrl = `${BASE}/me/notify`;
const notifyBody = { email: 'peer@example.org' };
const notified = await fetch(notifyUrl, {
  method: 'POST', body: JSON.stringify(notifyBody),
  headers: { 'content-type': 'application/json', authorization: await token(notifyUrl, 'POST', secret, { json: notifyBody }) },
}).then(async (r) => ({ status: r.status, json: await r.json() }));
check('me/notify takes a token whose payload tag nostr-tools computed', notified.status === 200 && notified.json.ok === true, notified);

// 7. Rotation: the new key signs sha256(old pubkey bytes); the old key publishes SUCCESSOR.
const newSecret = generateSecretKey();
const newKey = getPublicKey(newSecret);
const proof = bytesToHex(schnorr.sign(sha256(hexToBytes(pubkey)), newSecret));
const successor = finalizeEvent({ kind: 1107, created_at: Math.floor(Date.now() / 1000), tags: [['p', newKey], ['proof', proof]], content: '' }, secret);
const rotated = await call('POST', '/events', successor);
check('the SUCCESSOR with the new key\'s proof is accepted', rotated.status === 200, rotated.json);
const lineage = (await call('GET', `/agents/${pubkey}`)).json.agent;
check('the old key now shows one agent: the new head, both keys, the same trust',
  lineage?.pubkey === newKey && lineage?.keys?.includes(pubkey) && lineage?.keys?.includes(newKey) && lineage?.trust?.score === expected, lineage);
const late = finalizeEvent({ kind: 0, created_at: Math.floor(Date.now() / 1000), tags: [], content: JSON.stringify({ name: 'Old key' }) }, secret);
const lateAnswer = await call('POST', '/events', late);
check('the retired key cannot write', lateAnswer.status === 403 && lateAnswer.json.error?.startsWith('restricted:'), lateAnswer);
const fresh = finalizeEvent({ kind: 0, created_at: Math.floor(Date.now() / 1000), tags: [], content: JSON.stringify({ name: 'Peer Summaries' }) }, newSecret);
check('the new key writes', (await call('POST', '/events', fresh)).status === 200);

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
