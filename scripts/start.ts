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

const UPSTREAMS = [
  { variable: 'STATUS_BASE_URL', name: 'status feed', simulated: 'statusBaseUrl' },
  { variable: 'VERIFY_BASE_URL', name: 'verification service', simulated: 'verifyBaseUrl' },
] as const;

const entry = process.argv[2] ?? 'dist/main.js';
const env = process.env;
const unset = UPSTREAMS.filter(({ variable }) => !env[variable]?.trim());

/** One line in the gateway's log format, so that log readers see one stream. */
const log = (msg: string, fields: Record<string, unknown> = {}) =>
  process.stdout.write(
    `${JSON.stringify({ level: 30, time: Date.now(), service: 'ledger-status-gateway', ...fields, msg })}\n`,
  );

if (unset.length > 0 && env.NODE_ENV !== 'production') {
  const simulator = await startSimulator();
  for (const { variable, simulated } of unset) env[variable] = simulator[simulated];
}
for (const { variable, name } of UPSTREAMS) {
  const simulated = unset.some((upstream) => upstream.variable === variable);
  if (env.NODE_ENV === 'production' && simulated) continue;
  log(
    simulated
      ? `${name}: SIMULATED at ${env[variable]} (${variable} is unset; the built-in simulator answers)`
      : `${name}: real, at ${env[variable]}`,
    { upstream: name, simulated, url: env[variable] },
  );
}

await import(pathToFileURL(resolve(entry)).href);
