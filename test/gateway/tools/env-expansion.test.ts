import { test } from 'node:test';
import assert from 'node:assert/strict';
import { childEnv, expandArgs, expandRecord, expandValue } from '../../../gateway/tools/env-expansion.js';

test('expandValue fills ${VAR} and ${VAR:-default}; unset or empty without default is missing', () => {
  const env = { SET: 'value', EMPTY: '', OTHER: 'x' };
  const cases: Array<[string, string | undefined]> = [
    ['plain', 'plain'],
    ['${SET}', 'value'],
    ['pre-${SET}-post', 'pre-value-post'],
    ['${SET}${OTHER}', 'valuex'],
    ['${UNSET:-fallback}', 'fallback'],
    ['${EMPTY:-fallback}', 'fallback'],
    ['${SET:-fallback}', 'value'],
    ['${UNSET:-}', ''],
    ['${UNSET:-http://127.0.0.1:8545}', 'http://127.0.0.1:8545'],
    ['${UNSET}', undefined],
    ['${EMPTY}', undefined],
    ['a ${SET} b ${UNSET}', undefined],
    ['$SET', '$SET'],
    ['${not valid}', '${not valid}'],
  ];
  for (const [template, expected] of cases) assert.equal(expandValue(template, env), expected, template);
});

test('expandRecord and expandArgs drop the entries that came out missing', () => {
  assert.deepEqual(expandRecord({ A: '${SET}', B: '${UNSET}', C: 'c', D: '${UNSET:-d}' }, { SET: 's' }), { A: 's', C: 'c', D: 'd' });
  assert.deepEqual(expandArgs(['main.js', '--rpc', '${RPC}', '${MODE:-fast}'], {}), ['main.js', '--rpc', 'fast']);
});

test('childEnv is the configured env plus PATH, HOME and NODE_V8_COVERAGE only', () => {
  const gateway = { PATH: '/bin', HOME: '/home/gw', NODE_V8_COVERAGE: '/tmp/cov', USER: 'gw', SECRET: 's', KEY: 'k', EMPTY: '' };
  assert.deepEqual(childEnv({ API_KEY: '${KEY}', MISSING: '${NOPE}' }, gateway), {
    PATH: '/bin',
    HOME: '/home/gw',
    NODE_V8_COVERAGE: '/tmp/cov',
    API_KEY: 'k',
  });
  assert.deepEqual(childEnv({}, { PATH: '/bin', HOME: '' }), { PATH: '/bin' });
  // A configured value wins over an inherited one.
  assert.deepEqual(childEnv({ HOME: '/srv/tool' }, gateway).HOME, '/srv/tool');
});

test('childEnv with envPassthrough forwards the non-empty gateway variables whose names start with a prefix', () => {
  const gateway = {
    PATH: '/bin',
    RPC_URL_ETHEREUM: 'https://eth.example/key',
    RPC_URL_ZKSYNC: 'https://zk.example',
    RPC_URL_EMPTY: '',
    TOKENS_BASE: 'USDC=0x1',
    MY_RPC_URL_X: 'inside, not at the start',
    RPC_URLS: 'no underscore after URL',
    UPSTREAM_API_KEY: 'secret',
  };
  assert.deepEqual(childEnv({}, gateway, ['RPC_URL_', 'TOKENS_']), {
    PATH: '/bin',
    RPC_URL_ETHEREUM: 'https://eth.example/key',
    RPC_URL_ZKSYNC: 'https://zk.example',
    TOKENS_BASE: 'USDC=0x1',
  });
  // The explicit env wins over a forwarded variable of the same name, and no prefix forwards nothing.
  assert.equal(childEnv({ RPC_URL_ETHEREUM: 'http://127.0.0.1:8545' }, gateway, ['RPC_URL_']).RPC_URL_ETHEREUM, 'http://127.0.0.1:8545');
  assert.deepEqual(childEnv({}, gateway, []), { PATH: '/bin' });
});
