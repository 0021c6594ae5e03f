/**
 * The first upstream call of a chat runs ahead of its hold when the wallet's last seen balance
 * covers it twice over (Charge.claimRunAhead). Made observable on the real PostgreSQL: the test
 * holds the wallet's row lock, so the gateway's hold waits while its upstream call is answered.
 * Nothing reaches the client before the hold is decided; a refused hold answers 402 and cancels
 * the call; a granted one answers in full and charges exactly. A JSON chat (stream: false) takes
 * no hold at all but is charged in one step once answered (Charge.claimChargeAtEnd): the same
 * lock makes that charge wait, and the same answers follow from it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import postgres from 'postgres';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/upstream/scripted-upstream.js';
import { apiKeyFor, authHeaders, type TestGateway } from '../../helpers/gateway.js';
import { clusterServices, freshDatabase } from '../../helpers/cluster-services.js';
import { startChatGateway } from '../chat/chat-harness.js';
import { waitFor } from '../tools/fixture-servers.js';

const services = await clusterServices();
const WALLET = '0x' + 'c4'.repeat(20);
const ask = { model: 'conductor', messages: [{ role: 'user', content: 'Plan something.' }], max_tokens: 100, tool_choice: 'none' };

/** Whether `promise` settles within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const settled = await Promise.race([
    promise.then(
      () => true as const,
      () => true as const,
    ),
    late,
  ]);
  clearTimeout(timer);
  return settled;
}

describe('a chat running ahead of its hold', { skip: services.skip }, () => {
  let upstream: ScriptedUpstream;
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let gateway: TestGateway;
  let sql: postgres.Sql;
  let key: string;
  before(async () => {
    upstream = await startScriptedUpstream();
    database = await freshDatabase();
    gateway = await startChatGateway({
      upstream,
      tools: false,
      env: { DATABASE_URL: database.url },
      // One chat at a time per wallet: a chat that never ended would hold the slot and refuse the next.
      config: (json) => void Object.assign(json, { freeMode: false, limits: { chatConcurrencyPerWallet: 1 } }),
    });
    sql = postgres(database.url, { max: 2, onnotice: () => {} });
    key = await apiKeyFor(gateway, WALLET);
    await gateway.ledger.grant(WALLET, 10);
    // The gateway sees the balance once: 9 left after a 1-credit chat.
    const first = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: authHeaders(key, WALLET),
      body: JSON.stringify(ask),
    });
    assert.equal(first.headers.get('x-credits-remaining'), '9');
  });
  after(async () => {
    await sql?.end();
    await gateway?.stop();
    await upstream?.close();
    await database?.drop();
  });

  /**
   * Send a chat while the test holds the wallet's row, so the gateway's hold waits. `whileLocked`
   * runs in the locking transaction, after the checks, before it commits.
   */
  async function chatBehindLock(
    stream: boolean,
    options: {
      runsAhead: boolean;
      model?: string;
      signal?: AbortSignal;
      whileLocked?: (tx: postgres.TransactionSql) => Promise<void>;
    },
  ) {
    upstream.reset();
    upstream.defaultTurn = { text: 'The answer.', usage: { prompt_tokens: 100, completion_tokens: 20 } };
    let response!: Promise<Response>;
    await sql.begin(async (tx) => {
      await tx`select 1 from wallets where address = ${WALLET} for update`;
      response = fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: authHeaders(key, WALLET),
        body: JSON.stringify({ ...ask, stream, model: options.model ?? ask.model }),
        signal: options.signal,
      });
      if (options.runsAhead) {
        for (let i = 0; i < 200 && !upstream.requests[0]?.finished; i++) await new Promise((resolve) => setTimeout(resolve, 10));
        assert.equal(upstream.requests[0]?.finished, true, 'the upstream was asked and answered while the hold waited');
      }
      assert.equal(await settlesWithin(response, 200), false, 'nothing reaches the client before the hold is decided');
      if (!options.runsAhead) assert.equal(upstream.requests.length, 0, 'the upstream is asked only once the hold is granted');
      await options.whileLocked?.(tx);
    });
    return response;
  }

  test('a hold refused after the upstream answered: 402, nothing shown, nothing charged; the next chat waits for its hold', async () => {
    for (const stream of [false, true]) {
      const before = await gateway.ledger.balance(WALLET);
      const refused = await chatBehindLock(stream, {
        runsAhead: true,
        // Another instance spends the wallet meanwhile: everything held by someone else.
        whileLocked: (tx) =>
          tx`select ledger_reserve_locked(${WALLET}, ${`elsewhere-${stream}`}, ${before.credits}, ${Date.now() + 60_000}::bigint)`.then(
            () => {},
          ),
      });
      assert.equal(refused.status, 402, `stream: ${stream}`);
      assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'insufficient_credits');
      await sql`select ledger_release_locked(${WALLET}, ${`elsewhere-${stream}`}, ${Date.now()}::bigint)`;
      assert.deepEqual(await gateway.ledger.balance(WALLET), before);
      // The refusal taught the gateway the balance it could not see (0): its next chat waits for the hold.
      const next = await chatBehindLock(stream, { runsAhead: false });
      assert.equal(next.status, 200);
      assert.match(await next.text(), /The answer\./);
    }
  });

  test('a hold granted after the upstream answered: the whole answer, charged exactly', async () => {
    for (const stream of [false, true]) {
      const before = await gateway.ledger.balance(WALLET);
      const res = await chatBehindLock(stream, { runsAhead: true });
      assert.equal(res.status, 200, `stream: ${stream}`);
      assert.match(await res.text(), /The answer\./);
      const after = await gateway.ledger.balance(WALLET);
      assert.deepEqual(after, { ...before, credits: before.credits - 1, total_spent: before.total_spent + 1 });
    }
  });

  test('a client that leaves while the hold waits: the chat ends, its hold is released, its slot freed', async () => {
    const before = await gateway.ledger.balance(WALLET);
    const requestLines = () => gateway.logs.filter((l) => l.msg === 'request').length;
    const linesBefore = requestLines();
    // The gateway's side of the chat's connection closes once it has seen the client go.
    const gatewaySawLeave = new Promise<void>((resolve) => gateway.server.once('request', (_req, res) => res.once('close', resolve)));
    const controller = new AbortController();
    await assert.rejects(
      chatBehindLock(false, {
        runsAhead: true,
        signal: controller.signal,
        whileLocked: async () => {
          controller.abort();
          await gatewaySawLeave;
        },
      }),
      { name: 'AbortError' },
    );

    // The chat has ended once its request line is written: after its last ledger step and the slot's release.
    await waitFor("the chat's request log line", () => requestLines() > linesBefore);
    // The upstream answered before the client left: that is charged (1 credit), and nothing stays held.
    const balance = await gateway.ledger.balance(WALLET);
    assert.equal(balance.credits + balance.total_spent, before.total_deposited, 'nothing is left on hold');
    assert.equal(balance.total_spent, before.total_spent + 1);
    // The wallet's one chat slot was given back: the next chat runs.
    const next = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: authHeaders(key, WALLET),
      body: JSON.stringify(ask),
    });
    assert.equal(next.status, 200);
  });

  test("the upstream's timeout does not run while the hold waits on the ledger", async () => {
    // `operator` times out after 600 ms (chat-harness.ts); the lock is held well past that, after the upstream answered.
    const res = await chatBehindLock(true, {
      runsAhead: true,
      model: 'operator',
      whileLocked: () => new Promise((resolve) => setTimeout(resolve, 800)),
    });
    assert.equal(res.status, 200);
    assert.match(await res.text(), /The answer\./);
  });
});
