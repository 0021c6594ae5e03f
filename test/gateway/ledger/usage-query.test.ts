/**
 * The usage query (ledger/usage-query.ts) on an embedded ledger's records: a key confined to its
 * own records (the hook GET /credits/usage hands a key with limits) sees only them, whatever
 * key_id it names; dates without a time are UTC midnights; refusals are 400 invalid_request_error.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqlite } from '../../../gateway/storage/sqlite/sqlite-connection.js';
import { openEmbeddedLedger } from '../../../gateway/ledger/embedded-ledger.js';
import { sqliteUsageHistory } from '../../../gateway/storage/sqlite/sqlite-usage-history.js';
import { usageAnswer } from '../../../gateway/ledger/usage-query.js';
import { InvalidRequest } from '../../../gateway/errors.js';
import type { ChargeOptions } from '../../../gateway/ledger/ledger.js';

const dir = mkdtempSync(join(tmpdir(), 'sy-usage-query-'));
let clock = Date.UTC(2026, 0, 10, 23, 30);
const db = await openSqlite(join(dir, 'ledger.sqlite'));
const ledger = await openEmbeddedLedger(db, { reservationTtlMs: 60_000, now: () => clock });
const history = sqliteUsageHistory(db);
after(async () => {
  await ledger.stop();
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const wallet = '0x' + '6a'.repeat(20);
/** A tool run charged to `key` (the record's key id). */
const tool = (key: string, requestId: string): ChargeOptions => ({
  key,
  usage: { kind: 'tool', requestId, model: null, tools: { echo: 1 }, promptTokens: 0, completionTokens: 0 },
});
await ledger.grant(wallet, 100);
await ledger.charge(wallet, 1, tool('key_a', 'a1'));
clock += 3_600_000; // past UTC midnight
await ledger.charge(wallet, 2, tool('key_b', 'b1'));
await ledger.charge(wallet, 3, tool('key_a', 'a2'));

const ids = (answer: Awaited<ReturnType<typeof usageAnswer>>) =>
  answer.object === 'list' ? answer.data.map((r) => r.request_id) : assert.fail('a list was expected');

test('a key confined to its own records sees only them, whatever key_id it names', async () => {
  assert.deepEqual(ids(await usageAnswer(history, wallet, {}, 'key_a')), ['a2', 'a1']);
  assert.deepEqual(ids(await usageAnswer(history, wallet, { key_id: 'key_a' }, 'key_a')), ['a2', 'a1']);
  assert.deepEqual(ids(await usageAnswer(history, wallet, { key_id: 'key_b' }, 'key_a')), []);
  const totals = await usageAnswer(history, wallet, { group_by: 'key' }, 'key_a');
  assert.deepEqual(totals, {
    object: 'usage_totals',
    group_by: 'key',
    data: [{ group: 'key_a', records: 2, spent: 4, added: 0, prompt_tokens: 0, completion_tokens: 0 }],
  });
  assert.deepEqual((await usageAnswer(history, wallet, { key_id: 'key_b', group_by: 'key' }, 'key_a')).data, []);
  // Without the confinement the wallet's every record, the grant too.
  assert.deepEqual(ids(await usageAnswer(history, wallet, {})), ['a2', 'b1', 'a1', null]);
});

test('a date without a time is that day’s UTC midnight; the query string’s numbers come as text', async () => {
  assert.deepEqual(ids(await usageAnswer(history, wallet, { from: '2026-01-11' })), ['a2', 'b1']);
  assert.deepEqual(ids(await usageAnswer(history, wallet, { to: '2026-01-11', kind: 'tool' })), ['a1']);
  assert.deepEqual(ids(await usageAnswer(history, wallet, { from: '2026-01-11T00:30:00+01:00', limit: '1' })), ['a2']);
});

test('refusals are 400 invalid_request_error naming the parameter', async () => {
  for (const [query, param] of [
    [{ limit: '201' }, 'limit'],
    [{ cursor: '12' }, 'cursor'],
    [{ group_by: 'day', cursor: '1.2' }, 'cursor'],
    [{ kind: 'lunch' }, 'kind'],
  ] as const) {
    await assert.rejects(usageAnswer(history, wallet, query), (err: unknown) => {
      assert.ok(err instanceof InvalidRequest);
      assert.equal(err.status, 400);
      assert.equal(err.param, param);
      return true;
    });
  }
});
