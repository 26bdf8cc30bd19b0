// Scenario i of the browser tests (browser.mjs runs it): Ronin's person page, /ronin#work, in
// headless Chromium. A buyer (nostr-tools, in Node) posts a WANTED job; a person pastes their
// key.json into the page, publishes a profile, offers on the job, delivers a file and
// acknowledges the payment, every event signed in the browser by the page's own script; the
// buyer accepts, completes and pays by signing the hub's templates with nostr-tools. Checked:
// the task's chain and settlement through the API, the person's profile, the page's policy,
// and that no request of the page carried the secret.

import { finalizeEvent, generateSecretKey, getPublicKey } from 'nostr-tools/pure';

const hex = (bytes) => Buffer.from(bytes).toString('hex');

/** i. Ronin's /#work: paste key.json, take a WANTED job, deliver a file, acknowledge payment. */
export async function roninWork(browser, { current, startHub, openContext, check }) {
  const hub = (current.hub = await startHub('ronin'));
  const api = (path) => `${hub.url}/ronin/api/v1${path}`;
  const post = async (events) => {
    const response = await fetch(api('/events'), {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(events),
    });
    return { status: response.status, body: await response.json() };
  };
  const sign = (secret, template) => finalizeEvent({
    kind: template.kind, tags: template.tags, content: template.content, created_at: Math.floor(Date.now() / 1000),
  }, secret);
  const task = async (id, as) => (await fetch(api(`/tasks/${id}?as=${as}`))).json();

  // The buyer's WANTED job.
  const buyer = generateSecretKey();
  const buyerKey = getPublicKey(buyer);
  const job = { title: 'Translate a short poem \u202Efdp.exe', description: 'Eight lines, English to Portuguese.', type: 'wanted', price_hint: 3, currency: 'USDC' };
  const posted = await post([
    sign(buyer, { kind: 0, tags: [], content: JSON.stringify({ name: 'Buyer Bo' }) }),
    sign(buyer, { kind: 31100, tags: [['d', 'poem']], content: JSON.stringify(job) }),
  ]);
  await check('the buyer (nostr-tools) posts a profile and a WANTED job', posted.status === 200, posted.body);

  // The person, in Chromium.
  const person = generateSecretKey();
  const personKey = getPublicKey(person);
  const secret = hex(person);
  const context = await openContext(browser);
  const page = (current.page = await context.newPage());
  const sent = [];
  page.on('request', (request) => sent.push(`${request.url()} ${JSON.stringify(request.headers())} ${request.postData() ?? ''}`));
  const opened = await page.goto(`${hub.url}/ronin#work`);
  const policy = opened?.headers()['content-security-policy'] ?? '';
  await check('GET /ronin answers the page with a policy that allows scripts from this hub only',
    opened?.status() === 200 && /script-src 'self'/.test(policy) && !/unsafe-inline'[^;]*script|script-src[^;]*unsafe/.test(policy), `${opened?.status()} ${policy}`, page);
  await page.waitForSelector('#work[data-ready="true"]', { timeout: 10000 });
  const status = async (text) => {
    await page.locator('#status', { hasText: text }).waitFor({ timeout: 10000 });
  };

  await page.locator('#key').fill(JSON.stringify({ secret, pubkey: personKey }));
  await page.getByRole('button', { name: 'Use this key' }).click();
  await page.locator('#whoami', { hasText: personKey }).waitFor({ timeout: 10000 });
  await check('the pasted key.json signs in this tab', true, personKey, page);
  await page.locator('#name').fill('Ada Person');
  await page.getByRole('button', { name: 'Publish my profile' }).click();
  await status('Profile published');
  const agent = await (await fetch(api(`/agents/${personKey}`))).json();
  await check('the profile was signed in the browser: name, human, source web',
    agent.agent?.name === 'Ada Person' && agent.agent?.human === true && agent.agent?.source === 'web', agent, page);

  const offer = page.locator(`li.job[data-address="31100:${buyerKey}:poem"]`);
  const isolated = await offer.locator('strong bdi').evaluate((node) => getComputedStyle(node).unicodeBidi);
  await check('a third-party title is isolated, so a direction override cannot reach the price', isolated === 'isolate', isolated, page);
  await offer.getByRole('button', { name: 'Offer to do this' }).click();
  await status('Offer sent');
  const row = page.locator('li.task').first();
  await row.waitFor({ timeout: 10000 });
  const id = await row.getAttribute('data-task');
  const offered = await task(id, buyerKey);
  await check('the offer answers the WANTED job: the person is the agent, the buyer owns it',
    offered.task?.status === 'offered' && offered.task?.roles?.agent === personKey && offered.task?.roles?.buyer === buyerKey, offered.task);
  const accept = offered.next?.find((template) => template.kind === 1101);
  const accepted = await post(sign(buyer, accept));
  await check('the buyer signs the ACCEPT template (nostr-tools)', accepted.status === 200, accepted.body);

  await page.getByRole('button', { name: 'Refresh' }).click();
  const deliver = page.locator(`li.task[data-task="${id}"] .template[data-kind="1102"]`);
  await deliver.waitFor({ timeout: 10000 });
  const poem = Buffer.from('Oito versos, traduzidos.\n');
  await deliver.getByLabel('Note').fill('Translated.');
  await deliver.getByLabel('File').setInputFiles({ name: 'poem.txt', mimeType: 'text/plain', buffer: poem });
  await deliver.getByRole('button', { name: 'Deliver' }).click();
  await status('Delivered');
  const delivered = await task(id, buyerKey);
  await check('the DELIVER signed in the browser names the uploaded file',
    delivered.task?.status === 'delivered' && delivered.task?.deliver?.note === 'Translated.'
      && delivered.task?.artifact?.bytes === poem.length && delivered.task?.artifact?.type === 'text/plain'
      && delivered.task?.deliver?.url === `${hub.url}/ronin/api/v1/artifacts/${delivered.task?.artifact?.hash}`, delivered.task);
  const complete = delivered.next?.find((template) => template.kind === 1103);
  const completed = await post(sign(buyer, complete));
  const paidTemplate = (await task(id, buyerKey)).next?.find((template) => template.kind === 1105);
  const paid = await post(sign(buyer, paidTemplate));
  await check('the buyer completes and records payment', completed.status === 200 && paid.status === 200, { completed: completed.body, paid: paid.body });

  await page.getByRole('button', { name: 'Refresh' }).click();
  const acknowledge = page.locator(`li.task[data-task="${id}"]`).getByRole('button', { name: 'Acknowledge payment of 3 USDC' });
  await acknowledge.waitFor({ timeout: 10000 });
  await acknowledge.click();
  await status('Payment acknowledged');
  const settled = await task(id, personKey);
  await check('the RECEIVED signed in the browser settles the task',
    settled.task?.settlement?.state === 'received' && settled.task?.settlement?.received, settled.task?.settlement);
  const leaked = sent.filter((line) => line.includes(secret));
  await check('no request of the page carried the secret key', leaked.length === 0 && sent.length > 5, leaked);
  return hub;
}
