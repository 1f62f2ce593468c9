import type { Plugin } from 'graphql-yoga';
import type { StatusFeed } from '../upstreams/status-feed/status-feed.js';

/**
 * `GET /readiness`, next to Yoga's `/health` (alive): 200 when the gateway can serve the status
 * graph (the feed answers, or a snapshot recent enough to stand in is held), 503 with the reason
 * otherwise. The configuration was valid, or the process would not have started. It reads through
 * the shared cache, so probing costs the feed at most one request per TTL.
 */
export function useReadiness({ statusFeed }: { statusFeed: StatusFeed }): Plugin {
  return {
    async onRequest({ request, url, endResponse, fetchAPI }) {
      if (request.method !== 'GET' || url.pathname !== '/readiness') return;
      const respond = (body: unknown, status: number) =>
        endResponse(
          new fetchAPI.Response(JSON.stringify(body), {
            status,
            headers: {
              'content-type': 'application/json; charset=utf-8',
              'cache-control': 'no-store',
            },
          }),
        );
      try {
        const { fetchedAt, stale } = await statusFeed.summary();
        respond({ ready: true, statusFeed: { fetchedAt, stale } }, 200);
      } catch (error) {
        respond(
          { ready: false, reason: error instanceof Error ? error.message : String(error) },
          503,
        );
      }
    },
  };
}
