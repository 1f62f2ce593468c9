import { validate as isValidAddress } from 'ox/Address';
import { InvalidInputError } from '../../errors/invalid-input-error.js';
import type { Chain, VerifyContractInput } from './model.js';

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const CHAIN_ID = /^(0|[1-9][0-9]{0,19})$/;
/** Printable ASCII without spaces: what explorer API keys are made of. */
const API_KEY = /^[\x21-\x7e]{1,256}$/;

/**
 * Checks what can be checked without the upstream. Messages never repeat the value: it may be
 * huge, or, for the API key, a secret.
 */
export function checkInput({ address, chainId, apiKey }: VerifyContractInput): void {
  checkContractLocation(chainId, address);
  if (apiKey !== undefined && apiKey !== null && !API_KEY.test(apiKey)) {
    throw new InvalidInputError(
      'apiKey',
      'apiKey must be 1 to 256 printable characters without spaces.',
    );
  }
}

export function checkContractLocation(chainId: string, address: string): void {
  checkAddress(address);
  checkChainId(chainId);
}

/** Checks an address: 0x and 40 hex digits, its EIP-55 checksum when in mixed case. */
export function checkAddress(address: string, field = 'address'): void {
  if (!ADDRESS.test(address)) {
    throw new InvalidInputError(
      field,
      `${field} must be 0x followed by 40 hexadecimal digits, e.g. 0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2.`,
    );
  }
  const hex = address.slice(2);
  if (/[a-f]/.test(hex) && /[A-F]/.test(hex) && !isValidAddress(address, { strict: true })) {
    throw new InvalidInputError(
      field,
      `${field} has mixed case but its EIP-55 checksum does not match: check it for a typo, or send it in all lowercase.`,
    );
  }
}

export function checkChainId(chainId: string): void {
  if (!CHAIN_ID.test(chainId)) {
    throw new InvalidInputError(
      'chainId',
      'chainId must be a decimal chain id, e.g. "1" for Ethereum Mainnet.',
    );
  }
}

/**
 * Checks the chain against the upstream's own list: listed and supported, and, for a verification
 * from `explorer`, able to fetch from it.
 */
export function checkChain(chainId: string, chains: readonly Chain[], explorer?: string): void {
  const chain = chains.find((candidate) => candidate.id === chainId);
  if (!chain?.supported) {
    throw new InvalidInputError(
      'chainId',
      `Chain ${chainId} is not supported by the verification service; see Query.supportedChains.`,
    );
  }
  if (explorer && !chain.explorerVerification) {
    throw new InvalidInputError(
      'chainId',
      `Chain ${chainId} (${chain.name}) does not support verification from ${explorer}.`,
    );
  }
}
