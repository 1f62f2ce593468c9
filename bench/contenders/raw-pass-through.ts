/**
 * Context for `npm run bench`: a bare node:http server that fetches the upstream summary.json on
 * every request and returns its bytes. No GraphQL, no cache: one upstream request per operation.
 *
 * Env: PORT, HOST, UPSTREAM_URL (the status feed's `.../summary.json`).
 */
import { createServer } from 'node:http';

const upstreamUrl = process.env.UPSTREAM_URL ?? 'http://127.0.0.1:4010/status/api/v2/summary.json';

const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/health') {
    response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    return;
  }
  request.resume();
  request.on('end', async () => {
    try {
      const upstream = await fetch(upstreamUrl, { signal: AbortSignal.timeout(5_000) });
      const body = Buffer.from(await upstream.arrayBuffer());
      response.writeHead(upstream.status, {
        'content-type': upstream.headers.get('content-type') ?? 'application/json',
        'content-length': body.length,
      });
      response.end(body);
    } catch {
      response.writeHead(502, { 'content-type': 'application/json' });
      response.end('{"errors":[{"message":"upstream failed"}]}');
    }
  });
});

server.listen(Number(process.env.PORT ?? 4021), process.env.HOST ?? '127.0.0.1');
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
