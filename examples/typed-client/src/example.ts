/**
 * Runs a few of the operations against a gateway, by persisted document id:
 *
 *   node --experimental-strip-types src/example.ts              # http://localhost:4000/graphql
 *   GATEWAY_URL=https://gateway.example/graphql node --experimental-strip-types src/example.ts
 *   node --experimental-strip-types src/example.ts --verify     # also runs verifyContract
 *
 * Not run in CI: it needs a running gateway (`npm start` at the repository root) that serves the
 * persisted documents of ../../persisted-documents.json.
 */
import { createClient, documentId, type ExecutionResult } from './client.ts';
import {
  ComponentById,
  ContractLookup,
  PageTree,
  StatusBanner,
  SupportedChains,
  VerifyContract,
} from './operations.ts';

const url = process.env.GATEWAY_URL ?? 'http://localhost:4000/graphql';
const client = createClient({ url });

/** Prints a result's errors with their codes; true when there were any. */
function reportErrors(label: string, result: ExecutionResult<unknown>): boolean {
  for (const error of result.errors ?? []) {
    console.error(`${label}: ${error.extensions?.code ?? 'ERROR'} ${error.message}`);
  }
  return (result.errors?.length ?? 0) > 0;
}

console.log(`Gateway: ${url}`);
console.log(`StatusBanner is persisted as ${documentId(StatusBanner)}`);

// No variables: the argument may be left out. `data` is typed as StatusBannerQuery.
const banner = await client.execute(StatusBanner);
reportErrors('StatusBanner', banner);
if (banner.data) {
  const { status, fetchedAt } = banner.data.statusPage;
  console.log(`Status: ${status.indicator} (${status.description}), as of ${fetchedAt}`);
}

// A query can go as GET (`?documentId=…`), e.g. for HTTP caches.
const tree = await client.execute(PageTree, undefined, { method: 'GET' });
reportErrors('PageTree', tree);
const firstComponentId = tree.data?.statusPage.components[0]?.id;
for (const component of tree.data?.statusPage.components ?? []) {
  const children = component.children.map((child) => `${child.name}: ${child.status}`);
  console.log(
    `- ${component.name}: ${component.status}${children.length ? ` [${children.join(', ')}]` : ''}`,
  );
}

// Required variables are type-checked: `{ id }` must be given, and be a string.
if (firstComponentId !== undefined) {
  const component = await client.execute(ComponentById, { id: firstComponentId });
  reportErrors('ComponentById', component);
  console.log(`Component ${firstComponentId}:`, component.data?.component ?? 'not found');
}

const chains = await client.execute(SupportedChains);
reportErrors('SupportedChains', chains);
console.log(`Supported chains: ${chains.data?.supportedChains.length ?? 'unknown'}`);

const weth = { chainId: '1', address: '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2' };
const contract = await client.execute(ContractLookup, weth);
reportErrors('ContractLookup', contract);
console.log('WETH:', contract.data?.contract ?? 'not verified');

if (process.argv.includes('--verify')) {
  const verification = await client.execute(VerifyContract, { input: weth });
  reportErrors('VerifyContract', verification);
  const outcome = verification.data?.verifyContract;
  // Expected failures are results: `__typename` narrows the union.
  if (outcome) {
    switch (outcome.__typename) {
      case 'VerificationResult':
        for (const verified of outcome.contracts) {
          console.log(`Verified ${verified.name ?? verified.address}: ${verified.status}`);
        }
        break;
      case 'VerificationPending':
        console.log(`Still running: poll verificationJob(id: "${outcome.verificationId}")`);
        break;
      case 'RateLimitedError':
        console.log(
          `Rate limited, retry in ${outcome.retryAfterSeconds ?? '?'} s: ${outcome.message}`,
        );
        break;
      case 'InvalidInputError':
        console.log(`Invalid ${outcome.field}: ${outcome.message}`);
        break;
      default:
        console.log(`${outcome.__typename}: ${outcome.message}`);
    }
  }
}
