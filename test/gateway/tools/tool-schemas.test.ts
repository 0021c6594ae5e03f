import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createToolHost, type ToolHost } from '../../../gateway/tools/tool-host.js';
import { capturingLogger, fixtureServer, runnableEnv, failure } from './fixture-servers.js';

describe('input and output schemas, checked by the host', () => {
  let host: ToolHost;

  before(async () => {
    host = createToolHost({
      servers: { sdk: fixtureServer('sdk-server'), loose: fixtureServer('bad-output'), echo: fixtureServer('echo') },
      env: runnableEnv(),
      logger: capturingLogger().logger,
    });
    await host.start();
  });

  after(async () => {
    await host?.close();
  });

  test("arguments failing a McpServer tool's schema → 400 invalid_tool_arguments naming the field", async () => {
    const cases: Array<[string, Record<string, unknown>, string, string]> = [
      ['add', { a: 'x', b: 2 }, 'a', 'a: must be number'],
      ['add', { b: 2 }, 'a', 'a: is required'],
      ['count', { n: -1 }, 'n', 'n: must be >= 0'],
      ['count', { n: 1, unit: 'g' }, 'unit', 'unit: must be one of "kg", "lb"'],
      ['echo', { text: 42 }, 'text', 'text: must be string'],
    ];
    for (const [tool, args, param, message] of cases) {
      const err = await failure(host.callTool(tool, args));
      assert.deepEqual(
        [err.status, err.code, err.param, err.message],
        [400, 'invalid_tool_arguments', param, message],
        `${tool} ${JSON.stringify(args)}`,
      );
    }
    assert.deepEqual(await host.callTool('add', { a: 1, b: 2 }), { sum: 3 });
    assert.deepEqual(await host.callTool('count', { n: 2, unit: 'kg' }), { n: 2 });
  });

  test("what the host leaves to the server (string formats): McpServer's refusal text is still a 400 naming the field", async () => {
    const err = await failure(host.callTool('visit', { url: 'not a url' }));
    assert.deepEqual([err.status, err.code, err.param], [400, 'invalid_tool_arguments', 'url']);
    assert.match(err.message, /^url: /);
  });

  test('a server whose result breaks its own outputSchema → 502 tool_error, not the caller’s fault', async () => {
    const message = (tool: string) => `Tool "${tool}" failed: the tool server returned a result that does not match its output schema.`;
    for (const tool of ['bad_output', 'no_output', 'broken_output']) {
      const err = await failure(host.callTool(tool, {}));
      assert.deepEqual([err.status, err.code, err.type, err.message], [502, 'tool_error', 'upstream_error', message(tool)], tool);
    }
  });
});
