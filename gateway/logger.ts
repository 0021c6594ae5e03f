import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/**
 * Text patterns that must never reach a log line, wherever they appear (a header, a query string,
 * an error message, a stack trace). Each is replaced by a fixed marker. The hint is a plain
 * substring every match contains: most lines hold none, and `includes` is far cheaper than a regex.
 */
const SECRET_PATTERNS: Array<{ hint: string; pattern: RegExp; replacement: string }> = [
  // API keys: `sy_` + base64url of 32 random bytes (43 chars); 20+ keeps shortened keys out too.
  { hint: 'sy_', pattern: /sy_[A-Za-z0-9_-]{20,}/g, replacement: 'sy_[redacted]' },
  // ECDSA signatures are 65 bytes (130 hex); EIP-1271/6492 signatures are longer.
  { hint: '0x', pattern: /0x[0-9a-fA-F]{130,}/g, replacement: '0x[redacted-signature]' },
  // A SIWE message inside a JSON string value: drop the whole value (newlines arrive as `\n`).
  {
    hint: 'sign in with your Ethereum account',
    pattern: /(?:[^"\\]|\\.)*wants you to sign in with your Ethereum account:(?:[^"\\]|\\.)*/g,
    replacement: '[redacted-siwe-message]',
  },
  // Bearer credentials quoted in free text (the header itself is redacted by path below).
  { hint: 'earer', pattern: /(Bearer\s+)[^\s"\\,]+/gi, replacement: '$1[redacted]' },
];

/**
 * Remove secrets from a piece of text. Used on every serialized log line, so it must keep JSON
 * valid: every replacement is plain text without quotes or backslashes.
 *
 * @example
 *   redactSecrets('key=sy_AbCdEfGhIjKlMnOpQrStUvWxYz0123') // 'key=sy_[redacted]'
 */
export function redactSecrets(text: string): string {
  let out = text;
  for (const { hint, pattern, replacement } of SECRET_PATTERNS) {
    if (out.includes(hint)) out = out.replace(pattern, replacement);
  }
  return out;
}

/**
 * The gateway's structured JSON logger. Secrets never reach a log line: structured paths that
 * hold them are censored by pino, and every serialized line is scrubbed by `redactSecrets`.
 *
 * @example
 *   const logger = createLogger('info')            // JSON lines to stdout
 *   logger.info({ reqId, status: 200 }, 'request')
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: {
        paths: [
          'authorization',
          'headers.authorization',
          'headers.cookie',
          'req.headers.authorization',
          'req.headers.cookie',
          'signature',
          '*.signature',
          'key',
          '*.apiKey',
        ],
        censor: '[redacted]',
      },
      hooks: { streamWrite: redactSecrets },
    },
    destination,
  );
}
