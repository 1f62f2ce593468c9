import { checksum } from 'ox/Address';

const HEX_ADDRESS = /^(0x)?[0-9a-fA-F]{40}$/;
const MIXED_CASE = /([A-F].*[a-f])|([a-f].*[A-F])/;

/** The EIP-55 form of a `0x` + 40 hex digits address, whatever its case. */
export function toChecksumAddress(address: string): string {
  return checksum(address.toLowerCase() as `0x${string}`);
}

/**
 * The checksummed address, or null when `value` is not one, with the rules of ethers' `getAddress`
 * (which Sourcify uses): 40 hex digits, `0x` optional; all-lower or all-upper case is accepted as
 * is, mixed case must be the right checksum. ICAP addresses are not supported.
 */
export function parseAddress(value: string): string | null {
  if (!HEX_ADDRESS.test(value)) return null;
  const prefixed = value.startsWith('0x') ? value : `0x${value}`;
  const checksummed = toChecksumAddress(prefixed);
  if (MIXED_CASE.test(prefixed) && checksummed !== prefixed) return null;
  return checksummed;
}

/** Like ethers' `isAddress`. */
export function isAddress(value: unknown): value is string {
  return typeof value === 'string' && parseAddress(value) !== null;
}
