/**
 * Requests Node's HTTP parser refuses (headers over the size limit, a malformed request line)
 * never reach Koa: Node answers them itself with a bare status and no body. This listener gives
 * them the same OpenAI-shaped error body as every other answer, then closes the connection (the
 * parser cannot go on after an error).
 *
 * @example
 *   server.on('clientError', answerClientError)
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { GatewayError } from '../errors.js';

function errorFor(code: string | undefined): GatewayError {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return new GatewayError({ status: 431, code: 'request_header_too_large', message: 'The request headers are larger than the limit.' });
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return new GatewayError({ status: 408, code: 'request_timeout', message: 'The request was not received in time.' });
  }
  return new GatewayError({ status: 400, code: 'invalid_request', message: 'The request is not valid HTTP.' });
}

export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  // A reset connection has nobody to answer; a socket mid-response cannot take a second one.
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const error = errorFor(err.code);
  const body = JSON.stringify(error.toBody());
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}
