/**
 * The answer format a client asks for: chat's `response_format` and the Responses API's
 * `text.format` (`text`, `json_object`, or `json_schema` with a name, a schema and `strict`), as
 * https://platform.openai.com/docs/guides/structured-outputs describes them. A schema is untrusted
 * input, checked before any upstream call: at most 64 KiB of JSON and 32 levels deep, only local
 * `$ref`s (`#…`), its dialect read from `$schema` as tool schemas are (draft-07 or 2020-12),
 * formats not validated, and every `pattern` compiled by a linear-time engine (RE2), so no
 * pattern can make a validation run for long; one RE2 cannot compile (a lookahead, a
 * backreference) is refused. Each failure is a 400 naming the field. Compiled validators are
 * cached by the schema's hash: SDKs send the same schema with every request.
 *
 * @example
 *   const formats = new AnswerFormats()
 *   const format = formats.compile({ type: 'json_schema', name: 'city', schema: { type: 'object' } }, 'response_format')
 *   format.type === 'json_schema' && format.validate({ name: 'Oslo' }) // undefined: valid
 */
import { createHash } from 'node:crypto';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { LRUCache } from 'lru-cache';
import { InvalidRequest } from '../errors.js';
import { schemaDialect } from '../tools/tool-schemas.js';
import { linearRegExp } from './linear-regexp.js';

/** What a request asked for, as both APIs' parsers hand it over. */
export type FormatRequest =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean };

/** The format a chat answers in; a JSON schema's validator compiled. */
export type AnswerFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      name: string;
      description?: string;
      schema: Record<string, unknown>;
      strict: boolean;
      /** Undefined when `value` is valid, else what is wrong with it (the first error, naming its path). */
      validate(value: unknown): string | undefined;
    };

/** `response_format` as an upstream call carries it (the chat-completions form, which vLLM, SGLang, llama.cpp and Ollama take). */
export type UpstreamResponseFormat =
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; description?: string; schema: Record<string, unknown>; strict: boolean } };

/** Largest schema accepted, in bytes of its JSON. */
export const MAX_SCHEMA_BYTES = 64 * 1024;
/** Deepest schema accepted, in levels of JSON objects and arrays (the schema itself is level 1). */
export const MAX_SCHEMA_DEPTH = 32;
/** Compiled schemas kept; a miss costs one compile (a millisecond or a few). */
const CACHE_ENTRIES = 500;
/** Keys that point at another schema: only references into the same document (`#…`) are followed. */
const REFERENCE_KEYS = new Set(['$ref', '$dynamicRef', '$recursiveRef']);

type Compiled = { validate: ValidateFunction } | { refused: string };

const AJV_OPTIONS = {
  strict: false,
  validateFormats: false,
  logger: false as const,
  inlineRefs: false,
  code: { regExp: linearRegExp, optimize: false },
};

export class AnswerFormats {
  // Formats are the model's business: the answer's shape is checked, not whether a string is a date.
  // No code optimisation passes and no inlined $refs: a crafted schema near 64 KiB compiles more than
  // ten times faster than with ajv's defaults (bench/structured-output.ts), for validators a little larger.
  private readonly draft07 = new Ajv(AJV_OPTIONS);
  private readonly draft2020 = new Ajv2020(AJV_OPTIONS);
  /** By the SHA-256 of the schema's JSON; refusals are kept too, so a bad schema sent again costs no compile. */
  private readonly compiled = new LRUCache<string, Compiled>({ max: CACHE_ENTRIES });

  /** Check the requested format; `param` is the field it came in (`response_format`, `text.format`), named by every 400. */
  compile(request: FormatRequest, param: string): AnswerFormat {
    if (request.type !== 'json_schema') return { type: request.type };
    const schemaParam = param === 'response_format' ? 'response_format.json_schema.schema' : `${param}.schema`;
    const schema = request.schema ?? {};
    const json = JSON.stringify(schema);
    const bytes = Buffer.byteLength(json, 'utf8');
    if (bytes > MAX_SCHEMA_BYTES) {
      throw new InvalidRequest(
        `${schemaParam}: the schema is ${bytes} bytes of JSON; at most ${MAX_SCHEMA_BYTES} are accepted.`,
        schemaParam,
      );
    }
    const key = createHash('sha256').update(json).digest('base64');
    let compiled = this.compiled.get(key);
    if (!compiled) {
      compiled = this.compileSchema(schema);
      this.compiled.set(key, compiled);
    }
    if ('refused' in compiled) throw new InvalidRequest(`${schemaParam}: ${compiled.refused}`, schemaParam);
    const validate = compiled.validate;
    return {
      type: 'json_schema',
      name: request.name,
      ...(request.description !== undefined ? { description: request.description } : {}),
      schema,
      strict: request.strict === true,
      validate: (value) => (validate(value) ? undefined : describeError(validate.errors?.[0])),
    };
  }

  private compileSchema(schema: Record<string, unknown>): Compiled {
    const problem = shapeProblem(schema);
    if (problem) return { refused: problem };
    const ajv = schemaDialect(schema) === 'draft-07' ? this.draft07 : this.draft2020;
    try {
      return { validate: ajv.compile(schema) };
    } catch (err) {
      return { refused: `the schema does not compile: ${err instanceof Error ? err.message : String(err)}` };
    } finally {
      // ajv keeps every schema it compiled (and any `$id`): this cache is the only one, so memory stays bounded.
      ajv.removeSchema(schema);
    }
  }
}

/** What a format asks of the upstream call that writes the answer; nothing for plain text. */
export function upstreamResponseFormat(format: AnswerFormat): UpstreamResponseFormat | undefined {
  if (format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  const { name, description, schema, strict } = format;
  return { type: 'json_schema', json_schema: { name, ...(description !== undefined ? { description } : {}), schema, strict } };
}

/** Too deep, or a reference outside the document: what is wrong, else undefined. Walks without recursion. */
function shapeProblem(schema: unknown): string | undefined {
  const stack: Array<{ value: unknown; depth: number }> = [{ value: schema, depth: 1 }];
  while (stack.length) {
    const { value, depth } = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth > MAX_SCHEMA_DEPTH) return `the schema nests deeper than ${MAX_SCHEMA_DEPTH} levels of objects and arrays.`;
    if (Array.isArray(value)) {
      for (const item of value) stack.push({ value: item, depth: depth + 1 });
      continue;
    }
    for (const [key, child] of Object.entries(value)) {
      if (REFERENCE_KEYS.has(key) && typeof child === 'string' && !child.startsWith('#')) {
        return `${key} "${child}" points outside the schema: only references within it (#…) are followed.`;
      }
      stack.push({ value: child, depth: depth + 1 });
    }
  }
  return undefined;
}

/** An ajv error as the path it names and what is wrong there. */
function describeError(error: ErrorObject | undefined): string {
  if (!error) return 'the value does not match the schema';
  const at = error.instancePath === '' ? 'the value' : error.instancePath;
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required' && typeof params.missingProperty === 'string')
    return `${at} lacks the property "${params.missingProperty}"`;
  if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    return `${at} has the property "${params.additionalProperty}", which the schema does not allow`;
  }
  return `${at} ${error.message ?? 'is invalid'}`;
}
