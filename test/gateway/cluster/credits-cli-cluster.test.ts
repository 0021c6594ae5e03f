/**
 * `npm run credits` in cluster mode (the built CLI, DATABASE_URL set): grant and balance on
 * PostgreSQL, a grant landing while gateways could be spending; and `migrate-to-postgres`, which
 * copies an embedded DATA_DIR (written through the embedded classes) into PostgreSQL once: keys
 * that work in cluster mode afterwards, balances with open holds given back, and a second run
 * that copies nothing.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { openDataDirStores as openAccounts } from '../../../gateway/stores/embedded-stores.js';
import { openDatabase, type Database } from '../../../gateway/storage/postgres/database.js';
import { PostgresKeyStore } from '../../../gateway/keys/postgres-key-store.js';
import { PostgresX402PaymentRecords } from '../../../gateway/storage/postgres/postgres-x402-payment-records.js';
import { PostgresLedger } from '../../../gateway/ledger/postgres-ledger.js';
import { ApiKeys } from '../../../gateway/keys/api-keys.js';
import { PostgresDepositStore } from '../../../gateway/storage/postgres/postgres-deposit-store.js';
import { openSqliteDepositStore } from '../../../gateway/storage/sqlite/sqlite-deposit-store.js';
import { STORE_FILE } from '../../../gateway/storage/sqlite/keyv-store.js';
import { clusterServices, freshDatabase } from '../../helpers/cluster-services.js';
import { ALICE, BOB, TEST_RESPONSE_SETTINGS } from '../../helpers/accounts.js';
import { NO_KEY_LIMITS } from '../../../gateway/ledger/key-budgets.js';
import { KeyBudgetExhausted } from '../../../gateway/errors.js';

const services = await clusterServices();
const run = promisify(execFile);
const CLI = resolve('dist/gateway/cli/credits-main.js');
const alice = ALICE.address.toLowerCase();
const bob = BOB.address.toLowerCase();

async function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const childEnv: Record<string, string> = { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', ...env };
  if (process.env.NODE_V8_COVERAGE) childEnv.NODE_V8_COVERAGE = process.env.NODE_V8_COVERAGE;
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: childEnv, timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('the credits CLI in cluster mode', { skip: services.skip }, () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let db: Database;
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-migrate-'));
  before(async () => {
    assert.ok(existsSync(CLI), 'run npm run build first');
    database = await freshDatabase();
    db = await openDatabase(database.url, { max: 2 });
  });
  after(async () => {
    await db?.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('migrate-to-postgres copies keys and balances once; grant and balance then work on PostgreSQL', async () => {
    // An embedded store as a gateway leaves it: keys of two wallets, spending, one hold still open.
    const settings = { reservationTtlMs: 600_000, nonceTtlMs: 60_000 };
    const embedded = await openAccounts({ dataDir, publicUrl: 'http://127.0.0.1:8080', settings, responses: TEST_RESPONSE_SETTINGS });
    const aliceKey = (await embedded.apiKeys.create({ address: alice, name: 'laptop', verified: true })).key;
    await embedded.apiKeys.create({ address: alice, name: 'phone', verified: true });
    const bobKey = (await embedded.apiKeys.create({ address: bob, name: 'free', verified: false })).key;
    await embedded.ledger.grant(alice, 50, 'invoice-17');
    await embedded.ledger.grant(bob, 7);
    const chat = { kind: 'chat', requestId: 'req_before_move', model: 'conductor' } as const;
    await embedded.ledger.settle(await embedded.ledger.reserve(alice, 5, 'key_laptop'), 3, {
      ...chat,
      tools: { echo: 2 },
      promptTokens: 1_000,
      completionTokens: 900,
    });
    const usageBefore = (await embedded.usage.page({ wallet: alice }, 10)).records;
    await embedded.ledger.reserve(alice, 4); // open when the gateway stopped
    const deposit = {
      wallet: bob,
      source: 'deposit',
      externalId: '1:0xabc:0',
      units: 2_400n,
      unitsPerCredit: 1_000n,
      remainderKey: '1:usdc',
    } as const;
    await embedded.ledger.creditExternal(deposit);
    // A key with limits that spent 2 of its 5 credits.
    const capped = await embedded.apiKeys.create({
      address: bob,
      name: 'agent',
      verified: true,
      prepare: (record) =>
        embedded.ledger.setKeyLimits({ keyId: record.id, wallet: bob, limits: { ...NO_KEY_LIMITS, maxCredits: 5, tools: ['list_tools'] } }),
    });
    await embedded.ledger.charge(bob, 2, { key: capped.record.id });
    // An x402 settlement still pending when the gateway stopped.
    const pendingPayment = {
      id: `eip155:8453:0x${'ab'.repeat(32)}`,
      wallet: bob,
      network: 'eip155:8453',
      asset: `0x${'cd'.repeat(20)}`,
      amount: 20_000_000n,
      nonce: `0x${'ab'.repeat(32)}`,
      signature: `0x${'ef'.repeat(65)}`,
      validBefore: 1_900_000_000,
      fromBlock: 123n,
      payTo: '0x2222222222222222222222222222222222222222',
      unitsPerCredit: 10_000n,
    };
    await embedded.paymentRecords.claim(pendingPayment);
    await embedded.close();
    // A deposit seen but not credited yet, and the chain's cursor, as a watcher leaves them.
    const depositStore = await openSqliteDepositStore(join(dataDir, STORE_FILE));
    const seen = {
      chainId: 1,
      txHash: '0xdef',
      logIndex: 2,
      blockNumber: 90,
      blockHash: '0xb90',
      token: '0xusdc',
      wallet: bob,
      amount: 5_000n,
    };
    await depositStore.recordSeen([seen], 1_700_000_000_000);
    await depositStore.saveCursor(1, 89);
    await depositStore.close();

    const env = { DATA_DIR: dataDir, DATABASE_URL: database.url };
    const first = await cli(['migrate-to-postgres'], env);
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(JSON.parse(first.stdout), {
      keys: { copied: 4, skipped: 0 },
      wallets: { copied: 2, skipped: 0 },
      credits: 54,
      grants: { copied: 1, skipped: 0 },
      externalCredits: { copied: 1, skipped: 0 },
      deposits: { copied: 1, skipped: 0 },
      x402Payments: { copied: 1, skipped: 0 },
      keyLimits: { copied: 1, skipped: 0 },
      usageRecords: { copied: 4, skipped: 0 },
    });
    const again = await cli(['migrate-to-postgres'], env);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(JSON.parse(again.stdout), {
      keys: { copied: 0, skipped: 4 },
      wallets: { copied: 0, skipped: 2 },
      credits: 0,
      grants: { copied: 0, skipped: 1 },
      externalCredits: { copied: 0, skipped: 1 },
      deposits: { copied: 0, skipped: 1 },
      x402Payments: { copied: 0, skipped: 1 },
      keyLimits: { copied: 0, skipped: 1 },
      usageRecords: { copied: 0, skipped: 4 },
    });
    const deposits = new PostgresDepositStore(db.sql);
    assert.deepEqual(
      (await deposits.pending(1)).map((d) => [d.txHash, d.amount, d.status]),
      [['0xdef', 5_000n, 'pending']],
    );
    assert.equal(await deposits.cursor(1), 89);
    assert.deepEqual(await new PostgresX402PaymentRecords(db.sql).pending(10), [
      { ...pendingPayment, state: 'pending', transaction: null },
    ]);
    // The deposit credited before the move counts once after it, and its remainder carries on.
    const ledger = new PostgresLedger(db.sql, { reservationTtlMs: 60_000 });
    // A grant retried with its key after the move answers as it did before it, and grants nothing.
    assert.deepEqual(await ledger.grant(alice, 50, 'invoice-17'), { address: alice, credits: 50, total_deposited: 50, total_spent: 0 });
    assert.equal((await ledger.creditExternal(deposit)).status, 'repeat');
    assert.equal((await ledger.creditExternal({ ...deposit, externalId: '1:0xabc:1', units: 600n })).credits, 1);
    // The capped key keeps its limits and what it spent: 3 more, not 4.
    const usage = (await ledger.keyUsage([capped.record.id])).get(capped.record.id);
    assert.deepEqual([usage?.limits.maxCredits, usage?.limits.tools, usage?.spent], [5, ['list_tools'], 2]);
    await assert.rejects(ledger.charge(bob, 4, { key: capped.record.id }), KeyBudgetExhausted);
    assert.equal((await ledger.charge(bob, 3, { key: capped.record.id })).keyRemaining, 0);

    const keys = new ApiKeys(new PostgresKeyStore(db.sql));
    assert.equal((await keys.find(aliceKey))?.name, 'laptop');
    assert.equal((await keys.find(bobKey))?.verified, false);
    assert.deepEqual(
      (await keys.list(alice)).map((k) => k.name),
      ['laptop', 'phone'],
    );

    const balance = await cli(['balance', ALICE.address], env);
    assert.equal(balance.code, 0, balance.stderr);
    assert.deepEqual(JSON.parse(balance.stdout), { address: alice, credits: 47, total_deposited: 50, total_spent: 3 });
    const grant = await cli(['grant', BOB.address, '10'], env);
    assert.equal(grant.code, 0, grant.stderr);
    assert.deepEqual(JSON.parse(grant.stdout), { address: bob, credits: 15, total_deposited: 20, total_spent: 5, granted: 10 });

    // The usage records came along as they were (ids, times, order), and the CLI reads them from PostgreSQL.
    const listing = await cli(['usage', ALICE.address], env);
    assert.equal(listing.code, 0, listing.stderr);
    const listed = JSON.parse(listing.stdout);
    assert.deepEqual(listed.data, usageBefore);
    assert.deepEqual(
      listed.data.map((r: { kind: string; credits: number }) => [r.kind, r.credits]),
      [
        ['chat', 3],
        ['grant', 50],
      ],
    );
    const totals = await cli(['usage', BOB.address, '--group-by', 'model', '--kind', 'grant'], env);
    assert.equal(totals.code, 0, totals.stderr);
    assert.deepEqual(JSON.parse(totals.stdout), {
      object: 'usage_totals',
      group_by: 'model',
      data: [{ group: null, records: 2, spent: 0, added: 17, prompt_tokens: 0, completion_tokens: 0 }],
    });
    const bad = await cli(['usage', BOB.address, '--limit', '900'], env);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^credits: .*limit/);
  });

  test('migrate-to-postgres without DATABASE_URL, or with PostgreSQL down, exits 1 naming what is missing', async () => {
    const missing = await cli(['migrate-to-postgres'], { DATA_DIR: dataDir });
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, 'credits: migrate-to-postgres needs DATABASE_URL (the PostgreSQL to copy DATA_DIR into).\n');
    const down = await cli(['balance', ALICE.address], { DATA_DIR: dataDir, DATABASE_URL: 'postgres://postgres@127.0.0.1:9/test' });
    assert.equal(down.code, 1);
    assert.match(down.stderr, /^credits: PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:9\/test cannot be reached: /);
  });
});
