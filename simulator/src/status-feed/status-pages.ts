import { JSON_CONTENT_TYPE, jsonResponse } from '../json-response.js';
import type { SimulatorResponse, Upstream, UpstreamRequest } from '../upstream.js';
import { conditionalAnswer } from './conditional.js';
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
  /**
   * Served as static files are: with this time as every document's `Last-Modified` (no ETag), and
   * 304 to an `If-Modified-Since` not before it. Set the page again, with a later time, to change
   * it.
   * @default none: no validators, every GET answered in full (as the incident.io-hosted page here)
   */
  readonly lastModified?: Date;
}

/** A page of fixed documents, serialized. */
interface ServedDocuments {
  readonly bodies: Readonly<Record<string, Buffer>>;
  readonly lastModified: Date | undefined;
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
  const pages = new Map<string, StatusFeedUpstream | ServedDocuments>();
  const upstream: StatusPagesUpstream = {
    name: 'status',
    prefix: STATUS_PAGES_PREFIX,
    setPage(slug, page) {
      if (!SLUG.test(slug) || slug === 'api') throw new TypeError(`bad page slug "${slug}"`);
      pages.set(
        slug,
        'documents' in page
          ? {
              bodies: Object.fromEntries(
                Object.entries(page.documents).map(([path, body]) => [
                  path,
                  Buffer.from(JSON.stringify(body)),
                ]),
              ),
              lastModified: page.lastModified,
            }
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
      const served = page as ServedDocuments | undefined;
      const body = served && Object.hasOwn(served.bodies, path) ? served.bodies[path] : undefined;
      if (!served || !body) {
        return jsonResponse(404, {
          error: 'Not found',
          path: `${STATUS_PAGES_PREFIX}${request.path}`,
        });
      }
      const answer = { status: 200, headers: { 'content-type': JSON_CONTENT_TYPE }, body };
      return conditionalAnswer(request, answer, { lastModified: served.lastModified });
    },
  };
  for (const [slug, page] of Object.entries(initial)) upstream.setPage(slug, page);
  return upstream;
}
