import { type CORSOptions, getCORSHeadersByRequestAndOptions } from '@whatwg-node/server';
import type { Config } from '../config.js';

/** Yoga's CORS options for the configured origins; `false` when CORS is off (same-origin only). */
export function corsOptionsOf(cors: Config['cors']): CORSOptions | false {
  if (!cors) return false;
  return {
    origin: [...cors.origins],
    credentials: true,
    methods: ['GET', 'POST'],
    allowedHeaders: [...cors.allowedHeaders],
    exposedHeaders: ['x-request-id'],
    maxAge: 600,
  };
}

/** Origins whose headers are kept: the configured ones, and room for callers that are refused. */
const REMEMBERED_ORIGINS = 64;

/**
 * The CORS headers of an answer to a cross-origin request, for the answers the front door sends
 * itself (response-cache hits): made by the very function Yoga's CORS plugin uses, so a hit and a
 * miss carry the same ones, once per origin. `undefined` when CORS is off.
 */
export function createCorsHeaders(options: CORSOptions | false) {
  if (!options) return undefined;
  const byOrigin = new Map<string, readonly string[]>();
  /** The headers as node:http's flat list (name, value, name, value…). */
  return (origin: string): readonly string[] => {
    const known = byOrigin.get(origin);
    if (known !== undefined) return known;
    // The function reads nothing of the request but its Origin header (and, for options this
    // gateway does not set, the preflight's): a stand-in holding that alone.
    const request = {
      headers: { get: (name: string) => (name === 'origin' ? origin : null) },
    } as unknown as Request;
    const headers = Object.entries(getCORSHeadersByRequestAndOptions(request, options) ?? {})
      .map(([name, value]) => [name.toLowerCase(), value])
      // Every kept answer varies by Origin already (see `CachedHandlerOptions.cors`).
      .filter(([name]) => name !== 'vary')
      .flat();
    if (byOrigin.size < REMEMBERED_ORIGINS) byOrigin.set(origin, headers);
    return headers;
  };
}

export type CorsHeaders = NonNullable<ReturnType<typeof createCorsHeaders>>;
