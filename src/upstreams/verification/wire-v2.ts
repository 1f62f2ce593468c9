import { z } from 'zod';
import { optionalText, optionalTimestamp } from '../wire-fields.js';

/* Sourcify APIv2 as it answers (apiv2.yaml): jobs, contract lookups and `{customCode, message, errorId}` errors. */

const matchLevel = z
  .string()
  .nullish()
  .catch(null)
  .transform((value) => value ?? null);

/** `compilation` of a contract lookup asked for it (`?fields=compilation.…`); each part optional. */
const WireV2Compilation = z
  .object({
    compilerVersion: optionalText,
    name: optionalText,
    fullyQualifiedName: optionalText,
  })
  .nullish()
  .catch(null)
  .transform((value) => value ?? null);

export const WireV2Contract = z.object({
  match: matchLevel,
  creationMatch: matchLevel,
  runtimeMatch: matchLevel,
  chainId: z.union([z.string(), z.number().int().transform(String)]),
  address: z.string(),
  verifiedAt: optionalTimestamp,
  matchId: z
    .union([z.string(), z.number().transform(String)])
    .nullish()
    .catch(null)
    .transform((value) => value ?? null),
  compilation: WireV2Compilation,
});

export const WireV2Error = z.object({
  customCode: z.string(),
  message: optionalText,
  errorId: optionalText,
});

export const WireV2Accepted = z.object({ verificationId: z.string().min(1) });

export const WireV2Job = z.object({
  isJobCompleted: z.boolean(),
  verificationId: z.string().min(1),
  jobStartTime: optionalTimestamp,
  contract: WireV2Contract.nullish(),
  error: WireV2Error.nullish(),
});

export type WireV2Contract = z.output<typeof WireV2Contract>;
export type WireV2Error = z.output<typeof WireV2Error>;
export type WireV2Job = z.output<typeof WireV2Job>;
