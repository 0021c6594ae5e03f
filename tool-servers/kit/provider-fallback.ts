import { ToolError } from './tool-error.js';
import { HttpFailure, HttpStatusError } from './http-client.js';

/**
 * One outside provider a tool can ask. `available` is false when its key is not configured
 * (it is then skipped and the failure list says so). `run` returns the provider's answer, or
 * throws; an answer `isEmpty` judges empty counts as a failure and the next provider is tried.
 */
export interface Provider<T> {
  name: string;
  available?: boolean;
  /** Why it is unavailable, e.g. "no BRAVE_API_KEY". */
  unavailableReason?: string;
  run(signal: AbortSignal): Promise<T>;
}

export interface FallbackOptions<T> {
  signal: AbortSignal;
  /** An empty answer falls through to the next provider. */
  isEmpty?: (value: T) => boolean;
  /** Errors that mean "this does not exist" rather than "this provider failed" stop the chain. */
  isFinal?: (err: unknown) => boolean;
}

export interface FallbackResult<T> {
  provider: string;
  value: T;
  /** What each earlier provider said, for logs. */
  failures: string[];
}

/**
 * Ask providers in order until one gives a non-empty answer. On total failure throws
 * `upstream_unavailable` listing what each provider said (status, timeout, skipped), never URLs
 * or keys. When every provider that answered said "empty", throws `not_found`.
 *
 * @example
 *   const { provider, value } = await firstAvailable([brave, tavily, ddg], { signal, isEmpty: (r) => r.length === 0 })
 */
export async function firstAvailable<T>(providers: Provider<T>[], options: FallbackOptions<T>): Promise<FallbackResult<T>> {
  const failures: string[] = [];
  let emptyCount = 0;
  let answered = 0;
  for (const provider of providers) {
    if (provider.available === false) {
      failures.push(`${provider.name}: skipped (${provider.unavailableReason ?? 'not configured'})`);
      continue;
    }
    if (options.signal.aborted) throw new ToolError('timeout', 'The call was cancelled.');
    answered++;
    try {
      const value = await provider.run(options.signal);
      if (options.isEmpty?.(value)) {
        emptyCount++;
        failures.push(`${provider.name}: no results`);
        continue;
      }
      return { provider: provider.name, value, failures };
    } catch (err) {
      if (options.isFinal?.(err)) throw err;
      if (err instanceof ToolError && err.code !== 'upstream_unavailable') throw err;
      failures.push(`${provider.name}: ${describeFailure(err)}`);
    }
  }
  if (answered > 0 && emptyCount === answered) {
    throw new ToolError('not_found', `No results. ${failures.join('; ')}`);
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
