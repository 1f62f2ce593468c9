import { JSON_CONTENT_TYPE, jsonResponse } from '../json-response.js';
import type { SimulatorResponse, Upstream, UpstreamRequest } from '../upstream.js';
import { conditionalAnswer, statuspageEtag } from './conditional.js';
import type { SimulatedFeed } from './types.js';

/** Where the Statuspage v2 feed is mounted, mirroring `https://status.example.com/api/v2`. */
export const STATUS_FEED_PREFIX = '/status/api/v2';

export interface StatusFeedUpstream extends Upstream {
  readonly name: 'status';
  /** The feed being served. Edit it through `updateFeed`, or the served bytes go stale. */
  readonly feed: SimulatedFeed;
  setFeed(feed: SimulatedFeed): void;
  updateFeed(edit: (feed: SimulatedFeed) => void): void;
}

/** A document's bytes and its ETag, made once per change. */
interface SerializedDocument {
  readonly body: Buffer;
  readonly etag: string;
}

interface SerializedFeed {
  summary: SerializedDocument;
  upcoming: SerializedDocument;
  incidentHistory: SerializedDocument | null;
  maintenanceHistory: SerializedDocument | null;
}

const ROUTES: Readonly<Record<string, (serialized: SerializedFeed) => SerializedDocument | null>> =
  {
    '/summary.json': (serialized) => serialized.summary,
    '/scheduled-maintenances/upcoming.json': (serialized) => serialized.upcoming,
    '/incidents.json': (serialized) => serialized.incidentHistory,
    '/scheduled-maintenances.json': (serialized) => serialized.maintenanceHistory,
  };

const READ_METHODS = new Set(['GET', 'HEAD']);

function document(value: unknown): SerializedDocument {
  const body = Buffer.from(JSON.stringify(value));
  return { body, etag: statuspageEtag(body) };
}

function serialize(feed: SimulatedFeed): SerializedFeed {
  return {
    summary: document(feed.summary),
    upcoming: document(feed.upcoming),
    incidentHistory: feed.incidentHistory ? document(feed.incidentHistory) : null,
    maintenanceHistory: feed.maintenanceHistory ? document(feed.maintenanceHistory) : null,
  };
}

/**
 * The Statuspage upstream; documents are serialized once per change, not per request, each with
 * its ETag, and a conditional GET naming it is answered 304 (see `conditional.ts`).
 */
export function createStatusFeedUpstream(initial: SimulatedFeed): StatusFeedUpstream {
  let feed = initial;
  let serialized = serialize(feed);

  return {
    name: 'status',
    prefix: STATUS_FEED_PREFIX,
    get feed() {
      return feed;
    },
    setFeed(next) {
      const bytes = serialize(next);
      feed = next;
      serialized = bytes;
    },
    updateFeed(edit) {
      edit(feed);
      serialized = serialize(feed);
    },
    handle(request: UpstreamRequest): SimulatorResponse {
      const route = Object.hasOwn(ROUTES, request.path) ? ROUTES[request.path] : undefined;
      const served = route?.(serialized);
      if (!served) {
        return jsonResponse(404, {
          error: 'Not found',
          path: `${STATUS_FEED_PREFIX}${request.path}`,
        });
      }
      if (!READ_METHODS.has(request.method)) {
        return jsonResponse(
          405,
          { error: `Method ${request.method} not allowed` },
          { allow: 'GET, HEAD' },
        );
      }
      return conditionalAnswer(
        request,
        {
          status: 200,
          headers: {
            'content-type': JSON_CONTENT_TYPE,
            'cache-control': 'max-age=0, private, must-revalidate',
          },
          body: served.body,
        },
        { etag: served.etag },
      );
    },
  };
}
