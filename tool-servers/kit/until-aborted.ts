import { ToolError } from './tool-error.js';

/**
 * Stop waiting for `work` when `signal` aborts, for work that cannot itself be cancelled (the
 * system resolver, a load shared by several callers). The work goes on; only this caller leaves,
 * with ToolError `timeout`.
 *
 * @example
 *   const addresses = await untilAborted(dnsLookup(host, { all: true }), signal)
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(cancelled());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cancelled());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function cancelled(): ToolError {
  return new ToolError('timeout', 'The call was cancelled.');
}
