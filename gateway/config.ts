/**
 * The gateway's whole configuration: one zod schema for `config/gateway.json`, plus the
 * environment overrides README documents. Parsed once at start; a bad file or value throws a
 * ConfigError naming the field, and `main.ts` exits 1 with that message.
 *
 * @example
 *   const config = parseConfig(JSON.parse(text), process.env)
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';

export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

// Every object refuses keys it does not know (.strict()): a misspelt setting is an error naming
// it, never a default silently kept.
const bucket = z
  .object({
    /** Tokens refilled per `durationSec`; the bucket holds this many at most. */
    points: z.number().int().positive(),
    durationSec: z.number().int().positive(),
  })
  .strict();

/** The most a single upstream call may write, whatever the client or model allow. */
export const OUTPUT_TOKEN_CEILING = 2048;

/** One upstream server's settings: a model's `upstream`, or each entry of its `upstreams`. */
const upstreamFields = {
  baseUrl: z.url(),
  model: z.string().min(1),
  /** Name of the environment variable that holds the upstream API key (never the key itself). */
  apiKeyEnv: z.string().min(1).optional(),
  timeoutMs: z.number().int().positive().default(120_000),
  maxOutputTokens: z
    .number()
    .int()
    .positive()
    .max(OUTPUT_TOKEN_CEILING, `at most ${OUTPUT_TOKEN_CEILING} (the gateway's ceiling for one call)`)
    .default(OUTPUT_TOKEN_CEILING),
};

const upstreamSchema = z.object(upstreamFields).strict();

/** A deployment's name is a metric label and a /health field: short, plain characters. */
const deploymentName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'letters, digits, _ . - (at most 64, starting with a letter or digit)');

const deploymentSchema = z
  .object({
    name: deploymentName.describe('Names the deployment in logs, metrics and `/health`; unique within the model'),
    ...upstreamFields,
    weight: z
      .number()
      .int()
      .min(1, 'at least 1')
      .default(1)
      .describe("Share of the model's conversations this deployment takes among the healthy ones of its priority"),
    priority: z
      .number()
      .int()
      .nonnegative()
      .default(0)
      .describe('Lower first: a higher number is used only while every deployment of every lower number is unhealthy'),
  })
  .strict();

/** How a model with several deployments chooses, cools down and fails over between them (gateway/chat/fleet.ts). */
const routingSchema = z
  .object({
    imbalance: z
      .number()
      .int()
      .nonnegative()
      .default(4)
      .describe(
        "A conversation's deployment is left for the least loaded one (outstanding ÷ weight) when it has more than this many more calls outstanding than the least loaded",
      ),
    failuresToCooldown: z
      .number()
      .int()
      .positive()
      .default(3)
      .describe('This many failed calls (connection, 5xx, timeout, in-stream error) within `failureWindowMs` cool a deployment down'),
    failureWindowMs: z.number().int().positive().default(60_000).describe('The window failures are counted in'),
    cooldownMs: z
      .number()
      .int()
      .positive()
      .default(30_000)
      .describe('How long a deployment cooled down for failures (or a 429 without `Retry-After`) gets no calls'),
    maxCooldownMs: z.number().int().positive().default(300_000).describe("The longest cooldown an upstream's `Retry-After` can ask for"),
    firstTokenTimeoutMs: z
      .number()
      .int()
      .positive()
      .default(30_000)
      .describe('A call that streamed nothing for this long is abandoned for another deployment (when another can take it)'),
    probeIntervalMs: z
      .number()
      .int()
      .positive()
      .default(30_000)
      .describe(
        "How often each deployment's `GET {baseUrl}/models` is probed; a probe that answers brings back one cooled down for failures",
      ),
  })
  .strict();

const modelSchema = z
  .object({
    id: z.string().min(1),
    alias: z.string().regex(/^[a-z][a-z0-9_-]*$/, 'lower-case letters, digits, _ and -'),
    ownedBy: z.string().min(1).default('switchyard'),
    created: z.number().int().nonnegative().default(1_735_689_600),
    /** One upstream server: the same as a list of one deployment named `default`. */
    upstream: upstreamSchema.optional(),
    upstreams: z
      .array(deploymentSchema)
      .min(1, 'at least one deployment')
      .optional()
      .describe('Several deployments of the model (instead of `upstream`), balanced and failed over (docs/fleet.md)'),
    routing: routingSchema.prefault({}),
  })
  .strict();

const stdioServerSchema = z.object({
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  /** Gateway variables whose names start with one of these go to the child as they are (`RPC_URL_` → every chain's URL). */
  envPassthrough: z.array(z.string().regex(/^[A-Z][A-Z0-9_]*$/, 'a variable-name prefix such as "RPC_URL_" (A-Z, 0-9, _)')).optional(),
  cwd: z.string().optional(),
  timeoutMs: z.number().int().positive().default(30_000),
  disabled: z.boolean().default(false),
  prefix: z.string().default(''),
});

const httpServerSchema = z.object({
  url: z.string().min(1),
  headers: z.record(z.string(), z.string()).default({}),
  timeoutMs: z.number().int().positive().default(30_000),
  disabled: z.boolean().default(false),
  prefix: z.string().default(''),
});

const mcpServerSchema = z.union([stdioServerSchema.strict(), httpServerSchema.strict()]);

const depositTokenSchema = z
  .object({
    symbol: z.string().min(1).max(16),
    address: z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'an address (0x + 40 hex digits)'),
    decimals: z.number().int().min(0).max(36),
    /** Atomic units per credit (1000 with 6 decimals: 0.001 USDC a credit); a string for values past 2^53. */
    unitsPerCredit: z
      .union([z.number().int().positive(), z.string().regex(/^[1-9][0-9]*$/, 'a positive whole number')])
      .transform((value) => BigInt(value)),
  })
  .strict();

const depositChainSchema = z
  .object({
    /** Where deposits are sent; without it the chain is not watched. */
    treasury: z
      .string()
      .regex(/^0x[0-9a-fA-F]{40}$/, 'an address (0x + 40 hex digits)')
      .optional(),
    /** A block tag the node finalizes (`finalized`, or `safe` where the operator accepts it), or a block count. */
    confirmations: z.union([z.enum(['finalized', 'safe']), z.number().int().positive()]).default('finalized'),
    /** The first block to scan; default the head when the watcher first runs. */
    startBlock: z.number().int().nonnegative().optional(),
    tokens: z.array(depositTokenSchema).default([]),
  })
  .strict();

const evmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'an 0x address of 40 hex digits');

/** One stablecoin x402 payments may use (an EIP-3009 token such as USDC) on one chain. */
const x402AssetSchema = z
  .object({
    /** CAIP-2, e.g. `eip155:8453` (Base) or `eip155:84532` (Base Sepolia). */
    network: z.string().regex(/^eip155:[1-9][0-9]{0,15}$/, 'a CAIP-2 EVM network such as eip155:8453'),
    /** The token contract. */
    address: evmAddress,
    /** The token's EIP-712 domain name and version (USDC on Base: "USD Coin", "2"). */
    name: z.string().min(1),
    version: z.string().min(1),
    /** Atomic units per credit, e.g. "10000" for 0.01 USDC (6 decimals) per credit. */
    unitsPerCredit: z.string().regex(/^[1-9][0-9]{0,30}$/, 'a positive whole number of atomic units'),
    /** JSON-RPC of that chain: settlements whose outcome is unknown are reconciled by reading authorizationState here. */
    rpcUrl: z.url(),
  })
  .strict();

/** Pay-on-402 top-ups (x402 protocol version 2); off when absent. */
const x402Schema = z
  .object({
    /** The facilitator that verifies and settles payments (the gateway never signs or broadcasts). */
    facilitatorUrl: z.url(),
    /** Headers every facilitator call carries (e.g. Authorization). */
    facilitatorHeaders: z.record(z.string(), z.string()).default({}),
    /** Where payments go. */
    payTo: evmAddress,
    assets: z.array(x402AssetSchema).min(1),
    /** Top-ups offered, in credits; the smallest offer is raised to cover the refused request's hold. */
    topUpCredits: z.array(z.number().int().positive()).min(1).default([1000]),
    /** The largest top-up a payment may carry, in credits. */
    maxTopUpCredits: z.number().int().positive().default(1_000_000),
    /** How long an offer's signed authorization may stay valid. */
    maxTimeoutSeconds: z.number().int().min(30).default(300),
    verifyTimeoutMs: z.number().int().positive().default(10_000),
    /** A settlement not answered in this time has an unknown outcome: 503 payment_pending, reconciled later. */
    settleTimeoutMs: z.number().int().positive().default(60_000),
    reconcileIntervalMs: z.number().int().positive().default(30_000),
  })
  .strict();

const booleanString = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => v === 'true' || v === '1' || v === 'yes');

const configSchema = z
  .object({
    server: z
      .object({
        port: z.number().int().min(0).max(65535).default(8080),
        host: z.string().min(1).default('127.0.0.1'),
        /** Public origin clients use; default `http://HOST:PORT`. SIWE's domain and uri come from it. */
        publicUrl: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
        bodyLimitBytes: z
          .number()
          .int()
          .positive()
          .default(4 * 1024 * 1024),
        /** How long in-flight requests may run after SIGTERM before they are aborted. */
        shutdownGraceMs: z.number().int().nonnegative().default(10_000),
        /** After SIGTERM, keep serving this long while /health answers 503 `draining` (load balancers notice). */
        drainDelayMs: z.number().int().nonnegative().default(5_000),
        corsOrigins: z.array(z.string().min(1)).default([]),
        /** Trust X-Forwarded-For for the client IP (behind a reverse proxy). */
        trustProxy: z.boolean().default(false),
      })
      .strict()
      .prefault({}),
    freeMode: z.boolean().default(false),
    dataDir: z.string().min(1).default('./data'),
    /**
     * Cluster mode: with `databaseUrl` (PostgreSQL) any number of gateways share keys and ledger;
     * with `redisUrl` too they share limits, nonces and key-cache invalidation.
     */
    cluster: z
      .object({
        databaseUrl: z
          .string()
          .regex(/^postgres(ql)?:\/\/\S+$/, 'must be a postgres:// or postgresql:// URL')
          .optional(),
        redisUrl: z
          .string()
          .regex(/^rediss?:\/\/\S+$/, 'must be a redis:// or rediss:// URL')
          .optional(),
        /** Keeps several deployments apart on one Redis. */
        redisPrefix: z
          .string()
          .min(1)
          .max(64)
          .regex(/^[A-Za-z0-9:_.-]+$/, 'letters, digits and : _ . -')
          .default('switchyard:'),
      })
      .strict()
      .prefault({}),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    adminToken: z.string().min(16, 'at least 16 characters').optional(),
    limits: z
      .object({
        perWallet: bucket.prefault({ points: 600, durationSec: 60 }),
        perIp: bucket.prefault({ points: 1200, durationSec: 60 }),
        chatConcurrencyPerWallet: z.number().int().positive().default(8),
        chatConcurrencyTotal: z.number().int().positive().default(256),
      })
      .strict()
      .prefault({}),
    accounts: z
      .object({
        /** An unsettled reservation is released after this long (crash, hang). */
        reservationTtlMs: z
          .number()
          .int()
          .positive()
          .default(6 * 60_000),
        nonceTtlMs: z
          .number()
          .int()
          .positive()
          .default(10 * 60_000),
        /** Smart-account (EIP-1271/6492) SIWE signatures are checked against this RPC when set. */
        siweRpcUrl: z.url().optional(),
      })
      .strict()
      .prefault({}),
    models: z.array(modelSchema).min(1),
    chat: z
      .object({
        maxRounds: z.number().int().min(0).max(8).default(8),
        /** A whole chat request has this deadline (`chat_deadline_ms`). */
        deadlineMs: z.number().int().positive().default(300_000),
        toolConcurrency: z.number().int().positive().default(4),
        toolResultMaxChars: z.number().int().positive().default(16_000),
        /** A streamed answer sends a `: keepalive` comment after this long without output (proxies drop idle connections). */
        keepAliveMs: z.number().int().positive().default(15_000),
        /** How long the gateway's own rounds are kept for the client's continuation after it handed back client tool calls. */
        keptRoundsTtlMs: z.number().int().positive().default(3_600_000),
        /** Embedded mode keeps them in memory: at most this many handed-back rounds, least recently used dropped first. */
        keptRoundsMaxEntries: z.number().int().positive().default(10_000),
        /**
         * Every store holds at most this much of kept rounds in all, the oldest dropped first: characters in
         * memory, bytes in Redis or PostgreSQL (callers rotating wallet headers cannot fill them).
         */
        keptRoundsMaxChars: z
          .number()
          .int()
          .positive()
          .default(64 * 1024 * 1024),
        preamble: z
          .string()
          .default(
            'You are Switchyard, an assistant that answers with the help of read-only tools. Today is {date}. ' +
              'Tools can read blockchains, prices, the web and a knowledge base; none can sign or send anything. ' +
              'Use tools when they help, and cite the sources (URLs, chains, providers) your answer relies on.',
          ),
      })
      .strict()
      .prefault({}),
    /** Stored responses of POST /v1/responses (`store: true`): how long, and how many per wallet. */
    responses: z
      .object({
        ttlMs: z
          .number()
          .int()
          .positive()
          .default(24 * 3_600_000),
        maxPerWallet: z.number().int().positive().default(100),
        maxBytesPerWallet: z
          .number()
          .int()
          .positive()
          .default(16 * 1024 * 1024),
        /** Expired responses are deleted this often (reads never return them even before). */
        sweepIntervalMs: z.number().int().positive().default(60_000),
      })
      .strict()
      .prefault({}),
    mcpServers: z.record(z.string().regex(/^[A-Za-z0-9_-]+$/), mcpServerSchema).default({}),
    /** Stablecoin deposits to a treasury, credited after confirmations (gateway/deposits/). Off until a chain has a treasury. */
    deposits: z
      .object({
        pollIntervalMs: z.number().int().positive().default(5_000),
        /** /health says `degraded` when a chain's watcher has made no progress (a page scanned, a pass completed) for this long. */
        stallAfterMs: z.number().int().positive().default(600_000),
        /** Blocks per eth_getLogs call at first; halved when a provider refuses the range. */
        maxBlockRange: z.number().int().positive().default(1_000),
        rpcTimeoutMs: z.number().int().positive().default(10_000),
        /** By the chain's key in config/chains.json (`base`, `ethereum`, …). */
        chains: z.record(z.string().regex(/^[a-z0-9-]+$/), depositChainSchema).default({}),
      })
      .strict()
      .prefault({}),
    x402: x402Schema.optional(),
  })
  .strict();

type ParsedConfig = z.infer<typeof configSchema>;
export type DeploymentConfig = z.infer<typeof deploymentSchema>;
export type RoutingConfig = z.infer<typeof routingSchema>;
/** A model as the gateway uses it: `upstream` has become a list of one deployment named `default`. */
export type ModelConfig = Omit<z.infer<typeof modelSchema>, 'upstream' | 'upstreams'> & { upstreams: DeploymentConfig[] };
export type Config = Omit<ParsedConfig, 'server' | 'models'> & {
  server: ParsedConfig['server'] & { publicUrl: string };
  models: ModelConfig[];
};
export type McpServerConfig = z.infer<typeof mcpServerSchema>;
export type DepositsConfig = z.infer<typeof configSchema>['deposits'];
export type X402Config = z.infer<typeof x402Schema>;
export type X402Asset = z.infer<typeof x402AssetSchema>;

/** Environment variables that override the file, and where each lands. */
const ENV_OVERRIDES: Array<[string, (raw: Record<string, unknown>, value: string) => void]> = [
  ['PORT', (raw, v) => (section(raw, 'server').port = numberFrom('PORT', v))],
  ['HOST', (raw, v) => (section(raw, 'server').host = v)],
  ['PUBLIC_URL', (raw, v) => (section(raw, 'server').publicUrl = v)],
  ['CORS_ORIGINS', (raw, v) => (section(raw, 'server').corsOrigins = splitList(v))],
  ['BODY_LIMIT_BYTES', (raw, v) => (section(raw, 'server').bodyLimitBytes = numberFrom('BODY_LIMIT_BYTES', v))],
  ['FREE_MODE', (raw, v) => (raw.freeMode = boolFrom('FREE_MODE', v))],
  ['DATA_DIR', (raw, v) => (raw.dataDir = v)],
  ['DATABASE_URL', (raw, v) => (section(raw, 'cluster').databaseUrl = v)],
  ['REDIS_URL', (raw, v) => (section(raw, 'cluster').redisUrl = v)],
  ['REDIS_PREFIX', (raw, v) => (section(raw, 'cluster').redisPrefix = v)],
  ['ADMIN_TOKEN', (raw, v) => (raw.adminToken = v)],
  ['LOG_LEVEL', (raw, v) => (raw.logLevel = v)],
  ['SIWE_RPC_URL', (raw, v) => (section(raw, 'accounts').siweRpcUrl = v)],
  ['DRAIN_DELAY_MS', (raw, v) => (section(raw, 'server').drainDelayMs = numberFrom('DRAIN_DELAY_MS', v))],
  ['CHAT_DEADLINE_MS', (raw, v) => (section(raw, 'chat').deadlineMs = numberFrom('CHAT_DEADLINE_MS', v))],
  ['RESPONSES_TTL_MS', (raw, v) => (section(raw, 'responses').ttlMs = numberFrom('RESPONSES_TTL_MS', v))],
  ['RESPONSES_MAX_PER_WALLET', (raw, v) => (section(raw, 'responses').maxPerWallet = numberFrom('RESPONSES_MAX_PER_WALLET', v))],
  [
    'RESPONSES_MAX_BYTES_PER_WALLET',
    (raw, v) => (section(raw, 'responses').maxBytesPerWallet = numberFrom('RESPONSES_MAX_BYTES_PER_WALLET', v)),
  ],
  ['KEPT_ROUNDS_TTL_MS', (raw, v) => (section(raw, 'chat').keptRoundsTtlMs = numberFrom('KEPT_ROUNDS_TTL_MS', v))],
  ['X402_FACILITATOR_URL', (raw, v) => (section(raw, 'x402').facilitatorUrl = v)],
  ['X402_PAY_TO', (raw, v) => (section(raw, 'x402').payTo = v)],
  // A secret: kept out of the file, like the upstream keys.
  ['X402_FACILITATOR_AUTHORIZATION', (raw, v) => (facilitatorHeaders(raw).Authorization = v)],
];

function facilitatorHeaders(raw: Record<string, unknown>): Record<string, unknown> {
  const x402 = section(raw, 'x402');
  x402.facilitatorHeaders ??= {};
  return section(x402, 'facilitatorHeaders');
}

function section(raw: Record<string, unknown>, key: string): Record<string, unknown> {
  const current = raw[key];
  if (current === undefined) raw[key] = {};
  else if (typeof current !== 'object' || current === null || Array.isArray(current)) {
    throw new ConfigError(`config: "${key}" must be an object`);
  }
  return raw[key] as Record<string, unknown>;
}

function numberFrom(name: string, value: string): number {
  if (!/^\d+$/.test(value.trim())) throw new ConfigError(`config: ${name} must be a whole number, got "${value}"`);
  return Number(value.trim());
}

function boolFrom(name: string, value: string): boolean {
  const parsed = booleanString.safeParse(value.trim().toLowerCase());
  if (!parsed.success) throw new ConfigError(`config: ${name} must be true or false, got "${value}"`);
  return parsed.data;
}

function splitList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * `DEPOSIT_TREASURY_<CHAIN>` and `DEPOSIT_CONFIRMATIONS_<CHAIN>` (the chain's key upper-cased,
 * `-` as `_`): set or replace the file's value, creating the chain's entry when the file has none.
 */
function applyDepositEnv(raw: Record<string, unknown>, env: Env): void {
  for (const [name, value] of Object.entries(env)) {
    const match = /^DEPOSIT_(TREASURY|CONFIRMATIONS)_([A-Z0-9_]+)$/.exec(name);
    const text = nonEmpty(value);
    if (!match || text === undefined) continue;
    const chains = section(section(raw, 'deposits'), 'chains');
    const chain = section(chains, match[2].toLowerCase().replace(/_/g, '-'));
    if (match[1] === 'TREASURY') chain.treasury = text;
    else chain.confirmations = /^[0-9]+$/.test(text) ? numberFrom(name, text) : text;
  }
}

/**
 * Per-model upstream overrides: `<ALIAS>_UPSTREAM_*` beats `UPSTREAM_*` beats the file. They
 * describe one server, so a model with a list of deployments refuses them rather than have one
 * variable silently rewrite a fleet.
 */
function applyUpstreamEnv(raw: Record<string, unknown>, env: Env): void {
  if (!Array.isArray(raw.models)) return;
  (raw.models as Array<Record<string, unknown>>).forEach((model, i) => {
    if (typeof model !== 'object' || model === null || typeof model.alias !== 'string') return;
    const prefix = `${model.alias.toUpperCase().replace(/-/g, '_')}_UPSTREAM_`;
    const named = `models.${i} ("${String(model.id)}")`;
    if (model.upstream !== undefined && model.upstreams !== undefined) {
      throw new ConfigError(`config: ${named}: set either "upstream" (one server) or "upstreams" (a list), not both`);
    }
    if (model.upstreams !== undefined) {
      const set = [`${prefix}BASE_URL`, `${prefix}MODEL`, `${prefix}API_KEY`, 'UPSTREAM_BASE_URL', 'UPSTREAM_API_KEY'].filter(
        (name) => nonEmpty(env[name]) !== undefined,
      );
      if (set.length) {
        throw new ConfigError(
          `config: ${named} has a list of upstreams: ${set.join(', ')} would rewrite it; set each deployment in the file instead`,
        );
      }
      return;
    }
    const baseUrl = nonEmpty(env[`${prefix}BASE_URL`]) ?? nonEmpty(env.UPSTREAM_BASE_URL);
    const name = nonEmpty(env[`${prefix}MODEL`]);
    // The key itself stays in the environment; config only records which variable holds it.
    const apiKeyEnv = nonEmpty(env[`${prefix}API_KEY`])
      ? `${prefix}API_KEY`
      : nonEmpty(env.UPSTREAM_API_KEY)
        ? 'UPSTREAM_API_KEY'
        : undefined;
    if (!baseUrl && !name && !apiKeyEnv) return;
    const upstream = section(model, 'upstream');
    if (baseUrl) upstream.baseUrl = baseUrl;
    if (name) upstream.model = name;
    if (apiKeyEnv) upstream.apiKeyEnv = apiKeyEnv;
  });
}

/**
 * Every model with its deployments as a list (`upstream` is the list of one named `default`);
 * a model with neither, or two deployments of one name, is refused naming it.
 */
function withDeployments(models: ParsedConfig['models']): ModelConfig[] {
  return models.map(({ upstream, upstreams, ...model }, i) => {
    if (upstream) return { ...model, upstreams: [{ name: 'default', ...upstream, weight: 1, priority: 0 }] };
    if (!upstreams) throw new ConfigError(`config: models.${i} ("${model.id}"): needs "upstream" (one server) or "upstreams" (a list)`);
    const names = new Set<string>();
    upstreams.forEach((deployment, j) => {
      if (names.has(deployment.name)) {
        throw new ConfigError(`config: models.${i}.upstreams.${j}.name: "${deployment.name}" is used twice in model "${model.id}"`);
      }
      names.add(deployment.name);
    });
    return { ...model, upstreams };
  });
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.length ? issue.path.map(String).join('.') : '(root)';
  return `config: ${path}: ${issue.message}`;
}

/**
 * Validate a parsed config file and apply environment overrides.
 * Throws ConfigError whose message names the first bad field.
 */
export function parseConfig(json: unknown, env: Env): Config {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new ConfigError('config: the file must hold a JSON object');
  }
  const raw = structuredClone(json) as Record<string, unknown>;
  for (const [name, apply] of ENV_OVERRIDES) {
    const value = nonEmpty(env[name]);
    if (value !== undefined) apply(raw, value);
  }
  applyUpstreamEnv(raw, env);
  applyDepositEnv(raw, env);
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map(describeIssue).join('\n'));
  checkReservationOutlivesWork(parsed.data);
  const config = { ...parsed.data, models: withDeployments(parsed.data.models) };

  const aliases = new Set<string>();
  for (const model of config.models) {
    for (const name of [model.id, model.alias]) {
      if (aliases.has(name)) throw new ConfigError(`config: models: "${name}" is declared twice`);
      aliases.add(name);
    }
  }
  for (const [key, chain] of Object.entries(config.deposits.chains)) {
    if (chain.treasury && chain.tokens.length === 0) {
      throw new ConfigError(`config: deposits.chains.${key}: a treasury needs at least one token (address, decimals, unitsPerCredit)`);
    }
  }
  const x402 = config.x402;
  if (x402 && x402.topUpCredits.some((credits) => credits > x402.maxTopUpCredits)) {
    throw new ConfigError(`config: x402.topUpCredits must not exceed x402.maxTopUpCredits (${x402.maxTopUpCredits})`);
  }
  // A settled x402 payment is an ERC-20 Transfer to payTo: were payTo also a deposit treasury, the
  // watcher would credit the same money a second time as a deposit.
  const treasuryIsPayTo = Object.entries(config.deposits.chains).find(
    ([, chain]) => x402 && chain.treasury?.toLowerCase() === x402.payTo.toLowerCase(),
  );
  if (treasuryIsPayTo) {
    throw new ConfigError(
      `config: x402.payTo is also deposits.chains.${treasuryIsPayTo[0]}.treasury: a payment would be credited twice (once as a deposit); use another address`,
    );
  }
  if (config.cluster.redisUrl && !config.cluster.databaseUrl) {
    throw new ConfigError(
      'config: REDIS_URL (cluster.redisUrl) needs DATABASE_URL (cluster.databaseUrl): cluster mode keeps keys and credits in PostgreSQL',
    );
  }
  const publicUrl = config.server.publicUrl ?? `http://${hostForUrl(config.server.host)}:${config.server.port}`;
  return { ...config, server: { ...config.server, publicUrl: publicUrl.replace(/\/+$/, '') } };
}

/**
 * A reservation released by its TTL while its work still runs lets that work finish for free
 * (settle finds nothing to charge), so the TTL must outlast the longest work: a whole chat, one
 * upstream call, one tool call.
 */
function checkReservationOutlivesWork(config: ParsedConfig): void {
  const ttl = config.accounts.reservationTtlMs;
  const bounds: Array<[string, number]> = [
    ['chat.deadlineMs', config.chat.deadlineMs],
    ...config.models.flatMap((m, i): Array<[string, number]> => [
      ...(m.upstream ? [[`models.${i}.upstream.timeoutMs`, m.upstream.timeoutMs] as [string, number]] : []),
      ...(m.upstreams ?? []).map((d, j): [string, number] => [`models.${i}.upstreams.${j}.timeoutMs`, d.timeoutMs]),
    ]),
    ...Object.entries(config.mcpServers).map(([name, s]): [string, number] => [`mcpServers.${name}.timeoutMs`, s.timeoutMs]),
  ];
  for (const [field, value] of bounds) {
    if (value >= ttl) {
      throw new ConfigError(
        `config: accounts.reservationTtlMs (${ttl}) must exceed ${field} (${value}): a reservation released before its work ends lets that work run free`,
      );
    }
  }
}

function hostForUrl(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** Read and parse the config file (`SWITCHYARD_CONFIG` or `config/gateway.json`). */
export function loadConfig(env: Env): Config {
  const path = nonEmpty(env.SWITCHYARD_CONFIG) ?? 'config/gateway.json';
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`config: cannot read ${path}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`config: ${path} is not valid JSON: ${(err as Error).message}`);
  }
  return parseConfig(json, env);
}
