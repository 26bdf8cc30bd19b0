// Peer test: the official MCP TypeScript SDK (@modelcontextprotocol/sdk 1.x, 2025-11-25 era)
// against a KarmaDue hub.
//
//   KD_HUB_URL=http://127.0.0.1:PORT node tests/peers/ts_sdk_client.mjs
//
// It connects with Client + StreamableHTTPClientTransport, lists the tools, calls
// register_challenge and verify_agent, registers an agent with its own Ed25519 key, and makes
// a SIGNED write (rename_agent). Signing is done by a custom `fetch` given to the transport: it
// reads the outgoing JSON-RPC body and adds the kd-mcp-v1 headers computed over
// `params.arguments`. Nothing here uses the hub's code: the canonical printer below is written
// from the spec text ("Signing a write (kd-mcp-v1)").
//
// Prints one line per check and, last, exactly `N passed, M failed`; exits 1 on any failure.

import { createHash, generateKeyPairSync, randomBytes, randomUUID, sign } from 'node:crypto';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const BASE = (process.env.KD_HUB_URL || '').replace(/\/+$/, '');
if (!BASE) {
  console.error('KD_HUB_URL is not set (e.g. http://127.0.0.1:8787)');
  process.exit(2);
}
const MCP_URL = `${BASE}/functions/v1/mcp`;

let passed = 0;
let failed = 0;

function check(name, condition, detail) {
  if (condition) {
    passed += 1;
    console.log(`ok   ${name}`);
  } else {
    failed += 1;
    console.log(`FAIL ${name}${detail === undefined ? '' : `: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`}`);
  }
}

// ---- kd-mcp-v1, written from the spec ---------------------------------------------------

/** PostgreSQL jsonb::text printing: keys by UTF-8 byte length, then bytewise; ", " and ": ". */
export function canonical(value) {
  if (Array.isArray(value)) {
    return `[${value.map(canonical).join(', ')}]`;
  }
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort((a, b) => {
      const ab = Buffer.from(a, 'utf8');
      const bb = Buffer.from(b, 'utf8');
      return ab.length - bb.length || Buffer.compare(ab, bb);
    });
    return `{${keys.map((key) => `${JSON.stringify(key)}: ${canonical(value[key])}`).join(', ')}}`;
  }
  // JSON.stringify escapes only quote, backslash and control characters and keeps non-ASCII
  // raw, as jsonb does.
  return JSON.stringify(value);
}

function b64url(bytes) {
  return Buffer.from(bytes).toString('base64url');
}

function textToSign(tool, agentId, ts, nonce, args) {
  const hash = createHash('sha256').update(canonical(args), 'utf8').digest('hex');
  return ['kd-mcp-v1', tool, agentId, String(ts), nonce, hash].join('\n');
}

function freshNonce() {
  return `n-${randomBytes(12).toString('hex')}`;
}

// The signer the custom fetch consults. When `signer.key` is set, every tools/call is signed.
const signer = {
  key: null, // node KeyObject (Ed25519 private key)
  agentId: null,
  fixedNonce: null, // reuse this nonce (to provoke replay)
  tamper: false, // sign, then change the arguments (to provoke bad_signature)
  lastHeaders: null,
};

async function signingFetch(url, init = {}) {
  if (signer.key && init.method === 'POST' && typeof init.body === 'string') {
    let message;
    try {
      message = JSON.parse(init.body);
    } catch {
      message = null;
    }
    if (message && message.method === 'tools/call') {
      const tool = message.params.name;
      const args = message.params.arguments ?? {};
      const ts = Math.floor(Date.now() / 1000);
      const nonce = signer.fixedNonce ?? freshNonce();
      const signature = b64url(sign(null, Buffer.from(textToSign(tool, signer.agentId, ts, nonce, args), 'utf8'), signer.key));
      const headers = new Headers(init.headers);
      headers.set('x-kd-signature', signature);
      headers.set('x-kd-timestamp', String(ts));
      headers.set('x-kd-nonce', nonce);
      signer.lastHeaders = { signature, ts, nonce };
      let body = init.body;
      if (signer.tamper) {
        message.params.arguments = { ...args, name: `${args.name}-tampered` };
        body = JSON.stringify(message);
      }
      return fetch(url, { ...init, headers, body });
    }
  }
  return fetch(url, init);
}

// ---- the test ----------------------------------------------------------------------------

async function main() {
  const client = new Client({ name: 'karmadue-ts-sdk-peer', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), { fetch: signingFetch });
  await client.connect(transport);
  const info = client.getServerVersion();
  check('initialize: serverInfo.name is karmadue', info?.name === 'karmadue', info);
  check('initialize: tools capability', !!client.getServerCapabilities()?.tools, client.getServerCapabilities());
  check('initialize: a stateless session id (kds_, visible ASCII) that later calls echo', typeof transport.sessionId === 'string' && /^kds_[\x21-\x7e]+$/.test(transport.sessionId), transport.sessionId);

  const ping = await client.ping();
  check('ping returns {}', ping && Object.keys(ping).length === 0, ping);

  // tools/list
  const { tools } = await client.listTools();
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  for (const name of ['register_challenge', 'register_agent', 'get_signing_payload', 'verify_agent', 'rename_agent']) {
    check(`tools/list has ${name}`, byName.has(name));
  }
  const hints = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'];
  const unannotated = tools.filter(
    (tool) => !tool.description || tool.inputSchema?.type !== 'object' || !tool.annotations?.title || hints.some((hint) => typeof tool.annotations?.[hint] !== 'boolean'),
  );
  check('every tool has a description, an object inputSchema and all five annotations', unannotated.length === 0, unannotated.map((tool) => tool.name));
  check('register_challenge is readOnlyHint', byName.get('register_challenge')?.annotations?.readOnlyHint === true);
  check('register_agent is a write (readOnlyHint false)', byName.get('register_agent')?.annotations?.readOnlyHint === false);
  check('rename_agent is a write (readOnlyHint false)', byName.get('rename_agent')?.annotations?.readOnlyHint === false);
  check('no conformance fixtures on the plain hub', !tools.some((tool) => tool.name.startsWith('test_')));

  // register_challenge
  const challenge = await client.callTool({ name: 'register_challenge', arguments: {} });
  const challengeData = challenge.structuredContent?.data;
  check(
    'register_challenge: ok with challenge_id and payload',
    challenge.isError === false && challenge.structuredContent?.ok === true && typeof challengeData?.challenge_id === 'string' && typeof challengeData?.payload === 'string',
    challenge.structuredContent,
  );
  check('register_challenge: request_id present', typeof challenge.structuredContent?.request_id === 'string');
  check(
    'register_challenge: text content mirrors structuredContent',
    challenge.content?.[0]?.type === 'text' && JSON.parse(challenge.content[0].text).ok === true,
  );

  // verify_agent on an unknown id
  const unknown = await client.callTool({ name: 'verify_agent', arguments: { agent_id: randomUUID() } });
  check(
    'verify_agent(unknown id): isError with error.code not_found',
    unknown.isError === true && unknown.structuredContent?.ok === false && unknown.structuredContent?.error?.code === 'not_found',
    unknown.structuredContent,
  );

  // unknown tool: a JSON-RPC error, not a result
  let unknownToolCode = null;
  try {
    await client.callTool({ name: 'no_such_tool', arguments: {} });
  } catch (error) {
    unknownToolCode = error?.code;
  }
  check('unknown tool: JSON-RPC error -32602', unknownToolCode === -32602, unknownToolCode);

  // register_agent with our own key
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const publicKeyB64 = publicKey.export({ format: 'jwk' }).x; // raw 32 bytes, base64url
  const challengeSignature = b64url(sign(null, Buffer.from(challengeData.payload, 'utf8'), privateKey));
  const name = `ts-peer-${randomBytes(5).toString('hex')}`;
  const registered = await client.callTool({
    name: 'register_agent',
    arguments: { name, platform: 'mcp-typescript-sdk', public_key: publicKeyB64, challenge_id: challengeData.challenge_id, signature: challengeSignature },
  });
  const agent = registered.structuredContent?.data;
  check('register_agent: ok with agent_id and a passport', registered.structuredContent?.ok === true && typeof agent?.agent_id === 'string' && !!agent?.passport, registered.structuredContent);
  check('register_agent: passport names our key', agent?.passport?.public_key === publicKeyB64, agent?.passport);

  // rename_agent without a signature
  const newName = `ts-renamed-${randomBytes(5).toString('hex')}`;
  const unsigned = await client.callTool({ name: 'rename_agent', arguments: { agent_id: agent.agent_id, name: newName } });
  check('rename_agent unsigned: signature_required', unsigned.isError === true && unsigned.structuredContent?.error?.code === 'signature_required', unsigned.structuredContent);

  // a server-side cross-check of our canonical printer: get_signing_payload shows the text
  const probe = { ts: Math.floor(Date.now() / 1000), nonce: freshNonce(), args: { agent_id: agent.agent_id, name: `${newName} café` } };
  const payload = await client.callTool({
    name: 'get_signing_payload',
    arguments: { tool: 'rename_agent', agent_id: agent.agent_id, arguments: probe.args, timestamp: probe.ts, nonce: probe.nonce },
  });
  const serverText = payload.structuredContent?.data?.text;
  const ourText = textToSign('rename_agent', agent.agent_id, probe.ts, probe.nonce, probe.args);
  check('get_signing_payload text equals our kd-mcp-v1 text (non-ASCII included)', serverText === ourText, { serverText, ourText, data: payload.structuredContent?.data });

  // the signed write
  signer.key = privateKey;
  signer.agentId = agent.agent_id;
  const renamed = await client.callTool({ name: 'rename_agent', arguments: { agent_id: agent.agent_id, name: newName } });
  check('rename_agent signed: ok, name changed', renamed.isError === false && renamed.structuredContent?.ok === true && renamed.structuredContent?.data?.name === newName, renamed.structuredContent);

  // the same nonce again: replay
  signer.fixedNonce = signer.lastHeaders.nonce;
  const replay = await client.callTool({ name: 'rename_agent', arguments: { agent_id: agent.agent_id, name: `${newName}-again` } });
  check('rename_agent with a spent nonce: replay', replay.isError === true && replay.structuredContent?.error?.code === 'replay', replay.structuredContent);
  signer.fixedNonce = null;

  // arguments changed after signing: bad_signature
  signer.tamper = true;
  const tampered = await client.callTool({ name: 'rename_agent', arguments: { agent_id: agent.agent_id, name: `${newName}-x` } });
  check('rename_agent with changed arguments: bad_signature', tampered.isError === true && tampered.structuredContent?.error?.code === 'bad_signature', tampered.structuredContent);
  signer.tamper = false;

  // the rename is visible to a reader
  signer.key = null;
  const verified = await client.callTool({ name: 'verify_agent', arguments: { agent_id: agent.agent_id } });
  check('verify_agent(after rename): ok', verified.structuredContent?.ok === true, verified.structuredContent);
  check('verify_agent(after rename): passport signature valid', verified.structuredContent?.data?.passport_signature_valid === true, verified.structuredContent?.data);

  await client.close();
}

try {
  await main();
} catch (error) {
  failed += 1;
  console.log(`FAIL unexpected error: ${error?.stack || error}`);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
