/**
 * Calls to the gateway with the caller's wallet header and key, and its error bodies turned
 * into ApiError (status, code, message, Retry-After) for the page to show as they are.
 */
import { loadCaller } from './session.js';

export class ApiError extends Error {
  constructor(
    /** The HTTP status; null for an error inside a stream that had already answered 200. */
    readonly status: number | null,
    readonly code: string,
    message: string,
    readonly retryAfter: string | null = null,
  ) {
    super(message);
  }
}

/** The OpenAI error object, as every error body (and an in-stream error) carries it. */
export interface ErrorObject {
  message: string;
  type: string;
  code: string;
  param: string | null;
}

export function callerHeaders(json = false): Record<string, string> {
  const { wallet, key } = loadCaller();
  const headers: Record<string, string> = {};
  if (wallet) headers['x-wallet-address'] = wallet;
  if (key) headers.authorization = `Bearer ${key}`;
  if (json) headers['content-type'] = 'application/json';
  return headers;
}

/** A request whose answer is JSON; any non-2xx becomes an ApiError from its body. */
export async function apiJson<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const response = await apiFetch(path, init);
  return (await response.json()) as T;
}

/** A request; any non-2xx becomes an ApiError from its body. The response is returned unread. */
export async function apiFetch(path: string, init: { method?: string; body?: unknown; signal?: AbortSignal } = {}): Promise<Response> {
  const hasBody = init.body !== undefined;
  const response = await fetch(path, {
    method: init.method ?? (hasBody ? 'POST' : 'GET'),
    headers: callerHeaders(hasBody),
    body: hasBody ? JSON.stringify(init.body) : undefined,
    signal: init.signal,
  });
  if (!response.ok) throw await errorOf(response);
  return response;
}

async function errorOf(response: Response): Promise<ApiError> {
  const retryAfter = response.headers.get('retry-after');
  try {
    const body = (await response.json()) as { error?: Partial<ErrorObject> };
    if (body.error?.message) return new ApiError(response.status, body.error.code ?? 'error', body.error.message, retryAfter);
  } catch {
    // Not JSON (a proxy's page): fall through to the status line.
  }
  return new ApiError(response.status, 'http_error', `HTTP ${response.status} ${response.statusText}`, retryAfter);
}
