/**
 * `${VAR}` and `${VAR:-default}` in a tool server's `env`, `args`, `url` and `headers`, filled
 * from the gateway's environment, plus the `envPassthrough` prefixes that forward a whole family
 * of variables (`RPC_URL_<CHAIN>`) without naming each. An entry whose variable is unset or empty
 * and has no default is left out entirely (an env var, a header, an argument), so a server sees
 * "not configured" rather than an empty string it might send to a provider.
 */
import type { Env } from '../config.js';

const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Variables every child gets from the gateway besides its configured env: enough to run, no secrets. */
export const INHERITED_ENV_VARS = ['PATH', 'HOME', 'NODE_V8_COVERAGE'] as const;

/**
 * Fill the placeholders of one string; `undefined` when a variable without default is unset or empty.
 *
 * @example
 *   expandValue('Bearer ${TOKEN}', { TOKEN: 'x' })       // 'Bearer x'
 *   expandValue('${RPC:-http://127.0.0.1:8545}', {})     // 'http://127.0.0.1:8545'
 *   expandValue('${MISSING}', {})                        // undefined
 */
export function expandValue(template: string, env: Env): string | undefined {
  let missing = false;
  const result = template.replace(PLACEHOLDER, (_match, name: string, fallback: string | undefined) => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    missing = true;
    return '';
  });
  return missing ? undefined : result;
}

/**
 * Expand every value of a record, dropping the entries that came out missing.
 *
 * @example
 *   expandRecord({ KEY: '${BRAVE_API_KEY}', MODE: 'x' }, {})  // { MODE: 'x' }
 */
export function expandRecord(record: Record<string, string>, env: Env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, template] of Object.entries(record)) {
    const value = expandValue(template, env);
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/**
 * Expand command-line arguments; an argument that came out missing is dropped.
 *
 * @example
 *   expandArgs(['main.js', '--rpc', '${RPC}'], {})  // ['main.js', '--rpc']
 */
export function expandArgs(args: string[], env: Env): string[] {
  return args.map((arg) => expandValue(arg, env)).filter((arg): arg is string => arg !== undefined);
}

/**
 * The whole environment a stdio server is spawned with: PATH, HOME and NODE_V8_COVERAGE from the
 * gateway, every gateway variable whose name starts with one of `passthrough` (non-empty ones),
 * then its configured env (expanded), which wins over both. Nothing else of the gateway's.
 *
 * @example
 *   childEnv({ BRAVE_API_KEY: '${BRAVE_API_KEY}' }, process.env)
 *   childEnv({ RPC_TIMEOUT_MS: '${RPC_TIMEOUT_MS}' }, process.env, ['RPC_URL_', 'TOKENS_'])
 */
export function childEnv(configured: Record<string, string>, gatewayEnv: Env, passthrough: readonly string[] = []): Record<string, string> {
  const env: Record<string, string> = {};
  const inherited: readonly string[] = INHERITED_ENV_VARS;
  for (const [name, value] of Object.entries(gatewayEnv)) {
    if (value === undefined || value === '') continue;
    if (inherited.includes(name) || passthrough.some((prefix) => name.startsWith(prefix))) env[name] = value;
  }
  return { ...env, ...expandRecord(configured, gatewayEnv) };
}
