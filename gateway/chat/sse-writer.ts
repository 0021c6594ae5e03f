/**
 * Writes a chat answer as Server-Sent Events in the OpenAI `chat.completion.chunk` format: the
 * first delta carries the role, then content deltas, a chunk with `finish_reason` (plus
 * `tool_trace` and `credits`), an optional usage chunk with `choices: []`, then `data: [DONE]`.
 * Comment lines (`: tool web_search`) keep proxies from timing out while tools run. Headers go out
 * with the first event, so anything that fails before it is still a plain HTTP error. Writes
 * after the client left are dropped, never thrown.
 *
 * @example
 *   const sse = new SseWriter(ctx.res, { id, created, model: 'svc-32b-conductor' })
 *   sse.content('Hello')
 *   sse.finish({ finishReason: 'stop', toolTrace: [] })
 *   sse.done()
 */
import type { ServerResponse } from 'node:http';
import type { GatewayError } from '../errors.js';
import type { ChatCredits, ToolTraceEntry, Usage } from './chat-types.js';

export interface SseIdentity {
  id: string;
  created: number;
  model: string;
}

export const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  'X-Accel-Buffering': 'no',
  Connection: 'keep-alive',
} as const;

export class SseWriter {
  /** Everything up to the delta, identical for every chunk of this answer. */
  private readonly prefix: string;
  private begun = false;
  private roleSent = false;

  constructor(
    private readonly res: ServerResponse,
    identity: SseIdentity,
  ) {
    this.prefix =
      `data: {"id":${JSON.stringify(identity.id)},"object":"chat.completion.chunk","created":${identity.created},` +
      `"model":${JSON.stringify(identity.model)},"choices":[`;
  }

  /** True once the status line and headers went out; errors must then be reported in-band. */
  get started(): boolean {
    return this.begun;
  }

  /** Send the status line and headers now (the first event does this by itself). */
  begin(): void {
    if (this.begun) return;
    this.begun = true;
    if (this.res.headersSent) return;
    this.res.writeHead(200, SSE_HEADERS);
  }

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
    if (!this.res.destroyed && !this.res.writableEnded) this.res.end();
  }

  private write(text: string): void {
    this.begin();
    if (this.res.destroyed || this.res.writableEnded) return;
    this.res.write(text);
  }
}
