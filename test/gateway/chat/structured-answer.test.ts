/**
 * The final-answer rule under a JSON answer format (chat/structured-answer.ts), as a table: which
 * texts are the answer (and as what JSON text), which get the corrective call, and what happens to
 * one still invalid after it, strict or not.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AnswerFormats, type AnswerFormat } from '../../../gateway/chat/answer-format.js';
import { answerStep, correctionPrompt, type AnswerStep } from '../../../gateway/chat/structured-answer.js';

const formats = new AnswerFormats();
const citySchema = {
  type: 'object',
  properties: { city: { type: 'string' }, population: { type: 'integer' } },
  required: ['city', 'population'],
  additionalProperties: false,
};
const loose = formats.compile({ type: 'json_schema', name: 'city', schema: citySchema }, 'response_format');
const strict = formats.compile({ type: 'json_schema', name: 'city', schema: citySchema, strict: true }, 'response_format');
const object = formats.compile({ type: 'json_object' }, 'response_format');
const text = formats.compile({ type: 'text' }, 'response_format');

/** An expected step; a problem JSON.parse words (differently per V8 version) is matched by its start. */
type Expected = AnswerStep | { step: 'correct' | 'as_is' | 'fail'; problem: RegExp };
const NOT_JSON = /^the answer is not JSON: \S/;

const cases: Array<{ name: string; format: AnswerFormat; text: string; corrected: boolean; step: Expected }> = [
  {
    name: 'valid JSON is the answer',
    format: loose,
    text: '{"city":"Oslo","population":709037}',
    corrected: false,
    step: { step: 'answer', text: '{"city":"Oslo","population":709037}' },
  },
  {
    name: 'a Markdown fence around it is removed, and the whitespace',
    format: strict,
    text: '\n```json\n{"city":"Oslo","population":1}\n```\n',
    corrected: false,
    step: { step: 'answer', text: '{"city":"Oslo","population":1}' },
  },
  {
    name: 'a fence without a language too',
    format: object,
    text: '```\n{"a":1}```',
    corrected: false,
    step: { step: 'answer', text: '{"a":1}' },
  },
  {
    name: 'prose first: one corrective call',
    format: strict,
    text: 'Let me look that up.',
    corrected: false,
    step: { step: 'correct', problem: NOT_JSON },
  },
  {
    name: 'a missing property first: one corrective call naming it',
    format: loose,
    text: '{"city":"Oslo"}',
    corrected: false,
    step: { step: 'correct', problem: 'the answer does not match the schema: the value lacks the property "population"' },
  },
  {
    name: 'a wrong type names its path',
    format: loose,
    text: '{"city":"Oslo","population":"many"}',
    corrected: false,
    step: { step: 'correct', problem: 'the answer does not match the schema: /population must be integer' },
  },
  {
    name: 'an extra property is refused by additionalProperties',
    format: loose,
    text: '{"city":"Oslo","population":1,"mayor":"x"}',
    corrected: false,
    step: {
      step: 'correct',
      problem: 'the answer does not match the schema: the value has the property "mayor", which the schema does not allow',
    },
  },
  {
    name: 'still invalid after the correction, not strict: as it is',
    format: loose,
    text: '{"city":"Oslo"}',
    corrected: true,
    step: { step: 'as_is', problem: 'the answer does not match the schema: the value lacks the property "population"' },
  },
  {
    name: 'still invalid after the correction, strict: the chat fails',
    format: strict,
    text: 'Oslo',
    corrected: true,
    step: { step: 'fail', problem: NOT_JSON },
  },
  {
    name: 'valid after the correction is the answer',
    format: strict,
    text: '{"city":"Oslo","population":2}',
    corrected: true,
    step: { step: 'answer', text: '{"city":"Oslo","population":2}' },
  },
  {
    name: 'json_object takes any JSON object',
    format: object,
    text: '{"anything":[1,2]}',
    corrected: false,
    step: { step: 'answer', text: '{"anything":[1,2]}' },
  },
  {
    name: 'json_object refuses an array',
    format: object,
    text: '[1,2]',
    corrected: false,
    step: { step: 'correct', problem: 'the answer is not a JSON object' },
  },
  {
    name: 'json_object still invalid goes back as it is (it has no strict)',
    format: object,
    text: 'no',
    corrected: true,
    step: { step: 'as_is', problem: NOT_JSON },
  },
  { name: 'plain text takes any text', format: text, text: ' Hi. ', corrected: false, step: { step: 'answer', text: ' Hi. ' } },
];

for (const c of cases) {
  test(`answerStep: ${c.name}`, () => {
    const step = answerStep(c.format, c.text, { corrected: c.corrected });
    const expected = c.step;
    if ('problem' in expected && expected.problem instanceof RegExp) {
      assert.equal(step.step, expected.step);
      assert.match((step as { problem: string }).problem, expected.problem);
      return;
    }
    assert.deepEqual(step, expected);
  });
}

test('the corrective turn says what was wrong and quotes a small schema', () => {
  const prompt = correctionPrompt(strict, 'the value lacks the property "population"');
  assert.equal(
    prompt,
    `Your answer cannot be used: the value lacks the property "population". Reply again with only JSON that matches the schema "city": ${JSON.stringify(citySchema)}, and nothing else.`,
  );
  assert.equal(
    correctionPrompt(object, 'the answer is not a JSON object'),
    'Your answer cannot be used: the answer is not a JSON object. Reply again with only a JSON object, and nothing else.',
  );
  const big = formats.compile(
    { type: 'json_schema', name: 'big', schema: { type: 'object', description: 'x'.repeat(9_000) } },
    'response_format',
  );
  assert.equal(
    correctionPrompt(big, 'p'),
    'Your answer cannot be used: p. Reply again with only JSON that matches the schema "big", and nothing else.',
  );
});
