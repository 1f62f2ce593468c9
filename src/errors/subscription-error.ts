import { GraphQLError } from 'graphql';

/*
 * The errors a subscription ends or is refused with. They are GraphQL errors with their code, as
 * the operation limits are, so that every transport delivers them as they are: SSE as an event,
 * graphql-ws as an `error` or `next` message.
 */

/** A limit on open subscriptions is reached; `limit` names the variable that sets it. */
export const tooManySubscriptions = (
  limit: 'MAX_SUBSCRIPTIONS' | 'MAX_SUBSCRIPTIONS_PER_CONNECTION',
  max: number,
) =>
  new GraphQLError(
    limit === 'MAX_SUBSCRIPTIONS'
      ? `The gateway already serves ${max} subscriptions, as many as it allows. Retry later.`
      : `This connection already runs ${max} operations (subscriptions and queries), as many as one connection may. Close one first.`,
    { extensions: { code: 'TOO_MANY_SUBSCRIPTIONS', limit } },
  );

/** The client fell more than `backlog` events behind: its subscription ends with this. */
export const slowSubscriber = (backlog: number) =>
  new GraphQLError(
    `This subscription fell more than ${backlog} events behind its client and was ended. Subscribe again.`,
    { extensions: { code: 'SLOW_SUBSCRIBER', limit: 'SUBSCRIPTION_BACKLOG' } },
  );
