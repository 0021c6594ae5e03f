/**
 * The standard OpenTelemetry variables, read once from an environment with zod: whether traces
 * are exported at all, where to, and how the SDK batches and samples them. Shared by the gateway
 * and the tool servers (each reads its own environment; the gateway forwards `OTEL_*` to its
 * children), and free of the SDK itself: with tracing off, nothing of it is ever loaded.
 *
 * Off unless an endpoint is set (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as is, or
 * `OTEL_EXPORTER_OTLP_ENDPOINT` with `/v1/traces` appended), and off whatever else is set when
 * `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`. A value that is set but wrong throws,
 * naming the variable, so a process never runs half-configured.
 *
 * @example
 *   const settings = readOtelSettings(process.env, 'switchyard')
 *   if (settings.enabled) await import('./otel-sdk.js')
 */
import { z } from 'zod';

export type OtelEnv = Record<string, string | undefined>;

/** `parentbased_always_on` unless told: a sampled incoming trace stays sampled, an unsampled one stays out. */
export type SamplerName =
  'always_on' | 'always_off' | 'traceidratio' | 'parentbased_always_on' | 'parentbased_always_off' | 'parentbased_traceidratio';

export interface OtelExportSettings {
  enabled: true;
  serviceName: string;
  /** Where spans are POSTed (the whole URL). */
  tracesUrl: string;
  /** `http/protobuf` (the default, as the specification's) or `http/json`. */
  protocol: 'http/protobuf' | 'http/json';
  headers: Record<string, string>;
  /** One export request's timeout. */
  timeoutMs: number;
  sampler: SamplerName;
  /** The ratio of the `traceidratio` samplers, 0 to 1. */
  samplerRatio: number;
  batch: { scheduleDelayMs: number; exportTimeoutMs: number; maxQueueSize: number; maxExportBatchSize: number };
  /** Longest string attribute value; longer ones are cut (content capture included). */
  attributeValueLengthLimit: number;
  /** `OTEL_RESOURCE_ATTRIBUTES`, beside `service.name`. */
  resourceAttributes: Record<string, string>;
  /** `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`: prompts, answers, tool arguments and results go on spans. */
  captureContent: boolean;
}

export type OtelSettings = OtelExportSettings | { enabled: false; serviceName: string };

/** What a string attribute is cut to unless `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT` says otherwise. */
const DEFAULT_ATTRIBUTE_VALUE_LENGTH_LIMIT = 4096;

const flag = z.enum(['true', 'false']);
const count = (min: number) => z.string().trim().regex(/^\d+$/, 'must be a whole number').transform(Number).pipe(z.number().int().min(min));

/** The variables read, each with its meaning (docs/configuration.md's tracing table is written from it). */
export const otelEnvSchema = z.object({
  OTEL_SDK_DISABLED: flag.optional().describe('`true`: no tracing, whatever else is set').meta({ docDefault: '`false`' }),
  OTEL_TRACES_EXPORTER: z
    .enum(['otlp', 'none'])
    .optional()
    .describe('`none` turns tracing off; only `otlp` exports')
    .meta({ docDefault: '`otlp`' }),
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .url({ protocol: /^https?$/ })
    .optional()
    .describe('Collector base URL; `/v1/traces` is appended'),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z
    .url({ protocol: /^https?$/ })
    .optional()
    .describe('Traces URL, used as is (wins over the base URL)'),
  OTEL_EXPORTER_OTLP_HEADERS: z.string().optional().describe('`key=value,…` headers on every export (URL-encoded values)'),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: z.string().optional().describe('Headers for traces only, beside (and over) the general ones'),
  OTEL_EXPORTER_OTLP_PROTOCOL: z
    .enum(['http/protobuf', 'http/json'])
    .optional()
    .describe('Wire format; gRPC is not supported')
    .meta({ docDefault: '`http/protobuf`' }),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z.enum(['http/protobuf', 'http/json']).optional().describe('Wire format of traces'),
  OTEL_EXPORTER_OTLP_TIMEOUT: count(1).optional().describe('One export request’s timeout (ms)').meta({ docDefault: '`10000`' }),
  OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: count(1).optional().describe('One traces export request’s timeout (ms)'),
  OTEL_SERVICE_NAME: z
    .string()
    .trim()
    .min(1)
    .optional()
    .describe('`service.name` of the spans')
    .meta({ docDefault: "`switchyard` (a tool server: `<gateway's>-<server>`)" }),
  OTEL_RESOURCE_ATTRIBUTES: z.string().optional().describe('`key=value,…` resource attributes'),
  OTEL_TRACES_SAMPLER: z
    .enum(['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'])
    .optional()
    .describe('Sampler: with a `parentbased_` one a caller’s sampled flag decides, as it does by default')
    .meta({ docDefault: '`parentbased_always_on`' }),
  OTEL_TRACES_SAMPLER_ARG: z
    .string()
    .trim()
    .transform(Number)
    .pipe(z.number().min(0).max(1))
    .optional()
    .describe('Ratio of the `traceidratio` samplers, 0 to 1')
    .meta({ docDefault: '`1`' }),
  OTEL_BSP_SCHEDULE_DELAY: count(0).optional().describe('Delay between two batch exports (ms)').meta({ docDefault: '`5000`' }),
  OTEL_BSP_EXPORT_TIMEOUT: count(1).optional().describe('Longest one batch export may run (ms)').meta({ docDefault: '`30000`' }),
  OTEL_BSP_MAX_QUEUE_SIZE: count(1)
    .optional()
    .describe('Spans waiting for export at most; more are dropped (and counted)')
    .meta({ docDefault: '`2048`' }),
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: count(1).optional().describe('Spans per export request at most').meta({ docDefault: '`512`' }),
  OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: count(1)
    .optional()
    .describe('Longest string attribute value (captured content included); longer ones are cut')
    .meta({ docDefault: '`4096`' }),
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: flag
    .optional()
    .describe('`true`: prompts, answers, tool arguments and results on spans')
    .meta({ docDefault: '`false`' }),
});

/**
 * Read the standard variables (an empty one counts as unset). `defaultServiceName` names the
 * process when `OTEL_SERVICE_NAME` does not.
 */
export function readOtelSettings(env: OtelEnv, defaultServiceName: string): OtelSettings {
  const present: Record<string, string> = {};
  for (const name of Object.keys(otelEnvSchema.shape)) {
    const value = env[name];
    if (value !== undefined && value.trim() !== '') present[name] = value;
  }
  const parsed = otelEnvSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${issue.path.map(String).join('.')}: ${issue.message}`);
  }
  const v = parsed.data;
  const serviceName = v.OTEL_SERVICE_NAME ?? defaultServiceName;
  const base = v.OTEL_EXPORTER_OTLP_ENDPOINT;
  const tracesUrl = v.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined);
  if (v.OTEL_SDK_DISABLED === 'true' || v.OTEL_TRACES_EXPORTER === 'none' || tracesUrl === undefined) {
    return { enabled: false, serviceName };
  }
  return {
    enabled: true,
    serviceName,
    tracesUrl,
    protocol: v.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? v.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
    headers: {
      ...keyValueList('OTEL_EXPORTER_OTLP_HEADERS', v.OTEL_EXPORTER_OTLP_HEADERS),
      ...keyValueList('OTEL_EXPORTER_OTLP_TRACES_HEADERS', v.OTEL_EXPORTER_OTLP_TRACES_HEADERS),
    },
    timeoutMs: v.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? v.OTEL_EXPORTER_OTLP_TIMEOUT ?? 10_000,
    sampler: v.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on',
    samplerRatio: v.OTEL_TRACES_SAMPLER_ARG ?? 1,
    batch: {
      scheduleDelayMs: v.OTEL_BSP_SCHEDULE_DELAY ?? 5_000,
      exportTimeoutMs: v.OTEL_BSP_EXPORT_TIMEOUT ?? 30_000,
      maxQueueSize: v.OTEL_BSP_MAX_QUEUE_SIZE ?? 2_048,
      maxExportBatchSize: Math.min(v.OTEL_BSP_MAX_EXPORT_BATCH_SIZE ?? 512, v.OTEL_BSP_MAX_QUEUE_SIZE ?? 2_048),
    },
    attributeValueLengthLimit: v.OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT ?? DEFAULT_ATTRIBUTE_VALUE_LENGTH_LIMIT,
    resourceAttributes: keyValueList('OTEL_RESOURCE_ATTRIBUTES', v.OTEL_RESOURCE_ATTRIBUTES),
    captureContent: v.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT === 'true',
  };
}

/** `a=1,b=x%20y` → { a: '1', b: 'x y' } (the W3C Baggage-like form the specification uses). */
function keyValueList(name: string, text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!text) return out;
  for (const pair of text.split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf('=');
    // Never echoed: a header value is often a credential.
    if (at <= 0) throw new Error(`${name}: an entry is not key=value`);
    try {
      out[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      throw new Error(`${name}: a value is not URL-encoded`);
    }
  }
  return out;
}
