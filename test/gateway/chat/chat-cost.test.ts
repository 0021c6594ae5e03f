/**
 * A chat's charge (accounts/charging.ts with pricing.ts) over a real ledger with a short reservation TTL and a controlled clock: a hold that
 * expires mid-chat stops the chat instead of failing it, and what was consumed is still charged
 * from a fresh hold, never below zero. (The config refuses a TTL at or below the chat deadline and
 * the timeouts, so a running gateway cannot show this in real time.)
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedLedger, type EmbeddedLedger } from '../../../gateway/ledger/embedded-ledger.js';
import { openSqlite, type SqliteConnection } from '../../../gateway/storage/sqlite/sqlite-connection.js';
import { ledgerCharger } from '../../../gateway/ledger/charging.js';
import { chatCost, creditsToCover } from '../../../gateway/pricing.js';

/** The usage record's origin for charges these tests open. */
const ORIGIN = { kind: 'tool' as const, requestId: 'req_test', model: null };

const dir = mkdtempSync(join(tmpdir(), 'switchyard-billing-'));
let db: SqliteConnection;
let now = 1_000_000;
let ledger: EmbeddedLedger;
before(async () => {
  db = await openSqlite(join(dir, 'ledger.sqlite'));
  ledger = await openEmbeddedLedger(db, { reservationTtlMs: 1_000, now: () => now });
});
after(async () => {
  await ledger.stop();
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const none = { prompt_tokens: 0, completion_tokens: 0 };

test('a reservation that expires mid-chat: cover says stop, settle charges what was consumed from a fresh hold', async () => {
  const wallet = '0x' + 'a1'.repeat(20);
  await ledger.grant(wallet, 10);
  const billing = ledgerCharger(ledger).begin({ wallet }, ORIGIN);
  assert.equal(await billing.cover(creditsToCover(none, 500, 1000)), true); // holds 3
  const used = { prompt_tokens: 1500, completion_tokens: 500 };
  now += 1_001; // the TTL passes while the chat runs: the sweep gives the 3 back
  assert.equal(await billing.cover(creditsToCover(used, 2000, 1000)), false);
  assert.deepEqual(await billing.settle(chatCost(used)), { charged: 3, remaining: 7 });
  assert.deepEqual(await ledger.balance(wallet), { address: wallet, credits: 7, total_deposited: 10, total_spent: 3 });
});

test('the fresh hold never takes the wallet below zero: it charges what is left, or nothing on an emptied wallet', async () => {
  for (const { wallet, spentElsewhere, charged } of [
    { wallet: '0x' + 'b2'.repeat(20), spentElsewhere: 3, charged: 1 },
    { wallet: '0x' + 'b3'.repeat(20), spentElsewhere: 4, charged: 0 },
  ]) {
    await ledger.grant(wallet, 4);
    const billing = ledgerCharger(ledger).begin({ wallet }, ORIGIN);
    assert.equal(await billing.cover(4), true);
    now += 1_001;
    // Meanwhile the returned credits are spent elsewhere.
    await ledger.charge(wallet, spentElsewhere);
    assert.deepEqual(await billing.settle(chatCost({ prompt_tokens: 4000, completion_tokens: 0 })), { charged, remaining: 0 });
    assert.deepEqual(await ledger.balance(wallet), {
      address: wallet,
      credits: 0,
      total_deposited: 4,
      total_spent: spentElsewhere + charged,
    });
  }
});

test('the hold is topped up to the cost so far plus the next worst case, not grown by every worst case', async () => {
  const wallet = '0x' + 'c3'.repeat(20);
  await ledger.grant(wallet, 12);
  const billing = ledgerCharger(ledger).begin({ wallet }, ORIGIN);
  // Each call: a 1000-token prompt estimate and 2048 output tokens at worst → 6 credits.
  for (let call = 0; call < 6; call++) {
    const used = { prompt_tokens: 60 * call, completion_tokens: 10 * call };
    assert.equal(await billing.cover(creditsToCover(used, 1000, 2048)), true, `call ${call + 1}`);
  }
  assert.equal((await ledger.balance(wallet)).credits, 6);
  assert.deepEqual(await billing.settle(chatCost({ prompt_tokens: 360, completion_tokens: 60 })), { charged: 1, remaining: 11 });
});
