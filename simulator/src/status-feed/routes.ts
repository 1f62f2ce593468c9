import { JSON_CONTENT_TYPE, jsonResponse } from '../json-response.js';
import type { SimulatorResponse, Upstream, UpstreamRequest } from '../upstream.js';
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

interface SerializedFeed {
  summary: Buffer;
  upcoming: Buffer;
  incidentHistory: Buffer | null;
  maintenanceHistory: Buffer | null;
}

const ROUTES: Readonly<Record<string, (serialized: SerializedFeed) => Buffer | null>> = {
  '/summary.json': (serialized) => serialized.summary,
  '/scheduled-maintenances/upcoming.json': (serialized) => serialized.upcoming,
  '/incidents.json': (serialized) => serialized.incidentHistory,
  '/scheduled-maintenances.json': (serialized) => serialized.maintenanceHistory,
};

const READ_METHODS = new Set(['GET', 'HEAD']);

function serialize(feed: SimulatedFeed): SerializedFeed {
  return {
    summary: Buffer.from(JSON.stringify(feed.summary)),
    upcoming: Buffer.from(JSON.stringify(feed.upcoming)),
    incidentHistory: feed.incidentHistory
      ? Buffer.from(JSON.stringify(feed.incidentHistory))
      : null,
    maintenanceHistory: feed.maintenanceHistory
      ? Buffer.from(JSON.stringify(feed.maintenanceHistory))
      : null,
  };
}

/** The Statuspage upstream; documents are serialized once per change, not per request. */
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
      const body = route?.(serialized);
      if (!body) {
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
      return {
        status: 200,
        headers: {
          'content-type': JSON_CONTENT_TYPE,
          'cache-control': 'max-age=0, private, must-revalidate',
        },
        body,
      };
    },
  };
}
