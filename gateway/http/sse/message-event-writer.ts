/**
 * Writes a message's streaming events as Server-Sent Events in the Anthropic Messages format:
 * `event: <type>` and a `data:` line holding `{type, ...fields}`
 * (https://docs.claude.com/en/docs/build-with-claude/streaming). `message_stop` ends it (no
 * `[DONE]`); a failure after the stream began is an `error` event, which the official SDK raises.
 * When nothing was written for `keepAliveMs` (tools running, a model thinking) it sends the
 * format's own `ping` event rather than a comment. Backpressure and writes after the client left
 * are the channel's.
 *
 * @example
 *   const events = new MessageEventWriter(ctx.res, 15_000)
 *   events.send('message_start', { message })
 *   events.end()
 */
import type { ServerResponse } from 'node:http';
import type { MessageEvents } from '../../messages/message-output.js';
import type { MessageErrorBody } from '../../messages/message-errors.js';
import { SseChannel } from './sse-channel.js';

const PING = 'event: ping\ndata: {"type":"ping"}\n\n';

export class MessageEventWriter implements MessageEvents {
  private readonly channel: SseChannel;

  constructor(res: ServerResponse, keepAliveMs: number) {
    this.channel = new SseChannel(res, keepAliveMs, PING);
  }

  /** True once the status line and headers went out; errors must then be reported in-band. */
  get started(): boolean {
    return this.channel.started;
  }

  begin(): void {
    this.channel.begin();
  }

  send(type: string, fields: Record<string, unknown>): void {
    this.channel.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`);
  }

  /** A ping now (a tool round starting: the client hears the stream is alive before the first result). */
  ping(): void {
    this.channel.write(PING);
  }

  /** The failure of a stream that began, as the format's `error` event. */
  error(body: MessageErrorBody): void {
    this.channel.write(`event: error\ndata: ${JSON.stringify(body)}\n\n`);
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
