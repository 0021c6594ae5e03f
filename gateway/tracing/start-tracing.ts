/**
 * Tracing from the standard OpenTelemetry variables (telemetry/otel-settings.ts): off unless an
 * OTLP endpoint is set, and then the SDK is loaded with a dynamic import, so a gateway with
 * tracing off never loads it. A set but wrong variable stops the start, naming it.
 *
 * @example
 *   const tracing = await startTracing(env, { onDropped: (n) => metrics.traceSpansDropped.inc(n) })
 */
import type { Env } from '../config.js';
import { readOtelSettings } from '../../telemetry/otel-settings.js';
import { noTracing, type Tracing } from './trace-span.js';

/** `service.name` when OTEL_SERVICE_NAME is unset. */
export const DEFAULT_SERVICE_NAME = 'switchyard';

export async function startTracing(env: Env, hooks: { onDropped?(count: number): void } = {}): Promise<Tracing> {
  let settings;
  try {
    settings = readOtelSettings(env, DEFAULT_SERVICE_NAME);
  } catch (err) {
    throw new Error(`tracing: ${(err as Error).message}`);
  }
  if (!settings.enabled) return noTracing(settings.serviceName);
  const { createOtelTracing } = await import('./otel-tracing.js');
  const walletSecret = env.TRACE_WALLET_HMAC_SECRET?.trim() || undefined;
  return createOtelTracing(settings, { walletSecret, onDropped: hooks.onDropped });
}
