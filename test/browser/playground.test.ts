/**
 * The playground and /docs in a real Chromium against the real gateway, its fixture MCP servers
 * and the scripted upstream model: a streamed chat with a tool round in the tool panel, a tool
 * run from the explorer, a key minted through an injected test wallet (SIWE), and 401/402 shown
 * from the API's error bodies. Screenshots go to test-artifacts/.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startScriptedUpstream, type ScriptedUpstream } from '../fixtures/upstream/scripted-upstream.js';
import { startChatGateway } from '../gateway/chat/chat-harness.js';
import { startTestGateway, WALLET_CHECKSUMMED, type TestGateway } from '../helpers/gateway.js';
import { chromiumSkip, cspViolations, launchChromium, screenshot, type LaunchedChromium } from './chromium.js';
import { injectTestWallet } from './test-wallet.js';
import { waitFor } from '../gateway/tools/fixture-servers.js';

const skip = chromiumSkip();
const UI_TIMEOUT_MS = 15_000;

let chromium: LaunchedChromium;
let upstream: ScriptedUpstream;
before(async () => {
  if (skip) return;
  chromium = await launchChromium();
  upstream = await startScriptedUpstream();
});
after(async () => {
  await chromium?.close();
  await upstream?.close();
});

/** A fresh tab (its own session storage) that records CSP violations. */
async function openPage(): Promise<{ page: Page; violations: string[]; close(): Promise<void> }> {
  const page = await chromium.context.newPage();
  page.setDefaultTimeout(UI_TIMEOUT_MS);
  return { page, violations: cspViolations(page), close: () => page.close() };
}

/** The chat harness gives the operator model a 600 ms upstream timeout; the scripted pause below needs more. */
function patientOperator(json: Record<string, unknown>): void {
  (json.models as Array<{ upstream: Record<string, unknown> }>)[1].upstream.timeoutMs = 30_000;
}

/**
 * One tool round (echo, plus `sleep` for `sleepMs` when asked, so the round stays visibly running),
 * then the answer in words; the second upstream call waits, so the finished round shows before it.
 */
function scriptToolRound(text: string, answer: string, sleepMs?: number): void {
  const chunks = answer.split(' ').map((word, i) => (i ? ` ${word}` : word));
  const calls = [{ name: 'echo', arguments: JSON.stringify({ text }) }];
  if (sleepMs !== undefined) calls.push({ name: 'sleep', arguments: JSON.stringify({ ms: sleepMs }) });
  upstream.script({ toolCalls: calls }, { text: chunks, delayMs: 1_500 });
}

describe('playground in free mode', { skip }, () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startChatGateway({ upstream, config: patientOperator });
  });
  after(() => gateway?.stop());

  test('a typed wallet is enough: a streamed chat shows its tool round live, then its trace', async () => {
    const { page, violations, close } = await openPage();
    try {
      const response = await page.goto(gateway.url);
      assert.match(response?.headers()['content-security-policy'] ?? '', /script-src 'self'; style-src 'self';/);
      await page.getByText('free mode: a wallet address is enough').waitFor();
      await page.fill('#wallet-address', WALLET_CHECKSUMMED);
      await page.click('#use-wallet');
      await page.locator('#model option[value="svc-8b-operator"]').waitFor({ state: 'attached' });
      await page.selectOption('#model', 'svc-8b-operator');

      scriptToolRound('ping', 'The echo said ping.', 1_500);
      await page.fill('#chat-input', 'Echo ping, please.');
      await page.click('#chat-send');
      const running = page.locator('#tool-rows .tool-row.running');
      await running.nth(1).waitFor();
      assert.deepEqual(await running.allInnerTexts(), ['echo running…', 'sleep running…']);
      await screenshot(page, 'playground-free-tool-running');

      // The round's outcome shows while the model is still working on its answer.
      const done = page.locator('#tool-rows .tool-row.ok[data-tool="echo"]');
      await page.locator('#tool-rows .tool-row.ok[data-tool="sleep"]').waitFor();
      assert.equal(await page.locator('.message.assistant.streaming').count(), 1, 'the answer is still streaming');
      assert.match(await done.innerText(), /round 1 · \d+ ms · ok/);
      const slept = /round 1 · (\d+) ms · ok/.exec(await page.locator('#tool-rows .tool-row[data-tool="sleep"]').innerText());
      assert.ok(Number(slept?.[1]) >= 1_500, `sleep took ${slept?.[1]} ms`);
      await screenshot(page, 'playground-free-tool-done-live');

      await page.locator('.message.assistant:not(.streaming)').waitFor();
      assert.equal(await page.locator('.message.assistant').innerText(), 'The echo said ping.');
      assert.match(await done.innerText(), /round 1 · \d+ ms · ok/);
      assert.deepEqual(JSON.parse(await done.locator('.tool-args').innerText()), { text: 'ping' });
      assert.equal(await page.locator('#chat-credits').innerText(), 'Nothing charged (free mode, or credits off)');
      assert.match(await page.locator('#chat-usage').innerText(), /^\d+ prompt \+ \d+ completion tokens$/);
      // What the page sent is what a client sends: the chosen model, streaming, the wallet header.
      const sent = upstream.requests.at(-1);
      assert.equal(sent?.body.model, 'qwen3:8b');
      await screenshot(page, 'playground-free-chat-done');
      assert.deepEqual(violations, []);
    } finally {
      await close();
    }
  });

  test('Stop closes the stream: the gateway cancels the upstream call, the partial answer stays marked', async () => {
    const { page, violations, close } = await openPage();
    try {
      await page.goto(gateway.url);
      await page.fill('#wallet-address', WALLET_CHECKSUMMED);
      await page.click('#use-wallet');
      await page.locator('#model option').first().waitFor({ state: 'attached' });
      upstream.script({ text: ['Counting:', ' one,', ' two,', ' three.'], holdLast: true });
      await page.fill('#chat-input', 'Count slowly.');
      await page.click('#chat-send');
      await upstream.held();
      await page.locator('.message.assistant.streaming', { hasText: 'Counting: one, two,' }).waitFor();
      await page.click('#chat-stop');
      const stopped = page.locator('.message.assistant.stopped');
      await stopped.waitFor();
      assert.equal(await stopped.innerText(), 'Counting: one, two,');
      assert.equal(await stopped.getAttribute('data-note'), ' (stopped)');
      assert.equal(await page.locator('#chat-stop').isHidden(), true);
      assert.equal(await page.locator('#error').isHidden(), true, 'stopping is not an error');
      await waitFor('the upstream call to be cancelled', () => upstream.requests.at(-1)?.aborted === true, 5_000);
      await screenshot(page, 'playground-free-stopped');
      assert.deepEqual(violations, []);
    } finally {
      upstream.release();
      await close();
    }
  });

  test('the tool explorer builds a form from the schema and shows the JSON result', async () => {
    const { page, violations, close } = await openPage();
    try {
      await page.goto(gateway.url);
      await page.fill('#wallet-address', WALLET_CHECKSUMMED);
      await page.click('#use-wallet');
      await page.locator('#tool option[value="echo"]').waitFor({ state: 'attached' });
      await page.selectOption('#tool', 'echo');
      assert.match(await page.locator('#tool-description').innerText(), /Echo the text back\. \(server: echo\)/);
      assert.equal(await page.locator('label[for="arg-text"]').innerText(), 'text *');

      await page.click('#tool-run');
      assert.match(await page.locator('#error').innerText(), /text is required/);
      await page.fill('#arg-text', 'hello from the explorer');
      await page.click('#tool-run');
      await page.locator('#tool-result').filter({ hasText: 'hello from the explorer' }).waitFor();
      assert.deepEqual(JSON.parse(await page.locator('#tool-result').innerText()), { text: 'hello from the explorer' });
      assert.equal(await page.locator('#error').isHidden(), true);
      await screenshot(page, 'playground-free-explorer');

      // An integer field becomes a number input, and its value is sent as a number.
      await page.selectOption('#tool', 'sleep');
      assert.equal(await page.locator('#arg-ms').getAttribute('type'), 'number');
      assert.equal(await page.locator('#arg-ms').getAttribute('step'), '1');
      await page.fill('#arg-ms', '25');
      await page.click('#tool-run');
      await page.locator('#tool-result').filter({ hasText: 'slept' }).waitFor();
      assert.deepEqual(JSON.parse(await page.locator('#tool-result').innerText()), { slept: 25 });
      assert.deepEqual(violations, []);
    } finally {
      await close();
    }
  });

  test('/docs renders the OpenAPI document with the bundled viewer, offline', async () => {
    const { page, violations, close } = await openPage();
    const outside: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(gateway.url)) outside.push(request.url());
    });
    try {
      await page.goto(`${gateway.url}/docs`);
      await page.locator('.opblock-summary-path', { hasText: '/v1/chat/completions' }).first().waitFor();
      const document = (await (await fetch(`${gateway.url}/openapi.json`)).json()) as { paths: Record<string, object> };
      const operations = Object.values(document.paths).reduce((n, item) => n + Object.keys(item).length, 0);
      assert.equal(await page.locator('.opblock').count(), operations, 'every operation is listed');
      assert.match(await page.locator('.info .title').innerText(), /Switchyard/);
      await screenshot(page, 'docs');
      assert.deepEqual(violations, []);
      assert.deepEqual(
        outside.filter((url) => !url.startsWith('data:')),
        [],
        'the page loads nothing from elsewhere',
      );
    } finally {
      await close();
    }
  });
});

describe('playground with credits on', { skip }, () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startChatGateway({
      upstream,
      config: (json) => {
        patientOperator(json);
        json.freeMode = false;
      },
    });
  });
  after(() => gateway?.stop());

  test('401 without a key; a key minted with the injected wallet (SIWE); 402 shown; a paid chat', async () => {
    const { page, violations, close } = await openPage();
    const account = privateKeyToAccount(generatePrivateKey());
    const wallet = await injectTestWallet(page, account);
    try {
      await page.goto(gateway.url);
      await page.getByText('credits on: a key of your wallet is needed').waitFor();
      await page.fill('#wallet-address', account.address);
      await page.click('#use-wallet');
      const banner = page.locator('#error');
      await banner.and(page.locator('[data-status="401"]')).waitFor();
      assert.match(await banner.innerText(), /^401 missing_api_key: An API key is required/);
      await screenshot(page, 'playground-credits-401');

      await page.click('#mint-key');
      await page.getByText('Key minted with a SIWE proof').waitFor();
      assert.equal(wallet.signatures.length, 1);
      const keys = await gateway.apiKeys.list(account.address);
      assert.deepEqual(
        keys.map((k) => [k.name, k.verified]),
        [['playground', true]],
      );
      const stored = await page.evaluate(() => ({ session: sessionStorage.getItem('switchyard.key'), local: localStorage.length }));
      assert.match(stored.session ?? '', /^sy_[A-Za-z0-9_-]{43}$/);
      assert.equal(stored.local, 0, 'the key is kept for the session only');
      await page.locator('#balance', { hasText: '0 credits' }).waitFor();

      // No credits yet: a tool run is refused with 402, shown as such.
      await page.locator('#tool option[value="echo"]').waitFor({ state: 'attached' });
      await page.selectOption('#tool', 'echo');
      await page.fill('#arg-text', 'paid');
      await page.click('#tool-run');
      await banner.and(page.locator('[data-status="402"]')).waitFor();
      assert.match(await banner.innerText(), /^402 insufficient_credits: Insufficient credits: balance is 0/);
      assert.match(await banner.innerText(), /Out of credits/);
      await screenshot(page, 'playground-credits-402');

      await gateway.ledger.grant(account.address.toLowerCase(), 100);
      scriptToolRound('paid', 'Paid answer.');
      await page.fill('#chat-input', 'Echo paid.');
      await page.click('#chat-send');
      await page.locator('.message.assistant:not(.streaming)').waitFor();
      assert.equal(await banner.isHidden(), true);
      assert.match(await page.locator('#chat-credits').innerText(), /^1 credits charged, 99 left$/);
      await page.locator('#balance', { hasText: '99 credits (deposited 100, spent 1)' }).waitFor();
      await screenshot(page, 'playground-credits-chat');
      assert.deepEqual(violations, []);

      // Another tab starts without the key (session storage is per tab); pasting it works.
      const key = stored.session as string;
      const other = await openPage();
      try {
        await other.page.goto(gateway.url);
        assert.equal(await other.page.locator('#api-key').inputValue(), '');
        await other.page.fill('#wallet-address', account.address);
        await other.page.fill('#api-key', key);
        await other.page.click('#save-key');
        await other.page.locator('#balance', { hasText: '99 credits' }).waitFor();
        await other.page.locator('#tool option[value="echo"]').waitFor({ state: 'attached' });
        assert.deepEqual(other.violations, []);
      } finally {
        await other.close();
      }
    } finally {
      await close();
    }
  });
});

describe('playground: a key minted with limits', { skip }, () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startChatGateway({
      upstream,
      config: (json) => {
        patientOperator(json);
        json.freeMode = false;
      },
    });
  });
  after(() => gateway?.stop());

  test('the limits form mints a capped, scoped key: the explorer lists only its tools, and past its cap it is 402 key_budget_exhausted', async () => {
    const { page, violations, close } = await openPage();
    const account = privateKeyToAccount(generatePrivateKey());
    await injectTestWallet(page, account);
    try {
      await page.goto(gateway.url);
      await page.click('#key-limits summary');
      await page.fill('#limit-max-credits', '1');
      await page.fill('#limit-tools', 'echo, list_tools');
      await page.fill('#limit-models', 'operator');
      await screenshot(page, 'playground-key-limits-form');
      await page.click('#mint-key');
      await page.getByText('Key minted with a SIWE proof (limits: 1 credits; tools echo, list_tools; models operator)').waitFor();
      const wallet = account.address.toLowerCase();
      const [listed] = await gateway.apiKeys.list(wallet);
      const usage = (await gateway.ledger.keyUsage([listed.id])).get(listed.id);
      assert.deepEqual(usage?.limits, {
        maxCredits: 1,
        maxCreditsPerDay: null,
        expiresAt: null,
        tools: ['echo', 'list_tools'],
        models: ['svc-8b-operator'],
      });
      await gateway.ledger.grant(wallet, 100);
      await page.locator('#tool option[value="echo"]').waitFor({ state: 'attached' });
      const offered = await page.locator('#tool option').evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value));
      assert.deepEqual(offered.sort(), ['echo', 'list_tools']);
      await page.selectOption('#tool', 'echo');
      await page.fill('#arg-text', 'once');
      await page.click('#tool-run');
      await page.locator('#tool-result', { hasText: 'once' }).waitFor();
      await page.click('#tool-run');
      const banner = page.locator('#error');
      await banner.and(page.locator('[data-status="402"]')).waitFor();
      assert.match(await banner.innerText(), /^402 key_budget_exhausted: .*wallet may still hold credits/);
      await screenshot(page, 'playground-key-limits-402');
      assert.deepEqual(violations, []);
    } finally {
      await close();
    }
  });
});

describe('playground usage table', { skip }, () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startChatGateway({
      upstream,
      config: (json) => {
        patientOperator(json);
        json.freeMode = false;
      },
    });
  });
  after(() => gateway?.stop());

  test("records newest first a page at a time, totals per day, model and key, and a chat's record appearing on top", async () => {
    const { page, violations, close } = await openPage();
    const wallet = '0x' + '4d'.repeat(20);
    const { key, record } = await gateway.apiKeys.create({ address: wallet, name: 'table', verified: true });
    await gateway.ledger.grant(wallet, 100);
    // Twelve tool runs (one record each) and the grant: two pages of ten.
    for (let i = 0; i < 12; i++) {
      const res = await fetch(`${gateway.url}/v1/tools/execute`, {
        method: 'POST',
        headers: { 'x-wallet-address': wallet, authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ tool: 'echo', args: { text: `run ${i}` } }),
      });
      assert.equal(res.status, 200);
    }
    try {
      await page.goto(gateway.url);
      await page.fill('#wallet-address', wallet);
      await page.fill('#api-key', key);
      await page.click('#save-key');
      await page.locator('#balance', { hasText: '88 credits' }).waitFor();
      await page.click('#usage summary');
      const rows = page.locator('#usage-table tbody tr');
      await page.locator('#usage-page', { hasText: 'page 1' }).waitFor();
      assert.equal(await rows.count(), 10);
      assert.deepEqual(
        await rows
          .nth(0)
          .locator('td')
          .allInnerTexts()
          .then((cells) => cells.slice(1)),
        ['tool', '—', 'echo', '—', '−1', record.id],
      );
      await page.click('#usage-older');
      await page.locator('#usage-page', { hasText: 'page 2' }).waitFor();
      assert.equal(await rows.count(), 3);
      assert.deepEqual(
        await rows
          .nth(2)
          .locator('td')
          .allInnerTexts()
          .then((cells) => [cells[1], cells[5]]),
        ['grant', '+100'],
      );
      assert.equal(await page.locator('#usage-older').isDisabled(), true);
      await screenshot(page, 'playground-usage-page-2');
      await page.click('#usage-newer');
      await page.locator('#usage-page', { hasText: 'page 1' }).waitFor();

      await page.selectOption('#usage-view', 'model');
      await page.locator('#usage-page', { hasText: 'totals' }).waitFor();
      assert.deepEqual(await rows.nth(0).locator('td').allInnerTexts(), ['—', '13', '12', '100', '0', '0']);
      await page.selectOption('#usage-view', 'key');
      await page.locator('#usage-table th', { hasText: 'key' }).waitFor();
      assert.deepEqual(await rows.nth(0).locator('td').allInnerTexts(), [record.id, '12', '12', '0', '0', '0']);
      await page.selectOption('#usage-view', 'day');
      await page.locator('#usage-table th', { hasText: 'day' }).waitFor();
      assert.deepEqual(
        await rows
          .nth(0)
          .locator('td')
          .allInnerTexts()
          .then((cells) => cells.slice(1, 4)),
        ['13', '12', '100'],
      );
      await screenshot(page, 'playground-usage-totals');

      // A chat from the page: its record is on top of the table once it has answered.
      await page.selectOption('#usage-view', 'records');
      await page.selectOption('#usage-kind', 'chat');
      await page.locator('#usage-table caption', { hasText: 'No usage yet.' }).waitFor();
      upstream.script({ text: 'Counted.', usage: { prompt_tokens: 1500, completion_tokens: 250 } });
      await page.locator('#model option[value="svc-8b-operator"]').waitFor({ state: 'attached' });
      await page.selectOption('#model', 'svc-8b-operator');
      await page.fill('#chat-input', 'Count this.');
      await page.click('#chat-send');
      await page.locator('#usage-table tbody tr[data-kind="chat"]').waitFor();
      assert.deepEqual(
        await rows
          .nth(0)
          .locator('td')
          .allInnerTexts()
          .then((cells) => cells.slice(1)),
        ['chat', 'svc-8b-operator', '—', '1500 / 250', '−2', record.id],
      );
      await screenshot(page, 'playground-usage-chat');
      assert.deepEqual(violations, []);
    } finally {
      await close();
    }
  });
});

describe('playground errors from the API', { skip }, () => {
  let gateway: TestGateway;
  before(async () => {
    // Upstreams on a closed port (the test config's default), and a budget of 5 requests per wallet.
    gateway = await startTestGateway({ config: (json) => void (json.limits = { perWallet: { points: 5, durationSec: 60 } }) });
  });
  after(() => gateway?.stop());

  test('503 when the model is down, then 429 with its Retry-After', async () => {
    const { page, violations, close } = await openPage();
    try {
      await page.goto(gateway.url);
      await page.fill('#wallet-address', WALLET_CHECKSUMMED);
      await page.click('#use-wallet'); // models, tools, balance: 3 of the 5
      await page.locator('#tool option[value="list_tools"]').waitFor({ state: 'attached' });
      await page.locator('#balance', { hasText: '0 credits' }).waitFor();

      await page.fill('#chat-input', 'Anyone there?'); // the 4th, and the balance after it the 5th
      await page.click('#chat-send');
      const banner = page.locator('#error');
      await banner.and(page.locator('[data-status="503"]')).waitFor();
      assert.match(await banner.innerText(), /^503 \w+: .+\nThe service is unavailable right now\.$/);
      assert.equal(await page.locator('.message').count(), 0, 'no half answer is left behind');
      assert.equal(await page.locator('#chat-input').inputValue(), 'Anyone there?', 'the question is back in the box');
      await page.locator('#chat-send:not([disabled])').waitFor();
      await screenshot(page, 'playground-errors-503');

      await page.click('#tool-run');
      await banner.and(page.locator('[data-status="429"]')).waitFor();
      assert.match(await banner.innerText(), /^429 rate_limited: .+\nRate limited: wait and try again\. Retry after \d+ s\.$/);
      await screenshot(page, 'playground-errors-429');
      assert.deepEqual(violations, []);
    } finally {
      await close();
    }
  });
});
