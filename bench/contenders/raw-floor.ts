/**
 * The raw floor of `npm run bench`: a bare node:http server that answers, from memory, the exact
 * bytes the gateway answered for the same request body, with the same content type. No GraphQL,
 * no upstream: what serving those bytes over HTTP costs on this machine.
 *
 * Env: PORT, HOST, RAW_FLOOR_FIXTURE (a JSON file: `{ contentType, status, fallback, byRequest }`,
 * bodies base64, `byRequest` keyed by the exact request body).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

interface Fixture {
  contentType: string;
  status: number;
  fallback: string;
  byRequest: Record<string, string>;
}

const fixture = JSON.parse(
  readFileSync(process.env.RAW_FLOOR_FIXTURE ?? 'raw-floor.json', 'utf8'),
) as Fixture;
const fallback = Buffer.from(fixture.fallback, 'base64');
const byRequest = new Map(
  Object.entries(fixture.byRequest).map(([request, body]) => [
    request,
    Buffer.from(body, 'base64'),
  ]),
);

const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/health') {
    response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    return;
  }
  // Read the whole request body, as any GraphQL server must, and pick the answer by it.
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const body =
      byRequest.size === 0
        ? fallback
        : (byRequest.get(Buffer.concat(chunks).toString()) ?? fallback);
    response.writeHead(fixture.status, {
      'content-type': fixture.contentType,
      'content-length': body.length,
    });
    response.end(body);
  });
});

server.listen(Number(process.env.PORT ?? 4020), process.env.HOST ?? '127.0.0.1');
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
