import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { createServer, type Logger } from '../kit/index.js';

export interface UtilityServerOptions {
  env: Record<string, string | undefined>;
  logger?: Logger;
}

/** The `utility` tool server. Its tools arrive with the utility issue. */
export function createUtilityServer(options: UtilityServerOptions): Server {
  return createServer({ name: 'switchyard-utility', version: '0.1.0', tools: [], logger: options.logger });
}
