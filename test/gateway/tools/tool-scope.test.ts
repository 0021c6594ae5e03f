/**
 * A key's tool scope: names and `server:*` patterns, one interned scope per distinct list, and one
 * filtered list per tool list the host hands out (the chat offer and /mcp listing build on that).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toolScope } from '../../../gateway/tools/tool-scope.js';
import type { ToolInfo } from '../../../gateway/tools/types.js';

const info = (name: string, server: string): ToolInfo => ({ name, server, description: '', inputSchema: {}, params: [] });
const tools = [info('list_tools', 'gateway'), info('web_search', 'search'), info('fetch_url', 'search'), info('get_time', 'utility')];

test('names and server:* patterns allow exactly what they name', () => {
  const cases: Array<[string[], string[]]> = [
    [['get_time'], ['get_time']],
    [['search:*'], ['web_search', 'fetch_url']],
    [
      ['gateway:*', 'get_time'],
      ['list_tools', 'get_time'],
    ],
    [[], []],
    [['no_such_tool', 'nowhere:*'], []],
  ];
  for (const [patterns, allowed] of cases) {
    assert.deepEqual(
      toolScope(patterns)
        .filter(tools)
        .map((t) => t.name),
      allowed,
      patterns.join(),
    );
  }
});

test('allowsName finds a tool by name, or its server in the current list (a tool not listed now matches by name only)', () => {
  const scope = toolScope(['search:*', 'get_time']);
  assert.equal(scope.allowsName('web_search', tools), true);
  assert.equal(scope.allowsName('get_time', []), true);
  assert.equal(scope.allowsName('web_search', []), false);
  assert.equal(scope.allowsName('list_tools', tools), false);
});

test('one scope per distinct list (any order), and one filtered array per tool list', () => {
  const scope = toolScope(['search:*', 'get_time']);
  assert.equal(toolScope(['get_time', 'search:*', 'get_time']), scope);
  const first = scope.filter(tools);
  assert.equal(scope.filter(tools), first, 'the same list: the same array');
  const changed = [...tools];
  assert.notEqual(scope.filter(changed), first, 'a new list from the host: filtered again');
  assert.deepEqual(scope.filter(changed), first);
});
