import { test } from 'node:test';
import assert from 'node:assert/strict';
import { htmlToPlainText } from '../../../tool-servers/web/plain-text.js';

test('htmlToPlainText drops tags and decodes named and numeric entities', () => {
  assert.equal(htmlToPlainText('<strong>Koa</strong> &amp; friends &#8212; &#x2603; &#39;x&#39;'), "Koa & friends — ☃ 'x'");
});

test('a numeric entity outside Unicode or a lone surrogate stays as written instead of throwing', () => {
  assert.equal(htmlToPlainText('big &#99999999; and &#x110000; and &#xD800; ok &#65;'), 'big &#99999999; and &#x110000; and &#xD800; ok A');
});
