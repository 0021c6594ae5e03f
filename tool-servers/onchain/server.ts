import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { createServer, type Logger } from '../kit/index.js';

export interface OnchainServerOptions {
  env: Record<string, string | undefined>;
  logger?: Logger;
}

/** The `onchain` tool server. Its tools arrive with the onchain issue. */
export function createOnchainServer(options: OnchainServerOptions): Server {
  return createServer({ name: 'switchyard-onchain', version: '0.1.0', tools: [], logger: options.logger });
}
