import { MAX_DELAY_MS } from '../fault.js';
import { parseAddress } from './address.js';
import {
  V2_JOB_ERROR_CODES,
  V2_REJECTION_STATUS,
  type V2JobErrorCode,
  type V2RejectCode,
} from './v2-errors.js';

/**
 * A scripted result for APIv2 verifications, in place of what the fake explorer and compiler
 * would give:
 * - `reject`: `POST /v2/verify/etherscan/...` answers this error at once (after the request's
 *   own format checks), as Sourcify's checks and its Etherscan fetch do;
 * - `jobError`: the request is accepted (202) and its job fails with this error. Applies only to
 *   a request that would otherwise have started a job.
 * - `stuck`: the request is accepted and its job never completes, whatever the job delay (a job
 *   Sourcify lost, argotorg/sourcify#2880), until `abandonStuckJobs` fails it as the reaper does.
 * `message` replaces Sourcify's default wording.
 */
export type V2Outcome =
  | { readonly reject: V2RejectCode; readonly message?: string }
  | { readonly jobError: V2JobErrorCode; readonly message?: string }
  | { readonly stuck: true };

/** One contract (decimal chain id, any-case address), or `'*'` for every contract. */
export type V2OutcomeTarget = '*' | { readonly chainId: string; readonly address: string };

export interface ActiveV2Outcome {
  target: V2OutcomeTarget;
  outcome: V2Outcome;
  /** Requests left to affect; null until cleared. */
  remaining: number | null;
}

/** Job delays above this are refused (as fault delays are). */
export const MAX_JOB_DELAY_MS = MAX_DELAY_MS;
const CHAIN_ID = /^\d{1,20}$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Milliseconds from 0 to `MAX_JOB_DELAY_MS`, or null (jobs never complete). */
export function parseJobDelay(value: unknown): number | null {
  if (value === null) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_DELAY_MS) {
    throw new TypeError(`jobDelayMs must be null or a number from 0 to ${MAX_DELAY_MS}`);
  }
  return value;
}

export function parseOutcomeTarget(value: unknown): V2OutcomeTarget {
  if (value === '*') return value;
  if (!isRecord(value) || typeof value.chainId !== 'string' || !CHAIN_ID.test(value.chainId)) {
    throw new TypeError('target must be "*" or { chainId: decimal string, address }');
  }
  const address = typeof value.address === 'string' ? parseAddress(value.address) : null;
  if (address === null) {
    throw new TypeError('target.address must be 0x + 40 hex digits (checksummed if mixed case)');
  }
  return { chainId: value.chainId, address };
}

export function parseOutcome(value: unknown): V2Outcome {
  const rejectCodes = Object.keys(V2_REJECTION_STATUS) as V2RejectCode[];
  const kinds = isRecord(value)
    ? ['reject', 'jobError', 'stuck'].filter((kind) => value[kind] !== undefined)
    : [];
  if (!isRecord(value) || kinds.length !== 1) {
    throw new TypeError('outcome must be an object with one of "reject", "jobError" or "stuck"');
  }
  const unknown = Object.keys(value).filter(
    (key) => !['reject', 'jobError', 'stuck', 'message'].includes(key),
  );
  if (unknown.length > 0) throw new TypeError(`outcome: unknown field(s) ${unknown.join(', ')}`);
  if (value.stuck !== undefined) {
    if (value.stuck !== true || value.message !== undefined) {
      throw new TypeError('outcome.stuck must be true, without a message');
    }
    return { stuck: true };
  }
  const { message } = value;
  if (message !== undefined && typeof message !== 'string') {
    throw new TypeError('outcome.message must be a string');
  }
  const extra = message === undefined ? {} : { message };
  if (value.reject !== undefined) {
    const reject = rejectCodes.find((code) => code === value.reject);
    if (!reject) throw new TypeError(`outcome.reject must be one of ${rejectCodes.join(', ')}`);
    return { reject, ...extra };
  }
  const jobError = V2_JOB_ERROR_CODES.find((code) => code === value.jobError);
  if (!jobError) {
    throw new TypeError(`outcome.jobError must be one of ${V2_JOB_ERROR_CODES.join(', ')}`);
  }
  return { jobError, ...extra };
}

function keyOf(target: V2OutcomeTarget): string {
  return target === '*' ? '*' : `${target.chainId} ${target.address.toLowerCase()}`;
}

/** Scripted outcomes by contract; an exact contract wins over `'*'`. Inputs must be parsed. */
export class V2OutcomeTable {
  readonly #entries = new Map<string, ActiveV2Outcome>();

  set(target: V2OutcomeTarget, outcome: V2Outcome | null, times: number | null): void {
    const key = keyOf(target);
    if (outcome === null) this.#entries.delete(key);
    else this.#entries.set(key, { target, outcome, remaining: times });
  }

  /**
   * The outcome that decides for this contract, taken (counted against `times`) only when it is
   * of the kind asked for: a `jobError` entry is left for the job it scripts, and vice versa.
   */
  take<K extends 'reject' | 'jobError' | 'stuck'>(
    chainId: string,
    address: string,
    kind: K,
  ): Extract<V2Outcome, Record<K, unknown>> | null {
    for (const key of [keyOf({ chainId, address }), '*']) {
      const entry = this.#entries.get(key);
      if (!entry) continue;
      if (!(kind in entry.outcome)) return null;
      if (entry.remaining !== null) {
        entry.remaining -= 1;
        if (entry.remaining <= 0) this.#entries.delete(key);
      }
      return entry.outcome as Extract<V2Outcome, Record<K, unknown>>;
    }
    return null;
  }

  clear(): void {
    this.#entries.clear();
  }

  list(): ActiveV2Outcome[] {
    return [...this.#entries.values()].map((entry) => ({ ...entry }));
  }
}
