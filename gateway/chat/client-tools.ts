/**
 * The client's own functions (`tools` entries of type `function`) and how it wants them called
 * (`tool_choice`, `parallel_tool_calls`), as the OpenAI chat-completions format defines them
 * (https://platform.openai.com/docs/api-reference/chat/create: `tools`, `tool_choice`,
 * `parallel_tool_calls`). The gateway offers them next to its own tools and hands their calls back.
 * What is sent upstream per call is decided here too, so the chat loop and the Responses route
 * follow one rule.
 *
 * @example
 *   const tools = clientToolsFrom({ tools: body.tools, choice: body.tool_choice ?? 'auto' })
 *   upstreamToolChoice(tools, { final: false }) // 'auto' | 'none' | 'required' | { type: 'function', function: { name } }
 */
import { z } from 'zod';
import { echoed, InvalidRequest } from '../errors.js';
import type { FunctionTool } from './chat-types.js';

/** OpenAI's rule for function names: letters, digits, underscores and dashes, at most 64. */
export const functionName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, underscores or dashes');

export const clientFunctionSchema = z.object({
  type: z.literal('function'),
  function: z.object({
    name: functionName,
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullish(),
  }),
});

export const clientToolChoiceSchema = z.union([
  z.enum(['auto', 'none', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: functionName }) }),
]);

export type ClientToolChoice = z.infer<typeof clientToolChoiceSchema>;

export interface ClientTools {
  /** As the client sent them, offered to the model unchanged. */
  functions: FunctionTool[];
  names: ReadonlySet<string>;
  choice: ClientToolChoice;
  /** `parallel_tool_calls` when the client set it. */
  parallel?: boolean;
}

/** Check the client's tools against its tool_choice; every refusal is a 400 naming the field. */
export function clientToolsFrom(input: {
  tools: Array<z.infer<typeof clientFunctionSchema>>;
  choice: ClientToolChoice;
  parallel?: boolean;
}): ClientTools {
  const names = new Set<string>();
  input.tools.forEach((tool, i) => {
    if (names.has(tool.function.name)) {
      throw new InvalidRequest(`tools[${i}]: the function name "${echoed(tool.function.name)}" appears twice.`, `tools.${i}.function.name`);
    }
    names.add(tool.function.name);
  });
  const { choice } = input;
  if (choice === 'required' && names.size === 0) {
    throw new InvalidRequest(
      'tool_choice "required" needs functions of your own in "tools": the gateway decides when to run its tools.',
      'tool_choice',
      'unsupported_parameter',
    );
  }
  if (typeof choice === 'object' && !names.has(choice.function.name)) {
    throw new InvalidRequest(`tool_choice names the function "${echoed(choice.function.name)}", which is not in "tools".`, 'tool_choice');
  }
  return { functions: input.tools as FunctionTool[], names, choice, parallel: input.parallel };
}

/** `tool_choice: "none"` turns every tool off, the gateway's too. */
export function toolsEnabled(tools: ClientTools): boolean {
  return tools.choice !== 'none';
}

/** A function of the client's whose name is also a gateway tool → 400 `tool_name_conflict`. */
export function assertNoNameConflict(tools: ClientTools, gatewayTools: FunctionTool[]): void {
  if (tools.names.size === 0) return; // the usual request: no functions of the client's own
  for (const tool of gatewayTools) {
    if (tools.names.has(tool.function.name)) {
      throw new InvalidRequest(
        `The function "${echoed(tool.function.name)}" has the name of one of the gateway's tools: rename it.`,
        'tools',
        'tool_name_conflict',
      );
    }
  }
}

/**
 * The `tool_choice` of one upstream call: `required` or a named function go up on every round
 * until a client function is called (a round that calls one ends the request, so: every round);
 * the gateway's tools stay in the offer meanwhile. A `final` call (the last after the round cap, or
 * a JSON answer's corrective call) is `none`.
 */
export function upstreamToolChoice(tools: ClientTools, call: { final: boolean }): ClientToolChoice {
  return call.final ? 'none' : tools.choice;
}
