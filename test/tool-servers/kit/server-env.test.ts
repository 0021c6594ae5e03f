import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { envFlag, envInt, envNameList, envUrl, parseServerEnv } from '../../../tool-servers/kit/index.js';

const schema = z.object({
  BASE_URL: envUrl().default('https://api.example'),
  TIMEOUT_MS: envInt({ min: 1 }).default(4000),
  CACHE_MS: envInt({ min: 0 }).optional(),
  TTL_MS: envInt({ min: 0, max: 30_000 }).default(30_000),
  RANK: envFlag().default(false),
  ORDER: envNameList(['alpha', 'beta', 'gamma']).default(['alpha', 'beta']),
  KEY: z.string().optional(),
  NAMED: z
    .string()
    .refine((value) => value !== 'bad', 'NAMED: says its own name')
    .optional(),
});

test('unset and blank variables take the defaults; only the schema keys are read', () => {
  const settings = parseServerEnv('demo', schema, { TIMEOUT_MS: '', KEY: '   ', RANK: undefined, PATH: '/bin' });
  assert.deepEqual(settings, { BASE_URL: 'https://api.example', TIMEOUT_MS: 4000, TTL_MS: 30_000, RANK: false, ORDER: ['alpha', 'beta'] });
});

test('values are parsed: URLs lose trailing slashes, numbers and flags are typed, lists keep their order', () => {
  const settings = parseServerEnv('demo', schema, {
    BASE_URL: ' http://127.0.0.1:4010/// ',
    TIMEOUT_MS: '250',
    CACHE_MS: '0',
    TTL_MS: '30000',
    RANK: 'true',
    ORDER: ' Gamma , alpha ',
    KEY: 'k',
  });
  assert.deepEqual(settings, {
    BASE_URL: 'http://127.0.0.1:4010',
    TIMEOUT_MS: 250,
    CACHE_MS: 0,
    TTL_MS: 30_000,
    RANK: true,
    ORDER: ['gamma', 'alpha'],
    KEY: 'k',
  });
});

test('a bad value throws naming the server label and the variable', () => {
  const cases: Array<[Record<string, string>, string | RegExp]> = [
    [{ BASE_URL: 'ftp://files.example' }, 'demo: BASE_URL must be an http(s) URL'],
    [{ BASE_URL: 'not a url' }, 'demo: BASE_URL must be an http(s) URL'],
    [{ TIMEOUT_MS: '0' }, 'demo: TIMEOUT_MS must be a positive integer, got "0"'],
    [{ TIMEOUT_MS: '1e3' }, 'demo: TIMEOUT_MS must be a positive integer, got "1e3"'],
    [{ CACHE_MS: '-1' }, 'demo: CACHE_MS must be a non-negative integer, got "-1"'],
    [{ TTL_MS: '30001' }, 'demo: TTL_MS must be a whole number from 0 to 30000, got "30001"'],
    [{ RANK: 'yes' }, 'demo: RANK must be true or false, got "yes"'],
    [{ ORDER: 'alpha,delta' }, /^demo: invalid ORDER\.1: Invalid option: expected one of "alpha"\|"beta"\|"gamma"$/],
    [{ ORDER: ' , ' }, /^demo: invalid ORDER: Too small/],
    [{ NAMED: 'bad' }, 'demo: NAMED: says its own name'],
  ];
  for (const [env, message] of cases) {
    assert.throws(() => parseServerEnv('demo', schema, env), { message }, JSON.stringify(env));
  }
});
