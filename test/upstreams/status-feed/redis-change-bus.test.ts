/**
 * Change events across replicas over a real redis-server: replicas in this process, each with its
 * own connection, snapshot store and bus. A page event is passed on by the others only when the
 * snapshot it names is the one stored in Redis and shows that page.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { PageChangeEvent, StatusChangeEvent } from '../../../src/core/status/change-event.js';
import { RedisSnapshotStore } from '../../../src/upstreams/redis-snapshot-store.js';
import { SnapshotCache } from '../../../src/upstreams/snapshot-cache.js';
import { RedisChangeBus } from '../../../src/upstreams/status-feed/redis-change-bus.js';
import { eventually } from '../../helpers/eventually.js';
import { useRedisServer } from '../../helpers/redis-server.js';

const redisServer = useRedisServer();

/** The page the upstream serves now: what each replica's document fetches. */
let servedPage = 'MAJOR_OUTAGE';
const PageDocument = z.object({ page: z.object({ id: z.string() }) });

async function replicas(count: number) {
  return (await redisServer.replicas(count)).map((connection) => {
    const snapshots = new RedisSnapshotStore(connection);
    const document = new SnapshotCache({
      load: async () => ({ page: { id: servedPage, slug: 'default' } }),
      ttlMs: 0,
      maxStaleMs: 0,
      sharing: snapshots.document({
        name: '/page.json',
        fetch: async () => ({ page: { id: servedPage } }),
        schema: PageDocument,
        // Every document says which configured page it is of, as the status feed's builds do.
        build: (wire) => ({ page: { ...wire.page, slug: 'default' } }),
        ttlMs: 0,
        retainMs: 60_000,
        failureTtlMs: 0,
        lockMs: 1_000,
      }),
    });
    const bus = new RedisChangeBus({
      redis: connection.redis,
      snapshots,
      logger: connection.logger,
    });
    const received: StatusChangeEvent[] = [];
    bus.subscribe((event) => received.push(event));
    return { bus, received, connection, document };
  });
}

/** The page event of the snapshot `replica` fetches now, with `pageId` served. */
async function event(
  replica: { document: SnapshotCache<{ page: { id: string; slug: string } }> },
  pageId: string,
): Promise<PageChangeEvent> {
  servedPage = pageId;
  const snapshot = await replica.document.latest();
  return {
    type: 'page',
    pageSlug: 'default',
    pageId,
    detectedAt: snapshot.fetchedAt.toISOString(),
  };
}

describe('RedisChangeBus', () => {
  it("delivers an event once to every replica's subscribers, in publish order", async () => {
    const [a, b, c] = await replicas(3);
    if (!a || !b || !c) throw new Error('three replicas');
    const published = await event(a, 'MAJOR_OUTAGE');
    const events = [published, published, published];
    for (const each of events) a.bus.publish(each);
    // The publisher's own subscribers get it at once, without waiting for Redis.
    expect(a.received).toEqual(events);
    // Nothing more comes: one more published after them (Redis keeps a publisher's order) is the
    // next each replica gets.
    a.bus.publish(published);
    await eventually(() => b.received.length >= 4 && c.received.length >= 4);
    for (const replica of [a, b, c]) expect(replica.received).toEqual([...events, published]);
  });

  it('keeps delivering to its own subscribers while Redis is down, and joins again after', async () => {
    const [a, b] = await replicas(2);
    if (!a || !b) throw new Error('two replicas');
    await redisServer.server.kill();
    await eventually(() => !a.connection.redis.connected);
    const alone = await event(a, 'MAJOR_OUTAGE');
    expect(() => a.bus.publish(alone)).not.toThrow();
    expect(a.received).toHaveLength(1);
    await redisServer.server.restart();
    await eventually(() => a.connection.redis.connected && b.connection.redis.connected);
    a.bus.publish(
      await eventually(async () => {
        const shared = await event(a, 'OPERATIONAL');
        // Fetched through Redis again (not alone), so that the others can check it.
        return a.connection.redis.connected ? shared : undefined;
      }),
    );
    await eventually(() => b.received.length === 1);
    expect(b.received[0]).toMatchObject({ pageId: 'OPERATIONAL' });
    expect(a.received.map((received) => received.type === 'page' && received.pageId)).toEqual([
      'MAJOR_OUTAGE',
      'OPERATIONAL',
    ]);
  });

  it('stops delivering once closed, and ignores what is not an event', async () => {
    // C, still open, shows what reached the replicas.
    const [a, b, c] = await replicas(3);
    if (!a || !b || !c) throw new Error('three replicas');
    await a.connection.redis.run((redis) =>
      redis.publish(a.connection.redis.key('changes'), 'not json'),
    );
    await a.connection.redis.run((redis) =>
      redis.publish(a.connection.redis.key('changes'), JSON.stringify({ origin: 'x', event: 7 })),
    );
    // A page event of no snapshot Redis holds.
    await a.connection.redis.run((redis) =>
      redis.publish(
        a.connection.redis.key('changes'),
        JSON.stringify({
          origin: 'x',
          name: '/page.json',
          version: 'forged',
          event: { type: 'page', pageId: 'FORGED', detectedAt: new Date().toISOString() },
        }),
      ),
    );
    await b.bus.close();
    const published = await event(a, 'MAJOR_OUTAGE');
    a.bus.publish(published);
    await eventually(() => c.received.length > 0);
    expect(c.received).toEqual([published]);
    expect(b.received).toEqual([]);
    expect(a.received).toHaveLength(1);
  });
});
