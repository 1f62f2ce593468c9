import { type CORSOptions, getCORSHeadersByRequestAndOptions } from '@whatwg-node/server';
import type { Config } from '../config.js';

/** Origins whose headers are kept: the configured ones, and room for callers that are refused. */
const REMEMBERED_ORIGINS = 64;

/**
 * The CORS headers of the configured origins (`CORS_ORIGINS`), for every answer the front door
 * sends, preflights included; `undefined` when CORS is off (same-origin only). Only a listed
 * origin gets CORS headers, none for any other: Yoga's own options, given the list, answer an
 * unlisted origin `Access-Control-Allow-Origin: null` with credentials, which the literal
 * `Origin: null` of a sandboxed page or a `file:` document matches; and, given a list of one,
 * they name that origin to every caller. The headers are those Yoga's CORS plugin would make
 * (the same function), made once per origin.
 */
export function createCors(cors: Config['cors']) {
  if (!cors) return undefined;
  // As browsers write an Origin: `https://app.example`, whatever the operator's spelling.
  const listed = new Set(cors.origins.map((origin) => new URL(origin).origin));
  const allowed: CORSOptions = {
    // Given only for a listed origin: '*' makes the function echo that origin.
    origin: ['*'],
    credentials: true,
    methods: ['GET', 'POST'],
    allowedHeaders: [...cors.allowedHeaders],
    exposedHeaders: ['x-request-id'],
    maxAge: 600,
  };
  const byOrigin = new Map<string, readonly string[]>();
  const none: readonly string[] = [];

  /** The headers of an answer to `origin`, as node:http's flat list (name, value, name, value…). */
  function headersFor(origin: string | undefined): readonly string[] {
    if (origin === undefined || !listed.has(origin)) return none;
    const known = byOrigin.get(origin);
    if (known !== undefined) return known;
    // The function reads nothing of the request but its Origin header (and, for options this
    // gateway does not set, the preflight's): a stand-in holding that alone.
    const request = {
      headers: { get: (name: string) => (name === 'origin' ? origin : null) },
    } as unknown as Request;
    const headers = Object.entries(getCORSHeadersByRequestAndOptions(request, allowed) ?? {})
      .map(([name, value]) => [name.toLowerCase(), value])
      // Every answer says `Vary: Origin` already (see `Answers`).
      .filter(([name]) => name !== 'vary')
      .flat();
    if (byOrigin.size < REMEMBERED_ORIGINS) byOrigin.set(origin, headers);
    return headers;
  }

  return { headersFor };
}

export type Cors = NonNullable<ReturnType<typeof createCors>>;
