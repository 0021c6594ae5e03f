/**
 * The regular-expression engine answer schemas' `pattern`s compile with (ajv's `code.regExp`
 * option): RE2, whose matching time grows linearly with the input, so no pattern a client writes
 * (`^(a+)+$` and the like, exponential in V8's backtracking engine) can stall the event loop while
 * an answer is validated. RE2 has no lookaround and no backreferences: such a pattern does not
 * compile, and its schema is refused (answer-format.ts). The `re2` package (native, built from
 * source when no prebuilt binary can be fetched) rather than `re2-wasm`, whose 16 MiB heap never
 * frees a compiled pattern: a few thousand distinct patterns abort it.
 *
 * @example
 *   new Ajv({ code: { regExp: linearRegExp } })
 */
import RE2 from 're2';

type RegExpEngine = ((pattern: string, flags: string) => { test(input: string): boolean }) & { code: string };

export const linearRegExp: RegExpEngine = Object.assign((pattern: string, flags: string) => new RE2(pattern, flags), {
  // Read only by ajv's standalone code generation, which the gateway does not use.
  code: 'new (require("re2"))',
});
