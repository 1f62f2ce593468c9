/**
 * `npm run supergraph`: Hive Gateway in front of the gateway, offline, as a platform team runs it.
 * The gateway starts as `npm start` starts it (`scripts/start.ts`: the built-in simulator stands in
 * for each upstream whose URL is unset) on `PORT` (4000); Hive Gateway's runtime serves, on
 * `SUPERGRAPH_PORT` (4001), the supergraph composed from this subgraph's SDL with the gateway's
 * URL, relaying the `verify_session` cookie as deploy/gateway.config.ts tells the compose stack's
 * Hive Gateway to, and subscriptions to the subgraph over SSE. SIGINT or SIGTERM stops both.
 *
 * The entry the gateway runs is the first argument (`dist/main.js` by default, as `npm start`, which
 * builds it when src/ changed; an entry in TypeScript is run from source).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { createGatewayRuntime, type GatewayRuntime } from '@graphql-hive/gateway-runtime';
import { composeServices } from '@theguild/federation-composition';
import { parse } from 'graphql';
import { gatewayConfig } from '../deploy/gateway.config.js';

const entry = process.argv[2] ?? 'dist/main.js';
const port = Number(process.env.PORT ?? 4000);
const supergraphPort = Number(process.env.SUPERGRAPH_PORT ?? 4001);
const subgraphUrl = `http://127.0.0.1:${port}/graphql`;
/** How long the gateway has to answer `/health` before the script gives up. */
const START_TIMEOUT_MS = 60_000;
/** `npm start`'s node flags (package.json): the gateway runs here as it runs there. */
const START_FLAGS = [
  '--no-allocation-site-pretenuring',
  '--no-memory-reducer',
  '--max-semi-space-size=8',
  '--max-old-space-size=256',
];

let stopping = false;
let router: GatewayRuntime | undefined;
let server: Server | undefined;
const gateway: ChildProcess = spawn(process.execPath, [...START_FLAGS, 'scripts/start.ts', entry], {
  env: {
    ...process.env,
    PORT: String(port),
    NODE_COMPILE_CACHE: 'node_modules/.cache/node-compile-cache',
  },
  stdio: 'inherit',
});
gateway.on('exit', (code, signal) => {
  // The gateway gone, nothing is left to put a graph in front of.
  if (!stopping) {
    console.error(`supergraph: the gateway exited (${signal ?? code}); stopping`);
    process.exit(1);
  }
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop(0));

const supergraph = (await healthy(`http://127.0.0.1:${port}/health`)) ? compose() : undefined;
if (supergraph === undefined) stop(1);
else {
  router = createGatewayRuntime({ supergraph, logging: 'warn', ...gatewayConfig });
  server = createServer(router).listen(supergraphPort, () => {
    console.log(
      `supergraph: Hive Gateway at http://127.0.0.1:${supergraphPort}/graphql, in front of the gateway at ${subgraphUrl}`,
    );
  });
  server.on('error', (error) => {
    console.error(
      `supergraph: cannot listen on SUPERGRAPH_PORT ${supergraphPort}: ${error.message}`,
    );
    stop(1);
  });
}

/** Whether the gateway answers `url` within `START_TIMEOUT_MS` (said when it does not). */
async function healthy(url: string): Promise<boolean> {
  const deadline = performance.now() + START_TIMEOUT_MS;
  while (performance.now() < deadline && !stopping) {
    try {
      if ((await fetch(url)).ok) return true;
    } catch {
      // Not listening yet.
    }
    await sleep(100);
  }
  if (!stopping)
    console.error(`supergraph: the gateway did not answer ${url} within ${START_TIMEOUT_MS} ms`);
  return false;
}

/** The supergraph of this subgraph's SDL at the gateway's URL; undefined (said) when it does not compose. */
function compose(): string | undefined {
  const composed = composeServices([
    {
      name: 'ledger-status',
      url: subgraphUrl,
      typeDefs: parse(readFileSync('schema.graphql', 'utf8')),
    },
  ]);
  if (!composed.supergraphSdl) {
    console.error(composed.errors?.map((error) => error.message).join('\n'));
  }
  return composed.supergraphSdl;
}

function stop(code: number): void {
  if (stopping) return;
  stopping = true;
  server?.close();
  void router?.dispose();
  gateway.once('exit', () => process.exit(code));
  gateway.kill('SIGTERM');
}
