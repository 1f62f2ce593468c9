import { z } from 'zod';
import { optionalText, optionalTimestamp } from '../../core/wire-fields.js';

/*
 * The verification service as it answers (Sourcify's session API): validated at the boundary,
 * tolerant of what real servers add or leave out.
 */

/** A list of paths: the seed sends an array, Sourcify an object keyed by path. */
const paths = z
  .union([z.array(z.string()), z.record(z.string(), z.unknown()).transform(Object.keys)])
  .nullish()
  .transform((value) => value ?? []);

const chainId = z
  .union([z.string(), z.number().int().transform(String)])
  .nullish()
  .transform((value) => value ?? null);

const WireVerifiedContract = z.object({
  verificationId: z.string().min(1),
  compiledPath: z.string(),
  name: z.string(),
  compilerVersion: optionalText,
  address: optionalText,
  chainId,
  files: z
    .object({ found: paths, missing: paths, invalid: paths })
    .nullish()
    .transform((value) => value ?? { found: [], missing: [], invalid: [] }),
  status: z.string(),
  // Sourcify sends "" for a contract it has just verified: nothing to say is null.
  statusMessage: optionalText.transform((value) => (value?.trim() ? value : null)),
  storageTimestamp: optionalTimestamp,
});

export const WireSessionResponse = z.object({
  contracts: z.array(WireVerifiedContract),
  unused: z
    .array(z.string())
    .nullish()
    .transform((value) => value ?? []),
});

/** One chain of the chain list, as the gateway's `Chain`. */
export const WireChain = z
  .object({
    chainId: z.union([z.number().int().nonnegative().transform(String), z.string().regex(/^\d+$/)]),
    name: z.string(),
    supported: z.boolean().nullish(),
    // A boolean today; older servers sent the explorer's API URL instead.
    etherscanAPI: z.union([z.boolean(), z.string()]).nullish(),
  })
  .transform(({ chainId, name, supported, etherscanAPI }) => ({
    id: chainId,
    name,
    /** Whether the upstream verifies contracts on this chain at all. */
    supported: supported ?? true,
    /** Whether it can fetch sources from the block explorer for this chain. */
    explorerVerification: Boolean(etherscanAPI),
  }));

/** The chain list; entries are checked one by one so one odd chain does not hide the rest. */
export const WireChains = z.array(z.unknown());

/** Sourcify answers errors as `{error}`, its request validator as `{message, errors}`. */
export const WireErrorBody = z.object({
  error: z.string().optional(),
  message: z.string().optional(),
});
