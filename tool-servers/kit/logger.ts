import { pino, type Logger } from 'pino';

export type { Logger };

/** Tool servers log JSON to stderr only: stdout carries the MCP protocol. */
export function createStderrLogger(name: string, level = 'info'): Logger {
  return pino({ name, level, base: undefined }, pino.destination(2));
}
