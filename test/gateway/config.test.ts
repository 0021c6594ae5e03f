import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, parseConfig } from '../../gateway/config.js';
import { startTestGateway } from '../helpers/gateway.js';

/** The file with the first model's upstream given `extra` settings. */
function withUpstream(extra: Record<string, unknown>): Record<string, unknown> {
  const json = fileJson();
  const [first] = json.models as Array<{ upstream: Record<string, unknown> }>;
  Object.assign(first.upstream, extra);
  return json;
}

function fileJson(): Record<string, unknown> {
  return {
    models: [
      { id: 'svc-32b-conductor', alias: 'conductor', upstream: { baseUrl: 'http://127.0.0.1:11434/v1', model: 'qwen3:32b' } },
      { id: 'svc-8b-operator', alias: 'operator', upstream: { baseUrl: 'http://127.0.0.1:11434/v1', model: 'qwen3:8b' } },
    ],
  };
}

test('defaults: port 8080 on 127.0.0.1, PUBLIC_URL from them, limits, no CORS, info logs', () => {
  const config = parseConfig(fileJson(), {});
  assert.equal(config.server.port, 8080);
  assert.equal(config.server.host, '127.0.0.1');
  assert.equal(config.server.publicUrl, 'http://127.0.0.1:8080');
  assert.equal(config.server.bodyLimitBytes, 4 * 1024 * 1024);
  assert.equal(config.server.shutdownGraceMs, 10_000);
  assert.deepEqual(config.server.corsOrigins, []);
  assert.equal(config.freeMode, false);
  assert.equal(config.dataDir, './data');
  assert.equal(config.logLevel, 'info');
  assert.equal(config.adminToken, undefined);
  assert.deepEqual(config.limits, {
    perWallet: { points: 600, durationSec: 60 },
    perIp: { points: 1200, durationSec: 60 },
    chatConcurrencyPerWallet: 8,
    chatConcurrencyTotal: 256,
  });
});

test('environment overrides the file; PUBLIC_URL defaults to http://HOST:PORT', () => {
  const json = { ...fileJson(), server: { port: 1, host: '0.0.0.0', corsOrigins: ['https://file.example'] } };
  const config = parseConfig(json, {
    PORT: '9090',
    HOST: '::1',
    FREE_MODE: 'yes',
    DATA_DIR: '/tmp/sy',
    ADMIN_TOKEN: 'a-token-of-16-chars',
    CORS_ORIGINS: ' https://a.example, https://b.example ,,',
    LOG_LEVEL: 'warn',
    BODY_LIMIT_BYTES: '1024',
  });
  assert.equal(config.server.port, 9090);
  assert.equal(config.server.host, '::1');
  assert.equal(config.server.publicUrl, 'http://[::1]:9090');
  assert.deepEqual(config.server.corsOrigins, ['https://a.example', 'https://b.example']);
  assert.equal(config.server.bodyLimitBytes, 1024);
  assert.equal(config.freeMode, true);
  assert.equal(config.dataDir, '/tmp/sy');
  assert.equal(config.adminToken, 'a-token-of-16-chars');
  assert.equal(config.logLevel, 'warn');
});

test('PUBLIC_URL wins over the default and loses its trailing slash; empty env values are ignored', () => {
  const config = parseConfig(fileJson(), { PUBLIC_URL: 'https://gw.example/', PORT: '', FREE_MODE: '  ' });
  assert.equal(config.server.publicUrl, 'https://gw.example');
  assert.equal(config.server.port, 8080);
  assert.equal(config.freeMode, false);
});

test('upstream precedence: <ALIAS>_UPSTREAM_* beats UPSTREAM_* beats the file', () => {
  const fileOnly = parseConfig(fileJson(), {});
  assert.equal(fileOnly.models[0].upstreams[0].baseUrl, 'http://127.0.0.1:11434/v1');
  assert.equal(fileOnly.models[0].upstreams[0].apiKeyEnv, undefined);

  const shared = parseConfig(fileJson(), { UPSTREAM_BASE_URL: 'http://127.0.0.1:8000/v1', UPSTREAM_API_KEY: 'k' });
  assert.deepEqual(
    shared.models.map((m) => [m.upstreams[0].baseUrl, m.upstreams[0].model, m.upstreams[0].apiKeyEnv]),
    [
      ['http://127.0.0.1:8000/v1', 'qwen3:32b', 'UPSTREAM_API_KEY'],
      ['http://127.0.0.1:8000/v1', 'qwen3:8b', 'UPSTREAM_API_KEY'],
    ],
  );

  const perAlias = parseConfig(fileJson(), {
    UPSTREAM_BASE_URL: 'http://127.0.0.1:8000/v1',
    UPSTREAM_API_KEY: 'k',
    OPERATOR_UPSTREAM_BASE_URL: 'http://127.0.0.1:8001/v1',
    OPERATOR_UPSTREAM_MODEL: 'llama3:8b',
    OPERATOR_UPSTREAM_API_KEY: 'k2',
  });
  assert.deepEqual(
    perAlias.models.map((m) => [m.upstreams[0].baseUrl, m.upstreams[0].model, m.upstreams[0].apiKeyEnv]),
    [
      ['http://127.0.0.1:8000/v1', 'qwen3:32b', 'UPSTREAM_API_KEY'],
      ['http://127.0.0.1:8001/v1', 'llama3:8b', 'OPERATOR_UPSTREAM_API_KEY'],
    ],
  );
});

test('UPSTREAM_MODEL names the model for every model, so one variable points both at one small local model; <ALIAS>_UPSTREAM_MODEL still wins', () => {
  const both = parseConfig(fileJson(), { UPSTREAM_MODEL: 'qwen3:0.6b' });
  assert.deepEqual(
    both.models.map((m) => [m.upstreams[0].baseUrl, m.upstreams[0].model]),
    [
      ['http://127.0.0.1:11434/v1', 'qwen3:0.6b'],
      ['http://127.0.0.1:11434/v1', 'qwen3:0.6b'],
    ],
  );
  const perAlias = parseConfig(fileJson(), { UPSTREAM_MODEL: 'qwen3:0.6b', CONDUCTOR_UPSTREAM_MODEL: 'qwen3:4b' });
  assert.deepEqual(
    perAlias.models.map((m) => m.upstreams[0].model),
    ['qwen3:4b', 'qwen3:0.6b'],
  );
});

test('kept chat rounds: 1 hour and 10 000 entries by default; KEPT_ROUNDS_TTL_MS overrides the file', () => {
  const defaults = parseConfig(fileJson(), {}).chat;
  assert.equal(defaults.keptRoundsTtlMs, 3_600_000);
  assert.equal(defaults.keptRoundsMaxEntries, 10_000);
  assert.equal(defaults.keptRoundsMaxChars, 64 * 1024 * 1024);
  const json = { ...fileJson(), chat: { keptRoundsTtlMs: 60_000, keptRoundsMaxEntries: 50 } };
  assert.equal(parseConfig(json, {}).chat.keptRoundsMaxEntries, 50);
  assert.equal(parseConfig(json, { KEPT_ROUNDS_TTL_MS: '120000' }).chat.keptRoundsTtlMs, 120_000);
  assert.throws(() => parseConfig(fileJson(), { KEPT_ROUNDS_TTL_MS: 'soon' }), ConfigError);
});

test('limits come from the file', () => {
  const json = {
    ...fileJson(),
    limits: { perWallet: { points: 5, durationSec: 10 }, chatConcurrencyPerWallet: 2, chatConcurrencyTotal: 3 },
  };
  const config = parseConfig(json, {});
  assert.deepEqual(config.limits.perWallet, { points: 5, durationSec: 10 });
  assert.deepEqual(config.limits.perIp, { points: 1200, durationSec: 60 });
  assert.equal(config.limits.chatConcurrencyPerWallet, 2);
  assert.equal(config.limits.chatConcurrencyTotal, 3);
});

const PREFIX_RULE = 'a variable-name prefix such as "RPC_URL_" (A-Z, 0-9, _)';
const withOnchain = (entry: Record<string, unknown>) => ({ ...fileJson(), mcpServers: { onchain: { command: 'node', ...entry } } });

test('bad values throw a ConfigError naming the field', () => {
  const cases: Array<[unknown, Record<string, string>, string]> = [
    [fileJson(), { PORT: 'abc' }, 'config: PORT must be a whole number, got "abc"'],
    [fileJson(), { PORT: '70000' }, 'config: server.port (set by PORT): Too big: expected number to be <=65535'],
    [fileJson(), { FREE_MODE: 'maybe' }, 'config: FREE_MODE must be true or false, got "maybe"'],
    [fileJson(), { BODY_LIMIT_BYTES: '-1' }, 'config: BODY_LIMIT_BYTES must be a whole number, got "-1"'],
    [
      fileJson(),
      { LOG_LEVEL: 'loud' },
      'config: logLevel (set by LOG_LEVEL): Invalid option: expected one of "fatal"|"error"|"warn"|"info"|"debug"|"trace"|"silent"',
    ],
    [fileJson(), { ADMIN_TOKEN: 'short' }, 'config: adminToken (set by ADMIN_TOKEN): at least 16 characters'],
    [{ ...fileJson(), adminToken: 'short' }, {}, 'config: adminToken: at least 16 characters'],
    [{}, {}, 'config: models: Invalid input: expected array, received undefined'],
    [[], {}, 'config: the file must hold a JSON object'],
    [{ ...fileJson(), server: 'x' }, { PORT: '1' }, 'config: "server" must be an object'],
    [
      { ...fileJson(), limits: { perIp: { points: 0, durationSec: 60 } } },
      {},
      'config: limits.perIp.points: Too small: expected number to be >0',
    ],
    [fileJson(), { PUBLIC_URL: 'ftp://gw.example' }, 'config: server.publicUrl (set by PUBLIC_URL): must be an http:// or https:// URL'],
    [fileJson(), { PUBLIC_URL: 'javascript:alert(1)' }, 'config: server.publicUrl (set by PUBLIC_URL): must be an http:// or https:// URL'],
    [withOnchain({ envPassthrough: [''] }), {}, `config: mcpServers.onchain.envPassthrough.0: ${PREFIX_RULE}`],
    [withOnchain({ envPassthrough: ['RPC_URL_', 'rpc_'] }), {}, `config: mcpServers.onchain.envPassthrough.1: ${PREFIX_RULE}`],
    [withOnchain({ envPassthrough: ['1ST_'] }), {}, `config: mcpServers.onchain.envPassthrough.0: ${PREFIX_RULE}`],
    [
      { ...fileJson(), mcpServers: { r: { url: 'https://tools.example/mcp', envPassthrough: ['A_'] } } },
      {},
      'config: mcpServers.r: Unrecognized key: "envPassthrough"',
    ],
    // A misspelt setting is an error in every section, never a default silently kept.
    [{ ...fileJson(), server: { shutdownGraceMS: 1 } }, {}, 'config: server: Unrecognized key: "shutdownGraceMS"'],
    [{ ...fileJson(), chat: { deadlineMS: 1 } }, {}, 'config: chat: Unrecognized key: "deadlineMS"'],
    [{ ...fileJson(), limits: { perIP: { points: 1, durationSec: 1 } } }, {}, 'config: limits: Unrecognized key: "perIP"'],
    [{ ...fileJson(), accounts: { reservationTTLMs: 1 } }, {}, 'config: accounts: Unrecognized key: "reservationTTLMs"'],
    [{ ...fileJson(), responses: { ttlMS: 1 } }, {}, 'config: responses: Unrecognized key: "ttlMS"'],
    [withUpstream({ timeoutMS: 1 }), {}, 'config: models.0.upstream: Unrecognized key: "timeoutMS"'],
    [
      withUpstream({ maxOutputTokens: 4096 }),
      {},
      "config: models.0.upstream.maxOutputTokens: at most 2048 (the gateway's ceiling for one call)",
    ],
    [
      { models: [{ id: 'svc-32b-conductor', alias: 'conductor', upstream: 'x' }] },
      { UPSTREAM_BASE_URL: 'http://127.0.0.1:9/v1' },
      'config: "upstream" must be an object',
    ],
  ];
  for (const [json, env, message] of cases) {
    assert.throws(
      () => parseConfig(json, env),
      (err: unknown) => err instanceof ConfigError && err.message === message,
      `expected "${message}" for ${JSON.stringify(env)}`,
    );
  }
});

test('a model id or alias declared twice is refused', () => {
  const json = fileJson();
  (json.models as Array<Record<string, unknown>>)[1].alias = 'conductor';
  assert.throws(() => parseConfig(json, {}), { name: 'ConfigError', message: 'config: models: "conductor" is declared twice' });
});

test('accounts.reservationTtlMs must outlast the chat deadline, every upstream call and every tool call', () => {
  const refused = (json: Record<string, unknown>, env: Record<string, string>, field: string, value: number, ttl = 360_000) =>
    assert.throws(() => parseConfig(json, env), {
      name: 'ConfigError',
      message: `config: accounts.reservationTtlMs (${ttl}) must exceed ${field} (${value}): a reservation released before its work ends lets that work run free`,
    });
  refused(fileJson(), { CHAT_DEADLINE_MS: '360000' }, 'chat.deadlineMs', 360_000);
  refused({ ...fileJson(), accounts: { reservationTtlMs: 250_000 } }, {}, 'chat.deadlineMs', 300_000, 250_000);
  const slowModel = fileJson();
  (slowModel.models as Array<{ upstream: Record<string, unknown> }>)[1].upstream.timeoutMs = 400_000;
  refused(slowModel, {}, 'models.1.upstream.timeoutMs', 400_000);
  refused({ ...fileJson(), mcpServers: { web: { command: 'node', timeoutMs: 500_000 } } }, {}, 'mcpServers.web.timeoutMs', 500_000);
  // The defaults fit: 360 s > 300 s > 120 s > 30 s.
  assert.equal(parseConfig(fileJson(), {}).accounts.reservationTtlMs, 360_000);
});

test('a PUBLIC_URL on a wildcard address (HOST=0.0.0.0 without PUBLIC_URL) is warned about at start', async () => {
  const gw = await startTestGateway({ env: { PUBLIC_URL: 'http://0.0.0.0:8080' } });
  try {
    const warning = gw.logs.find((l) => l.level === 40 && typeof l.msg === 'string' && l.msg.startsWith('SIWE domain'));
    assert.equal(warning?.msg, 'SIWE domain will be 0.0.0.0:8080: set PUBLIC_URL to the address clients use');
  } finally {
    await gw.stop();
  }
  const quiet = await startTestGateway();
  try {
    assert.ok(!quiet.logs.some((l) => typeof l.msg === 'string' && l.msg.startsWith('SIWE domain')));
  } finally {
    await quiet.stop();
  }
});

test('cluster mode: DATABASE_URL, REDIS_URL and REDIS_PREFIX; none set is embedded mode; drain delay 5 s', () => {
  const embedded = parseConfig(fileJson(), {});
  assert.deepEqual(embedded.cluster, { redisPrefix: 'switchyard:' });
  assert.equal(embedded.server.drainDelayMs, 5_000);
  const cluster = parseConfig(fileJson(), {
    DATABASE_URL: 'postgres://gw:secret@db.internal:5432/switchyard',
    REDIS_URL: 'redis://cache.internal:6379/0',
    REDIS_PREFIX: 'prod-eu:',
    DRAIN_DELAY_MS: '2000',
  });
  assert.deepEqual(cluster.cluster, {
    databaseUrl: 'postgres://gw:secret@db.internal:5432/switchyard',
    redisUrl: 'redis://cache.internal:6379/0',
    redisPrefix: 'prod-eu:',
  });
  assert.equal(cluster.server.drainDelayMs, 2_000);
  assert.equal(parseConfig(fileJson(), { DATABASE_URL: 'postgresql://127.0.0.1/x' }).cluster.redisUrl, undefined);
});

test('cluster mode refuses REDIS_URL without DATABASE_URL, and URLs of the wrong kind, without echoing them', () => {
  assert.throws(
    () => parseConfig(fileJson(), { REDIS_URL: 'redis://127.0.0.1:6379' }),
    (err: unknown) =>
      err instanceof ConfigError &&
      err.message ===
        'config: REDIS_URL (cluster.redisUrl) needs DATABASE_URL (cluster.databaseUrl): cluster mode keeps keys and credits in PostgreSQL',
  );
  assert.throws(
    () => parseConfig(fileJson(), { DATABASE_URL: 'mysql://root:hunter2@db/x' }),
    (err: unknown) =>
      err instanceof ConfigError &&
      err.message === 'config: cluster.databaseUrl (set by DATABASE_URL): must be a postgres:// or postgresql:// URL' &&
      !err.message.includes('hunter2'),
  );
  const wrongRedis = { DATABASE_URL: 'postgres://x/y', REDIS_URL: 'http://cache' };
  assert.throws(
    () => parseConfig(fileJson(), wrongRedis),
    /cluster\.redisUrl \(set by REDIS_URL\): must be a redis:\/\/ or rediss:\/\/ URL/,
  );
  assert.throws(
    () => parseConfig(fileJson(), { REDIS_PREFIX: 'has space' }),
    /cluster\.redisPrefix \(set by REDIS_PREFIX\): letters, digits and : _ \. -/,
  );
});

test('stored responses: 24 h, 100 per wallet and 16 MiB by default; RESPONSES_* override the file', () => {
  assert.deepEqual(parseConfig(fileJson(), {}).responses, {
    ttlMs: 86_400_000,
    maxPerWallet: 100,
    maxBytesPerWallet: 16 * 1024 * 1024,
    sweepIntervalMs: 60_000,
  });
  const config = parseConfig(
    { ...fileJson(), responses: { ttlMs: 1_000, sweepIntervalMs: 5_000 } },
    { RESPONSES_TTL_MS: '60000', RESPONSES_MAX_PER_WALLET: '7', RESPONSES_MAX_BYTES_PER_WALLET: '4096' },
  );
  assert.deepEqual(config.responses, { ttlMs: 60_000, maxPerWallet: 7, maxBytesPerWallet: 4096, sweepIntervalMs: 5_000 });
  assert.throws(() => parseConfig(fileJson(), { RESPONSES_MAX_PER_WALLET: 'many' }), /RESPONSES_MAX_PER_WALLET must be a whole number/);
});

test('usage records: kept 90 days by default; the file or USAGE_RETENTION_DAYS sets it, a whole number of days', () => {
  assert.deepEqual(parseConfig(fileJson(), {}).usage, { retentionDays: 90 });
  assert.deepEqual(parseConfig({ ...fileJson(), usage: { retentionDays: 7 } }, {}).usage, { retentionDays: 7 });
  assert.deepEqual(parseConfig({ ...fileJson(), usage: { retentionDays: 7 } }, { USAGE_RETENTION_DAYS: '30' }).usage, {
    retentionDays: 30,
  });
  assert.throws(() => parseConfig({ ...fileJson(), usage: { retentionDays: 0 } }, {}), /usage\.retentionDays/);
  assert.throws(() => parseConfig(fileJson(), { USAGE_RETENTION_DAYS: 'long' }), /USAGE_RETENTION_DAYS must be a whole number/);
});

test('x402: off by default; the file section with its defaults; X402_* variables override the facilitator, pay-to and its auth header', () => {
  assert.equal(parseConfig(fileJson(), {}).x402, undefined);
  const asset = {
    network: 'eip155:8453',
    address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    name: 'USD Coin',
    version: '2',
    unitsPerCredit: '10000',
    rpcUrl: 'https://mainnet.base.org',
  };
  const json = {
    ...fileJson(),
    x402: { facilitatorUrl: 'https://x402.example/facilitator', payTo: '0x' + '11'.repeat(20), assets: [asset] },
  };
  const config = parseConfig(json, {});
  assert.deepEqual(config.x402, {
    facilitatorUrl: 'https://x402.example/facilitator',
    facilitatorHeaders: {},
    payTo: '0x' + '11'.repeat(20),
    assets: [asset],
    topUpCredits: [1000],
    maxTopUpCredits: 1_000_000,
    maxTimeoutSeconds: 300,
    verifyTimeoutMs: 10_000,
    settleTimeoutMs: 60_000,
    reconcileIntervalMs: 30_000,
  });
  const overridden = parseConfig(json, {
    X402_FACILITATOR_URL: 'http://127.0.0.1:4021',
    X402_PAY_TO: '0x' + '22'.repeat(20),
    X402_FACILITATOR_AUTHORIZATION: 'Bearer facilitator-secret',
  });
  assert.equal(overridden.x402?.facilitatorUrl, 'http://127.0.0.1:4021');
  assert.equal(overridden.x402?.payTo, '0x' + '22'.repeat(20));
  assert.deepEqual(overridden.x402?.facilitatorHeaders, { Authorization: 'Bearer facilitator-secret' });
});

test('x402: a network that is not CAIP-2 EVM, a bad pay-to, no assets or a top-up above the maximum are refused', () => {
  const asset = {
    network: 'eip155:84532',
    address: '0x' + '33'.repeat(20),
    name: 'USDC',
    version: '2',
    unitsPerCredit: '10000',
    rpcUrl: 'https://sepolia.base.org',
  };
  const base = { facilitatorUrl: 'https://f.example', payTo: '0x' + '11'.repeat(20), assets: [asset] };
  const withX402 = (x402: Record<string, unknown>) => ({ ...fileJson(), x402: { ...base, ...x402 } });
  assert.throws(
    () => parseConfig(withX402({ assets: [{ ...asset, network: 'base-sepolia' }] }), {}),
    /x402\.assets\.0\.network: a CAIP-2 EVM network/,
  );
  assert.throws(() => parseConfig(withX402({ payTo: '0x1234' }), {}), /x402\.payTo: an 0x address/);
  assert.throws(() => parseConfig(withX402({ assets: [] }), {}), /x402\.assets/);
  assert.throws(() => parseConfig(withX402({ assets: [{ ...asset, unitsPerCredit: '0' }] }), {}), /unitsPerCredit/);
  assert.throws(
    () => parseConfig(withX402({ topUpCredits: [100, 5000], maxTopUpCredits: 1000 }), {}),
    /x402\.topUpCredits must not exceed x402\.maxTopUpCredits \(1000\)/,
  );
  assert.throws(() => parseConfig(fileJson(), { X402_FACILITATOR_URL: 'http://127.0.0.1:4021' }), /x402\.payTo/);
  // The same address as a deposit treasury would credit each payment twice (again as a deposit).
  assert.throws(
    () =>
      parseConfig(
        {
          ...withX402({}),
          deposits: {
            chains: { base: { tokens: [{ symbol: 'USDC', address: '0x' + '44'.repeat(20), decimals: 6, unitsPerCredit: 1000 }] } },
          },
        },
        { DEPOSIT_TREASURY_BASE: '0x' + '11'.repeat(20) },
      ),
    /x402\.payTo is also deposits\.chains\.base\.treasury: a payment would be credited twice/,
  );
});

/** The file with the first model served by these deployments. */
function withFleet(upstreams: unknown, routing?: Record<string, unknown>): Record<string, unknown> {
  const json = fileJson();
  const [first] = json.models as Array<Record<string, unknown>>;
  delete first.upstream;
  first.upstreams = upstreams;
  if (routing) first.routing = routing;
  return json;
}

const gpu = (name: string, more: Record<string, unknown> = {}) => ({
  name,
  baseUrl: `http://${name}.internal:8000/v1`,
  model: 'Qwen/Qwen3-32B',
  ...more,
});

test('models[].upstreams: deployments with their weights and priorities; routing defaults; upstream is the list of one named default', () => {
  const config = parseConfig(
    withFleet([
      gpu('gpu-a'),
      gpu('gpu-b', { weight: 2, timeoutMs: 90_000 }),
      { ...gpu('hosted', { priority: 1, apiKeyEnv: 'HOSTED_KEY' }) },
    ]),
    {},
  );
  const [fleet, single] = config.models;
  assert.deepEqual(
    fleet.upstreams.map((d) => [d.name, d.weight, d.priority, d.timeoutMs, d.maxOutputTokens, d.apiKeyEnv]),
    [
      ['gpu-a', 1, 0, 120_000, 2048, undefined],
      ['gpu-b', 2, 0, 90_000, 2048, undefined],
      ['hosted', 1, 1, 120_000, 2048, 'HOSTED_KEY'],
    ],
  );
  assert.deepEqual(fleet.routing, {
    imbalance: 4,
    failuresToCooldown: 3,
    failureWindowMs: 60_000,
    cooldownMs: 30_000,
    maxCooldownMs: 300_000,
    firstTokenTimeoutMs: 30_000,
    probeIntervalMs: 30_000,
  });
  assert.deepEqual(single.upstreams, [
    {
      name: 'default',
      baseUrl: 'http://127.0.0.1:11434/v1',
      model: 'qwen3:8b',
      timeoutMs: 120_000,
      maxOutputTokens: 2048,
      weight: 1,
      priority: 0,
    },
  ]);
  assert.equal('upstream' in single, false);
  const tuned = parseConfig(withFleet([gpu('a'), gpu('b')], { imbalance: 0, cooldownMs: 5_000, probeIntervalMs: 1_000 }), {});
  assert.deepEqual(
    [tuned.models[0].routing.imbalance, tuned.models[0].routing.cooldownMs, tuned.models[0].routing.probeIntervalMs],
    [0, 5_000, 1_000],
  );
});

test('a bad list of deployments stops the start naming the field (or the model)', () => {
  const both = withFleet([gpu('a')]);
  (both.models as Array<Record<string, unknown>>)[0].upstream = { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' };
  const neither = withFleet(undefined);
  const cases: Array<[Record<string, unknown>, Record<string, string>, string]> = [
    [withFleet([]), {}, 'config: models.0.upstreams: at least one deployment'],
    [withFleet([gpu('a'), gpu('b'), gpu('a')]), {}, 'config: models.0.upstreams.2.name: "a" is used twice in model "svc-32b-conductor"'],
    [withFleet([gpu('a', { weight: 0 })]), {}, 'config: models.0.upstreams.0.weight: at least 1'],
    [withFleet([gpu('a', { weight: 1.5 })]), {}, 'config: models.0.upstreams.0.weight: Invalid input: expected int, received number'],
    [withFleet([gpu('a', { priority: -1 })]), {}, 'config: models.0.upstreams.0.priority: Too small: expected number to be >=0'],
    [
      withFleet([{ ...gpu('a'), name: 'a b' }]),
      {},
      'config: models.0.upstreams.0.name: letters, digits, _ . - (at most 64, starting with a letter or digit)',
    ],
    [
      withFleet([{ baseUrl: 'http://x.internal/v1', model: 'm' }]),
      {},
      'config: models.0.upstreams.0.name: Invalid input: expected string, received undefined',
    ],
    [withFleet([gpu('a', { timeoutMS: 1 })]), {}, 'config: models.0.upstreams.0: Unrecognized key: "timeoutMS"'],
    [withFleet([gpu('a')], { imbalanse: 2 }), {}, 'config: models.0.routing: Unrecognized key: "imbalanse"'],
    [both, {}, 'config: models.0 ("svc-32b-conductor"): set either "upstream" (one server) or "upstreams" (a list), not both'],
    [neither, {}, 'config: models.0 ("svc-32b-conductor"): needs "upstream" (one server) or "upstreams" (a list)'],
  ];
  for (const [json, env, message] of cases) {
    assert.throws(
      () => parseConfig(json, env),
      (err: unknown) => err instanceof ConfigError && err.message === message,
      `expected "${message}"`,
    );
  }
});

test('the *_UPSTREAM_* variables keep working for a model with one upstream, and stop the start for a model with a list', () => {
  const fleet = withFleet([gpu('a'), gpu('b')]);
  // The operator (one upstream) still takes them.
  assert.equal(
    parseConfig(fleet, { OPERATOR_UPSTREAM_BASE_URL: 'http://127.0.0.1:8001/v1' }).models[1].upstreams[0].baseUrl,
    'http://127.0.0.1:8001/v1',
  );
  for (const name of [
    'CONDUCTOR_UPSTREAM_BASE_URL',
    'CONDUCTOR_UPSTREAM_MODEL',
    'CONDUCTOR_UPSTREAM_API_KEY',
    'UPSTREAM_BASE_URL',
    'UPSTREAM_MODEL',
    'UPSTREAM_API_KEY',
  ]) {
    const value = name.endsWith('URL') ? 'http://127.0.0.1:8000/v1' : 'x';
    assert.throws(() => parseConfig(fleet, { [name]: value }), {
      name: 'ConfigError',
      message: `config: models.0 ("svc-32b-conductor") has a list of upstreams: ${name} would rewrite it; set each deployment in the file instead`,
    });
  }
  assert.doesNotThrow(() => parseConfig(fleet, { CONDUCTOR_UPSTREAM_MODEL: '  ' }), 'an empty variable is not set');
});

test("accounts.reservationTtlMs must outlast every deployment's timeoutMs", () => {
  assert.throws(() => parseConfig(withFleet([gpu('a'), gpu('b', { timeoutMs: 400_000 })]), {}), {
    name: 'ConfigError',
    message:
      'config: accounts.reservationTtlMs (360000) must exceed models.0.upstreams.1.timeoutMs (400000): a reservation released before its work ends lets that work run free',
  });
});
