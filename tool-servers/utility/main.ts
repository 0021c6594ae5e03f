/** Stdio entry of the `utility` MCP server: build it from the environment and serve. */
import { createStderrLogger, runStdio } from '../kit/index.js';
import { createUtilityServer } from './server.js';

const logger = createStderrLogger('utility', process.env.LOG_LEVEL ?? 'info');
await runStdio(createUtilityServer({ env: process.env, logger }), logger);
