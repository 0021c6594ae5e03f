/**
 * One HTTP/1.1 exchange over a bare TCP socket, for requests `fetch` and `http.request` will not
 * send: a broken request line, no Host, an odd Expect, a body that lies about its encoding. The
 * answer is read as it arrives (Content-Length, chunked, or until the server closes), so a server
 * that keeps the connection open does not hold the caller.
 *
 * @example
 *   const answer = await rawExchange(gateway.url, 'GET /health HTTP/1.1\r\nExpect: foo\r\n\r\n')
 *   answer?.status // 417
 */
import { connect } from 'node:net';

export interface RawAnswer {
  /** Interim answers before the final one, e.g. `HTTP/1.1 100 Continue`. */
  interim: string[];
  statusLine: string;
  status: number;
  /** Header names lower-cased; a repeated header's values joined with ', '. */
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * Send `request` as it is and read one answer: undefined when the server closed the connection
 * without answering. Rejects when no answer has come after `timeoutMs`, which only a server that
 * hangs on a request makes happen.
 */
export function rawExchange(url: string, request: string | Buffer, timeoutMs = 30_000): Promise<RawAnswer | undefined> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const reader = new AnswerReader();
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms to ${String(request).slice(0, 120)}`));
    }, timeoutMs);
    const finish = (answer: RawAnswer | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    socket.on('connect', () => socket.write(request));
    socket.on('data', (chunk: Buffer) => {
      const answer = reader.add(chunk);
      if (answer) finish(answer);
    });
    // The server may close (or reset) the connection after its answer, or without one.
    socket.on('close', () => finish(reader.atClose()));
    socket.on('error', () => undefined);
  });
}

/** Parses one answer from the bytes as they come. */
class AnswerReader {
  private buffer = Buffer.alloc(0);
  private readonly interim: string[] = [];

  /** The answer, once it is whole. */
  add(chunk: Buffer): RawAnswer | undefined {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    return this.parse(false);
  }

  /** The answer as far as it came when the server closed (a body without a length ends here). */
  atClose(): RawAnswer | undefined {
    return this.parse(true);
  }

  private parse(closed: boolean): RawAnswer | undefined {
    for (;;) {
      const headEnd = this.buffer.indexOf('\r\n\r\n');
      if (headEnd < 0) return undefined;
      const [statusLine, ...lines] = this.buffer.subarray(0, headEnd).toString('latin1').split('\r\n');
      const status = Number(statusLine.split(' ')[1]);
      const rest = this.buffer.subarray(headEnd + 4);
      if (status >= 100 && status < 200) {
        this.interim.push(statusLine);
        this.buffer = rest;
        continue;
      }
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
      }
      const body = bodyOf(headers, rest, closed);
      return body === undefined ? undefined : { interim: this.interim, statusLine, status, headers, body };
    }
  }
}

/** The whole body, or undefined while more is to come. */
function bodyOf(headers: Record<string, string>, bytes: Buffer, closed: boolean): Buffer | undefined {
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) return dechunked(bytes) ?? (closed ? bytes : undefined);
  if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    if (bytes.length >= length) return bytes.subarray(0, length);
    return closed ? bytes : undefined;
  }
  return closed ? bytes : undefined;
}

/** A chunked body decoded, or undefined until its last chunk has come. */
function dechunked(bytes: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    if (lineEnd < 0) return undefined;
    const size = parseInt(bytes.subarray(at, lineEnd).toString('latin1'), 16);
    if (Number.isNaN(size)) return undefined;
    if (size === 0) return Buffer.concat(parts);
    const start = lineEnd + 2;
    if (bytes.length < start + size + 2) return undefined;
    parts.push(bytes.subarray(start, start + size));
    at = start + size + 2;
  }
}
