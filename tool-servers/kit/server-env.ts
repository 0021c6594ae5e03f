import { z } from 'zod';

/** A server's environment as main.ts passes it (process.env) or a test writes it. */
export type ServerEnv = Record<string, string | undefined>;

/**
 * Read a tool server's settings from `env` with one zod object whose keys are the variable
 * names. Only those keys are read; an unset or blank variable counts as unset (the gateway's
 * `${VAR}` of an unset variable may arrive as ""), so `.default()` and `.optional()` apply.
 * A bad value throws an Error starting with `label` and naming the variable, so the server
 * refuses to start rather than misbehave later.
 *
 * @example
 *   const env = parseServerEnv('onchain', z.object({ RPC_TIMEOUT_MS: envInt({ min: 1 }).default(4000) }), process.env)
 */
export function parseServerEnv<S extends z.ZodObject>(label: string, schema: S, env: ServerEnv): z.output<S> {
  const present: Record<string, string> = {};
  for (const name of Object.keys(schema.shape)) {
    const value = env[name];
    if (value !== undefined && value.trim() !== '') present[name] = value;
  }
  const parsed = schema.safeParse(present);
  if (!parsed.success) throw new Error(`${label}: ${describeEnvIssue(parsed.error.issues[0])}`);
  return parsed.data;
}

/**
 * One issue as a sentence naming the variable: a message that already names it stays as is, one
 * of the `must …` messages of the builders below follows the name, any other is `invalid NAME: …`.
 */
function describeEnvIssue(issue: z.core.$ZodIssue): string {
  const name = issue.path.map(String).join('.');
  if (issue.path.length > 0 && issue.message.startsWith(String(issue.path[0]))) return issue.message;
  if (issue.message.startsWith('must ')) return `${name} ${issue.message}`;
  return `invalid ${name}: ${issue.message}`;
}

/**
 * An http(s) base URL; trailing slashes go, since paths are appended to it.
 *
 * @example
 *   z.object({ COINGECKO_BASE_URL: envUrl().default('https://api.coingecko.com') })
 */
export function envUrl() {
  return z
    .string()
    .trim()
    .pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }))
    .transform((url) => url.replace(/\/+$/, ''));
}

/**
 * A whole number in `[min, max]` written in decimal digits.
 *
 * @example
 *   z.object({ PRICE_CACHE_TTL_MS: envInt({ min: 0, max: 30_000 }).default(30_000) })
 */
export function envInt({ min, max }: { min: number; max?: number }) {
  const rule = intRule(min, max);
  return z
    .string()
    .trim()
    .transform((value, ctx) => {
      const parsed = /^\d+$/.test(value) ? Number(value) : Number.NaN;
      if (!(parsed >= min && parsed <= (max ?? Number.MAX_SAFE_INTEGER))) {
        ctx.addIssue({ code: 'custom', message: `must be ${rule}, got "${value}"` });
        return z.NEVER;
      }
      return parsed;
    });
}

function intRule(min: number, max: number | undefined): string {
  if (max !== undefined) return `a whole number from ${min} to ${max}`;
  if (min === 0) return 'a non-negative integer';
  return min === 1 ? 'a positive integer' : `a whole number of at least ${min}`;
}

/**
 * `true` or `false`.
 *
 * @example
 *   z.object({ RPC_RANK: envFlag().default(false) })
 */
export function envFlag() {
  return z
    .string()
    .trim()
    .transform((value, ctx) => {
      if (value === 'true' || value === 'false') return value === 'true';
      ctx.addIssue({ code: 'custom', message: `must be true or false, got "${value}"` });
      return z.NEVER;
    });
}

/**
 * A comma list of known names, lower-cased, in the operator's order (at least one).
 *
 * @example
 *   z.object({ MUSIC_PROVIDERS: envNameList(['itunes', 'deezer']).default(['itunes', 'deezer']) })
 */
export function envNameList<T extends string>(names: readonly T[]) {
  return z
    .string()
    .transform((text) =>
      text
        .split(',')
        .map((name) => name.trim().toLowerCase())
        .filter(Boolean),
    )
    .pipe(z.array(z.enum(names as unknown as [T, ...T[]])).min(1));
}
