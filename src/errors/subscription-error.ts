import { codedError } from './coded-error.js';

/*
 * The errors a subscription ends or is refused with. They are GraphQL errors with their code, as
 * the operation limits are, so that every transport delivers them as they are: SSE as an event,
 * graphql-ws as an `error` or `next` message.
 */

/** The refusal of each limit on open subscriptions, by the variable that sets it. */
const MESSAGES = {
  MAX_SUBSCRIPTIONS: (max) =>
    `The gateway already serves ${max} subscriptions, as many as it allows. Retry later.`,
  MAX_SSE_SUBSCRIPTIONS: (max) =>
    `The gateway already serves ${max} subscriptions over SSE, as many as it keeps connections for. Retry later, or subscribe over graphql-ws.`,
  MAX_SUBSCRIPTIONS_PER_CONNECTION: (max) =>
    `This connection already runs ${max} operations (subscriptions and queries), as many as one connection may. Close one first.`,
  MAX_SUBSCRIPTIONS_PER_CLIENT: (max) =>
    `This client already holds ${max} subscriptions, over SSE and WebSocket together, as many as one client may. Close one first.`,
  SUBSCRIPTION_HEAP_LIMIT: (share) =>
    `The gateway has no memory for another subscription: more than ${Number((share * 100).toFixed(1))}% of its heap is in use. Retry later.`,
  STATUS_PAGES_MAX_BYTES: (bytes) =>
    `The status pages subscriptions follow already hold ${bytes} bytes, as much as the gateway keeps for all pages: a subscription to a page not followed yet must wait. Retry later, or follow pages others follow.`,
} satisfies Record<string, (max: number) => string>;

/**
 * A limit on open subscriptions is reached; `limit` names the variable that sets it, `max` its
 * value (a share of the heap limit for `SUBSCRIPTION_HEAP_LIMIT`, bytes for
 * `STATUS_PAGES_MAX_BYTES`).
 */
export const tooManySubscriptions = (limit: keyof typeof MESSAGES, max: number) =>
  codedError('TOO_MANY_SUBSCRIPTIONS', MESSAGES[limit](max), { extensions: { limit } });

/**
 * The client fell too far behind: more than `max` events (`SUBSCRIPTION_BACKLOG`) or bytes
 * (`SUBSCRIPTION_MAX_BUFFERED_BYTES`) waiting for it. Its subscription ends with this.
 */
export const slowSubscriber = (
  limit: 'SUBSCRIPTION_BACKLOG' | 'SUBSCRIPTION_MAX_BUFFERED_BYTES',
  max: number,
) =>
  codedError(
    'SLOW_SUBSCRIBER',
    `This subscription fell more than ${max} ${limit === 'SUBSCRIPTION_BACKLOG' ? 'events' : 'bytes'} behind its client and was ended. Subscribe again.`,
    { extensions: { limit } },
  );

/**
 * The gateway no longer knows every change after `since` (ms) on the pages a subscription follows;
 * it would from `knownSince` (infinite: from no time, a page is not held in memory).
 */
export const sinceUnknown = (since: number, knownSince: number) =>
  codedError(
    'SINCE_UNKNOWN',
    `The gateway no longer knows every change since ${new Date(since).toISOString()}: query again for the state as it stands. The subscription goes on with the changes found from now on.`,
    {
      extensions: {
        since: new Date(since).toISOString(),
        knownSince: Number.isFinite(knownSince) ? new Date(knownSince).toISOString() : null,
      },
    },
  );

/**
 * Pages the subscription follows are no longer configured as they were: removed from
 * `STATUS_PAGES_FILE` (`page-removed`), or their feed changed there (`page-changed`). Its
 * subscription ends with this, naming them.
 */
export const pagesChanged = (reason: 'page-removed' | 'page-changed', slugs: readonly string[]) =>
  codedError(
    'STATUS_PAGES_CHANGED',
    reason === 'page-removed'
      ? `The status page ${quoted(slugs)} was removed from the gateway's configuration and this subscription ended. Subscribe again to the pages statusPages lists.`
      : `The feed of the status page ${quoted(slugs)} changed in the gateway's configuration and this subscription ended. Subscribe again: it starts from the page as it is now.`,
    { extensions: { reason, slugs: slugs.slice(0, 50) } },
  );

const quoted = (slugs: readonly string[]) =>
  slugs
    .slice(0, 5)
    .map((slug) => JSON.stringify(slug))
    .join(', ') + (slugs.length > 5 ? ` and ${slugs.length - 5} more` : '');
