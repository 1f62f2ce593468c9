import type { UpstreamName } from './upstream.js';

/** A misbehaviour to inject instead of (or on top of) a normal upstream answer. */
export type Fault =
  /** Answer with this status (e.g. 503, or 429 with `retry-after`); body defaults to small JSON. */
  | { kind: 'status'; status: number; body?: string; headers?: Record<string, string> }
  /** Answer normally after `ms` milliseconds. */
  | { kind: 'delay'; ms: number }
  /** 200 with an HTML error page (`text/html`), like a proxy or CDN in front of the upstream. */
  | { kind: 'html' }
  /** 200 `application/json` whose body is the first half of the normal one. */
  | { kind: 'truncated' }
  /** 200 with an empty body. */
  | { kind: 'empty' }
  /** Send the headers and part of the body, then destroy the socket. */
  | { kind: 'reset' }
  /** Never answer (until the simulator closes). */
  | { kind: 'hang' };

export type FaultKind = Fault['kind'];

export interface ActiveFault {
  upstream: UpstreamName;
  /** Relative to the upstream's base (`/summary.json`), or `*` for all its paths. */
  path: string;
  fault: Fault;
  /** Requests left to affect; null until cleared. */
  remaining: number | null;
}

export const UPSTREAM_NAMES: readonly UpstreamName[] = ['status', 'verify'];
export const MAX_DELAY_MS = 600_000;

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Header values may not contain control characters other than tab (no CR/LF injection).
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks an untrusted value is a Fault; throws a TypeError saying what is wrong. */
export function parseFault(value: unknown): Fault {
  if (!isRecord(value)) throw new TypeError('fault must be an object with a "kind"');
  switch (value.kind) {
    case 'status': {
      const { status, body, headers } = value;
      if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599) {
        throw new TypeError('fault.status must be an integer from 200 to 599');
      }
      if (body !== undefined && typeof body !== 'string') {
        throw new TypeError('fault.body must be a string');
      }
      const fault: Fault = { kind: 'status', status };
      if (body !== undefined) fault.body = body;
      if (headers !== undefined) fault.headers = parseHeaders(headers);
      return fault;
    }
    case 'delay': {
      const { ms } = value;
      if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0 || ms > MAX_DELAY_MS) {
        throw new TypeError(`fault.ms must be a number from 0 to ${MAX_DELAY_MS}`);
      }
      return { kind: 'delay', ms };
    }
    case 'html':
    case 'truncated':
    case 'empty':
    case 'reset':
    case 'hang':
      return { kind: value.kind };
    default:
      throw new TypeError(
        'fault.kind must be one of status, delay, html, truncated, empty, reset, hang',
      );
  }
}

function parseHeaders(value: unknown): Record<string, string> {
  if (!isRecord(value)) throw new TypeError('fault.headers must be an object of strings');
  const headers: Record<string, string> = Object.create(null);
  for (const [name, headerValue] of Object.entries(value)) {
    if (!HEADER_NAME.test(name)) {
      throw new TypeError(`fault.headers: invalid header name "${name}"`);
    }
    if (typeof headerValue !== 'string' || !HEADER_VALUE.test(headerValue)) {
      throw new TypeError(`fault.headers["${name}"] must be a string without control characters`);
    }
    headers[name.toLowerCase()] = headerValue;
  }
  return headers;
}

export function parseUpstreamName(value: unknown): UpstreamName {
  const name = UPSTREAM_NAMES.find((candidate) => candidate === value);
  if (!name) throw new TypeError(`upstream must be one of ${UPSTREAM_NAMES.join(', ')}`);
  return name;
}

export function parseFaultPath(value: unknown): string {
  if (value === '*') return value;
  if (typeof value !== 'string' || !value.startsWith('/') || /[?#\s]/.test(value)) {
    throw new TypeError('path must be "*" or a path starting with "/" (no query string)');
  }
  return value;
}

export function parseTimes(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new TypeError('times must be a positive integer');
  }
  return value;
}

/** Active faults by upstream and path; an exact path wins over `*`. */
export class FaultTable {
  readonly #entries = new Map<string, ActiveFault>();

  set(upstream: UpstreamName, path: string, fault: Fault | null, times: number | null): void {
    const key = `${upstream} ${path}`;
    if (fault === null) this.#entries.delete(key);
    else this.#entries.set(key, { upstream, path, fault, remaining: times });
  }

  /** The fault to apply to one request, counting it against `times`. */
  take(upstream: UpstreamName, path: string): Fault | null {
    for (const key of [`${upstream} ${path}`, `${upstream} *`]) {
      const entry = this.#entries.get(key);
      if (!entry) continue;
      if (entry.remaining !== null) {
        entry.remaining -= 1;
        if (entry.remaining <= 0) this.#entries.delete(key);
      }
      return entry.fault;
    }
    return null;
  }

  clear(): void {
    this.#entries.clear();
  }

  list(): ActiveFault[] {
    return [...this.#entries.values()].map((entry) => ({ ...entry }));
  }
}
