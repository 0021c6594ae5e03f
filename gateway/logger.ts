import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/**
 * The gateway's structured JSON logger. Secrets never reach a log line: header and body paths
 * that can hold them are redacted here, and `redactSecrets` scrubs free text.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: {
        paths: ['authorization', 'headers.authorization', 'req.headers.authorization', '*.signature', '*.message', 'signature', 'key'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
