/**
 * The tools offered to the model, as OpenAI function schemas built from each tool's MCP input
 * schema. The conversion is cached: the tool list changes only when a tool server restarts or
 * announces a change, and rebuilding it on every request is measurable on the hot path.
 *
 * @example
 *   const offer = new ToolOffer()
 *   offer.functionsFor(runner.listTools()) // [{ type: 'function', function: { name, description, parameters } }]
 */
import type { ToolInfo } from '../tools/types.js';
import type { FunctionTool } from './chat-types.js';

export class ToolOffer {
  private lastInfos?: ToolInfo[];
  private lastFunctions: FunctionTool[] = [];
  /** Characters of the offered tools as JSON, for the prompt-size estimate. */
  jsonLength = 0;

  /**
   * Keyed by the list's identity: the tool host hands out the same array until something changed
   * (a server restarted or announced list_changed) and a new one after, even when the names are
   * the same — a restarted server may bring new schemas or descriptions under the old names.
   */
  functionsFor(infos: ToolInfo[]): FunctionTool[] {
    if (infos !== this.lastInfos) {
      this.lastFunctions = infos.map(toFunctionTool);
      this.jsonLength = JSON.stringify(this.lastFunctions).length;
      this.lastInfos = infos;
    }
    return this.lastFunctions;
  }
}

/** One tool in the function-calling format; a schema without `type` is made an object schema. */
export function toFunctionTool(info: ToolInfo): FunctionTool {
  const parameters = { type: 'object', properties: {}, ...info.inputSchema };
  return { type: 'function', function: { name: info.name, description: info.description, parameters } };
}
