import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CappedLineSplitter, TRUNCATED_MARK } from '../../../gateway/tools/capped-lines.js';

test('CappedLineSplitter: lines across chunks, long lines cut once, the rest of a cut line dropped, blank lines skipped', () => {
  const lines: string[] = [];
  const splitter = new CappedLineSplitter(5, (line) => lines.push(line));
  splitter.push('ab');
  splitter.push('c\n\n  \nde');
  splitter.push('fghij');
  splitter.push('klmnop');
  splitter.push('qr\nok\n123456789\nlast');
  assert.deepEqual(lines, ['abc', `defgh${TRUNCATED_MARK}`, 'ok', `12345${TRUNCATED_MARK}`]);
  splitter.push('\n');
  assert.deepEqual(lines.at(-1), 'last');
});
