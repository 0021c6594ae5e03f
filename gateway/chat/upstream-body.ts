/**
 * The body of an upstream chat call, as bytes. The tool list is the same for every call until a
 * tool server changes, and most of the body's size: its JSON is encoded to UTF-8 once and copied
 * into each body. (Kept as a string, it made every body a two-byte string — its descriptions hold
 * non-ASCII characters — which undici encoded again on every call; bench/upstream-body.ts.)
 *
 * @example
 *   const bodies = new UpstreamBody('"qwen3:32b"')
 *   bodies.serialize({ messages, max_tokens: 256, tools }, { stream: true }) // Buffer of the JSON request
 */
import type { UpstreamChatParams } from './upstream-client.js';
import type { FunctionTool } from './chat-types.js';

export class UpstreamBody {
  private lastTools?: FunctionTool[];
  private lastToolsBytes = Buffer.alloc(0);

  /** `modelJson`: the deployment's model name as a JSON string. */
  constructor(private readonly modelJson: string) {}

  /**
   * `stream`: a streamed call asks for its usage (`stream_options.include_usage`); a JSON call
   * sends `stream: false` and no `stream_options` (vLLM refuses them without streaming).
   */
  serialize(params: UpstreamChatParams, { stream }: { stream: boolean }): Buffer {
    const { tools, messages } = params;
    const mode = stream ? '"stream":true,"stream_options":{"include_usage":true}' : '"stream":false';
    let head = `{"model":${this.modelJson},${mode},"messages":${JSON.stringify(messages)}`;
    for (const key in params) {
      if (key === 'messages' || key === 'tools' || key === 'parallel_tool_calls') continue;
      const value = params[key as keyof UpstreamChatParams];
      if (value !== undefined) head += `,"${key}":${JSON.stringify(value)}`;
    }
    if (!tools || !tools.length) return Buffer.from(`${head}}`);
    if (tools !== this.lastTools) {
      this.lastTools = tools;
      this.lastToolsBytes = Buffer.from(JSON.stringify(tools));
    }
    head += ',"tools":';
    // llama.cpp parses one call per reply unless asked (its default is false; OpenAI's, vLLM's true).
    const tail = `,"parallel_tool_calls":${params.parallel_tool_calls ?? true}}`;
    const toolsBytes = this.lastToolsBytes;
    const headBytes = Buffer.byteLength(head);
    const body = Buffer.allocUnsafe(headBytes + toolsBytes.length + tail.length);
    body.write(head, 0);
    toolsBytes.copy(body, headBytes);
    body.write(tail, headBytes + toolsBytes.length, 'latin1');
    return body;
  }
}
