import { setTimeout as sleep } from 'node:timers/promises';

/** Between one client's requests. */
const PAUSE_MS = 25;

/**
 * Clients that each send one request after another, `PAUSE_MS` apart, for `forMs`: reads that
 * overlap at every moment (at each TTL's end, say) without taking every core for the whole load,
 * which the suite's other files share. Resolves with the number of requests sent.
 */
export async function steadyLoad(
  { clients, forMs }: { clients: number; forMs: number },
  request: (client: number, n: number) => Promise<void>,
): Promise<number> {
  const started = Date.now();
  let n = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (Date.now() - started < forMs) {
        n += 1;
        await request(client, n);
        await sleep(PAUSE_MS);
      }
    }),
  );
  return n;
}
