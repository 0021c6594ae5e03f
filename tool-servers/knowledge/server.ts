import { resolve } from 'node:path';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { z } from 'zod';
import { createServer, parseServerEnv, type Logger } from '../kit/index.js';
import { loadCorpus } from './corpus.js';
import { createKnowledgeIndex } from './knowledge-index.js';
import { knowledgeSearchTool } from './tools/knowledge-search.js';

export interface KnowledgeServerOptions {
  env: Record<string, string | undefined>;
  logger?: Logger;
  /** Base for a relative KNOWLEDGE_DIR; defaults to the process's working directory. */
  cwd?: string;
}

/** What the knowledge server reads from its environment. */
export const knowledgeEnvSchema = z.object({
  KNOWLEDGE_DIR: z.string().default('config/knowledge').describe('Folder of project pages (relative to the working directory)'),
});

/**
 * The `knowledge` tool server: reads the corpus folder (KNOWLEDGE_DIR) once and serves
 * `knowledge_search` from an in-memory index. Adding a file takes effect on restart.
 *
 * @example
 * const server = createKnowledgeServer({ env: { KNOWLEDGE_DIR: '/srv/knowledge' }, logger });
 */
export function createKnowledgeServer(options: KnowledgeServerOptions): Server {
  const { KNOWLEDGE_DIR } = parseServerEnv('knowledge', knowledgeEnvSchema, options.env);
  const dir = resolve(options.cwd ?? process.cwd(), KNOWLEDGE_DIR);
  const index = createKnowledgeIndex(loadCorpus(dir, options.logger));
  return createServer({ name: 'switchyard-knowledge', version: '0.1.0', tools: [knowledgeSearchTool(index)], logger: options.logger });
}
