/**
 * Change events across replicas over a real redis-server: two replicas in this process, each with
 * its own connection and bus, and page events told apart by their page id.
 */
import { describe, expect, it } from 'vitest';
import type {
  PageChangeEvent,
  StatusChangeEvent,
} from '../../../src/upstreams/status-feed/change-event.js';
import { RedisChangeBus } from '../../../src/upstreams/status-feed/redis-change-bus.js';
import { eventually, sleep } from '../../helpers/eventually.js';
import { useRedisServer } from '../../helpers/redis-server.js';

const redisServer = useRedisServer();

async function replicas(count: number) {
  return (await redisServer.replicas(count)).map((connection) => {
    const bus = new RedisChangeBus({
      redis: connection.redis,
      logger: connection.logger,
    });
    const received: StatusChangeEvent[] = [];
    bus.subscribe((event) => received.push(event));
    return { bus, received, connection };
  });
}

const event = (pageId: string): PageChangeEvent => ({
  type: 'page',
  pageId,
  detectedAt: new Date().toISOString(),
});

describe('RedisChangeBus', () => {
  it("delivers an event once to every replica's subscribers, in publish order", async () => {
    const [a, b, c] = await replicas(3);
    if (!a || !b || !c) throw new Error('three replicas');
    const events = ['MAJOR_OUTAGE', 'DEGRADED_PERFORMANCE', 'OPERATIONAL'].map(event);
    for (const published of events) a.bus.publish(published);
    // The publisher's own subscribers get it at once, without waiting for Redis.
    expect(a.received).toEqual(events);
    await eventually(() => b.received.length === 3 && c.received.length === 3);
    await sleep(50);
    for (const replica of [a, b, c]) expect(replica.received).toEqual(events);
  });

  it('keeps delivering to its own subscribers while Redis is down, and joins again after', async () => {
    const [a, b] = await replicas(2);
    if (!a || !b) throw new Error('two replicas');
    await redisServer.server.kill();
    await eventually(() => !a.connection.redis.connected);
    expect(() => a.bus.publish(event('MAJOR_OUTAGE'))).not.toThrow();
    expect(a.received).toHaveLength(1);
    await redisServer.server.restart();
    await eventually(() => a.connection.redis.connected && b.connection.redis.connected);
    a.bus.publish(event('OPERATIONAL'));
    await eventually(() => b.received.length === 1);
    expect(b.received[0]).toMatchObject({ pageId: 'OPERATIONAL' });
    expect(a.received.map((received) => received.type === 'page' && received.pageId)).toEqual([
      'MAJOR_OUTAGE',
      'OPERATIONAL',
    ]);
  });

  it('stops delivering once closed, and ignores what is not an event', async () => {
    const [a, b] = await replicas(2);
    if (!a || !b) throw new Error('two replicas');
    await a.connection.redis.run((redis) =>
      redis.publish(a.connection.redis.key('changes'), 'not json'),
    );
    await a.connection.redis.run((redis) =>
      redis.publish(a.connection.redis.key('changes'), JSON.stringify({ origin: 'x', event: 7 })),
    );
    await b.bus.close();
    a.bus.publish(event('MAJOR_OUTAGE'));
    await sleep(100);
    expect(b.received).toEqual([]);
    expect(a.received).toHaveLength(1);
  });
});
