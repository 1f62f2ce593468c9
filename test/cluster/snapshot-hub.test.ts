/**
 * The primary's store of the workers' snapshots, as a unit: one worker fetches a document at a
 * time, the others are answered when its fetch ends, and what it keeps stays within its bound.
 */
import { describe, expect, it } from 'vitest';
import { decode, encode, MAX_HEAD_CHARS, MAX_MESSAGE_CHARS } from '../../src/cluster/envelope.js';
import type { AcquireAnswer, AcquireAsk } from '../../src/cluster/messages.js';
import { SnapshotHub } from '../../src/cluster/snapshot-hub.js';

const NAME = '/summary.json';

function hubOf(maxChars = 1_000) {
  let now = 1_000_000;
  const notices: string[] = [];
  const hub = new SnapshotHub({
    maxChars,
    notify: (name, version) => notices.push(`${name} ${version}`),
    now: () => now,
  });
  const answers = new Map<string, { answer: AcquireAnswer; body?: string | undefined }>();
  const acquire = (worker: number, token: string, ask: Partial<AcquireAsk> = {}) =>
    hub.acquire(
      worker,
      {
        t: 'ask',
        id: 0,
        op: 'acquire',
        name: NAME,
        token,
        known: '',
        knownAt: 0,
        answerFailures: false,
        lockMs: 1_000,
        waitMs: 2_000,
        ...ask,
      },
      (answer, body) => answers.set(token, { answer, body }),
    );
  const store = (token: string, body: string, name = NAME) =>
    hub.store(
      { t: 'ask', id: 0, op: 'store', name, token, fetchedAt: now, retainMs: 60_000 },
      body,
    );
  return {
    hub,
    notices,
    answers,
    acquire,
    store,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('the snapshot hub', () => {
  it('gives the lock to one worker and answers the others with what it stored', () => {
    const { answers, acquire, store, notices } = hubOf();
    acquire(1, 'a');
    acquire(2, 'b');
    expect(answers.get('a')?.answer).toEqual({ status: 'acquired' });
    expect(answers.has('b')).toBe(false);
    expect(store('a', '{"page":1}')).toBe(true);
    expect(notices).toEqual([`${NAME} a`]);
    expect(answers.get('b')).toMatchObject({
      answer: { status: 'stored', version: 'a' },
      body: '{"page":1}',
    });
  });

  it('answers the failure of the fetch a worker waited for, and the lock of a worker gone', () => {
    const { hub, answers, acquire } = hubOf();
    acquire(1, 'a');
    acquire(2, 'b');
    hub.fail({
      t: 'fail',
      name: NAME,
      token: 'a',
      code: 'UPSTREAM_UNAVAILABLE',
      status: 503,
      at: 1,
      ttlMs: 1_000,
    });
    expect(answers.get('b')?.answer).toMatchObject({ status: 'failed', httpStatus: 503 });
    hub.release({ t: 'release', name: NAME, token: 'a' });
    // A failure is answered to those who waited for it: a new ask takes the lock.
    acquire(2, 'c');
    expect(answers.get('c')?.answer).toEqual({ status: 'acquired' });
    acquire(3, 'd');
    expect(answers.has('d')).toBe(false);
    hub.workerGone(2);
    expect(answers.get('d')?.answer).toEqual({ status: 'acquired' });
  });

  it('keeps the stored documents within its bound, dropping the oldest', () => {
    const { hub, store } = hubOf(100);
    expect(store('a', 'x'.repeat(60), '/one')).toBe(true);
    expect(store('b', 'y'.repeat(60), '/two')).toBe(true);
    expect(hub.storedChars).toBe(60);
    expect(hub.read('/one', '').answer).toEqual({ found: false });
    expect(hub.read('/two', '')).toMatchObject({ answer: { found: true }, body: 'y'.repeat(60) });
    // One larger than the bound is not kept at all.
    expect(store('c', 'z'.repeat(101), '/three')).toBe(false);
    expect(hub.storedChars).toBe(60);
  });
});

describe('a message between the primary and a worker', () => {
  it('is measured before it is parsed, and its head bounded', () => {
    const message = encode({ t: 'change', name: NAME, version: 'v' }, '{"type":"page"}');
    expect(decode(message)).toEqual({
      head: { t: 'change', name: NAME, version: 'v' },
      body: '{"type":"page"}',
    });
    expect(encode({ t: 'x', name: 'n'.repeat(MAX_HEAD_CHARS) })).toBeUndefined();
    expect(encode({ t: 'x' }, 'b'.repeat(MAX_MESSAGE_CHARS))).toBeUndefined();
    for (const refused of [
      { type: 'prom-client:getMetricsReq' },
      'a'.repeat(MAX_MESSAGE_CHARS + 1),
      `${'{'.repeat(MAX_HEAD_CHARS + 1)}\u0000body`,
      'not json',
    ]) {
      expect(decode(refused)).toBeUndefined();
    }
  });
});
