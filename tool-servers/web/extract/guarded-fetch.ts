import { Agent, buildConnector } from 'undici';
import { httpRequest, HttpFailure, ToolError } from '../../kit/index.js';
import { checkUrl, systemLookup, type CheckedTarget, type LookupFn } from './ssrf-guard.js';
import { pageText } from './page-text.js';

/** undici's socket opener, injectable so tests can count connections. */
export type ConnectFn = buildConnector.connector;

export interface GuardedFetchOptions {
  allow: readonly string[];
  timeoutMs: number;
  maxBytes: number;
  maxRedirects?: number;
  lookup?: LookupFn;
  connect?: ConnectFn;
  signal: AbortSignal;
}

export interface FetchedPage {
  finalUrl: string;
  status: number;
  contentType: string;
  text: string;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const BROWSER_HEADERS = {
  'user-agent': 'Mozilla/5.0 (compatible; Switchyard/0.1; +web_extract)',
  accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5',
};

/**
 * GET a user-supplied URL without letting it reach the operator's own network. Each hop
 * (the URL, then every redirect, at most 5, followed by hand) passes `checkUrl`, and its socket
 * is opened to the exact address that was checked: the connector ignores DNS entirely, so a
 * name that re-resolves to 127.0.0.1 between check and connect changes nothing.
 * One deadline covers the whole chain; the body is capped at `maxBytes`.
 *
 * @example
 *   const page = await guardedFetch(new URL('https://example.com'), { allow: [], timeoutMs: 15000, maxBytes: 5e6, signal })
 */
export async function guardedFetch(url: URL, options: GuardedFetchOptions): Promise<FetchedPage> {
  const maxRedirects = options.maxRedirects ?? 5;
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = AbortSignal.any([options.signal, deadline]);
  const connect = options.connect ?? buildConnector({ timeout: options.timeoutMs });
  let current = url;
  for (let hop = 0; ; hop++) {
    const target = await checkUrl(current, { allow: options.allow, lookup: options.lookup ?? systemLookup, signal });
    const agent = new Agent({ connect: pinnedConnector(target, connect) });
    let response: Awaited<ReturnType<typeof httpRequest>>;
    try {
      response = await httpRequest(current, {
        dispatcher: agent,
        headers: BROWSER_HEADERS,
        maxBytes: options.maxBytes,
        timeoutMs: options.timeoutMs,
        signal,
      });
    } catch (err) {
      if (err instanceof HttpFailure && (err.kind === 'timeout' || deadline.aborted)) {
        throw new ToolError('timeout', `Fetching the page timed out after ${options.timeoutMs} ms.`, { cause: err });
      }
      if (err instanceof HttpFailure && err.kind === 'too_large') {
        throw new ToolError('upstream_unavailable', `The page is larger than ${options.maxBytes} bytes.`, { cause: err });
      }
      if (err instanceof HttpFailure && err.kind === 'aborted') throw new ToolError('timeout', 'The call was cancelled.', { cause: err });
      throw new ToolError(
        'upstream_unavailable',
        `The page could not be fetched: ${err instanceof Error ? err.message : 'network error'}.`,
        { cause: err },
      );
    } finally {
      await agent.destroy().catch(() => undefined);
    }
    const location = header(response.headers.location);
    if (REDIRECT_STATUSES.has(response.status) && location) {
      if (hop >= maxRedirects) throw new ToolError('upstream_unavailable', `Too many redirects (more than ${maxRedirects}).`);
      try {
        current = new URL(location, current);
      } catch {
        throw new ToolError('upstream_unavailable', 'The page redirected to an invalid URL.');
      }
      continue;
    }
    const contentType = header(response.headers['content-type']) ?? '';
    return { finalUrl: current.href, status: response.status, contentType, text: pageText(response, contentType) };
  }
}

/**
 * A connector that only ever connects to the checked addresses. undici still sees the original
 * host (Host header, TLS SNI and certificate check use it); only the socket's destination is pinned.
 * Every address was checked, so when one cannot be reached (an IPv6 record first on an IPv4-only
 * machine) the next is tried; the last failure is the one reported.
 */
function pinnedConnector(target: CheckedTarget, connect: ConnectFn): ConnectFn {
  return (options, callback) => {
    const asked = options.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    if (asked !== target.hostname) {
      callback(new Error('connection to an unchecked host refused'), null);
      return;
    }
    const attempt = (index: number) => {
      connect({ ...options, hostname: target.addresses[index].address, port: String(target.port) }, (...result) => {
        if (result[0] && index + 1 < target.addresses.length) attempt(index + 1);
        else callback(...result);
      });
    };
    attempt(0);
  };
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
