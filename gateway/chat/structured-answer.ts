/**
 * The final answer under a JSON answer format (answer-format.ts): the model's text is the answer
 * when it parses (a JSON object for `json_object`) and validates; the first time it does not, one
 * corrective call follows; after that, an answer still invalid goes back as it is, unless the
 * schema is `strict`: then the chat fails (502 `upstream_invalid_output`). Pure, so the rule is
 * tested with a table.
 *
 * @example
 *   answerStep(format, '```json\n{"city":"Oslo"}\n```', { corrected: false }) // { step: 'answer', text: '{"city":"Oslo"}' }
 *   answerStep(format, 'Oslo', { corrected: false }) // { step: 'correct', problem: 'the answer is not JSON: …' }
 */
import type { AnswerFormat } from './answer-format.js';

export type AnswerCheck = { valid: true; text: string } | { valid: false; problem: string };

export type AnswerStep =
  /** The answer, as its JSON text (a Markdown code fence around it removed). */
  | { step: 'answer'; text: string }
  /** Invalid the first time: one more call, with `tool_choice: "none"` and the format. */
  | { step: 'correct'; problem: string }
  /** Still invalid after the correction, and not strict: it goes back as it is (and a log line says so). */
  | { step: 'as_is'; problem: string }
  /** Still invalid after the correction, and strict: the chat fails. */
  | { step: 'fail'; problem: string };

/** Whether `text` is an answer in `format`; a plain-text format takes any text. */
export function checkAnswer(format: AnswerFormat, text: string): AnswerCheck {
  if (format.type === 'text') return { valid: true, text };
  const json = withoutCodeFence(text);
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    return { valid: false, problem: `the answer is not JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (format.type === 'json_object') {
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      return { valid: false, problem: 'the answer is not a JSON object' };
    return { valid: true, text: json };
  }
  const problem = format.validate(value);
  return problem === undefined
    ? { valid: true, text: json }
    : { valid: false, problem: `the answer does not match the schema: ${problem}` };
}

/** What follows an answer of the model (`corrected`: it came from the corrective call). */
export function answerStep(format: AnswerFormat, text: string, options: { corrected: boolean }): AnswerStep {
  const check = checkAnswer(format, text);
  if (check.valid) return { step: 'answer', text: check.text };
  if (!options.corrected) return { step: 'correct', problem: check.problem };
  return format.type === 'json_schema' && format.strict
    ? { step: 'fail', problem: check.problem }
    : { step: 'as_is', problem: check.problem };
}

/** Schemas up to this many characters of JSON are quoted in the corrective turn; a larger one is only named (the call carries it anyway). */
const QUOTED_SCHEMA_CHARS = 8 * 1024;

/** The user turn of the corrective call: what was wrong, and what to write instead. */
export function correctionPrompt(format: AnswerFormat, problem: string): string {
  let shape = 'a JSON object';
  if (format.type === 'json_schema') {
    const schema = JSON.stringify(format.schema);
    shape = `JSON that matches the schema "${format.name}"${schema.length <= QUOTED_SCHEMA_CHARS ? `: ${schema}` : ''}`;
  }
  return `Your answer cannot be used: ${problem}. Reply again with only ${shape}, and nothing else.`;
}

/** The text inside a Markdown code fence that wraps the whole of it (```json … ```), else the text trimmed. */
function withoutCodeFence(text: string): string {
  const trimmed = text.trim();
  const fenced = /^```[\w-]*\n([\s\S]*?)\n?```$/.exec(trimmed);
  return fenced ? fenced[1].trim() : trimmed;
}
