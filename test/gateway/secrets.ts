/** Secret-looking values that must never appear in a log line (redaction tests share them). */
export const API_KEY = 'sy_' + 'Q2hhbmdlTWVQbGVhc2VJdHNBVGVzdEtleTAxMjM0NTY';
export const SIGNATURE = '0x' + 'ab'.repeat(65);
export const SIWE_MESSAGE = [
  'gw.example wants you to sign in with your Ethereum account:',
  '0x52908400098527886E0F7030069857D2E4169EE7',
  '',
  'Mint a Switchyard API key.',
  '',
  'URI: https://gw.example',
  'Version: 1',
  'Chain ID: 1',
  'Nonce: abcdef123456',
  'Issued At: 2026-01-01T00:00:00Z',
].join('\n');
