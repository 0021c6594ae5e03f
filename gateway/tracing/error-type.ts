import { GatewayError } from '../errors.js';

/**
 * A failure's `error.type`: a GatewayError's code (`tool_timeout`, `upstream_timeout`, …), else
 * the error's class name, else `_OTHER` (the conventions' fallback). A low-cardinality name,
 * never a message.
 *
 * @example
 *   errorTypeOf(toolTimeout('get_time', 1000))  // 'tool_timeout'
 */
export function errorTypeOf(err: unknown): string {
  if (err instanceof GatewayError) return err.code;
  if (err instanceof Error && err.name && err.name !== 'Error') return err.name;
  return '_OTHER';
}
