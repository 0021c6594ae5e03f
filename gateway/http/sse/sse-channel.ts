/**
 * The transport under every Server-Sent Events answer (chat chunks, Responses events): the status
 * line and headers once the request is accepted, a `: keepalive` comment whenever nothing else
 * was written for `keepAliveMs` (tools running, a long reasoning phase) so proxies keep the
 * connection, backpressure as a promise, and writes after the client left dropped, never thrown.
 * What the events say is the writer's business (sse-writer.ts, response-event-writer.ts); the chat
 * loop and responses/ never see a connection: they report to their own interfaces (`ChatSink`,
 * `ResponseEvents`), which the routes implement on these writers.
 *
 * @example
 *   const channel = new SseChannel(ctx.res, 15_000)
 *   channel.begin()
 *   channel.write('data: {"x":1}\n\n')
 *   channel.end()
 */
import type { ServerResponse } from 'node:http';

/** No `Connection` header: HTTP/1.1 keeps the connection by default, and a draining shutdown's `connection: close` must stand. */
const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  'X-Accel-Buffering': 'no',
} as const;

/** What a quiet stream sends by default: a comment, which every SSE client skips. */
const KEEPALIVE = ': keepalive\n\n';

export class SseChannel {
  private begun = false;
  private keepAlive?: NodeJS.Timeout;
  private drainWait?: Promise<void>;

  /** `quietText`: whole SSE text sent when quiet (a format with its own event for it, as the Messages API's `ping`). */
  constructor(
    private readonly res: ServerResponse,
    private readonly keepAliveMs: number,
    private readonly quietText: string = KEEPALIVE,
  ) {}

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

  /** Stop the keep-alive timer; `end()` does it too, and every exit path must reach one of them. */
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
    else this.write(this.quietText);
  };

  /** An SSE comment line: ignored by clients, keeps the connection busy. */
  comment(text: string): void {
    this.write(`: ${text.replace(/[\r\n]+/g, ' ')}\n\n`);
  }

  /** Raw SSE text (whole events); begins the stream if needed. */
  write(text: string): void {
    this.begin();
    if (this.res.destroyed || this.res.writableEnded) return;
    this.keepAlive?.refresh();
    this.res.write(text);
  }

  /** Stop the timer and end the response. */
  end(): void {
    this.stop();
    if (!this.res.destroyed && !this.res.writableEnded) this.res.end();
  }
}
