/**
 * HTTP control API, for driving a running simulator from another process (benchmark,
 * docker-compose). All bodies and answers are JSON; bad input gets 400 `{ error }`.
 *
 * - `GET /_simulator/health` → `{ ok: true }`
 * - `GET /_simulator/faults` → `{ faults: ActiveFault[] }`
 * - `POST /_simulator/faults` `{ upstream, path, fault, times? }` (`fault: null` clears) → same
 * - `DELETE /_simulator/faults` → `{ faults: [] }`
 * - `GET /_simulator/requests` → `{ count, byPath: { [path]: n } }`; `DELETE` resets the counts
 * - `GET /_simulator/status-feed` → page, status and component ids/statuses of the served feed
 * - `PUT /_simulator/status-feed` `{ preset?: 'demo' | 'realistic' | 'large',
 *   components?: { [id]: status } }` → resets to a preset and/or sets leaf component statuses
 * - `POST /_simulator/status-feed/incidents` `{ id?, name?, impact?, status, body?,
 *   components?: { [id]: status } }` → posts an incident (no `id`) or an update to one, as
 *   Statuspage does: `{ id }`, the incident's
 * - `POST /_simulator/status-feed/maintenances` `{ id?, name?, status, body?, componentIds?,
 *   scheduledFor?, scheduledUntil? }` → schedules a maintenance (no `id`) or moves one along:
 *   `{ id }`
 * - `GET /_simulator/verification` → `{ sessions: { [id]: address[] }, received, contracts,
 *   chains, serverVersion, etherscan }` (`received`: requests so far; `chains`: how many are
 *   listed, null when hidden; `etherscan`: the fake Etherscan's failure in force, or null)
 * - `PUT /_simulator/verification` `{ chains?: SourcifyChain[] | null,
 *   contracts?: VerifiableContract[], serverVersion?: 'latest' | '3.12.1' | '3.9.1' |
 *   'session-only' | null,
 *   etherscan?: { failure, times? } | null }` → replaces the chain list, adds contracts, picks the
 *   server version to behave as, makes Etherscan fail (`unreachable`, `http-error`,
 *   `invalid-api-key`, `rate-limit`)
 * - `DELETE /_simulator/verification` → back to the fixture (sessions, received, chains,
 *   contracts, APIv2 jobs, outcomes, job delay)
 * - `GET /_simulator/verification/v2` → `{ jobDelayMs, jobs, outcomes }` (APIv2 jobs with their
 *   state, scripted outcomes in force)
 * - `PUT /_simulator/verification/v2` `{ jobDelayMs?: number | null, outcomes?: Array<{ target:
 *   '*' | { chainId, address }, outcome: { reject } | { jobError } | { stuck: true } | null,
 *   times? }>, abandonStuckJobs?: true }` → same
 */
import {
  type FaultTable,
  parseFault,
  parseFaultPath,
  parseTimes,
  parseUpstreamName,
} from './fault.js';
import { jsonResponse } from './json-response.js';
import { RequestBodyTooLargeError } from './read-body.js';
import type { SimulatorRequestLog } from './request-log.js';
import {
  createSimulatedFeed,
  type SimulatedFeed,
  STATUS_FEED_PRESETS,
  type StatusFeedPreset,
} from './status-feed/fixture.js';
import type { StatusFeedUpstream } from './status-feed/routes.js';
import {
  postIncidentUpdate,
  postMaintenanceUpdate,
  STATUSPAGE_IMPACTS,
  STATUSPAGE_INCIDENT_STATUSES,
  STATUSPAGE_MAINTENANCE_STATUSES,
} from './status-feed/status-events.js';
import {
  STATUSPAGE_COMPONENT_STATUSES,
  setComponentStatuses,
} from './status-feed/status-rollup.js';
import type { StatuspageComponentStatus } from './status-feed/types.js';
import type { SimulatorResponse, UpstreamRequest } from './upstream.js';
import { parseEtherscanFailure } from './verification/etherscan.js';
import {
  parseServerVersion,
  parseSourcifyChains,
  parseVerifiableContract,
} from './verification/parse.js';
import type { VerificationUpstream } from './verification/routes.js';
import { parseJobDelay, parseOutcome, parseOutcomeTarget } from './verification/v2-outcomes.js';

/** Where the control API is mounted; requests under it are not recorded in the request log. */
export const CONTROL_PREFIX = '/_simulator';

export interface ControlApiContext {
  readonly faults: FaultTable;
  readonly log: SimulatorRequestLog;
  readonly statusFeed: StatusFeedUpstream;
  readonly verification: VerificationUpstream;
}

type Handler = (request: UpstreamRequest) => SimulatorResponse | Promise<SimulatorResponse>;

/** Reported as 400 with its message: the request body was understood but is not acceptable. */
class BadRequestError extends Error {}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

async function readJsonObject(
  request: UpstreamRequest,
  allowedFields: readonly string[],
): Promise<Record<string, unknown>> {
  const text = (await request.readBody()).toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BadRequestError('Body must be a JSON object');
  }
  if (!isRecord(value)) throw new BadRequestError('Body must be a JSON object');
  const unknown = Object.keys(value).filter((field) => !allowedFields.includes(field));
  if (unknown.length > 0) {
    throw new BadRequestError(
      `Unknown field(s) ${unknown.join(', ')}; expected ${allowedFields.join(', ')}`,
    );
  }
  return value;
}

/** Runs a parser, turning its TypeError/RangeError into a 400. */
function check<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof TypeError || error instanceof RangeError) {
      throw new BadRequestError(error.message);
    }
    throw error;
  }
}

function parsePreset(value: unknown): StatusFeedPreset | undefined {
  if (value === undefined) return undefined;
  const presets = Object.keys(STATUS_FEED_PRESETS) as StatusFeedPreset[];
  const preset = presets.find((name) => name === value);
  if (!preset) throw new TypeError(`preset must be one of ${presets.join(', ')}`);
  return preset;
}

function parseComponentStatuses(
  value: unknown,
): Record<string, StatuspageComponentStatus> | undefined {
  if (value === undefined) return undefined;
  if (!isRecord(value)) {
    throw new TypeError('components must be an object of component id to status');
  }
  // Null prototype, so an id like "__proto__" is kept (and reported unknown) rather than lost.
  const statuses: Record<string, StatuspageComponentStatus> = Object.create(null);
  for (const [id, status] of Object.entries(value)) {
    const known = STATUSPAGE_COMPONENT_STATUSES.find((candidate) => candidate === status);
    if (!known) {
      throw new TypeError(
        `components["${id}"] must be one of ${STATUSPAGE_COMPONENT_STATUSES.join(', ')}`,
      );
    }
    statuses[id] = known;
  }
  return statuses;
}

/** An optional string field of at most `max` characters. */
function optionalText(value: unknown, name: string, max: number): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length > max) {
    throw new TypeError(`${name} must be a string of at most ${max} characters`);
  }
  return value;
}

function oneOf<Value extends string>(
  value: unknown,
  name: string,
  values: readonly Value[],
): Value {
  const known = values.find((candidate) => candidate === value);
  if (!known) throw new TypeError(`${name} must be one of ${values.join(', ')}`);
  return known;
}

function optionalDate(value: unknown, name: string): Date | undefined {
  if (value === undefined) return undefined;
  const date = typeof value === 'string' ? new Date(value) : undefined;
  if (!date || Number.isNaN(date.getTime())) throw new TypeError(`${name} must be an ISO date`);
  return date;
}

/** `{ failure, times? }`, checked; null clears the failure. */
function parseEtherscan(value: unknown) {
  if (value === null) return null;
  if (!isRecord(value)) throw new TypeError('etherscan must be null or { failure, times? }');
  const unknown = Object.keys(value).filter((key) => !['failure', 'times'].includes(key));
  if (unknown.length > 0) throw new TypeError(`etherscan: unknown field(s) ${unknown.join(', ')}`);
  return { failure: parseEtherscanFailure(value.failure), times: parseTimes(value.times) };
}

/** `[{ target, outcome, times? }]`, each checked; `outcome: null` clears that target's. */
function parseOutcomes(value: unknown) {
  if (!Array.isArray(value)) {
    throw new TypeError('outcomes must be an array of { target, outcome, times? }');
  }
  return value.map((item: unknown, index) => {
    const where = `outcomes[${index}]`;
    if (!isRecord(item)) throw new TypeError(`${where} must be { target, outcome, times? }`);
    const unknown = Object.keys(item).filter(
      (key) => !['target', 'outcome', 'times'].includes(key),
    );
    if (unknown.length > 0) throw new TypeError(`${where}: unknown field(s) ${unknown.join(', ')}`);
    if (item.outcome === undefined) {
      throw new TypeError(`${where}.outcome is required (null clears the outcome of that target)`);
    }
    try {
      return {
        target: parseOutcomeTarget(item.target),
        outcome: item.outcome === null ? null : parseOutcome(item.outcome),
        times: parseTimes(item.times),
      };
    } catch (error) {
      if (error instanceof TypeError) throw new TypeError(`${where}: ${error.message}`);
      throw error;
    }
  });
}

/** The HTTP control API, for driving the simulator from another process. */
export function createControlApi(
  context: ControlApiContext,
): (request: UpstreamRequest) => Promise<SimulatorResponse> {
  const { faults, log, statusFeed, verification } = context;
  const faultList = (): SimulatorResponse => jsonResponse(200, { faults: faults.list() });
  const requestCounts = (): SimulatorResponse =>
    jsonResponse(200, { count: log.count(), byPath: log.byPath() });
  const feedOverview = (): SimulatorResponse => {
    const { summary } = statusFeed.feed;
    return jsonResponse(200, {
      page: summary.page,
      status: summary.status,
      components: summary.components.map(({ id, name, status, group, group_id }) => ({
        id,
        name,
        status,
        group,
        group_id,
      })),
      incidents: summary.incidents.length,
      scheduledMaintenances: summary.scheduled_maintenances.length,
      upcomingMaintenances: statusFeed.feed.upcoming.scheduled_maintenances.length,
    });
  };

  /** Applies an operator's action to the feed (checked before it changes anything): `{ id }`. */
  const posted = (post: (feed: SimulatedFeed) => string): SimulatorResponse => {
    let id = '';
    check(() =>
      statusFeed.updateFeed((feed) => {
        id = post(feed);
      }),
    );
    return jsonResponse(200, { id });
  };

  const verificationOverview = (): SimulatorResponse =>
    jsonResponse(200, {
      sessions: Object.fromEntries(verification.sessions()),
      received: verification.receivedCount,
      contracts: verification.contracts.length,
      chains: verification.chainsListed ? verification.chains.length : null,
      serverVersion: verification.serverVersion,
      etherscan: verification.etherscanFailure,
    });

  const apiV2Overview = (): SimulatorResponse =>
    jsonResponse(200, {
      jobDelayMs: verification.jobDelayMs,
      jobs: verification.jobs(),
      outcomes: verification.outcomes(),
    });

  const routes: Readonly<Record<string, Readonly<Record<string, Handler>>>> = {
    '/health': { GET: () => jsonResponse(200, { ok: true }) },
    '/faults': {
      GET: faultList,
      POST: async (request) => {
        const body = await readJsonObject(request, ['upstream', 'path', 'fault', 'times']);
        const upstream = check(() => parseUpstreamName(body.upstream));
        const path = check(() => parseFaultPath(body.path));
        if (body.fault === undefined) {
          throw new BadRequestError('fault is required (null clears the fault on that path)');
        }
        const fault = body.fault === null ? null : check(() => parseFault(body.fault));
        const times = check(() => parseTimes(body.times));
        faults.set(upstream, path, fault, times);
        return faultList();
      },
      DELETE: () => {
        faults.clear();
        return faultList();
      },
    },
    '/requests': {
      GET: requestCounts,
      DELETE: () => {
        log.reset();
        return requestCounts();
      },
    },
    '/status-feed': {
      GET: feedOverview,
      PUT: async (request) => {
        const body = await readJsonObject(request, ['preset', 'components']);
        const preset = check(() => parsePreset(body.preset));
        const components = check(() => parseComponentStatuses(body.components));
        if (preset === undefined && components === undefined) {
          throw new BadRequestError('Expected "preset" and/or "components"');
        }
        if (preset !== undefined) {
          const feed = createSimulatedFeed({ ...STATUS_FEED_PRESETS[preset], now: new Date() });
          if (components) check(() => setComponentStatuses(feed, components));
          statusFeed.setFeed(feed);
        } else if (components) {
          // setComponentStatuses validates every id before changing anything.
          check(() => statusFeed.updateFeed((feed) => setComponentStatuses(feed, components)));
        }
        return feedOverview();
      },
    },
    '/status-feed/incidents': {
      POST: async (request) => {
        const body = await readJsonObject(request, [
          'id',
          'name',
          'impact',
          'status',
          'body',
          'components',
        ]);
        const input = check(() => ({
          id: optionalText(body.id, 'id', 64),
          name: optionalText(body.name, 'name', 500),
          impact:
            body.impact === undefined
              ? undefined
              : oneOf(body.impact, 'impact', STATUSPAGE_IMPACTS),
          status: oneOf(body.status, 'status', STATUSPAGE_INCIDENT_STATUSES),
          body: optionalText(body.body, 'body', 10_000),
          components: parseComponentStatuses(body.components),
        }));
        return posted((feed) => postIncidentUpdate(feed, input));
      },
    },
    '/status-feed/maintenances': {
      POST: async (request) => {
        const body = await readJsonObject(request, [
          'id',
          'name',
          'status',
          'body',
          'componentIds',
          'scheduledFor',
          'scheduledUntil',
        ]);
        const input = check(() => {
          const { componentIds } = body;
          if (
            componentIds !== undefined &&
            !(Array.isArray(componentIds) && componentIds.every((id) => typeof id === 'string'))
          ) {
            throw new TypeError('componentIds must be an array of component ids');
          }
          return {
            id: optionalText(body.id, 'id', 64),
            name: optionalText(body.name, 'name', 500),
            status: oneOf(body.status, 'status', STATUSPAGE_MAINTENANCE_STATUSES),
            body: optionalText(body.body, 'body', 10_000),
            componentIds: componentIds as string[] | undefined,
            scheduledFor: optionalDate(body.scheduledFor, 'scheduledFor'),
            scheduledUntil: optionalDate(body.scheduledUntil, 'scheduledUntil'),
          };
        });
        return posted((feed) => postMaintenanceUpdate(feed, input));
      },
    },
    '/verification': {
      GET: verificationOverview,
      PUT: async (request) => {
        const fields = ['chains', 'contracts', 'serverVersion', 'etherscan'];
        const body = await readJsonObject(request, fields);
        if (fields.every((field) => body[field] === undefined)) {
          throw new BadRequestError(`Expected one or more of ${fields.join(', ')}`);
        }
        // Everything is checked before anything changes.
        const chains =
          body.chains === undefined || body.chains === null
            ? body.chains
            : check(() => parseSourcifyChains(body.chains));
        const contracts =
          body.contracts === undefined
            ? []
            : check(() => {
                if (!Array.isArray(body.contracts)) {
                  throw new TypeError('contracts must be an array of contracts');
                }
                return body.contracts.map(parseVerifiableContract);
              });
        const serverVersion =
          body.serverVersion === undefined
            ? undefined
            : check(() => parseServerVersion(body.serverVersion));
        const etherscan =
          body.etherscan === undefined ? undefined : check(() => parseEtherscan(body.etherscan));
        if (chains !== undefined) verification.setChains(chains);
        for (const contract of contracts) verification.addContract(contract);
        if (serverVersion !== undefined) verification.setServerVersion(serverVersion);
        if (etherscan === null) verification.setEtherscanFailure(null);
        else if (etherscan !== undefined) {
          const { failure, times } = etherscan;
          verification.setEtherscanFailure(failure, times === null ? {} : { times });
        }
        return verificationOverview();
      },
      DELETE: () => {
        verification.reset();
        return verificationOverview();
      },
    },
    '/verification/v2': {
      GET: apiV2Overview,
      PUT: async (request) => {
        const body = await readJsonObject(request, ['jobDelayMs', 'outcomes', 'abandonStuckJobs']);
        if (
          body.jobDelayMs === undefined &&
          body.outcomes === undefined &&
          body.abandonStuckJobs === undefined
        ) {
          throw new BadRequestError('Expected "jobDelayMs", "outcomes" and/or "abandonStuckJobs"');
        }
        if (body.abandonStuckJobs !== undefined && body.abandonStuckJobs !== true) {
          throw new BadRequestError('"abandonStuckJobs" must be true');
        }
        // Everything is checked before anything changes.
        const delay =
          body.jobDelayMs === undefined ? undefined : check(() => parseJobDelay(body.jobDelayMs));
        const outcomes =
          body.outcomes === undefined ? [] : check(() => parseOutcomes(body.outcomes));
        if (delay !== undefined) verification.setJobDelay(delay);
        for (const { target, outcome, times } of outcomes) {
          verification.setOutcome(target, outcome, times === null ? {} : { times });
        }
        if (body.abandonStuckJobs === true) verification.abandonStuckJobs();
        return apiV2Overview();
      },
    },
  };

  return async (request) => {
    const route = Object.hasOwn(routes, request.path) ? routes[request.path] : undefined;
    if (!route) {
      return jsonResponse(404, {
        error: `Unknown control path ${CONTROL_PREFIX}${request.path}`,
        paths: Object.keys(routes).map((path) => `${CONTROL_PREFIX}${path}`),
      });
    }
    const handler = Object.hasOwn(route, request.method) ? route[request.method] : undefined;
    if (!handler) {
      const allowed = Object.keys(route).join(', ');
      return jsonResponse(405, { error: `Use ${allowed}` }, { allow: allowed });
    }
    try {
      return await handler(request);
    } catch (error) {
      if (error instanceof BadRequestError) return jsonResponse(400, { error: error.message });
      if (error instanceof RequestBodyTooLargeError) {
        return jsonResponse(413, { error: error.message }, { connection: 'close' });
      }
      throw error;
    }
  };
}
