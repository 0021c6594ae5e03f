import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AnswerText } from '../../../gateway/chat/answer-text.js';
import { estimateTokens, TokenTally } from '../../../gateway/chat/token-tally.js';
import type { AssembledRound } from '../../../gateway/chat/stream-assembler.js';

const round = (producedChars: number, usage?: AssembledRound['usage']): AssembledRound => ({
  text: '',
  toolCalls: [],
  usage,
  producedChars,
});

test('TokenTally: reported usage is summed; a call without it adds its prompt estimate and ceil(produced / 4)', () => {
  const tally = new TokenTally(40, [{ role: 'user', content: 'x'.repeat(24) }]);
  assert.equal(tally.promptTokens(), estimateTokens(40 + 16 + 24)); // tools + framing + text
  tally.addCall(round(999, { prompt_tokens: 100, completion_tokens: 7 }), 20);
  assert.equal(tally.estimated, false);
  tally.addCall(round(9), 20);
  assert.deepEqual([tally.usage, tally.estimated], [{ prompt_tokens: 120, completion_tokens: 10 }, true]);
  const call = { id: 'c', type: 'function' as const, function: { name: 'ab', arguments: '{}' } };
  tally.addMessage({ role: 'assistant', content: null, tool_calls: [call] });
  assert.equal(tally.promptTokens(), estimateTokens(80 + 16 + 16 + 2 + 2));
});

test('TokenTally.consumedWith: a cut-off call counts when it produced something or the client cancelled it', () => {
  const tally = new TokenTally(0, []);
  tally.addCall(round(0, { prompt_tokens: 10, completion_tokens: 2 }), 5);
  const table: Array<[AssembledRound | undefined, boolean, { prompt_tokens: number; completion_tokens: number }]> = [
    [undefined, true, { prompt_tokens: 10, completion_tokens: 2 }],
    [round(0), false, { prompt_tokens: 10, completion_tokens: 2 }],
    [round(0), true, { prompt_tokens: 15, completion_tokens: 2 }],
    [round(9), false, { prompt_tokens: 15, completion_tokens: 5 }],
    [round(9, { prompt_tokens: 30, completion_tokens: 4 }), false, { prompt_tokens: 40, completion_tokens: 6 }],
  ];
  for (const [partial, cancelled, expected] of table) assert.deepEqual(tally.consumedWith(partial, 5, cancelled), expected);
  assert.deepEqual(tally.usage, { prompt_tokens: 10, completion_tokens: 2 }, 'the tally itself is unchanged');
});

test('AnswerText: each call drops its leading whitespace; calls that said something are joined by a blank line', () => {
  const sent: string[] = [];
  const answer = new AnswerText((t) => sent.push(t));
  answer.newCall();
  answer.push('\n\n');
  answer.push('  Let me');
  answer.push(' check.');
  answer.newCall();
  answer.push('\n');
  answer.newCall();
  answer.push('It is noon.');
  assert.equal(answer.text, 'Let me check.\n\nIt is noon.');
  assert.deepEqual(sent, ['Let me', ' check.', '\n\nIt is noon.']);
});
