/**
 * Writes a response's streaming events as Server-Sent Events: `event: <type>` and a `data:` line
 * holding `{type, ...fields, sequence_number}`, numbered from 0 in the order sent, as the
 * Responses API streams them (https://platform.openai.com/docs/api-reference/responses-streaming).
 * No `[DONE]`: the terminal event (`response.completed`, `.incomplete` or `.failed`) ends it.
 * Keep-alives, backpressure and writes after the client left are the channel's.
 *
 * @example
 *   const events = new ResponseEventWriter(ctx.res, 15_000)
 *   events.send('response.created', { response })
 *   events.end()
 */
import type { ServerResponse } from 'node:http';
import type { ResponseEvents } from '../../responses/response-output.js';
import { SseChannel } from './sse-channel.js';

export class ResponseEventWriter implements ResponseEvents {
  private readonly channel: SseChannel;
  private sequence = 0;

  constructor(res: ServerResponse, keepAliveMs: number) {
    this.channel = new SseChannel(res, keepAliveMs);
  }

  /** True once the status line and headers went out; errors must then be reported in-band. */
  get started(): boolean {
    return this.channel.started;
  }

  begin(): void {
    this.channel.begin();
  }

  send(type: string, fields: Record<string, unknown>): void {
    const data = JSON.stringify({ type, ...fields, sequence_number: this.sequence++ });
    this.channel.write(`event: ${type}\ndata: ${data}\n\n`);
  }

  drained(): Promise<void> | undefined {
    return this.channel.drained();
  }

  /** Stop the keep-alive timer without ending (every exit path reaches this or `end`). */
  stop(): void {
    this.channel.stop();
  }

  end(): void {
    this.channel.end();
  }
}
