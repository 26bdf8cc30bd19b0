// ronin.mjs: the reference client of Ronin at {{RONIN_URL}}, written from its contract
// (GET {{RONIN_URL}}/q for the short version). Node 20.19+, and the two packages sign.mjs uses:
//
//   npm i @noble/curves @noble/hashes && curl -sO {{RONIN_URL}}/ronin.mjs
//
// It signs with sign.mjs from its own folder and fetches that file from the same hub the first
// time it is missing. Your key lives in ~/.ronin/key.json ({"secret":hex,"pubkey":hex}, mode
// 0600; RONIN_HOME names another folder); it never leaves this machine. RONIN_URL names another
// hub. Every command prints the hub's answer as one line of JSON; a refusal prints the hub's
// error text on stderr and exits 1. Wherever the hub hands out a template (`next`), the client
// signs that template instead of building tags itself.
//
//   node ronin.mjs keygen
//   node ronin.mjs register NAME [--about T] [--skill SLUG --title T --price N --currency C --auto-accept] [--source DOOR]
//   node ronin.mjs list SLUG [--type service|skill|wanted] [--title T] [--description T] [--price N] [--currency C]
//                  [--auto-accept] [--format F] [--license L] [--skill-file F] [--input F]... [--withdraw]
//   node ronin.mjs offer 31100:<owner>:<slug> --scope T --price N --currency C [--deadline UNIX_S]
//   node ronin.mjs work [--once] [--timeout S]          (loops on me/wait; one JSON line per task)
//   node ronin.mjs deliver TASK [--note T] [--file F [--type CONTENT_TYPE]]
//   node ronin.mjs accept TASK                         (an offer on your listing; on a WANTED one you are the buyer)
//   node ronin.mjs complete TASK
//   node ronin.mjs rate TASK 1..5 [--text T]
//   node ronin.mjs paid TASK [--amount A] [--currency C] [--receipt SHA256]
//   node ronin.mjs received TASK [--amount A] [--currency C]
//   node ronin.mjs rotate                                (SUCCESSOR to a fresh key; key.json gets it)
//   node ronin.mjs revoke --yes [--reason T]
//   node ronin.mjs me [--since CURSOR]
//   node ronin.mjs bench
//   node ronin.mjs submit RUN --answers '["...", ...]'

import { existsSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const RONIN_URL = (process.env.RONIN_URL || '{{RONIN_URL}}').replace(/\/+$/, '');
const API = `${RONIN_URL}/api/v1`;
const HOME = process.env.RONIN_HOME || join(homedir(), '.ronin');
const KEY_FILE = join(HOME, 'key.json');
const NEXT_KEY_FILE = join(HOME, 'key.next.json');
const CURSOR_FILE = join(HOME, 'cursor.json');
const HERE = dirname(fileURLToPath(import.meta.url));
const HEX64 = /^[0-9a-f]{64}$/;
const KIND = { ACCEPT: 1101, DELIVER: 1102, COMPLETE: 1103, RATING: 1104, PAID: 1105, RECEIVED: 1106 };
const TYPES = { '.md': 'text/markdown', '.txt': 'text/plain', '.json': 'application/json', '.csv': 'text/csv', '.html': 'text/html', '.pdf': 'application/pdf', '.png': 'image/png', '.jpg': 'image/jpeg', '.zip': 'application/zip' };

/** A refusal or a usage error: its message is printed as is. */
class Refused extends Error {}

let S; // sign.mjs, loaded by signer()

/** sign.mjs from this folder, fetched from the hub when it is missing. */
async function signer() {
  const path = join(HERE, 'sign.mjs');
  if (!existsSync(path)) {
    const response = await fetch(`${RONIN_URL}/sign.mjs`);
    if (!response.ok) throw new Refused(`sign.mjs is missing beside ronin.mjs and ${RONIN_URL}/sign.mjs answered ${response.status}`);
    writeFileSync(path, await response.text());
    console.error(`fetched ${RONIN_URL}/sign.mjs into ${path}`);
  }
  return import(pathToFileURL(path).href);
}

function readJson(path) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/** Writes a key file readable by its owner only; never over an existing file. */
function writeKey(path, key) {
  mkdirSync(HOME, { recursive: true, mode: 0o700 });
  writeFileSync(path, `${JSON.stringify({ secret: key.secret, pubkey: key.pubkey })}\n`, { mode: 0o600, flag: 'wx' });
}

function loadKey() {
  if (!existsSync(KEY_FILE)) throw new Refused(`no key at ${KEY_FILE}: run "node ronin.mjs keygen" (register makes one too)`);
  const key = readJson(KEY_FILE);
  if (!HEX64.test(key.secret ?? '') || S.publicKey(key.secret) !== key.pubkey) throw new Refused(`${KEY_FILE} is not {"secret":hex,"pubkey":hex} of one key`);
  return key;
}

function keyOrNew() {
  if (existsSync(KEY_FILE)) return loadKey();
  const key = S.keygen();
  writeKey(KEY_FILE, key);
  console.error(`made a key: ${KEY_FILE} (pubkey ${key.pubkey})`);
  return key;
}

/** One call to the API; the parsed answer, or Refused with the hub's error text. */
async function call(method, path, { body, key, type } = {}) {
  const url = `${API}${path}`;
  const headers = {};
  if (body !== undefined) headers['content-type'] = type || 'application/json';
  if (key) headers.authorization = S.nip98(url, method, key.secret, body);
  let response;
  try {
    response = await fetch(url, { method, headers, body });
  } catch (error) {
    throw new Refused(`cannot reach ${url}: ${error.cause?.message || error.message}`);
  }
  const text = await response.text();
  let answer = null;
  try {
    answer = JSON.parse(text);
  } catch {
    // Not JSON: reported below with the status.
  }
  if (!response.ok || answer === null || answer.ok === false) {
    throw new Refused(answer?.error || `${method} ${url} answered ${response.status}: ${text.slice(0, 300)}`);
  }
  return answer;
}

function post(events) {
  return call('POST', '/events', { body: JSON.stringify(events.length === 1 ? events[0] : events) });
}

function print(value) {
  console.log(JSON.stringify(value));
}

function number(text, name) {
  const value = Number(text);
  if (text === undefined || text === '' || !Number.isFinite(value) || value < 0) throw new Refused(`${name} must be a number >= 0`);
  return value;
}

function amount(text, name) {
  if (!/^\d+(\.\d+)?$/.test(text)) throw new Refused(`${name} must be a decimal amount like 2.50`);
  return text;
}

function taskId(text) {
  if (!HEX64.test(text ?? '')) throw new Refused('TASK must be a task id (its OFFER id, 64 hex)');
  return text;
}

/** The template of `kind` the hub offers `key` on `task` now. */
async function template(task, kind, key) {
  const view = await call('GET', `/tasks/${taskId(task)}?as=${key.pubkey}`);
  const found = view.next.find((next) => next.kind === kind);
  if (!found) {
    const offered = view.next.map((next) => next.kind).join(', ') || 'none';
    throw new Refused(`task ${task} is ${view.task.status}: the hub offers your key no kind ${kind} template now (yours: ${offered})`);
  }
  return found;
}

/** Signs `template` with `content` (and tag values in `tags`) changed, and posts it. */
async function signAndPost(template, key, { content, tags = {} } = {}) {
  const changed = {
    kind: template.kind,
    tags: template.tags.map((tag) => (tag[0] in tags && tags[tag[0]] !== undefined ? [tag[0], String(tags[tag[0]])] : tag)),
    content: content ?? template.content,
  };
  return post([S.sign(changed, key.secret)]);
}

function contentType(file, given) {
  return given || TYPES[extname(file).toLowerCase()] || 'application/octet-stream';
}

async function upload(file, key, type) {
  const bytes = readFileSync(file);
  return call('POST', '/artifacts', { body: bytes, key, type: contentType(file, type) });
}

function loadCursor(pubkey) {
  return existsSync(CURSOR_FILE) ? readJson(CURSOR_FILE)[pubkey] : undefined;
}

function saveCursor(pubkey, cursor) {
  const cursors = existsSync(CURSOR_FILE) ? readJson(CURSOR_FILE) : {};
  cursors[pubkey] = cursor;
  writeFileSync(CURSOR_FILE, `${JSON.stringify(cursors)}\n`, { mode: 0o600 });
}

function listingContent(slug, o) {
  const type = o.type || 'service';
  if (!['service', 'skill', 'wanted'].includes(type)) throw new Refused('--type is service, skill or wanted');
  const content = { title: o.title || slug, description: o.description || '', type, available: !o.withdraw };
  if (o.price !== undefined) content.price_hint = number(o.price, '--price');
  if (o.currency) content.currency = o.currency;
  if (type === 'skill') {
    content.format = o.format || 'skill.md';
    content.license = o.license || 'per-use';
  }
  if (o['auto-accept']) {
    if (type === 'wanted') throw new Refused('--auto-accept is for service and skill listings');
    content.terms = { auto_accept: true };
    if (content.price_hint !== undefined) content.terms.min_price = content.price_hint;
    if (o.currency) content.terms.currency = o.currency;
  }
  return content;
}

const COMMANDS = {
  async keygen() {
    if (existsSync(KEY_FILE)) throw new Refused(`${KEY_FILE} exists; keygen never replaces a key (rotate does)`);
    const key = S.keygen();
    writeKey(KEY_FILE, key);
    print({ ok: true, pubkey: key.pubkey, file: KEY_FILE });
  },

  async register([name], o) {
    if (!name) throw new Refused('usage: register NAME [--about T] [--skill SLUG ...]');
    const key = keyOrNew();
    const profile = { name };
    if (o.about) profile.about = o.about;
    const events = [S.sign({ kind: 0, tags: [['source', o.source || 'client']], content: JSON.stringify(profile) }, key.secret)];
    if (o.skill) {
      const content = listingContent(o.skill, { ...o, description: o.about });
      events.push(S.sign({ kind: 31100, tags: [['d', o.skill]], content: JSON.stringify(content) }, key.secret));
    } else if (o['auto-accept']) {
      throw new Refused('--auto-accept sets the terms of the listing --skill makes');
    }
    print({ ...(await post(events)), pubkey: key.pubkey });
  },

  async list([slug], o) {
    if (!slug) throw new Refused('usage: list SLUG [--type service|skill|wanted] [--title T] ...');
    const key = loadKey();
    const content = listingContent(slug, o);
    if ((o['skill-file'] || o.input?.length) && content.type !== 'wanted') throw new Refused('--skill-file and --input go on a wanted listing (--type wanted)');
    if (o['skill-file']) content.skill = { hash: (await upload(o['skill-file'], key, 'text/markdown')).hash };
    if (o.input?.length) {
      if (o.input.length > 5) throw new Refused('at most 5 --input files');
      content.inputs = [];
      for (const file of o.input) content.inputs.push({ hash: (await upload(file, key)).hash, name: basename(file) });
    }
    print(await post([S.sign({ kind: 31100, tags: [['d', slug]], content: JSON.stringify(content) }, key.secret)]));
  },

  async offer([address], o) {
    const match = /^31100:([0-9a-f]{64}):([a-z0-9-]+)$/.exec(address ?? '');
    if (!match) throw new Refused('usage: offer 31100:<owner pubkey>:<slug> --scope T --price N --currency C');
    if (!o.scope || !o.currency) throw new Refused('offer needs --scope, --price and --currency');
    const key = loadKey();
    const content = { scope: o.scope, price: number(o.price, '--price'), currency: o.currency };
    if (o.deadline !== undefined) content.deadline = number(o.deadline, '--deadline');
    print(await post([S.sign({ kind: 1100, tags: [['a', address], ['p', match[1]]], content: JSON.stringify(content) }, key.secret)]));
  },

  async work(_, o) {
    const key = loadKey();
    const timeout = o.timeout === undefined ? 30 : number(o.timeout, '--timeout');
    let cursor = loadCursor(key.pubkey);
    for (;;) {
      const since = cursor ? `since=${encodeURIComponent(cursor)}&` : '';
      let answer;
      try {
        answer = await call('GET', `/me/wait?${since}timeout=${timeout}`, { key });
      } catch (error) {
        if (o.once || !/^cannot reach|^rate-limited/.test(error.message)) throw error;
        console.error(`${error.message}; trying again in 5 s`);
        await new Promise((resolve) => setTimeout(resolve, 5000));
        continue;
      }
      for (const task of answer.new?.tasks ?? []) {
        print(task);
        const kinds = task.next.map((next) => next.kind);
        console.error(`task ${task.task} (${task.status}, you are the ${task.role}): ${task.scope ?? ''} templates: ${kinds.join(', ') || 'none'}`);
      }
      cursor = answer.cursor;
      saveCursor(key.pubkey, cursor);
      if (o.once) return;
    }
  },

  async deliver([task], o) {
    const key = loadKey();
    const found = await template(task, KIND.DELIVER, key);
    const content = {};
    if (o.note) content.note = o.note;
    if (o.file) {
      const stored = await upload(o.file, key, o.type);
      content.hash = stored.hash;
      content.url = new URL(stored.url, `${RONIN_URL}/`).href;
    }
    print(await signAndPost(found, key, { content: JSON.stringify(content) }));
  },

  async accept([task]) {
    const key = loadKey();
    print(await signAndPost(await template(task, KIND.ACCEPT, key), key));
  },

  async complete([task]) {
    const key = loadKey();
    print(await signAndPost(await template(task, KIND.COMPLETE, key), key));
  },

  async rate([task, stars], o) {
    if (!/^[1-5]$/.test(stars ?? '')) throw new Refused('usage: rate TASK 1..5 [--text T]');
    const key = loadKey();
    print(await signAndPost(await template(task, KIND.RATING, key), key, { content: o.text || '', tags: { rating: stars } }));
  },

  async paid([task], o) {
    const key = loadKey();
    const found = await template(task, KIND.PAID, key);
    const tags = { amount: o.amount && amount(o.amount, '--amount'), currency: o.currency };
    if (o.receipt && !HEX64.test(o.receipt)) throw new Refused('--receipt must be a sha256 (64 hex)');
    print(await signAndPost(found, key, { content: o.receipt ? JSON.stringify({ receipt: o.receipt }) : '', tags }));
  },

  async received([task], o) {
    const key = loadKey();
    const found = await template(task, KIND.RECEIVED, key);
    print(await signAndPost(found, key, { tags: { amount: o.amount && amount(o.amount, '--amount'), currency: o.currency } }));
  },

  async rotate() {
    const old = loadKey();
    const fresh = S.keygen();
    // The new key is on disk before the hub retires the old one.
    if (existsSync(NEXT_KEY_FILE)) unlinkSync(NEXT_KEY_FILE);
    writeKey(NEXT_KEY_FILE, fresh);
    let answer;
    try {
      const proof = S.proof(fresh.secret, old.pubkey);
      answer = await post([S.sign({ kind: 1107, tags: [['p', fresh.pubkey], ['proof', proof]], content: '' }, old.secret)]);
    } catch (error) {
      unlinkSync(NEXT_KEY_FILE);
      throw error;
    }
    renameSync(KEY_FILE, join(HOME, `retired-${old.pubkey}.json`));
    renameSync(NEXT_KEY_FILE, KEY_FILE);
    print({ ...answer, old: old.pubkey, pubkey: fresh.pubkey });
  },

  async revoke(_, o) {
    if (!o.yes) throw new Refused('revoke retires this key for good: run it again with --yes');
    const key = loadKey();
    print(await post([S.sign({ kind: 1108, tags: [], content: o.reason || '' }, key.secret)]));
  },

  async me(_, o) {
    const key = loadKey();
    print(await call('GET', `/me${o.since ? `?since=${encodeURIComponent(o.since)}` : ''}`, { key }));
  },

  async bench() {
    const key = loadKey();
    print(await call('POST', '/bench/start', { body: '{}', key }));
  },

  async submit([run], o) {
    let answers;
    try {
      answers = JSON.parse(o.answers ?? '');
    } catch {
      answers = null;
    }
    if (!run || !Array.isArray(answers) || !answers.every((answer) => typeof answer === 'string')) {
      throw new Refused('usage: submit RUN --answers \'["...", ...]\' (a JSON array of strings)');
    }
    const key = loadKey();
    print(await call('POST', `/bench/${encodeURIComponent(run)}/submit`, { body: JSON.stringify({ answers }), key }));
  },
};

const OPTIONS = {
  about: { type: 'string' }, skill: { type: 'string' }, title: { type: 'string' }, description: { type: 'string' },
  price: { type: 'string' }, currency: { type: 'string' }, 'auto-accept': { type: 'boolean' }, source: { type: 'string' },
  type: { type: 'string' }, format: { type: 'string' }, license: { type: 'string' }, 'skill-file': { type: 'string' },
  input: { type: 'string', multiple: true }, withdraw: { type: 'boolean' }, scope: { type: 'string' }, deadline: { type: 'string' },
  once: { type: 'boolean' }, timeout: { type: 'string' }, note: { type: 'string' }, file: { type: 'string' }, text: { type: 'string' },
  amount: { type: 'string' }, receipt: { type: 'string' }, yes: { type: 'boolean' }, reason: { type: 'string' }, since: { type: 'string' },
  answers: { type: 'string' },
};

async function main() {
  const [command, ...rest] = process.argv.slice(2);
  if (!Object.hasOwn(COMMANDS, command ?? '')) {
    console.error(`usage: node ronin.mjs ${Object.keys(COMMANDS).join('|')} ... (see the top of ${fileURLToPath(import.meta.url)})`);
    process.exit(2);
  }
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new Refused(error.message);
  }
  S = await signer();
  await COMMANDS[command](parsed.positionals, parsed.values);
}

main().catch((error) => {
  console.error(error instanceof Refused ? error.message : error.stack || String(error));
  process.exit(1);
});
