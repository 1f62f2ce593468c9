import type { IncomingHttpHeaders } from 'node:http';

/** The upstream services the simulator imitates, each mounted under its own path prefix. */
export type UpstreamName = 'status' | 'verify';

export interface UpstreamRequest {
  readonly method: string;
  /** Path relative to the upstream's prefix, without the query: `/summary.json`. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  /** Reads the whole request body; rejects with `RequestBodyTooLargeError` past the server's limit. */
  readBody(): Promise<Buffer>;
}

/** A complete answer; the server adds `content-length` and may mangle it to inject a fault. */
export interface SimulatorResponse {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  body: Buffer;
}

/** One simulated upstream: an entry of the server's route table. */
export interface Upstream {
  readonly name: UpstreamName;
  /** Path prefix without a trailing slash, e.g. `/status/api/v2`. */
  readonly prefix: string;
  handle(request: UpstreamRequest): SimulatorResponse | Promise<SimulatorResponse>;
}
