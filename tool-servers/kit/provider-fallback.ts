import { ToolError } from './tool-error.js';
import { HttpFailure, HttpStatusError } from './http-client.js';
import { untilAborted } from './until-aborted.js';

/**
 * One outside provider a tool can ask: a backend implements this directly. `available` is false
 * when its key is not configured, `unsupported` names a request it cannot answer (a currency it
 * does not quote); either way it is skipped and the failure list says why. `run` answers
 * `request`, or throws; an answer `isEmpty` judges empty counts as a failure and the next
 * provider is tried.
 *
 * @example
 *   const brave: Provider<SearchHit[], SearchRequest> = { name: 'brave', available: Boolean(key), run: (signal, { query }) => … }
 */
export interface Provider<T, Request = undefined> {
  name: string;
  available?: boolean;
  /** Why it is unavailable, e.g. "no BRAVE_API_KEY". */
  unavailableReason?: string;
  /** Why it cannot answer this request, or undefined when it can. */
  unsupported?(request: Request): string | undefined;
  run(signal: AbortSignal, request: Request): Promise<T>;
}

/** What every provider of a chain is asked; a chain of providers that take no request needs none. */
type FallbackRequest<Request> = undefined extends Request ? { request?: Request } : { request: Request };

export interface FallbackOptions<T> {
  signal: AbortSignal;
  /** An empty answer falls through to the next provider. */
  isEmpty?: (value: T) => boolean;
  /** Errors that mean "this does not exist" rather than "this provider failed" stop the chain. */
  isFinal?: (err: unknown) => boolean;
  /**
   * Errors that mean "this provider says it does not exist" when providers can be wrong about it:
   * the next provider is still asked, and only when every provider asked said so (or had nothing)
   * is the last such error thrown.
   */
  isNotFound?: (err: unknown) => boolean;
  /**
   * Time for the whole chain, in ms. Each provider has its own timeout, but several of them in a
   * row can outlast the caller's own timeout (which would then see a bare timeout instead of what
   * each provider said): past the deadline the provider being asked is stopped, the rest are not
   * asked, and the failure lists them all.
   */
  deadlineMs?: number;
}

export interface FallbackResult<T> {
  provider: string;
  value: T;
  /** What each earlier provider said, for logs. */
  failures: string[];
}

/**
 * Ask providers in order until one gives a non-empty answer. On total failure throws
 * `upstream_unavailable` listing what each provider said (status, timeout, skipped, past the
 * deadline), never URLs or keys. When every provider that answered said "empty", throws `not_found`.
 *
 * @example
 *   const { provider, value } = await firstAvailable([brave, tavily, ddg], { signal, request: { query: 'koa', count: 5 } })
 */
export async function firstAvailable<T, Request = undefined>(
  providers: Provider<T, Request>[],
  options: FallbackOptions<T> & FallbackRequest<Request>,
): Promise<FallbackResult<T>> {
  // A timer of our own rather than AbortSignal.timeout: that one is unref'd, and a chain waiting
  // only on it (a provider that ignores its signal) would let a bare process exit mid-call.
  const deadline = options.deadlineMs === undefined ? undefined : new AbortController();
  const timer = deadline && setTimeout(() => deadline.abort(), options.deadlineMs);
  const signal = deadline ? AbortSignal.any([options.signal, deadline.signal]) : options.signal;
  try {
    return await askInTurn(providers, options, signal, deadline?.signal);
  } finally {
    clearTimeout(timer);
  }
}

async function askInTurn<T, Request>(
  providers: Provider<T, Request>[],
  options: FallbackOptions<T> & { request?: Request },
  signal: AbortSignal,
  deadline: AbortSignal | undefined,
): Promise<FallbackResult<T>> {
  const request = options.request as Request;
  const failures: string[] = [];
  let emptyCount = 0;
  let answered = 0;
  let notFound: unknown;
  for (const provider of providers) {
    const skipped = provider.available === false ? (provider.unavailableReason ?? 'not configured') : provider.unsupported?.(request);
    if (skipped !== undefined) {
      failures.push(`${provider.name}: skipped (${skipped})`);
      continue;
    }
    if (options.signal.aborted) throw new ToolError('timeout', 'The call was cancelled.');
    if (deadline?.aborted) {
      failures.push(`${provider.name}: not asked (the ${options.deadlineMs} ms deadline had passed)`);
      continue;
    }
    answered++;
    try {
      // untilAborted: a provider that ignores its signal must not hold the chain past the deadline.
      const value = await untilAborted(provider.run(signal, request), signal);
      if (options.isEmpty?.(value)) {
        emptyCount++;
        failures.push(`${provider.name}: no results`);
        continue;
      }
      return { provider: provider.name, value, failures };
    } catch (err) {
      if (options.signal.aborted) throw new ToolError('timeout', 'The call was cancelled.');
      if (deadline?.aborted) {
        failures.push(`${provider.name}: stopped at the ${options.deadlineMs} ms deadline`);
        continue;
      }
      if (options.isFinal?.(err)) throw err;
      if (options.isNotFound?.(err)) {
        notFound = err;
        emptyCount++;
        failures.push(`${provider.name}: ${describeFailure(err)}`);
        continue;
      }
      if (err instanceof ToolError && err.code !== 'upstream_unavailable') throw err;
      failures.push(`${provider.name}: ${describeFailure(err)}`);
    }
  }
  if (answered > 0 && emptyCount === answered) {
    throw notFound ?? new ToolError('not_found', `No results. ${failures.join('; ')}`);
  }
  throw new ToolError('upstream_unavailable', `All providers failed: ${failures.join('; ')}`);
}

/** A short, secret-free description of why a provider failed. */
export function describeFailure(err: unknown): string {
  if (err instanceof HttpStatusError) return err.status === 429 ? 'HTTP 429 (rate limited)' : `HTTP ${err.status}`;
  if (err instanceof HttpFailure) return err.message;
  if (err instanceof ToolError) return err.message;
  if (err instanceof SyntaxError) return 'unreadable response';
  return 'unexpected response';
}
