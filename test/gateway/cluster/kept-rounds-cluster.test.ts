/**
 * The client's continuation reaching another instance: with REDIS_URL the gateway's kept rounds
 * live in Redis, with DATABASE_URL alone in PostgreSQL; either way the instance that did not run
 * the first request splices them back (asserted on what the upstream received).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/upstream/scripted-upstream.js';
import { apiKeyFor, WALLET, type TestGateway } from '../../helpers/gateway.js';
import { clusterServices, freshDatabase, freshRedisPrefix, REDIS_URL } from '../../helpers/cluster-services.js';
import { openaiFor, startChatGateway } from '../chat/chat-harness.js';
import { Redis } from 'ioredis';
import postgres from 'postgres';

const services = await clusterServices();

const tools: ChatCompletionTool[] = [
  { type: 'function', function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } },
];

describe('kept rounds across instances', { skip: services.skip }, () => {
  let upstream: ScriptedUpstream;
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  const space = freshRedisPrefix();
  const gateways: TestGateway[] = [];
  before(async () => {
    upstream = await startScriptedUpstream();
    database = await freshDatabase();
  });
  after(async () => {
    await Promise.all(gateways.map((g) => g.stop()));
    await upstream?.close();
    await database?.drop();
    await space.clear();
  });

  async function pair(env: Record<string, string>): Promise<[TestGateway, TestGateway]> {
    const started = [await startChatGateway({ upstream, env }), await startChatGateway({ upstream, env })];
    gateways.push(...started);
    return started as [TestGateway, TestGateway];
  }

  async function continuationOnTheOther(one: TestGateway, two: TestGateway): Promise<void> {
    upstream.reset();
    upstream.script({
      text: 'Checking.',
      toolCalls: [
        { name: 'echo', arguments: '{"text":"kept"}' },
        { name: 'read_file', arguments: '{"path":"a"}' },
      ],
    });
    const user = { role: 'user' as const, content: 'Read a.' };
    const first = await openaiFor(one, await apiKeyFor(one)).chat.completions.create({ model: 'conductor', messages: [user], tools });
    const message = first.choices[0].message;
    const callId = message.tool_calls![0].id;
    upstream.reset();
    upstream.script({ text: 'Read.' });
    await openaiFor(two, await apiKeyFor(two, WALLET, 'other')).chat.completions.create({
      model: 'conductor',
      messages: [user, message, { role: 'tool', tool_call_id: callId, content: 'contents of a' }],
      tools,
    });
    const seen = upstream.requests[0].body.messages.slice(1);
    assert.deepEqual(
      seen.map((m) => [m.role, m.content]),
      [
        ['user', 'Read a.'],
        ['assistant', 'Checking.'],
        ['tool', '{"text":"kept"}'],
        ['tool', 'contents of a'],
      ],
    );
    assert.equal(seen[1].tool_calls!.length, 2);
  }

  test('cluster mode with Redis: kept under REDIS_PREFIX, spliced by the other instance', async () => {
    const [one, two] = await pair({ DATABASE_URL: database.url, REDIS_URL, REDIS_PREFIX: space.prefix });
    await continuationOnTheOther(one, two);
    const redis = new Redis(REDIS_URL);
    try {
      assert.equal((await redis.keys(`${space.prefix}kept-rounds:*`)).length, 1);
    } finally {
      redis.disconnect();
    }
  });

  test('DATABASE_URL alone: kept in PostgreSQL, spliced by the other instance', async () => {
    const [one, two] = await pair({ DATABASE_URL: database.url, REDIS_URL: '' });
    await continuationOnTheOther(one, two);
    const sql = postgres(database.url, { max: 1 });
    try {
      assert.equal((await sql`select count(*)::int as n from kept_rounds`)[0].n, 1);
    } finally {
      await sql.end();
    }
  });
});
