/**
 * `npm start`: the gateway as built (`dist/main.js`, or the entry given as the first argument),
 * with the simulator standing in for each upstream whose URL is unset, so that a fresh clone
 * serves a working graph offline. The gateway itself never knows: it gets the simulator's URLs as
 * its configuration. Under NODE_ENV=production nothing is simulated, and the gateway refuses to
 * start without both URLs.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startSimulator } from '../simulator/src/server.js';
import { createLogger, flushLogger } from '../src/observability/logger.js';

const UPSTREAMS = [
  { variable: 'STATUS_BASE_URL', name: 'status feed', simulated: 'statusBaseUrl' },
  { variable: 'VERIFY_BASE_URL', name: 'verification service', simulated: 'verifyBaseUrl' },
] as const;

const entry = process.argv[2] ?? 'dist/main.js';
const env = process.env;
const unset = UPSTREAMS.filter(({ variable }) => !env[variable]?.trim());

// The gateway's own logger, so that log readers see one stream.
const logger = createLogger('info');

if (unset.length > 0 && env.NODE_ENV !== 'production') {
  const simulator = await startSimulator();
  for (const { variable, simulated } of unset) env[variable] = simulator[simulated];
}
for (const { variable, name } of UPSTREAMS) {
  const simulated = unset.some((upstream) => upstream.variable === variable);
  if (env.NODE_ENV === 'production' && simulated) continue;
  logger.info(
    { upstream: name, simulated, url: env[variable] },
    simulated
      ? `${name}: SIMULATED at ${env[variable]} (${variable} is unset; the built-in simulator answers)`
      : `${name}: real, at ${env[variable]}`,
  );
}
// Out before the gateway writes its own first line.
await flushLogger(logger);

await import(pathToFileURL(resolve(entry)).href);
