/**
 * The gateway's whole configuration: one zod schema for `config/gateway.json`, plus the
 * environment overrides. Parsed once at start; a bad file or value throws a ConfigError naming
 * the field, and `main.ts` exits 1 with that message.
 *
 * Each setting's `.describe()` (and `.meta()`: `docEnv` for variables named per model or chain,
 * `docDefault` where the schema's default does not speak for itself) is what
 * docs/configuration.md says of it: `npm run docs:config` writes its tables from this file and
 * ENV_OVERRIDES, and a test fails when the page and the schema differ or a setting has no
 * description.
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

/** What one upstream server takes, as a model's `upstream` or as each of its `upstreams`. */
const timeoutMs = z
  .number()
  .int()
  .positive()
  .default(120_000)
  .describe('Longest one upstream call may take (504 `upstream_timeout` after it)');
const maxOutputTokens = z
  .number()
  .int()
  .positive()
  .max(OUTPUT_TOKEN_CEILING, `at most ${OUTPUT_TOKEN_CEILING} (the gateway's ceiling for one call)`)
  .default(OUTPUT_TOKEN_CEILING)
  .describe(`Most tokens one upstream call may write (the client's \`max_tokens\` can only lower it; never above ${OUTPUT_TOKEN_CEILING})`);

const upstreamSchema = z
  .object({
    baseUrl: z.url().meta({
      description: 'OpenAI-compatible upstream of a model (`CONDUCTOR_…`, `OPERATOR_…`); the per-alias variable wins',
      docEnv: '`<ALIAS>_UPSTREAM_BASE_URL`, then `UPSTREAM_BASE_URL`',
      docDefault: 'per model in the file',
    }),
    model: z.string().min(1).meta({
      description: 'Model name sent upstream; `UPSTREAM_MODEL` names one model for every model (both at one small local model)',
      docEnv: '`<ALIAS>_UPSTREAM_MODEL`, then `UPSTREAM_MODEL`',
      docDefault: 'per model in the file',
    }),
    apiKeyEnv: z.string().min(1).optional().meta({
      description: 'Upstream API key; the file only names the variable, the key stays in the environment',
      docEnv: '`<ALIAS>_UPSTREAM_API_KEY`, then `UPSTREAM_API_KEY`',
    }),
    timeoutMs,
    maxOutputTokens,
  })
  .strict();

/** A deployment's name is a metric label and a /health field: short, plain characters. */
const deploymentName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'letters, digits, _ . - (at most 64, starting with a letter or digit)');

/** One of a model's `upstreams` (docs/fleet.md): set in the file only, no variable rewrites a fleet. */
const deploymentSchema = z
  .object({
    name: deploymentName.describe(
      'Names the deployment in logs, metrics and `/health`, unique within the model (letters, digits, `_ . -`, at most 64). ' +
        'A model has `upstreams` (several deployments, [the fleet](fleet.md)) or `upstream`, not both; ' +
        'the `*_UPSTREAM_*` variables refuse a model with a list (exit 1)',
    ),
    baseUrl: z.url().describe("The deployment's OpenAI-compatible server"),
    model: z.string().min(1).describe('Model name sent to it'),
    apiKeyEnv: z.string().min(1).optional().describe('The variable that holds its API key (the key stays in the environment)'),
    timeoutMs,
    maxOutputTokens,
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
      .describe('Lower first: a higher number takes calls only while every deployment of every lower number is unhealthy'),
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
        "A conversation's deployment with more than this many calls outstanding beyond the least loaded passes the call to the least loaded (outstanding ÷ weight)",
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
      .describe(
        'How long a deployment cooled down for failures (or a 429 without `Retry-After`) takes no calls, unless its probe answers first',
      ),
    maxCooldownMs: z.number().int().positive().default(300_000).describe("The longest cooldown an upstream's `Retry-After` can ask for"),
    firstTokenTimeoutMs: z
      .number()
      .int()
      .positive()
      .default(30_000)
      .describe('A call that streamed nothing for this long is abandoned for another deployment (when another can take it)'),
    probeIntervalMs: z.number().int().positive().default(30_000).describe("How often each deployment's `GET {baseUrl}/models` is probed"),
  })
  .strict();

const modelSchema = z
  .object({
    id: z
      .string()
      .min(1)
      .describe(
        'Canonical id, listed by `/v1/models` (`svc-32b-conductor`). The first model is the primary: a request without `model` gets it; ' +
          '`/health` says `degraded` while some model has no upstream up',
      ),
    alias: z
      .string()
      .regex(/^[a-z][a-z0-9_-]*$/, 'lower-case letters, digits, _ and -')
      .describe(
        'Short name accepted wherever the id is (`conductor`): lower-case letters, digits, `_` and `-`; upper-cased, `-` as `_`, ' +
          "it names the model's `<ALIAS>_UPSTREAM_*` variables",
      ),
    ownedBy: z.string().min(1).default('switchyard').describe('`owned_by` in `/v1/models`'),
    created: z.number().int().nonnegative().default(1_735_689_600).describe('`created` in `/v1/models` (Unix seconds)'),
    upstream: upstreamSchema.optional(),
    upstreams: z.array(deploymentSchema).min(1, 'at least one deployment').optional(),
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
    treasury: z
      .string()
      .regex(/^0x[0-9a-fA-F]{40}$/, 'an address (0x + 40 hex digits)')
      .optional()
      .meta({
        description:
          'Address deposits are sent to; unset: the chain is not watched. `<CHAIN>` is the key upper-cased, `-` as `_` ' +
          "(`BASE`, `ZKSYNC_ERA`); the variable creates the chain's entry when the file has none (its tokens must be in the file)",
        docEnv: '`DEPOSIT_TREASURY_<CHAIN>`',
      }),
    confirmations: z
      .union([z.enum(['finalized', 'safe']), z.number().int().positive()])
      .default('finalized')
      .meta({
        description:
          "When a deposit is credited: once its block is `finalized`, or `safe`, by the node's own tags, " +
          'or once it has this many confirmations (a number; the block holding it is the first)',
        docEnv: '`DEPOSIT_CONFIRMATIONS_<CHAIN>`',
      }),
    startBlock: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .meta({ description: 'First block scanned; later runs resume from the saved cursor', docDefault: 'the head at the first run' }),
    tokens: z
      .array(depositTokenSchema)
      .default([])
      .meta({
        description:
          'Accepted tokens: `{symbol, address, decimals, unitsPerCredit}`; `unitsPerCredit` is atomic units per credit ' +
          '(`1000` with 6 decimals: 0.001 USDC a credit; a string for values past 2^53)',
        docDefault: 'none (a treasury needs one)',
      }),
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
    facilitatorUrl: z
      .url()
      .describe(
        'The x402 facilitator that verifies and settles payments (`POST /verify`, `POST /settle`); the gateway never signs or broadcasts',
      ),
    facilitatorHeaders: z
      .record(z.string(), z.string())
      .default({})
      .describe("Headers every facilitator call carries (a hosted facilitator's API key)"),
    payTo: evmAddress.describe('The address payments go to; it may not be a deposit treasury (a payment would be credited twice)'),
    assets: z
      .array(x402AssetSchema)
      .min(1)
      .describe(
        'The stablecoins accepted, each `{network, address, name, version, unitsPerCredit, rpcUrl}`: CAIP-2 network (`eip155:8453`), ' +
          'an EIP-3009 token, its EIP-712 domain name and version (USDC on Base: `"USD Coin"`, `"2"`), atomic units per credit ' +
          '(`"10000"`: 0.01 USDC), and that chain\'s JSON-RPC (read only, for reconciliation)',
      ),
    topUpCredits: z
      .array(z.number().int().positive())
      .min(1)
      .default([1000])
      .describe("Top-ups offered, in credits; the smallest is raised to cover the refused request's hold"),
    maxTopUpCredits: z.number().int().positive().default(1_000_000).describe('The largest top-up one payment may carry'),
    maxTimeoutSeconds: z.number().int().min(30).default(300).describe('How long a signed authorization may stay valid (at least 30)'),
    verifyTimeoutMs: z
      .number()
      .int()
      .positive()
      .default(10_000)
      .describe('A verification not answered in this time is 503 `facilitator_unavailable`'),
    settleTimeoutMs: z
      .number()
      .int()
      .positive()
      .default(60_000)
      .describe('A settlement not answered in this time is 503 `payment_pending`, reconciled later'),
    reconcileIntervalMs: z.number().int().positive().default(30_000).describe('How often pending settlements are checked on chain'),
  })
  .strict();

const booleanString = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => v === 'true' || v === '1' || v === 'yes');

export const configSchema = z
  .object({
    server: z
      .object({
        port: z.number().int().min(0).max(65535).default(8080).describe('Port to listen on'),
        host: z.string().min(1).default('127.0.0.1').describe('Interface to listen on'),
        publicUrl: z
          .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
          .optional()
          .meta({
            description:
              'Public origin (`http://` or `https://`); SIWE `domain` and `uri` come from it. With `HOST=0.0.0.0` set it, ' +
              'or the SIWE domain is `0.0.0.0:PORT` (warned at start)',
            docDefault: '`http://HOST:PORT`',
          }),
        bodyLimitBytes: z
          .number()
          .int()
          .positive()
          .default(4 * 1024 * 1024)
          .describe('Largest request body (413 above)'),
        shutdownGraceMs: z
          .number()
          .int()
          .nonnegative()
          .default(10_000)
          .describe('In-flight requests may finish for this long after SIGTERM (once the drain delay is over)'),
        drainDelayMs: z
          .number()
          .int()
          .nonnegative()
          .default(5_000)
          .describe('After SIGTERM, keep serving this long while `/health` answers 503 `draining`, so a load balancer stops sending first'),
        corsOrigins: z.array(z.string().min(1)).default([]).describe('Origins allowed by CORS (`*` for any)'),
        trustProxy: z
          .boolean()
          .default(false)
          .describe(
            'Take the client IP from `X-Forwarded-For`: its last entry, the one the proxy in front (one hop) added; ' +
              "earlier entries are the client's own and never trusted",
          ),
      })
      .strict()
      .prefault({}),
    freeMode: z.boolean().default(false).describe('Accept requests with only a wallet header; charge nothing'),
    dataDir: z.string().min(1).default('./data').describe('Where the SQLite store and its lock live (embedded mode)'),
    cluster: z
      .object({
        databaseUrl: z
          .string()
          .regex(/^postgres(ql)?:\/\/\S+$/, 'must be a postgres:// or postgresql:// URL')
          .optional()
          .describe(
            'PostgreSQL (`postgres://…`): cluster mode, keys and credits there, any number of instances ' +
              '(see [Running several instances](several-instances.md))',
          ),
        redisUrl: z
          .string()
          .regex(/^rediss?:\/\/\S+$/, 'must be a redis:// or rediss:// URL')
          .optional()
          .describe(
            'Redis (`redis://…`, `rediss://…`) shared by the instances: limits, nonces, chat leases, key-cache invalidation; ' +
              'needs `DATABASE_URL` (alone it is exit 1)',
          ),
        redisPrefix: z
          .string()
          .min(1)
          .max(64)
          .regex(/^[A-Za-z0-9:_.-]+$/, 'letters, digits and : _ . -')
          .default('switchyard:')
          .describe('Prefix of every Redis key, so several deployments can share one Redis'),
      })
      .strict()
      .prefault({}),
    logLevel: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .default('info')
      .describe('pino level (the environment variable also reaches every tool server)'),
    adminToken: z
      .string()
      .min(16, 'at least 16 characters')
      .optional()
      .describe('Bearer token for `/metrics` and `/admin/*`, at least 16 characters'),
    limits: z
      .object({
        perWallet: bucket
          .prefault({ points: 600, durationSec: 60 })
          .describe(
            'Requests per wallet per window, checked after the wallet header; 429 `rate_limited` above; cluster-wide with `REDIS_URL`',
          ),
        perIp: bucket
          .prefault({ points: 1200, durationSec: 60 })
          .describe(
            'Requests per client IP per window (all routes but `/health`), checked before the wallet header; 429 `rate_limited` above; ' +
              'cluster-wide with `REDIS_URL`',
          ),
        chatConcurrencyPerWallet: z
          .number()
          .int()
          .positive()
          .default(8)
          .describe('Chat requests one wallet may have running at once (a stream counts until it ends); cluster-wide with `REDIS_URL`'),
        chatConcurrencyTotal: z
          .number()
          .int()
          .positive()
          .default(256)
          .describe('Chat requests the gateway runs at once (always per instance: it protects the instance)'),
      })
      .strict()
      .prefault({}),
    accounts: z
      .object({
        reservationTtlMs: z
          .number()
          .int()
          .positive()
          .default(6 * 60_000)
          .describe(
            'An unsettled credit reservation (crash, hang) is released after this long; must exceed `chat.deadlineMs`, ' +
              "every upstream's (and deployment's) `timeoutMs` and every MCP server `timeoutMs`, or long work would run free",
          ),
        nonceTtlMs: z
          .number()
          .int()
          .positive()
          .default(10 * 60_000)
          .describe(
            'Lifetime of a SIWE nonce from `GET /auth/nonce` (kept in memory: a restart forgets outstanding nonces; in Redis with `REDIS_URL`)',
          ),
        siweRpcUrl: z
          .url()
          .optional()
          .describe(
            'Chain RPC that checks smart-account (EIP-1271/6492) SIWE signatures (5 s timeout, no retries); ' +
              'unset: only EOA signatures, others get 401 `unsupported_signature`',
          ),
      })
      .strict()
      .prefault({}),
    models: z.array(modelSchema).min(1),
    chat: z
      .object({
        maxRounds: z
          .number()
          .int()
          .min(0)
          .max(8)
          .default(8)
          .describe('Tool rounds per chat (at most 8); after them one last call with `tool_choice: "none"`'),
        deadlineMs: z
          .number()
          .int()
          .positive()
          .default(300_000)
          .describe('Deadline of a whole chat request (504 `chat_deadline_exceeded`)'),
        toolConcurrency: z.number().int().positive().default(4).describe('Tool calls of one round that run at once'),
        toolResultMaxChars: z
          .number()
          .int()
          .positive()
          .default(16_000)
          .describe('A tool result longer than this is cut, with a `[truncated: …]` marker the model can see'),
        keepAliveMs: z
          .number()
          .int()
          .positive()
          .default(15_000)
          .describe(
            'A streamed answer that wrote nothing for this long (tools running, the model reasoning) sends a `: keepalive` comment, ' +
              'so proxies do not drop the idle connection',
          ),
        keptRoundsTtlMs: z
          .number()
          .int()
          .positive()
          .default(3_600_000)
          .describe(
            'How long the gateway keeps its own tool rounds of an answer that handed the client its function calls, ' +
              'for the continuation request (see [client functions](chat-and-tools.md#client-functions-hybrid-tool-calling))',
          ),
        keptRoundsMaxEntries: z
          .number()
          .int()
          .positive()
          .default(10_000)
          .describe("Embedded mode keeps them in memory: at most this many answers' rounds, the least recently used dropped first"),
        // Callers rotating wallet headers cannot fill the stores.
        keptRoundsMaxChars: z
          .number()
          .int()
          .positive()
          .default(64 * 1024 * 1024)
          .describe(
            'The most kept rounds held in all, oldest dropped first: characters in memory, bytes in Redis or PostgreSQL ' +
              '(shared by every instance)',
          ),
        preamble: z
          .string()
          .default(
            'You are Switchyard, an assistant that answers with the help of read-only tools. Today is {date}. ' +
              'Tools can read blockchains, prices, the web and a knowledge base; none can sign or send anything. ' +
              'Use tools when they help, and cite the sources (URLs, chains, providers) your answer relies on.',
          )
          .meta({
            description: "System message put before the conversation; `{date}` becomes today's date (UTC)",
            docDefault: 'read-only tools, cite sources',
          }),
      })
      .strict()
      .prefault({}),
    responses: z
      .object({
        ttlMs: z
          .number()
          .int()
          .positive()
          .default(24 * 3_600_000)
          .describe('A stored response of `POST /v1/responses` is kept this long (24 h), then never returned and swept'),
        maxPerWallet: z
          .number()
          .int()
          .positive()
          .default(100)
          .describe('Stored responses one wallet keeps; storing one more drops its oldest'),
        maxBytesPerWallet: z
          .number()
          .int()
          .positive()
          .default(16 * 1024 * 1024)
          .describe(
            'Bytes of stored responses (response object and conversation, as JSON) one wallet keeps; the oldest go first, ' +
              'and a single response larger than this is not stored',
          ),
        sweepIntervalMs: z.number().int().positive().default(60_000).describe('How often expired responses are deleted'),
      })
      .strict()
      .prefault({}),
    usage: z
      .object({
        retentionDays: z
          .number()
          .int()
          .positive()
          .default(90)
          .describe('Usage records (`GET /credits/usage`) older than this many days are swept (hourly); a sweep never changes a balance'),
      })
      .strict()
      .prefault({}),
    mcpServers: z
      .record(z.string().regex(/^[A-Za-z0-9_-]+$/), mcpServerSchema)
      .default({})
      .describe(
        'The tool servers, by name: a stdio server the gateway starts (`command`) or a Streamable HTTP server it reaches (`url`); ' +
          'see [Configuring tool servers](tool-servers.md#configuring-tool-servers)',
      ),
    /** Stablecoin deposits to a treasury, credited after confirmations (gateway/deposits/). Off until a chain has a treasury. */
    deposits: z
      .object({
        chains: z
          .record(z.string().regex(/^[a-z0-9-]+$/), depositChainSchema)
          .default({})
          .meta({ docKey: '<chain>' }),
        pollIntervalMs: z
          .number()
          .int()
          .positive()
          .default(5_000)
          .describe("Pause between passes of a chain's watcher (a failed pass backs off: doubling, up to 5 min)"),
        stallAfterMs: z
          .number()
          .int()
          .positive()
          .default(600_000)
          .describe(
            "`/health` says `degraded` once a chain's watcher has made no progress (no page scanned, no pass completed) for this long",
          ),
        maxBlockRange: z
          .number()
          .int()
          .positive()
          .default(1_000)
          .describe('Blocks per `eth_getLogs` call at most; halved each time a provider refuses the range, doubled again once pages fit'),
        rpcTimeoutMs: z
          .number()
          .int()
          .positive()
          .default(10_000)
          .describe("Timeout of each RPC request (the chain's next URL is tried after it)"),
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

/** How an override's text becomes the file's value. */
type EnvValueKind = 'text' | 'number' | 'boolean' | 'list';

/** An environment variable that overrides the file: the setting it replaces and how its text is read. */
export interface EnvOverride {
  name: string;
  path: readonly string[];
  kind: EnvValueKind;
}

/** The environment variables that override the file (the per-model and per-chain ones are applied below). */
export const ENV_OVERRIDES: readonly EnvOverride[] = [
  { name: 'PORT', path: ['server', 'port'], kind: 'number' },
  { name: 'HOST', path: ['server', 'host'], kind: 'text' },
  { name: 'PUBLIC_URL', path: ['server', 'publicUrl'], kind: 'text' },
  { name: 'CORS_ORIGINS', path: ['server', 'corsOrigins'], kind: 'list' },
  { name: 'BODY_LIMIT_BYTES', path: ['server', 'bodyLimitBytes'], kind: 'number' },
  { name: 'FREE_MODE', path: ['freeMode'], kind: 'boolean' },
  { name: 'DATA_DIR', path: ['dataDir'], kind: 'text' },
  { name: 'DATABASE_URL', path: ['cluster', 'databaseUrl'], kind: 'text' },
  { name: 'REDIS_URL', path: ['cluster', 'redisUrl'], kind: 'text' },
  { name: 'REDIS_PREFIX', path: ['cluster', 'redisPrefix'], kind: 'text' },
  { name: 'ADMIN_TOKEN', path: ['adminToken'], kind: 'text' },
  { name: 'LOG_LEVEL', path: ['logLevel'], kind: 'text' },
  { name: 'SIWE_RPC_URL', path: ['accounts', 'siweRpcUrl'], kind: 'text' },
  { name: 'DRAIN_DELAY_MS', path: ['server', 'drainDelayMs'], kind: 'number' },
  { name: 'CHAT_DEADLINE_MS', path: ['chat', 'deadlineMs'], kind: 'number' },
  { name: 'RESPONSES_TTL_MS', path: ['responses', 'ttlMs'], kind: 'number' },
  { name: 'RESPONSES_MAX_PER_WALLET', path: ['responses', 'maxPerWallet'], kind: 'number' },
  { name: 'RESPONSES_MAX_BYTES_PER_WALLET', path: ['responses', 'maxBytesPerWallet'], kind: 'number' },
  { name: 'KEPT_ROUNDS_TTL_MS', path: ['chat', 'keptRoundsTtlMs'], kind: 'number' },
  { name: 'USAGE_RETENTION_DAYS', path: ['usage', 'retentionDays'], kind: 'number' },
  { name: 'X402_FACILITATOR_URL', path: ['x402', 'facilitatorUrl'], kind: 'text' },
  { name: 'X402_PAY_TO', path: ['x402', 'payTo'], kind: 'text' },
  // A secret: kept out of the file, like the upstream keys.
  { name: 'X402_FACILITATOR_AUTHORIZATION', path: ['x402', 'facilitatorHeaders', 'Authorization'], kind: 'text' },
];

/** The config file, and the variable that names another. */
export const CONFIG_FILE = { env: 'SWITCHYARD_CONFIG', default: 'config/gateway.json' } as const;

function applyOverride(raw: Record<string, unknown>, { name, path, kind }: EnvOverride, text: string): void {
  const parent = path.slice(0, -1).reduce(section, raw);
  parent[path[path.length - 1]] = valueFrom(name, kind, text);
}

function valueFrom(name: string, kind: EnvValueKind, text: string): unknown {
  if (kind === 'number') return numberFrom(name, text);
  if (kind === 'boolean') return boolFrom(name, text);
  if (kind === 'list') return splitList(text);
  return text;
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
 * Per-model upstream overrides: `<ALIAS>_UPSTREAM_*` beats `UPSTREAM_*` beats the file (so
 * `UPSTREAM_BASE_URL` and `UPSTREAM_MODEL` point every model at one server and model). They
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
      const set = [
        `${prefix}BASE_URL`,
        `${prefix}MODEL`,
        `${prefix}API_KEY`,
        'UPSTREAM_BASE_URL',
        'UPSTREAM_MODEL',
        'UPSTREAM_API_KEY',
      ].filter((name) => nonEmpty(env[name]) !== undefined);
      if (set.length) {
        throw new ConfigError(
          `config: ${named} has a list of upstreams: ${set.join(', ')} would rewrite it; set each deployment in the file instead`,
        );
      }
      return;
    }
    const baseUrl = nonEmpty(env[`${prefix}BASE_URL`]) ?? nonEmpty(env.UPSTREAM_BASE_URL);
    const name = nonEmpty(env[`${prefix}MODEL`]) ?? nonEmpty(env.UPSTREAM_MODEL);
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

/** A schema issue as `config: <field>: <problem>`, naming the variable too when one set that field. */
function describeIssue(issue: z.core.$ZodIssue, env: Env): string {
  const path = issue.path.length ? issue.path.map(String).join('.') : '(root)';
  const fromEnv = ENV_OVERRIDES.find(
    (override) => override.path.join('.') === issue.path.join('.') && nonEmpty(env[override.name]) !== undefined,
  );
  return `config: ${path}${fromEnv ? ` (set by ${fromEnv.name})` : ''}: ${issue.message}`;
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
  for (const override of ENV_OVERRIDES) {
    const value = nonEmpty(env[override.name]);
    if (value !== undefined) applyOverride(raw, override, value);
  }
  applyUpstreamEnv(raw, env);
  applyDepositEnv(raw, env);
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((issue) => describeIssue(issue, env)).join('\n'));
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
  const path = nonEmpty(env[CONFIG_FILE.env]) ?? CONFIG_FILE.default;
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
