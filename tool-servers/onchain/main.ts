/** Stdio entry of the `onchain` MCP server: build it from the environment and serve. */
import { createStderrLogger, runStdio } from '../kit/index.js';
import { createOnchainServer } from './server.js';

const logger = createStderrLogger('onchain', process.env.LOG_LEVEL ?? 'info');
await runStdio(createOnchainServer({ env: process.env, logger }), logger);
