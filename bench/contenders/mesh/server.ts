/**
 * The GraphQL Mesh contender of `npm run bench`: the supergraph composed by `mesh-compose` from
 * status-feed.openapi.yaml, served by Hive Gateway's runtime inside a node:http server, at its
 * default settings (the way its docs show it), logging at warn like the gateway.
 *
 * Env: PORT, HOST, SUPERGRAPH (path to the composed supergraph SDL).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createGatewayRuntime } from '@graphql-hive/gateway-runtime';

const supergraph = readFileSync(process.env.SUPERGRAPH ?? 'supergraph.graphql', 'utf8');
const runtime = createGatewayRuntime({ supergraph, logging: 'warn' });
const server = createServer(runtime);

server.listen(Number(process.env.PORT ?? 4030), process.env.HOST ?? '127.0.0.1');
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => {
    void Promise.resolve(runtime.dispose()).finally(() => process.exit(0));
  });
});
