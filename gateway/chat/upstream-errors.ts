/**
 * The one place upstream (inference server) failures become GatewayErrors. Messages name the
 * model by its canonical id and never carry the upstream URL, which may hold a secret.
 *
 * @example
 *   throw upstreamTimeout('svc-32b-conductor', 120_000)
 */
import { echoed, GatewayError, type GatewayErrorOptions } from '../errors.js';

/**
 * How one upstream call failed, for the retry rule (retry-policy.ts) and the deployment's health:
 * no connection; a non-2xx status; no answer or first token in time; or a stream that broke (an
 * error inside it, cut off, aborted by the server).
 */
export type FailureKind = 'connect' | 'status' | 'timeout' | 'broken';

/** An upstream call's failure: the client's error, and what the retry rule needs to know of it. */
export class UpstreamFailure extends GatewayError {
  readonly kind: FailureKind;
  /** The status of a `status` failure. */
  readonly upstreamStatus?: number;
  /** The network error code of a `connect` failure. */
  readonly errorCode?: string;
  /** The upstream's `Retry-After` (a 429's or 503's), as sent. */
  readonly retryAfter?: string;

  constructor(options: GatewayErrorOptions, failure: { kind: FailureKind; status?: number; errorCode?: string; retryAfter?: string }) {
    super(options);
    this.kind = failure.kind;
    this.upstreamStatus = failure.status;
    this.errorCode = failure.errorCode;
    this.retryAfter = failure.retryAfter;
  }
}

/**
 * Where a model's upstream is set, for the message of a model that cannot be reached: the
 * variables a newcomer changes (a model with one upstream), or the file (a fleet, which no
 * variable rewrites).
 *
 * @example
 *   upstreamSettingsOf({ alias: 'conductor', upstreams: [{ name: 'default' }] })
 *   // "set by CONDUCTOR_UPSTREAM_BASE_URL and CONDUCTOR_UPSTREAM_MODEL, or UPSTREAM_BASE_URL and UPSTREAM_MODEL for every model"
 */
export function upstreamSettingsOf(model: { alias: string; upstreams: ReadonlyArray<{ name: string }> }): string {
  if (model.upstreams.length > 1 || model.upstreams[0]?.name !== 'default') return 'set by its "upstreams" in the config file';
  const prefix = `${model.alias.toUpperCase().replace(/-/g, '_')}_UPSTREAM_`;
  return `set by ${prefix}BASE_URL and ${prefix}MODEL, or UPSTREAM_BASE_URL and UPSTREAM_MODEL for every model`;
}

/**
 * 503: the model's upstream is known to be down, refused the connection, or stayed busy.
 * `settings` (upstreamSettingsOf) says where its address is set, when that is what to check.
 */
export function upstreamUnavailable(modelId: string, reason: string, retryAfterSeconds = 5, settings?: string): GatewayError {
  return new GatewayError(unavailable(modelId, reason, retryAfterSeconds, settings));
}

function unavailable(modelId: string, reason: string, retryAfterSeconds = 5, settings?: string): GatewayErrorOptions {
  const where = settings ? ` Its upstream is ${settings} (docs/troubleshooting.md).` : '';
  return {
    status: 503,
    code: 'upstream_unavailable',
    message: `The upstream for model "${modelId}" is unavailable (${reason}).${where}`,
    headers: { 'Retry-After': String(retryAfterSeconds) },
  };
}

/** 504: one upstream call ran past the model's `timeoutMs`. */
export function upstreamTimeout(modelId: string, timeoutMs: number): UpstreamFailure {
  return new UpstreamFailure(
    { status: 504, code: 'upstream_timeout', message: `The upstream for model "${modelId}" did not answer within ${timeoutMs} ms.` },
    { kind: 'timeout' },
  );
}

/** 504: a call streamed nothing within `routing.firstTokenTimeoutMs` (abandoned for another deployment). */
export function upstreamFirstTokenTimeout(modelId: string, timeoutMs: number): UpstreamFailure {
  return new UpstreamFailure(
    { status: 504, code: 'upstream_timeout', message: `The upstream for model "${modelId}" sent no token within ${timeoutMs} ms.` },
    { kind: 'timeout' },
  );
}

/** 400: the upstream refused the request itself (e.g. context too long); its message is relayed. */
export function upstreamRejected(modelId: string, status: number, upstreamMessage: string): GatewayError {
  return new GatewayError(rejected(modelId, status, upstreamMessage));
}

function rejected(modelId: string, status: number, upstreamMessage: string): GatewayErrorOptions {
  return {
    status: 400,
    code: 'upstream_invalid_request',
    message: `The upstream for model "${modelId}" rejected the request (HTTP ${status}): ${upstreamMessage}`,
  };
}

/** 502: the upstream misbehaved in a way the client cannot fix (bad credentials, a response too large). */
export function upstreamBadGateway(modelId: string, reason: string): GatewayError {
  return new GatewayError(badGateway(modelId, reason));
}

function badGateway(modelId: string, reason: string): GatewayErrorOptions {
  return { status: 502, code: 'upstream_error', message: `The upstream for model "${modelId}" failed: ${reason}.` };
}

/** 502: the stream broke while the answer (or an error response) was being read. */
export function upstreamBrokeOff(modelId: string, reason: string): UpstreamFailure {
  return new UpstreamFailure(badGateway(modelId, reason), { kind: 'broken' });
}

/**
 * The upstream answered a non-2xx status: which GatewayError the client sees, carrying the status
 * and `Retry-After` for the retry rule. Pure, so the mapping is tested with a table.
 *
 * @example
 *   upstreamStatusError('svc-32b-conductor', 400, '{"error":{"message":"too long"}}') // 400 upstream_invalid_request
 *   upstreamStatusError('svc-32b-conductor', 401, '') // 502 upstream_error, the body not relayed
 */
export function upstreamStatusError(modelId: string, status: number, bodyText: string, retryAfter?: string): UpstreamFailure {
  return new UpstreamFailure(statusErrorOptions(modelId, status, bodyText), { kind: 'status', status, retryAfter });
}

function statusErrorOptions(modelId: string, status: number, bodyText: string): GatewayErrorOptions {
  // Our credentials are wrong: the client cannot fix that, and the upstream's reason stays here.
  if (status === 401 || status === 403) return badGateway(modelId, `it refused the gateway's credentials (HTTP ${status})`);
  if (status === 429) return unavailable(modelId, 'rate limited');
  const message = upstreamMessageFrom(bodyText);
  if (status === 503) return unavailable(modelId, `HTTP 503: ${message}`);
  if (status >= 400 && status < 500) return rejected(modelId, status, message);
  return badGateway(modelId, `HTTP ${status}: ${message}`);
}

/**
 * No status arrived: the upstream never sent its headers in time (504), or could not be reached
 * at all (503; health hears of it too).
 *
 * @example
 *   upstreamConnectionError('svc-32b-conductor', 'ECONNREFUSED', 120_000) // 503 "connection failed: ECONNREFUSED"
 */
export function upstreamConnectionError(
  modelId: string,
  errorCode: string | undefined,
  timeoutMs: number,
  settings?: string,
): UpstreamFailure {
  if (errorCode === 'UND_ERR_HEADERS_TIMEOUT') return upstreamTimeout(modelId, timeoutMs);
  return new UpstreamFailure(unavailable(modelId, errorCode ? `connection failed: ${errorCode}` : 'connection failed', 5, settings), {
    kind: 'connect',
    errorCode,
  });
}

/**
 * 502: the upstream reported an error inside a stream it had begun with 200 — as a `data:` event
 * with an `error` member (vLLM, SGLang, llama.cpp, OpenAI) or as an `error:` SSE field (llama.cpp
 * builds before its server-context rewrite). `body` is the error's JSON text.
 */
export function upstreamStreamError(modelId: string, body: string): UpstreamFailure {
  return upstreamBrokeOff(modelId, `it sent an error in the stream: ${upstreamMessageFrom(body)}`);
}

/**
 * 502: the stream stopped with neither a `finish_reason` nor `data: [DONE]` — cut off. Ollama ends
 * its stream this way when generation fails part-way (the error itself never reaches the client).
 */
export function upstreamStreamCutOff(modelId: string): UpstreamFailure {
  return upstreamBrokeOff(modelId, 'the stream ended before the answer was complete (no finish_reason, no [DONE])');
}

/** 502: a JSON answer (asked for with `stream: false`) that is no chat completion: not JSON, or without `choices`. */
export function upstreamNotACompletion(modelId: string): UpstreamFailure {
  return upstreamBrokeOff(modelId, 'its answer is not a chat completion');
}

/**
 * 502: the upstream ended the answer with `finish_reason: "abort"` — SGLang's graceful abort (an
 * /abort_request or a session cleanup), which streams like a normal end but leaves the answer cut.
 */
export function upstreamAborted(modelId: string): UpstreamFailure {
  return upstreamBrokeOff(modelId, 'it aborted the generation (finish_reason "abort")');
}

/**
 * 502: under a strict JSON schema, the model's answer did not match it, nor did the corrective
 * call's. Both calls are charged: the upstream did the work.
 */
export function upstreamInvalidOutput(modelId: string, problem: string): GatewayError {
  return new GatewayError({
    status: 502,
    code: 'upstream_invalid_output',
    message: `The model "${modelId}" did not answer in the requested format (strict), even when asked again: ${problem}.`,
  });
}

/** 504: the whole chat ran past `chat.deadlineMs`. */
export function chatDeadlineExceeded(deadlineMs: number): GatewayError {
  return new GatewayError({
    status: 504,
    code: 'chat_deadline_exceeded',
    message: `The chat did not finish within its deadline of ${deadlineMs} ms.`,
  });
}

/** Thrown when the client went away: nothing is sent, work stops, credits settle what was used. */
export class ClientCancelled extends Error {
  constructor() {
    super('The client closed the connection.');
    this.name = 'ClientCancelled';
  }
}

/** Pull a readable message out of an upstream error body (OpenAI, vLLM, Ollama or plain text). */
export function upstreamMessageFrom(text: string): string {
  const trimmed = text.trim();
  try {
    const body = JSON.parse(trimmed) as { error?: unknown; message?: unknown; detail?: unknown };
    const error = body.error;
    if (typeof error === 'string') return clip(error);
    if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string') {
      return clip((error as { message: string }).message);
    }
    if (typeof body.message === 'string') return clip(body.message);
    if (typeof body.detail === 'string') return clip(body.detail);
  } catch {
    // not JSON: fall through to the raw text
  }
  return clip(trimmed || 'no message');
}

/** An upstream's own message, cut like any echo (longer: it is the one clue to what went wrong). */
function clip(text: string): string {
  return echoed(text, 500);
}
