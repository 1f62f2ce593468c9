import { z } from 'zod';
import { optionalText, optionalTimestamp } from '../../core/wire-fields.js';

/*
 * Sourcify APIv2 as it answers (apiv2.yaml): jobs, contract lookups and lists, and
 * `{customCode, message, errorId}` errors. Every schema accepts the JSON of its own output, so
 * that a job shared through Redis is checked by the same schema as the service's answer.
 */

/** Absent, null or not of its shape: null. What a UI can do without is never a failure. */
const orNull = <Schema extends z.ZodType>(schema: Schema) =>
  schema
    .nullish()
    .catch(null)
    .transform((value): z.output<Schema> | null => value ?? null);

const matchLevel = orNull(z.string());

/** `compilation` of a contract lookup asked for it (`?fields=compilation.…`); each part optional. */
const WireV2Compilation = orNull(
  z.object({
    compilerVersion: optionalText,
    name: optionalText,
    fullyQualifiedName: optionalText,
  }),
);

export const WireV2Contract = z.object({
  match: matchLevel,
  creationMatch: matchLevel,
  runtimeMatch: matchLevel,
  chainId: z.union([z.string(), z.number().int().transform(String)]),
  address: z.string(),
  verifiedAt: optionalTimestamp,
  matchId: orNull(z.union([z.string(), z.number().transform(String)])),
  compilation: WireV2Compilation,
});

/** `GET /v2/contract/all-chains/{address}` and `GET /v2/contracts/{chainId}`. */
export const WireV2ContractList = z.object({ results: z.array(WireV2Contract) });

export const WireV2Error = z.object({
  customCode: z.string(),
  message: optionalText,
  errorId: optionalText,
});

/** A failed job's `error` (`MatchingErrorResponse`): the error, the bytecodes compared, and data. */
const WireV2JobError = WireV2Error.extend({
  /** e.g. `{ compilerErrors: [...] }` for `compiler_error`. */
  errorData: orNull(z.record(z.string(), z.unknown())),
  recompiledCreationCode: optionalText,
  recompiledRuntimeCode: optionalText,
  onchainCreationCode: optionalText,
  onchainRuntimeCode: optionalText,
  creationTransactionHash: optionalText,
});

/** One explorer's copy of the verification (`ApiExternalVerification`). */
const WireV2ExternalVerification = orNull(
  z.object({
    verificationId: optionalText,
    error: optionalText,
    statusUrl: optionalText,
    explorerUrl: optionalText,
  }),
);

export const WireV2Accepted = z.object({ verificationId: z.string().min(1) });

export const WireV2Job = z.object({
  isJobCompleted: z.boolean(),
  verificationId: z.string().min(1),
  jobStartTime: optionalTimestamp,
  jobFinishTime: optionalTimestamp,
  /** Milliseconds, as a decimal string (`"1333"`). */
  compilationTime: orNull(
    z.union([z.string().regex(/^\d{1,12}$/), z.number().int().nonnegative().transform(String)]),
  ),
  externalVerifications: orNull(
    z.object({
      etherscan: WireV2ExternalVerification,
      blockscout: WireV2ExternalVerification,
      routescan: WireV2ExternalVerification,
    }),
  ),
  contract: WireV2Contract.nullish().transform((value) => value ?? null),
  error: WireV2JobError.nullish().transform((value) => value ?? null),
});

export type WireV2Contract = z.output<typeof WireV2Contract>;
export type WireV2Error = z.output<typeof WireV2Error>;
export type WireV2Job = z.output<typeof WireV2Job>;
