/** Stdio entry of the `web` MCP server: build it from the environment and serve. */
import { createStderrLogger, runStdio } from '../kit/index.js';
import { createWebServer } from './server.js';

const logger = createStderrLogger('web', process.env.LOG_LEVEL ?? 'info');
await runStdio(createWebServer({ env: process.env, logger }), logger);
