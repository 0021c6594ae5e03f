/**
 * A paid chat's admission in cluster mode is one round trip to Redis: the IP's budget, the
 * wallet's budget and the wallet's chat slot all leave before any of them is answered
 * (http/middleware/admission.ts). Seen through a TCP relay between the gateway and the real local Redis that
 * records when each write of the gateway arrives and holds every reply back 50 ms: a command sent
 * only after another's answer would arrive at least that late.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/upstream/scripted-upstream.js';
import { apiKeyFor, authHeaders, type TestGateway } from '../../helpers/gateway.js';
import { clusterServices, freshDatabase, freshRedisPrefix, REDIS_URL } from '../../helpers/cluster-services.js';
import { startChatGateway } from '../chat/chat-harness.js';

const services = await clusterServices();
const WALLET = '0x' + 'd5'.repeat(20);
const ask = { model: 'conductor', messages: [{ role: 'user', content: 'Say hi.' }], max_tokens: 50, tool_choice: 'none' };

const REPLY_DELAY_MS = 50;

interface RecordedWrite {
  at: number;
  text: string;
}

/** Relays TCP to Redis, keeps each write that came from the gateway's side, and delays every reply. */
async function startRecordingRelay(target: URL): Promise<{ url: string; writes: RecordedWrite[]; close(): Promise<void> }> {
  const writes: RecordedWrite[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const redis = createConnection({ host: target.hostname, port: Number(target.port || 6379) });
    for (const socket of [client, redis]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
    client.on('data', (chunk: Buffer) => {
      writes.push({ at: performance.now(), text: chunk.toString('latin1') });
      redis.write(chunk);
    });
    // Timers of one delay fire in the order they were set: replies keep their order.
    redis.on('data', (chunk: Buffer) => setTimeout(() => client.destroyed || client.write(chunk), REPLY_DELAY_MS));
    client.on('close', () => redis.destroy());
    redis.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`,
    writes,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("a paid chat's admission in cluster mode", { skip: services.skip }, () => {
  let upstream: ScriptedUpstream;
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let space: ReturnType<typeof freshRedisPrefix>;
  let relay: Awaited<ReturnType<typeof startRecordingRelay>>;
  let gateway: TestGateway;
  let key: string;
  before(async () => {
    upstream = await startScriptedUpstream();
    database = await freshDatabase();
    space = freshRedisPrefix();
    relay = await startRecordingRelay(new URL(REDIS_URL));
    gateway = await startChatGateway({
      upstream,
      tools: false,
      env: { DATABASE_URL: database.url, REDIS_URL: relay.url, REDIS_PREFIX: space.prefix },
      config: (json) => void Object.assign(json, { freeMode: false }),
    });
    key = await apiKeyFor(gateway, WALLET);
    await gateway.ledger.grant(WALLET, 100);
  });
  after(async () => {
    await gateway?.stop();
    await relay?.close();
    await upstream?.close();
    await space?.clear();
    await database?.drop();
  });

  test('one round trip: both budgets and the chat slot leave before any answer', async () => {
    // The key's first use reads it from PostgreSQL, which waits for the IP's verdict (a flood of
    // unknown keys stops at the IP's budget): that chat's admission takes two round trips.
    const first = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: authHeaders(key, WALLET),
      body: JSON.stringify(ask),
    });
    assert.equal(first.status, 200);
    for (let i = 0; i < 3; i++) {
      const before = relay.writes.length;
      const res = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: authHeaders(key, WALLET),
        body: JSON.stringify(ask),
      });
      assert.equal(res.status, 200, await res.text());
      const chatWrites = relay.writes.slice(before);
      // The slot's script (a lease in a sorted set) and the two budgets (rate-limiter-flexible's script, by its SHA).
      const admission = chatWrites.filter((write) => /ZREMRANGEBYSCORE|evalsha/.test(write.text));
      const sent = admission.filter((write) => write.at - admission[0].at < REPLY_DELAY_MS / 2);
      const text = sent.map((write) => write.text).join('');
      assert.ok(text.includes('ZREMRANGEBYSCORE'), `the chat's slot left with the first of its checks:\n${text}`);
      assert.equal(text.split('evalsha').length - 1, 2, `the IP's and the wallet's budgets left with it:\n${text}`);
      assert.ok(text.includes(`limit:ip`) && text.includes(`limit:wallet`), 'one budget of each');
    }
  });
});
