/**
 * The embedded ledger's durability rules, on a real SQLite file: holds live in memory (a restart
 * gives them back), charges and grants are committed before they are answered and share commits,
 * a failed commit fails its waiters and drops the memory copy, a damaged record stops the step,
 * and a store written by the Keyv-era ledger opens with its balances and grants intact.
 */
import { NO_KEY_LIMITS } from '../../../gateway/ledger/key-budgets.js';
import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqlite, type SqliteConnection } from '../../../gateway/storage/sqlite/sqlite-connection.js';
import { openEmbeddedLedger, type EmbeddedLedger } from '../../../gateway/ledger/embedded-ledger.js';
import { STORE_FILE } from '../../../gateway/storage/sqlite/keyv-store.js';
import { hashKey } from '../../../gateway/keys/api-keys.js';
import { openTestAccounts, sqliteRows, writeKeyvEraRows } from '../../helpers/accounts.js';

const wallet = '0x' + 'ab'.repeat(20);

/** A connection whose wallet writes can be made to fail, and which counts them (one per commit). */
function faulty(db: SqliteConnection) {
  const state = { failNext: false, commits: 0, gate: undefined as Promise<void> | undefined, entered: () => {} };
  const wrapped: SqliteConnection = {
    run: async (sql, params) => {
      if (sql.startsWith('INSERT INTO ledger_wallets')) {
        state.commits++;
        state.entered();
        await state.gate;
      }
      if (state.failNext && sql.includes('ledger_wallets')) {
        state.failNext = false;
        throw new Error('SQLITE_FULL: database or disk is full');
      }
      return db.run(sql, params);
    },
    all: (sql, params) => db.all(sql, params),
    exec: (sql) => db.exec(sql),
    // A transaction is one commit; one that fails applies none of its statements.
    transaction: async (statements) => {
      if (statements.some(({ sql }) => sql.startsWith('INSERT INTO ledger_wallets'))) {
        state.commits++;
        state.entered();
        await state.gate;
      }
      if (state.failNext && statements.some(({ sql }) => sql.includes('ledger_wallets'))) {
        state.failNext = false;
        throw new Error('SQLITE_FULL: database or disk is full');
      }
      return db.transaction(statements);
    },
    close: () => db.close(),
  };
  return { db: wrapped, state };
}

describe('embedded ledger on SQLite', () => {
  let dir: string;
  let db: SqliteConnection;
  let ledger: EmbeddedLedger | undefined;
  const storedRecord = async (address: string) => {
    const rows = await db.all<{ record: string }>('SELECT record FROM ledger_wallets WHERE address = ?', [address]);
    return rows.length ? (JSON.parse(rows[0].record) as { credits: number; total_deposited: number; total_spent: number }) : undefined;
  };
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sy-embedded-ledger-'));
    db = await openSqlite(join(dir, STORE_FILE));
  });
  afterEach(async () => {
    await ledger?.stop();
    ledger = undefined;
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a grant and a charge are in SQLite when they answer; holds are not written (a restart gives them back)', async () => {
    ledger = await openEmbeddedLedger(db, { reservationTtlMs: 60_000 });
    await ledger.grant(wallet, 10);
    assert.deepEqual(await storedRecord(wallet), { credits: 10, total_deposited: 10, total_spent: 0 });
    const open = await ledger.reserve(wallet, 4);
    const charged = await ledger.reserve(wallet, 3);
    assert.equal(open.amount, 4);
    await ledger.settle(charged, 2);
    // Stored credits count the open hold as the wallet's: 10 - 2 spent.
    assert.deepEqual(await storedRecord(wallet), { credits: 8, total_deposited: 10, total_spent: 2 });
    // A charge with no hold is stored when it answers too.
    await ledger.charge(wallet, 1);
    assert.deepEqual(await storedRecord(wallet), { credits: 7, total_deposited: 10, total_spent: 3 });
    // "Crash": a new ledger on the same file, the old one never settles its hold.
    const next = await openEmbeddedLedger(db, { reservationTtlMs: 60_000 });
    try {
      assert.deepEqual(await next.balance(wallet), { address: wallet, credits: 7, total_deposited: 10, total_spent: 3 });
    } finally {
      await next.stop();
    }
  });

  test('concurrent charges share commits: 200 settles on 50 wallets take far fewer than 200 commits', async () => {
    const { db: counted, state } = faulty(db);
    ledger = await openEmbeddedLedger(counted, { reservationTtlMs: 60_000 });
    const wallets = Array.from({ length: 50 }, (_, i) => '0x' + i.toString(16).padStart(40, '0'));
    await Promise.all(wallets.map((w) => ledger!.grant(w, 4)));
    state.commits = 0;
    await Promise.all(
      wallets.flatMap((w) =>
        Array.from({ length: 4 }, async () => {
          const hold = await ledger!.reserve(w, 1);
          return ledger!.settle(hold, 1);
        }),
      ),
    );
    assert.ok(state.commits >= 1 && state.commits <= 10, `${state.commits} commits for 200 charges`);
    for (const w of wallets) assert.deepEqual(await storedRecord(w), { credits: 0, total_deposited: 4, total_spent: 4 });
  });

  test('a failed commit fails the steps waiting on it (503 store_unavailable) and charges nothing twice', async () => {
    const { db: broken, state } = faulty(db);
    ledger = await openEmbeddedLedger(broken, { reservationTtlMs: 60_000 });
    await ledger.grant(wallet, 10);
    const first = await ledger.reserve(wallet, 2);
    const second = await ledger.reserve(wallet, 2);
    state.failNext = true;
    const outcomes = await Promise.allSettled([ledger.settle(first, 2), ledger.settle(second, 1)]);
    for (const outcome of outcomes) {
      assert.equal(outcome.status, 'rejected');
      assert.equal(outcome.reason.status, 503);
      assert.equal(outcome.reason.code, 'store_unavailable');
      // The same shape as cluster mode's store_unavailable.
      assert.equal(outcome.reason.toBody().error.type, 'server_error');
      assert.equal(outcome.reason.headers['Retry-After'], '1');
    }
    // The memory copy was dropped: the wallet is what SQLite holds, the holds given back.
    assert.deepEqual(await ledger.balance(wallet), { address: wallet, credits: 10, total_deposited: 10, total_spent: 0 });
    assert.deepEqual(await storedRecord(wallet), { credits: 10, total_deposited: 10, total_spent: 0 });
    // A settle repeated after the failure charges nothing (its hold is gone with the copy).
    assert.deepEqual(await ledger.settle(first, 2), { charged: 0, remaining: 10 });
    const hold = await ledger.reserve(wallet, 3);
    assert.deepEqual(await ledger.settle(hold, 3), { charged: 3, remaining: 7 });
    assert.deepEqual(await storedRecord(wallet), { credits: 7, total_deposited: 10, total_spent: 3 });
  });

  test("a key's spend is committed with the wallet's charge, kept across a restart; a failed commit leaves neither", async () => {
    const { db: broken, state } = faulty(db);
    ledger = await openEmbeddedLedger(broken, { reservationTtlMs: 60_000 });
    await ledger.grant(wallet, 100);
    const keyId = 'key_durable';
    await ledger.setKeyLimits({ keyId, wallet, limits: { ...NO_KEY_LIMITS, maxCredits: 10 } });
    await ledger.charge(wallet, 4, { key: keyId });
    state.failNext = true;
    await assert.rejects(ledger.charge(wallet, 3, { key: keyId }), { code: 'store_unavailable' });
    assert.equal((await ledger.keyUsage([keyId])).get(keyId)?.spent, 4, 'the failed charge is not counted');
    assert.equal((await ledger.balance(wallet)).total_spent, 4);
    // "Crash": a new ledger on the same file.
    const next = await openEmbeddedLedger(db, { reservationTtlMs: 60_000 });
    try {
      assert.equal((await next.keyUsage([keyId])).get(keyId)?.spent, 4);
      await assert.rejects(next.charge(wallet, 7, { key: keyId }), { code: 'key_budget_exhausted' });
      assert.equal((await next.charge(wallet, 6, { key: keyId })).keyRemaining, 0);
    } finally {
      await next.stop();
    }
  });

  test('a failed commit also fails a step that changed the same wallet while it ran', async () => {
    const { db: broken, state } = faulty(db);
    ledger = await openEmbeddedLedger(broken, { reservationTtlMs: 60_000 });
    await ledger.grant(wallet, 10);
    state.failNext = true;
    let open!: () => void;
    state.gate = new Promise((resolve) => (open = resolve));
    const writing = new Promise<void>((resolve) => (state.entered = resolve));
    const failing = ledger.grant(wallet, 1);
    // While that commit runs, another step changes the same in-memory copy and queues behind it.
    await writing;
    const queued = ledger.grant(wallet, 5);
    open();
    await assert.rejects(failing, { code: 'store_unavailable' });
    await assert.rejects(queued, { code: 'store_unavailable' });
    assert.deepEqual(await ledger.balance(wallet), { address: wallet, credits: 10, total_deposited: 10, total_spent: 0 });
  });

  test('an idempotent grant whose commit failed can be retried with the same key', async () => {
    const { db: broken, state } = faulty(db);
    ledger = await openEmbeddedLedger(broken, { reservationTtlMs: 60_000 });
    state.failNext = true;
    await assert.rejects(ledger.grant(wallet, 6, 'retry-me'), { code: 'store_unavailable' });
    assert.deepEqual(await ledger.grant(wallet, 6, 'retry-me'), { address: wallet, credits: 6, total_deposited: 6, total_spent: 0 });
    assert.deepEqual(await ledger.grant(wallet, 6, 'retry-me'), { address: wallet, credits: 6, total_deposited: 6, total_spent: 0 });
  });

  test('idempotent grants are remembered across a restart', async () => {
    ledger = await openEmbeddedLedger(db, { reservationTtlMs: 60_000 });
    await ledger.grant(wallet, 6, 'once');
    await ledger.stop();
    ledger = await openEmbeddedLedger(db, { reservationTtlMs: 60_000 });
    assert.equal((await ledger.grant(wallet, 6, 'once')).total_deposited, 6);
    await assert.rejects(ledger.grant(wallet, 7, 'once'), { code: 'idempotency_key_reused' });
    assert.equal((await ledger.balance(wallet)).credits, 6);
  });

  test('outside payments and remainders are kept across a restart, long past the grant idempotency window', async () => {
    const payment = {
      wallet,
      source: 'deposit',
      externalId: '1:0xfeed:3',
      units: 1_700n,
      unitsPerCredit: 1_000n,
      remainderKey: '1:0xusdc',
    } as const;
    ledger = await openEmbeddedLedger(db, { reservationTtlMs: 60_000 });
    assert.equal((await ledger.creditExternal(payment)).credits, 1);
    await ledger.stop();
    const yearLater = Date.now() + 365 * 24 * 3_600_000;
    ledger = await openEmbeddedLedger(db, { reservationTtlMs: 60_000, now: () => yearLater });
    assert.equal((await ledger.creditExternal(payment)).status, 'repeat');
    assert.equal((await ledger.creditExternal({ ...payment, externalId: '1:0xfeed:4', units: 300n })).credits, 1);
    assert.deepEqual(await storedRecord(wallet), { credits: 2, total_deposited: 2, total_spent: 0 });
  });

  test('an outside payment whose commit failed is not recorded, and its retry credits it once', async () => {
    const { db: broken, state } = faulty(db);
    ledger = await openEmbeddedLedger(broken, { reservationTtlMs: 60_000 });
    const payment = {
      wallet,
      source: 'x402',
      externalId: 'base:0xnonce',
      units: 2_500n,
      unitsPerCredit: 1_000n,
      remainderKey: 'base:usdc',
    } as const;
    state.failNext = true;
    await assert.rejects(ledger.creditExternal(payment), { code: 'store_unavailable' });
    assert.equal((await db.all('SELECT * FROM ledger_external_credits')).length, 0);
    assert.equal((await db.all('SELECT * FROM ledger_remainders')).length, 0);
    assert.equal((await ledger.creditExternal(payment)).status, 'credited');
    assert.equal((await ledger.creditExternal(payment)).status, 'repeat');
    assert.deepEqual(await storedRecord(wallet), { credits: 2, total_deposited: 2, total_spent: 0 });
  });

  test('the timer gives expired holds back with no access to the wallet', async () => {
    ledger = await openEmbeddedLedger(db, { reservationTtlMs: 100, sweepIntervalMs: 20 });
    await ledger.grant(wallet, 9);
    const hold = await ledger.reserve(wallet, 4);
    await new Promise((resolve) => setTimeout(resolve, 250));
    assert.deepEqual(await ledger.settle(hold, 4), { charged: 0, remaining: 9 });
  });

  test('a damaged record stops the step instead of reading as an empty wallet', async () => {
    ledger = await openEmbeddedLedger(db, { reservationTtlMs: 1_000 });
    await db.run('INSERT INTO ledger_wallets (address, record) VALUES (?, ?)', [wallet, '{"credits":-5}']);
    await assert.rejects(ledger.reserve(wallet, 1), /ledger: the record of 0x(ab){20} is damaged/);
  });

  test('memory is bounded: idle wallets beyond the limit are dropped and read again when used', async () => {
    ledger = await openEmbeddedLedger(db, { reservationTtlMs: 60_000, maxWallets: 10 });
    const wallets = Array.from({ length: 30 }, (_, i) => '0x' + (i + 1).toString(16).padStart(40, 'c'));
    for (const w of wallets) await ledger.grant(w, 2);
    for (const w of wallets) assert.deepEqual(await ledger.balance(w), { address: w, credits: 2, total_deposited: 2, total_spent: 0 });
  });

  test('memory is bounded by reads alone: balances of many unknown wallets, nothing ever committed', async () => {
    ledger = await openEmbeddedLedger(db, { reservationTtlMs: 60_000, maxWallets: 10 });
    for (let i = 0; i < 200; i++) {
      const w = '0x' + (i + 1).toString(16).padStart(40, 'd');
      assert.deepEqual(await ledger.balance(w), { address: w, credits: 0, total_deposited: 0, total_spent: 0 });
    }
    // The only window on it: the in-memory wallets (private), which no commit ever trimmed here.
    const inMemory = (ledger as unknown as { wallets: Map<string, unknown> }).wallets.size;
    assert.ok(inMemory <= 10, `${inMemory} wallets kept in memory`);
  });
});

test('a DATA_DIR written by the Keyv-era ledger opens with its balances, grants and keys intact', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sy-keyv-era-'));
  try {
    const key = 'sy_' + 'K'.repeat(43);
    const rows: Array<[string, unknown]> = [
      [
        `balances:${wallet}`,
        {
          value: {
            credits: 7,
            total_deposited: 10,
            total_spent: 0,
            holds: { res_crashed: { amount: 3, expires_at: 1795459903585 } },
            closed: {},
            grants: { idem1: { at: 1795459843584, result: { address: wallet, credits: 10, total_deposited: 10, total_spent: 0 } } },
          },
        },
      ],
      [
        `idempotency:idem1`,
        {
          value: { wallet, amount: 10, result: { address: wallet, credits: 10, total_deposited: 10, total_spent: 0 } },
          expires: 1798051843584,
        },
      ],
      [
        `keys:${hashKey(key)}`,
        {
          value: {
            id: 'key_old',
            name: 'old',
            address: wallet,
            created_at: 1795459843,
            last_used_at: null,
            verified: true,
            prefix: 'sy_KKKK',
          },
        },
      ],
      [`keys:wallet:${wallet}`, { value: [{ id: 'key_old', hash: hashKey(key) }] }],
    ];
    await writeKeyvEraRows(dataDir, rows);

    const accounts = await openTestAccounts(dataDir);
    try {
      // The crashed process's hold is back with its wallet.
      assert.deepEqual(await accounts.ledger.balance(wallet), { address: wallet, credits: 10, total_deposited: 10, total_spent: 0 });
      assert.deepEqual(await accounts.ledger.grant(wallet, 10, 'idem1'), {
        address: wallet,
        credits: 10,
        total_deposited: 10,
        total_spent: 0,
      });
      assert.equal((await accounts.ledger.balance(wallet)).credits, 10, 'the old grant was not applied twice');
      assert.equal((await accounts.apiKeys.find(key))?.id, 'key_old');
    } finally {
      await accounts.close();
    }
    // Balances, grants and keys all moved out in that one start: the emptied Keyv table is gone.
    const keyvTable = await sqliteRows(join(dataDir, STORE_FILE), `SELECT name FROM sqlite_master WHERE name = 'keyv'`);
    assert.deepEqual(keyvTable, []);
    // Migrated once: opening again changes nothing.
    const again = await openTestAccounts(dataDir);
    try {
      assert.deepEqual(await again.ledger.balance(wallet), { address: wallet, credits: 10, total_deposited: 10, total_spent: 0 });
    } finally {
      await again.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
