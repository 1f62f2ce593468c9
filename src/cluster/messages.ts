import { z } from 'zod';

/*
 * The heads of the messages between the primary and its workers (`envelope.ts` carries them), each
 * checked with these schemas on arrival. `ask`s are answered (`answer`, same id); the rest are
 * told. Documents are named as in Redis (`<slug><path>`); a version is the token of the fetch that
 * stored it; times are epoch ms.
 */

const Id = z.number().int().nonnegative();
const Name = z.string().min(1).max(256);
const Token = z.string().min(1).max(64);
const EpochMs = z.number().int().nonnegative();
const Ms = z
  .number()
  .int()
  .positive()
  .max(24 * 60 * 60 * 1000);
const Validator = z.string().max(256);

export const FAILURE_CODES = ['UPSTREAM_UNAVAILABLE', 'UPSTREAM_BAD_RESPONSE'] as const;

/** A document's stored snapshot: its body follows in the message when the asker lacks it. */
const StoredStamp = {
  version: Token,
  fetchedAt: EpochMs,
  etag: Validator.optional(),
  lastModified: Validator.optional(),
};

export const ReadAsk = z.object({
  t: z.literal('ask'),
  id: Id,
  op: z.literal('read'),
  name: Name,
  /** The version the worker holds: its body is not sent again. */
  known: z.string().max(64),
});

export const AcquireAsk = z.object({
  t: z.literal('ask'),
  id: Id,
  op: z.literal('acquire'),
  name: Name,
  /** The worker's lock token, should it get the lock. */
  token: Token,
  known: z.string().max(64),
  /** The fetch time of `known`: a stored snapshot of it confirmed later is newer too. */
  knownAt: EpochMs,
  /** Whether a recorded failure is answered whoever's fetch it was (a failure TTL is on). */
  answerFailures: z.boolean(),
  lockMs: Ms,
  /** How long it waits for another worker's fetch before it fetches alone. */
  waitMs: Ms,
});
export type AcquireAsk = z.infer<typeof AcquireAsk>;

export const StoreAsk = z.object({
  t: z.literal('ask'),
  id: Id,
  op: z.literal('store'),
  name: Name,
  token: Token,
  fetchedAt: EpochMs,
  retainMs: Ms,
  etag: Validator.optional(),
  lastModified: Validator.optional(),
});
export type StoreAsk = z.infer<typeof StoreAsk>;

export const ConfirmAsk = z.object({
  t: z.literal('ask'),
  id: Id,
  op: z.literal('confirm'),
  name: Name,
  version: Token,
  fetchedAt: EpochMs,
  retainMs: Ms,
});
export type ConfirmAsk = z.infer<typeof ConfirmAsk>;

export const MetricsAsk = z.object({ t: z.literal('ask'), id: Id, op: z.literal('metrics') });

export const Ask = z.discriminatedUnion('op', [
  ReadAsk,
  AcquireAsk,
  StoreAsk,
  ConfirmAsk,
  MetricsAsk,
]);
export type Ask = z.infer<typeof Ask>;

export const FailTell = z.object({
  t: z.literal('fail'),
  name: Name,
  token: Token,
  code: z.enum(FAILURE_CODES),
  status: z.number().int().min(100).max(599).optional(),
  at: EpochMs,
  ttlMs: Ms,
});
export type FailTell = z.infer<typeof FailTell>;

export const RenewTell = z.object({ t: z.literal('renew'), name: Name, token: Token, lockMs: Ms });
export type RenewTell = z.infer<typeof RenewTell>;

export const ReleaseTell = z.object({ t: z.literal('release'), name: Name, token: Token });
export type ReleaseTell = z.infer<typeof ReleaseTell>;

/** A change event (the body, JSON), found in the snapshot `version` of document `name`. */
export const ChangeTell = z.object({ t: z.literal('change'), name: Name, version: Token });

/** A worker's metrics (the body: its registry's JSON), for the collection `id`. */
export const CollectedTell = z.object({ t: z.literal('collected'), id: Id });

/** What a worker sends the primary. */
export const FromWorker = z.discriminatedUnion('t', [
  z.object({ t: z.literal('ask') }).loose(),
  FailTell,
  RenewTell,
  ReleaseTell,
  ChangeTell,
  CollectedTell,
]);

/** The answers, by the ask they answer. */
export const ReadAnswer = z.union([
  z.object({ found: z.literal(false) }),
  z.object({ found: z.literal(true), ...StoredStamp }),
]);
export type ReadAnswer = z.infer<typeof ReadAnswer>;

export const AcquireAnswer = z.discriminatedUnion('status', [
  z.object({ status: z.literal('acquired') }),
  z.object({ status: z.literal('stored'), ...StoredStamp }),
  z.object({
    status: z.literal('failed'),
    code: z.enum(FAILURE_CODES),
    httpStatus: z.number().int().min(100).max(599).optional(),
    at: EpochMs,
  }),
  z.object({ status: z.literal('timeout') }),
]);
export type AcquireAnswer = z.infer<typeof AcquireAnswer>;

export const StoreAnswer = z.object({ stored: z.boolean() });
export const ConfirmAnswer = z.object({ confirmed: z.boolean() });
export const MetricsAnswer = z.object({ ok: z.boolean() });

export const Answer = z.object({ t: z.literal('answer'), id: Id }).loose();

/** A document's snapshot `version` was stored (or confirmed) at `fetchedAt`. */
export const Notice = z.object({
  t: z.literal('notice'),
  name: Name,
  version: Token,
  fetchedAt: EpochMs,
});
export type Notice = z.infer<typeof Notice>;

export const Collect = z.object({ t: z.literal('collect'), id: Id });

/** What the primary sends a worker. */
export const FromPrimary = z.discriminatedUnion('t', [Answer, Notice, ChangeTell, Collect]);
