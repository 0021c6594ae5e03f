import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { createServer, type Logger } from '../kit/index.js';

export interface KnowledgeServerOptions {
  env: Record<string, string | undefined>;
  logger?: Logger;
}

/** The `knowledge` tool server. Its tools arrive with the knowledge issue. */
export function createKnowledgeServer(options: KnowledgeServerOptions): Server {
  return createServer({ name: 'switchyard-knowledge', version: '0.1.0', tools: [], logger: options.logger });
}
