/**
 * A tool's JSON Schemas, checked in the host. Arguments before the call, so every server gives a
 * 400 naming the field (the SDK's McpServer answers a schema failure with free text only). Output
 * after the call, against the schema the server itself declared: a mismatch is the server's fault
 * (502), never the caller's, which the SDK client cannot tell apart (it throws InvalidParams).
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
// ajv: the MCP SDK validates output schemas with it too, and answer formats (chat/answer-format.ts) use it.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { invalidToolArguments, toolOutputMismatch } from './tool-errors.js';

interface CompiledTool {
  /** Undefined when the tool has no such schema, or one we cannot compile (the server still checks). */
  input?: ValidateFunction;
  output?: ValidateFunction;
}

/**
 * Compiles each listed tool's schemas once, on its first call.
 *
 * @example
 *   const schemas = new ToolSchemas()
 *   schemas.checkArguments(tool, { text: 42 })  // throws 400 invalid_tool_arguments, param "text"
 */
export class ToolSchemas {
  // Formats are left to the server: the host checks shape and names the field.
  private readonly draft07 = new Ajv({ strict: false, validateFormats: false, logger: false });
  private readonly draft2020 = new Ajv2020({ strict: false, validateFormats: false, logger: false });
  /** Keyed by the listed Tool object: a server's next tools/list brings new objects, the old ones go. */
  private readonly compiled = new WeakMap<Tool, CompiledTool>();

  /** Throws 400 invalid_tool_arguments naming the first field that breaks the input schema. */
  checkArguments(tool: Tool, args: Record<string, unknown>): void {
    const validate = this.forTool(tool).input;
    if (!validate || validate(args)) return;
    const { field, problem } = describeError(validate.errors?.[0]);
    throw invalidToolArguments(field ? `${field}: ${problem}` : problem, field);
  }

  /** Throws 502 tool_error when a successful result breaks the tool's declared output schema. */
  checkResult(publicName: string, tool: Tool, result: CallToolResult): void {
    if (!tool.outputSchema || result.isError) return;
    if (result.structuredContent === undefined) {
      throw toolOutputMismatch(publicName, 'the result has no structuredContent');
    }
    const validate = this.forTool(tool).output;
    if (!validate || validate(result.structuredContent)) return;
    throw toolOutputMismatch(publicName, this.draft07.errorsText(validate.errors));
  }

  private forTool(tool: Tool): CompiledTool {
    let compiled = this.compiled.get(tool);
    if (!compiled) {
      compiled = { input: this.compile(tool.inputSchema), output: tool.outputSchema ? this.compile(tool.outputSchema) : undefined };
      this.compiled.set(tool, compiled);
    }
    return compiled;
  }

  private compile(schema: Record<string, unknown>): ValidateFunction | undefined {
    const ajv = schemaDialect(schema) === 'draft-07' ? this.draft07 : this.draft2020;
    try {
      const validate = ajv.compile(schema);
      // ajv caches by schema object; the WeakMap above is the only cache, so restarts do not pile up.
      ajv.removeSchema(schema);
      return validate;
    } catch {
      return undefined;
    }
  }
}

/**
 * The JSON Schema dialect a schema is read in: draft-07 when its `$schema` says so (zod-to-json-schema
 * and the `openai` client's zod helpers write it), else 2020-12 (MCP's default, and zod 4's).
 *
 * @example
 *   schemaDialect({ $schema: 'http://json-schema.org/draft-07/schema#' }) // 'draft-07'
 */
export function schemaDialect(schema: Record<string, unknown>): 'draft-07' | '2020-12' {
  return typeof schema.$schema === 'string' && schema.$schema.includes('draft-07') ? 'draft-07' : '2020-12';
}

/** An ajv error as the field it names (dotted path, like the kit's `param`) and what is wrong. */
function describeError(error: ErrorObject | undefined): { field: string | null; problem: string } {
  if (!error) return { field: null, problem: 'The arguments do not match the input schema.' };
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  const params = error.params as Record<string, unknown>;
  let problem = error.message ?? 'is invalid';
  if (error.keyword === 'required' && typeof params.missingProperty === 'string') {
    path.push(params.missingProperty);
    problem = 'is required';
  } else if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    path.push(params.additionalProperty);
    problem = 'is not allowed';
  } else if (error.keyword === 'enum' && Array.isArray(params.allowedValues)) {
    problem = `must be one of ${params.allowedValues.map((value) => JSON.stringify(value)).join(', ')}`;
  }
  return { field: path.length > 0 ? path.join('.') : null, problem };
}
