// Scenarios j and k of the browser tests (browser.mjs runs them): an MCP SDK's OAuth client
// that identifies itself with a Client ID Metadata Document (CIMD) instead of registering.
// The document is served over https on loopback with a certificate of a throwaway CA made for
// the scenario (tests/peers/python_cimd_client.py make-ca, Python `cryptography`); the hub runs
// with `--outbound-allow-private --outbound-ca-file <that CA>` (docs/decisions.md 420) and
// fetches it. A person approves in headless Chromium; the consent screen and /you/apps show the
// document's host next to the app's name (decision 424).
//   j. the Python SDK (`client_metadata_url`; python_cimd_client.py serves the document and
//      checks token, tools/call and refresh; its checks count here);
//   k. the TypeScript SDK (`clientMetadataUrl` of its OAuthClientProvider; the document is
//      served by this process's https server): token, tools/call, refresh.

import { spawn, spawnSync } from 'node:child_process';
import { createServer as createHttps } from 'node:https';
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** Makes the scenario's CA and 127.0.0.1 certificate; starts a hub that trusts the CA. */
async function trustingHub(name, h) {
  const dir = mkdtempSync(join(h.work, `${name}-ca-`));
  const made = spawnSync(h.python, [join(h.peersDir, 'python_cimd_client.py'), 'make-ca', dir], { encoding: 'utf8' });
  await h.check('a throwaway CA and its 127.0.0.1 certificate were made', made.status === 0, made.stderr);
  const hub = (h.current.hub = await h.startHub(name, {
    args: ['--outbound-allow-private', '--outbound-ca-file', join(dir, 'ca.pem')],
  }));
  return { hub, dir };
}

/** A signed-in person's page on `hub`. */
async function personPage(browser, hub, who, h) {
  const context = await h.openContext(browser);
  const page = (h.current.page = await context.newPage());
  await page.goto(`${hub.url}/signup`);
  await h.signUp(page, who, h.newEmail(who.toLowerCase()));
  return page;
}

/** The consent screen's and /you/apps' words about the app and its document's host. */
async function showsTheDocumentHost(page, hub, name, documentUrl, h) {
  const host = new URL(documentUrl).host;
  await h.expectPage(page, 'the consent screen names the app and the host of its document', 'Connect an app',
    [name, `It describes itself in a document on ${host}.`]);
  return host;
}

/** j. The Python SDK with `client_metadata_url`, approved in Chromium. */
export async function cimdPython(browser, h) {
  const { hub, dir } = await trustingHub('cimd-py', h);
  const page = await personPage(browser, hub, 'Ada', h);
  const child = spawn(h.python, [join(h.peersDir, 'python_cimd_client.py')], {
    env: { ...process.env, KD_HUB_URL: hub.url, KD_CIMD_DIR: dir },
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
  const documentUrl = /^DOCUMENT (\S+)$/m.exec(out)?.[1] ?? '';
  await h.check('the SDK sends the person to /oauth/authorize with the document URL as client_id, no registration',
    Boolean(url) && url.startsWith(`${hub.url}/oauth/authorize?`)
      && new URL(url).searchParams.get('client_id') === documentUrl && documentUrl.startsWith('https://127.0.0.1:'), out);
  let host = '';
  if (url) {
    await page.goto(url);
    host = await showsTheDocumentHost(page, hub, 'KarmaDue CIMD peer', documentUrl, h);
    const callback = page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/, { timeout: 20000 });
    await page.getByRole('button', { name: 'Approve' }).click();
    await callback.catch(() => {});
    await h.check('Approve sends the browser to the app\'s loopback callback with a code',
      /\/callback\?.*code=kdoc_/.test(page.url()), page.url(), page);
  }
  const code = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('timeout'), 180000))]);
  if (code === 'timeout') child.kill('SIGKILL');
  console.log(out.split('\n').filter((line) => line && !/^(AUTHORIZE|DOCUMENT) /.test(line)).map((line) => `   py ${line}`).join('\n'));
  const summary = /^(\d+) passed, (\d+) failed$/m.exec(out);
  if (summary) h.tally(Number(summary[1]), Number(summary[2]));
  await h.check('the Python CIMD peer finished with its summary and exit 0', Boolean(summary) && code === 0, `exit ${code}`);
  await page.goto(`${hub.url}/you/apps`);
  await h.expectPage(page, '/you/apps lists the app with its document\'s host', 'Connected apps',
    [`KarmaDue CIMD peer (described on ${host})`]);
  return hub;
}

/** The TypeScript SDK's OAuthClientProvider, in memory, named `name`; with a `documentUrl` it
 *  offers that `clientMetadataUrl` (no registration). `redirectToAuthorization` keeps the URL
 *  for the browser to open. Scenario f (browser.mjs) uses it too. */
export function memoryProvider(redirect, { name, documentUrl } = {}) {
  const store = { authorizeUrl: null };
  return {
    store,
    get redirectUrl() { return redirect; },
    get clientMetadataUrl() { return documentUrl; },
    get clientMetadata() {
      return {
        client_name: name,
        redirect_uris: [redirect],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      };
    },
    clientInformation() { return store.client; },
    saveClientInformation(client) { store.client = client; },
    tokens() { return store.tokens; },
    saveTokens(tokens) { store.tokens = tokens; },
    redirectToAuthorization(url) { store.authorizeUrl = url; },
    saveCodeVerifier(verifier) { store.verifier = verifier; },
    codeVerifier() { return store.verifier; },
  };
}

/** Starts `server` on a free loopback port; answers the port. */
async function listen(server) {
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server.address().port;
}

/** k. The TypeScript SDK with `clientMetadataUrl`, approved in Chromium. */
export async function cimdTypescript(browser, h) {
  const { hub, dir } = await trustingHub('cimd-ts', h);
  const page = await personPage(browser, hub, 'Emmy', h);
  const back = {};
  const callback = createServer((request, response) => {
    const landed = new URL(request.url, 'http://127.0.0.1');
    if (landed.pathname === '/callback') back.code = landed.searchParams.get('code');
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end('<!doctype html><title>Connected</title><main><h1>Connected</h1></main>');
  });
  const redirect = `http://127.0.0.1:${await listen(callback)}/callback`;
  let fetched = 0;
  let documentUrl = '';
  const documentServer = createHttps({ cert: readFileSync(join(dir, 'leaf.pem')), key: readFileSync(join(dir, 'leaf.key')) },
    (request, response) => {
      fetched += 1;
      response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=600' });
      response.end(JSON.stringify({
        client_id: documentUrl, client_name: 'KarmaDue TS CIMD peer', redirect_uris: [redirect], token_endpoint_auth_method: 'none',
      }));
    });
  h.current.servers = [callback, documentServer];
  documentUrl = `https://127.0.0.1:${await listen(documentServer)}/oauth/client.json`;
  const provider = memoryProvider(redirect, { name: 'KarmaDue TS CIMD peer', documentUrl });
  const url = new URL(`${hub.url}/functions/v1/mcp/connector`);
  let refused = null;
  try {
    await new Client({ name: 'karmadue-ts-cimd-peer', version: '1.0.0' })
      .connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  } catch (error) {
    refused = error;
  }
  await h.check('the SDK discovers and asks for authorization with the document URL as client_id (no registration)',
    refused instanceof UnauthorizedError && provider.store.client?.client_id === documentUrl
      && provider.store.authorizeUrl?.searchParams.get('client_id') === documentUrl, `${refused} ${provider.store.authorizeUrl}`);
  await page.goto(provider.store.authorizeUrl.toString());
  const host = await showsTheDocumentHost(page, hub, 'KarmaDue TS CIMD peer', documentUrl, h);
  await h.check('the hub fetched the document over https', fetched >= 1, fetched);
  await h.submit(page, page.getByRole('button', { name: 'Approve' }));
  await h.check('Approve redirects to the loopback callback with a code', back.code?.startsWith('kdoc_'), back, page);
  const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await transport.finishAuth(back.code);
  await h.check('the SDK exchanged the code for tokens', provider.store.tokens?.access_token?.startsWith('kdoa_'), provider.store.tokens);
  const client = new Client({ name: 'karmadue-ts-cimd-peer', version: '1.0.0' });
  await client.connect(transport);
  const me = (await client.callTool({ name: 'verify_agent', arguments: {} })).structuredContent;
  await h.check('tools/call verify_agent: the connection\'s app is the document\'s name',
    me?.ok === true && me?.data?.current?.connection?.app === 'KarmaDue TS CIMD peer', me);
  await client.close();
  const metadata = await (await fetch(`${hub.url}/.well-known/oauth-authorization-server`)).json();
  const refreshed = await fetch(metadata.token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: provider.store.tokens.refresh_token, client_id: documentUrl }),
  });
  const pair = await refreshed.json();
  await h.check('refresh with the URL client_id gives a new pair',
    refreshed.status === 200 && pair.refresh_token && pair.refresh_token !== provider.store.tokens.refresh_token, pair);
  const listed = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${pair.access_token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  await h.check('the new access token works', listed.status === 200, listed.status);
  await page.goto(`${hub.url}/you/apps`);
  await h.expectPage(page, '/you/apps lists the app with its document\'s host', 'Connected apps',
    [`KarmaDue TS CIMD peer (described on ${host})`]);
  callback.close();
  documentServer.close();
  return hub;
}
