/**
 * The raw floor of `npm run bench`: a bare node:http server that answers, from memory, the exact
 * bytes the gateway answered for the same request body, with the same headers (content type,
 * ETag, Cache-Control, Vary, request id: as captured). No GraphQL, no upstream: what serving
 * those bytes over HTTP costs on this machine.
 *
 * Env: PORT, HOST, RAW_FLOOR_FIXTURE (a JSON file: `{ contentType, status, headers, fallback,
 * byRequest }`, bodies base64, `byRequest` keyed by the exact request body).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

interface Fixture {
  contentType: string;
  status: number;
  /** Sent with every answer (the content type among them); the length is set per body. */
  headers?: Record<string, string>;
  fallback: string;
  byRequest: Record<string, string>;
}

const fixture = JSON.parse(
  readFileSync(process.env.RAW_FLOOR_FIXTURE ?? 'raw-floor.json', 'utf8'),
) as Fixture;

/** An answer's bytes and its headers, made once. */
const answer = (base64: string) => {
  const body = Buffer.from(base64, 'base64');
  const headers = {
    'content-type': fixture.contentType,
    ...fixture.headers,
    'content-length': body.length,
  };
  return { body, headers };
};
const fallback = answer(fixture.fallback);
const byRequest = new Map(
  Object.entries(fixture.byRequest).map(([request, body]) => [request, answer(body)]),
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
    const { body, headers } =
      byRequest.size === 0
        ? fallback
        : (byRequest.get(Buffer.concat(chunks).toString()) ?? fallback);
    response.writeHead(fixture.status, headers);
    response.end(body);
  });
});

server.listen(Number(process.env.PORT ?? 4020), process.env.HOST ?? '127.0.0.1');
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
