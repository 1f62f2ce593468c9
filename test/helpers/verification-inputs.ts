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

/**
 * One Solidity file as the libraries a Foundry or Hardhat build pulls in are written: NatSpec,
 * imports, custom errors, events, string literals (escaped quotes once in JSON), and, with
 * `nonLatin1`, a comment with an em dash, as many real sources have (V8 then keeps the whole
 * text, and that source, two bytes a character).
 */
function solidityFile(index: number, nonLatin1: boolean): string {
  const name = `Module${index}`;
  const functions = Array.from(
    { length: 24 },
    (_, f) => `
    /**
     * @notice Moves \`amount\` of the caller's balance in slot ${f} to \`to\`.
     * @dev Reverts with {InsufficientBalance} when the balance is short; emits {Moved}.
     */
    function move${f}(address to, uint256 amount) external returns (bool) {
        uint256 balance = _balances[${f}][msg.sender];
        if (balance < amount) revert InsufficientBalance(msg.sender, balance, amount);
        require(to != address(0), "${name}: transfer to the zero address");
        unchecked {
            _balances[${f}][msg.sender] = balance - amount;
        }
        _balances[${f}][to] += amount;
        emit Moved(msg.sender, to, amount, ${f});
        return true;
    }
`,
  ).join('');
  return `// SPDX-License-Identifier: MIT
// ${nonLatin1 ? 'Balances per slot — kept apart so that one slot never reads another.' : 'Balances per slot, kept apart so that one slot never reads another.'}
pragma solidity ^0.8.20;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Module${index + 1}} from "./Module${index + 1}.sol";

/// @title ${name}
/// @author The project's contributors
contract ${name} is Ownable {
    error InsufficientBalance(address account, uint256 balance, uint256 needed);
    event Moved(address indexed from, address indexed to, uint256 amount, uint256 slot);

    mapping(uint256 => mapping(address => uint256)) private _balances;

    constructor(address owner) Ownable(owner) {}
${functions}}
`;
}

/**
 * A standard JSON input of about `bytes` (at least the contract's own source): `contract`'s
 * source and as many library-like files as fit, with the settings a Foundry build writes. A real
 * input is made of long strings and few values: 8 MiB of it is about 600 sources.
 */
export function largeStdJsonInput(
  bytes: number,
  {
    contract = GREETER,
    nonLatin1 = false,
  }: { contract?: VerifiableContract; nonLatin1?: boolean } = {},
) {
  const sources: Record<string, { content: string }> = {
    [contract.compiledPath]: { content: 'contract {}' },
  };
  let size = 0;
  for (let index = 0; size < bytes; index += 1) {
    const content = solidityFile(index, nonLatin1);
    sources[`lib/modules/src/Module${index}.sol`] = { content };
    size += Buffer.byteLength(JSON.stringify(content)) + 40;
  }
  return {
    language: 'Solidity',
    sources,
    settings: {
      remappings: [
        '@openzeppelin/contracts/=lib/openzeppelin-contracts/contracts/',
        'forge-std/=lib/forge-std/src/',
        'ds-test/=lib/forge-std/lib/ds-test/src/',
      ],
      optimizer: { enabled: true, runs: 200 },
      metadata: { useLiteralContent: false, bytecodeHash: 'ipfs', appendCBOR: true },
      outputSelection: {
        '*': {
          '*': ['abi', 'evm.bytecode', 'evm.deployedBytecode', 'evm.methodIdentifiers', 'metadata'],
          '': ['ast'],
        },
      },
      evmVersion: 'paris',
      viaIR: false,
      libraries: {},
    },
  };
}
