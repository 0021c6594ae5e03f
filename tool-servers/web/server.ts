import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { createServer, type Logger } from '../kit/index.js';

export interface WebServerOptions {
  env: Record<string, string | undefined>;
  logger?: Logger;
}

/** The `web` tool server. Its tools arrive with the web issue. */
export function createWebServer(options: WebServerOptions): Server {
  return createServer({ name: 'switchyard-web', version: '0.1.0', tools: [], logger: options.logger });
}
