/**
 * Our attribute names (telemetry/semconv.ts, copied so the request path loads no conventions
 * package) are the conventions' own: each equals its constant in `@opentelemetry/semantic-conventions`
 * (stable names from the package's index, GenAI, MCP and JSON-RPC ones from `/incubating`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as stable from '@opentelemetry/semantic-conventions';
import * as incubating from '@opentelemetry/semantic-conventions/incubating';
import * as ours from '../../telemetry/semconv.js';

test('every convention name we emit is the conventions package’s', () => {
  const packaged = { ...incubating, ...stable } as Record<string, unknown>;
  const checked: string[] = [];
  for (const [name, value] of Object.entries(ours)) {
    if (name.startsWith('SWITCHYARD_')) {
      assert.match(String(value), /^switchyard\./);
      continue;
    }
    assert.equal(packaged[`ATTR_${name}`], value, `${name}`);
    checked.push(name);
  }
  assert.ok(checked.includes('GEN_AI_PROVIDER_NAME') && checked.includes('HTTP_ROUTE') && checked.includes('MCP_METHOD_NAME'));
  // Stable ones come from the stable index, not only from incubating.
  for (const name of ['HTTP_ROUTE', 'HTTP_REQUEST_METHOD', 'HTTP_RESPONSE_STATUS_CODE', 'SERVER_ADDRESS', 'SERVER_PORT', 'ERROR_TYPE']) {
    assert.equal((stable as Record<string, unknown>)[`ATTR_${name}`], (ours as Record<string, unknown>)[name], name);
  }
});
