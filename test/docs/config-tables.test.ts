/**
 * docs/configuration.md's tables are what the schemas say: `npm run docs:config` writes them from
 * gateway/config.ts and the tool servers' environment schemas, and this test fails when the
 * committed page differs, when a setting has no description, or when a part of the config file
 * or an environment override is in no table.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ENV_OVERRIDES } from '../../gateway/config.js';
import { CONFIG_PAGE, configTables, settingRows, untabledConfigKeys, withConfigTables } from '../../scripts/docs-config.js';

test('docs/configuration.md holds the tables the schemas give (npm run docs:config writes them)', () => {
  const page = readFileSync(CONFIG_PAGE, 'utf8');
  assert.equal(withConfigTables(page), page, `${CONFIG_PAGE} differs from the schemas: run npm run docs:config`);
});

test('every part of the config file is in a table, and every environment override in its row', () => {
  assert.deepEqual(untabledConfigKeys(), []);
  const tables = [...configTables().values()].join('\n');
  for (const { name, path } of ENV_OVERRIDES) {
    const row = tables.split('\n').find((line) => line.split(' | ')[1]?.includes('`' + name + '`'));
    assert.ok(row, `${name} is in no table`);
    const setting = row.split(' | ')[0].replace(/^\| `|`$/g, '');
    assert.ok(path.join('.').startsWith(setting), `${name} sets ${path.join('.')}, but is on the row of ${setting}`);
  }
});

test('a row says what the schema says, and a setting without a description stops the tables', () => {
  const schema = z.object({
    port: z.number().default(8080).describe('Port to listen on'),
    limit: z.object({ points: z.number(), durationSec: z.number() }).prefault({ points: 5, durationSec: 60 }).describe('A budget'),
    origins: z.array(z.string()).default([]).describe('Origins'),
    url: z.url().optional().meta({ description: 'Where', docDefault: '`http://HOST:PORT`', docEnv: '`<ALIAS>_URL`' }),
    name: z.string().describe('Required'),
  });
  assert.deepEqual(settingRows(schema, 'demo'), [
    { setting: '`demo.port`', env: '', default: '`8080`', meaning: 'Port to listen on' },
    { setting: '`demo.limit`', env: '', default: '`{"points": 5, "durationSec": 60}`', meaning: 'A budget' },
    { setting: '`demo.origins`', env: '', default: 'none', meaning: 'Origins' },
    { setting: '`demo.url`', env: '`<ALIAS>_URL`', default: '`http://HOST:PORT`', meaning: 'Where' },
    { setting: '`demo.name`', env: '', default: 'required', meaning: 'Required' },
  ]);
  assert.equal(
    settingRows(z.object({ port: z.number().describe('Port') }), 'server')[0].env,
    '`PORT`',
    'the variable comes from ENV_OVERRIDES',
  );
  assert.throws(() => settingRows(z.object({ quiet: z.boolean().default(false) }), 'demo'), /demo\.quiet has no description/);
});
