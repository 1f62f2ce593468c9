/**
 * What a `verifyContract` caller waits for, and how many upstream round trips it costs, with the
 * session API and with APIv2 (job + polling), against the simulator. `npm run bench:verify`.
 */

import { VERIFIABLE_CONTRACTS } from '../simulator/src/verification/fixture.js';
import type { VerifyApi } from '../src/upstreams/verification/model.js';
import { startInProcessGateway } from './lib/in-process-gateway.js';

const RUNS = 20;
const contract = VERIFIABLE_CONTRACTS.find((candidate) => candidate.name === 'Greeter');
if (!contract) throw new Error('no Greeter fixture');
const MUTATION = `mutation ($input: VerifyContractInput!) { verifyContract(input: $input) { __typename } }`;

console.log(
  '| API | job time at the service | answer p50 | answer max | upstream requests per call |',
);
console.log('| --- | --- | --- | --- | --- |');
for (const [api, jobDelayMs] of [
  ['session', 0],
  ['v2', 150],
  ['v2', 2_000],
] as [VerifyApi, number][]) {
  // The simulator answers like today's Sourcify (APIv2 only): the session API needs 3.9.1.
  const running = await startInProcessGateway({
    env: { VERIFY_API: api },
    ...(api === 'session' ? { simulator: { sourcify: '3.9.1' } } : {}),
  });
  const { simulator, url } = running;
  simulator.verification.setJobDelay(jobDelayMs);
  const samples: number[] = [];
  let requests = 0;
  for (let i = 0; i < RUNS; i += 1) {
    simulator.verification.reset();
    simulator.verification.setJobDelay(jobDelayMs);
    simulator.resetRequests();
    const started = performance.now();
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: MUTATION,
        variables: { input: { address: contract.address, chainId: contract.chainId } },
      }),
    });
    const text = await response.text();
    if (!text.includes('VerificationResult')) throw new Error(text);
    samples.push(performance.now() - started);
    requests += simulator.requestCount();
  }
  samples.sort((a, b) => a - b);
  const p50 = samples[Math.floor(samples.length / 2)] ?? 0;
  const max = samples.at(-1) ?? 0;
  console.log(
    `| ${api} | ${api === 'session' ? 'n/a' : `${jobDelayMs} ms`} | ${p50.toFixed(1)} ms | ${max.toFixed(1)} ms | ${(requests / RUNS).toFixed(1)} |`,
  );
  await running.close();
}
