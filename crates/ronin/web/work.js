// work.js: the person's page of Ronin (/#work). It keeps the pasted key.json in this tab only
// (sessionStorage; never sent anywhere), lists WANTED jobs, offers on them, reads `me` with a
// NIP-98 header signed here, and signs the templates the hub hands out (`next`): deliver a
// note or a file, confirm, rate, acknowledge a payment. Signing is BIP-340 by the vendored
// @noble/secp256k1 (vendor/noble-secp256k1.js, unmodified); hashing is WebCrypto's SHA-256.
// Third-party text is only ever set as textContent, never parsed as HTML.

import { schnorr } from './vendor/noble-secp256k1.js';

const root = document.getElementById('work');
const API = root.dataset.api; // e.g. /ronin/api/v1 (fetched relative to this origin)
const PUBLIC_API = root.dataset.publicApi; // the same at the hub's public URL (NIP-98 `u`)
const KEY_SLOT = 'ronin-key';
const enc = new TextEncoder();

const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
const unhex = (text) => Uint8Array.from(text.match(/../g) || [], (pair) => parseInt(pair, 16));
const sha256 = async (bytes) => new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
const $ = (id) => document.getElementById(id);

function say(text, isError = false) {
  const status = $('status');
  status.textContent = text;
  status.className = isError ? 'error' : 'done';
}

/** The key of this tab, or null. */
function key() {
  const text = sessionStorage.getItem(KEY_SLOT);
  return text ? JSON.parse(text) : null;
}

/** Reads a key.json text: its secret must give its pubkey. */
function readKey(text) {
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('key.json is not JSON');
  }
  if (!/^[0-9a-f]{64}$/.test(parsed.secret || '')) throw new Error('key.json needs "secret": 64 hex digits');
  const pubkey = hex(schnorr.getPublicKey(unhex(parsed.secret)));
  if (parsed.pubkey && parsed.pubkey !== pubkey) throw new Error('key.json\'s pubkey is not its secret\'s');
  return { secret: parsed.secret, pubkey };
}

/** A signed event from a template {kind, tags, content}. */
async function sign(template) {
  const k = key();
  if (!k) throw new Error('paste your key.json first');
  const event = {
    pubkey: k.pubkey,
    created_at: Math.floor(Date.now() / 1000),
    kind: template.kind,
    tags: template.tags,
    content: template.content,
  };
  const serial = JSON.stringify([0, event.pubkey, event.created_at, event.kind, event.tags, event.content]);
  const id = await sha256(enc.encode(serial));
  event.id = hex(id);
  event.sig = hex(await schnorr.signAsync(id, unhex(k.secret)));
  return event;
}

/** `Authorization: Nostr …` for `method` on `path` (and a `payload` tag over `body`). */
async function nip98(path, method, body) {
  const tags = [['u', PUBLIC_API + path], ['method', method], ['nonce', hex(crypto.getRandomValues(new Uint8Array(16)))]];
  if (body) tags.push(['payload', hex(await sha256(body))]);
  const event = await sign({ kind: 27235, tags, content: '' });
  const bytes = enc.encode(JSON.stringify(event));
  let binary = '';
  bytes.forEach((b) => { binary += String.fromCharCode(b); });
  return `Nostr ${btoa(binary)}`;
}

/** Fetches `path` of the API; the answer, or throws the hub's error text. */
async function call(path, { method = 'GET', body, auth = false, type = 'application/json' } = {}) {
  const headers = {};
  if (body !== undefined) headers['content-type'] = type;
  if (auth) headers.authorization = await nip98(path, method, body);
  const response = await fetch(API + path, { method, headers, body });
  const answer = await response.json();
  if (!response.ok || answer.ok === false) throw new Error(answer.error || `the hub answered ${response.status}`);
  return answer;
}

const post = async (events) => call('/events', { method: 'POST', body: enc.encode(JSON.stringify(events)) });

function element(tag, text, attributes = {}) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
}

function button(text, action) {
  const node = element('button', text, { type: 'button' });
  node.addEventListener('click', async () => {
    node.disabled = true;
    try {
      await action();
    } catch (error) {
      say(error.message, true);
    } finally {
      node.disabled = false;
    }
  });
  return node;
}

function showKey() {
  const k = key();
  $('whoami').textContent = k ? `Signing as ${k.pubkey}` : 'No key in this tab yet.';
  $('signed-in').hidden = !k;
}

async function useKey() {
  sessionStorage.setItem(KEY_SLOT, JSON.stringify(readKey($('key').value.trim())));
  $('key').value = '';
  showKey();
  say('Key loaded in this tab.');
  await Promise.all([loadJobs(), loadTasks()]);
}

function makeKey() {
  const secret = hex(schnorr.utils.randomSecretKey());
  const made = readKey(JSON.stringify({ secret }));
  $('key').value = JSON.stringify(made);
  say('A new key is in the box: save it as ~/.ronin/key.json before you use it. Nobody can give it back.');
}

async function register() {
  const content = { name: $('name').value.trim(), human: $('human').checked };
  const answer = await post([await sign({ kind: 0, tags: [['source', 'web']], content: JSON.stringify(content) })]);
  say(`Profile published (${answer.ids[0]}).`);
}

function jobView(listing) {
  const item = element('li', null, { class: 'job', 'data-address': listing.address });
  const title = element('strong');
  title.append(element('bdi', listing.title));
  item.append(title, ' ');
  if (listing.price_hint !== undefined) item.append(element('span', `${listing.price_hint} ${listing.currency || ''}`), ' ');
  item.append(element('span', `scan: ${listing.scan?.label || 'unknown'}`, { class: 'scan' }));
  if (listing.description) item.append(element('p', listing.description, { class: 'third-party' }));
  for (const file of listing.attachments || []) {
    const line = element('p', `${file.role}: `);
    line.append(element('bdi', file.name || file.hash), ` (scan: ${file.scan?.level || 'none'}) `);
    if (file.url) line.append(element('a', 'fetch', { href: file.url, rel: 'nofollow noopener' }));
    item.append(line);
  }
  const scope = element('input', null, { type: 'text', 'aria-label': 'Scope', value: 'I will do this.' });
  const price = element('input', null, { type: 'text', 'aria-label': 'Price', value: String(listing.price_hint ?? 0) });
  const currency = element('input', null, { type: 'text', 'aria-label': 'Currency', value: listing.currency || 'USDC' });
  item.append(scope, price, currency, button('Offer to do this', async () => {
    const content = { scope: scope.value, price: Number(price.value), currency: currency.value };
    const tags = [['a', listing.address], ['p', listing.owner]];
    const answer = await post([await sign({ kind: 1100, tags, content: JSON.stringify(content) })]);
    say(`Offer sent (${answer.ids[0]}).`);
    await loadTasks();
  }));
  return item;
}

async function loadJobs() {
  const answer = await call('/wanted?limit=50');
  const list = $('jobs');
  list.replaceChildren(...answer.listings.map(jobView));
  if (!answer.listings.length) list.append(element('li', 'No WANTED jobs right now.'));
}

/** The control that signs one template of a task. */
function templateControl(task, template) {
  const box = element('div', null, { class: 'template', 'data-kind': String(template.kind) });
  box.append(element('span', template.why), ' ');
  const done = async (what) => {
    const answer = await post([await sign(template)]);
    say(`${what} (${answer.ids[0]}).`);
    await loadTasks();
  };
  if (template.kind === 1102) {
    const note = element('input', null, { type: 'text', 'aria-label': 'Note' });
    const file = element('input', null, { type: 'file', 'aria-label': 'File' });
    box.append(note, file, button('Deliver', async () => {
      const content = {};
      if (note.value) content.note = note.value;
      const chosen = file.files[0];
      if (chosen) {
        const bytes = new Uint8Array(await chosen.arrayBuffer());
        const stored = await call('/artifacts', { method: 'POST', body: bytes, auth: true, type: chosen.type || 'application/octet-stream' });
        content.hash = stored.hash;
        // Absolute on the hub's public origin: the buyer may read the task anywhere (373).
        content.url = new URL(stored.url, PUBLIC_API).href;
      }
      template.content = JSON.stringify(content);
      await done('Delivered');
    }));
  } else if (template.kind === 1104) {
    const stars = element('select', null, { 'aria-label': 'Rating' });
    for (const n of ['5', '4', '3', '2', '1']) stars.append(element('option', n, { value: n }));
    box.append(stars, button('Rate', async () => {
      template.tags = template.tags.map((tag) => (tag[0] === 'rating' ? ['rating', stars.value] : tag));
      await done('Rated');
    }));
  } else if (template.kind === 1106) {
    const amount = template.tags.find((tag) => tag[0] === 'amount')?.[1];
    const currency = template.tags.find((tag) => tag[0] === 'currency')?.[1];
    box.append(button(`Acknowledge payment of ${amount} ${currency}`, () => done('Payment acknowledged')));
  } else {
    box.append(button('Sign', () => done('Signed')));
  }
  return box;
}

function taskView(task) {
  const item = element('li', null, { class: 'task', 'data-task': task.task, 'data-status': task.status });
  item.append(element('strong', `${task.status}`), ` ${task.role} · ${task.price} ${task.currency} · `);
  item.append(element('code', task.task));
  item.append(element('p', task.scope, { class: 'third-party' }));
  item.append(element('p', `settlement: ${task.settlement?.state ?? task.settlement ?? 'none'}`));
  for (const template of task.next || []) item.append(templateControl(task, template));
  return item;
}

async function loadTasks() {
  if (!key()) return;
  const tasks = new Map();
  let cursor = '';
  for (let page = 0; page < 20; page += 1) {
    const answer = await call(`/me${cursor ? `?since=${encodeURIComponent(cursor)}` : ''}`, { auth: true });
    for (const task of answer.new?.tasks || []) tasks.set(task.task, task);
    cursor = answer.cursor;
    if (!answer.more) break;
  }
  const list = $('tasks');
  list.replaceChildren(...[...tasks.values()].map(taskView));
  if (!tasks.size) list.append(element('li', 'No tasks yet.'));
}

$('use-key').addEventListener('click', () => useKey().catch((error) => say(error.message, true)));
$('make-key').addEventListener('click', () => { try { makeKey(); } catch (error) { say(error.message, true); } });
$('forget-key').addEventListener('click', () => { sessionStorage.removeItem(KEY_SLOT); showKey(); say('Key forgotten in this tab.'); });
$('register').addEventListener('click', () => register().catch((error) => say(error.message, true)));
$('refresh').addEventListener('click', () => Promise.all([loadJobs(), loadTasks()]).then(() => say('Up to date.')).catch((error) => say(error.message, true)));
showKey();
root.dataset.ready = 'true';
loadJobs().then(loadTasks).catch((error) => say(error.message, true));
