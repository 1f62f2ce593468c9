import { ExpectedError } from '../errors/expected-error.js';
import { JobStream, type VerificationJobEvent } from '../upstreams/verification/job-stream.js';
import { builder } from './builder.js';
import type { GatewayContext } from './context.js';
import { settle } from './errors.js';
import { VerifyContractResultRef } from './verification.js';

builder.subscriptionField('verificationJobChanged', (t) =>
  t.field({
    type: VerifyContractResultRef,
    description:
      'A verification job as verificationJob(id) shows it: now, then each time it changes; the stream ends after a completed state. A pending job that runs past `VERIFY_JOB_STALE_MS` changes to `stale: true`. The job is polled once for all who subscribe to it: at once, after `VERIFY_WATCH_INTERVAL_MS`, then less and less often while it does not change (up to `VERIFY_WATCH_MAX_INTERVAL_MS`, `VERIFY_WATCH_STALE_INTERVAL_MS` once stale), within the budget of polls (`VERIFY_WATCH_MAX_POLLS_PER_SECOND`). An id the service does not know, or with the session API, is one `InvalidInputError` on `id`, then the end.',
    args: {
      id: t.arg.id({ required: true, description: 'The `verificationId` of the job.' }),
    },
    subscribe: (_root, { id }, context) => followJob(context, String(id)),
    resolve: (event) =>
      event.kind === 'outcome' ? event.outcome : settle(Promise.reject(event.error)),
  }),
);

/**
 * The job's events for one subscriber, admitted and counted by the subscription registry like
 * every subscription (its limits, its log lines, its end at shutdown).
 */
function followJob(
  context: GatewayContext,
  id: string,
): AsyncIterableIterator<VerificationJobEvent> {
  // Each event is the job as it stands: a subscriber who joins a shared watch late starts with
  // the last one.
  const admission = context.openSubscription({
    field: 'verificationJobChanged',
    pages: [],
    documents: [],
    accept: () => false,
    wholeStateEvents: true,
  });
  let events: JobStream;
  try {
    events = context.verification.watchJob(id, context.clientAddress);
  } catch (error) {
    if (!(error instanceof ExpectedError)) {
      void admission.return();
      throw error;
    }
    // A refused id is the stream's one event, as `verificationJob` answers it.
    events = new JobStream(() => {});
    events.push({ kind: 'error', error, last: true });
  }
  // The registry's stream carries no event: it ends only when the registry ends it (shutdown).
  void admission.next().then(() => events.end());
  return {
    async next() {
      const item = await events.next();
      if (item.done) admission.end('complete');
      return item;
    },
    async return() {
      await events.return?.();
      await admission.return();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
