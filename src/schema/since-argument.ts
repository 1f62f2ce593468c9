/**
 * A status subscription's `since` argument: the `fetchedAt` a client's query was answered with,
 * so that the subscription begins with what changed after it (`SubscriptionHub`).
 */
export const SINCE_ARGUMENT = {
  required: false,
  description:
    "The `fetchedAt` your query of these pages was answered with: the subscription begins with every change the gateway found after it, then goes on. When the gateway no longer knows them all (it keeps each page's last 100 changes for 15 minutes, while the page is held in memory), it begins instead with a `SINCE_UNKNOWN` error (no data): query again for the state as it stands. Without it, the first event says in `extensions.since` the time after which the subscription carries every change (compare your query's `fetchedAt`: if it is older, query again, or subscribe with `since`). Pass it as a variable: subscribers of the same operation share one subscription whatever their `since`.",
} as const;
