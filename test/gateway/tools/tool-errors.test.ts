import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { GatewayError } from '../../../gateway/errors.js';
import { fromMcpFailure, fromToolErrorResult } from '../../../gateway/tools/tool-errors.js';
import { buildRegistry, DuplicateToolError, paramNames } from '../../../gateway/tools/tool-registry.js';

const context = { tool: 't', server: 's', timeoutMs: 1000, cancelled: false, retryAfterSeconds: 2 };

test('fromMcpFailure: one converter for MCP client failures', () => {
  const cases: Array<[unknown, Partial<typeof context>, number, string]> = [
    [new McpError(ErrorCode.RequestTimeout, 'Request timed out'), {}, 504, 'tool_timeout'],
    [new McpError(ErrorCode.ConnectionClosed, 'Connection closed'), {}, 503, 'tool_unavailable'],
    [new McpError(ErrorCode.InvalidParams, 'bad'), {}, 400, 'invalid_tool_arguments'],
    [new McpError(ErrorCode.MethodNotFound, 'no'), {}, 404, 'tool_not_found'],
    [new McpError(ErrorCode.InternalError, 'boom'), {}, 500, 'tool_error'],
    [new TypeError('fetch failed'), {}, 500, 'tool_error'],
    [new McpError(ErrorCode.RequestTimeout, 'AbortError'), { cancelled: true }, 499, 'request_cancelled'],
  ];
  for (const [err, extra, status, code] of cases) {
    const mapped = fromMcpFailure(err, { ...context, ...extra });
    assert.deepEqual([mapped.status, mapped.code], [status, code], String(err));
  }
  assert.equal(fromMcpFailure(new McpError(ErrorCode.ConnectionClosed, 'x'), context).headers['Retry-After'], '2');
  assert.equal(fromMcpFailure(new McpError(ErrorCode.InvalidParams, 'text is wrong'), context).message, 'text is wrong');
  const original = new GatewayError({ status: 418, code: 'teapot', message: 'x' });
  assert.equal(fromMcpFailure(original, context), original);
  const internal = fromMcpFailure(new Error('secret detail'), context);
  assert.equal(internal.message, 'Tool "t" failed.');
  assert.equal(internal.details, 'secret detail');
});

test('fromToolErrorResult: kit payloads map by code; free text is a 500 tool_error', () => {
  const result = (text: string) => ({ isError: true, content: [{ type: 'text' as const, text }] });
  const mapped = fromToolErrorResult('x', result('{"error":{"code":"invalid_arguments","message":"address: bad","param":"address"}}'));
  assert.deepEqual([mapped.status, mapped.code, mapped.param, mapped.message], [400, 'invalid_tool_arguments', 'address', 'address: bad']);
  const unknownCode = fromToolErrorResult('x', result('{"error":{"code":"weird","message":"odd"}}'));
  assert.deepEqual([unknownCode.status, unknownCode.code, unknownCode.message], [500, 'tool_error', 'odd']);
  const text = fromToolErrorResult('x', result('Something broke'));
  assert.deepEqual([text.status, text.code, text.message], [500, 'tool_error', 'Something broke']);
  const empty = fromToolErrorResult('x', { isError: true, content: [] });
  assert.equal(empty.message, 'Tool "x" failed.');
});

test("fromToolErrorResult: McpServer's own schema failures are the caller's (input, 400) or the server's (output, 502)", () => {
  const result = (text: string) => ({ isError: true, content: [{ type: 'text' as const, text }] });
  const input = fromToolErrorResult(
    'add',
    result(
      'MCP error -32602: Input validation error: Invalid arguments for tool add: Invalid input: expected number, received string at a, Invalid input at b',
    ),
  );
  assert.deepEqual(
    [input.status, input.code, input.param, input.message],
    [400, 'invalid_tool_arguments', 'a', 'a: Invalid input: expected number, received string'],
  );
  const pathless = fromToolErrorResult(
    'add',
    result('MCP error -32602: Input validation error: Invalid arguments for tool add: Expected object'),
  );
  assert.deepEqual([pathless.status, pathless.param, pathless.message], [400, null, 'Expected object']);
  const output = fromToolErrorResult(
    'n',
    result('MCP error -32602: Output validation error: Invalid structured content for tool n: bad at n'),
  );
  assert.deepEqual([output.status, output.code], [502, 'tool_error']);
  assert.match(output.details!, /Output validation error/);
});

test('buildRegistry: exact names, prefixes, and clashes naming both owners (built-ins count as "gateway")', () => {
  const tool = (name: string) => ({ name, inputSchema: { type: 'object' as const, properties: { a: {}, b: {} } } });
  const table = buildRegistry(
    [
      { server: 'one', prefix: '', tools: [tool('read')] },
      { server: 'two', prefix: 'two_', tools: [tool('read')] },
    ],
    ['list_tools'],
  );
  assert.deepEqual([...table.keys()], ['read', 'two_read']);
  assert.deepEqual([table.get('two_read')!.toolName, table.get('two_read')!.server], ['read', 'two']);
  assert.throws(
    () => buildRegistry([{ server: 'one', prefix: '', tools: [tool('list_tools')] }], ['list_tools']),
    (err: Error) => {
      assert.ok(err instanceof DuplicateToolError);
      assert.deepEqual(err.servers, ['gateway', 'one']);
      return true;
    },
  );
  assert.deepEqual(paramNames(tool('x').inputSchema), ['a', 'b']);
  assert.deepEqual(paramNames({ type: 'object' }), []);
});
