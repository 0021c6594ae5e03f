/**
 * LedgerBatches' one rule that needs no database: a batch PostgreSQL aborted as a deadlock's
 * victim (SQLSTATE 40P01, nothing committed) is sent again, a bounded number of times; any other
 * failure fails every step of the batch at once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LedgerBatches, type LedgerStepResult } from '../../../gateway/ledger/postgres-ledger-batches.js';
import type { Sql } from '../../../gateway/storage/postgres/database.js';

/** A stand-in for postgres.js' tagged template: each call takes the next scripted outcome. */
function scriptedSql(outcomes: Array<Error | LedgerStepResult[]>): { sql: Sql; calls: () => number } {
  let calls = 0;
  const sql = (() => {
    const outcome = outcomes[Math.min(calls++, outcomes.length - 1)];
    return outcome instanceof Error ? Promise.reject(outcome) : Promise.resolve(outcome);
  }) as unknown as Sql;
  return { sql, calls: () => calls };
}

const sqlError = (code: string) => Object.assign(new Error(`sqlstate ${code}`), { code });
const ok: LedgerStepResult = { ok: true, charged: 0, credits: 5, refusal: null, key_remaining: null };
const step = { kind: 'reserve' as const, wallet: '0xabc', id: 'res_1', amount: 1, key: '' };
const options = { reservationTtlMs: 60_000, now: () => 1 };

test('a batch aborted as a deadlock victim is sent again and its steps answered', async () => {
  const { sql, calls } = scriptedSql([sqlError('40P01'), sqlError('40P01'), [ok]]);
  assert.deepEqual(await new LedgerBatches(sql, options).run(step), ok);
  assert.equal(calls(), 3);
});

test('past 3 sends the deadlock fails the steps; other errors fail them at once', async () => {
  const deadlocked = scriptedSql([sqlError('40P01')]);
  await assert.rejects(new LedgerBatches(deadlocked.sql, options).run(step), { code: '40P01' });
  assert.equal(deadlocked.calls(), 3);
  const broken = scriptedSql([sqlError('42883')]);
  await assert.rejects(new LedgerBatches(broken.sql, options).run(step), { code: '42883' });
  assert.equal(broken.calls(), 1);
});
