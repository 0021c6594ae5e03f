/**
 * What building one upstream chat body costs with the shipped tool offer (issue 39): the shipped
 * config's four tool servers are started over stdio and listed (their 17 tools, 12 KB of JSON with
 * non-ASCII characters in their descriptions), and a first call's messages (the preamble and a
 * user message) are serialized with them, as `UpstreamBody.serialize` does it, against the way it
 * was done before: the cached tool JSON concatenated into one string, which undici then encoded
 * to UTF-8 (`Buffer.from`) on every call — a two-byte string, because of those characters.
 * Printed: µs per body for each, median of 7 rounds of 20,000 bodies, and the ratio.
 *
 *   npm run build && npx tsx bench/upstream-body.ts
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { toFunctionTool } from '../gateway/chat/tool-schemas.js';
import { UpstreamBody } from '../gateway/chat/upstream-body.js';
import { parseConfig } from '../gateway/config.js';
import type { UpstreamChatParams } from '../gateway/chat/upstream-client.js';
import type { ToolInfo } from '../gateway/tools/types.js';

const REPO_ROOT = resolve(import.meta.dirname, '..');
const ROUNDS = 7;
const BODIES = 20_000;

/** The shipped servers' tools, listed over MCP as the gateway lists them. */
async function shippedTools(): Promise<ToolInfo[]> {
  const shipped = JSON.parse(readFileSync(resolve(REPO_ROOT, 'config/gateway.json'), 'utf8')) as {
    mcpServers: Record<string, { command: string; args: string[] }>;
  };
  const infos: ToolInfo[] = [];
  for (const [name, server] of Object.entries(shipped.mcpServers)) {
    const client = new Client({ name: 'bench-upstream-body', version: '1' });
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
    await client.connect(new StdioClientTransport({ command: process.execPath, args: server.args, cwd: REPO_ROOT, env, stderr: 'ignore' }));
    const { tools } = await client.listTools();
    for (const tool of tools) {
      infos.push({ name: tool.name, description: tool.description ?? '', inputSchema: tool.inputSchema, params: [], server: name });
    }
    await client.close();
  }
  return infos;
}

/** The body as it was built before: one string with the cached tool JSON, encoded per call. */
function before(modelJson: string, toolsJson: string, params: UpstreamChatParams): Buffer {
  let body = `{"model":${modelJson},"stream":false,"messages":${JSON.stringify(params.messages)}`;
  for (const key in params) {
    if (key === 'messages' || key === 'tools' || key === 'parallel_tool_calls') continue;
    const value = params[key as keyof UpstreamChatParams];
    if (value !== undefined) body += `,"${key}":${JSON.stringify(value)}`;
  }
  body += `,"tools":${toolsJson},"parallel_tool_calls":true}`;
  return Buffer.from(body); // what undici's Request does with a string body
}

function timeOf(build: () => Buffer): number {
  let bytes = 0;
  const t0 = performance.now();
  for (let i = 0; i < BODIES; i++) bytes += build().length;
  const us = ((performance.now() - t0) * 1000) / BODIES;
  if (bytes === 0) throw new Error('no body built');
  return us;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const infos = await shippedTools();
const tools = infos.map(toFunctionTool);
const toolsJson = JSON.stringify(tools);
const { chat } = parseConfig(JSON.parse(readFileSync(resolve(REPO_ROOT, 'config/gateway.json'), 'utf8')), {});
const params: UpstreamChatParams = {
  messages: [
    { role: 'system', content: chat.preamble.replaceAll('{date}', '2026-11-27') },
    { role: 'user', content: 'Say hello.' },
  ],
  max_tokens: 16,
  tools,
  tool_choice: 'auto',
  parallel_tool_calls: true,
};
const modelJson = JSON.stringify('qwen3:32b');
const bodies = new UpstreamBody(modelJson);
const now = bodies.serialize(params, { stream: false });
if (!now.equals(before(modelJson, toolsJson, params))) throw new Error('the two ways build different bodies');

const runs = { before: [] as number[], after: [] as number[] };
for (let round = 0; round < ROUNDS; round++) {
  runs.before.push(timeOf(() => before(modelJson, toolsJson, params)));
  runs.after.push(timeOf(() => bodies.serialize(params, { stream: false })));
}
console.log(`${tools.length} tools, ${Buffer.byteLength(toolsJson)} bytes of JSON; a body of ${now.length} bytes`);
console.log(`before (one string, encoded per call): ${median(runs.before).toFixed(2)} µs per body`);
console.log(`after (tool JSON as cached bytes):     ${median(runs.after).toFixed(2)} µs per body`);
console.log(`after / before: ${(median(runs.after) / median(runs.before)).toFixed(2)}× (median of ${ROUNDS} rounds of ${BODIES})`);
