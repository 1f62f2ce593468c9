/**
 * A replica of two workers (`GATEWAY_WORKERS=2`): the production entry forks them on one port
 * against the simulator, without Redis. They answer requests between them, fetch each followed
 * document once per TTL between them, deliver a change found by one worker's poll to the
 * subscribers of both, answer `/metrics` for the replica, and are replaced when one dies; SIGTERM
 * drains them all.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../simulator/src/server.js';
import { setComponentStatuses } from '../../simulator/src/status-feed/status-rollup.js';
import { eventually } from '../helpers/eventually.js';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway-process.js';
import { subscribeSse } from '../helpers/subscriptions.js';

const TTL_MS = 500;
const SUMMARY = '/status/api/v2/summary.json';
const CHANGES = `subscription {
  componentStatusChanged { component { id status } previousStatus status detectedAt }
}`;
const QUERY = '{ statusPage { status { indicator } } }';

const subscribe = () =>
  subscribeSse<{ componentStatusChanged: Record<string, unknown> }>(replica.origin, CHANGES);

let simulator: Simulator;
let replica: GatewayProcess;

/** The workers (node:cluster's ids) that logged `message`, in the order they first did. */
const workersOf = (message: string) => [
  ...new Set(replica.logged(message).map((line) => line.worker as number)),
];

/**
 * A request on a connection of its own: node:cluster hands each connection to a worker. After a
 * worker is killed, a pooled connection may be one the primary handed to it in the instant it
 * died: node:cluster's round robin then holds it unanswered (docs/operations.md).
 */
function onNewConnection(
  origin: string,
  path: string,
  body?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const sent = request(
      `${origin}${path}`,
      {
        method: body === undefined ? 'GET' : 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        signal: AbortSignal.timeout(10_000),
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });
}

const postOnNewConnection = async (origin: string, query: string) =>
  (await onNewConnection(origin, '/graphql', JSON.stringify({ query }))).status;

/** A series of the replica's `/metrics`, scraped on a new connection. */
async function scrape(series: string): Promise<number | undefined> {
  const { text } = await onNewConnection(replica.origin, '/metrics');
  const line = text.split('\n').find((each) => each.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

beforeAll(async () => {
  simulator = await startSimulator();
  replica = await startGatewayProcess('workers', {
    NODE_ENV: 'production',
    GATEWAY_WORKERS: '2',
    STATUS_BASE_URL: simulator.statusBaseUrl,
    VERIFY_BASE_URL: simulator.verifyBaseUrl,
    STATUS_CACHE_TTL_MS: String(TTL_MS),
    STATUS_POLL_INTERVAL_MS: String(TTL_MS),
    LOG_REQUESTS: 'all',
    SHUTDOWN_GRACE_MS: '5000',
  });
  // Each worker says when it serves.
  await eventually(() => (readyWorkers() === 2 ? true : undefined), { timeoutMs: 20_000 });
}, 30_000);

/** The lines of the workers that said they serve. */
const readyLines = () =>
  replica.logs.filter((line) => /^GraphQL at /.test(String(line.msg)) && line.worker !== undefined);
const readyWorkers = () => readyLines().length;

afterAll(async () => {
  await replica?.stop();
  await simulator?.close();
});

describe('a replica of two workers', () => {
  it('answers on one port from both workers, and /metrics sums them', async () => {
    const sent = 8;
    for (let index = 0; index < sent; index++) {
      expect(await postOnNewConnection(replica.origin, QUERY)).toBe(200);
    }
    const answering = await eventually(() => {
      const pids = new Set(
        replica
          .logged('request')
          .filter((line) => line.path === '/graphql')
          .map((line) => line.worker),
      );
      return pids.size === 2 ? pids : undefined;
    });
    expect(answering.size).toBe(2);
    // Each worker answered some of them; the replica's count is all of them.
    const perWorker = [...answering].map(
      (worker) =>
        replica
          .logged('request')
          .filter((line) => line.path === '/graphql' && line.worker === worker).length,
    );
    expect(Math.max(...perWorker)).toBeLessThan(sent);
    expect(
      await replica.metric('http_requests_total{route="/graphql",status="200"}'),
    ).toBeGreaterThanOrEqual(sent);
    expect(await replica.metric('gateway_workers')).toBe(2);
  });

  it('delivers a change found by one poll to a subscriber on each worker, fetching once per TTL', async () => {
    // node:cluster hands connections to the workers in turn; other connections (probes,
    // scrapes) take turns too, so subscribers are opened until each worker holds one.
    const subscribers: Awaited<ReturnType<typeof subscribe>>[] = [];
    const extra: Awaited<ReturnType<typeof subscribe>>[] = [];
    const held = new Set<unknown>();
    for (let tries = 0; held.size < 2 && tries < 10; tries++) {
      const opened = replica.logged('subscription opened').length;
      const subscriber = await subscribe();
      const line = await eventually(() => replica.logged('subscription opened')[opened]);
      if (held.has(line.worker)) extra.push(subscriber);
      else {
        held.add(line.worker);
        subscribers.push(subscriber);
      }
    }
    await Promise.all(extra.map((subscriber) => subscriber.close()));
    try {
      expect(held.size).toBe(2);
      // Both pollers follow the page now; the replica fetches the summary once per TTL.
      simulator.resetRequests();
      const started = performance.now();
      const fetches = await eventually(
        () => (simulator.requestCount(SUMMARY) >= 5 ? simulator.requestCount(SUMMARY) : undefined),
        { timeoutMs: 10_000, intervalMs: 10 },
      );
      const elapsed = performance.now() - started;
      // Shared, a fetch waits for the TTL of the last, whichever worker made it; two workers
      // polling alone would fetch it about twice per TTL.
      expect(fetches).toBeLessThanOrEqual(Math.floor(elapsed / TTL_MS) + 1);

      const leaf = simulator.statusFeed.summary.components.find(
        (component) => !component.group && component.status === 'operational',
      );
      if (!leaf) throw new Error('the demo feed has an operational component');
      simulator.updateStatusFeed((feed) =>
        setComponentStatuses(feed, { [leaf.id]: 'major_outage' }),
      );
      const events = await Promise.all(subscribers.map((subscriber) => subscriber.next(10_000)));
      for (const event of events) {
        expect(event.data?.componentStatusChanged).toMatchObject({
          component: { id: leaf.id, status: 'MAJOR_OUTAGE' },
          previousStatus: 'OPERATIONAL',
          status: 'MAJOR_OUTAGE',
        });
      }
      // One poll found it: the same detection reached both workers' subscribers.
      const [first, second] = events.map((event) => event.data?.componentStatusChanged.detectedAt);
      expect(first).toBeDefined();
      expect(second).toBe(first);
    } finally {
      await Promise.all(subscribers.map((subscriber) => subscriber.close()));
    }
  });

  it('begins a `since` subscription on either worker with the change found between the query it names and it', async () => {
    const leaf = simulator.statusFeed.summary.components.find(
      (component) => !component.group && component.status === 'operational',
    );
    if (!leaf) throw new Error('the demo feed has an operational component');
    type Page = { statusPage: { fetchedAt: string; components: { id: string; status: string }[] } };
    const read = async () => {
      const { text } = await onNewConnection(
        replica.origin,
        '/graphql',
        JSON.stringify({ query: '{ statusPage { fetchedAt components { id status } } }' }),
      );
      const page = (JSON.parse(text) as { data: Page }).data.statusPage;
      return { ...page, status: page.components.find(({ id }) => id === leaf.id)?.status };
    };
    // Nobody subscribes: queries read the page, on whichever worker gets their connection.
    const answered = await read();
    expect(answered.status).toBe('OPERATIONAL');
    simulator.updateStatusFeed((feed) =>
      setComponentStatuses(feed, { [leaf.id]: 'partial_outage' }),
    );
    await eventually(async () => (await read()).status === 'PARTIAL_OUTAGE');

    // Subscribers with the first answer's `fetchedAt`, until each worker holds one.
    const subscribeSince = () =>
      subscribeSse<{ componentStatusChanged: Record<string, unknown> }>(
        replica.origin,
        `subscription ($ids: [ID!], $since: DateTime) {
          componentStatusChanged(ids: $ids, since: $since) { component { id } previousStatus status }
        }`,
        { ids: [leaf.id], since: answered.fetchedAt },
      );
    const held = new Map<unknown, Awaited<ReturnType<typeof subscribeSince>>>();
    const opened: Awaited<ReturnType<typeof subscribeSince>>[] = [];
    try {
      for (let tries = 0; held.size < 2 && tries < 10; tries++) {
        const before = replica.logged('subscription opened').length;
        const subscriber = await subscribeSince();
        opened.push(subscriber);
        const line = await eventually(() => replica.logged('subscription opened')[before]);
        if (!held.has(line.worker)) held.set(line.worker, subscriber);
      }
      expect(held.size).toBe(2);
      // Each begins with the change its worker heard of, whichever worker's query found it.
      for (const subscriber of held.values()) {
        const first = await subscriber.next(10_000);
        expect(first.data?.componentStatusChanged).toMatchObject({
          component: { id: leaf.id },
          previousStatus: 'OPERATIONAL',
          status: 'PARTIAL_OUTAGE',
        });
        expect(first.extensions).toEqual({ since: answered.fetchedAt });
      }
    } finally {
      await Promise.all(opened.map((subscriber) => subscriber.close()));
    }
  });

  it('replaces a worker that dies, and logs it', async () => {
    const [victim] = workersOf('request');
    const pid = readyLines().find((line) => line.worker === victim)?.pid;
    if (typeof pid !== 'number') throw new Error('a worker answered and said its pid');
    process.kill(pid, 'SIGKILL');
    const replaced = await eventually(() =>
      replica.logged('a worker exited; it is replaced').find((line) => line.workerPid === pid),
    );
    expect(replaced).toMatchObject({ worker: victim, signal: 'SIGKILL', code: null });
    await eventually(() => (readyWorkers() === 3 ? true : undefined), { timeoutMs: 20_000 });
    expect(await scrape('gateway_workers')).toBe(2);
    expect(await scrape('gateway_workers_replaced_total{reason="signal"}')).toBe(1);
    // The replica still answers, from the new worker too.
    for (let index = 0; index < 4; index++) {
      expect(await postOnNewConnection(replica.origin, QUERY)).toBe(200);
    }
  });

  it('drains every worker on SIGTERM and exits 0', async () => {
    await replica.stop(20_000);
    expect(await replica.exited).toBe('0');
    const stopped = replica.logged('stopped');
    // The two workers alive at the end stopped cleanly, then the primary (no `worker`).
    expect(stopped.filter((line) => line.worker !== undefined)).toHaveLength(2);
    expect(stopped.at(-1)).toMatchObject({ exitCode: 0 });
    expect(stopped.at(-1)?.worker).toBeUndefined();
    expect(replica.logged('shutting down every worker')).toHaveLength(1);
  });
});
