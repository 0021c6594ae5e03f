/**
 * Requests Node's HTTP parser refuses (headers over the size limit, a malformed request line)
 * never reach Koa: Node answers them itself with a bare status and no body. So does a CONNECT,
 * which Node hands only to a 'connect' listener and otherwise drops without a word. These
 * listeners give them the same OpenAI-shaped error body as every other answer, then close the
 * connection (the parser cannot go on after an error; a CONNECT's socket is no HTTP stream any more).
 *
 * @example
 *   server.on('clientError', answerClientError)
 *   server.on('connect', refuseConnect)
 */
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { GatewayError, MethodNotAllowed } from '../errors.js';

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
  // A reset connection has nobody to answer. A request whose answer has begun (a pipelined request
  // that failed to parse behind a streaming one) cannot take a second status line: Node's own
  // handler takes the same care.
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent === true) {
    socket.destroy();
    return;
  }
  writeError(socket, errorFor(err.code));
}

/** CONNECT (a proxy tunnel): the gateway is no proxy. 405, as the router answers any other method it does not serve. */
export function refuseConnect(_req: IncomingMessage, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  writeError(socket, new MethodNotAllowed());
}

function writeError(socket: Duplex, error: GatewayError): void {
  const body = JSON.stringify(error.toBody());
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}
