/**
 * The Messages error body as a table: the type each status gets (Anthropic's errors page), the
 * gateway's code leading the message, and which paths speak the format (as the router matches).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { messageErrorBody, messageErrorType, speaksMessages } from '../../../gateway/messages/message-errors.js';
import { GatewayError, InsufficientCredits, RateLimited } from '../../../gateway/errors.js';

const types: Array<[number, string]> = [
  [400, 'invalid_request_error'],
  [401, 'authentication_error'],
  [402, 'billing_error'],
  [403, 'permission_error'],
  [404, 'not_found_error'],
  [405, 'invalid_request_error'],
  [409, 'invalid_request_error'],
  [413, 'request_too_large'],
  [415, 'invalid_request_error'],
  [417, 'invalid_request_error'],
  [429, 'rate_limit_error'],
  [500, 'api_error'],
  [502, 'api_error'],
  [503, 'overloaded_error'],
  [504, 'timeout_error'],
];

test('each status gets its Messages error type', () => {
  assert.deepEqual(
    types.map(([status]) => [status, messageErrorType(status)]),
    types,
  );
});

test('the body: type error, the type by status, the gateway code before the message; headers are not the body’s', () => {
  assert.deepEqual(messageErrorBody(new RateLimited('Slow down.', 3)), {
    type: 'error',
    error: { type: 'rate_limit_error', message: 'rate_limited: Slow down.' },
  });
  assert.deepEqual(messageErrorBody(new InsufficientCredits(1, 5)).error.type, 'billing_error');
  assert.deepEqual(messageErrorBody(new GatewayError({ status: 503, code: 'upstream_unavailable', message: 'Down.' })), {
    type: 'error',
    error: { type: 'overloaded_error', message: 'upstream_unavailable: Down.' },
  });
});

const paths: Array<[string, boolean]> = [
  ['/v1/messages', true],
  ['/v1/messages/', true],
  ['/v1/messages/count_tokens', true],
  ['/V1/Messages', true],
  ['/v1/%6Dessages', true],
  ['/v1/messages/batches', true],
  ['/v1/messagesx', false],
  ['/v1/messages;x', false],
  ['/v1/chat/completions', false],
  ['/v1/%E0%A4%A', false],
];

test('which paths speak the format', () => {
  assert.deepEqual(
    paths.map(([path]) => [path, speaksMessages(path)]),
    paths,
  );
});
