/**
 * Every snippet of README.md and docs/ runs as written (docs/ARCHITECTURE.md, "Doc tests"): each
 * block marked `<!-- doc-test: run id=… -->` runs against the built gateway `npm start` runs (the
 * shipped config and tool servers, a scripted upstream as its model server through
 * `UPSTREAM_BASE_URL`), its placeholders filled as the page tells a reader; `config` blocks go
 * through parseConfig; the `ts` programs type-check. Each runnable block has a scenario here: the
 * gateway it needs (free mode, or credits on with a funded key), what the model answers, the
 * variables the page names, and what its output must show. A block that drifts from the code fails.
 * The payment snippets run on docs/payments.md's own recipe: `scripts/try-payments.ts` (a Hardhat
 * chain, an EIP-3009 token, a facilitator) started as the page says, and the built gateway started
 * with the variables it prints.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { privateKeyToAccount } from 'viem/accounts';
import { parseConfig } from '../../gateway/config.js';
import { startScriptedUpstream, type ScriptedUpstream, type Turn } from '../fixtures/upstream/scripted-upstream.js';
import { ADMIN_TOKEN, ALICE, BOB, PUBLIC_URL, mintVerifiedKey } from '../helpers/accounts.js';
import { WALLET_CHECKSUMMED } from '../helpers/gateway.js';
import { spawnBuiltGateway, waitForLogLine, type BuiltGateway } from '../gateway/spawn-built-gateway.js';
import { allBlocks, markerProblems, programOf, ROOT, type DocBlock } from './doc-blocks.js';
import { runSnippet, typecheck, withPlaceholders, type RunResult } from './doc-runner.js';

type Gateway = BuiltGateway & { url: string };

/** Hardhat's account 1 key (public, never holds value): the reader's PRIVATE_KEY for the key-minting script. */
const BOB_PRIVATE_KEY = '0x59c6995e998f97a5a0044966f0945bc28fdc8b4ffba55e6575c65a3fb3f41eb1';

interface Scenario {
  /**
   * `free`: FREE_MODE=true; `paid`: credits on, ALICE funded, SWITCHYARD_KEY a key of hers;
   * `payments`: the try-payments recipe's gateway, its payer's PRIVATE_KEY and a key of the payer (no credits).
   */
  gateway: 'free' | 'paid' | 'payments';
  /** What the model answers, in order (then the scripted upstream's default, "ok"). */
  turns?: Turn[];
  env?: (gateway: Gateway) => Record<string, string>;
  files?: Record<string, string>;
  check(result: RunResult, gateway: Gateway): void | Promise<void>;
}

const timeCall = (timezone: string): Turn => ({
  toolCalls: [{ id: 'call_time00000001', name: 'get_time', arguments: JSON.stringify({ timezone }) }],
});
const LIDO = 'Lido is a liquid staking protocol; in Tokyo it is 21:00.';
const firstRequestTurns = (): Turn[] => [timeCall('Asia/Tokyo'), { text: LIDO }];

let upstream: ScriptedUpstream;
let free: Gateway;
let paid: Gateway;
let aliceKey: string;
let recipe: { child: ChildProcess; dir: string; env: Record<string, string> };
let payments: Gateway;
let payerKey: string;

/**
 * The built gateway with `env`, once it listens. Three start at once here, each with the four shipped
 * tool servers beside a Hardhat node: on a loaded 2-core machine that takes longer than the helper's 30 s.
 */
async function startGateway(env: Record<string, string>): Promise<Gateway> {
  const gateway = spawnBuiltGateway(env);
  try {
    const line = await waitForLogLine(gateway, (l) => l.msg === 'gateway listening', 150_000);
    return Object.assign(gateway, { url: String(line.url) });
  } catch (err) {
    await gateway.cleanup();
    throw err;
  }
}

/** `npx tsx scripts/try-payments.ts`, as docs/payments.md runs it: resolves once it printed "ready", with the variables it printed. */
async function startRecipe(): Promise<typeof recipe> {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-try-payments-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/try-payments.ts', '--dir', dir], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.setEncoding('utf8');
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: string) => {
      out += chunk;
      if (out.includes('\nready:')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`scripts/try-payments.ts exited (${code}):\n${out}`)));
  });
  const exported = /^export (.+)$/m.exec(out);
  assert.ok(exported, `the recipe printed no export line:\n${out}`);
  const env = Object.fromEntries(exported[1].split(' ').map((pair) => pair.split('=', 2) as [string, string]));
  return { child, dir, env };
}

async function admin(gateway: Gateway, path: string, body?: unknown): Promise<Record<string, any>> {
  const res = await fetch(`${gateway.url}${path}`, {
    method: body ? 'POST' : 'GET',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
    body: body ? JSON.stringify(body) : undefined,
  });
  assert.equal(res.status, 200, path);
  return (await res.json()) as Record<string, any>;
}

const scenarios: Record<string, Scenario> = {
  'first-request': {
    gateway: 'free',
    turns: firstRequestTurns(),
    check({ stdout }) {
      assert.ok(stdout.startsWith(LIDO), stdout);
      assert.match(stdout, /tool: 'get_time'/);
      assert.match(stdout, /ok: true/);
      const toolResult = upstream.requests.at(-1)!.body.messages.at(-1)!;
      assert.equal(toolResult.role, 'tool', 'the gateway ran the tool round');
      assert.match(String(toolResult.content), /Asia\/Tokyo/);
    },
  },
  'first-curls': {
    gateway: 'free',
    check({ stdout }) {
      assert.match(stdout, /"status":"ok"/);
      assert.match(stdout, /"id":"svc-32b-conductor"/);
      assert.match(stdout, /"name":"get_time"/);
      assert.match(stdout, /\{"ok":true,"tool":"get_time","result":\{"timezone":"Asia\/Kolkata"/);
      assert.match(stdout, /"object":"chat\.completion\.chunk"/);
      assert.match(stdout, /data: \[DONE\]/);
      assert.match(stdout, /"object":"response".*"status":"completed"/);
    },
  },
  'mint-key': {
    gateway: 'paid',
    env: () => ({ PRIVATE_KEY: BOB_PRIVATE_KEY }),
    async check({ stdout }, gateway) {
      const printed = new RegExp(`^export SWITCHYARD_KEY=(sy_[A-Za-z0-9_-]{43})  # for ${BOB.address}\\n$`).exec(stdout);
      assert.ok(printed, `the script prints the key: ${stdout}`);
      const res = await fetch(`${gateway.url}/auth/api-keys`, {
        headers: { 'x-wallet-address': BOB.address, authorization: `Bearer ${printed[1]}` },
      });
      assert.equal(res.status, 200, 'the printed key serves its address');
      const other = await fetch(`${gateway.url}/auth/api-keys`, {
        headers: { 'x-wallet-address': ALICE.address, authorization: `Bearer ${printed[1]}` },
      });
      assert.equal(other.status, 403, 'and only its address');
    },
  },
  'admin-grant': {
    gateway: 'paid',
    env: () => ({ W: BOB.address, ADMIN_TOKEN }),
    async check({ stdout }, gateway) {
      assert.match(stdout, /"credits":100/);
      assert.equal((await admin(gateway, `/admin/credits/${BOB.address}`)).credits, 100);
    },
  },
  'credits-cli': {
    gateway: 'paid',
    env: (gateway) => ({ ADMIN_TOKEN, PORT: new URL(gateway.url).port, DATA_DIR: gateway.dataDir }),
    async check({ stdout }, gateway) {
      assert.match(stdout, /"granted":100/);
      assert.match(stdout, /"credits":100\b/);
      assert.equal((await admin(gateway, `/admin/credits/${WALLET_CHECKSUMMED}`)).credits, 100, 'granted through the admin API');
    },
  },
  'client-functions': {
    gateway: 'paid',
    files: { 'wallet.txt': `${WALLET_CHECKSUMMED}\n` },
    turns: [
      { toolCalls: [{ id: 'call_read00000001', name: 'read_local_file', arguments: '{"path":"wallet.txt"}' }] },
      timeCall('UTC'),
      { text: 'That wallet is 0x5290…9EE7.' },
    ],
    check({ stdout }) {
      assert.equal(stdout, 'That wallet is 0x5290…9EE7.');
      const second = upstream.requests[1].body.messages;
      const fileResult = second.find((m) => m.role === 'tool');
      assert.equal(fileResult?.content, `${WALLET_CHECKSUMMED}\n`, 'the local function ran and its result went up');
      assert.equal(upstream.requests.at(-1)!.body.messages.at(-1)!.role, 'tool', "the gateway's own round ran in the second request");
    },
  },
  'structured-output': {
    gateway: 'free',
    turns: [...firstRequestTurns(), { text: '{"city":"Oslo","population":717710}' }],
    check({ stdout }) {
      assert.match(stdout, /\{ city: 'Oslo', population: 717710 \}\n$/);
      assert.equal(upstream.requests.length, 3, 'the JSON answer validated: no corrective call');
    },
  },
  responses: {
    gateway: 'free',
    turns: [...firstRequestTurns(), { text: 'It holds 1.5 ETH.' }, { text: 'About 4,500 USD.' }, { text: 'Gas on Base is 0.01 gwei.' }],
    check({ stdout }) {
      assert.match(stdout, /It holds 1\.5 ETH\.\n/);
      assert.ok(stdout.endsWith('Gas on Base is 0.01 gwei.'), stdout);
      const continued = upstream.requests.at(-2)!.body.messages.map((m) => m.content);
      assert.ok(continued.includes('It holds 1.5 ETH.'), 'previous_response_id carried the first answer');
    },
  },
  'x402-pay': {
    gateway: 'payments',
    turns: [{ text: 'Paid, and answered.' }],
    check({ stdout }) {
      assert.match(stdout, /^Paid, and answered\.\n/);
      const [, credits, deposited, spent] = /credits: (\d+),\s+total_deposited: (\d+),\s+total_spent: (\d+)/.exec(stdout) ?? [];
      assert.ok(Number(deposited) >= 100, `a top-up of 100 credits or more: ${stdout}`);
      assert.ok(Number(spent) >= 1 && Number(credits) === Number(deposited) - Number(spent), stdout);
    },
  },
  deposit: {
    gateway: 'payments',
    check({ stdout }) {
      assert.match(stdout, /^500 credits for 0x[0-9a-f]{64}\n$/, '5 TUSD at 0.01 TUSD a credit');
    },
  },
  messages: {
    gateway: 'free',
    turns: [timeCall('UTC'), { text: 'It holds 1.5 ETH.' }, { text: 'Gas on Base is 0.01 gwei.' }],
    check({ stdout }) {
      assert.match(stdout, /^\[ 'mcp_tool_use', 'mcp_tool_result', 'text' \]\n/);
      assert.ok(stdout.endsWith('Gas on Base is 0.01 gwei.'), stdout);
    },
  },
  'mcp-client': {
    gateway: 'paid',
    check({ stdout }) {
      assert.match(stdout, /^\d+ \{\n? *timezone: 'Asia\/Kolkata'/);
      assert.match(stdout, /utc_offset: '\+05:30'/);
      assert.match(stdout, / undefined\n$/, 'isError is absent on success');
    },
  },
};

const blocks = allBlocks();
const runnable = blocks.filter((b): b is DocBlock & { marker: { kind: 'run'; id: string } } => b.marker?.kind === 'run');

before(async () => {
  upstream = await startScriptedUpstream();
  const env = { UPSTREAM_BASE_URL: upstream.baseUrl, ADMIN_TOKEN, PUBLIC_URL };
  recipe = await startRecipe();
  const { SWITCHYARD_CONFIG, DATA_DIR, RPC_URL_LOCAL } = recipe.env;
  const started = await Promise.allSettled([
    startGateway({ ...env, FREE_MODE: 'true' }),
    startGateway({ ...env, FREE_MODE: 'false' }),
    startGateway({ ...env, SWITCHYARD_CONFIG, DATA_DIR, RPC_URL_LOCAL }),
  ]);
  // Those that started are stopped by `after` even when another did not.
  [free, paid, payments] = started.map((result) => (result.status === 'fulfilled' ? result.value : undefined)) as Gateway[];
  const failed = started.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  await admin(paid, '/admin/credits/grant', { address: ALICE.address, amount: 1000 });
  aliceKey = await mintVerifiedKey(paid, ALICE, 'doc-tests');
  payerKey = await mintVerifiedKey(payments, privateKeyToAccount(recipe.env.PRIVATE_KEY as `0x${string}`), 'doc-tests');
});
after(async () => {
  await Promise.all([free?.cleanup(), paid?.cleanup(), payments?.cleanup()]);
  if (recipe) {
    recipe.child.kill('SIGTERM'); // the recipe's Ctrl-C: it stops its chain and facilitator
    if (recipe.child.exitCode === null) await once(recipe.child, 'exit');
    rmSync(recipe.dir, { recursive: true, force: true });
  }
  await upstream?.close();
});

test('every block of README.md and docs/ says whether it runs, and the markers hold together', () => {
  assert.deepEqual(markerProblems(blocks), []);
  assert.ok(runnable.length >= 9, `only ${runnable.length} runnable blocks: is the marker still found?`);
});

test('every runnable block has a scenario here, and every scenario a block', () => {
  assert.deepEqual(runnable.map((b) => b.marker.id).sort(), Object.keys(scenarios).sort());
});

test('every config block is a config the gateway takes, placed in the shipped config/gateway.json', () => {
  const shipped = JSON.parse(readFileSync(join(ROOT, 'config/gateway.json'), 'utf8')) as Record<string, unknown>;
  const configs = blocks.filter((b) => b.marker?.kind === 'config');
  assert.ok(configs.length >= 4);
  for (const block of configs) {
    const { at } = block.marker as { at?: string };
    const text = withPlaceholders(block.code.trim().startsWith('"') ? `{${block.code}}` : block.code, {
      gatewayUrl: 'http://127.0.0.1:8080',
      wallet: WALLET_CHECKSUMMED,
    });
    const parsed = JSON.parse(text) as Record<string, unknown>;
    const fragment = at ? { [at]: parsed } : parsed;
    const merged = { ...shipped, ...fragment };
    if (fragment.mcpServers) merged.mcpServers = { ...(shipped.mcpServers as object), ...(fragment.mcpServers as object) };
    assert.doesNotThrow(() => parseConfig(merged, {}), `${block.file}:${block.line}`);
  }
});

test('every TypeScript snippet type-checks as a strict .mts module', async () => {
  const programs = Object.fromEntries(
    runnable.filter((b) => b.lang === 'ts').map((b) => [b.marker.id, programOf(blocks, b.marker.id).code]),
  );
  assert.equal(await typecheck(programs), '');
});

for (const block of runnable) {
  const { id } = block.marker;
  test(`${block.file}:${block.line} (${id}) runs as written`, async () => {
    const scenario = scenarios[id];
    assert.ok(scenario, `no scenario for ${id}`);
    const gateway = { free, paid, payments }[scenario.gateway];
    upstream.reset();
    upstream.script(...(scenario.turns ?? []));
    const { wallet, env: gatewayEnv } = {
      free: { wallet: WALLET_CHECKSUMMED, env: {} },
      paid: { wallet: ALICE.address, env: { SWITCHYARD_KEY: aliceKey } },
      payments: {
        wallet: privateKeyToAccount(recipe.env.PRIVATE_KEY as `0x${string}`).address,
        env: { SWITCHYARD_KEY: payerKey, PRIVATE_KEY: recipe.env.PRIVATE_KEY, RPC_URL_LOCAL: recipe.env.RPC_URL_LOCAL },
      },
    }[scenario.gateway];
    const env = { ...gatewayEnv, ...scenario.env?.(gateway) };
    const result = await runSnippet(block.lang, programOf(blocks, id).code, {
      gatewayUrl: gateway.url,
      wallet,
      env,
      files: scenario.files,
    });
    assert.equal(result.exitCode, 0, `${block.file}:${block.line} failed:\n${result.stderr}\n${result.stdout}`);
    await scenario.check(result, gateway);
  });
}

test("README's first request runs with credits on, charged to the key's wallet", async () => {
  upstream.reset();
  upstream.script(...firstRequestTurns());
  const before = (await admin(paid, `/admin/credits/${ALICE.address}`)).credits as number;
  const result = await runSnippet('ts', programOf(blocks, 'first-request').code, {
    gatewayUrl: paid.url,
    wallet: ALICE.address,
    env: { SWITCHYARD_KEY: aliceKey },
  });
  assert.equal(result.exitCode, 0, result.stderr);
  assert.ok(result.stdout.startsWith(LIDO));
  assert.equal((await admin(paid, `/admin/credits/${ALICE.address}`)).credits, before - 1, 'one credit for the chat');
});

test('a snippet that drifts from the gateway fails: README curls naming a tool that does not exist', async () => {
  const { code } = programOf(blocks, 'first-curls');
  assert.ok(code.includes('"tool":"get_time"'));
  const drifted = await runSnippet('sh', code.replace('"tool":"get_time"', '"tool":"get_the_time"'), {
    gatewayUrl: free.url,
    wallet: WALLET_CHECKSUMMED,
  });
  assert.notEqual(drifted.exitCode, 0);
  assert.match(drifted.stdout, /"code":"tool_not_found"/);
});
