/**
 * The floor of SSE opening for `bench/fanout.ts`: a bare node:http server that takes the same SSE
 * POST the gateway takes, reads its body, answers `200 text/event-stream` with one `next` event
 * and keeps the connection, and nothing else. What opening costs below the gateway: node's HTTP
 * parsing and the kernel's accept, reads and writes.
 *
 * `FLOOR_WORKERS` (default 1) processes serve, as the gateway's `GATEWAY_WORKERS` do: with more
 * than one, a node:cluster primary forks them and, with `FLOOR_BALANCE=cluster` (the default),
 * hands connections to them round-robin; with `FLOOR_BALANCE=reuseport` each worker listens on
 * its own socket (SO_REUSEPORT) and the kernel spreads the connections. `GET /health` answers 200
 * once a process listens. `PORT` and `HOST` say where.
 *
 * On SIGUSR2 (to the process the bench started; a primary passes it on to every worker at once,
 * as the gateway's workers hear a change at once) each serving process writes one more event to
 * every stream it holds, `status` `FLOOR` and `detectedAt` the moment the signal came, 64 streams
 * a turn of the event loop as the gateway's hub does: the floor of a fan-out.
 */
import cluster from 'node:cluster';
import { createServer } from 'node:http';

const workers = Math.max(1, Number(process.env.FLOOR_WORKERS ?? 1) || 1);
const reusePort = process.env.FLOOR_BALANCE === 'reuseport';
const port = Number(process.env.PORT ?? 0);
const host = process.env.HOST ?? '127.0.0.1';

const EVENT = 'event: next\ndata: {"data":{"floor":true}}\n\n';

if (workers > 1 && cluster.isPrimary) {
  for (let i = 0; i < workers; i += 1) cluster.fork();
  // A floor that lost a worker would measure less than the floor: the bench sees it by its pids.
  cluster.on('exit', (worker, code, signal) => {
    console.error(`sse-floor: worker ${worker.process.pid} exited (${signal ?? code})`);
  });
  // The bench signals the floor's process; its workers are signalled at once.
  process.on('SIGUSR2', () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGUSR2');
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      for (const worker of Object.values(cluster.workers ?? {})) worker?.kill();
      process.exit(0);
    });
  }
} else {
  const held = new Set<import('node:http').ServerResponse>();
  process.on('SIGUSR2', () => {
    const event = `event: next\ndata: {"data":{"floor":{"status":"FLOOR","detectedAt":"${new Date().toISOString()}"}}}\n\n`;
    const responses = [...held];
    const write = (from: number) => {
      for (let i = from; i < Math.min(from + 64, responses.length); i += 1) {
        responses[i]?.write(event);
      }
      if (from + 64 < responses.length) setImmediate(write, from + 64);
    };
    write(0);
  });
  const server = createServer((request, response) => {
    if (request.method === 'GET' && request.url === '/health') {
      response.end('ok');
      return;
    }
    // The body is read as the gateway reads it, and not parsed: the floor answers any request.
    request.resume();
    request.on('end', () => {
      response.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
      });
      response.write(EVENT);
      held.add(response);
      response.once('close', () => held.delete(response));
    });
  });
  server.listen({
    port,
    host,
    backlog: 4096,
    ...(reusePort && workers > 1 ? { reusePort: true, exclusive: true } : {}),
  });
  process.on('SIGTERM', () => process.exit(0));
}
