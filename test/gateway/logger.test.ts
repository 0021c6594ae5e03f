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
  assert.equal(redactSecrets('authorization: BEARER abcdefghijklmnop'), 'authorization: BEARER [redacted]');
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
  const [first, second] = out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
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

test('the signature hint (0x + 130 hex digits) agrees with the regex it guards, on edge cases and random text', () => {
  const pattern = /0x[0-9a-fA-F]{130,}/g;
  const hex = (n: number, digit = 'a') => digit.repeat(n);
  const cases = [
    `0x${hex(130)}`, // exactly 130, at the very end
    `0x${hex(129)}`, // one short, at the end
    `x 0x${hex(129)} y`,
    `0x${hex(129)}g${hex(5)}`, // broken by a non-hex character
    `0x${hex(40)} 0x${hex(130, 'F')}`, // a wallet first, a signature after
    `0x0x${hex(130, '0')}`, // an overlapping 0x
    `0X${hex(130)}`, // upper-case X is not the pattern
    `${hex(132)}`, // no 0x at all
    `0x${hex(65, 'ab')}`, // 130 characters of mixed hex
    `0x${hex(131)}"`,
    '0x',
    '',
  ];
  for (const text of cases) {
    const expected = text.replace(pattern, '0x[redacted-signature]');
    assert.equal(redactSecrets(text), expected, text.slice(0, 40));
  }
  // Random text from an alphabet dense in hex digits and 0x, at lengths around the threshold.
  const alphabet = '0x0x0123456789abcdefABCDEFgx "';
  let seed = 42;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 2000; i++) {
    let text = '0x';
    const length = 120 + Math.floor(random() * 30);
    for (let j = 0; j < length; j++)
      text += random() < 0.97 ? 'abcdef0123456789'[Math.floor(random() * 16)] : alphabet[Math.floor(random() * alphabet.length)];
    assert.equal(redactSecrets(text), text.replace(pattern, '0x[redacted-signature]'), text);
  }
});
