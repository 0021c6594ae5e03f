import { isIP } from 'node:net';
import { lookup as dnsLookup } from 'node:dns/promises';
import { ToolError, untilAborted } from '../../kit/index.js';
import { refusedAddressReason, refusedHostnameReason } from './address-policy.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** DNS resolution, injectable so tests count calls and never reach real DNS. */
export type LookupFn = (hostname: string, signal: AbortSignal) => Promise<ResolvedAddress[]>;

/** A URL that passed the guard, with the addresses the connection may go to. */
export interface CheckedTarget {
  url: URL;
  /** Host name without IPv6 brackets. */
  hostname: string;
  port: number;
  /** Every checked address, in resolver order; the connection is pinned to these and tries them in turn. */
  addresses: ResolvedAddress[];
  /** Matched a WEB_EXTRACT_ALLOW entry, so private ranges were not refused. */
  allowlisted: boolean;
}

export interface GuardOptions {
  /** `host:port` entries (lower case, IPv6 in brackets) exempt from the private-range refusal. */
  allow: readonly string[];
  lookup: LookupFn;
  signal: AbortSignal;
}

/** The system resolver, every address of a name. */
export const systemLookup: LookupFn = async (hostname) => {
  const addresses = await dnsLookup(hostname, { all: true, verbatim: true });
  return addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/**
 * Decide whether `url` may be fetched and which addresses to connect to. Refusals throw
 * ToolError `url_not_allowed` before any socket opens: non-http(s) schemes, local-only names,
 * and hosts that are (or resolve to) a non-public address. When a name resolves to several
 * addresses, any refused one refuses the URL (an attacker controls the order). IP spellings
 * like `0x7f000001`, `2130706433` and `0177.0.0.1` reach us already normalised to `127.0.0.1`
 * by the WHATWG URL parser.
 *
 * @example
 *   const target = await checkUrl(new URL('https://example.com/a'), { allow: [], lookup, signal })
 *   target.addresses // [{ address: '93.184.215.14', family: 4 }]
 */
export async function checkUrl(url: URL, options: GuardOptions): Promise<CheckedTarget> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw notAllowed(`Only http and https URLs can be read, not ${url.protocol.replace(/:$/, '')}.`);
  }
  const hostname = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const allowlisted = options.allow.includes(`${url.hostname.toLowerCase()}:${port}`);
  const base = { url, hostname, port, allowlisted };

  const literalFamily = isIP(hostname);
  if (literalFamily !== 0) {
    const reason = allowlisted ? undefined : refusedAddressReason(hostname);
    if (reason) throw notAllowed(`${url.hostname} is ${withArticle(reason)} address.`);
    return { ...base, addresses: [{ address: hostname, family: literalFamily === 6 ? 6 : 4 }] };
  }

  const nameReason = allowlisted ? undefined : refusedHostnameReason(hostname);
  if (nameReason) throw notAllowed(`${url.hostname} is ${nameReason}.`);

  let addresses: ResolvedAddress[];
  try {
    // The system resolver cannot be cancelled: stop waiting for it when the call's deadline passes.
    addresses = await untilAborted(options.lookup(hostname, options.signal), options.signal);
  } catch (err) {
    if (options.signal.aborted) throw new ToolError('timeout', 'Resolving the host timed out.', { cause: err });
    throw new ToolError('not_found', `The host ${hostname} could not be resolved.`, { param: 'url', cause: err });
  }
  if (addresses.length === 0) throw new ToolError('not_found', `The host ${hostname} could not be resolved.`, { param: 'url' });
  if (!allowlisted) {
    for (const resolved of addresses) {
      const reason = refusedAddressReason(resolved.address);
      // The address itself stays out of the message: it would map the operator's private network.
      if (reason) throw notAllowed(`${hostname} resolves to ${withArticle(reason)} address.`);
    }
  }
  return { ...base, addresses };
}

/** "an IPv4-mapped loopback", "an unspecified", but "a unique local": the article goes by sound. */
function withArticle(phrase: string): string {
  return /^(?:[aeio]|u(?!ni))/i.test(phrase) ? `an ${phrase}` : `a ${phrase}`;
}

function notAllowed(message: string): ToolError {
  return new ToolError('url_not_allowed', `URL not allowed: ${message}`, { param: 'url' });
}
