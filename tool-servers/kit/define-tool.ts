import type { z } from 'zod';

/** What a running tool gets besides its arguments. */
export interface ToolContext {
  /** Aborted when the caller cancels (MCP `notifications/cancelled`) or the server shuts down. */
  signal: AbortSignal;
}

/**
 * One tool: its public name, a description the model reads, zod schemas for input and output,
 * and the function that does the work. Throw ToolError for failures the caller should see.
 */
export interface ToolDefinition<I extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  input: I;
  output: O;
  run(args: z.output<I>, context: ToolContext): Promise<z.input<O>>;
}

/** Identity helper that keeps the input and output types tied to the schemas. */
export function defineTool<I extends z.ZodObject, O extends z.ZodType>(tool: ToolDefinition<I, O>): ToolDefinition<I, O> {
  return tool;
}

/** A list of tools of different schemas. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyToolDefinition = ToolDefinition<any, any>;
