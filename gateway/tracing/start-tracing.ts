/**
 * Tracing from the standard OpenTelemetry variables (telemetry/otel-settings.ts): off unless an
 * OTLP endpoint is set, and then the SDK is loaded with a dynamic import, so a gateway with
 * tracing off never loads it. A set but wrong variable stops the start, naming it.
 *
 * @example
 *   const tracing = await startTracing(env, { onDropped: (n) => metrics.traceSpansDropped.inc(n) })
 */
import { z } from 'zod';
import type { Env } from '../config.js';
import { readOtelSettings } from '../../telemetry/otel-settings.js';
import { noTracing, type Tracing } from './trace-span.js';

/** The gateway's own tracing variable, beside the standard ones (telemetry/otel-settings.ts). */
export const gatewayTracingEnvSchema = z.object({
  TRACE_WALLET_HMAC_SECRET: z
    .string()
    .trim()
    .min(16, 'must be at least 16 characters')
    .optional()
    .describe(
      'A per-deployment secret: the HTTP span then carries `switchyard.wallet.hmac`, an HMAC-SHA256 of the wallet under it, to find one wallet’s traces; the address itself is never on a span',
    ),
});

/** `service.name` when OTEL_SERVICE_NAME is unset. */
const DEFAULT_SERVICE_NAME = 'switchyard';

export async function startTracing(env: Env, hooks: { onDropped?(count: number): void } = {}): Promise<Tracing> {
  let settings;
  try {
    settings = readOtelSettings(env, DEFAULT_SERVICE_NAME);
  } catch (err) {
    throw new Error(`tracing: ${(err as Error).message}`);
  }
  if (!settings.enabled) return noTracing(settings.serviceName);
  const own = gatewayTracingEnvSchema.safeParse({ TRACE_WALLET_HMAC_SECRET: env.TRACE_WALLET_HMAC_SECRET?.trim() || undefined });
  if (!own.success) throw new Error(`tracing: TRACE_WALLET_HMAC_SECRET ${own.error.issues[0].message}`);
  const { createOtelTracing } = await import('./otel-tracing.js');
  return createOtelTracing(settings, { walletSecret: own.data.TRACE_WALLET_HMAC_SECRET, onDropped: hooks.onDropped });
}
