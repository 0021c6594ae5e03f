/**
 * The API keys' file (Keyv's sqlite3 driver) and the ledger's (better-sqlite3) are apart: two
 * copies of SQLite in one process do not see each other's locks, and before the split key writes
 * racing ledger and response writes on one file lost commits and corrupted it. Here: that race,
 * run through the real accounts, leaves both files whole and every write readable; an older
 * DATA_DIR's keys move to their own file, also after a crash at any step of the move; a keys
 * file that cannot be opened fails the start without leaving the lock or the ledger's file open.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KEYS_FILE, STORE_FILE } from '../../../gateway/storage/sqlite/keyv-store.js';
import { hashKey } from '../../../gateway/keys/api-keys.js';
import { openTestAccounts, sqliteRows, writeKeyvEraRows } from '../../helpers/accounts.js';

async function withDataDir(run: (dataDir: string) => Promise<void>): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sy-keys-file-'));
  try {
    await run(dataDir);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const integrity = async (file: string) =>
  (await sqliteRows<{ integrity_check: string }>(file, 'PRAGMA integrity_check')).map((row) => row.integrity_check).join('; ');
const tables = async (file: string) =>
  (await sqliteRows<{ name: string }>(file, `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)).map((row) => row.name);

const wallet = (i: number) => '0x' + i.toString(16).padStart(40, 'e');

test('key writes racing ledger and response writes: both files stay whole, every write is there after a restart', async () => {
  await withDataDir(async (dataDir) => {
    const accounts = await openTestAccounts(dataDir);
    const keys: string[] = [];
    const responses: Array<{ id: string; wallet: string }> = [];
    const granted = new Map<string, number>();
    const until = Date.now() + 1_500;
    let failures = 0;
    // Keyv's writes run on libuv's threads while the ledger's and the responses' run on this one:
    // several of each in flight at once, as a busy gateway has them.
    const keyWriter = async (lane: number) => {
      for (let i = 0; Date.now() < until; i++) {
        const { key } = await accounts.apiKeys.create({ address: wallet(lane * 100_000 + i), name: `k${i}`, verified: true });
        keys.push(key);
      }
    };
    const ledgerWriter = async (lane: number) => {
      for (let i = 0; Date.now() < until; i++) {
        const owner = wallet(1_000_000 + lane);
        // A wallet per response: each wallet keeps at most 100.
        const asker = wallet(2_000_000 + lane * 100_000 + i);
        const now = Date.now();
        const id = `resp_${lane}_${i}`;
        await accounts.responses.put({
          id,
          wallet: asker,
          createdAt: now,
          expiresAt: now + 60_000,
          body: JSON.stringify({ i }),
          itemIds: [`msg_${lane}_${i}`],
        });
        responses.push({ id, wallet: asker });
        await accounts.ledger.grant(owner, 1);
        granted.set(owner, (granted.get(owner) ?? 0) + 1);
        if (i % 20 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const lanes = [0, 1, 2, 3].flatMap((lane) => [keyWriter(lane), ledgerWriter(lane)]);
    for (const outcome of await Promise.allSettled(lanes)) if (outcome.status === 'rejected') failures++;
    await accounts.close();
    assert.equal(failures, 0, 'no write failed');
    assert.ok(keys.length > 20 && responses.length > 50, `${keys.length} keys, ${responses.length} responses written`);

    assert.equal(await integrity(join(dataDir, STORE_FILE)), 'ok');
    assert.equal(await integrity(join(dataDir, KEYS_FILE)), 'ok');
    const reopened = await openTestAccounts(dataDir);
    try {
      for (const key of keys) assert.ok(await reopened.apiKeys.find(key), 'every key created is found');
      for (const { id, wallet: owner } of responses) assert.ok(await reopened.responses.get(id, owner, Date.now()), `response ${id} kept`);
      for (const [owner, credits] of granted) assert.equal((await reopened.ledger.balance(owner)).credits, credits);
    } finally {
      await reopened.close();
    }
  });
});

/** An API key as the version before this split kept it, beside a SIWE nonce of a still older one. */
function oldKeyRows(key: string, owner: string): Array<[string, unknown]> {
  const record = {
    id: 'key_old',
    name: 'old',
    address: owner,
    created_at: 1795459843,
    last_used_at: null,
    verified: true,
    prefix: key.slice(0, 7),
  };
  return [
    [`keys:${hashKey(key)}`, { value: record }],
    [`keys:wallet:${owner}`, { value: [{ id: 'key_old', hash: hashKey(key) }] }],
    // A SIWE nonce of a still older version: never read again, and never expired by Keyv.
    ['nonces:abc', { value: { address: owner }, expires: 1 }],
  ];
}

test("an older DATA_DIR's keys move to their own file; the ledger's file keeps no Keyv table", async () => {
  await withDataDir(async (dataDir) => {
    const key = 'sy_' + 'M'.repeat(43);
    const owner = wallet(7);
    await writeKeyvEraRows(dataDir, oldKeyRows(key, owner));
    assert.ok(!existsSync(join(dataDir, KEYS_FILE)));

    const accounts = await openTestAccounts(dataDir);
    let added: string;
    try {
      assert.equal((await accounts.apiKeys.find(key))?.id, 'key_old');
      assert.deepEqual(
        (await accounts.apiKeys.list(owner)).map((listed) => listed.id),
        ['key_old'],
      );
      added = (await accounts.apiKeys.create({ address: owner, name: 'new', verified: true })).key;
    } finally {
      await accounts.close();
    }
    assert.ok(!(await tables(join(dataDir, STORE_FILE))).includes('keyv'), 'the old Keyv table is gone');
    assert.deepEqual(
      (await sqliteRows<{ key: string }>(join(dataDir, KEYS_FILE), 'SELECT key FROM keyv ORDER BY key')).map((row) => row.key),
      [`keys:${hashKey(key)}`, `keys:${hashKey(added)}`, `keys:wallet:${owner}`].sort(),
      'keys only, no nonce',
    );
    assert.ok(!existsSync(join(dataDir, `${KEYS_FILE}.partial`)));

    const again = await openTestAccounts(dataDir);
    try {
      assert.equal((await again.apiKeys.find(key))?.id, 'key_old');
      assert.ok(await again.apiKeys.find(added));
      assert.equal((await again.apiKeys.list(owner)).length, 2);
    } finally {
      await again.close();
    }
  });
});

test('a move cut short is finished at the next start: a half-built file is rebuilt, stale old rows are dropped', async () => {
  await withDataDir(async (dataDir) => {
    const key = 'sy_' + 'N'.repeat(43);
    const owner = wallet(8);
    // Killed while building the new file: its partial copy (here: not even SQLite) is left.
    await writeKeyvEraRows(dataDir, oldKeyRows(key, owner));
    writeFileSync(join(dataDir, `${KEYS_FILE}.partial`), 'half a file');
    writeFileSync(join(dataDir, `${KEYS_FILE}.partial-journal`), 'half a journal');
    const first = await openTestAccounts(dataDir);
    try {
      assert.equal((await first.apiKeys.find(key))?.id, 'key_old');
      assert.equal(await first.apiKeys.revoke(owner, 'key_old'), true);
    } finally {
      await first.close();
    }

    // Killed after the rename, before the old rows were deleted: they are still there, and stale
    // (the key was revoked in the new file since). The new file wins; the old rows go.
    await writeKeyvEraRows(dataDir, oldKeyRows(key, owner));
    const second = await openTestAccounts(dataDir);
    try {
      assert.equal(await second.apiKeys.find(key), undefined, 'the revoked key stays revoked');
    } finally {
      await second.close();
    }
    assert.ok(!(await tables(join(dataDir, STORE_FILE))).includes('keyv'));
  });
});

test('a keys file that cannot be opened fails the start and leaves nothing open: the lock is free, the ledger file closed', async () => {
  await withDataDir(async (dataDir) => {
    const first = await openTestAccounts(dataDir);
    await first.ledger.grant(wallet(9), 7);
    await first.close();
    // Its place taken by a directory: Keyv's open fails after the ledger opened and migrated.
    for (const suffix of ['', '-wal', '-shm']) rmSync(join(dataDir, KEYS_FILE + suffix), { force: true });
    mkdirSync(join(dataDir, KEYS_FILE));
    await assert.rejects(openTestAccounts(dataDir), /SQLITE_CANTOPEN|unable to open/);
    const open = readdirSync('/proc/self/fd').flatMap((fd) => {
      try {
        return [readlinkSync(`/proc/self/fd/${fd}`)];
      } catch {
        return []; // the directory listing's own descriptor, gone already
      }
    });
    assert.deepEqual(
      open.filter((target) => target.startsWith(dataDir)),
      [],
      'no descriptor left on the DATA_DIR',
    );

    rmSync(join(dataDir, KEYS_FILE), { recursive: true });
    const again = await openTestAccounts(dataDir); // the lock was let go
    try {
      assert.equal((await again.ledger.balance(wallet(9))).credits, 7);
    } finally {
      await again.close();
    }
  });
});
