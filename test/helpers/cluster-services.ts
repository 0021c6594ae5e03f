/**
 * The real PostgreSQL and Redis the cluster tests run against (127.0.0.1:5432, database `test`;
 * 127.0.0.1:6379), each test file in its own throw-away database and Redis key prefix. When a
 * service cannot be reached the cluster tests are skipped with one loud line, unless CI=true:
 * then the run fails (.ci/run starts a stopped service first).
 *
 * @example
 *   const services = await clusterServices()
 *   describe('cluster', { skip: services.skip }, () => { ... })
 *   const db = await freshDatabase()   // { url, drop() }
 */
import { randomBytes } from 'node:crypto';
import { openSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { Redis } from 'ioredis';

export const POSTGRES_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

let checked: Promise<{ skip: string | false }> | undefined;

async function reachable(): Promise<string[]> {
  const missing: string[] = [];
  const sql = postgres(POSTGRES_URL, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await sql`select 1`;
  } catch (err) {
    missing.push(`PostgreSQL at ${POSTGRES_URL} (${(err as Error).message})`);
  } finally {
    await sql.end({ timeout: 0 });
  }
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 3_000, retryStrategy: () => null });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    missing.push(`Redis at ${REDIS_URL} (${(err as Error).message})`);
  } finally {
    redis.disconnect();
  }
  return missing;
}

/**
 * One loud line per test run, not one per file: each test file is its own process, children of
 * the one runner, so the first to create a marker named after the runner's pid says it.
 */
function firstToSay(): boolean {
  try {
    closeSync(openSync(join(tmpdir(), `switchyard-cluster-skip-${process.ppid}`), 'wx'));
    return true;
  } catch {
    return false;
  }
}

/** `skip` is the reason the cluster tests cannot run here, or false. Throws under CI=true. */
export function clusterServices(): Promise<{ skip: string | false }> {
  checked ??= reachable().then((missing) => {
    if (missing.length === 0) return { skip: false };
    const reason = `cluster tests need ${missing.join(' and ')}`;
    if (process.env.CI === 'true') throw new Error(`${reason}: unreachable under CI=true`);
    if (firstToSay()) process.stderr.write(`\n!!! SKIPPING CLUSTER TESTS: ${reason} !!!\n\n`);
    return { skip: reason };
  });
  return checked;
}

/** A new empty database on the test server; `drop()` removes it (and ends its connections). */
export async function freshDatabase(): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `sy_test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const again = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
      await again.unsafe(`drop database if exists ${name} with (force)`);
      await again.end();
    },
  };
}

/** A Redis key prefix of its own; `clear()` deletes every key under it. */
export function freshRedisPrefix(): { prefix: string; clear(): Promise<void> } {
  const prefix = `sy-test-${randomBytes(6).toString('hex')}:`;
  return {
    prefix,
    async clear() {
      const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
      try {
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
          if (keys.length > 0) await redis.del(...keys);
          cursor = next;
        } while (cursor !== '0');
      } finally {
        redis.disconnect();
      }
    },
  };
}
