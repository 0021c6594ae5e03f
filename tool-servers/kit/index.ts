/** What every tool server shares. */
export { createServer, type CreateServerOptions } from './create-server.js';
export { defineTool, type ToolDefinition, type ToolContext, type AnyToolDefinition } from './define-tool.js';
export { ToolError, type ToolErrorCode, type ToolErrorPayload } from './tool-error.js';
export { runStdio } from './run-stdio.js';
export { createStderrLogger, type Logger } from './logger.js';
export { httpRequest, httpJson, HttpFailure, HttpStatusError, type HttpRequestOptions, type HttpResponse } from './http-client.js';
export { firstAvailable, describeFailure, type Provider, type FallbackResult } from './provider-fallback.js';
export { untilAborted } from './until-aborted.js';
export { charsetOf, decodeText } from './text-decoding.js';
export { parseServerEnv, envUrl, envInt, envFlag, envNameList, type ServerEnv } from './server-env.js';
