import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  upstreamConnectionError,
  upstreamMessageFrom,
  upstreamSettingsOf,
  upstreamStatusError,
} from '../../../gateway/chat/upstream-errors.js';

const MODEL = 'svc-test';

test('upstreamStatusError: each upstream status becomes one status, code, message and Retry-After', () => {
  const openAiBody = '{"error":{"message":"maximum context length is 8192 tokens","type":"invalid_request_error"}}';
  const table: Array<[number, string, number, string, string, string | undefined]> = [
    [400, openAiBody, 400, 'upstream_invalid_request', 'rejected the request (HTTP 400): maximum context length is 8192 tokens', undefined],
    [404, '{"detail":"Not Found"}', 400, 'upstream_invalid_request', 'rejected the request (HTTP 404): Not Found', undefined],
    [422, 'plain words', 400, 'upstream_invalid_request', 'rejected the request (HTTP 422): plain words', undefined],
    [401, '{"error":"bad key sk-secret"}', 502, 'upstream_error', "refused the gateway's credentials (HTTP 401)", undefined],
    [403, '', 502, 'upstream_error', "refused the gateway's credentials (HTTP 403)", undefined],
    [429, '{"error":"slow down"}', 503, 'upstream_unavailable', 'is unavailable (rate limited)', '5'],
    [503, '{"message":"loading model"}', 503, 'upstream_unavailable', 'is unavailable (HTTP 503: loading model)', '5'],
    [500, '', 502, 'upstream_error', 'failed: HTTP 500: no message', undefined],
    [501, '{"error":{"message":"streaming unsupported"}}', 502, 'upstream_error', 'failed: HTTP 501: streaming unsupported', undefined],
    [302, '', 502, 'upstream_error', 'failed: HTTP 302: no message', undefined],
  ];
  for (const [status, body, wantStatus, wantCode, wantMessage, retryAfter] of table) {
    const error = upstreamStatusError(MODEL, status, body);
    const row = `HTTP ${status}`;
    assert.equal(error.status, wantStatus, row);
    assert.equal(error.code, wantCode, row);
    assert.ok(error.message.startsWith(`The upstream for model "${MODEL}" `), row);
    assert.ok(error.message.includes(wantMessage), `${row}: ${error.message}`);
    assert.equal(error.headers['Retry-After'], retryAfter, row);
    assert.ok(!error.message.includes('sk-secret'), row);
  }
});

test('upstreamConnectionError: a headers timeout is 504, every other connection failure 503', () => {
  const table: Array<[string | undefined, number, string, string]> = [
    ['UND_ERR_HEADERS_TIMEOUT', 504, 'upstream_timeout', 'did not answer within 9000 ms'],
    ['ECONNREFUSED', 503, 'upstream_unavailable', 'is unavailable (connection failed: ECONNREFUSED)'],
    ['ENOTFOUND', 503, 'upstream_unavailable', 'is unavailable (connection failed: ENOTFOUND)'],
    [undefined, 503, 'upstream_unavailable', 'is unavailable (connection failed)'],
  ];
  for (const [errorCode, wantStatus, wantCode, wantMessage] of table) {
    const error = upstreamConnectionError(MODEL, errorCode, 9000);
    assert.deepEqual([error.status, error.code], [wantStatus, wantCode], String(errorCode));
    assert.ok(error.message.includes(wantMessage), error.message);
  }
});

test("upstreamConnectionError names where the model's upstream is set: its variables, or the file for a fleet", () => {
  const one = upstreamSettingsOf({ alias: 'my-model', upstreams: [{ name: 'default' }] });
  assert.equal(
    one,
    'set by MY_MODEL_UPSTREAM_BASE_URL and MY_MODEL_UPSTREAM_MODEL, or UPSTREAM_BASE_URL and UPSTREAM_MODEL for every model',
  );
  assert.equal(
    upstreamConnectionError(MODEL, 'ECONNREFUSED', 9000, one).message,
    `The upstream for model "${MODEL}" is unavailable (connection failed: ECONNREFUSED). Its upstream is ${one} (docs/troubleshooting.md).`,
  );
  const fleet = upstreamSettingsOf({ alias: 'conductor', upstreams: [{ name: 'gpu-a' }, { name: 'gpu-b' }] });
  assert.equal(fleet, 'set by its "upstreams" in the config file');
});

test('upstreamMessageFrom: the message of OpenAI, vLLM, Ollama and plain-text bodies, clipped at 500 characters', () => {
  const table: Array<[string, string]> = [
    ['{"error":{"message":"bad","type":"BadRequestError","code":400}}', 'bad'],
    ['{"object":"error","message":"vllm says","type":"BadRequestError","code":400}', 'vllm says'],
    ['{"error":"ollama says"}', 'ollama says'],
    ['{"detail":"fastapi says"}', 'fastapi says'],
    ['  raw text  ', 'raw text'],
    ['', 'no message'],
    ['{"other":1}', '{"other":1}'],
    ['x'.repeat(600), `${'x'.repeat(500)}…`],
  ];
  for (const [body, expected] of table) assert.equal(upstreamMessageFrom(body), expected, body.slice(0, 40));
});
