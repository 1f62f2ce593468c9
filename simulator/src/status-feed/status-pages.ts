import { JSON_CONTENT_TYPE, jsonResponse } from '../json-response.js';
import type { SimulatorResponse, Upstream, UpstreamRequest } from '../upstream.js';
import { createSimulatedFeed, STATUS_FEED_PRESETS } from './fixture.js';
import { createIncidentIoSummary } from './incident-io-page.js';
import { createStatusFeedUpstream, type StatusFeedUpstream } from './routes.js';
import type { SimulatedFeed } from './types.js';

/**
 * Where the pages of `statusPages` are mounted: page `<slug>` at `/status/<slug>/api/v2`, beside
 * the one feed at `/status/api/v2` (slug `api` is that one's path, so no page may take it).
 */
export const STATUS_PAGES_PREFIX = '/status';

/** A page that serves fixed documents by path (`/summary.json`), and 404 for the others. */
export interface SimulatedDocuments {
  readonly documents: Readonly<Record<string, unknown>>;
}

/** A page of the simulator: a whole simulated feed, or fixed documents. */
export type SimulatedPage = SimulatedFeed | SimulatedDocuments;

/**
 * The pages a simulator serves unless told otherwise, beside the ledger demo at `/status/api/v2`:
 * a vendor's larger Atlassian-style page, and an incident.io-hosted one.
 */
export function defaultStatusPages(now: Date = new Date()): Record<string, SimulatedPage> {
  return {
    cloud: createSimulatedFeed({ ...STATUS_FEED_PRESETS.realistic, now }),
    'ai-vendor': { documents: { '/summary.json': createIncidentIoSummary(now) } },
  };
}

export interface StatusPagesUpstream extends Upstream {
  readonly name: 'status';
  /** Serves `page` at `/status/<slug>/api/v2` from now on (replacing the one there). */
  setPage(slug: string, page: SimulatedPage): void;
  /** The simulated feed of page `slug`, to edit through `updateFeed`; undefined for documents. */
  feed(slug: string): StatusFeedUpstream | undefined;
}

const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;
const PAGE_PATH = /^\/([^/]+)\/api\/v2(\/.*)$/;

/** Many status pages, each by its slug; a fault on `status` at `/<slug>/api/v2/…` hits one. */
export function createStatusPagesUpstream(
  initial: Readonly<Record<string, SimulatedPage>> = {},
): StatusPagesUpstream {
  const pages = new Map<string, StatusFeedUpstream | Readonly<Record<string, Buffer>>>();
  const upstream: StatusPagesUpstream = {
    name: 'status',
    prefix: STATUS_PAGES_PREFIX,
    setPage(slug, page) {
      if (!SLUG.test(slug) || slug === 'api') throw new TypeError(`bad page slug "${slug}"`);
      pages.set(
        slug,
        'documents' in page
          ? Object.fromEntries(
              Object.entries(page.documents).map(([path, body]) => [
                path,
                Buffer.from(JSON.stringify(body)),
              ]),
            )
          : createStatusFeedUpstream(page),
      );
    },
    feed(slug) {
      const page = pages.get(slug);
      return page && 'handle' in page ? (page as StatusFeedUpstream) : undefined;
    },
    handle(request: UpstreamRequest): SimulatorResponse | Promise<SimulatorResponse> {
      const [, slug = '', path = ''] = PAGE_PATH.exec(request.path) ?? [];
      const page = pages.get(slug);
      if (page && 'handle' in page && typeof page.handle === 'function') {
        return (page as StatusFeedUpstream).handle({ ...request, path });
      }
      const body =
        page && Object.hasOwn(page, path) ? (page as Record<string, Buffer>)[path] : undefined;
      if (!body) {
        return jsonResponse(404, {
          error: 'Not found',
          path: `${STATUS_PAGES_PREFIX}${request.path}`,
        });
      }
      return { status: 200, headers: { 'content-type': JSON_CONTENT_TYPE }, body };
    },
  };
  for (const [slug, page] of Object.entries(initial)) upstream.setPage(slug, page);
  return upstream;
}
