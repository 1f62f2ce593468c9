import type { SourcifyVerificationStatus } from './types.js';

/** A match Sourcify has stored: later answers, in any session and through APIv2, show it. */
export interface StoredMatch {
  readonly status: SourcifyVerificationStatus;
  /** ISO 8601 with milliseconds. */
  readonly storageTimestamp: string;
  /** Sourcify's id of the match (APIv2's `matchId`): a decimal string, new for each match stored. */
  readonly matchId: string;
}

export function storageKey(chainId: string, address: string): string {
  return `${chainId}:${address.toLowerCase()}`;
}

/** Sourcify's storage of matches, keyed by `storageKey`, shared by the session API and APIv2. */
export class MatchStorage {
  readonly #matches = new Map<string, StoredMatch>();
  #lastMatchId = 0;

  get(key: string): StoredMatch | undefined {
    return this.#matches.get(key);
  }

  /** Stores a match, replacing any at `key`; it gets a new `matchId`, as a new row would. */
  store(key: string, status: SourcifyVerificationStatus, storageTimestamp: string): StoredMatch {
    this.#lastMatchId += 1;
    const match: StoredMatch = { status, storageTimestamp, matchId: String(this.#lastMatchId) };
    this.#matches.set(key, match);
    return match;
  }

  delete(key: string): void {
    this.#matches.delete(key);
  }

  /** Every stored match with its key, in the order stored. */
  entries(): IterableIterator<[string, StoredMatch]> {
    return this.#matches.entries();
  }
}
