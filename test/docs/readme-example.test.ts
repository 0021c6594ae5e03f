/**
 * README's first request, run as a user would run it: its TypeScript block copied out of README.md
 * and run with tsx against a real gateway (the scripted upstream behind it), its placeholders taken
 * from the environment: the gateway's address and a wallet in place of `127.0.0.1:8080` and
 * `0xYourWalletAddress`, and `SWITCHYARD_KEY` as README reads it. In free mode the key is unset, so
 * the `openai` client sends README's placeholder, `unused-in-free-mode`; with credits on it is a
 * funded key of that wallet.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { startScriptedUpstream, type ScriptedUpstream, type Turn } from '../fixtures/upstream/scripted-upstream.js';
import { apiKeyFor, type TestGateway } from '../helpers/gateway.js';
import { startChatGateway } from '../gateway/chat/chat-harness.js';

const ROOT = resolve(import.meta.dirname, '../..');
const URL_PLACEHOLDER = "'http://127.0.0.1:8080/v1'";
const WALLET_PLACEHOLDER = "'0xYourWalletAddress'";
const WALLET = '0x52908400098527886E0F7030069857D2E4169EE7';

/** README's first TypeScript block, its address and wallet read from the environment instead. */
function readmeExample(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const block = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(block, 'README.md has a TypeScript example');
  for (const placeholder of [URL_PLACEHOLDER, WALLET_PLACEHOLDER, 'process.env.SWITCHYARD_KEY']) {
    assert.equal(block.split(placeholder).length, 2, `the example has ${placeholder} once`);
  }
  return block.replace(URL_PLACEHOLDER, 'process.env.SWITCHYARD_URL!').replace(WALLET_PLACEHOLDER, 'process.env.SWITCHYARD_WALLET!');
}

/** Run the example with tsx (inside the repository, so `openai` resolves as in a user's project). */
async function runExample(env: Record<string, string>): Promise<string> {
  const dir = join(ROOT, 'test-artifacts');
  mkdirSync(dir, { recursive: true });
  const work = mkdtempSync(join(dir, 'readme-example-'));
  const file = join(work, 'first-request.ts');
  writeFileSync(file, readmeExample());
  try {
    const { SWITCHYARD_KEY: _unset, ...parentEnv } = process.env;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', file], {
      cwd: ROOT,
      env: { ...parentEnv, ...env },
      timeout: 60_000,
    });
    return stdout;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const answerTurns = (): Turn[] => [
  { toolCalls: [{ id: 'call_lido000001', name: 'echo', arguments: '{"text":"Lido"}' }] },
  { text: 'Lido is a liquid staking protocol; vitalik.eth holds 1.5 ETH.' },
];

let upstream: ScriptedUpstream;
let free: TestGateway;
let paid: TestGateway;
before(async () => {
  upstream = await startScriptedUpstream();
  free = await startChatGateway({ upstream });
  paid = await startChatGateway({ upstream, config: (json) => void (json.freeMode = false) });
});
after(async () => {
  await free?.stop();
  await paid?.stop();
  await upstream?.close();
});

test("README's first example runs in free mode with its placeholder key", async () => {
  upstream.reset();
  upstream.script(...answerTurns());
  const stdout = await runExample({ SWITCHYARD_URL: `${free.url}/v1`, SWITCHYARD_WALLET: WALLET });
  assert.match(stdout, /^Lido is a liquid staking protocol; vitalik\.eth holds 1\.5 ETH\. \[/);
  assert.match(stdout, /tool: 'echo'/);
  assert.match(stdout, /ok: true/);
  assert.equal(upstream.requests.at(-1)!.body.messages.at(-1)!.role, 'tool', 'the gateway ran the tool round');
});

test("README's first example runs with credits on and a funded key from SWITCHYARD_KEY", async () => {
  upstream.reset();
  upstream.script(...answerTurns());
  const wallet = WALLET.toLowerCase();
  await paid.ledger.grant(wallet, 10);
  const key = await apiKeyFor(paid, wallet);
  const stdout = await runExample({ SWITCHYARD_URL: `${paid.url}/v1`, SWITCHYARD_WALLET: WALLET, SWITCHYARD_KEY: key });
  assert.match(stdout, /^Lido is a liquid staking protocol; vitalik\.eth holds 1\.5 ETH\. \[/);
  assert.match(stdout, /tool: 'echo'/);
  assert.equal((await paid.ledger.balance(wallet)).credits, 9, 'charged to the wallet of the key');
});
