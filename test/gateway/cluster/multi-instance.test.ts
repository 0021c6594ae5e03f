/**
 * Three built gateway processes (`node dist/gateway/main.js`, as `npm start` runs it) in cluster
 * mode on the real local PostgreSQL and Redis, each with one small fixture tool server (`sleep`)
 * and the scripted upstream model in this process. What only several processes show:
 * - 300 concurrent 1-credit executions on 100 credits over the three: exactly 100 succeed;
 * - a key revoked through one is refused by the others within 1 s; a nonce is spent once anywhere
 * - a per-wallet budget of N requests per window admits N across all three, not 3N;
 * - kill -9 of one instance under paid load: credits + held + spent = deposited at once, every
 *   answered charge is in total_spent, and once the holds' TTL passes credits + spent = deposited;
 * - a rolling restart of all three under paid chat load (SIGTERM, replacement started, health
 *   waited for) fails no request. Run `npm run build` first (`npm test` does).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { baseConfigJson, authHeaders, walletHeaders } from '../../helpers/gateway.js';
import { clusterServices, freshDatabase, freshRedisPrefix, REDIS_URL } from '../../helpers/cluster-services.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/upstream/scripted-upstream.js';
import { MAIN_JS, startBuiltGateway, type BuiltGateway } from '../spawn-built-gateway.js';
import { fixtureServer } from '../tools/fixture-servers.js';
import { openDatabase, type Database } from '../../../gateway/storage/postgres/database.js';
import { PostgresLedger } from '../../../gateway/ledger/postgres-ledger.js';
import { PostgresKeyStore } from '../../../gateway/keys/postgres-key-store.js';
import { ApiKeys } from '../../../gateway/keys/api-keys.js';
import { ADMIN_TOKEN, BOB, call, errorOf, signedProof } from '../../helpers/accounts.js';

const services = await clusterServices();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const RESERVATION_TTL_MS = 6_000;
const wallet = (digit: string) => '0x' + digit.repeat(40);

type Instance = BuiltGateway & { url: string };

describe('three gateway processes on one PostgreSQL and one Redis', { skip: services.skip }, () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  const space = freshRedisPrefix();
  let upstream: ScriptedUpstream;
  let db: Database;
  let ledger: PostgresLedger;
  let apiKeys: ApiKeys;
  let configPath: string;
  const configDir = mkdtempSync(join(tmpdir(), 'switchyard-multi-'));
  const started: Instance[] = [];
  let instances: Instance[] = [];
  // Short-lived connections: a killed or restarted instance must not leave pooled sockets behind.
  const dispatcher = new Agent({ pipelining: 0 });

  function env(): Record<string, string> {
    return {
      SWITCHYARD_CONFIG: configPath,
      DATABASE_URL: database.url,
      REDIS_URL,
      REDIS_PREFIX: space.prefix,
      DRAIN_DELAY_MS: '1500',
      ADMIN_TOKEN,
      LOG_LEVEL: 'warn',
    };
  }

  async function startInstance(): Promise<Instance> {
    const instance = await startBuiltGateway({ ...env(), LOG_LEVEL: 'info' });
    started.push(instance);
    return instance;
  }

  async function execute(instance: Instance, key: string, owner: string, ms = 10): Promise<number | 'network-error'> {
    try {
      const res = await fetch(`${instance.url}/v1/tools/execute`, {
        method: 'POST',
        headers: authHeaders(key, owner),
        body: JSON.stringify({ tool: 'sleep', args: { ms } }),
        dispatcher,
      } as RequestInit);
      await res.arrayBuffer();
      return res.status;
    } catch {
      return 'network-error';
    }
  }

  before(async () => {
    assert.ok(existsSync(MAIN_JS), 'run npm run build first');
    database = await freshDatabase();
    upstream = await startScriptedUpstream();
    const json = baseConfigJson();
    json.freeMode = false;
    json.logLevel = 'warn';
    json.server = { port: 0, host: '127.0.0.1', shutdownGraceMs: 5_000 };
    json.accounts = { reservationTtlMs: RESERVATION_TTL_MS };
    json.chat = { deadlineMs: 5_000 };
    const plenty = { points: 100_000, durationSec: 60 };
    json.limits = { perWallet: plenty, perIp: plenty, chatConcurrencyPerWallet: 64 };
    for (const model of json.models as Array<{ upstream: Record<string, unknown> }>) {
      model.upstream = { ...model.upstream, baseUrl: upstream.baseUrl, timeoutMs: 4_000 };
    }
    json.mcpServers = { slow: fixtureServer('slow', { timeoutMs: 4_000 }) };
    configPath = join(configDir, 'gateway.json');
    writeFileSync(configPath, JSON.stringify(json));
    instances = await Promise.all([startInstance(), startInstance(), startInstance()]);
    db = await openDatabase(database.url, { max: 4 });
    ledger = new PostgresLedger(db.sql, { reservationTtlMs: RESERVATION_TTL_MS });
    apiKeys = new ApiKeys(new PostgresKeyStore(db.sql));
  });
  after(async () => {
    await Promise.all(started.map((instance) => instance.cleanup()));
    await db?.close();
    await upstream?.close();
    await database?.drop();
    await space.clear();
    rmSync(configDir, { recursive: true, force: true });
    await dispatcher.close();
  });

  test('300 concurrent 1-credit executions over three instances on 100 credits: exactly 100 succeed', async () => {
    const owner = wallet('1');
    const { key } = await apiKeys.create({ address: owner, name: 'race', verified: true });
    const granted = await call(`${instances[0].url}/admin/credits/grant`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', 'idempotency-key': 'race-grant' },
      body: { address: owner, amount: 100 },
    });
    assert.equal(granted.status, 200);
    const statuses = await Promise.all(Array.from({ length: 300 }, (_, i) => execute(instances[i % 3], key, owner)));
    assert.equal(statuses.filter((s) => s === 200).length, 100);
    assert.equal(statuses.filter((s) => s === 402).length, 200);
    assert.deepEqual(await ledger.balance(owner), { address: owner, credits: 0, total_deposited: 100, total_spent: 100 });
  });

  test('a key revoked through one instance is refused by the other two within 1 s', async () => {
    const owner = wallet('2');
    const { key, record } = await apiKeys.create({ address: owner, name: 'revoke-me', verified: true });
    const listStatus = async (instance: Instance) => {
      const answer = await call(`${instance.url}/auth/api-keys`, { headers: authHeaders(key, owner) });
      return answer.status;
    };
    for (const instance of instances) assert.equal(await listStatus(instance), 200);
    const revoked = await call(`${instances[0].url}/auth/api-keys/${record.id}`, { method: 'DELETE', headers: authHeaders(key, owner) });
    assert.equal(revoked.status, 200);
    const at = Date.now();
    for (const instance of instances.slice(1)) {
      let status = 200;
      while (status === 200 && Date.now() - at < 1_000) status = await listStatus(instance);
      assert.equal(status, 401, `refused by ${instance.url} after ${Date.now() - at} ms`);
    }
  });

  test('a nonce issued by one instance is accepted once by another, never twice', async () => {
    const proof = await signedProof(instances[0], BOB);
    const body = { name: 'siwe', message: proof.message, signature: proof.signature };
    const answers = [];
    for (const instance of [instances[1], instances[2], instances[1]]) {
      answers.push(await call(`${instance.url}/auth/api-keys`, { method: 'POST', headers: walletHeaders(BOB.address), body }));
    }
    assert.equal(answers[0].status, 200);
    for (const replay of answers.slice(1)) assert.equal(errorOf(replay).code, 'siwe_nonce_invalid');
  });

  test('a per-wallet budget of 10 per minute admits 10 across three instances, not 30', async () => {
    // Three more instances with a tight budget and no tool server (the load tests need a loose one).
    const json = baseConfigJson();
    json.limits = { perWallet: { points: 10, durationSec: 60 } };
    const tightPath = join(configDir, 'tight.json');
    writeFileSync(tightPath, JSON.stringify(json));
    const tight = await Promise.all(
      [0, 1, 2].map(async () => {
        const instance = await startBuiltGateway({ ...env(), SWITCHYARD_CONFIG: tightPath, LOG_LEVEL: 'info' });
        started.push(instance);
        return instance;
      }),
    );
    const owner = wallet('5');
    const statuses = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        const res = await fetch(`${tight[i % 3].url}/auth/nonce`, { headers: walletHeaders(owner), dispatcher } as RequestInit);
        await res.arrayBuffer();
        return res.status;
      }),
    );
    assert.equal(statuses.filter((s) => s === 200).length, 10);
    assert.equal(statuses.filter((s) => s === 429).length, 20);
    await Promise.all(tight.map((instance) => instance.cleanup()));
  });

  test('kill -9 of one instance under paid load: no answered charge missing, nothing charged twice', async () => {
    const owner = wallet('3');
    const { key } = await apiKeys.create({ address: owner, name: 'kill', verified: true });
    await ledger.grant(owner, 100_000);
    const outcomes: Array<number | 'network-error'> = [];
    let stop = false;
    const workers = Array.from({ length: 24 }, async (_, w) => {
      for (let i = 0; !stop; i++) outcomes.push(await execute(instances[(w + i) % 3], key, owner, 20));
    });
    await sleep(1_500);
    const victim = instances[1];
    victim.child.kill('SIGKILL');
    await victim.exited;
    await sleep(1_000);
    stop = true;
    await Promise.all(workers);
    const answered = outcomes.filter((o) => o === 200).length;
    const lost = outcomes.filter((o) => o === 'network-error').length;
    assert.ok(answered > 100, `load ran (${answered} answered)`);
    assert.deepEqual(
      outcomes.filter((o) => o !== 200 && o !== 'network-error'),
      [],
      'the surviving instances answered every request',
    );
    const balance = await ledger.balance(owner);
    const [{ held }] = await db.sql<Array<{ held: number }>>`
      select coalesce(sum(amount), 0)::bigint as held from reservations where wallet = ${owner}`;
    assert.equal(balance.credits + held + balance.total_spent, balance.total_deposited);
    assert.ok(balance.total_spent >= answered, `every answered charge is in total_spent (${balance.total_spent} ≥ ${answered})`);
    assert.ok(balance.total_spent <= answered + lost, `at most the in-flight ones more (${balance.total_spent} ≤ ${answered} + ${lost})`);
    // The killed instance's holds go back when their TTL passes (swept by the survivors).
    await sleep(RESERVATION_TTL_MS + 2_000);
    const settled = await ledger.balance(owner);
    assert.equal(settled.credits + settled.total_spent, settled.total_deposited);
    instances = [instances[0], instances[2], await startInstance()];
  });

  test('a rolling restart of all three under paid chat load fails no request', async () => {
    upstream.defaultTurn = { text: 'ok', delayMs: 150 };
    const owner = wallet('4');
    const { key } = await apiKeys.create({ address: owner, name: 'rolling', verified: true });
    await ledger.grant(owner, 100_000);
    // The load balancer: sends only to instances whose /health was 200 at the last probe.
    const inRotation = new Set(instances.map((i) => i.url));
    let stop = false;
    const prober = (async () => {
      while (!stop) {
        await Promise.all(
          instances.map(async (instance) => {
            const res = await fetch(`${instance.url}/health`, { dispatcher } as RequestInit).catch(() => undefined);
            if (res?.status === 200 && !instance.child.exitCode) inRotation.add(instance.url);
            else inRotation.delete(instance.url);
            await res?.arrayBuffer();
          }),
        );
        await sleep(100);
      }
    })();
    const outcomes: Array<number | string> = [];
    let next = 0;
    const workers = Array.from({ length: 12 }, async () => {
      while (!stop) {
        const urls = [...inRotation];
        if (urls.length === 0) {
          await sleep(10);
          continue;
        }
        const url = urls[next++ % urls.length];
        try {
          const res = await fetch(`${url}/v1/chat/completions`, {
            method: 'POST',
            headers: authHeaders(key, owner),
            body: JSON.stringify({ model: 'conductor', messages: [{ role: 'user', content: 'hi' }] }),
            dispatcher,
          } as RequestInit);
          await res.arrayBuffer();
          outcomes.push(res.status);
        } catch (err) {
          outcomes.push(String((err as Error & { cause?: { code?: string } }).cause?.code ?? err));
        }
      }
    });
    await sleep(800);
    for (let i = 0; i < 3; i++) {
      const old = instances[i];
      old.child.kill('SIGTERM');
      const replacement = await startInstance();
      instances = instances.map((instance) => (instance === old ? replacement : instance));
      assert.equal(await old.exited, 0, 'the old instance shut down cleanly');
    }
    await sleep(500);
    stop = true;
    await Promise.all([...workers, prober]);
    const failures = outcomes.filter((o) => o !== 200);
    assert.ok(outcomes.length > 50, `load ran (${outcomes.length} chats)`);
    assert.deepEqual(failures, [], `every chat answered 200 (${outcomes.length} in all)`);
    const balance = await ledger.balance(owner);
    assert.equal(balance.total_spent, outcomes.length, 'each answered chat charged exactly once');
    assert.equal(balance.credits + balance.total_spent, balance.total_deposited);
  });
});
