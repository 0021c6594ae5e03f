import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, redactSecrets } from '../../gateway/logger.js';
import { API_KEY, SIGNATURE, SIWE_MESSAGE } from './secrets.js';

function capture(): { logger: ReturnType<typeof createLogger>; text(): string } {
  const lines: string[] = [];
  const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
  return { logger, text: () => lines.join('') };
}

test('redactSecrets replaces keys, signatures and Bearer credentials in free text', () => {
  assert.equal(redactSecrets(`key=${API_KEY}&x=1`), 'key=sy_[redacted]&x=1');
  assert.equal(redactSecrets(`sig ${SIGNATURE}.`), 'sig 0x[redacted-signature].');
  assert.equal(redactSecrets('Authorization: Bearer abc.def-ghi, next'), 'Authorization: Bearer [redacted], next');
  // Short values are not keys or signatures: a wallet address and a tx hash stay readable.
  const address = '0x52908400098527886e0f7030069857d2e4169ee7';
  const txHash = '0x' + 'cd'.repeat(32);
  assert.equal(redactSecrets(`${address} ${txHash} sy_short`), `${address} ${txHash} sy_short`);
});

test('a SIWE message inside a JSON string is dropped whole, keeping the line valid JSON', () => {
  const line = JSON.stringify({ body: { message: SIWE_MESSAGE, note: 'kept' } });
  const scrubbed = redactSecrets(line);
  assert.deepEqual(JSON.parse(scrubbed), { body: { message: '[redacted-siwe-message]', note: 'kept' } });
});

test('the logger censors structured secrets and scrubs every line', () => {
  const { logger, text } = capture();
  logger.info(
    {
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: { signature: SIGNATURE, message: SIWE_MESSAGE },
      key: API_KEY,
      url: `/v1/things?key=${API_KEY}`,
    },
    `client sent ${API_KEY}`,
  );
  logger.error({ err: new Error(`upstream refused key ${API_KEY} with signature ${SIGNATURE}`) }, 'boom');
  const out = text();
  for (const secret of [API_KEY, SIGNATURE, 'wants you to sign in', 'Nonce: abcdef123456']) {
    assert.equal(out.includes(secret), false, `log holds ${secret.slice(0, 20)}…`);
  }
  const [first, second] = out.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(first.headers.authorization, '[redacted]');
  assert.equal(first.headers['content-type'], 'application/json');
  assert.equal(first.body.signature, '[redacted]');
  assert.equal(first.body.message, '[redacted-siwe-message]');
  assert.equal(first.key, '[redacted]');
  assert.equal(first.url, '/v1/things?key=sy_[redacted]');
  assert.equal(first.msg, 'client sent sy_[redacted]');
  // An error keeps its message (minus the secrets), so the log stays useful.
  assert.equal(second.err.message, 'upstream refused key sy_[redacted] with signature 0x[redacted-signature]');
});
