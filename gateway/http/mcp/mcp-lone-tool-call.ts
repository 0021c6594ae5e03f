/**
 * The hot path of `/mcp`: after `initialize`, nearly every POST an agent sends is one
 * `tools/call`. Answering it through a fresh SDK server and transport (web Request and Response,
 * their streams, a dozen zod passes) costs about as much CPU as the whole `/v1/tools/execute`
 * request, so a lone, well-formed tools/call that the SDK transport would accept is answered
 * directly, with the same tool-call code and the JSON-RPC response the SDK's server would write.
 * Anything else (initialize, tools/list, ping, notifications, batches, and every message or header
 * this check is not sure of) goes to the SDK, which answers it or refuses it in its own words.
 *
 * @example
 *   const call = loneToolCall(ctx)  // { id: 1, name: 'get_time', args: {...} } or undefined
 */
import type { Context } from 'koa';
import { CallToolRequestSchema, isJSONRPCRequest, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { ToolCall } from './mcp-tool-call.js';
import { bodyIsJson } from '../middleware/json-body.js';

export function loneToolCall(ctx: Context): ToolCall | undefined {
  // The transport's own header checks, so that whatever it would refuse still reaches it.
  const accept = ctx.get('accept');
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  if (!bodyIsJson(ctx)) return undefined; // what mcp-endpoint.ts tells the transport is application/json
  const version = ctx.get('mcp-protocol-version');
  if (version && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined;

  const body: unknown = ctx.request.body;
  if (!isJSONRPCRequest(body) || body.method !== 'tools/call') return undefined;
  const parsed = CallToolRequestSchema.safeParse(body);
  // Task-augmented calls need the SDK's task handling (which refuses them: no tasks capability).
  if (!parsed.success || parsed.data.params.task !== undefined) return undefined;
  const { name, arguments: args, _meta: meta } = parsed.data.params;
  return { id: body.id, name, args: args ?? {}, ...(meta ? { meta } : {}) };
}

/** The JSON-RPC response the SDK's Protocol writes for a request's result, in its key order. */
export function jsonRpcResult(id: ToolCall['id'], result: unknown): { result: unknown; jsonrpc: '2.0'; id: ToolCall['id'] } {
  return { result, jsonrpc: '2.0', id };
}
