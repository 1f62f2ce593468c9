import { randomBytes } from 'node:crypto';
import { toChecksumAddress } from '../../simulator/src/verification/address.js';
import type { VerifiableContract } from '../../simulator/src/verification/fixture.js';

/*
 * Contracts of a test's own, for tests that share one gateway: the gateway keeps contract lookups
 * by chain and address (VERIFY_LOOKUP_TTL_MS), so a test that counts the lookups it causes, or
 * needs them unanswered yet, asks about addresses no other test has asked about.
 */

/** An address nobody else uses, EIP-55 checksummed (mixed case: its lowercase spelling differs). */
export function freshAddress(): string {
  for (;;) {
    const address = toChecksumAddress(`0x${randomBytes(20).toString('hex')}`);
    if (address !== address.toLowerCase()) return address;
  }
}

/**
 * `contract` deployed again at an address of its own: the same compilation, known to the
 * simulator's explorer once `verification.addContract` is given it, and already stored by the
 * service (verified) when `contract` is.
 */
export function copyAt(
  contract: VerifiableContract,
  address: string = freshAddress(),
): VerifiableContract {
  return { ...contract, address };
}
