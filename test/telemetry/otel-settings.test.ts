import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readOtelSettings, type OtelExportSettings } from '../../telemetry/otel-settings.js';

const on = (env: Record<string, string>) => readOtelSettings(env, 'switchyard') as OtelExportSettings;

test('off unless an endpoint is set; OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER=none win over one', () => {
  const cases: Array<[Record<string, string>, boolean]> = [
    [{}, false],
    [{ OTEL_SERVICE_NAME: 'x' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'false' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }, false],
  ];
  for (const [env, enabled] of cases) assert.equal(readOtelSettings(env, 'switchyard').enabled, enabled, JSON.stringify(env));
});

test('the base endpoint gets /v1/traces appended; the traces endpoint is used as is and wins', () => {
  assert.equal(on({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }).tracesUrl, 'http://c:4318/v1/traces');
  assert.equal(on({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/otlp/' }).tracesUrl, 'http://c:4318/otlp/v1/traces');
  assert.equal(
    on({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://t.example/api/traces' }).tracesUrl,
    'https://t.example/api/traces',
  );
});

test('defaults: protobuf, parentbased_always_on, the batch processor’s sizes, no content, service name given', () => {
  const settings = on({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' });
  assert.equal(settings.serviceName, 'switchyard');
  assert.equal(settings.protocol, 'http/protobuf');
  assert.equal(settings.sampler, 'parentbased_always_on');
  assert.deepEqual(settings.batch, { scheduleDelayMs: 5000, exportTimeoutMs: 30000, maxQueueSize: 2048, maxExportBatchSize: 512 });
  assert.equal(settings.captureContent, false);
  assert.equal(settings.attributeValueLengthLimit, 4096);
  assert.deepEqual(settings.headers, {});
});

test('headers, resource attributes, sampler, batch and content settings are read', () => {
  const settings = on({
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
    OTEL_EXPORTER_OTLP_HEADERS: 'x-a=1, authorization=Bearer%20t0ken',
    OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-a=2',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'gw-eu',
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.25',
    OTEL_BSP_SCHEDULE_DELAY: '10',
    OTEL_BSP_MAX_QUEUE_SIZE: '100',
    OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '500',
    OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '256',
    OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
  });
  assert.deepEqual(settings.headers, { 'x-a': '2', authorization: 'Bearer t0ken' });
  assert.equal(settings.protocol, 'http/json');
  assert.equal(settings.serviceName, 'gw-eu');
  assert.deepEqual(settings.resourceAttributes, { 'deployment.environment': 'prod' });
  assert.equal(settings.sampler, 'parentbased_traceidratio');
  assert.equal(settings.samplerRatio, 0.25);
  assert.equal(settings.batch.scheduleDelayMs, 10);
  assert.equal(settings.batch.maxExportBatchSize, 100, 'a batch never exceeds the queue');
  assert.equal(settings.attributeValueLengthLimit, 256);
  assert.equal(settings.captureContent, true);
});

test('a wrong value throws naming its variable, and never echoes a header', () => {
  const base = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
  const wrong: Array<[Record<string, string>, RegExp]> = [
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://c' }, /^Error: OTEL_EXPORTER_OTLP_ENDPOINT: /],
    [{ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, /^Error: OTEL_EXPORTER_OTLP_PROTOCOL: /],
    [{ ...base, OTEL_TRACES_SAMPLER: 'sometimes' }, /^Error: OTEL_TRACES_SAMPLER: /],
    [{ ...base, OTEL_TRACES_SAMPLER_ARG: '2' }, /^Error: OTEL_TRACES_SAMPLER_ARG: /],
    [{ ...base, OTEL_BSP_SCHEDULE_DELAY: 'soon' }, /^Error: OTEL_BSP_SCHEDULE_DELAY: /],
    [{ ...base, OTEL_SDK_DISABLED: 'yes' }, /^Error: OTEL_SDK_DISABLED: /],
  ];
  for (const [env, message] of wrong) assert.throws(() => readOtelSettings(env, 'switchyard'), message, JSON.stringify(env));
  assert.throws(
    () => readOtelSettings({ ...base, OTEL_EXPORTER_OTLP_HEADERS: 'Bearer s3cret-value' }, 'switchyard'),
    (err: Error) => err.message.startsWith('OTEL_EXPORTER_OTLP_HEADERS') && !err.message.includes('s3cret'),
  );
});
