import { request, type Dispatcher } from 'undici';
import { charsetOf, decodeText } from './text-decoding.js';
import { traceProviderCall } from './tracing.js';

/**
 * Outbound HTTP for tool servers: undici `request` (far cheaper per call than global fetch),
 * with a timeout and a response size cap on every call, and the caller's AbortSignal honoured.
 */
export interface HttpRequestOptions {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** A JSON body (sent with content-type application/json) or a raw string. */
  body?: unknown;
  timeoutMs?: number;
  /** Bytes; a larger body fails with HttpFailure kind `too_large`. */
  maxBytes?: number;
  signal?: AbortSignal;
  /** Custom dispatcher (e.g. an SSRF-guarded agent). */
  dispatcher?: Dispatcher;
  /** Follow no redirects by default; callers that want them handle Location themselves. */
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Response body as text, in the charset the content-type names (UTF-8 when none, or one unknown). */
  text: string;
  /** The body as received, for callers that find the charset elsewhere (an HTML `<meta charset>`). */
  bytes: Buffer;
}

export type HttpFailureKind = 'timeout' | 'too_large' | 'network' | 'aborted';

/** A request that produced no usable response. The message never includes the URL (it may hold a key). */
export class HttpFailure extends Error {
  readonly kind: HttpFailureKind;
  constructor(kind: HttpFailureKind, message: string, cause?: unknown) {
    super(message, { cause });
    this.name = 'HttpFailure';
    this.kind = kind;
  }
}

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_BYTES = 2 * 1024 * 1024;

/**
 * Perform one HTTP request and read the whole body, bounded in time and size; with tracing on,
 * a CLIENT span under the running tool call (kit/tracing.ts).
 */
export function httpRequest(url: string | URL, options: HttpRequestOptions = {}): Promise<HttpResponse> {
  const method = options.method ?? (options.body === undefined ? 'GET' : 'POST');
  return traceProviderCall(method, url, () => sendRequest(url, options));
}

async function sendRequest(url: string | URL, options: HttpRequestOptions): Promise<HttpResponse> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const headers: Record<string, string> = { 'user-agent': 'Switchyard/0.1 (+tool server)', ...options.headers };
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    if (typeof options.body !== 'string') headers['content-type'] ??= 'application/json';
  }
  try {
    const response = await request(url, {
      method: options.method ?? (body === undefined ? 'GET' : 'POST'),
      headers,
      body,
      signal,
      dispatcher: options.dispatcher,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        response.body.destroy();
        throw new HttpFailure('too_large', `response larger than ${maxBytes} bytes`);
      }
      chunks.push(chunk as Buffer);
    }
    const bytes = Buffer.concat(chunks);
    const contentType = response.headers['content-type'];
    const text = decodeText(bytes, charsetOf(Array.isArray(contentType) ? contentType[0] : contentType));
    return { status: response.statusCode, headers: response.headers, text, bytes };
  } catch (err) {
    if (err instanceof HttpFailure) throw err;
    if (timeout.aborted) throw new HttpFailure('timeout', `timed out after ${timeoutMs} ms`, err);
    if (options.signal?.aborted) throw new HttpFailure('aborted', 'cancelled', err);
    const code = (err as { code?: string }).code;
    throw new HttpFailure('network', code ? `network error (${code})` : 'network error', err);
  }
}

/** A 2xx response's body parsed as JSON; anything else is an HttpStatusError. */
export async function httpJson<T = unknown>(url: string | URL, options: HttpRequestOptions = {}): Promise<T> {
  const response = await httpRequest(url, { ...options, headers: { accept: 'application/json', ...options.headers } });
  if (response.status < 200 || response.status >= 300) throw new HttpStatusError(response.status, response.text);
  try {
    return JSON.parse(response.text) as T;
  } catch (err) {
    throw new HttpFailure('network', 'response is not valid JSON', err);
  }
}

/** A response with a non-2xx status; `body` is kept (bounded) for provider-specific error parsing. */
export class HttpStatusError extends Error {
  readonly status: number;
  readonly body: string;
  constructor(status: number, body: string) {
    super(`HTTP ${status}`);
    this.name = 'HttpStatusError';
    this.status = status;
    this.body = body.slice(0, 2000);
  }
}
