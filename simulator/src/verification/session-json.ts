import { createHash } from 'node:crypto';
import type { VerifiableContract } from './fixture.js';
import { type MatchStorage, storageKey } from './match-storage.js';
import type { SessionContract, VerificationSession } from './sessions.js';
import type {
  SourcifySessionContract,
  SourcifySessionResponse,
  SourcifyVerificationStatus,
} from './types.js';

/** The session id of a contract's compilation (Sourcify hashes the metadata with SHA-1). */
export function verificationIdOf(contract: VerifiableContract): string {
  const compilation = {
    name: contract.name,
    compiledPath: contract.compiledPath,
    compilerVersion: contract.compilerVersion ?? null,
    sources: [...contract.sources].sort(),
    missing: Object.keys(contract.missing ?? {}).sort(),
  };
  return createHash('sha1').update(JSON.stringify(compilation)).digest('hex');
}

/** The files a contract brings into a session, by identity: its sources and its metadata. */
export function filesOf(contract: VerifiableContract, verificationId: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const path of [...contract.sources, 'metadata.json']) {
    files.set(`${verificationId}:${path}`, path);
  }
  return files;
}

/**
 * A contract's entry, in `getSendableContract`'s field order; undefined fields are left out. Shares
 * nested objects with the fixture: serialize it, do not edit it.
 */
function sendable(
  entry: SessionContract,
  outcome: {
    status: SourcifyVerificationStatus;
    statusMessage?: string;
    storageTimestamp?: string;
  },
): SourcifySessionContract {
  const { contract } = entry;
  return {
    verificationId: entry.verificationId,
    ...(contract.constructorArgumentsArray
      ? { constructorArgumentsArray: [...contract.constructorArgumentsArray] }
      : {}),
    compiledPath: contract.compiledPath,
    name: contract.name,
    // No compilerVersion: sourcify-server 3.9.1 does not send it.
    address: entry.address,
    chainId: entry.chainId,
    files: {
      found: [...contract.sources],
      missing: { ...contract.missing },
      invalid: { ...contract.invalid },
    },
    status: outcome.status,
    ...(outcome.statusMessage === undefined ? {} : { statusMessage: outcome.statusMessage }),
    ...(outcome.storageTimestamp === undefined
      ? {}
      : { storageTimestamp: outcome.storageTimestamp }),
  };
}

/**
 * Verifies every contract of the session, as `verifyContractsInSession` does on each request,
 * and answers `getSessionJSON`. A contract already in storage shows the stored match with its
 * timestamp; otherwise it gets its fixture outcome, and a match is stored (with `now`) for later
 * answers, so the answer that first verifies a contract has no `storageTimestamp` and an empty
 * `statusMessage`.
 */
export function verifySession(
  session: VerificationSession,
  storage: MatchStorage,
  now: Date,
): SourcifySessionResponse {
  const contracts = [...session.contracts.values()].map((entry) => {
    const key = storageKey(entry.chainId, entry.address);
    const stored = storage.get(key);
    if (stored) {
      return sendable(entry, { status: stored.status, storageTimestamp: stored.storageTimestamp });
    }
    const { status, statusMessage } = entry.contract;
    const matched = status === 'perfect' || status === 'partial';
    if (matched) storage.store(key, status, now.toISOString());
    // A match verified by this answer says so with an empty message, as the real server does.
    const message = statusMessage ?? (matched ? '' : undefined);
    return sendable(entry, message === undefined ? { status } : { status, statusMessage: message });
  });
  return { contracts, unused: [], files: [...session.inputFiles.values()] };
}
