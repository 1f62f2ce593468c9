import { type CORSOptions, getCORSHeadersByRequestAndOptions } from '@whatwg-node/server';
import type { Config } from '../config.js';

/**
 * Yoga's CORS options for a request, by its `Origin`: `false` (no CORS header at all) unless that
 * origin is one of `CORS_ORIGINS`.
 */
export type CorsPolicy = (request: Request) => CORSOptions;

/**
 * The CORS policy for the configured origins; `false` when CORS is off (same-origin only). Only a
 * listed origin gets CORS headers: Yoga's own options, given the list, answer an unlisted origin
 * `Access-Control-Allow-Origin: null` with credentials, which the literal `Origin: null` of a
 * sandboxed page or a `file:` document matches; and, given a list of one, they name that origin
 * to every caller.
 */
export function corsOptionsOf(cors: Config['cors']): CorsPolicy | false {
  if (!cors) return false;
  // As browsers write an Origin: `https://app.example`, whatever the operator's spelling.
  const listed = new Set(cors.origins.map((origin) => new URL(origin).origin));
  const allowed: CORSOptions = {
    // Given only for a listed origin, checked below: '*' makes the function echo that origin and
    // say `Vary: Origin`, whether one origin is configured or several.
    origin: ['*'],
    credentials: true,
    methods: ['GET', 'POST'],
    allowedHeaders: [...cors.allowedHeaders],
    exposedHeaders: ['x-request-id'],
    maxAge: 600,
  };
  return (request) => {
    const origin = request.headers.get('origin');
    return origin !== null && listed.has(origin) ? allowed : false;
  };
}

/** Origins whose headers are kept: the configured ones, and room for callers that are refused. */
const REMEMBERED_ORIGINS = 64;

/**
 * The CORS headers of an answer to a cross-origin request, for the answers the front door sends
 * itself (response-cache hits): made by the very policy and function Yoga's CORS plugin uses, so a
 * hit and a miss carry the same ones (none for an origin that is not listed), once per origin.
 * `undefined` when CORS is off.
 */
export function createCorsHeaders(policy: CorsPolicy | false) {
  if (!policy) return undefined;
  const byOrigin = new Map<string, readonly string[]>();
  /** The headers as node:http's flat list (name, value, name, value…). */
  return (origin: string): readonly string[] => {
    const known = byOrigin.get(origin);
    if (known !== undefined) return known;
    // The policy and the function read nothing of the request but its Origin header (and, for
    // options this gateway does not set, the preflight's): a stand-in holding that alone.
    const request = {
      headers: { get: (name: string) => (name === 'origin' ? origin : null) },
    } as unknown as Request;
    const headers = Object.entries(
      getCORSHeadersByRequestAndOptions(request, policy(request)) ?? {},
    )
      .map(([name, value]) => [name.toLowerCase(), value])
      // Every kept answer varies by Origin already (see `CachedHandlerOptions.cors`).
      .filter(([name]) => name !== 'vary')
      .flat();
    if (byOrigin.size < REMEMBERED_ORIGINS) byOrigin.set(origin, headers);
    return headers;
  };
}

export type CorsHeaders = NonNullable<ReturnType<typeof createCorsHeaders>>;
