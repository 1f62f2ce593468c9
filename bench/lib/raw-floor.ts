import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type ContenderSpec, type GraphqlServer, postGraphql, ROOT } from './processes.js';

/** Where the benchmarks keep what they compile and capture. */
export const BENCH_CACHE = resolve(ROOT, 'node_modules/.cache/ledger-status-bench');
/** The contenders, compiled (`bench/tsconfig.contenders.json`). */
export const CONTENDERS = resolve(BENCH_CACHE, 'contenders');

/**
 * The gateway's answer headers the raw floor sends too, so that it serves the same bytes: all but
 * those node:http writes itself (date, connection, keep-alive) and the length, which the floor
 * sets per body. The floor's `x-request-id` and `cache-control` are the captured ones, the same
 * length as the gateway's.
 */
function sameBytesHeaders(headers: Record<string, string>): Record<string, string> {
  const sent = { ...headers };
  for (const name of ['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']) {
    delete sent[name];
  }
  return sent;
}

/** The raw floor answering with the answers captured in `fixture`. */
export function rawFloorSpec(fixture: string): ContenderSpec {
  return {
    name: 'raw-floor',
    script: resolve(CONTENDERS, 'raw-floor.js'),
    env: { RAW_FLOOR_FIXTURE: fixture },
    readyPath: '/health',
  };
}

/**
 * Asks `gateway` each of `bodies` and writes what it answered to `fixture`, as the raw floor reads
 * it (`bench/contenders/raw-floor.ts`), so that the floor sends the same bytes. Resolves with the
 * size of the first answer, in bytes.
 */
export async function captureRawFloorFixture(
  gateway: GraphqlServer,
  bodies: readonly string[],
  fixture: string,
): Promise<number> {
  const captured = new Map<string, Buffer>();
  let contentType = 'application/json';
  let status = 200;
  let headers: Record<string, string> = {};
  for (const body of bodies) {
    const answer = await postGraphql(gateway.url, body);
    if (answer.status !== 200 || answer.json.errors || !answer.json.data) {
      throw new Error(`gateway answer to capture: ${answer.status} ${answer.body}`);
    }
    // The load asks for no coding: the floor must not send these bytes as another one's.
    if (answer.headers['content-encoding'] !== undefined) {
      throw new Error(`gateway answer to capture is ${answer.headers['content-encoding']}`);
    }
    captured.set(body, answer.body);
    contentType = answer.contentType;
    status = answer.status;
    headers = answer.headers;
  }
  const [first] = captured.values();
  writeFileSync(
    fixture,
    JSON.stringify({
      contentType,
      status,
      headers: sameBytesHeaders(headers),
      fallback: (first ?? Buffer.alloc(0)).toString('base64'),
      byRequest:
        captured.size > 1
          ? Object.fromEntries(
              [...captured].map(([body, bytes]) => [body, bytes.toString('base64')]),
            )
          : {},
    }),
  );
  return first?.length ?? 0;
}
