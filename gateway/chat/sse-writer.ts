/**
 * Writes a chat answer as Server-Sent Events in the OpenAI `chat.completion.chunk` format: the
 * first delta carries the role, then content deltas, a chunk with `finish_reason` (plus
 * `tool_trace` and `credits`), an optional usage chunk with `choices: []`, then `data: [DONE]`.
 * The route calls `begin()` once the request is accepted (the first upstream call answered 2xx),
 * so the client has its status line and headers before the model has written anything, even when
 * it thinks for minutes; anything that fails before it is still a plain HTTP error. From then on, a `: keepalive` comment goes out whenever nothing else was
 * written for `keepAliveMs` (tools running, a long reasoning phase), so proxies keep the
 * connection. Writes after the client left are dropped, never thrown.
 *
 * @example
 *   const sse = new SseWriter(ctx.res, { id, created, model: 'svc-32b-conductor' }, 15_000)
 *   sse.begin()
 *   sse.content('Hello')
 *   sse.finish({ finishReason: 'stop', toolTrace: [] })
 *   sse.done()
 */
import type { ServerResponse } from 'node:http';
import type { GatewayError } from '../errors.js';
import type { ChatCredits, ToolTraceEntry, UpstreamToolCall, Usage } from './chat-types.js';

export interface SseIdentity {
  id: string;
  created: number;
  model: string;
}

/** No `Connection` header: HTTP/1.1 keeps the connection by default, and a draining shutdown's `connection: close` must stand. */
export const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  'X-Accel-Buffering': 'no',
} as const;

const KEEPALIVE = ': keepalive\n\n';
/** Arguments of a handed-back call go out in pieces of at most this many characters. */
const ARGUMENT_FRAGMENT_CHARS = 256;

export class SseWriter {
  /** Everything up to the delta, identical for every chunk of this answer. */
  private readonly prefix: string;
  private begun = false;
  private roleSent = false;
  private keepAlive?: NodeJS.Timeout;
  private drainWait?: Promise<void>;

  constructor(
    private readonly res: ServerResponse,
    identity: SseIdentity,
    private readonly keepAliveMs: number,
  ) {
    this.prefix =
      `data: {"id":${JSON.stringify(identity.id)},"object":"chat.completion.chunk","created":${identity.created},` +
      `"model":${JSON.stringify(identity.model)},"choices":[`;
  }

  /** True once the status line and headers went out; errors must then be reported in-band. */
  get started(): boolean {
    return this.begun;
  }

  /** Send the status line and headers now and start the keep-alive timer. */
  begin(): void {
    if (this.begun) return;
    this.begun = true;
    if (this.res.headersSent || this.res.destroyed) return;
    this.res.writeHead(200, SSE_HEADERS);
    this.res.flushHeaders();
    this.keepAlive = setTimeout(this.sendKeepAlive, this.keepAliveMs);
    this.keepAlive.unref();
  }

  /** Stop the keep-alive timer; `done()` does it too, and every exit path must reach one of them. */
  stop(): void {
    clearTimeout(this.keepAlive);
    this.keepAlive = undefined;
  }

  /**
   * While the client's connection is full, a promise that settles when it drained (or closed);
   * undefined otherwise. The upstream is not read meanwhile, so a slow reader holds no backlog.
   */
  drained(): Promise<void> | undefined {
    const res = this.res;
    if (!res.writableNeedDrain || res.destroyed) return undefined;
    this.drainWait ??= new Promise<void>((resolve) => {
      const settle = () => {
        res.off('drain', settle);
        res.off('close', settle);
        this.drainWait = undefined;
        resolve();
      };
      res.on('drain', settle);
      res.on('close', settle);
    });
    return this.drainWait;
  }

  private readonly sendKeepAlive = (): void => {
    // A full connection gains nothing from more bytes: wait for the next quiet period.
    if (this.res.writableNeedDrain) this.keepAlive?.refresh();
    else this.write(KEEPALIVE);
  };

  content(text: string): void {
    if (!this.roleSent) {
      this.roleSent = true;
      this.write(`${this.prefix}{"index":0,"delta":{"role":"assistant","content":${JSON.stringify(text)}},"finish_reason":null}]}\n\n`);
      return;
    }
    this.write(`${this.prefix}{"index":0,"delta":{"content":${JSON.stringify(text)}},"finish_reason":null}]}\n\n`);
  }

  /** An SSE comment line: ignored by clients, keeps the connection busy. */
  comment(text: string): void {
    this.write(`: ${text.replace(/[\r\n]+/g, ' ')}\n\n`);
  }

  /**
   * Calls of the client's functions, in the chunk format OpenAI streams them in: per call one
   * delta with its index, id, type and name (arguments empty), then its arguments in fragments.
   */
  toolCalls(calls: UpstreamToolCall[]): void {
    calls.forEach((call, index) => {
      const head = { index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } };
      this.toolCallDelta(head);
      const args = call.function.arguments;
      for (let at = 0; at < args.length; at += ARGUMENT_FRAGMENT_CHARS) {
        this.toolCallDelta({ index, function: { arguments: args.slice(at, at + ARGUMENT_FRAGMENT_CHARS) } });
      }
    });
  }

  private toolCallDelta(call: Record<string, unknown>): void {
    const role = this.roleSent ? '' : '"role":"assistant","content":null,';
    this.roleSent = true;
    this.write(`${this.prefix}{"index":0,"delta":{${role}"tool_calls":[${JSON.stringify(call)}]},"finish_reason":null}]}\n\n`);
  }

  /** The chunk that ends the choice. */
  finish(details: { finishReason: string; toolTrace: ToolTraceEntry[]; credits?: ChatCredits }): void {
    const delta = this.roleSent ? '{}' : '{"role":"assistant","content":""}';
    this.roleSent = true;
    const extra =
      `,"tool_trace":${JSON.stringify(details.toolTrace)}` + (details.credits ? `,"credits":${JSON.stringify(details.credits)}` : '');
    this.write(`${this.prefix}{"index":0,"delta":${delta},"finish_reason":${JSON.stringify(details.finishReason)}}]${extra}}\n\n`);
  }

  /** The usage chunk (`stream_options.include_usage`): no choices, just the summed usage. */
  usage(usage: Usage): void {
    this.write(`${this.prefix}],"usage":${JSON.stringify(usage)}}\n\n`);
  }

  /** An error after the stream began: a final chunk with `error` and `finish_reason: "error"`. */
  error(err: GatewayError): void {
    const delta = this.roleSent ? '{}' : '{"role":"assistant","content":""}';
    this.roleSent = true;
    this.write(`${this.prefix}{"index":0,"delta":${delta},"finish_reason":"error"}],"error":${JSON.stringify(err.toBody().error)}}\n\n`);
  }

  /** `data: [DONE]` and the end of the response. */
  done(): void {
    this.write('data: [DONE]\n\n');
    this.stop();
    if (!this.res.destroyed && !this.res.writableEnded) this.res.end();
  }

  private write(text: string): void {
    this.begin();
    if (this.res.destroyed || this.res.writableEnded) return;
    this.keepAlive?.refresh();
    this.res.write(text);
  }
}
