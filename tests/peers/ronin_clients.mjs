// Peer test: Ronin's reference clients as a user gets them. Downloads ronin.mjs and sign.mjs
// (argument `mjs`) or ronin.py (argument `py`, run by python3) from a live hub's /ronin into a
// fresh folder, and drives a whole task between two keys with the CLI alone, each with its
// own RONIN_HOME and no RONIN_URL (so the URL the hub wrote into the client is the one used):
//
//   KD_HUB_URL=http://127.0.0.1:PORT node tests/peers/ronin_clients.mjs mjs|py
//
// 1. the downloaded clients name this hub's /ronin URL; ronin.mjs fetches sign.mjs again
//    when it is removed;
// 2. the agent registers with a listing whose terms accept offers (--auto-accept); its key
//    file is {"secret","pubkey"} with mode 0600;
// 3. the buyer registers and offers on the listing: the task is accepted by terms at once;
// 4. the agent's `work --once` prints the task with its DELIVER template;
// 5. the agent delivers a note and a file (uploaded with the payload tag): the task view
//    shows the file's sha256 and URL, and that URL serves the same bytes;
// 6. the buyer completes, rates 5, records PAID; a second rating exits 1 (no template is
//    offered), an offer on one's own listing exits 1 with the hub's error text; the agent
//    acknowledges RECEIVED;
// 7. the agent rotates its key: key.json holds a new key, the old one is kept as retired, and
//    GET /agents/<old key> shows one agent with both keys, headed by the new one.
// The bench and WANTED attachments are left to their own tests.
//
// Prints one line per check and, last, exactly `N passed, M failed`; exits 1 on any failure.

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const FLAVOUR = process.argv[2];
if (!['mjs', 'py'].includes(FLAVOUR)) {
  console.error('usage: node ronin_clients.mjs mjs|py');
  process.exit(2);
}
const HUB = (process.env.KD_HUB_URL || '').replace(/\/+$/, '');
const RONIN = `${HUB}/ronin`;
const API = `${RONIN}/api/v1`;
// Inside tests/peers, so Node finds @noble/curves and @noble/hashes in its node_modules.
const HERE = dirname(fileURLToPath(import.meta.url));
const WORK = mkdtempSync(join(HERE, `.ronin-${FLAVOUR}-`));
let passed = 0;
let failed = 0;

function check(name, condition, detail) {
  if (condition) {
    passed += 1;
    console.log(`ok   ${name}`);
  } else {
    failed += 1;
    console.log(`FAIL ${name}: ${JSON.stringify(detail)?.slice(0, 1500)}`);
  }
}

async function download(name) {
  const response = await fetch(`${RONIN}/${name}`);
  const text = await response.text();
  writeFileSync(join(WORK, name), text);
  return { status: response.status, type: response.headers.get('content-type'), text };
}

async function get(path) {
  const response = await fetch(`${API}${path}`);
  return { status: response.status, json: await response.json() };
}

/** Runs the client as `who` (its own RONIN_HOME); the last stdout line parsed as JSON. */
function run(who, ...args) {
  const env = { ...process.env, RONIN_HOME: join(WORK, who) };
  delete env.RONIN_URL;
  const [command, script] = FLAVOUR === 'mjs' ? ['node', 'ronin.mjs'] : ['python3', 'ronin.py'];
  const result = spawnSync(command, [script, ...args], { cwd: WORK, env, encoding: 'utf8', timeout: 120_000 });
  const lines = result.stdout.trim().split('\n').filter(Boolean);
  let json = null;
  try {
    json = JSON.parse(lines.at(-1) ?? 'null');
  } catch {
    // Left null: the check that reads it fails with the output.
  }
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, lines, json };
}

function key(who) {
  return JSON.parse(readFileSync(join(WORK, who, 'key.json'), 'utf8'));
}

try {
  // 1. The downloads.
  const names = FLAVOUR === 'mjs' ? ['ronin.mjs', 'sign.mjs'] : ['ronin.py'];
  for (const name of names) {
    const file = await download(name);
    const type = FLAVOUR === 'mjs' ? 'text/javascript; charset=utf-8' : 'text/x-python; charset=utf-8';
    check(`${name} downloads with its content type`, file.status === 200 && file.type === type, file.type);
    // The clients default to it; sign.mjs only names it.
    const named = name === 'sign.mjs' ? file.text.includes(`(${RONIN})`) : file.text.includes(`'${RONIN}'`) || file.text.includes(`"${RONIN}"`);
    check(`${name} names this hub's Ronin URL`, named, file.text.slice(0, 400));
  }

  // ronin.mjs fetches sign.mjs from the hub when it is missing (docs/decisions.md 371).
  let signText = '';
  if (FLAVOUR === 'mjs') {
    signText = readFileSync(join(WORK, 'sign.mjs'), 'utf8');
    rmSync(join(WORK, 'sign.mjs'));
  }

  // 2. The agent registers with auto-accept terms.
  const slug = `summaries-${FLAVOUR}`;
  const registered = run('agent', 'register', `peer-agent-${FLAVOUR}`, '--about', 'Summaries by the reference client.', '--skill', slug, '--title', 'Summaries', '--price', '2', '--currency', 'USDC', '--auto-accept');
  check('register answers ok with a profile and a listing', registered.status === 0 && registered.json?.ok === true && JSON.stringify(registered.json.kinds) === '[0,31100]', registered);
  if (FLAVOUR === 'mjs') {
    check('ronin.mjs fetches a missing sign.mjs from the hub', existsSync(join(WORK, 'sign.mjs')) && readFileSync(join(WORK, 'sign.mjs'), 'utf8') === signText && registered.stderr.includes('/ronin/sign.mjs'), registered.stderr);
  }
  const agentKey = key('agent');
  check('key.json is {"secret","pubkey"}', /^[0-9a-f]{64}$/.test(agentKey.secret) && /^[0-9a-f]{64}$/.test(agentKey.pubkey) && Object.keys(agentKey).length === 2, Object.keys(agentKey));
  check('key.json is readable by its owner only', (statSync(join(WORK, 'agent', 'key.json')).mode & 0o777) === 0o600, statSync(join(WORK, 'agent', 'key.json')).mode.toString(8));
  const agentView = await get(`/agents/${agentKey.pubkey}`);
  const listing = agentView.json.agent?.listings?.[0];
  check('the listing carries the terms', listing?.terms?.auto_accept === true && listing.terms.min_price === 2 && listing.terms.currency === 'USDC', agentView.json);
  check('the profile says it came by the client', agentView.json.agent?.source === 'client', agentView.json.agent);

  // 3. The buyer offers; the terms accept it.
  const buyer = run('buyer', 'register', `peer-buyer-${FLAVOUR}`);
  check('the buyer registers', buyer.status === 0 && buyer.json?.ok === true, buyer);
  const offered = run('buyer', 'offer', `31100:${agentKey.pubkey}:${slug}`, '--scope', 'Summarise the attached notes in five lines.', '--price', '2', '--currency', 'USDC');
  const task = offered.json?.task?.id;
  check('the offer is accepted by the listing\'s terms', offered.status === 0 && offered.json?.task?.status === 'accepted' && offered.json.task.accept?.by_terms === true, offered);

  // 4. The agent sees it.
  const work = run('agent', 'work', '--once', '--timeout', '5');
  const seen = work.lines.map((line) => JSON.parse(line)).find((entry) => entry.task === task);
  check('work --once prints the task with a DELIVER template', work.status === 0 && seen?.role === 'agent' && seen.next.some((next) => next.kind === 1102), work);
  const again = run('agent', 'work', '--once', '--timeout', '1');
  check('the cursor is kept: the next work --once prints nothing new', again.status === 0 && again.lines.length === 0, again);

  // 5. Deliver with a file.
  const report = `Five lines of summary (${FLAVOUR}).\nline two\n`;
  writeFileSync(join(WORK, 'report.md'), report);
  const delivered = run('agent', 'deliver', task, '--note', 'done', '--file', 'report.md');
  check('deliver answers delivered', delivered.status === 0 && delivered.json?.task?.status === 'delivered', delivered);
  const view = await get(`/tasks/${task}`);
  const hash = createHash('sha256').update(report).digest('hex');
  check('the DELIVER names the file by its sha256', view.json.task?.deliver?.hash === hash && view.json.task.deliver.note === 'done', view.json.task?.deliver);
  check('the task view shows the artifact', view.json.task?.artifact?.bytes === Buffer.byteLength(report), view.json.task?.artifact);
  const fileUrl = view.json.task?.deliver?.url ?? '';
  const fetched = fileUrl.startsWith(HUB) ? await fetch(fileUrl) : null;
  check('the DELIVER url is absolute and serves the same bytes', fetched?.status === 200 && (await fetched.text()) === report, fileUrl);

  // 6. Settle.
  const completed = run('buyer', 'complete', task);
  check('complete answers completed', completed.status === 0 && completed.json?.task?.status === 'completed', completed);
  const rated = run('buyer', 'rate', task, '5', '--text', 'fast and right');
  check('rate 5 is recorded', rated.status === 0 && rated.json?.task?.rated === true, rated);
  const paid = run('buyer', 'paid', task, '--amount', '2', '--currency', 'USDC');
  check('paid is recorded', paid.status === 0 && paid.json?.task?.settlement?.state === 'paid', paid);
  const rerate = run('buyer', 'rate', task, '4');
  check('a second rating exits 1: the hub offers no RATING template any more', rerate.status === 1 && rerate.stdout === '' && rerate.stderr.includes('no kind 1104 template'), rerate);
  const self = run('agent', 'offer', `31100:${agentKey.pubkey}:${slug}`, '--scope', 'Hire myself.', '--price', '2', '--currency', 'USDC');
  check('an offer on one\'s own listing exits 1 with the hub\'s error text', self.status === 1 && self.stdout === '' && /^(invalid|restricted): \S/.test(self.stderr), self);
  const received = run('agent', 'received', task);
  check('received settles the task', received.status === 0 && received.json?.task?.settlement?.state === 'received', received);
  const settled = await get(`/tasks/${task}`);
  check('the task view shows the rating and the settlement', settled.json.task?.rating === 5 && settled.json.task.settlement.paid?.amount === '2', settled.json.task);

  // 7. Rotate the agent's key.
  const rotated = run('agent', 'rotate');
  const newKey = key('agent');
  check('rotate answers ok and names both keys', rotated.status === 0 && rotated.json?.ok === true && rotated.json.old === agentKey.pubkey && rotated.json.pubkey === newKey.pubkey, rotated);
  check('key.json holds the new key; the old is kept as retired', newKey.pubkey !== agentKey.pubkey && existsSync(join(WORK, 'agent', `retired-${agentKey.pubkey}.json`)), newKey.pubkey);
  const lineage = await get(`/agents/${agentKey.pubkey}`);
  check('GET /agents/<old key> is one agent with both keys, headed by the new one', lineage.status === 200 && lineage.json.agent?.pubkey === newKey.pubkey && JSON.stringify([...lineage.json.agent.keys].sort()) === JSON.stringify([agentKey.pubkey, newKey.pubkey].sort()), lineage.json.agent);
  const byNew = await get(`/agents/${newKey.pubkey}`);
  check('the new key shows the same agent with its rating', byNew.json.agent?.pubkey === newKey.pubkey && byNew.json.agent.trust?.ratings === 1, byNew.json.agent?.trust);
  const me = run('agent', 'me');
  check('the new key signs me', me.status === 0 && typeof me.json?.cursor === 'string', me);
} catch (error) {
  check('the scenario ran to its end', false, String(error?.stack || error));
} finally {
  rmSync(WORK, { recursive: true, force: true });
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
