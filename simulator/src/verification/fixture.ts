import type {
  SourcifyAbiParameter,
  SourcifyChain,
  SourcifyInvalidSource,
  SourcifyMissingSource,
  SourcifyVerificationStatus,
} from './types.js';

/**
 * A contract the fake block explorer has verified sources for, and what Sourcify makes of them.
 * Two contracts with the same compilation (name, path, compiler and sources), e.g. one contract
 * deployed on two chains, bring identical files: as on Sourcify, the second cannot be added to a
 * session that holds the first ("The contract didn't add any new file").
 */
export interface VerifiableContract {
  /** Decimal chain id, as Sourcify writes it: `'1'`. */
  readonly chainId: string;
  /** EIP-55 checksummed (any case is accepted on input and normalised). */
  readonly address: string;
  readonly name: string;
  /** Source path that defines the contract. */
  readonly compiledPath: string;
  /**
   * What it was compiled with. The session API never sends it (as sourcify-server 3.9.1 does
   * not); APIv2's contract lookup reports it under `compilation` when asked. Absent: unknown.
   */
  readonly compilerVersion?: string;
  /** Source paths the explorer had: `files.found`. */
  readonly sources: readonly string[];
  /** `files.missing`; default `{}`. A contract with missing sources is not verified (`error`). */
  readonly missing?: Readonly<Record<string, SourcifyMissingSource>>;
  /** `files.invalid`; default `{}`. */
  readonly invalid?: Readonly<Record<string, SourcifyInvalidSource>>;
  /** What verifying it gives. `perfect` and `partial` matches are then kept in storage. */
  readonly status: SourcifyVerificationStatus;
  /**
   * Sent while the contract is not in storage (with an `error` status, typically); a match
   * verified by the answer shows `""`.
   */
  readonly statusMessage?: string;
  /**
   * ISO timestamp: the contract was already in Sourcify's storage before the simulator started,
   * so every answer shows it. Otherwise a match gets one when first verified, shown from the
   * next answer on (the first answer never has one), as on Sourcify.
   */
  readonly storageTimestamp?: string;
  readonly constructorArgumentsArray?: readonly SourcifyAbiParameter[];
}

/**
 * The default chain list, in Sourcify's order (Ethereum chains first), shaped as the real servers
 * answer it: no `title`, `rpc` and `traceSupportedRPCs` empty. The real lists have 260 entries
 * (182 supported on 3.9.1, 192 on 3.12.1); the unsupported ones are Sourcify's deprecated chains.
 */
export const SOURCIFY_CHAINS: readonly SourcifyChain[] = [
  {
    name: 'Ethereum Mainnet',
    chainId: 1,
    rpc: [],
    traceSupportedRPCs: [],
    supported: true,
    etherscanAPI: true,
  },
  {
    // Deprecated: listed, not supported, and APIv2 fails on it with 500 internal_error.
    name: 'Goerli',
    chainId: 5,
    rpc: [],
    traceSupportedRPCs: [],
    supported: false,
    etherscanAPI: false,
  },
  {
    name: 'Sepolia',
    chainId: 11155111,
    rpc: [],
    traceSupportedRPCs: [],
    supported: true,
    etherscanAPI: true,
  },
  {
    name: 'Hedera Mainnet',
    chainId: 295,
    rpc: [],
    traceSupportedRPCs: [],
    supported: true,
    etherscanAPI: false,
  },
  {
    // The real Hedera Testnet has no Etherscan import; here it has one, so that the fixture's
    // Hedera contracts can be verified through the only explorer route Sourcify offers.
    name: 'Hedera Testnet',
    chainId: 296,
    rpc: [],
    traceSupportedRPCs: [],
    supported: true,
    etherscanAPI: true,
  },
  {
    name: 'Hedera Previewnet',
    chainId: 297,
    rpc: [],
    traceSupportedRPCs: [],
    supported: true,
    etherscanAPI: false,
  },
];

/**
 * What the fake explorer knows, by chain. Addresses are EIP-55 checksummed; Sourcify's answers
 * differ on purpose (statuses, optional fields present or absent).
 */
export const VERIFIABLE_CONTRACTS: readonly VerifiableContract[] = [
  {
    // Already in storage: every answer has a storageTimestamp.
    chainId: '1',
    address: '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2',
    name: 'WETH9',
    compiledPath: 'WETH9.sol',
    compilerVersion: '0.4.19+commit.c4cbbb05',
    sources: ['WETH9.sol'],
    status: 'perfect',
    storageTimestamp: '2021-09-23T13:22:17.214Z',
  },
  {
    chainId: '1',
    address: '0x6B175474E89094C44Da98b954EedeAC495271d0F',
    name: 'Dai',
    compiledPath: 'Dai.sol',
    compilerVersion: '0.5.12+commit.7709ece9',
    sources: ['Dai.sol'],
    status: 'perfect',
    constructorArgumentsArray: [{ internalType: 'uint256', name: 'chainId_', type: 'uint256' }],
  },
  {
    // A partial match.
    chainId: '1',
    address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
    name: 'FiatTokenProxy',
    compiledPath: 'FiatTokenProxy.sol',
    compilerVersion: '0.4.24+commit.e67f0147',
    sources: ['FiatTokenProxy.sol'],
    status: 'partial',
    constructorArgumentsArray: [
      { internalType: 'address', name: 'implementationContract', type: 'address' },
    ],
  },
  {
    // Hedera Testnet contract 0.0.5103215 (long-zero address).
    chainId: '296',
    address: '0x00000000000000000000000000000000004dDe6F',
    name: 'Greeter',
    compiledPath: 'contracts/Greeter.sol',
    compilerVersion: '0.8.24+commit.e11b9ed9',
    sources: ['contracts/Greeter.sol'],
    status: 'perfect',
    constructorArgumentsArray: [{ internalType: 'string', name: '_greeting', type: 'string' }],
  },
  {
    // Hedera Testnet contract 0.0.3976854: a source is missing, so it is not verified.
    chainId: '296',
    address: '0x00000000000000000000000000000000003cAE96',
    name: 'TokenManager',
    compiledPath: 'contracts/TokenManager.sol',
    compilerVersion: '0.8.20+commit.a1b79de6',
    sources: ['contracts/TokenManager.sol', 'contracts/interfaces/IHederaTokenService.sol'],
    missing: {
      '@openzeppelin/contracts/access/Ownable.sol': {
        keccak256: '0x5a9e5b8c4e6f1b2e0cd3b79e4a0f0f0b6c1a3d5e7f9b1c2d4e6f8a0b2c4d6e8f',
        urls: [
          'bzz-raw://3c5a2f0e9b8d7c6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a',
          'dweb:/ipfs/QmVUDkoThNVvRSbw7Y5yD3TEbQZ9aFzmqxWnSoEWAmr6oH',
        ],
      },
    },
    status: 'error',
  },
  {
    // Deployed with CREATE2 on Hedera Testnet; its bytecode does not match the sources.
    chainId: '296',
    address: '0xFb6C754640fc5A9fA30CA1a00Cd77838f1E4B049',
    name: 'Counter',
    compiledPath: 'contracts/Counter.sol',
    compilerVersion: '0.8.19+commit.7dd6d404',
    sources: ['contracts/Counter.sol'],
    status: 'error',
    statusMessage: "The deployed and recompiled bytecode don't match.",
  },
];

/** The fixture contract of that name, e.g. `WETH9`; throws for a name the fixture lacks. */
export function fixtureContract(name: string): VerifiableContract {
  const contract = VERIFIABLE_CONTRACTS.find((candidate) => candidate.name === name);
  if (!contract) throw new Error(`no fixture contract ${name}`);
  return contract;
}
