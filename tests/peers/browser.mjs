// Browser tests: a person in headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core) and an agent through the hub's own CLI client (`karmadue agent …`), against
// fresh hubs whose mail goes over SMTP to a local sink.
//
//   KD_HUB_BIN=target/release/karmadue KD_SMTP_PORT=PORT KD_SMTP_DIR=DIR \
//     node tests/peers/browser.mjs
//
// scripts/peers.sh installs Chromium, starts the SMTP sink (tests/peers/smtp_sink.py, which
// writes one JSON file per message into KD_SMTP_DIR) and runs this. Each scenario starts its own
// hub (`serve --listen 127.0.0.1:0 --bundled-catalog false --smtp-url smtp://127.0.0.1:PORT`) in
// a throwaway folder and stops it afterwards:
//   a. connect code: sign up, mint a code, the agent connects with it, the person approves,
//      verify_agent turns owner_linked;
//   b. claim URL: an agent files an open finding, a person opens its claim_url, signs up,
//      adopts it, and reads it in their Inbox;
//   c. mail over SMTP: request_claim to an address with an account and to one without; the same
//      reply and the same mail for both, no secret in the mail, the mail's link leads to the
//      request, the person approves;
//   d. a first visit: from `/` sign up (the mailed link), open the forum and an agent's thread
//      (its frames fit 1280 px), reply as a person; the agent reads the reply;
//   e. the OAuth connector: the official Python MCP SDK's OAuth client provider
//      (tests/peers/python_oauth_client.py, run with KD_PYTHON) discovers, registers and asks
//      for approval; the signed-in person approves on the consent screen in Chromium; the
//      browser's redirect reaches the script's loopback callback, and the SDK finishes
//      (token, tools, a pre-flight and its outcome report, refresh, revoke). Its checks count
//      here;
//   f. the same with the official TypeScript SDK's OAuth client (`authProvider` of
//      StreamableHTTPClientTransport) on the connector's long URL, in this process: the
//      browser's redirect lands on a loopback server of this process.
//   g. the Linkdbots dashboard: a visitor is sent to sign in with the page as next; a person signs up,
//      mints a pairing code on /linkdbots/dashboard/connect, the agent redeems it with
//      POST /linkdbots/api/v1/pair and proposes a bio (Node fetch, as an agent would), the
//      person approves it on /linkdbots/dashboard/queue, and the public profile shows it.
//   h. the Linkdbots leaderboards: `karmadue linkdbots import` (the bundled Aider rows) into the
//      hub's folder before it starts; the index lists the categories with their cards, a
//      category's page shows each row's success rate beside "outcome known on N of M cards"
//      and an inline SVG chart with one bar per row that has a cost per successful run (as
//      many as the JSON leaderboard's rows with one), and no script; then a signed-in person
//      proposes a category at /linkdbots/dashboard/categories and sees it waiting.
//   i. Ronin's /ronin#work (browser_ronin.mjs): a person pastes key.json, publishes a profile,
//      offers on a WANTED job, delivers a file and acknowledges the payment, all signed in the
//      page; the buyer's side is nostr-tools in Node.
//   j., k. a Client ID Metadata Document over local TLS (browser_cimd.mjs): the Python and the
//      TypeScript SDK's OAuth clients with a client metadata URL on a loopback https server of
//      a throwaway CA the hub trusts (--outbound-ca-file); no registration, approved in
//      Chromium, then token, tools/call, refresh.
// A failed check prints the page's URL and HTML; a scenario that throws prints the same and the
// hub's log. Prints one line per check and, last, exactly `N passed, M failed`; exits 1 on any
// failure. KD_CHROMIUM overrides the browser path.

import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium } from 'playwright-core';
import { cimdPython, cimdTypescript, memoryProvider } from './browser_cimd.mjs';
import { roninWork } from './browser_ronin.mjs';

const HUB_BIN = process.env.KD_HUB_BIN || '';
const SMTP_PORT = process.env.KD_SMTP_PORT || '';
const SMTP_DIR = process.env.KD_SMTP_DIR || '';
const CHROMIUM = process.env.KD_CHROMIUM || '/usr/bin/chromium';
const PYTHON = process.env.KD_PYTHON || '';
const PEERS_DIR = new URL('.', import.meta.url).pathname;
for (const [name, value] of [['KD_HUB_BIN', HUB_BIN], ['KD_SMTP_PORT', SMTP_PORT], ['KD_SMTP_DIR', SMTP_DIR], ['KD_PYTHON', PYTHON]]) {
  if (!value) {
    console.error(`${name} is not set (scripts/peers.sh sets it)`);
    process.exit(2);
  }
}
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const WORK = mkdtempSync(join(tmpdir(), 'kd-browser-'));
const PASSWORD = `pw-${randomBytes(9).toString('base64url')}`;

let passed = 0;
let failed = 0;
// What a scenario that throws dumps (its page, its hub's log) and then closes (its contexts).
let current = { page: null, hub: null, contexts: [] };

async function openContext(browser) {
  const context = await browser.newContext();
  current.contexts.push(context);
  return context;
}

async function dumpPage(page) {
  if (!page) return;
  try {
    console.log(`---- page ${page.url()}\n${await page.content()}\n---- end of page`);
  } catch (error) {
    console.log(`---- (the page could not be read: ${error.message})`);
  }
}

function detailText(detail) {
  if (detail === undefined) return '';
  return `: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`;
}

/** Records a check; a failure prints the current page's HTML when `page` is given. */
async function check(name, condition, detail, page) {
  if (condition) {
    passed += 1;
    console.log(`ok   ${name}`);
    return true;
  }
  failed += 1;
  console.log(`FAIL ${name}${detailText(detail)}`);
  await dumpPage(page);
  return false;
}

/** Checks the page's heading and that its main text contains every string in `texts`. */
async function expectPage(page, name, heading, texts = []) {
  const h1 = (await page.locator('main h1').first().textContent({ timeout: 5000 }).catch(() => null)) ?? '';
  const main = (await page.locator('main').first().innerText({ timeout: 5000 }).catch(() => '')) ?? '';
  const missing = texts.filter((text) => !main.includes(text));
  return check(
    name,
    h1 === heading && missing.length === 0,
    h1 === heading ? `missing ${JSON.stringify(missing)}` : `heading ${JSON.stringify(h1)}, expected ${JSON.stringify(heading)}`,
    page,
  );
}

/** Clicks a control that submits or navigates, and returns the final response (after redirects). */
async function submit(page, locator) {
  const [response] = await Promise.all([page.waitForNavigation({ waitUntil: 'load', timeout: 20000 }), locator.click()]);
  return response;
}

// ---- hubs ----------------------------------------------------------------------------------

/** Starts a hub in a throwaway folder; `catalog` loads the bundled catalog on first start
 *  (what the admission test draws its listings from); `args` are more `serve` flags, `logLevel`
 *  its KARMADUE_LOG. */
async function startHub(name, { catalog = false, prepare = null, args = [], logLevel = null } = {}) {
  const data = mkdtempSync(join(WORK, `${name}-`));
  if (prepare) await prepare(join(data, 'data'));
  const child = spawn(
    HUB_BIN,
    [
      'serve',
      '--listen', '127.0.0.1:0',
      '--data-dir', join(data, 'data'),
      '--bundled-catalog', String(catalog),
      '--smtp-url', `smtp://127.0.0.1:${SMTP_PORT}`,
      ...args,
    ],
    { env: { ...process.env, KARMADUE_LOG: logLevel || process.env.KARMADUE_LOG || 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  child.stdout.on('data', (chunk) => { log += chunk; });
  child.stderr.on('data', (chunk) => { log += chunk; });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the ${name} hub did not start in 180 s:\n${log}`)), 180000);
    const look = () => {
      const match = /^KarmaDue hub listening on 127\.0\.0\.1:(\d+)/m.exec(log);
      if (match) {
        clearTimeout(timer);
        resolve(`http://127.0.0.1:${match[1]}`);
      }
    };
    child.stdout.on('data', look);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the ${name} hub exited (${code}) before it listened:\n${log}`));
    });
  });
  const hub = {
    name,
    url,
    data,
    log: () => log,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      rmSync(data, { recursive: true, force: true });
    },
  };
  console.log(`${name} hub: ${url}`);
  return hub;
}

// ---- the agent, through the CLI ------------------------------------------------------------

/** Runs `karmadue agent ARGS…` for the agent whose key is in `keyFile`; parses its JSON. */
function agentCli(hub, keyFile, ...args) {
  return new Promise((resolve) => {
    execFile(
      HUB_BIN,
      ['agent', ...args],
      { env: { ...process.env, KARMADUE_HUB: hub.url, KARMADUE_AGENT_FILE: keyFile }, timeout: 60000 },
      (error, stdout, stderr) => {
        let json = null;
        try {
          json = JSON.parse(stdout);
        } catch {
          // left null: the check that reads it reports stdout and stderr
        }
        resolve({ code: error ? (error.code ?? 1) : 0, stdout, stderr, json });
      },
    );
  });
}

async function newAgent(hub, name) {
  const keyFile = join(hub.data, `agent-${randomBytes(4).toString('hex')}.json`);
  const made = await agentCli(hub, keyFile, 'new', '--name', name);
  await check(`agent new "${name}" (CLI) registers`, made.code === 0 && made.json?.ok === true, made.stdout + made.stderr);
  const mode = statSync(keyFile, { throwIfNoEntry: false })?.mode & 0o777;
  await check('the CLI keeps the key file with mode 0600', mode === 0o600, mode?.toString(8));
  return { keyFile, agentId: made.json?.data?.agent_id, handle: made.json?.data?.handle, name, secret: JSON.parse(readFileSync(keyFile, 'utf8')).secret_key };
}

/** Passes the admission test as an evidence-reading agent would: reads each listing's record
 *  (get_resource, get_claims) and picks the one not archived upstream whose license claim is
 *  permissive, citing that claim. */
async function passAdmission(hub, agent) {
  const started = await call(hub, agent, 'start_admission_test', {});
  const listings = started.json?.data?.listings ?? [];
  await check('the agent starts the admission test (CLI)', started.code === 0 && listings.length > 0, started.stdout + started.stderr);
  const permissive = ['mit', 'apache-2.0', 'bsd-2-clause', 'bsd-3-clause', 'isc'];
  let answer = null;
  for (const listing of listings) {
    const resource = await call(hub, agent, 'get_resource', { resource_id: listing.resource_id });
    const claims = await call(hub, agent, 'get_claims', { resource_id: listing.resource_id });
    const license = (claims.json?.data?.claims ?? []).find((claim) => claim.kind === 'license');
    const name = license?.value?.trim().toLowerCase().replace(/ license$/, '');
    if (resource.json?.data?.archived_upstream !== true && permissive.includes(name)) {
      answer = {
        choice: listing.listing_id,
        evidence: `get_claims for ${listing.resource_id} shows the license claim ${license.claim_id} with the value ${license.value}; get_resource shows it is not archived upstream.`,
        actions: ['read', 'cite_evidence', 'recommend'],
      };
    }
  }
  const submitted = await call(hub, agent, 'submit_admission_test', { attempt_id: started.json?.data?.attempt_id, answer });
  await check('the agent passes the admission test by reading the evidence (CLI)', submitted.json?.data?.result === 'passed',
    submitted.stdout + submitted.stderr);
}

const call = (hub, agent, tool, args) => agentCli(hub, agent.keyFile, 'call', tool, '--args', JSON.stringify(args));
const whoami = (hub, agent) => agentCli(hub, agent.keyFile, 'whoami');

// ---- people, in the browser ----------------------------------------------------------------

function newEmail(who) {
  return `${who}-${randomBytes(4).toString('hex')}@example.org`;
}

/** Signs a person up from the page they are on (which has the sign-up form), follows the
 *  link of the confirmation mail the sink received (decision 260) and checks /you. */
async function signUp(page, displayName, email) {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Your name').fill(displayName);
  await page.getByLabel('Password').fill(PASSWORD);
  const sent = await submit(page, page.getByRole('button', { name: 'Create account' }));
  await check('sign-up answers Check your email (303, then 200)', sent?.status() === 200 && new URL(page.url()).pathname === '/signup/sent',
    `${sent?.status()} ${page.url()}`, page);
  const mails = await waitForMail(email, { signUp: true, subject: 'Confirm your KarmaDue account' });
  const confirm = mails.find((mail) => mail.subject === 'Confirm your KarmaDue account');
  const link = confirm?.body.match(/https?:\/\/\S+\/signup\/confirm\?token=kdsu_[0-9a-f]+/)?.[0];
  await check('the confirmation mail carries a sign-up link', Boolean(link), confirm ?? 'no mail within 30 s');
  await page.goto(link);
  const response = await submit(page, page.getByRole('button', { name: 'Confirm my account and sign in' }));
  await check('the link signs in and redirects to You (303, then 200)', response?.status() === 200 && new URL(page.url()).pathname === '/you'
    && (await response.request().redirectedFrom()?.response())?.status() === 303, `${response?.status()} ${page.url()}`, page);
  await expectPage(page, 'You says who is signed in', 'You', [`Signed in as ${displayName} (${email}).`]);
  return response;
}

async function sessionCookie(context) {
  return (await context.cookies()).find((cookie) => cookie.name === 'kd_session');
}

// ---- scenarios -----------------------------------------------------------------------------

async function connectCode(browser) {
  const hub = (current.hub = await startHub('connect'));
  const context = await openContext(browser);
  const page = (current.page = await context.newPage());
  const signupPage = await page.goto(`${hub.url}/signup`);
  await check('GET /signup answers 200', signupPage?.status() === 200, signupPage?.status(), page);
  await expectPage(page, 'the sign-up form is shown', 'Sign up', ['Email', 'Your name', 'Password']);
  const headers = signupPage.headers();
  await check('app pages are no-store, unframeable, with a strict CSP',
    headers['cache-control'] === 'no-store' && headers['x-frame-options'] === 'DENY'
      && /default-src 'none'/.test(headers['content-security-policy'] ?? '') && /frame-ancestors 'none'/.test(headers['content-security-policy'] ?? ''),
    headers);
  const formCookie = (await context.cookies()).find((cookie) => cookie.name === 'kd_form');
  await check('the pre-sign-in form cookie is HttpOnly and SameSite=Lax', formCookie?.httpOnly === true && formCookie?.sameSite === 'Lax', formCookie);

  const email = newEmail('ada');
  const done = await signUp(page, 'Ada Browser', email);
  const setCookie = (await (await done.request().redirectedFrom()?.response())?.headerValue('set-cookie')) ?? '';
  const line = setCookie.split('\n').find((text) => text.startsWith('kd_session=')) ?? '';
  // Exactly these attributes, in any order (RFC 6265 gives their order no meaning).
  const sessionCookieLine = (text) => {
    const [pair, ...attributes] = text.split('; ');
    return /^kd_session=kds_[0-9a-f]{64}$/.test(pair ?? '')
      && attributes.length === 4
      && ['Path=/', 'HttpOnly', 'SameSite=Lax'].every((attribute) => attributes.includes(attribute))
      && attributes.some((attribute) => /^Max-Age=\d+$/.test(attribute));
  };
  await check('Set-Cookie kd_session=kds_…; Path=/; HttpOnly; SameSite=Lax (no Secure on http)',
    sessionCookieLine(line), setCookie);
  const session = await sessionCookie(context);
  await check('the browser keeps kd_session as HttpOnly, SameSite=Lax, not Secure, Path=/',
    session?.httpOnly === true && session?.sameSite === 'Lax' && session?.secure === false && session?.path === '/', session);
  const visible = await page.evaluate(() => document.cookie);
  await check('page scripts cannot read the session cookie', !visible.includes('kd_session'), visible);
  await check('the form cookie is cleared after sign-in', !(await context.cookies()).some((cookie) => cookie.name === 'kd_form'));
  await expectPage(page, 'a new account has no agents and no requests', 'You', ['No requests are waiting.', 'No agents yet.']);

  const forged = await context.request.post(`${hub.url}/connect`, { form: { csrf: 'not-the-token' }, maxRedirects: 0 });
  const forgedText = await forged.text();
  await check('a POST /connect without the session\'s CSRF token is refused (403)',
    forged.status() === 403 && forgedText.includes('This form expired') && !/class="code"/.test(forgedText), `${forged.status()} ${forgedText.slice(0, 300)}`);

  await submit(page, page.locator('nav').getByRole('link', { name: 'Connect your agent', exact: true }));
  await expectPage(page, 'Connect your agent explains codes', 'Connect your agent', ['A code lasts 30 minutes and works once.']);
  await submit(page, page.getByRole('button', { name: 'Make a connect code' }));
  const code = ((await page.locator('main .code').first().textContent({ timeout: 5000 }).catch(() => '')) ?? '').trim();
  await check('a connect code is shown, like ABCD-EF23 (no I, O, 0, 1)', /^[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}$/.test(code), code, page);
  await expectPage(page, 'the code page says what to do with it', 'Connect your agent', ['Give your agent this code.', 'connect_with_code']);

  const agent = await newAgent(hub, 'Browser Scout');
  const before = await whoami(hub, agent);
  await check('verify_agent (CLI whoami) before: owner_linked false', before.json?.ok === true && before.json.data.owner_linked === false, before.stdout + before.stderr);
  const connected = await call(hub, agent, 'connect_with_code', { code: code.toLowerCase() });
  await check('connect_with_code (CLI, signed) files a pending request',
    connected.json?.ok === true && connected.json.data.status === 'pending' && connected.json.data.owner_linked === false, connected.stdout + connected.stderr);

  await submit(page, page.locator('nav').getByRole('link', { name: 'You', exact: true }));
  const row = page.locator('table tr', { hasText: agent.handle });
  await expectPage(page, 'You lists the pending request with the agent\'s name and handle', 'You', ['Waiting for you', 'Browser Scout', agent.handle]);
  const via = ((await row.first().locator('td').nth(2).innerText().catch(() => '')) ?? '').trim();
  await check('the request came via code', via === 'code', via, page);
  const stillPending = await whoami(hub, agent);
  await check('verify_agent while pending: owner_linked false', stillPending.json?.data?.owner_linked === false, stillPending.stdout);

  const approved = await submit(page, row.getByRole('button', { name: 'Approve' }));
  await check('Approve redirects back to You', approved?.status() === 200 && new URL(page.url()).pathname === '/you', page.url(), page);
  await expectPage(page, 'the agent is listed as linked and nothing waits', 'You', ['No requests are waiting.', 'Your agents', 'Browser Scout']);
  const state = ((await page.locator('table tr', { hasText: agent.handle }).first().innerText().catch(() => '')) ?? '');
  await check('its state is "linked", with Pause and Remove', /\blinked\b/.test(state) && state.includes('Pause') && state.includes('Remove'), state, page);

  const after = await whoami(hub, agent);
  await check('verify_agent (CLI whoami) after approval: owner_linked true, 40 actions a day',
    after.json?.ok === true && after.json.data.owner_linked === true && after.json.data.current?.limits?.actions_per_day === 40, after.stdout + after.stderr);
  const again = await call(hub, agent, 'connect_with_code', { code });
  await check('the used code does not work twice (invalid_code)', again.json?.ok === false && again.json.error?.code === 'invalid_code', again.stdout);
  return hub;
}

async function claimUrl(browser) {
  const hub = (current.hub = await startHub('claim-url'));
  const agent = await newAgent(hub, 'Finding Scout');
  const title = 'Rust role <b>near you</b>';
  const filed = await call(hub, agent, 'notify_human_of_finding', {
    kind: 'job',
    title,
    why: 'It asks for Rust and SQLite, which you use.',
    evidence_ref: 'https://example.org/jobs/42',
  });
  const data = filed.json?.data ?? {};
  await check('notify_human_of_finding with no email (CLI) files an open finding', filed.json?.ok === true && data.delivery === 'open' && data.status === 'open', filed.stdout + filed.stderr);
  await check('its claim_url is absolute: the hub, /findings/adopt?code=<claim_code>',
    typeof data.claim_url === 'string' && data.claim_url === `${hub.url}/findings/adopt?code=${data.claim_code}`, data.claim_url);

  const context = await openContext(browser);
  const page = (current.page = await context.newPage());
  const other = await openContext(browser);
  const opened = await page.goto(data.claim_url);
  await check('the claim URL opens (200) for a visitor', opened?.status() === 200, opened?.status(), page);
  await expectPage(page, 'a visitor is asked to sign in or sign up first', 'Adopt a finding', ['Sign in (or create an account) first']);
  await check('a visitor gets no adopt button', (await page.getByRole('button', { name: 'Adopt this finding' }).count()) === 0, undefined, page);

  await submit(page, page.locator('main').getByRole('link', { name: 'Sign up', exact: true }));
  const email = newEmail('grace');
  await signUp(page, 'Grace Finder', email);
  await page.goto(`${hub.url}/inbox`);
  await expectPage(page, 'the Inbox is empty before adopting', 'Inbox', ['Your Inbox is empty.']);

  await page.goto(data.claim_url);
  await expectPage(page, 'signed in, the claim URL asks to confirm', 'Adopt a finding', ['Adopt it to read it in your Inbox.']);
  await page.goto(`${hub.url}/inbox`);
  await expectPage(page, 'opening the claim URL (a GET) adopts nothing', 'Inbox', ['Your Inbox is empty.']);
  await page.goto(data.claim_url);
  const adopted = await submit(page, page.getByRole('button', { name: 'Adopt this finding' }));
  await check('Adopt redirects to the Inbox', adopted?.status() === 200 && new URL(page.url()).pathname === '/inbox', page.url(), page);
  await expectPage(page, 'the finding is in the Inbox: title, agent, kind, why, evidence', 'Inbox',
    [title, `From ${agent.handle}`, '(job)', 'It asks for Rust and SQLite, which you use.', 'https://example.org/jobs/42']);
  await check('the agent\'s text is shown as text, not markup', (await page.locator('main b').count()) === 0, undefined, page);

  // A second person cannot take it over with the same link.
  const page2 = (current.page = await other.newPage());
  await page2.goto(`${hub.url}/signup`);
  await signUp(page2, 'Second Person', newEmail('second'));
  await page2.goto(data.claim_url);
  const refused = await submit(page2, page2.getByRole('button', { name: 'Adopt this finding' }));
  await check('someone else\'s adopted claim code is refused (400)', refused?.status() === 400, refused?.status(), page2);
  await expectPage(page2, 'the refusal says so in plain words', 'Adopt a finding', ['already adopted by someone else']);
  current.page = page;
  return hub;
}

function mailsTo(address, { signUp = false } = {}) {
  return readdirSync(SMTP_DIR)
    .filter((name) => name.endsWith('.json') && !name.startsWith('.'))
    .sort()
    .map((name) => JSON.parse(readFileSync(join(SMTP_DIR, name), 'utf8')))
    .filter((mail) => mail.rcpt_tos.some((rcpt) => rcpt.toLowerCase() === address.toLowerCase()))
    // The person's own sign-up mail is not what scenario c counts (signUp: true keeps it).
    .filter((mail) => signUp || mail.subject !== 'Confirm your KarmaDue account');
}

/** Waits for a mail to `address` (with `subject`, when given: an address may already hold
 *  another mail, as scenario c's second sign-up does). */
async function waitForMail(address, { signUp = false, seconds = 30, subject = null } = {}) {
  for (let i = 0; i < seconds * 10; i += 1) {
    const found = mailsTo(address, { signUp });
    if (found.some((mail) => subject === null || mail.subject === subject)) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return [];
}

async function mailOverSmtp(browser) {
  const hub = (current.hub = await startHub('mail'));
  const context = await openContext(browser);
  const page = (current.page = await context.newPage());
  await page.goto(`${hub.url}/signup`);
  const email = newEmail('linus');
  await signUp(page, 'Linus Mail', email);
  const token = (await sessionCookie(context))?.value ?? '';
  const csrf = (await page.locator('input[name=csrf]').first().getAttribute('value')) ?? '';
  await check('the person has a session and a CSRF token', token.startsWith('kds_') && csrf.length > 0, { token: token.slice(0, 8), csrf: csrf.length });

  const agent = await newAgent(hub, 'Claim Scout');
  const pitch = 'I track your repos. <script>alert(1)</script>';
  const stranger = newEmail('nobody');
  const toPerson = await call(hub, agent, 'request_claim', { email, pitch });
  const toNobody = await call(hub, agent, 'request_claim', { email: stranger, pitch });
  await check('request_claim (CLI) to an address with an account: sent', toPerson.json?.ok === true && toPerson.json.data.status === 'sent', toPerson.stdout + toPerson.stderr);
  await check('request_claim to an address with no account: sent', toNobody.json?.ok === true && toNobody.json.data.status === 'sent', toNobody.stdout + toNobody.stderr);
  const shape = (reply) => {
    const { claim_id: _id, event_seq: _seq, ...rest } = reply.json?.data ?? {};
    return JSON.stringify({ ...rest, keys: Object.keys(reply.json?.data ?? {}).sort(), ok: reply.json?.ok });
  };
  await check('the two replies are the same but for claim_id and event_seq (DECISIONS 7)', shape(toPerson) === shape(toNobody), [shape(toPerson), shape(toNobody)]);

  const [mail] = await waitForMail(email);
  const [strangerMail] = await waitForMail(stranger);
  await check('the hub sent the mail over SMTP to the sink, addressed to the person', mail?.rcpt_tos?.length === 1 && mail.to === email, mail ?? 'no mail within 30 s');
  await check('the address with no account gets a mail too', strangerMail?.rcpt_tos?.length === 1 && strangerMail.to === stranger, strangerMail ?? 'no mail within 30 s');
  if (!mail || !strangerMail) {
    throw new Error(`no mail in ${SMTP_DIR} for ${email} / ${stranger}; hub log:\n${hub.log()}`);
  }
  await check('it comes from no-reply at the hub, as plain text', /no-reply@/.test(mail.mail_from) && /^text\/plain/.test(mail.content_type), [mail.mail_from, mail.content_type]);
  await check('its subject: An agent asks you to claim it on KarmaDue', mail.subject === 'An agent asks you to claim it on KarmaDue', mail.subject);
  await check('its body names the agent by handle and links to the app\'s You page',
    mail.body.includes(agent.handle) && mail.body.includes(`${hub.url}/you`), mail.body);
  await check('the mail for the address with no account has the same subject and words',
    strangerMail.subject === mail.subject && strangerMail.body === mail.body, strangerMail.body);
  const secrets = { session: token, csrf, password: PASSWORD, agent_secret_key: agent.secret };
  for (const sent of [mail, strangerMail]) {
    const leaked = Object.entries(secrets).filter(([, value]) => value && sent.raw.includes(value)).map(([key]) => key);
    await check(`the mail to ${sent.to.split('@')[0]} holds no secret (session, CSRF, password, agent key) and no pitch`,
      leaked.length === 0 && !sent.raw.includes('kds_') && !sent.raw.includes('kd_session') && !sent.raw.includes('<script>'), leaked);
  }

  const link = /https?:\/\/\S+/.exec(mail.body)?.[0] ?? '';
  const fromMail = await page.goto(link);
  await check('the link in the mail opens the You page', fromMail?.status() === 200 && new URL(page.url()).pathname === '/you', `${link} → ${page.url()}`, page);
  const row = page.locator('table tr', { hasText: agent.handle });
  await expectPage(page, 'You shows the claim request with the agent\'s note as data', 'You', ['claim request', 'Claim Scout', pitch]);
  await check('the note\'s markup is not run or rendered', (await page.locator('main script').count()) === 0, undefined, page);
  const before = await whoami(hub, agent);
  await check('verify_agent before approval: owner_linked false', before.json?.data?.owner_linked === false, before.stdout);
  await submit(page, row.getByRole('button', { name: 'Approve' }));
  await expectPage(page, 'after Approve the agent is linked', 'You', ['No requests are waiting.', 'Claim Scout']);
  const after = await whoami(hub, agent);
  await check('verify_agent after approval: owner_linked true', after.json?.data?.owner_linked === true, after.stdout);

  // The stranger's address had no account when the agent asked: nothing was filed for it.
  const later = await openContext(browser);
  const page2 = (current.page = await later.newPage());
  await page2.goto(`${hub.url}/signup`);
  await signUp(page2, 'Late Comer', stranger);
  await expectPage(page2, 'an account made later has no request waiting (none was filed)', 'You', ['No requests are waiting.']);
  current.page = page;
  await check('exactly one mail per address (no duplicate sends)', mailsTo(email).length === 1 && mailsTo(stranger).length === 1,
    [mailsTo(email).length, mailsTo(stranger).length]);
  return hub;
}

/** d. A newcomer's first visit (issue 16): from `/`, sign up through the mailed link, open the
 *  forum, open an agent's thread (its kd-rain-v1 frames fit a 1280 px window) and reply to it
 *  as a person; the agent reads the reply through the CLI. */
async function forumFirstVisit(browser) {
  const hub = (current.hub = await startHub('forum', { catalog: true }));
  const agent = await newAgent(hub, 'Forum Agent');
  await passAdmission(hub, agent);
  const title = 'How do you rotate an agent key safely?';
  const made = await call(hub, agent, 'create_thread', {
    topic: 'help',
    title,
    body: 'I rotate with rotate_agent_key and keep the old key until the next signed write goes through. Is there a better order?',
  });
  const threadId = made.json?.data?.thread_id;
  await check('the agent opens a thread (CLI create_thread)', made.code === 0 && typeof threadId === 'string', made.stdout + made.stderr);
  const context = await openContext(browser);
  const page = (current.page = await context.newPage());
  await page.setViewportSize({ width: 1280, height: 900 });
  const home = await page.goto(`${hub.url}/`);
  await check('GET / answers 200', home?.status() === 200, home?.status(), page);
  await submit(page, page.getByRole('link', { name: 'Sign up', exact: true }).first());
  await expectPage(page, 'the home page leads to the sign-up form', 'Sign up', ['Email', 'Your name', 'Password']);
  const email = newEmail('forum');
  await signUp(page, 'Forum Person', email);
  await submit(page, page.getByRole('link', { name: 'Forum', exact: true }).first());
  await expectPage(page, 'signed in, the navigation leads to the forum', 'Forum', [title]);
  await submit(page, page.getByRole('link', { name: title, exact: true }));
  await expectPage(page, 'the thread opens with its post and its frame', title, ['frame (kd-rain-v1):', 'Forum Agent', 'Reply']);
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  await check('the thread page, frames included, fits a 1280 px window (no sideways scroll)', width <= 1280, width, page);
  const words = `Rotate first, then retire the old key: ${randomBytes(4).toString('hex')}.`;
  await page.getByLabel('Your reply (shown under your name, as data)').fill(words);
  const posted = await submit(page, page.getByRole('button', { name: 'Post reply' }));
  const at = new URL(page.url());
  await check('the reply answers 303 back to the thread at the new post', posted?.status() === 200
    && (await posted.request().redirectedFrom()?.response())?.status() === 303
    && at.pathname === '/forum/thread' && at.searchParams.get('id') === threadId && at.hash.startsWith('#kdpo_'),
  `${posted?.status()} ${page.url()}`, page);
  await expectPage(page, 'the thread shows the reply under the person\'s name', title, [words, 'Forum Person']);
  const read = await call(hub, agent, 'get_thread', { thread_id: threadId });
  const posts = read.json?.data?.posts ?? [];
  const reply = posts.find((post) => post.post_id === at.hash.slice(1));
  await check('the agent reads the person\'s reply (CLI get_thread): the second post, by the person',
    read.code === 0 && posts.length === 2 && reply?.author?.display_label === 'Forum Person', read.stdout + read.stderr);
  const untrusted = JSON.stringify(read.json?.untrusted_content ?? {});
  await check('the reply\'s words reach the agent only as untrusted content', untrusted.includes(words), untrusted);
  return hub;
}

/** e. The OAuth connector with the Python MCP SDK as the client and Chromium as the person. */
async function oauthConnector(browser) {
  const hub = (current.hub = await startHub('oauth', { catalog: true }));
  const context = await openContext(browser);
  const page = (current.page = await context.newPage());
  await page.goto(`${hub.url}/signup`);
  await signUp(page, 'Grace', newEmail('grace'));
  const child = spawn(PYTHON, [join(PEERS_DIR, 'python_oauth_client.py')], {
    env: { ...process.env, KD_HUB_URL: hub.url },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  const authorize = new Promise((resolve) => {
    const look = () => {
      const match = /^AUTHORIZE (\S+)$/m.exec(out);
      if (match) resolve(match[1]);
    };
    child.stdout.on('data', (chunk) => { out += chunk; look(); });
    child.stderr.on('data', (chunk) => { out += chunk; });
    exited.then(() => resolve(null));
  });
  const url = await Promise.race([authorize, new Promise((resolve) => setTimeout(() => resolve(null), 120000))]);
  await check('the SDK sends the person to /oauth/authorize with PKCE S256',
    Boolean(url) && url.startsWith(`${hub.url}/oauth/authorize?`) && url.includes('code_challenge_method=S256'), out);
  if (url) {
    await page.goto(url);
    await expectPage(page, 'the consent screen names the app and its permissions', 'Connect an app',
      ['KarmaDue Python peer', 'kd.outcomes.write', 'Actions a day: up to 40.']);
    const callback = page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/, { timeout: 20000 });
    await page.getByRole('button', { name: 'Approve' }).click();
    await callback.catch(() => {});
    await check('Approve sends the browser to the app\'s loopback callback with a code and iss',
      /\/callback\?.*code=kdoc_/.test(page.url()) && page.url().includes('iss='), page.url(), page);
  }
  const code = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('timeout'), 180000))]);
  if (code === 'timeout') child.kill('SIGKILL');
  console.log(out.split('\n').filter((line) => line && !line.startsWith('AUTHORIZE ')).map((line) => `   py ${line}`).join('\n'));
  const summary = /^(\d+) passed, (\d+) failed$/m.exec(out);
  if (summary) {
    passed += Number(summary[1]);
    failed += Number(summary[2]);
  }
  await check('the Python SDK peer finished with its summary and exit 0', Boolean(summary) && code === 0, `exit ${code}`);
  return hub;
}

/** f. The OAuth connector with the TypeScript SDK as the client and Chromium as the person. */
async function tsOauthConnector(browser) {
  // Logged at debug: no token, code, verifier or password may reach a log line.
  const hub = (current.hub = await startHub('ts-oauth', { logLevel: 'debug' }));
  const context = await openContext(browser);
  const page = (current.page = await context.newPage());
  await page.goto(`${hub.url}/signup`);
  await signUp(page, 'Hedy', newEmail('hedy'));
  // The app's loopback callback: a real server on a free port (page.route does not see the
  // 303 the consent form's POST answers with).
  const back = {};
  const callback = createServer((request, response) => {
    const landed = new URL(request.url, 'http://127.0.0.1');
    if (landed.pathname === '/callback') {
      back.code = landed.searchParams.get('code');
      back.iss = landed.searchParams.get('iss');
    }
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end('<!doctype html><title>Connected</title><main><h1>Connected</h1></main>');
  });
  await new Promise((resolve) => callback.listen(0, '127.0.0.1', resolve));
  current.servers = [callback];
  const redirect = `http://127.0.0.1:${callback.address().port}/callback`;
  const provider = memoryProvider(redirect, { name: 'KarmaDue TS peer' });
  const url = new URL(`${hub.url}/functions/v1/mcp/connector`);
  let client = new Client({ name: 'karmadue-ts-oauth-peer', version: '1.0.0' });
  let refused = null;
  try {
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  } catch (error) {
    refused = error;
  }
  await check('the SDK discovers, registers and asks for authorization (UnauthorizedError)',
    refused instanceof UnauthorizedError && provider.store.authorizeUrl !== null && provider.store.client?.client_id?.startsWith('kdcl_'),
    `${refused} ${provider.store.authorizeUrl}`);
  await page.goto(provider.store.authorizeUrl.toString());
  await expectPage(page, 'the consent screen names the TypeScript app', 'Connect an app', ['KarmaDue TS peer']);
  await submit(page, page.getByRole('button', { name: 'Approve' }));
  await check('Approve redirects to the loopback callback with a code and the issuer',
    back.code?.startsWith('kdoc_') && back.iss === hub.url, back, page);
  const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await transport.finishAuth(back.code);
  await check('the SDK exchanged the code for tokens', provider.store.tokens?.access_token?.startsWith('kdoa_'), provider.store.tokens);
  client = new Client({ name: 'karmadue-ts-oauth-peer', version: '1.0.0' });
  await client.connect(transport);
  const names = (await client.listTools()).tools.map((tool) => tool.name);
  await check('tools/list offers report_outcome, search and fetch, and hides register_agent',
    ['report_outcome', 'search', 'fetch'].every((name) => names.includes(name)) && !names.includes('register_agent'), names);
  const me = (await client.callTool({ name: 'verify_agent', arguments: {} })).structuredContent;
  await check('verify_agent shows the hosted agent, "Hedy\'s KarmaDue TS peer", by oauth',
    me?.data?.agent_type === 'hosted_connector' && me?.data?.display_label === "Hedy's KarmaDue TS peer"
      && me?.data?.current?.auth_method === 'oauth', me);
  const refusal = (await client.callTool({ name: 'create_thread', arguments: { topic: 'tools', title: 't', body: 'b' } })).structuredContent;
  await check('a write outside the grant names the screen that adds it',
    refusal?.error?.code === 'needs_your_approval' && refusal?.error?.approve_url === `${hub.url}/oauth/add-permission?agent=${me?.data?.agent_id}&scope=kd.listings.write`, refusal);
  await client.close();
  callback.close();
  const secrets = { access_token: provider.store.tokens?.access_token, refresh_token: provider.store.tokens?.refresh_token,
    code: back.code, code_verifier: provider.store.verifier, password: PASSWORD };
  const places = { log: hub.log(), ...filesUnder(join(hub.data, 'data')) };
  const leaked = Object.entries(secrets).flatMap(([name, value]) =>
    Object.entries(places).filter(([, text]) => !value || text.includes(value)).map(([place]) => `${name} in ${place}`));
  await check('no token, code, verifier or password in the debug log, the event log or any file of the hub',
    leaked.length === 0 && places.log.includes('DEBUG'), leaked);
  return hub;
}

/** Every file under `dir` (recursively), read as latin1 text so any byte sequence is searchable. */
function filesUnder(dir) {
  const files = {};
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) Object.assign(files, filesUnder(path));
    else if (entry.isFile()) files[path] = readFileSync(path, 'latin1');
  }
  return files;
}

/** Runs `karmadue ARGS…` (an operator's command); resolves with its exit code and output. */
function hubCli(...args) {
  return new Promise((resolve) => {
    execFile(HUB_BIN, args, { timeout: 120000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** g. The Linkdbots leaderboards after an import, and a category proposed by a person. */
async function linkdbotsBoards(browser) {
  let imported = null;
  const hub = (current.hub = await startHub('boards', {
    prepare: async (dataDir) => {
      imported = await hubCli('linkdbots', 'import', '--data-dir', dataDir);
    },
  }));
  await check('karmadue linkdbots import loads the bundled Aider rows', imported?.code === 0 && /cards imported/.test(imported.stdout),
    `${imported?.stdout}${imported?.stderr}`);
  const context = await openContext(browser);
  const page = (current.page = await context.newPage());
  const index = await page.goto(`${hub.url}/linkdbots/benchmarks`);
  await check('GET /linkdbots/benchmarks answers 200', index?.status() === 200, index?.status(), page);
  await expectPage(page, 'the index lists the categories', 'Leaderboards', ['code.feature', 'code.refactor', 'Cards']);
  await submit(page, page.getByRole('link', { name: 'code.feature', exact: true }));
  await expectPage(page, 'a category\'s leaderboard opens from the index', 'code.feature', ['Cost per successful run', 'Success rate']);
  const first = page.locator('tr.row').first();
  const rate = (await first.locator('td.rate').innerText()).trim();
  const coverage = (await first.locator('td.coverage').innerText()).trim();
  await check('the first row shows its success rate beside its coverage',
    /^\d+%$/.test(rate) && /^outcome known on \d+ of \d+ cards$/.test(coverage), `${rate} | ${coverage}`, page);
  const api = await (await fetch(`${hub.url}/linkdbots/api/v1/benchmarks/code.feature`)).json();
  const costed = api.rows.filter((row) => typeof row.costPerSuccessUsd === 'number').length;
  const bars = await page.locator('svg.chart rect.bar').count();
  const costCells = await page.locator('tr.row td.cost').evaluateAll((cells) => cells.filter((cell) => cell.textContent.startsWith('$')).length);
  await check('the SVG chart has one bar per row with a cost per successful run',
    bars > 0 && bars === costed && bars === costCells, `bars ${bars}, rows with a cost ${costed}, cost cells ${costCells}`, page);
  const label = await page.locator('svg.chart text').nth(1).textContent();
  await check('each bar\'s figure sits beside its success rate and coverage',
    /per successful run · \d+% success · outcome known on \d+ of \d+ cards/.test(label ?? ''), label, page);
  const scripts = await page.evaluate(() => document.scripts.length);
  await check('the leaderboard page runs no script', scripts === 0, scripts, page);

  // A person proposes a category; it waits for the operator.
  const dashboard = await page.goto(`${hub.url}/linkdbots/dashboard/categories`);
  await check('signed out, the dashboard sends to sign in and back', new URL(page.url()).pathname === '/signin'
    && new URL(page.url()).searchParams.get('next') === '/linkdbots/dashboard/categories', `${dashboard?.status()} ${page.url()}`, page);
  await submit(page, page.getByRole('link', { name: 'Sign up', exact: true }).first());
  await signUp(page, 'Board Person', newEmail('boards'));
  await page.goto(`${hub.url}/linkdbots/dashboard/categories`);
  await expectPage(page, 'the categories page lists the live list', 'Linkdbots categories', ['code.review', 'You have not proposed a category.']);
  await page.getByLabel('Name (as cards will spell it, e.g. code.lint)').fill('code.lint');
  await page.getByLabel('What it covers (one line)').fill('Run linters and fix what they flag');
  await submit(page, page.getByRole('button', { name: 'Propose' }));
  await expectPage(page, 'the proposal waits for a decision', 'Linkdbots categories', ['code.lint', 'Run linters and fix what they flag', 'proposed']);
  return hub;
}

// ---- run -----------------------------------------------------------------------------------

const started = Date.now();
let browser;
async function linkdbotsDashboard(browser) {
  const hub = (current.hub = await startHub('linkdbots'));
  const context = await openContext(browser);
  const page = (current.page = await context.newPage());
  const api = (path) => `${hub.url}/linkdbots/api/v1${path}`;
  const json = (key) => ({ 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) });

  await page.goto(`${hub.url}/linkdbots/dashboard/connect`);
  const away = new URL(page.url());
  await check('signed out, the dashboard sends the visitor to sign in with the page as next',
    away.pathname === '/signin' && away.searchParams.get('next') === '/linkdbots/dashboard/connect', page.url(), page);
  await page.goto(`${hub.url}/signup`);
  await signUp(page, 'Lin Owner', newEmail('lin'));

  await page.goto(`${hub.url}/linkdbots/dashboard/connect`);
  await expectPage(page, 'the connect page offers a pairing code', 'Connect an agent', ['Codes left today: 10 of 10.']);
  await page.getByLabel('Profile name').fill('Browser Miso');
  const minted = await submit(page, page.getByRole('button', { name: 'Mint a pairing code' }));
  const code = ((await page.locator('main p.code').first().textContent({ timeout: 5000 }).catch(() => '')) ?? '').trim();
  await check('a pairing code is shown once, 8 characters (no I, L, O, 0, 1)',
    minted?.status() === 200 && /^[A-HJKMNP-Z2-9]{8}$/.test(code), `${minted?.status()} ${code}`, page);
  await expectPage(page, 'the code comes with the install command and the day\'s remaining codes', 'Connect an agent',
    [`claude mcp add linkdbots -e LINKDBOTS_PAIRING_CODE=${code}`, '"LINKDBOTS_PAIRING_CODE"', 'Codes left today: 9 of 10.']);

  const paired = await fetch(api('/pair'), {
    method: 'POST', headers: json(), body: JSON.stringify({ code, engine: 'claude-code', model: 'opus-4.6', host: 'claude-code' }),
  });
  const agent = await paired.json().catch(() => ({}));
  await check('POST /linkdbots/api/v1/pair redeems the code: 201 with the key',
    paired.status === 201 && /^lkb_agent_[0-9a-f]{64}$/.test(agent.agentKey ?? '') && /^agt_/.test(agent.agentId ?? ''), { status: paired.status, agentId: agent.agentId });
  const bio = 'Reviews diffs <carefully> & says why.';
  const proposed = await fetch(api('/agents/me/profile'), { method: 'POST', headers: json(agent.agentKey), body: JSON.stringify({ bio }) });
  const proposal = await proposed.json().catch(() => ({}));
  await check('the agent proposes a bio: 202, waiting for its owner', proposed.status === 202 && proposal.status === 'pending', proposal);
  const profile = async () => (await fetch(api(`/agents/${agent.agentId}/profile`))).json().catch(() => ({}));
  const before = await profile();
  await check('the public profile has the name from the code and no bio yet', before.name === 'Browser Miso' && before.bio == null, before);

  await page.goto(`${hub.url}/linkdbots/dashboard/queue`);
  await expectPage(page, 'the queue shows the exact proposed bio', 'Approval queue', ['profile from', bio, agent.handle ?? 'browser-miso']);
  const approved = await submit(page, page.getByRole('button', { name: 'Approve' }));
  const back = new URL(page.url());
  await check('Approve redirects back to the queue (303, then 200)',
    approved?.status() === 200 && back.pathname === '/linkdbots/dashboard/queue' && back.searchParams.get('done') === 'approved'
      && (await approved.request().redirectedFrom()?.response())?.status() === 303, page.url(), page);
  await expectPage(page, 'the queue says it is published and nothing waits', 'Approval queue',
    ['Approved: the text is published.', 'Nothing is waiting for you.']);
  const after = await profile();
  await check('the public profile shows the approved bio', after.bio === bio, after);
  return hub;
}

/** What browser_cimd.mjs's scenarios use of this file (`tally` adds a peer's own counts). */
function cimdHelpers() {
  return {
    current, startHub, openContext, check, expectPage, submit, signUp, newEmail,
    python: PYTHON, peersDir: PEERS_DIR, work: WORK,
    tally(peerPassed, peerFailed) { passed += peerPassed; failed += peerFailed; },
  };
}

try {
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 60000 });
  console.log(`chromium ${browser.version()} (${CHROMIUM}), playwright-core`);
} catch (error) {
  console.log(`FAIL chromium did not start: ${error.message}`);
  console.log(`0 passed, ${failed + 1} failed`);
  process.exit(1);
}

for (const [name, scenario] of [
  ['a. connect code, approve, owner_linked', connectCode],
  ['b. claim URL, adopt, Inbox', claimUrl],
  ['c. request_claim mail over SMTP, approve', mailOverSmtp],
  ['d. a first visit: home, sign up, forum, reply', forumFirstVisit],
  ['e. OAuth connector: the Python MCP SDK, approved in Chromium', oauthConnector],
  ['f. OAuth connector: the TypeScript MCP SDK, approved in Chromium', tsOauthConnector],
  ['g. Linkdbots dashboard: mint, pair, propose, approve in Chromium', linkdbotsDashboard],
  ['h. Linkdbots leaderboards after an import, a category proposed', linkdbotsBoards],
  ['i. Ronin /#work: paste key.json, take a WANTED job, deliver, acknowledge payment',
    (chromiumBrowser) => roninWork(chromiumBrowser, { current, startHub, openContext, check })],
  ['j. CIMD over local TLS: the Python MCP SDK with client_metadata_url, approved in Chromium',
    (chromiumBrowser) => cimdPython(chromiumBrowser, cimdHelpers())],
  ['k. CIMD over local TLS: the TypeScript MCP SDK with clientMetadataUrl, approved in Chromium',
    (chromiumBrowser) => cimdTypescript(chromiumBrowser, cimdHelpers())],
]) {
  console.log(`\n-- ${name}`);
  current = { page: null, hub: null, contexts: [] };
  const before = Date.now();
  let hub = null;
  try {
    hub = await scenario(browser);
  } catch (error) {
    failed += 1;
    console.log(`FAIL ${name}: ${error.stack ?? error}`);
    await dumpPage(current.page);
    if (current.hub) console.log(`---- ${current.hub.name} hub log\n${current.hub.log()}---- end of log`);
  } finally {
    for (const context of current.contexts) await context.close().catch(() => {});
    for (const server of current.servers ?? []) server.close();
    await (hub ?? current.hub)?.stop();
  }
  console.log(`   (${((Date.now() - before) / 1000).toFixed(1)} s)`);
}

await browser.close();
rmSync(WORK, { recursive: true, force: true });
console.log(`\nbrowser tests took ${((Date.now() - started) / 1000).toFixed(1)} s`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
