import { test } from 'node:test';
import assert from 'node:assert/strict';
import { publicFault } from '../../../gateway/tools/server-fault.js';

test('publicFault: what unauthenticated /health may show of a server error', () => {
  const cases: Array<[string, string]> = [
    ['exited with code 3', 'exited with code 3'],
    ['fetch https://user:secret@rpc.example.com:8545/v2/KEY123?apikey=x failed', 'fetch https://rpc.example.com:8545 failed'],
    ["Cannot find module '/home/deploy/app/tool-servers/web/main.js'", "Cannot find module '…/main.js'"],
    ['spawn /opt/secret/bin/server ENOENT', 'spawn …/server ENOENT'],
    ['upstream said:\n  Authorization: Bearer abc.def.ghi', 'upstream said: Authorization: Bearer [redacted]'],
    ['a / b and 1/2', 'a / b and 1/2'],
  ];
  for (const [message, shown] of cases) assert.equal(publicFault({ kind: 'start_failed', message }).message, shown, message);
  const long = publicFault({ kind: 'unreachable', message: `HTTP 500: ${'x'.repeat(5000)}` });
  assert.equal(long.kind, 'unreachable');
  assert.equal(long.message.length, 200);
  assert.ok(long.message.endsWith('…'));
});
