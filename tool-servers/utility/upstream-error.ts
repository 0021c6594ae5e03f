import { describeFailure, HttpFailure, ToolError } from '../kit/index.js';

/**
 * Turn a failed call to a single provider (no fallback) into the ToolError the caller sees:
 * our own ToolErrors pass through, a timeout stays a timeout, anything else is
 * `upstream_unavailable` naming the provider and what went wrong (never its URL).
 *
 * @example
 *   try { … } catch (err) { throw asUpstreamError('Open-Meteo forecast', err) }
 */
export function asUpstreamError(provider: string, err: unknown): ToolError {
  if (err instanceof ToolError) return err;
  if (err instanceof HttpFailure && (err.kind === 'timeout' || err.kind === 'aborted')) {
    return new ToolError('timeout', `${provider}: ${err.message}`, { cause: err });
  }
  return new ToolError('upstream_unavailable', `${provider}: ${describeFailure(err)}`, { cause: err });
}
