import type {
  ContractFiles,
  EXPLORER_PATHS,
  VerificationResult,
  VerifiedContract,
} from '../upstreams/verification/model.js';
import { builder } from './builder.js';
import { VERIFICATION_ERRORS } from './errors.js';

const ExplorerEnum = builder.enumType('Explorer', {
  description: 'A block explorer the verification service can fetch verified sources from.',
  values: {
    ETHERSCAN: {
      description: 'Etherscan, or an Etherscan-compatible explorer of the chain.',
      value: 'ETHERSCAN',
    },
  } as const satisfies Record<keyof typeof EXPLORER_PATHS, unknown>,
});

const VerificationStatusEnum = builder.enumType('VerificationStatus', {
  description: 'How well the deployed bytecode matches the compiled sources.',
  values: {
    PERFECT: {
      description: 'Full match: bytecode and metadata (so comments and file names too) match.',
    },
    PARTIAL: {
      description: 'The bytecode matches but the metadata differs, e.g. comments or file names.',
    },
    EXTRA_FILE_INPUT_BUG: {
      description:
        'Compiled with a Solidity version that added files to its input by mistake; verifiable only with those files.',
    },
    ERROR: { description: 'Verification failed; see `statusMessage`.' },
    UNKNOWN: { description: 'The service sent a status this gateway does not know yet.' },
  } as const,
});

const VerifyContractInputRef = builder.inputType('VerifyContractInput', {
  description: 'A deployed contract to verify from its verified sources on a block explorer.',
  fields: (t) => ({
    address: t.string({
      required: true,
      description:
        "The contract's address: 0x and 40 hex digits. Mixed case must be a valid EIP-55 checksum.",
    }),
    chainId: t.string({
      required: true,
      description: 'Decimal id of the chain it is deployed on, e.g. "1". See `supportedChains`.',
    }),
    apiKey: t.string({
      required: false,
      description:
        'Your API key for the explorer, if the service needs one. Sent to the verification service only; never stored, logged or returned.',
    }),
    explorer: t.field({
      type: ExplorerEnum,
      required: true,
      defaultValue: 'ETHERSCAN',
      description: 'The explorer to fetch the sources from.',
    }),
  }),
});

const ContractFilesRef = builder.objectRef<ContractFiles>('ContractFiles').implement({
  description: 'The source files of a contract in the verification session.',
  fields: (t) => ({
    found: t.exposeStringList('found', { description: 'Paths of the files the session has.' }),
    missing: t.exposeStringList('missing', {
      description: 'Paths the metadata names but the session lacks; add them to verify.',
    }),
    invalid: t.exposeStringList('invalid', {
      description: 'Paths whose content does not match the hash in the metadata.',
    }),
  }),
});

const VerifiedContractRef = builder.objectRef<VerifiedContract>('VerifiedContract').implement({
  description: 'A contract in your verification session, with how far its verification got.',
  fields: (t) => ({
    verificationId: t.exposeID('verificationId', {
      description: 'Identifier of the contract within the session.',
    }),
    compiledPath: t.exposeString('compiledPath', {
      description: 'Path of the source file that defines the contract, e.g. `contracts/Token.sol`.',
    }),
    name: t.exposeString('name', { description: 'Contract name, e.g. `Token`.' }),
    compilerVersion: t.exposeString('compilerVersion', {
      nullable: true,
      description: 'Compiler version, e.g. `0.8.24+commit.e11b9ed9`; null when not known yet.',
    }),
    address: t.exposeString('address', {
      nullable: true,
      description: 'The address it was verified at; null until one is given.',
    }),
    chainId: t.exposeString('chainId', {
      nullable: true,
      description: 'Decimal id of its chain; null until one is given.',
    }),
    files: t.field({
      type: ContractFilesRef,
      description: 'Its source files: found, missing and invalid.',
      resolve: (contract) => contract.files,
    }),
    status: t.expose('status', { type: VerificationStatusEnum, description: 'The match found.' }),
    statusMessage: t.exposeString('statusMessage', {
      nullable: true,
      description: "The service's explanation of the status, e.g. why verification failed.",
    }),
    storageTimestamp: t.expose('storageTimestamp', {
      type: 'DateTime',
      nullable: true,
      description: 'When the verified contract was stored; null when it was not (yet).',
    }),
  }),
});

const VerificationResultRef = builder
  .objectRef<VerificationResult>('VerificationResult')
  .implement({
    description: 'Your verification session after the request: every contract it holds.',
    fields: (t) => ({
      contracts: t.field({
        type: [VerifiedContractRef],
        description: 'The contracts of your session, including those verified earlier.',
        resolve: (result) => result.contracts,
      }),
      unused: t.exposeStringList('unused', {
        description: 'Files in the session that belong to no contract.',
      }),
    }),
  });

builder.mutationField('verifyContract', (t) =>
  t.field({
    type: VerificationResultRef,
    description:
      'Verifies a deployed contract with the sources its block explorer has. Your session at the verification service travels in an HttpOnly cookie, so later calls add to the same session. Expected failures are results: switch on `__typename`.',
    args: { input: t.arg({ type: VerifyContractInputRef, required: true }) },
    errors: {
      types: VERIFICATION_ERRORS,
      directResult: true,
      union: {
        name: 'VerifyContractResult',
        description: 'The session after a successful verification, or why it did not happen.',
      },
    },
    resolve: (_root, { input }, { verification, verificationSession, requestId }) =>
      verification.verifyContract(input, verificationSession, requestId),
  }),
);
