/**
 * The tools offered to the model, as OpenAI function schemas built from each tool's MCP input
 * schema. The conversion is cached: the tool list changes only when a tool server restarts, and
 * rebuilding it on every request is measurable on the hot path.
 *
 * @example
 *   const offer = new ToolOffer()
 *   offer.functionsFor(runner.listTools()) // [{ type: 'function', function: { name, description, parameters } }]
 */
import type { ToolInfo } from '../tools/types.js';
import type { FunctionTool } from './chat-types.js';

export class ToolOffer {
  private lastInfos?: ToolInfo[];
  private lastKey = '';
  private lastFunctions: FunctionTool[] = [];
  /** Characters of the offered tools as JSON, for the prompt-size estimate. */
  jsonLength = 0;

  functionsFor(infos: ToolInfo[]): FunctionTool[] {
    if (infos === this.lastInfos) return this.lastFunctions;
    const key = infos.map((t) => `${t.server}/${t.name}`).join('\n');
    if (key !== this.lastKey || this.lastInfos === undefined) {
      this.lastFunctions = infos.map(toFunctionTool);
      this.jsonLength = JSON.stringify(this.lastFunctions).length;
      this.lastKey = key;
    }
    this.lastInfos = infos;
    return this.lastFunctions;
  }
}

/** One tool in the function-calling format; a schema without `type` is made an object schema. */
export function toFunctionTool(info: ToolInfo): FunctionTool {
  const parameters = { type: 'object', properties: {}, ...info.inputSchema };
  return { type: 'function', function: { name: info.name, description: info.description, parameters } };
}
