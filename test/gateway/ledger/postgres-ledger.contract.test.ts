/**
 * The ledger contract suite on the PostgreSQL ledger (cluster mode), in a throw-away database on
 * the local server; plus what only a shared database shows: migrations applied once by instances
 * starting together, steps of two pools (two gateways) never overspending, and the sweeper.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { openDatabase, type Database } from '../../../gateway/storage/postgres/database.js';
import { migrate } from '../../../gateway/storage/postgres/migrate.js';
import { MIGRATIONS } from '../../../gateway/storage/postgres/migrations/index.js';
import { PostgresLedger } from '../../../gateway/ledger/postgres-ledger.js';
import { InsufficientCredits, StoreUnavailable } from '../../../gateway/errors.js';
import { clusterServices, freshDatabase } from '../../helpers/cluster-services.js';
import { PostgresUsageHistory } from '../../../gateway/storage/postgres/postgres-usage-history.js';
import { ledgerContract } from './ledger-contract.js';

const services = await clusterServices();
const wallet = () => `0x${randomBytes(20).toString('hex')}`;

describe('PostgreSQL ledger', { skip: services.skip }, () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let db: Database;
  before(async () => {
    database = await freshDatabase();
    db = await openDatabase(database.url);
    await migrate(db.sql);
    // The contract's failed commits: a usage record of a listed wallet cannot be written.
    await db.sql.unsafe(`
      create table refused_usage_wallets (wallet text primary key);
      create function refuse_usage() returns trigger language plpgsql as $$
      begin
        if exists (select 1 from refused_usage_wallets r where r.wallet = new.wallet) then
          raise exception 'usage write refused';
        end if;
        return new;
      end $$;
      create trigger refuse_usage before insert on usage_records for each row execute function refuse_usage();`);
  });
  after(async () => {
    await db?.close();
    await database?.drop();
  });

  ledgerContract('PostgreSQL ledger', async ({ reservationTtlMs, now }) => ({
    ledger: new PostgresLedger(db.sql, { reservationTtlMs, now }),
    usage: new PostgresUsageHistory(db.sql),
    async refuseUsageWrites(owner) {
      await db.sql`insert into refused_usage_wallets values (${owner})`;
      return async () => {
        await db.sql`delete from refused_usage_wallets where wallet = ${owner}`;
      };
    },
    close: async () => {},
  }));

  test('five instances migrating at once apply each migration exactly once', async () => {
    const other = await freshDatabase();
    const pools = await Promise.all(Array.from({ length: 5 }, () => openDatabase(other.url, { max: 1 })));
    try {
      const applied = await Promise.all(pools.map((pool) => migrate(pool.sql)));
      assert.deepEqual(applied.flat().sort(), MIGRATIONS.map((m) => m.version).sort());
      const rows = await pools[0].sql`select version from schema_migrations order by version`;
      assert.deepEqual(
        rows.map((r) => r.version),
        MIGRATIONS.map((m) => m.version),
      );
      assert.deepEqual(await migrate(pools[0].sql), [], 'a later start applies nothing');
    } finally {
      await Promise.all(pools.map((pool) => pool.close()));
      await other.drop();
    }
  });

  test('durability: reserves commit without waiting for the disk; extends, settles and charges wait for it', async () => {
    const ledger = new PostgresLedger(db.sql, { reservationTtlMs: 60_000 });
    const owner = wallet();
    await ledger.grant(owner, 10);
    const hold = await ledger.reserve(owner, 2);
    const now = Date.now();
    // The setting each function leaves for its transaction's commit.
    const commitWaits = (step: (tx: typeof db.sql) => Promise<unknown>) =>
      db.sql.begin(async (tx) => {
        await step(tx as unknown as typeof db.sql);
        const [row] = await tx<Array<{ setting: string }>>`select current_setting('synchronous_commit') as setting`;
        return row.setting;
      });
    const reserveArgs = [['reserve'], [owner], ['res_probe'], ['1']];
    assert.equal(
      await commitWaits(
        (tx) =>
          tx`select * from ledger_batch(${reserveArgs[0]}::text[], ${reserveArgs[1]}::text[], ${reserveArgs[2]}::text[], ${reserveArgs[3]}::bigint[], ${['']}::text[], ${now}::bigint, ${now + 60_000}::bigint, ${'[null]'}::jsonb)`,
      ),
      'off',
    );
    assert.equal(
      await commitWaits(
        (tx) => tx`select * from ledger_extend(${owner}, ${hold.id}, ${1}::bigint, ${now}::bigint, ${now + 60_000}::bigint)`,
      ),
      'on',
    );
    assert.equal(
      await commitWaits(
        (tx) =>
          tx`select * from ledger_batch(${['settle']}::text[], ${[owner]}::text[], ${[hold.id]}::text[], ${['1']}::bigint[], ${['']}::text[], ${now}::bigint, ${now + 60_000}::bigint, ${'[null]'}::jsonb)`,
      ),
      'on',
    );
    assert.equal(
      await commitWaits(
        (tx) =>
          tx`select * from ledger_batch(${['reserve', 'charge']}::text[], ${[owner, owner]}::text[], ${['res_probe2', '']}::text[], ${['1', '1']}::bigint[], ${['', '']}::text[], ${now}::bigint, ${now + 60_000}::bigint, ${'[null, null]'}::jsonb)`,
      ),
      'on',
    );
    // A charge alone in its batch is a plain UPDATE: it commits with the session's own setting.
    const [session] = await db.sql<Array<{ setting: string }>>`select current_setting('synchronous_commit') as setting`;
    assert.equal(session.setting, 'on');
  });

  test('two pools (two gateways) reserving 300 × 1 on 100 credits: exactly 100 succeed', async () => {
    const second = await openDatabase(database.url);
    try {
      const ledgers = [db, second].map((pool) => new PostgresLedger(pool.sql, { reservationTtlMs: 60_000 }));
      const owner = wallet();
      await ledgers[0].grant(owner, 100);
      const outcomes = await Promise.allSettled(
        Array.from({ length: 300 }, async (_, i) => {
          const ledger = ledgers[i % 2];
          const hold = await ledger.reserve(owner, 1);
          return ledger.settle(hold, 1);
        }),
      );
      assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 100);
      for (const o of outcomes) if (o.status === 'rejected') assert.ok(o.reason instanceof InsufficientCredits, String(o.reason));
      assert.deepEqual(await ledgers[1].balance(owner), { address: owner, credits: 0, total_deposited: 100, total_spent: 100 });
    } finally {
      await second.close();
    }
  });

  test('two pools batching steps of five wallets in opposite orders: no deadlock, every wallet exact', async () => {
    const second = await openDatabase(database.url);
    try {
      const ledgers = [db, second].map((pool) => new PostgresLedger(pool.sql, { reservationTtlMs: 60_000 }));
      const owners = Array.from({ length: 5 }, wallet);
      for (const owner of owners) await ledgers[0].grant(owner, 1_000);
      // Each ledger's batches hold all five wallets; one pool walks them forwards, the other backwards.
      const rounds = await Promise.all(
        Array.from({ length: 40 }, (_, i) => {
          const ledger = ledgers[i % 2];
          const order = i % 2 === 0 ? owners : [...owners].reverse();
          return Promise.all(order.map(async (owner) => (await ledger.settle(await ledger.reserve(owner, 3), 2)).charged));
        }),
      );
      assert.equal(
        rounds.flat().reduce((sum, charged) => sum + charged, 0),
        40 * 5 * 2,
      );
      for (const owner of owners) {
        assert.deepEqual(await ledgers[1].balance(owner), { address: owner, credits: 920, total_deposited: 1_000, total_spent: 80 });
      }
    } finally {
      await second.close();
    }
  });

  test('a batch whose database goes away fails every step in it with StoreUnavailable', async () => {
    const doomed = await openDatabase(database.url, { max: 1 });
    const ledger = new PostgresLedger(doomed.sql, { reservationTtlMs: 60_000 });
    const owner = wallet();
    await ledger.grant(owner, 10);
    await doomed.sql`select pg_terminate_backend(pg_backend_pid())`.catch(() => {});
    await doomed.close();
    const outcomes = await Promise.allSettled([ledger.reserve(owner, 1), ledger.reserve(owner, 2)]);
    for (const outcome of outcomes) {
      assert.equal(outcome.status, 'rejected');
      assert.ok(outcome.reason instanceof StoreUnavailable, String(outcome.reason));
    }
    assert.equal((await new PostgresLedger(db.sql, { reservationTtlMs: 60_000 }).balance(owner)).credits, 10, 'nothing held');
  });

  test('the sweeper returns expired holds of every wallet and forgets old outcomes', async () => {
    let clock = 1_800_000_000_000;
    const ledger = new PostgresLedger(db.sql, { reservationTtlMs: 1_000, now: () => clock });
    const owners = [wallet(), wallet()];
    for (const owner of owners) {
      await ledger.grant(owner, 5);
      await ledger.reserve(owner, 4);
    }
    clock += 1_001;
    await ledger.sweepAll();
    const open = await db.sql`select count(*)::int as n from reservations where wallet in ${db.sql(owners)}`;
    assert.equal(open[0].n, 0);
    for (const owner of owners) assert.equal((await ledger.balance(owner)).credits, 5);
    clock += 2 * 24 * 3_600_000;
    await ledger.sweepAll();
    const closed = await db.sql`select count(*)::int as n from closed_reservations where wallet in ${db.sql(owners)}`;
    assert.equal(closed[0].n, 0);
  });

  test('an unreachable PostgreSQL is StoreUnavailable naming it, at start and on a step', async () => {
    await assert.rejects(openDatabase('postgres://postgres:secret@127.0.0.1:9/test'), (err: unknown) => {
      assert.ok(err instanceof StoreUnavailable);
      assert.equal(err.status, 503);
      assert.equal(err.code, 'store_unavailable');
      assert.match(err.message, /^PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:9\/test cannot be reached: /);
      assert.doesNotMatch(err.message, /secret/);
      return true;
    });
    const gone = await openDatabase(database.url);
    await gone.close();
    await assert.rejects(new PostgresLedger(gone.sql, { reservationTtlMs: 1_000 }).balance(wallet()), (err: unknown) => {
      assert.ok(err instanceof StoreUnavailable);
      assert.equal(err.message, 'PostgreSQL is unavailable; retry shortly.');
      return true;
    });
  });
});
