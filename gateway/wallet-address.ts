import { isAddress } from 'viem';

/**
 * Parse an `x-wallet-address` value: `0x` + 40 hex; mixed case must pass the EIP-55 checksum.
 * All-lower and all-upper hex carry no checksum (EIP-55 says so), so both are accepted as they are.
 * Returns the canonical lower-case form, or undefined when the value is not acceptable.
 *
 * @example
 *   parseWalletAddress('0x52908400098527886E0F7030069857D2E4169EE7') // '0x5290…9ee7'
 */
export function parseWalletAddress(value: string | undefined): string | undefined {
  if (!value || !/^0x[0-9a-fA-F]{40}$/.test(value)) return undefined;
  const hex = value.slice(2);
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return value.toLowerCase();
  return isAddress(value, { strict: true }) ? value.toLowerCase() : undefined;
}
