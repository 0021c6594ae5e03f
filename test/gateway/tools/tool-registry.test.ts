import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createToolHost } from '../../../gateway/tools/tool-host.js';
import { buildRegistryLenient, type DuplicateToolError } from '../../../gateway/tools/tool-registry.js';
import { capturingLogger, fixtureServer, runnableEnv, waitFor } from './fixture-servers.js';

const tool = (name: string) => ({ name, inputSchema: { type: 'object' as const } });

test('buildRegistryLenient: a name stays with the server that had it; a newcomer earlier in config order is reported, not routed', () => {
  const start = buildRegistryLenient(
    [
      { server: 'later', prefix: '', tools: [tool('read')] },
      { server: 'early', prefix: '', tools: [] },
    ],
    [],
    () => assert.fail('no clash yet'),
  );
  const clashes: DuplicateToolError[] = [];
  const servers = [
    { server: 'early', prefix: '', tools: [tool('read'), tool('write')] },
    { server: 'later', prefix: '', tools: [tool('read')] },
  ];
  const next = buildRegistryLenient(servers, [], (clash) => clashes.push(clash), start);
  assert.deepEqual(
    [...next.values()].map((e) => `${e.server}:${e.publicName}`),
    ['early:write', 'later:read'],
  );
  assert.deepEqual(
    clashes.map((c) => c.servers),
    [['later', 'early']],
  );
  // With no previous owner, config order decides.
  const fresh = buildRegistryLenient(servers, [], () => undefined);
  assert.equal(fresh.get('read')!.server, 'early');
});

test('a server that gains a name another running server has: the owner keeps it, the clash is an error log, health counts routed tools', async () => {
  const { logger, lines } = capturingLogger();
  // "changing" comes first in config order, yet "echo" had the name first.
  const host = createToolHost({
    servers: { changing: fixtureServer('list-changed'), echo: fixtureServer('echo') },
    env: runnableEnv(),
    logger,
  });
  try {
    await host.start();
    await host.callTool('add_tool', { name: 'echo' });
    await waitFor('the clash to be logged', () => lines.some((l) => l.level === 50 && l.tool === 'echo'));
    assert.deepEqual(await host.callTool('echo', { text: 'still mine' }), { text: 'still mine' });
    const clash = lines.find((l) => l.level === 50 && l.tool === 'echo')!;
    assert.deepEqual(clash.servers, ['echo', 'changing']);
    assert.deepEqual(
      host.health().fields.tool_servers.map((s) => [s.name, s.tools]),
      [
        ['changing', 1],
        ['echo', 5],
      ],
    );
    assert.equal(host.listTools().filter((t) => t.name === 'echo').length, 1);
  } finally {
    await host.close();
  }
});
