/** Stdio entry of the `knowledge` MCP server: build it from the environment and serve. */
import { createStderrLogger, runStdio } from '../kit/index.js';
import { createKnowledgeServer } from './server.js';

const logger = createStderrLogger('knowledge', process.env.LOG_LEVEL ?? 'info');
await runStdio(createKnowledgeServer({ env: process.env, logger }), logger);
