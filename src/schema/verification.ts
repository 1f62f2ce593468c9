import { noteResult } from '../observability/request-scope.js';
import type {
  Compilation,
  ContractFiles,
  EXPLORER_PATHS,
  VerificationOutcome,
  VerificationPending,
  VerificationResult,
  VerifiedContract,
} from '../upstreams/verification/model.js';
import { builder } from './builder.js';
import type { GatewayContext } from './context.js';
import {
  InvalidInputErrorRef,
  RateLimitedErrorRef,
  settle,
  UpstreamUnavailableErrorRef,
  VerificationRejectedErrorRef,
} from './errors.js';
import { VerificationJobRef } from './verification-job.js';

const ExplorerEnum = builder.enumType('Explorer', {
  description: 'A block explorer the verification service can fetch verified sources from.',
  values: {
    ETHERSCAN: { description: 'Etherscan, or an Etherscan-compatible explorer of the chain.' },
  } as const satisfies Record<keyof typeof EXPLORER_PATHS, unknown>,
});

export const VerificationStatusEnum = builder.enumType('VerificationStatus', {
  description: 'How well the deployed bytecode matches the compiled sources.',
  values: {
    PERFECT: {
      description:
        'Full match: bytecode and metadata (so comments and file names too) match. APIv2 calls it `exact_match`.',
    },
    PARTIAL: {
      description:
        'The bytecode matches but the metadata differs, e.g. comments or file names. APIv2 calls it `match`.',
    },
    EXTRA_FILE_INPUT_BUG: {
      description:
        'Compiled with a Solidity version that added files to its input by mistake; verifiable only with those files.',
    },
    ERROR: { description: 'Verification failed; see `statusMessage`.' },
    UNKNOWN: { description: 'The service sent a status this gateway does not know yet.' },
  } as const,
});

/** The `address` of a verification's input. */
export const addressField = {
  required: true,
  description:
    "The contract's address: 0x and 40 hex digits. Mixed case must be a valid EIP-55 checksum.",
} as const;
/** The optional `creationTransactionHash` of an APIv2 verification's input. */
export const creationTransactionHashField = {
  required: false,
  description:
    'The hash of the transaction that created the contract (0x and 64 hex digits): lets the service get its creation bytecode reliably.',
} as const;
/** The `chainId` of a verification's input. */
export const chainIdField = {
  required: true,
  description: 'Decimal id of the chain it is deployed on, e.g. "1". See `supportedChains`.',
} as const;

const VerifyContractInputRef = builder.inputType('VerifyContractInput', {
  description: 'A deployed contract to verify from its verified sources on a block explorer.',
  fields: (t) => ({
    address: t.string(addressField),
    chainId: t.string(chainIdField),
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

/**
 * A compilation detail of a contract in a verification answer; for a matched contract whose answer
 * does not describe it (the session API leaves the compiler out, APIv2 all of it), from the
 * service's contract lookup: at most one upstream request per contract per operation, and only
 * when a field asks.
 */
const compilationDetail =
  (detail: keyof Compilation) =>
  async (contract: VerifiedContract, _args: object, { contracts }: GatewayContext) => {
    const { status, chainId, address } = contract;
    if (contract[detail] !== null) return contract[detail];
    if ((status !== 'PERFECT' && status !== 'PARTIAL') || !chainId || !address) return null;
    return (await contracts.load({ chainId, address }))?.compilation?.[detail] ?? null;
  };

const VerifiedContractRef = builder.objectRef<VerifiedContract>('VerifiedContract').implement({
  description:
    "A contract in a verification answer, with how far its verification got. The session API reports all but `compilerVersion`; APIv2 reports the match, address, chain and time. For a matched contract, the gateway fills `name`, `compiledPath` and `compilerVersion` from the service's contract lookup when the answer lacks them.",
  fields: (t) => ({
    verificationId: t.exposeID('verificationId', {
      description:
        'Identifier of the contract within the session, or of the APIv2 verification job.',
    }),
    compiledPath: t.string({
      nullable: true,
      description:
        'Path of the source file that defines the contract, e.g. `contracts/Token.sol`. With APIv2, looked up for a matched contract; null when the service does not report it.',
      resolve: compilationDetail('compiledPath'),
    }),
    name: t.string({
      nullable: true,
      description:
        'Contract name, e.g. `Token`. With APIv2, looked up for a matched contract; null when the service does not report it.',
      resolve: compilationDetail('name'),
    }),
    compilerVersion: t.string({
      nullable: true,
      description:
        "Compiler version, e.g. `0.8.24+commit.e11b9ed9`. Neither of the service's verification answers reports it (sourcify-server 3.9.1's session API leaves it out, APIv2 has no such field): for a matched contract (`PERFECT`, `PARTIAL`) it is looked up from the service's contract lookup; null for a contract that did not match, or when the service does not report it.",
      resolve: compilationDetail('compilerVersion'),
    }),
    address: t.exposeString('address', {
      nullable: true,
      description: 'The address it was verified at; null until one is given.',
    }),
    chainId: t.exposeString('chainId', {
      nullable: true,
      description: 'Decimal id of its chain; null until one is given.',
    }),
    files: t.expose('files', {
      type: ContractFilesRef,
      nullable: true,
      description: 'Its source files: found, missing and invalid; null with APIv2.',
    }),
    status: t.expose('status', { type: VerificationStatusEnum, description: 'The match found.' }),
    statusMessage: t.exposeString('statusMessage', {
      nullable: true,
      description:
        "The service's explanation of the status, e.g. why verification failed; null when it has none.",
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
    description:
      'A finished verification. With the session API: every contract of your session. With APIv2: the contract the job verified.',
    fields: (t) => ({
      contracts: t.expose('contracts', {
        type: [VerifiedContractRef],
        description:
          'The contracts of your session, including those verified earlier (session API), or the one verified (APIv2).',
      }),
      unused: t.exposeStringList('unused', {
        description: 'Files in the session that belong to no contract; empty with APIv2.',
      }),
      alreadyVerified: t.exposeBoolean('alreadyVerified', {
        description:
          'True when the service already had this contract verified (APIv2; on submission, or found by the job): `contracts` shows the existing match, and nothing new was done.',
      }),
      job: t.expose('job', {
        type: VerificationJobRef,
        nullable: true,
        description:
          'The APIv2 job, with everything the service reported (times, compilation time, the explorers it also submitted to); null with the session API, and when the service refused the submission as already verified.',
      }),
    }),
  });

const VerificationPendingRef = builder
  .objectRef<VerificationPending>('VerificationPending')
  .implement({
    description:
      'An APIv2 verification job still running when the gateway stopped waiting (`VERIFY_WAIT_MS`). Follow it with `verificationJobChanged(id:)`, or ask `verificationJob(id:)`, with its id.',
    fields: (t) => ({
      verificationId: t.exposeID('verificationId', {
        description: 'The job id: pass it to `verificationJob`.',
      }),
      startedAt: t.expose('startedAt', {
        type: 'DateTime',
        nullable: true,
        description: 'When the service started the job; null when it did not say.',
      }),
      stale: t.exposeBoolean('stale', {
        description:
          'True once the job has run longer than `VERIFY_JOB_STALE_MS` (10 min by default): Sourcify has left jobs "running" for hours, and blocks the contract while they run. `message` says what the user can do.',
      }),
      message: t.exposeString('message', {
        description:
          'What the user can do now: follow the job while it runs; for a stale job, what to do about it.',
      }),
      job: t.expose('job', {
        type: VerificationJobRef,
        nullable: true,
        description:
          'The job as the service last reported it; null when the gateway stopped waiting before it saw the job.',
      }),
    }),
  });

export const VerifyContractResultRef = builder.unionType('VerifyContractResult', {
  description:
    'The outcome of a verification: done, still running (APIv2), or why it did not happen. Switch on `__typename`.',
  types: [
    VerificationResultRef,
    VerificationPendingRef,
    InvalidInputErrorRef,
    VerificationRejectedErrorRef,
    RateLimitedErrorRef,
    UpstreamUnavailableErrorRef,
  ],
  resolveType: (value, _context, info) => {
    const type =
      '__typename' in value
        ? value.__typename
        : value.kind === 'pending'
          ? 'VerificationPending'
          : 'VerificationResult';
    // Answered with HTTP 200 whatever it is: the request's log line says which.
    noteResult(String(info.path.key), type);
    return type;
  },
});

/**
 * A verification mutation's answer: one verification taken from the client's allowance first,
 * then `verify`, its expected failures returned as results.
 */
export const verifying = (context: GatewayContext, verify: () => Promise<VerificationOutcome>) =>
  settle(
    (async () => {
      await context.takeVerification();
      return verify();
    })(),
  );

builder.mutationField('verifyContract', (t) =>
  t.field({
    type: VerifyContractResultRef,
    description:
      'Verifies a deployed contract with the sources its block explorer has. With the session API, your session at the verification service travels in an HttpOnly cookie, so later calls add to the same session; with APIv2, the gateway waits for the verification job and answers `VerificationPending` if it takes longer. Expected failures are results: switch on `__typename`.',
    args: { input: t.arg({ type: VerifyContractInputRef, required: true }) },
    resolve: (_root, { input }, context) =>
      verifying(context, () =>
        context.verification.verifyContract(input, context.verificationSession, context.requestId),
      ),
  }),
);

builder.queryField('verificationJob', (t) =>
  t.field({
    type: VerifyContractResultRef,
    nullable: true,
    description:
      'The current state of an APIv2 verification job that a verification answered as `VerificationPending` (`stale` once it has run longer than `VERIFY_JOB_STALE_MS`). Null for an unknown id, and always with the session API, which has no jobs. To follow a job, subscribe to `verificationJobChanged` instead of polling this.',
    args: { id: t.arg.id({ required: true, description: 'The `verificationId` of the job.' }) },
    resolve: (_root, { id }, { verification, requestId }) =>
      settle(verification.verificationJob(String(id), requestId)),
  }),
);
