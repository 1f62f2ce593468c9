import { ExpectedError } from '../errors/expected-error.js';
import { jobStateOf } from '../subscriptions/hub.js';
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
    resolve: (item) => {
      const event = jobStateOf(item) as VerificationJobEvent;
      return event.kind === 'outcome' ? event.outcome : settle(Promise.reject(event.error));
    },
  }),
);

/**
 * The job's states, a subscription of the hub like every other (its admission, its log lines,
 * its end at shutdown): each state is the whole job, so a subscriber who joins late starts with
 * the last.
 */
function followJob(context: GatewayContext, id: string) {
  let events: JobStream;
  try {
    events = context.verification.watchJob(id, context.clientAddress);
  } catch (error) {
    if (!(error instanceof ExpectedError)) throw error;
    // A refused id is the stream's one event, as `verificationJob` answers it.
    events = new JobStream(() => {});
    events.push({ kind: 'error', error, last: true });
  }
  try {
    return context.openSubscription({
      field: 'verificationJobChanged',
      pages: [],
      documents: [],
      values: events,
    });
  } catch (error) {
    void events.return();
    throw error;
  }
}
