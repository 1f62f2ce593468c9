import { type GraphQLSchema, Kind, parse } from 'graphql';
import { builder } from './builder.js';
import {
  addressField,
  chainIdField,
  creationTransactionHashField,
  VerifyContractResultRef,
  verifying,
} from './verification.js';

/*
 * Verification from source, as Foundry, Hardhat and Remix users verify: APIv2 only. The inputs
 * run to megabytes: the gateway refuses one over `VERIFY_MAX_SOURCE_BYTES` before it sends
 * anything, and reads request bodies that large only for these two mutations.
 */

/**
 * The field extension that marks a mutation whose request may carry a body larger than
 * `MAX_BODY_BYTES` (`uploadMutationsOf` finds them in the schema): a renamed or new one keeps or
 * gets the allowance by what it declares, not by a list kept beside it.
 */
const UPLOAD = { upload: true } as const;

const VerifyFromSourceInputRef = builder.inputType('VerifyFromSourceInput', {
  description:
    "A deployed contract to verify from the compiler's standard JSON input (Solidity, Vyper, Fe), as the service's `POST /v2/verify/{chainId}/{address}` takes it.",
  fields: (t) => ({
    address: t.string(addressField),
    chainId: t.string(chainIdField),
    stdJsonInput: t.field({
      type: 'JSON',
      required: true,
      description:
        "The standard JSON input the contract was compiled with: `language`, `sources` (path → `{ content }`), `settings` (and Vyper's `storage_layout_overrides`). At most `VERIFY_MAX_SOURCE_BYTES` of JSON; send it as a variable.",
    }),
    compilerVersion: t.string({
      required: true,
      description: 'The full compiler version, e.g. `0.8.24+commit.e11b9ed9`.',
    }),
    contractIdentifier: t.string({
      required: true,
      description:
        'Which contract of the sources to verify: its source path and name, e.g. `contracts/Token.sol:Token`.',
    }),
    creationTransactionHash: t.string(creationTransactionHashField),
  }),
});

const VerifyFromMetadataInputRef = builder.inputType('VerifyFromMetadataInput', {
  description:
    "A deployed contract to verify from the Solidity compiler's metadata.json and its sources, as the service's `POST /v2/verify/metadata/{chainId}/{address}` takes them.",
  fields: (t) => ({
    address: t.string(addressField),
    chainId: t.string(chainIdField),
    metadata: t.field({
      type: 'JSON',
      required: true,
      description: 'The metadata.json the compiler wrote, as a JSON object.',
    }),
    sources: t.field({
      type: 'JSON',
      required: true,
      description:
        'Every source the metadata names: path → content (a string). With `metadata`, at most `VERIFY_MAX_SOURCE_BYTES` of JSON.',
    }),
    creationTransactionHash: t.string(creationTransactionHashField),
  }),
});

builder.mutationField('verifyContractFromSource', (t) =>
  t.field({
    type: VerifyContractResultRef,
    extensions: UPLOAD,
    description:
      "Verifies a deployed contract from the compiler's standard JSON input (APIv2). The gateway waits for the service's job up to `VERIFY_WAIT_MS` and answers its outcome, or `VerificationPending` to follow with `verificationJobChanged`. Counts against the same per-client allowance as `verifyContract`. Expected failures are results: switch on `__typename`.",
    args: { input: t.arg({ type: VerifyFromSourceInputRef, required: true }) },
    resolve: (_root, { input }, context) =>
      verifying(context, () => context.verification.verifyFromSource(input, context.requestId)),
  }),
);

builder.mutationField('verifyContractFromMetadata', (t) =>
  t.field({
    type: VerifyContractResultRef,
    extensions: UPLOAD,
    description:
      "Verifies a deployed contract from the Solidity compiler's metadata.json and its sources (APIv2), as `verifyContractFromSource` does.",
    args: { input: t.arg({ type: VerifyFromMetadataInputRef, required: true }) },
    resolve: (_root, { input }, context) =>
      verifying(context, () => context.verification.verifyFromMetadata(input, context.requestId)),
  }),
);

/** The longest document text a large body may carry: its size is in its variables. */
const MAX_DOCUMENT_CHARACTERS = 16_384;

/** The mutations a large body may run, as the schema declares them, and the check of a body. */
export interface UploadMutations {
  /** Their names, in the schema's order (what a refusal names). */
  readonly names: readonly string[];
  /**
   * Whether a request's `query` text runs these only, every operation a mutation selecting
   * nothing else: its body may then be up to `VERIFY_MAX_SOURCE_BYTES` larger than
   * `MAX_BODY_BYTES` (`useBodyLimit`'s `uploads`).
   */
  readonly accepts: (params: Record<string, unknown>) => boolean;
}

/** The mutations of `schema` marked as taking uploads (`UPLOAD`). */
export function uploadMutationsOf(schema: GraphQLSchema): UploadMutations {
  const names = Object.values(schema.getMutationType()?.getFields() ?? {})
    .filter((field) => field.extensions?.upload === true)
    .map((field) => field.name);
  const uploads = new Set(names);
  return {
    names,
    accepts({ query }) {
      if (typeof query !== 'string' || query.length > MAX_DOCUMENT_CHARACTERS) return false;
      try {
        return parse(query, { maxTokens: 2_000 }).definitions.every(
          (definition) =>
            definition.kind === Kind.OPERATION_DEFINITION &&
            definition.operation === 'mutation' &&
            definition.selectionSet.selections.every(
              (selection) => selection.kind === Kind.FIELD && uploads.has(selection.name.value),
            ),
        );
      } catch {
        return false;
      }
    },
  };
}
