/**
 * The x402 payment records on both stores: the DATA_DIR SQLite file (embedded) and PostgreSQL
 * (cluster mode, migration 8). A claim records a payment once; the same id again returns the
 * stored record unchanged; only pending records are listed or forgotten.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { openSqlite, type SqliteConnection } from '../../../gateway/storage/sqlite/sqlite-connection.js';
import { openSqliteX402PaymentRecords } from '../../../gateway/storage/sqlite/sqlite-x402-payment-records.js';
import { type X402PaymentRecords } from '../../../gateway/x402/payment-records.js';
import { openDatabase, type Database } from '../../../gateway/storage/postgres/database.js';
import { migrate } from '../../../gateway/storage/postgres/migrate.js';
import { PostgresX402PaymentRecords } from '../../../gateway/storage/postgres/postgres-x402-payment-records.js';
import { clusterServices, freshDatabase } from '../../helpers/cluster-services.js';

function payment() {
  const nonce = `0x${randomBytes(32).toString('hex')}`;
  return {
    id: `eip155:8453:${nonce}`,
    wallet: `0x${randomBytes(20).toString('hex')}`,
    network: 'eip155:8453',
    asset: `0x${randomBytes(20).toString('hex')}`,
    // Past 2^64: amounts are exact whatever their size.
    amount: 123_456_789_012_345_678_901_234_567_890n,
    nonce,
    signature: `0x${randomBytes(65).toString('hex')}`,
    validBefore: 1_900_000_000,
    fromBlock: 18_446_744_073_709_551_617n,
    payTo: '0x2222222222222222222222222222222222222222',
    unitsPerCredit: 10_000n,
  };
}

function recordsContract(name: string, open: () => Promise<X402PaymentRecords>): void {
  test(`${name}: a claim records once; the same id again answers the stored record, unchanged`, async () => {
    const records = await open();
    const first = payment();
    assert.equal(await records.claim(first), undefined);
    const again = await records.claim({ ...first, signature: '0xdifferent', amount: 1n });
    assert.deepEqual(again, { ...first, state: 'pending', transaction: null });
  });

  test(`${name}: pending records are listed oldest first until credited; a credited one is never forgotten`, async () => {
    const records = await open();
    const [a, b] = [payment(), payment()];
    await records.claim(a);
    await records.claim(b);
    const ids = (await records.pending(1000)).map((r) => r.id);
    assert.ok(ids.indexOf(a.id) >= 0 && ids.indexOf(a.id) < ids.indexOf(b.id));
    await records.credited(a.id, '0xabc');
    await records.forget(a.id);
    assert.deepEqual(await records.claim(a), { ...a, state: 'credited', transaction: '0xabc' });
    assert.ok(!(await records.pending(1000)).some((r) => r.id === a.id));
    // Credited again without a transaction (reconciled): the known one stays.
    await records.credited(a.id, null);
    assert.equal((await records.claim(a))?.transaction, '0xabc');
  });

  test(`${name}: find answers the kept record of an id, and nothing once it is forgotten`, async () => {
    const records = await open();
    const p = payment();
    assert.equal(await records.find(p.id), undefined);
    await records.claim(p);
    assert.deepEqual(await records.find(p.id), { ...p, state: 'pending', transaction: null });
    await records.forget(p.id);
    assert.equal(await records.find(p.id), undefined);
  });

  test(`${name}: a forgotten pending payment can be claimed afresh`, async () => {
    const records = await open();
    const p = payment();
    await records.claim(p);
    await records.forget(p.id);
    assert.ok(!(await records.pending(1000)).some((r) => r.id === p.id));
    assert.equal(await records.claim(p), undefined);
  });
}

describe('SQLite x402 payment records', () => {
  let dir: string;
  let db: SqliteConnection;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-x402-'));
    db = await openSqlite(join(dir, 'store.sqlite'));
  });
  after(async () => {
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  recordsContract('SQLite', () => openSqliteX402PaymentRecords(db));
});

const services = await clusterServices();

describe('PostgreSQL x402 payment records', { skip: services.skip }, () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let pg: Database;
  before(async () => {
    database = await freshDatabase();
    pg = await openDatabase(database.url);
    await migrate(pg.sql);
  });
  after(async () => {
    await pg?.close();
    await database?.drop();
  });
  recordsContract('PostgreSQL', async () => new PostgresX402PaymentRecords(pg.sql));

  test('PostgreSQL: of concurrent claims of one payment, exactly one records it', async () => {
    const records = new PostgresX402PaymentRecords(pg.sql);
    const p = payment();
    const results = await Promise.all(Array.from({ length: 8 }, () => records.claim(p)));
    assert.equal(results.filter((r) => r === undefined).length, 1);
  });
});
