import {
  fixtureContract,
  type VerifiableContract,
} from '../../simulator/src/verification/fixture.js';

/*
 * Inputs of the source verifications for the simulator's fixture contracts: what matches the
 * contract as deployed (the simulator compiles nothing; see its README).
 */

const GREETER = fixtureContract('Greeter');

/** A standard JSON input with the contract's one source. */
export const stdJsonInput = (contract: VerifiableContract = GREETER, content = 'contract {}') => ({
  language: 'Solidity',
  sources: { [contract.compiledPath]: { content } },
  settings: { optimizer: { enabled: false, runs: 200 } },
});

/** `VerifyFromSourceInput` that verifies `contract`, with `extra` fields replaced. */
export const sourceInput = (
  contract: VerifiableContract = GREETER,
  extra: Record<string, unknown> = {},
) => ({
  address: contract.address,
  chainId: contract.chainId,
  stdJsonInput: stdJsonInput(contract),
  compilerVersion: contract.compilerVersion,
  contractIdentifier: `${contract.compiledPath}:${contract.name}`,
  ...extra,
});

/** `VerifyFromMetadataInput` that verifies `contract`. */
export const metadataInput = (contract: VerifiableContract = GREETER) => ({
  address: contract.address,
  chainId: contract.chainId,
  metadata: {
    compiler: { version: contract.compilerVersion },
    language: 'Solidity',
    settings: { compilationTarget: { [contract.compiledPath]: contract.name } },
    sources: { [contract.compiledPath]: { keccak256: '0x01' } },
  },
  sources: { [contract.compiledPath]: 'contract {}' },
});
