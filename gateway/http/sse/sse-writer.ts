/**
 * Writes a chat answer as Server-Sent Events in the OpenAI `chat.completion.chunk` format: the
 * first delta carries the role, then content deltas, a chunk with `finish_reason` (plus
 * `tool_trace` and `credits`), an optional usage chunk with `choices: []`, then `data: [DONE]`.
 * The route calls `begin()` once the request is accepted (the first upstream call answered 2xx),
 * so the client has its status line and headers before the model has written anything, even when
 * it thinks for minutes; anything that fails before it is still a plain HTTP error. Keep-alives,
 * backpressure and writes after the client left are the channel's (sse-channel.ts). The chat loop
 * never sees it: routes/chat.ts writes the loop's `ChatSink` progress (chat/orchestrator.ts) here.
 *
 * @example
 *   const sse = new SseWriter(ctx.res, { id, created, model: 'svc-32b-conductor' }, 15_000)
 *   sse.begin()
 *   sse.content('Hello')
 *   sse.finish({ finishReason: 'stop', toolTrace: [] })
 *   sse.done()
 */
import type { ServerResponse } from 'node:http';
import type { GatewayError } from '../../errors.js';
import type { ChatCredits, ToolTraceEntry, UpstreamToolCall, Usage } from '../../chat/chat-types.js';
import { SseChannel } from './sse-channel.js';

export interface SseIdentity {
  id: string;
  created: number;
  model: string;
}

/** Arguments of a handed-back call go out in pieces of at most this many characters. */
const ARGUMENT_FRAGMENT_CHARS = 256;

export class SseWriter {
  /** Everything up to the delta, identical for every chunk of this answer. */
  private readonly prefix: string;
  private readonly channel: SseChannel;
  private roleSent = false;

  constructor(res: ServerResponse, identity: SseIdentity, keepAliveMs: number) {
    this.channel = new SseChannel(res, keepAliveMs);
    this.prefix =
      `data: {"id":${JSON.stringify(identity.id)},"object":"chat.completion.chunk","created":${identity.created},` +
      `"model":${JSON.stringify(identity.model)},"choices":[`;
  }

  /** True once the status line and headers went out; errors must then be reported in-band. */
  get started(): boolean {
    return this.channel.started;
  }

  /** Send the status line and headers now and start the keep-alive timer. */
  begin(): void {
    this.channel.begin();
  }

  /** Stop the keep-alive timer; `done()` does it too, and every exit path must reach one of them. */
  stop(): void {
    this.channel.stop();
  }

  /** Backpressure: see SseChannel.drained. */
  drained(): Promise<void> | undefined {
    return this.channel.drained();
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
    this.channel.comment(text);
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
    this.channel.end();
  }

  private write(text: string): void {
    this.channel.write(text);
  }
}
