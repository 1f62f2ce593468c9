import { createServer, type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CONTROL_PREFIX, createControlApi } from './control-api.js';
import {
  type Fault,
  FaultTable,
  parseFault,
  parseFaultPath,
  parseTimes,
  parseUpstreamName,
} from './fault.js';
import { InFlightRequests } from './in-flight.js';
import { JSON_CONTENT_TYPE, jsonResponse } from './json-response.js';
import { RequestBodyTooLargeError, readBody } from './read-body.js';
import { type RecordedRequest, SimulatorRequestLog } from './request-log.js';
import { createSimulatedFeed, type SimulatedFeed } from './status-feed/fixture.js';
import { createStatusFeedUpstream } from './status-feed/routes.js';
import {
  createStatusPagesUpstream,
  defaultStatusPages,
  type SimulatedPage,
} from './status-feed/status-pages.js';
import type { SimulatorResponse, Upstream, UpstreamName, UpstreamRequest } from './upstream.js';
import { createVerificationUpstream, type VerificationUpstream } from './verification/routes.js';
import type { SourcifyServerVersion } from './verification/types.js';

export type { ActiveFault, Fault } from './fault.js';
export type { RecordedRequest } from './request-log.js';
export type { SimulatedDocuments, SimulatedPage } from './status-feed/status-pages.js';
export type { UpstreamName } from './upstream.js';
export {
  DEFAULT_JOB_DELAY_MS,
  type VerificationJobInfo,
  type VerificationJobState,
} from './verification/apiv2.js';
export type { ActiveEtherscanFailure, EtherscanFailure } from './verification/etherscan.js';
export type { VerifiableContract } from './verification/fixture.js';
export type { ReceivedVerification } from './verification/received-log.js';
/** Where the contract verification upstream (Sourcify's session API and APIv2) is mounted. */
export { VERIFY_PREFIX } from './verification/routes.js';
export type {
  SourcifyChain,
  SourcifyMatchLevel,
  SourcifyServerVersion,
  SourcifyV2Contract,
  SourcifyV2ErrorBody,
  SourcifyV2ExternalVerifications,
  SourcifyV2Job,
} from './verification/types.js';
export type { V2JobErrorCode, V2RejectCode } from './verification/v2-errors.js';
export type {
  ActiveV2Outcome,
  V2Outcome,
  V2OutcomeTarget,
} from './verification/v2-outcomes.js';

const MAX_BODY_BYTES = 20 * 1024 * 1024;
const CONTROL_MAX_BODY_BYTES = 1024 * 1024;

export interface SimulatorOptions {
  /** Port to listen on. Default 0: a random free port. */
  port?: number;
  /** Interface to listen on. Default `127.0.0.1`. */
  host?: string;
  /** Initial status feed. Default `createSimulatedFeed()`, the demo feed. */
  statusFeed?: SimulatedFeed;
  /**
   * More status pages, by slug, each at `/status/<slug>/api/v2`. Default `defaultStatusPages()`:
   * `cloud` (a vendor's larger page) and `ai-vendor` (an incident.io-hosted one).
   */
  statusPages?: Readonly<Record<string, SimulatedPage>>;
  /**
   * Requests kept in the log (older ones are dropped but still counted); also bounds
   * `verification.received`. Default 10,000.
   */
  requestLogCapacity?: number;
  /**
   * The Sourcify server to model, and come back to on `verification.reset()`: `latest` (the
   * default, today's Sourcify: APIv2 only), `3.12.1`, `3.9.1` (the session API beside APIv2),
   * `session-only` (before APIv2), or null (both APIs).
   */
  sourcify?: SourcifyServerVersion | null;
}

/**
 * The contract verification upstream as tests and tools drive it: what it received, its sessions
 * and APIv2 jobs, its fake explorer.
 */
export type SimulatorVerification = Pick<
  VerificationUpstream,
  | 'received'
  | 'sessions'
  | 'chains'
  | 'setChains'
  | 'addContract'
  | 'jobs'
  | 'abandonStuckJobs'
  | 'notModified'
  | 'jobDelayMs'
  | 'setJobDelay'
  | 'setOutcome'
  | 'outcomes'
  | 'serverVersion'
  | 'setServerVersion'
  | 'etherscanFailure'
  | 'setEtherscanFailure'
  | 'reset'
>;

export interface Simulator {
  /** e.g. `http://127.0.0.1:43123`. */
  readonly origin: string;
  /** `${origin}/status/api/v2`. */
  readonly statusBaseUrl: string;
  /**
   * `${origin}/verify`, standing for `https://sourcify.dev/server`: Sourcify's session API and
   * its APIv2 (`${verifyBaseUrl}/v2/...`).
   */
  readonly verifyBaseUrl: string;
  /** `${origin}/status/<slug>/api/v2`: where page `slug` of `statusPages` is served. */
  statusPageUrl(slug: string): string;
  /** Serves `page` as page `slug` from now on. */
  setStatusPage(slug: string, page: SimulatedPage): void;
  /** Edits the simulated feed of page `slug` in place (re-serialized once). */
  updateStatusPage(slug: string, edit: (feed: SimulatedFeed) => void): void;
  /** The feed being served. Treat it as read-only; edit it through `updateStatusFeed`. */
  readonly statusFeed: SimulatedFeed;
  /** Replace the whole feed, or edit it in place through a callback; both re-serialize once. */
  setStatusFeed(feed: SimulatedFeed): void;
  updateStatusFeed(edit: (feed: SimulatedFeed) => void): void;
  /**
   * Inject a fault on one path (relative to the upstream's base, e.g. '/summary.json') or on every
   * path of that upstream ('*'); an exact path wins over '*'. `fault: null` clears it. `times`
   * limits how many requests get it (default: until cleared). Throws a TypeError on bad input.
   * A faulted answer comes from in front of the upstream: no session, no `Set-Cookie`.
   */
  setFault(
    upstream: UpstreamName,
    path: string,
    fault: Fault | null,
    options?: { times?: number },
  ): void;
  clearFaults(): void;
  /**
   * Requests received (control API calls excluded), oldest first, as a fresh copy on each read.
   * Only the latest `requestLogCapacity` (10,000) are kept; counts stay exact.
   */
  readonly requests: ReadonlyArray<RecordedRequest>;
  /** Exact path match, e.g. '/status/api/v2/summary.json' (query ignored); no path = all. */
  requestCount(path?: string): number;
  /**
   * Requests answered `304 Not Modified` (a conditional GET naming the version served), by exact
   * path as `requestCount`; no path = all. Reset with the counts.
   */
  notModifiedCount(path?: string): number;
  /**
   * Requests in flight now under a path prefix (e.g. `/verify/v2/contract/`), and the most there
   * were at once since the last `resetRequests`, from the moment one arrives until its answer is
   * sent (a delay fault included).
   */
  concurrency(prefix: string): { current: number; peak: number };
  resetRequests(): void;
  /** The contract verification upstream mounted at `verifyBaseUrl`. */
  readonly verification: SimulatorVerification;
  /** Stops listening and destroys every open socket (hanging ones too); resolves when closed. */
  close(): Promise<void>;
}

const HTML_ERROR_PAGE = Buffer.from(
  `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>502 Bad Gateway</title></head>
<body>
<h1>Bad Gateway</h1>
<p>The origin server returned an invalid response. Please try again in a few minutes.</p>
<hr><address>edge-proxy</address>
</body>
</html>
`,
);

function splitUrl(rawUrl: string): { path: string; search: string } {
  const queryAt = rawUrl.indexOf('?');
  const path = queryAt === -1 ? rawUrl : rawUrl.slice(0, queryAt);
  return { path: path || '/', search: queryAt === -1 ? '' : rawUrl.slice(queryAt) };
}

function underPrefix(path: string, prefix: string): string | null {
  if (path === prefix) return '/';
  return path.startsWith(`${prefix}/`) ? path.slice(prefix.length) : null;
}

function send(response: ServerResponse, answer: SimulatorResponse): void {
  if (response.headersSent || response.destroyed) return;
  response.writeHead(answer.status, {
    ...answer.headers,
    'content-length': String(answer.body.length),
  });
  response.end(answer.body);
}

function faultStatusResponse(fault: Extract<Fault, { kind: 'status' }>): SimulatorResponse {
  const reason = STATUS_CODES[fault.status] ?? 'Error';
  return {
    status: fault.status,
    headers: { 'content-type': JSON_CONTENT_TYPE, ...fault.headers },
    body: Buffer.from(
      fault.body ?? JSON.stringify({ error: `Simulated ${fault.status} ${reason}` }),
    ),
  };
}

/** Starts the simulator on loopback (by default a random port) and resolves once listening. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 0;
  const statusFeed = createStatusFeedUpstream(options.statusFeed ?? createSimulatedFeed());
  const verification = createVerificationUpstream({
    ...(options.requestLogCapacity === undefined
      ? {}
      : { receivedCapacity: options.requestLogCapacity }),
    ...(options.sourcify === undefined ? {} : { serverVersion: options.sourcify }),
  });
  const statusPages = createStatusPagesUpstream(options.statusPages ?? defaultStatusPages());
  const inFlight = new InFlightRequests();
  // The route table: one entry per simulated upstream, matched by path prefix, first match wins.
  const upstreams: readonly Upstream[] = [statusFeed, verification, statusPages];
  const faults = new FaultTable();
  const log = new SimulatorRequestLog(
    options.requestLogCapacity === undefined ? {} : { capacity: options.requestLogCapacity },
  );
  const control = createControlApi({ faults, log, statusFeed, verification });
  const closing = new AbortController();

  /** Resolves true after `ms`, or false early if the client goes away or the simulator closes. */
  const wait = (ms: number, response: ServerResponse): Promise<boolean> =>
    new Promise((resolve) => {
      const finish = (elapsed: boolean): void => {
        clearTimeout(timer);
        response.off('close', onGone);
        closing.signal.removeEventListener('abort', onGone);
        resolve(elapsed);
      };
      const onGone = (): void => finish(false);
      const timer = setTimeout(() => finish(true), ms);
      response.once('close', onGone);
      closing.signal.addEventListener('abort', onGone, { once: true });
    });

  const toUpstreamRequest = (
    request: IncomingMessage,
    path: string,
    search: string,
    limitBytes: number,
  ): UpstreamRequest => {
    let body: Promise<Buffer> | undefined;
    return {
      method: request.method ?? 'GET',
      path,
      query: new URLSearchParams(search),
      headers: request.headers,
      readBody: () => {
        body ??= readBody(request, limitBytes);
        return body;
      },
    };
  };

  const answer = async (upstream: Upstream, request: UpstreamRequest) => {
    try {
      return await upstream.handle(request);
    } catch (error) {
      if (error instanceof RequestBodyTooLargeError) {
        return jsonResponse(413, { error: error.message }, { connection: 'close' });
      }
      throw error;
    }
  };

  const serveUpstream = async (
    upstream: Upstream,
    request: UpstreamRequest,
    response: ServerResponse,
    path: string,
  ): Promise<void> => {
    /** The upstream's own answer, its 304s counted. */
    const sendAnswer = (normal: SimulatorResponse): void => {
      if (normal.status === 304) log.recordNotModified(path);
      send(response, normal);
    };
    const fault = faults.take(upstream.name, request.path);
    switch (fault?.kind) {
      case undefined:
        return sendAnswer(await answer(upstream, request));
      case 'status':
        return send(response, faultStatusResponse(fault));
      case 'html':
        return send(response, {
          status: 200,
          headers: { 'content-type': 'text/html; charset=utf-8' },
          body: HTML_ERROR_PAGE,
        });
      case 'empty':
        return send(response, {
          status: 200,
          headers: { 'content-type': JSON_CONTENT_TYPE },
          body: Buffer.alloc(0),
        });
      case 'hang':
        // Left open on purpose; close() destroys the socket.
        return;
      case 'delay':
        if (await wait(fault.ms, response)) sendAnswer(await answer(upstream, request));
        return;
      case 'truncated': {
        const normal = await answer(upstream, request);
        return send(response, {
          status: 200,
          headers: { ...normal.headers, 'content-type': JSON_CONTENT_TYPE },
          body: normal.body.subarray(0, Math.floor(normal.body.length / 2)),
        });
      }
      case 'reset': {
        const normal = await answer(upstream, request);
        if (response.destroyed) return;
        // Promise the full length, deliver half, then drop the connection mid-body.
        response.writeHead(200, {
          ...normal.headers,
          'content-length': String(normal.body.length),
        });
        response.write(normal.body.subarray(0, Math.floor(normal.body.length / 2)), () =>
          response.destroy(),
        );
        return;
      }
    }
  };

  const dispatch = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const { path, search } = splitUrl(request.url ?? '/');

    const controlPath = underPrefix(path, CONTROL_PREFIX);
    if (controlPath !== null) {
      const controlRequest = toUpstreamRequest(
        request,
        controlPath,
        search,
        CONTROL_MAX_BODY_BYTES,
      );
      return send(response, await control(controlRequest));
    }

    log.record({
      method: request.method ?? 'GET',
      path,
      search,
      headers: { ...request.headers },
      time: new Date(),
    });
    // Faulted requests too: a delayed answer is in flight.
    response.once('close', inFlight.begin(path));
    for (const upstream of upstreams) {
      const relative = underPrefix(path, upstream.prefix);
      if (relative === null) continue;
      const upstreamRequest = toUpstreamRequest(request, relative, search, MAX_BODY_BYTES);
      return await serveUpstream(upstream, upstreamRequest, response, path);
    }
    send(response, jsonResponse(404, { error: 'No simulated upstream at this path', path }));
  };

  const server = createServer((request, response) => {
    dispatch(request, response).catch((error: unknown) => {
      try {
        if (response.headersSent) {
          response.destroy();
          return;
        }
        const message = error instanceof Error ? error.message : String(error);
        send(response, jsonResponse(500, { error: `Simulator error: ${message}` }));
      } catch {
        response.destroy();
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  // Errors after listening (rare: e.g. EMFILE on accept) must not crash the process.
  server.on('error', () => {});

  const address = server.address() as AddressInfo;
  const origin = `http://${originHost(address)}:${address.port}`;
  let closed: Promise<void> | undefined;

  return {
    origin,
    statusBaseUrl: `${origin}${statusFeed.prefix}`,
    verifyBaseUrl: `${origin}${verification.prefix}`,
    get statusFeed() {
      return statusFeed.feed;
    },
    statusPageUrl: (slug) => `${origin}${statusPages.prefix}/${slug}/api/v2`,
    setStatusPage: (slug, page) => statusPages.setPage(slug, page),
    updateStatusPage(slug, edit) {
      const page = statusPages.feed(slug);
      if (!page) throw new TypeError(`no simulated feed is page "${slug}"`);
      page.updateFeed(edit);
    },
    setStatusFeed: (feed) => statusFeed.setFeed(feed),
    updateStatusFeed: (edit) => statusFeed.updateFeed(edit),
    setFault(upstream, path, fault, faultOptions = {}) {
      faults.set(
        parseUpstreamName(upstream),
        parseFaultPath(path),
        fault === null ? null : parseFault(fault),
        parseTimes(faultOptions.times),
      );
    },
    clearFaults: () => faults.clear(),
    get requests() {
      return log.entries();
    },
    requestCount: (path) => log.count(path),
    notModifiedCount: (path) => log.notModifiedCount(path),
    concurrency: (prefix) => inFlight.of(prefix),
    resetRequests: () => {
      log.reset();
      inFlight.resetPeaks();
    },
    verification,
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing.abort();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

/** Clients on this machine cannot dial an unspecified address reliably; use loopback instead. */
function originHost(address: AddressInfo): string {
  if (address.family === 'IPv6') {
    return address.address === '::' ? '[::1]' : `[${address.address}]`;
  }
  return address.address === '0.0.0.0' ? '127.0.0.1' : address.address;
}
