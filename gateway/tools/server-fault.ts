/**
 * Why a tool server is not up, in two forms: the whole story for the log, and a short public one
 * for /health, which answers without auth. An error text can hold a filesystem path, a URL with a
 * key in it or a remote server's whole error body; health gets a category and at most 200 chars.
 */
import { redactSecrets } from '../logger.js';

/**
 * `start_failed`: spawn, initialize or the first tools/list failed; `exited`: the child ended;
 * `misbehaved`: we killed it for breaking the protocol's bounds; `unreachable`: an HTTP server's
 * endpoint failed; `closed`: the connection ended for another reason.
 */
export type ServerFaultKind = 'start_failed' | 'exited' | 'misbehaved' | 'unreachable' | 'closed';

export interface ServerFault {
  kind: ServerFaultKind;
  /** Full text, for the log. */
  message: string;
}

const PUBLIC_MESSAGE_CHARS = 200;
const URL_PATTERN = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi;
// Two or more segments: "/usr/lib/x.js", not a lone "/" in prose.
const PATH_PATTERN = /(?<![\w:/.])\/(?:[\w.@+-]+\/)+([\w.@+-]+)/g;

/**
 * The fault as /health shows it: URLs cut to their origin, absolute paths to their last segment,
 * secrets redacted, whitespace collapsed, at most 200 chars.
 *
 * @example
 *   publicFault({ kind: 'unreachable', message: 'fetch https://u:p@rpc.example/v2/KEY failed' })
 *   // { kind: 'unreachable', message: 'fetch https://rpc.example failed' }
 */
export function publicFault(fault: ServerFault): ServerFault {
  let message = fault.message.replace(URL_PATTERN, originOf).replace(PATH_PATTERN, '…/$1');
  message = redactSecrets(message).replace(/\s+/g, ' ').trim();
  if (message.length > PUBLIC_MESSAGE_CHARS) message = `${message.slice(0, PUBLIC_MESSAGE_CHARS - 1)}…`;
  return { kind: fault.kind, message };
}

function originOf(url: string): string {
  try {
    const { origin } = new URL(url);
    return origin === 'null' ? '[url]' : origin;
  } catch {
    return '[url]';
  }
}
