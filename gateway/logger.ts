import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/**
 * Text patterns that must never reach a log line, wherever they appear (a header, a query string,
 * an error message, a stack trace). Each is replaced by a fixed marker. `present` is a cheap test
 * that is true whenever the pattern matches: most lines hold no secret, and the regex runs only
 * when it says yes.
 */
const SECRET_PATTERNS: Array<{ present(text: string): boolean; pattern: RegExp; replacement: string }> = [
  // API keys: `sy_` + base64url of 32 random bytes (43 chars); 20+ keeps shortened keys out too.
  { present: (text) => text.includes('sy_'), pattern: /sy_[A-Za-z0-9_-]{20,}/g, replacement: 'sy_[redacted]' },
  // ECDSA signatures are 65 bytes (130 hex); EIP-1271/6492 signatures are longer. Every request
  // line holds a `0x` (the wallet), so a substring hint would always say yes.
  { present: hasHexRunOf130, pattern: /0x[0-9a-fA-F]{130,}/g, replacement: '0x[redacted-signature]' },
  // A SIWE message inside a JSON string value: drop the whole value (newlines arrive as `\n`).
  {
    present: (text) => text.includes('sign in with your Ethereum account'),
    pattern: /(?:[^"\\]|\\.)*wants you to sign in with your Ethereum account:(?:[^"\\]|\\.)*/g,
    replacement: '[redacted-siwe-message]',
  },
  // Bearer credentials quoted in free text (the header itself is redacted by path below).
  { present: (text) => /bearer/i.test(text), pattern: /(Bearer\s+)[^\s"\\,]+/gi, replacement: '$1[redacted]' },
];

/** Whether `0x` followed by at least 130 hex digits occurs in `text` (what the signature pattern needs). */
function hasHexRunOf130(text: string): boolean {
  for (let at = text.indexOf('0x'); at !== -1; at = text.indexOf('0x', at + 1)) {
    const last = at + 131;
    if (last >= text.length) return false;
    // From the far end: a wallet address (40 hex) fails at once.
    let i = last;
    while (i > at + 1 && isHexDigit(text.charCodeAt(i))) i--;
    if (i === at + 1) return true;
  }
  return false;
}

function isHexDigit(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 70) || (code >= 97 && code <= 102);
}

/**
 * Remove secrets from a piece of text. Used on every serialized log line, so it must keep JSON
 * valid: every replacement is plain text without quotes or backslashes.
 *
 * @example
 *   redactSecrets('key=sy_AbCdEfGhIjKlMnOpQrStUvWxYz0123') // 'key=sy_[redacted]'
 */
export function redactSecrets(text: string): string {
  let out = text;
  for (const { present, pattern, replacement } of SECRET_PATTERNS) {
    if (present(out)) out = out.replace(pattern, replacement);
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
    // Asynchronous stdout: a line per request written synchronously was a write(2) on the request
    // path. Lines that queue while a write is in flight go out together in the next one; shutdown
    // flushes them (main.ts), and a kill -9 can lose only the lines still in flight.
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}
