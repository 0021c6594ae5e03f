/**
 * The attribute names our spans carry, from the OpenTelemetry semantic conventions: the GenAI and
 * MCP conventions of open-telemetry/semantic-conventions-genai at commit
 * 0393513c908bf895e7b3ec480a2c1eb073c584af (docs/gen-ai/gen-ai-spans.md, gen-ai-agent-spans.md,
 * mcp.md; still "Development", so copied here as their guidance for incubating names says rather
 * than imported from `@opentelemetry/semantic-conventions/incubating`), and the stable HTTP,
 * server, network and error names of the core conventions (v1.41, the version those pages link;
 * the same in `@opentelemetry/semantic-conventions` 1.45.0). Our own are under `switchyard.`.
 */

// GenAI (Development)
export const GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
export const GEN_AI_PROVIDER_NAME = 'gen_ai.provider.name';
export const GEN_AI_AGENT_NAME = 'gen_ai.agent.name';
export const GEN_AI_REQUEST_MODEL = 'gen_ai.request.model';
export const GEN_AI_REQUEST_MAX_TOKENS = 'gen_ai.request.max_tokens';
export const GEN_AI_RESPONSE_FINISH_REASONS = 'gen_ai.response.finish_reasons';
export const GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
export const GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
export const GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
export const GEN_AI_TOOL_TYPE = 'gen_ai.tool.type';
export const GEN_AI_TOOL_CALL_ID = 'gen_ai.tool.call.id';
/** Opt-in content (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT). */
export const GEN_AI_INPUT_MESSAGES = 'gen_ai.input.messages';
export const GEN_AI_OUTPUT_MESSAGES = 'gen_ai.output.messages';
export const GEN_AI_TOOL_CALL_ARGUMENTS = 'gen_ai.tool.call.arguments';
export const GEN_AI_TOOL_CALL_RESULT = 'gen_ai.tool.call.result';

// MCP and JSON-RPC (Development)
export const MCP_METHOD_NAME = 'mcp.method.name';
export const JSONRPC_REQUEST_ID = 'jsonrpc.request.id';

// Core (stable)
export const HTTP_REQUEST_METHOD = 'http.request.method';
export const HTTP_ROUTE = 'http.route';
export const HTTP_RESPONSE_STATUS_CODE = 'http.response.status_code';
export const URL_SCHEME = 'url.scheme';
export const SERVER_ADDRESS = 'server.address';
export const SERVER_PORT = 'server.port';
export const NETWORK_TRANSPORT = 'network.transport';
export const NETWORK_PROTOCOL_VERSION = 'network.protocol.version';
export const ERROR_TYPE = 'error.type';

// Switchyard's own
/** The fleet deployment that served an upstream call (docs/fleet.md). */
export const SWITCHYARD_DEPLOYMENT = 'switchyard.deployment';
export const SWITCHYARD_CHAT_ROUNDS = 'switchyard.chat.tool_rounds';
export const SWITCHYARD_CREDITS_CHARGED = 'switchyard.credits.charged';
export const SWITCHYARD_WALLET_HMAC = 'switchyard.wallet.hmac';
