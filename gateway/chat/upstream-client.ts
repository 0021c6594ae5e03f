/**
 * Client for one deployment of a model: an OpenAI-compatible inference server (vLLM, SGLang,
 * llama.cpp server, Ollama). A chat call streams (with `include_usage`) when its text may reach a
 * client as it arrives, and asks for one JSON completion (`stream: false`, no `stream_options`,
 * which vLLM refuses without streaming) when nobody could see it early: parsing one body costs
 * the gateway less than parsing an event per token. Calls go through undici's `request` on a
 * shared keep-alive Agent: Node 20's `fetch` costs several times the CPU per call.
 * One `streamChat` is one attempt; whether and where to try again is the chat loop's to decide
 * (retry-policy.ts), from the UpstreamFailure each failure becomes (upstream-errors.ts).
 *
 * @example
 *   const client = new UpstreamClient({ modelId: model.id, deployment: model.upstreams[0], apiKey, dispatcher: new Agent() })
 *   await client.streamChat({ messages, max_tokens: 256 }, { abort, onData: (data) => assembler.push(data) })
 */
import { StringDecoder } from 'node:string_decoder';
import { request, type Dispatcher } from 'undici';
import { createParser } from 'eventsource-parser';
import type { DeploymentConfig } from '../config.js';
import {
  upstreamBadGateway,
  upstreamBrokeOff,
  upstreamConnectionError,
  upstreamFirstTokenTimeout,
  upstreamStatusError,
  upstreamStreamError,
  upstreamTimeout,
} from './upstream-errors.js';
import type { UpstreamMessage, FunctionTool } from './chat-types.js';
import type { ChatAbort } from './chat-abort.js';
import type { ClientToolChoice } from './client-tools.js';
import type { UpstreamResponseFormat } from './answer-format.js';
import { UpstreamBody } from './upstream-body.js';

/** The per-call part of an upstream request; `model`, `stream` and `stream_options` are added here (StreamChatOptions.json). */
export interface UpstreamChatParams {
  messages: UpstreamMessage[];
  max_tokens: number;
  tools?: FunctionTool[];
  tool_choice?: ClientToolChoice;
  /** Sent with the tools; default true. */
  parallel_tool_calls?: boolean;
  temperature?: number;
  top_p?: number;
  stop?: string | string[];
  seed?: number;
  user?: string;
  /** The answer format, on the calls that may answer (see ChatOrchestrator.callUpstream). */
  response_format?: UpstreamResponseFormat;
}

export interface StreamChatOptions {
  /**
   * Ask for one JSON completion instead of a stream. Its whole body goes to `onData` once it has
   * arrived, then `onDone`; `firstTokenTimeoutMs` does not apply (a server writes nothing of a
   * JSON answer before it has generated all of it, so silence says nothing), `timeoutMs` does.
   */
  json?: boolean;
  /**
   * This attempt's abort handle (a branch of the chat's: client disconnect, deadline): aborting
   * it cancels the call and its reason is rethrown as is. A call that runs past the deployment's
   * `timeoutMs`, or past `firstTokenTimeoutMs` without a token, aborts it with a 504.
   */
  abort: ChatAbort;
  /** Abandon the call when no SSE event arrived this long after it was sent (the ledger's wait not counted). */
  firstTokenTimeoutMs?: number;
  /** Called with the `data` of each SSE event except `[DONE]`, in order; a throw fails the call. */
  onData(data: string): void;
  /**
   * Called once with a JSON answer's whole body (asked for, or sent by a server that ignores
   * `stream: true`); `onData` when absent. A throw fails the call.
   */
  onCompletion?(body: string): void;
  /** Called at `data: [DONE]`, or after a whole JSON body: the answer ended as the protocol says, not cut off. */
  onDone?(): void;
  /**
   * Backpressure from whoever receives the content: a promise while the client's connection is
   * full (reading pauses until it settles), undefined otherwise.
   */
  drained?(): Promise<void> | undefined;
  /** Called the moment the upstream has answered 2xx (it took the prompt), before `admitted` is awaited. */
  onAnswer?(): void;
  /** Called once the upstream has answered 2xx and `admitted` resolved, before any of its body is read. */
  onResponse?(): void;
  /**
   * The call was sent before the chat was admitted (its first hold is still being taken): the
   * answer is not read until this resolves, and the call's timeout does not run meanwhile. A
   * rejection ends the call with that reason (the caller aborts `abort` with it, which cancels
   * the request).
   */
  admitted?: Promise<void>;
  /** W3C Trace Context of the call's span (`traceparent`, `tracestate`), sent as headers; none with tracing off. */
  traceHeaders?: Record<string, string>;
}

export interface UpstreamClientOptions {
  /** Named in errors (never the deployment or its URL). */
  modelId: string;
  /** Where the model's upstream is set (upstreamSettingsOf), named when it cannot be reached. */
  upstreamSettings?: string;
  deployment: DeploymentConfig;
  apiKey?: string;
  dispatcher: Dispatcher;
  /** Told when the upstream answered (any status): it can be reached, whatever its probe said. */
  onResponded?(): void;
  /** Largest response body accepted (streamed or JSON); default 8 MiB. */
  maxResponseBytes?: number;
}

const MAX_ERROR_BODY = 16 * 1024;
const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

export class UpstreamClient {
  readonly modelId: string;
  /** The server's host and port, for a trace's `server.address` and `server.port`. */
  readonly serverAddress: string;
  readonly serverPort: number;
  /** Where chat calls go, split as the dispatcher takes it (no URL parsed per call). */
  private readonly chatOrigin: string;
  private readonly chatPath: string;
  private readonly modelsUrl: string;
  private readonly headers: Record<string, string>;
  private readonly jsonHeaders: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly bodies: UpstreamBody;

  constructor(private readonly options: UpstreamClientOptions) {
    const { deployment } = options;
    this.modelId = options.modelId;
    const base = new URL(deployment.baseUrl);
    const basePath = base.pathname.replace(/\/+$/, '');
    this.chatOrigin = base.origin;
    this.serverAddress = base.hostname.replace(/^\[|\]$/g, '');
    this.serverPort = base.port ? Number(base.port) : base.protocol === 'https:' ? 443 : 80;
    this.chatPath = `${basePath}/chat/completions${base.search}`;
    this.modelsUrl = `${base.origin}${basePath}/models${base.search}`;
    this.headers = { 'content-type': 'application/json', accept: 'text/event-stream' };
    // Credentials in the URL become a Basic header; the URL itself never reaches a message or log.
    if (base.username || base.password) {
      const basic = Buffer.from(`${decodeURIComponent(base.username)}:${decodeURIComponent(base.password)}`).toString('base64');
      this.headers.authorization = `Basic ${basic}`;
    }
    if (options.apiKey) this.headers.authorization = `Bearer ${options.apiKey}`;
    this.jsonHeaders = { ...this.headers, accept: 'application/json' };
    this.timeoutMs = deployment.timeoutMs;
    this.bodies = new UpstreamBody(JSON.stringify(deployment.model));
    this.maxResponseBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  }

  /** Where the upstream lives, safe for logs: origin and path, no credentials, no query. */
  get redactedUrl(): string {
    const base = new URL(this.options.deployment.baseUrl);
    return `${base.protocol}//${base.host}${base.pathname}`;
  }

  /**
   * One chat completion, streamed or (`options.json`) whole. Resolves when the answer ended;
   * rejects with an UpstreamFailure (or another GatewayError), or with the abort's reason when
   * the caller aborted.
   */
  async streamChat(params: UpstreamChatParams, options: StreamChatOptions): Promise<void> {
    const asked = options.json === true;
    const body = this.bodies.serialize(params, { stream: !asked });
    const { abort } = options;
    const firstTokenTimeoutMs = asked ? undefined : options.firstTokenTimeoutMs;
    if (abort.aborted) throw abort.reason;
    const timedOut = () => abort.abort(upstreamTimeout(this.modelId, this.timeoutMs));
    const deadline = performance.now() + this.timeoutMs;
    let timer = setTimeout(timedOut, this.timeoutMs);
    // Until the first event: abandoned after firstTokenTimeoutMs (the caller tries another deployment).
    const silent = () => abort.abort(upstreamFirstTokenTimeout(this.modelId, firstTokenTimeoutMs!));
    const firstTokenBy = firstTokenTimeoutMs === undefined ? Infinity : performance.now() + firstTokenTimeoutMs;
    let firstToken = firstTokenTimeoutMs === undefined ? undefined : setTimeout(silent, firstTokenTimeoutMs);
    const fail = (err: unknown, during: string): unknown =>
      abort.aborted ? abort.reason : upstreamBrokeOff(this.modelId, `${during}: ${errorText(err)}`);

    try {
      const response = await this.openStream(body, asked ? this.jsonHeaders : this.headers, abort, fail, options.traceHeaders);
      options.onAnswer?.();
      if (options.admitted) {
        // The ledger's wait is not the upstream's: the call's clocks stop while the hold is decided.
        clearTimeout(timer);
        clearTimeout(firstToken);
        const paused = performance.now();
        try {
          await options.admitted;
          // Aborted meanwhile (the client left, the chat's deadline): undici has destroyed the body.
          if (abort.aborted) throw abort.reason;
        } catch (err) {
          response.body.destroy();
          throw err;
        }
        timer = setTimeout(timedOut, Math.max(0, deadline - paused));
        if (firstToken !== undefined) firstToken = setTimeout(silent, Math.max(0, firstTokenBy - paused));
      }
      options.onResponse?.();
      const stream = response.body;
      // A JSON answer (asked for, or from a server that ignores `stream: true`) is handed over whole.
      const json = String(response.headers['content-type'] ?? '').startsWith('application/json');
      const maxBytes = this.maxResponseBytes;
      let received = 0;
      const chunks: Buffer[] = [];
      await new Promise<void>((resolve, reject) => {
        // A callback that throws (an in-stream error, a response too large) ends the call: the
        // connection is dropped so the upstream stops generating.
        const stop = (err: unknown) => {
          stream.destroy();
          reject(err);
        };
        // Bounds the JSON body and the parser's buffer of an unterminated line alike.
        const tooLarge = () => stop(upstreamBadGateway(this.modelId, `response too large (over ${maxBytes} bytes)`));
        stream.once('end', resolve);
        stream.once('error', (err) => reject(fail(err, 'the stream broke off')));
        if (json) {
          // Kept as bytes and decoded once at the end: no decoder or SSE parser for a body read whole.
          stream.on('data', (bytes: Buffer) => {
            received += bytes.length;
            if (received > maxBytes) return tooLarge();
            chunks.push(bytes);
          });
          return;
        }
        // undici's body yields Buffers; a streaming decoder keeps multi-byte characters split across
        // network chunks intact. Node's StringDecoder rather than TextDecoder, which costs more per
        // small chunk; unlike TextDecoder it keeps a leading byte-order mark, dropped here instead.
        // (undici's own `setEncoding` sets no decoder.)
        // Events rather than `for await`: one promise per stream instead of one per chunk.
        const decoder = new StringDecoder('utf8');
        let first = true;
        const parser = createParser({
          onEvent: (event) => {
            if (firstToken !== undefined) {
              clearTimeout(firstToken);
              firstToken = undefined;
            }
            if (event.data !== '[DONE]') options.onData(event.data);
            else options.onDone?.();
          },
          // llama.cpp builds before its server-context rewrite send a late error as an `error:`
          // field, which SSE itself ignores; it is the answer's end, not noise.
          onError: (err) => {
            if (err.type === 'unknown-field' && err.field === 'error') throw upstreamStreamError(this.modelId, err.value ?? '');
          },
        });
        stream.on('data', (bytes: Buffer) => {
          received += bytes.length;
          if (received > maxBytes) return tooLarge();
          let text = decoder.write(bytes);
          if (first && text !== '') {
            first = false;
            if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
          }
          try {
            parser.feed(text);
          } catch (err) {
            return stop(err);
          }
          // The client reads slower than the upstream writes: stop reading until it caught up.
          const drained = options.drained?.();
          if (drained) {
            stream.pause();
            void drained.then(() => stream.resume());
          }
        });
      });
      if (json) {
        const text = (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)).toString('utf8');
        (options.onCompletion ?? options.onData)(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
        options.onDone?.(); // the body is complete: undici fails a call whose body was cut short
      }
      if (abort.aborted) throw abort.reason; // an abort that landed after the last byte
    } finally {
      clearTimeout(timer);
      clearTimeout(firstToken);
    }
  }

  /** Send the request; resolve on a 2xx, reject with what any other answer (or none) means. */
  private async openStream(
    body: Buffer,
    baseHeaders: Record<string, string>,
    abort: ChatAbort,
    fail: (err: unknown, during: string) => unknown,
    traceHeaders: Record<string, string> | undefined,
  ): Promise<Dispatcher.ResponseData> {
    let response: Dispatcher.ResponseData;
    // The shared headers object as it is unless the call is traced (vLLM continues the trace).
    const headers = traceHeaders?.traceparent ? { ...baseHeaders, ...traceHeaders } : baseHeaders;
    try {
      // The dispatcher's own `request`: undici's top-level one parses the URL string each call.
      response = await this.options.dispatcher.request({
        origin: this.chatOrigin,
        path: this.chatPath,
        method: 'POST',
        headers,
        body,
        signal: abort.emitter,
        // Our own timer (above) decides timeouts; undici's only back it up.
        headersTimeout: this.timeoutMs + 1000,
        bodyTimeout: this.timeoutMs + 1000,
      });
    } catch (err) {
      if (abort.aborted) throw fail(err, 'request');
      throw upstreamConnectionError(this.modelId, codeOf(err), this.timeoutMs, this.options.upstreamSettings);
    }
    this.options.onResponded?.();
    if (response.statusCode >= 200 && response.statusCode < 300) return response;
    const text = await readCapped(response.body).catch((err: unknown) => {
      throw fail(err, 'reading an error response');
    });
    throw upstreamStatusError(this.modelId, response.statusCode, text, headerValue(response.headers['retry-after']));
  }

  /** `GET {base}/models`: true when the upstream answers 2xx within `timeoutMs`. */
  async probe(timeoutMs: number): Promise<boolean> {
    try {
      const response = await request(this.modelsUrl, {
        method: 'GET',
        headers: this.headers.authorization ? { authorization: this.headers.authorization } : {},
        dispatcher: this.options.dispatcher,
        signal: AbortSignal.timeout(timeoutMs),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      await response.body.dump();
      return response.statusCode >= 200 && response.statusCode < 300;
    } catch {
      return false;
    }
  }
}

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  const cause = (err as { cause?: { code?: unknown } } | null)?.cause?.code;
  return typeof cause === 'string' ? cause : undefined;
}

function errorText(err: unknown): string {
  const code = codeOf(err);
  if (code === 'UND_ERR_BODY_TIMEOUT') return 'no data within the timeout';
  return code ?? (err instanceof Error ? err.name : 'unknown error');
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

async function readCapped(body: Dispatcher.ResponseData['body']): Promise<string> {
  let text = '';
  const decoder = new TextDecoder();
  for await (const piece of body) {
    text += decoder.decode(piece as Buffer, { stream: true });
    if (text.length > MAX_ERROR_BODY) {
      body.destroy();
      break;
    }
  }
  return text;
}
