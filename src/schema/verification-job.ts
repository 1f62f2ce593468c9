import { toEnumValue } from '../core/enum-value.js';
import type {
  ExternalVerification,
  ExternalVerifications,
  JobFailure,
  VerificationJob,
} from '../upstreams/verification/model.js';
import {
  SOURCIFY_ERROR_CODES,
  type SourcifyErrorCode,
} from '../upstreams/verification/sourcify-error-codes.js';
import { builder } from './builder.js';
import { ContractRef } from './contract.js';
import { VerificationRejectedErrorRef } from './errors.js';

const KNOWN_CODES = Object.keys(SOURCIFY_ERROR_CODES) as SourcifyErrorCode[];

const VerificationErrorCodeEnum = builder.enumType('VerificationErrorCode', {
  description:
    "The verification service's reason for refusing or failing a verification (APIv2's `customCode`), with what it means and what to do.",
  values: {
    ...Object.fromEntries(
      Object.entries(SOURCIFY_ERROR_CODES).map(([code, description]) => [code, { description }]),
    ),
    UNKNOWN: { description: 'A code this gateway does not know yet: see `code` and `message`.' },
  } as Record<SourcifyErrorCode | 'UNKNOWN', { description: string }>,
});

/** The enum value of a `customCode`, null when there is none. */
const reasonOf = (code: string | null | undefined) =>
  code ? toEnumValue(KNOWN_CODES, code) : null;

const ExternalVerificationRef = builder
  .objectRef<ExternalVerification>('ExternalVerification')
  .implement({
    description:
      "The verification's copy on another explorer, which the service submitted it to: its job there, or why it failed.",
    fields: (t) => ({
      verificationId: t.exposeString('verificationId', {
        nullable: true,
        description: "The explorer's id of its verification job.",
      }),
      error: t.exposeString('error', {
        nullable: true,
        description:
          "The explorer's error, when its verification failed, e.g. `NOTOK: Max rate limit reached`.",
      }),
      statusUrl: t.exposeString('statusUrl', {
        nullable: true,
        description: "The explorer's API address for the status of its verification.",
      }),
      explorerUrl: t.exposeString('explorerUrl', {
        nullable: true,
        description: "The contract's page on the explorer.",
      }),
    }),
  });

const ExternalVerificationsRef = builder
  .objectRef<ExternalVerifications>('ExternalVerifications')
  .implement({
    description:
      'Where the service also submitted the verification: Etherscan, Blockscout, Routescan.',
    fields: (t) => ({
      etherscan: t.expose('etherscan', {
        type: ExternalVerificationRef,
        nullable: true,
      }),
      blockscout: t.expose('blockscout', {
        type: ExternalVerificationRef,
        nullable: true,
      }),
      routescan: t.expose('routescan', {
        type: ExternalVerificationRef,
        nullable: true,
      }),
    }),
  });

const VerificationJobErrorRef = builder.objectRef<JobFailure>('VerificationJobError').implement({
  description:
    'Why a job failed, with everything the service reported: its code and words, the bytecodes it compared and its data (compiler errors).',
  fields: (t) => ({
    code: t.exposeString('code', { description: "The service's `customCode`, e.g. `no_match`." }),
    reason: t.field({
      type: VerificationErrorCodeEnum,
      description: '`code` as a known value, with what it means.',
      resolve: (failure) => reasonOf(failure.code) ?? 'UNKNOWN',
    }),
    message: t.exposeString('message', {
      nullable: true,
      description: "The service's words, whole (a compiler error carries the compiler's JSON).",
    }),
    errorId: t.exposeString('errorId', {
      nullable: true,
      description: "The service's id of the error, to quote in a support request.",
    }),
    errorData: t.expose('errorData', {
      type: 'JSON',
      nullable: true,
      description: 'What the service added, e.g. `{ compilerErrors: [...] }` for `compiler_error`.',
    }),
    recompiledCreationCode: t.exposeString('recompiledCreationCode', { nullable: true }),
    recompiledRuntimeCode: t.exposeString('recompiledRuntimeCode', { nullable: true }),
    onchainCreationCode: t.exposeString('onchainCreationCode', { nullable: true }),
    onchainRuntimeCode: t.exposeString('onchainRuntimeCode', { nullable: true }),
    creationTransactionHash: t.exposeString('creationTransactionHash', { nullable: true }),
  }),
});

export const VerificationJobRef = builder.objectRef<VerificationJob>('VerificationJob').implement({
  description:
    'An APIv2 verification job as the service reports it (`GET /v2/verify/{id}`), every field it sends.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The job id, the `verificationId` of the answers.' }),
    completed: t.exposeBoolean('completed', {
      description: 'Whether the job has ended, verified or failed.',
    }),
    startedAt: t.expose('startedAt', { type: 'DateTime', nullable: true }),
    finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true }),
    compilationTimeMs: t.exposeInt('compilationTimeMs', {
      nullable: true,
      description: 'How long the service took to compile, in ms.',
    }),
    externalVerifications: t.expose('externalVerifications', {
      type: ExternalVerificationsRef,
      nullable: true,
      description: 'Where the service also submitted the verification; null when it says nothing.',
    }),
    contract: t.expose('contract', {
      type: ContractRef,
      nullable: true,
      description: 'The contract the job is about; its matches are null until it is verified.',
    }),
    error: t.expose('error', {
      type: VerificationJobErrorRef,
      nullable: true,
      description: 'Why it failed; null unless it did.',
    }),
  }),
});

builder.objectField(VerificationRejectedErrorRef, 'reason', (t) =>
  t.field({
    type: VerificationErrorCodeEnum,
    nullable: true,
    description: '`code` as a known value, with what it means; null when the service gave no code.',
    resolve: (error) => reasonOf(error.upstreamCode),
  }),
);

builder.objectField(VerificationRejectedErrorRef, 'job', (t) =>
  t.expose('job', {
    type: VerificationJobRef,
    nullable: true,
    description:
      'The job that failed, with everything the service reported about it; null when the submission itself was refused.',
  }),
);
