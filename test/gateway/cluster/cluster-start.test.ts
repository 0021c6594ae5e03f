/**
 * Starting the built gateway (`node dist/gateway/main.js`) in cluster mode with a store that cannot
 * be reached, or with REDIS_URL alone: exit 1 and one stderr line naming what is wrong, with no
 * password in it. Run `npm run build` first.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { clusterServices, freshDatabase } from '../../helpers/cluster-services.js';
import { spawnBuiltGateway, type BuiltGateway } from '../spawn-built-gateway.js';

const services = await clusterServices();

describe('cluster mode refuses to start without its stores', { skip: services.skip }, () => {
  const spawned: BuiltGateway[] = [];
  // The Redis case reaches PostgreSQL (and migrates it) before it fails: give it its own database.
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  before(async () => {
    database = await freshDatabase();
  });
  after(async () => {
    await Promise.all(spawned.map((gateway) => gateway.cleanup()));
    await database?.drop();
  });

  async function exitOf(env: Record<string, string>): Promise<{ code: number | string; stderr: string }> {
    const gateway = spawnBuiltGateway({ FREE_MODE: 'true', ...env });
    spawned.push(gateway);
    return { code: await gateway.exited, stderr: gateway.stderr() };
  }

  test('PostgreSQL unreachable: exit 1 naming it, password hidden', async () => {
    const { code, stderr } = await exitOf({ DATABASE_URL: 'postgres://gw:hunter2@127.0.0.1:9/switchyard' });
    assert.equal(code, 1);
    assert.match(stderr, /^switchyard: failed to start: PostgreSQL at postgres:\/\/gw@127\.0\.0\.1:9\/switchyard cannot be reached: /);
    assert.doesNotMatch(stderr, /hunter2/);
  });

  test('Redis unreachable: exit 1 naming it', async () => {
    const { code, stderr } = await exitOf({ DATABASE_URL: database.url, REDIS_URL: 'redis://127.0.0.1:9' });
    assert.equal(code, 1);
    assert.match(stderr, /^switchyard: failed to start: Redis at redis:\/\/127\.0\.0\.1:9 cannot be reached: /);
  });

  test('REDIS_URL without DATABASE_URL: exit 1 before anything starts', async () => {
    const { code, stderr } = await exitOf({ REDIS_URL: 'redis://127.0.0.1:6379' });
    assert.equal(code, 1);
    const message =
      'config: REDIS_URL (cluster.redisUrl) needs DATABASE_URL (cluster.databaseUrl): cluster mode keeps keys and credits in PostgreSQL';
    assert.equal(stderr, `switchyard: ${message}\n`);
  });
});
