/**
 * Stored responses in cluster mode: two gateways on one throw-away PostgreSQL database (free mode,
 * one scripted upstream). A response created through one instance is read and continued through
 * the other, and stays invisible to another wallet there; its items are referenced through the
 * other, and its input listed there. Skipped loudly without PostgreSQL and
 * Redis, failing under CI=true.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { APIError } from 'openai';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/upstream/scripted-upstream.js';
import { clusterServices, freshDatabase } from '../../helpers/cluster-services.js';
import { apiKeyFor, type TestGateway } from '../../helpers/gateway.js';
import { openaiFor, startChatGateway } from '../chat/chat-harness.js';

const services = await clusterServices();
const ALICE = '0x1111111111111111111111111111111111111111';
const BOB = '0x2222222222222222222222222222222222222222';

describe('stored responses across instances (PostgreSQL)', { skip: services.skip }, () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let upstream: ScriptedUpstream;
  const gateways: TestGateway[] = [];

  before(async () => {
    database = await freshDatabase();
    upstream = await startScriptedUpstream();
    for (let i = 0; i < 2; i++) gateways.push(await startChatGateway({ upstream, tools: false, env: { DATABASE_URL: database.url } }));
  });
  after(async () => {
    await Promise.all(gateways.map((gateway) => gateway.stop()));
    await upstream?.close();
    await database?.drop();
  });

  test('created on one instance, retrieved and continued on the other; another wallet gets 404', async () => {
    const [one, two] = gateways;
    upstream.script({ text: 'Stored in PostgreSQL.' }, { text: 'Continued.' });
    const [aliceKey, bobKey] = [await apiKeyFor(one, ALICE), await apiKeyFor(one, BOB)];
    const created = await openaiFor(one, aliceKey, ALICE).responses.create({ model: 'conductor', input: 'Remember this.' });
    const onTwo = openaiFor(two, aliceKey, ALICE);
    assert.equal((await onTwo.responses.retrieve(created.id)).output_text, 'Stored in PostgreSQL.');
    const next = await onTwo.responses.create({ model: 'conductor', input: 'And?', previous_response_id: created.id });
    assert.equal(next.output_text, 'Continued.');
    assert.deepEqual(
      upstream.requests[1].body.messages.slice(1).map((m) => m.content),
      ['Remember this.', 'Stored in PostgreSQL.', 'And?'],
    );
    await assert.rejects(
      openaiFor(two, bobKey, BOB).responses.retrieve(created.id),
      (err) => err instanceof APIError && err.status === 404,
    );
  });

  test('an item stored through one instance is referenced through the other; its input is listed there; another wallet gets 404', async () => {
    const [one, two] = gateways;
    upstream.reset();
    upstream.script({ text: 'Kept item.' }, { text: 'Referenced.' });
    const [aliceKey, bobKey] = [await apiKeyFor(one, ALICE), await apiKeyFor(two, BOB)];
    const created = await openaiFor(one, aliceKey, ALICE).responses.create({ model: 'conductor', input: 'Keep this.' });
    const onTwo = openaiFor(two, aliceKey, ALICE);
    const next = await onTwo.responses.create({
      model: 'conductor',
      input: [
        { type: 'item_reference', id: created.output[0].id! },
        { role: 'user', content: 'Go on.' },
      ],
    });
    assert.equal(next.output_text, 'Referenced.');
    assert.deepEqual(
      upstream.requests[1].body.messages.slice(1).map((m) => [m.role, m.content]),
      [
        ['assistant', 'Kept item.'],
        ['user', 'Go on.'],
      ],
    );
    const listed = await openaiFor(one, aliceKey, ALICE).responses.inputItems.list(next.id, { order: 'asc' });
    assert.deepEqual(
      listed.data.map((item) => [item.type, item.id]),
      [
        ['message', created.output[0].id],
        ['message', listed.data[1].id],
      ],
    );
    await assert.rejects(
      openaiFor(two, bobKey, BOB).responses.create({ model: 'conductor', input: [{ type: 'item_reference', id: created.output[0].id! }] }),
      (err) => err instanceof APIError && err.status === 404 && err.code === 'item_not_found',
    );
  });
});
