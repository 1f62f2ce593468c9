import { getHeapStatistics } from 'node:v8';
import { z } from 'zod';
import { env, fraction, wholeNumber } from './variable.js';

/**
 * The heap an idle subscriber holds, at most, as `npm run bench:fanout` measured it for
 * subscribers sharing a subscription (docs/performance.md): what `MAX_SUBSCRIPTIONS` is derived from.
 */
const SUBSCRIBER_HEAP_BYTES = 16 * 1024;

export const Subscriptions = z
  .object({
    subscriptions: z.object({
      maxTotal: env('MAX_SUBSCRIPTIONS', wholeNumber(0), {
        description:
          'Subscriptions open at once on this replica, over SSE and WebSocket together; more are refused with `TOO_MANY_SUBSCRIPTIONS`. An SSE subscriber also holds one of `HTTP_MAX_CONNECTIONS`, and the process one open file per connection (`ulimit -n`).',
        unset:
          "as many as fit in the heap `SUBSCRIPTION_HEAP_LIMIT` leaves them: node's heap limit (`--max-old-space-size`) times `SUBSCRIPTION_HEAP_LIMIT`, over 16 KiB, the most an idle subscriber of a shared subscription was measured to hold (`npm run bench:fanout`, docs/performance.md); 13,440 under the Dockerfile's flags (a 280 MiB heap limit)",
      }),
      maxSse: env('MAX_SSE_SUBSCRIPTIONS', wholeNumber(1), {
        unset: 'three quarters of `HTTP_MAX_CONNECTIONS`',
        description:
          'SSE subscriptions open at once on this replica, each holding one of `HTTP_MAX_CONNECTIONS`; more are refused with `TOO_MANY_SUBSCRIPTIONS`. It must stay below `HTTP_MAX_CONNECTIONS`, so that a crowd on SSE leaves HTTP (`/health`, `/readiness`, queries) connections of its own; with WebSockets, keep `MAX_SSE_SUBSCRIPTIONS` plus `MAX_WEBSOCKETS` below it too.',
      }),
      maxPerConnection: env('MAX_SUBSCRIPTIONS_PER_CONNECTION', wholeNumber(1), {
        default: '20',
        description:
          'Operations one WebSocket connection may run at once, subscriptions and queries together; more are refused with `TOO_MANY_SUBSCRIPTIONS` (an SSE request is one subscription).',
      }),
      maxPerClient: env('MAX_SUBSCRIPTIONS_PER_CLIENT', wholeNumber(1), {
        default: '100',
        description:
          'Subscriptions one client (its address, as `TRUSTED_PROXIES` finds it) may hold open at once, over SSE and WebSocket together; more are refused with `TOO_MANY_SUBSCRIPTIONS`. Behind a proxy, set `TRUSTED_PROXIES`, or every client counts as the proxy.',
      }),
      maxHeapShare: env('SUBSCRIPTION_HEAP_LIMIT', fraction, {
        default: '0.75',
        description:
          "Share of node's heap limit (`--max-old-space-size`) held by live objects above which new subscriptions are refused with `TOO_MANY_SUBSCRIPTIONS`, whatever `MAX_SUBSCRIPTIONS` allows: an idle subscriber sharing its subscription with others who sent the same request holds about 9 KB over SSE and 5 KB over graphql-ws, one alone about 40 KB, and more while events are sent. Garbage not yet collected never refuses: while the heap in use (garbage included) is under the line, it is what counts; over it, the heap in use right after the last full collection does, V8's own (about every 1.3 s during a flood of requests) or, when none came in the last 10 s, one the gateway makes then, at most once per 10 s (a full collection stops the process for 0.2 to 0.35 s on a 190 MiB heap, docs/performance.md). So a reading is at most 10 s old, and what grew since it is counted at the next full collection.",
      }),
      keepAliveMs: env('SUBSCRIPTION_KEEP_ALIVE_MS', wholeNumber(100), {
        default: '12000',
        description:
          "How often a WebSocket is pinged; one that does not answer before the next ping is closed. SSE streams get a comment line every 12 s (Yoga's).",
      }),
      backlog: env('SUBSCRIPTION_BACKLOG', wholeNumber(1), {
        default: '100',
        description:
          'Events one subscription topic (every subscriber of the same operation shares one) may have waiting to be executed and written: past them the gateway has fallen behind, and every subscriber of the topic gets `SLOW_SUBSCRIBER` and ends. Whole-page events replace each other and count once. A client that reads slowly is bounded on its own: `SUBSCRIPTION_MAX_BUFFERED_BYTES` (SSE), `WEBSOCKET_MAX_BUFFERED_BYTES` (graphql-ws).',
      }),
      maxBufferedBytes: env('SUBSCRIPTION_MAX_BUFFERED_BYTES', wholeNumber(1024), {
        default: '1048576',
        description:
          "Bytes one SSE subscriber may leave unread; past them it is sent `SLOW_SUBSCRIBER` and its stream ends. Subscribers of the same operation are written the same event buffers, so a crowd that reads slowly holds each event's bytes once, not once each.",
      }),
    }),
    websockets: z.object({
      maxTotal: env('MAX_WEBSOCKETS', wholeNumber(1), {
        unset: 'three quarters of `HTTP_MAX_CONNECTIONS`',
        description:
          'WebSockets open at once on this replica; more are refused with 503 `TOO_MANY_WEBSOCKETS`. It must stay below `HTTP_MAX_CONNECTIONS`, so that HTTP (`/health`, `/readiness`, queries) keeps connections however many sockets are open.',
      }),
      maxPerClient: env('MAX_WEBSOCKETS_PER_CLIENT', wholeNumber(1), {
        default: '32',
        description:
          'WebSockets one client (its address, as `TRUSTED_PROXIES` defines it) may hold open at once; more are refused with 429 `TOO_MANY_WEBSOCKETS`. One socket carries many operations.',
      }),
      idleTimeoutMs: env('WEBSOCKET_IDLE_TIMEOUT_MS', wholeNumber(1), {
        default: '300000',
        description:
          'A WebSocket running no operation for this long is closed with 1000 (checked at each keep-alive ping; pings do not count as operations). A socket that sends no `connection_init` within 3 s is closed with 4408.',
      }),
      maxBufferedBytes: env('WEBSOCKET_MAX_BUFFERED_BYTES', wholeNumber(1024), {
        default: '1048576',
        description:
          "Bytes one WebSocket may have waiting to be sent to its client (each message counted with 512 bytes of overhead): past 64 KiB its reads pause until its writes drain; past this, a socket that completes no write for 2 s is closed with 1008. A burst the gateway queues itself (many subscriptions' first events at once) still reaches a client that reads.",
      }),
      maxTotalBufferedBytes: env('WEBSOCKET_MAX_TOTAL_BUFFERED_BYTES', wholeNumber(1024), {
        unset: "a quarter of node's heap limit (`--max-old-space-size`)",
        description:
          'Bytes all WebSockets together may have waiting to be sent to their clients; a socket whose next message would go past it is closed with 1008, as one that does not read. `WEBSOCKET_MAX_BUFFERED_BYTES` times `MAX_WEBSOCKETS` is far more than the heap holds: this bounds a crowd of slow readers.',
      }),
    }),
  })
  .transform(({ subscriptions: { maxTotal, ...subscriptions }, websockets }) => ({
    subscriptions: {
      ...subscriptions,
      maxTotal:
        maxTotal ??
        Math.floor(
          (getHeapStatistics().heap_size_limit * subscriptions.maxHeapShare) /
            SUBSCRIBER_HEAP_BYTES,
        ),
    },
    websockets,
  }))
  .meta({ title: 'Subscriptions' });
