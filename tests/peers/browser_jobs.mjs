// Jobs in the browser (issue 32; docs/decisions.md 464, 468): headless Chromium (Debian's
// /usr/bin/chromium through playwright-core) for two people, the agent through the hub's own
// CLI client (`karmadue agent …`), against one fresh hub whose mail goes to the SMTP sink.
//
//   KD_HUB_BIN=target/release/karmadue KD_SMTP_PORT=PORT KD_SMTP_DIR=DIR \
//     node tests/peers/browser_jobs.mjs
//
// The owner (a narrow, 390 px screen) signs up, links an agent with a connect code; the agent
// quotes a check, opens a $0 public job and opens a dispute about it. The helper (a wide,
// 1280 px screen) signs up, finds the job on /you/jobs, takes it, submits a refused result
// (an http link: the form comes back filled in), then passed with an https link. The owner's
// /you/jobs shows the job done with its evidence and the dispute; the agent reads the result
// with get_job and cannot cancel it any more. Prints one line per check and, last, exactly
// `N passed, M failed`; exits 1 on any failure.

import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { chromium } from 'playwright-core';

const env = (name) => process.env[name] || '';
const [HUB_BIN, SMTP_PORT, SMTP_DIR] = ['KD_HUB_BIN', 'KD_SMTP_PORT', 'KD_SMTP_DIR'].map(env);
if (!HUB_BIN || !SMTP_PORT || !SMTP_DIR) {
  console.error('KD_HUB_BIN, KD_SMTP_PORT and KD_SMTP_DIR must be set (scripts/peers.sh sets them)');
  process.exit(2);
}
const WORK = mkdtempSync(join(tmpdir(), 'kd-browser-jobs-'));
const PASSWORD = `pw-${randomBytes(9).toString('base64url')}`;
let passed = 0;
let failed = 0;

async function check(name, ok, detail, page) {
  if (ok) {
    passed += 1;
    console.log(`ok   ${name}`);
    return;
  }
  failed += 1;
  console.log(`FAIL ${name}${detail === undefined ? '' : `: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`}`);
  if (page) console.log(`---- page ${page.url()}\n${await page.content().catch(() => '')}\n---- end of page`);
}

/** The text of the page's main element. */
const mainText = (page) => page.locator('main').first().innerText({ timeout: 5000 }).catch(() => '');

/** Clicks what submits or navigates; the final response. */
async function click(page, locator) {
  const [response] = await Promise.all([page.waitForNavigation({ waitUntil: 'load', timeout: 20000 }), locator.click()]);
  return response;
}

function serve() {
  const data = join(WORK, 'data');
  const child = spawn(HUB_BIN, ['serve', '--listen', '127.0.0.1:0', '--data-dir', data, '--bundled-catalog', 'false',
    '--smtp-url', `smtp://127.0.0.1:${SMTP_PORT}`], { env: { ...process.env, KARMADUE_LOG: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const started = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the hub did not start:\n${log}`)), 180000);
    const read = (chunk) => {
      log += chunk;
      const port = /^KarmaDue hub listening on 127\.0\.0\.1:(\d+)/m.exec(log)?.[1];
      if (port) {
        clearTimeout(timer);
        resolve(`http://127.0.0.1:${port}`);
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', (chunk) => { log += chunk; });
    child.on('exit', (code) => reject(new Error(`the hub exited (${code}):\n${log}`)));
  });
  return { child, started, log: () => log };
}

/** `karmadue agent ARGS…` for the key in `keyFile`, its stdout parsed as JSON. */
function agent(url, keyFile, ...args) {
  return new Promise((resolve) => {
    execFile(HUB_BIN, ['agent', ...args], { env: { ...process.env, KARMADUE_HUB: url, KARMADUE_AGENT_FILE: keyFile }, timeout: 60000 },
      (error, stdout, stderr) => {
        let json = null;
        try { json = JSON.parse(stdout); } catch { /* reported by the check */ }
        resolve({ code: error ? 1 : 0, text: stdout + stderr, json });
      });
  });
}

async function confirmationLink(email) {
  for (let i = 0; i < 300; i += 1) {
    for (const name of readdirSync(SMTP_DIR).filter((file) => file.endsWith('.json'))) {
      const mail = JSON.parse(readFileSync(join(SMTP_DIR, name), 'utf8'));
      const link = mail.rcpt_tos.includes(email) && mail.body.match(/https?:\/\/\S+\/signup\/confirm\?token=kdsu_[0-9a-f]+/)?.[0];
      if (link) return link;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return null;
}

async function signUp(page, url, name) {
  const email = `${name.toLowerCase().replace(/\W/g, '')}-${randomBytes(4).toString('hex')}@example.org`;
  await page.goto(`${url}/signup`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Your name').fill(name);
  await page.getByLabel('Password').fill(PASSWORD);
  await click(page, page.getByRole('button', { name: 'Create account' }));
  const link = await confirmationLink(email);
  await check(`${name}: the sign-up mail carries a link`, Boolean(link));
  await page.goto(link);
  await click(page, page.getByRole('button', { name: 'Confirm my account and sign in' }));
  await check(`${name} is signed in on You`, new URL(page.url()).pathname === '/you', page.url(), page);
}

async function linkAgent(page, url) {
  await click(page, page.locator('nav').getByRole('link', { name: 'Connect your agent', exact: true }));
  await click(page, page.getByRole('button', { name: 'Make a connect code' }));
  const code = ((await page.locator('main .code').first().textContent().catch(() => '')) ?? '').trim();
  const keyFile = join(WORK, 'agent.json');
  const made = await agent(url, keyFile, 'new', '--name', 'Jobs Browser Agent');
  await check('the agent registers (CLI)', made.json?.ok === true, made.text);
  const connected = await agent(url, keyFile, 'call', 'connect_with_code', '--args', JSON.stringify({ code }));
  await check('the agent files its connect request', connected.json?.ok === true, connected.text);
  await click(page, page.locator('nav').getByRole('link', { name: 'You', exact: true }));
  await click(page, page.locator('table tr', { hasText: made.json?.data?.handle ?? '?' }).getByRole('button', { name: 'Approve' }));
  return { keyFile, handle: made.json?.data?.handle };
}

async function scenario(browser, url) {
  const owner = await (await browser.newContext({ viewport: { width: 390, height: 844 } })).newPage();
  const helper = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await signUp(owner, url, 'Olive Owner');
  const bot = await linkAgent(owner, url);
  const call = (tool, args) => agent(url, bot.keyFile, 'call', tool, '--args', JSON.stringify(args));
  const quote = await call('request_verification', { title: 'Check the README', scope: 'private' });
  await check('a private quote is $5.00 and over the $0 cap (a read)',
    quote.json?.data?.quote?.price_usd_cents === 500 && quote.json?.data?.quote?.fits === false, quote.text);
  const opened = await call('request_verification', { title: '<b>Check</b> the README', detail: 'Look at the install steps.', commit: true });
  const jobId = opened.json?.data?.job?.job_id;
  await check('a public $0 job opens', opened.json?.data?.committed === true && /^kdjob_/.test(jobId ?? ''), opened.text);
  const disputed = await call('open_dispute', { subject_type: 'job', subject_id: jobId, reason: 'A test dispute' });
  await check('a dispute about the job is recorded', disputed.json?.data?.decided === false, disputed.text);

  await owner.goto(`${url}/you/jobs`);
  const mine = await mainText(owner);
  await check('the owner sees the job and the dispute (narrow screen)', mine.includes(jobId) && mine.includes('A test dispute')
    && mine.includes('<b>Check</b> the README') && mine.includes('No jobs of other people'), mine, owner);
  const width = await owner.evaluate(() => document.documentElement.scrollWidth);
  await check('nothing overflows 390 px', width <= 390, width, owner);

  await signUp(helper, url, 'Hal Helper');
  await click(helper, helper.locator('nav').getByRole('link', { name: 'Jobs', exact: true }));
  const section = helper.locator('section', { hasText: jobId });
  await check('the helper sees the open job (wide screen)', await section.count() === 1, undefined, helper);
  await click(helper, section.getByRole('button', { name: 'Take this job' }));
  await check('Take this job: back on /you/jobs with the result form', (await mainText(helper)).includes('Submit result'), undefined, helper);
  const form = helper.locator('form[action="/you/jobs/complete"]');
  await form.getByLabel('passed').check();
  await form.getByLabel('Evidence link (an https URL)').fill('http://example.org/plain');
  await form.evaluate((element) => { element.querySelector('input[type=url]').type = 'text'; });
  const refused = await click(helper, form.getByRole('button', { name: 'Submit result' }));
  await check('an http link is refused and the form comes back filled in', refused?.status() === 400
    && (await form.getByLabel('Evidence link (an https URL)').inputValue()) === 'http://example.org/plain', refused?.status(), helper);
  await form.getByLabel('passed').check();
  await form.getByLabel('Evidence link (an https URL)').fill('https://example.org/evidence');
  const done = await click(helper, form.getByRole('button', { name: 'Submit result' }));
  await check('the result is submitted', done?.status() === 200 && (await mainText(helper)).includes('https://example.org/evidence'), done?.status(), helper);

  await owner.reload();
  await check('the owner sees the job done with its evidence', (await mainText(owner)).includes('https://example.org/evidence'), undefined, owner);
  const read = await call('get_job', { job_id: jobId });
  await check('the agent reads the result with get_job', read.json?.data?.job?.status === 'done' && read.json.data.job.result === 'passed', read.text);
  const late = await call('cancel_job', { job_id: jobId });
  await check('a done job cannot be cancelled', late.json?.ok === false && late.json.error?.code === 'validation', late.text);
}

const hub = serve();
const browser = await chromium.launch({ executablePath: env('KD_CHROMIUM') || '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
try {
  await scenario(browser, await hub.started);
} catch (error) {
  failed += 1;
  console.log(`FAIL the jobs scenario threw: ${error.stack}\n---- hub log\n${hub.log()}`);
} finally {
  await browser.close();
  hub.child.kill('SIGTERM');
  rmSync(WORK, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
