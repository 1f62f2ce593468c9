import { InputTooLargeError } from '../../errors/input-too-large-error.js';
import { InvalidInputError } from '../../errors/invalid-input-error.js';
import { checkContractLocation } from './input.js';
import type {
  VerifyBySimilarityInput,
  VerifyFromMetadataInput,
  VerifyFromSourceInput,
} from './model.js';

/*
 * Checks of the source verifications' input, made before anything is sent (apiv2.yaml's request
 * schemas, and the gateway's size limit). Messages never repeat the values: they may be megabytes.
 */

/** APIv2's `CompilerVersion`: Solidity's `0.8.7+commit.e28d00a7`, Vyper's `v0.3.10`, … */
const COMPILER_VERSION = /^v?\d+\.\d+\.\d+[\x21-\x7e]{0,100}$/;
/** `path/to/File.sol:Contract`: a source path and a contract name. */
const CONTRACT_IDENTIFIER = /^[^\n]{1,1024}:[^:\n/]{1,256}$/;
/** APIv2's `Keccak256` is lowercase; any case is taken and sent lowercase. */
const TRANSACTION_HASH = /^0x[0-9a-fA-F]{64}$/;
/** The top-level fields of a standard JSON input Sourcify accepts. */
const STD_JSON_FIELDS = ['language', 'sources', 'settings', 'storage_layout_overrides'];

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Bytes of `value` as JSON, the way it is sent. */
const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? '');

/**
 * Checks a standard JSON verification and answers what to send: the hash lowercase. Throws
 * `InputTooLargeError` past `maxBytes`, `InvalidInputError` naming the field otherwise.
 */
export function checkSourceInput(
  input: VerifyFromSourceInput,
  maxBytes: number,
): VerifyFromSourceInput {
  if (jsonBytes(input.stdJsonInput) > maxBytes) {
    throw new InputTooLargeError('stdJsonInput', maxBytes);
  }
  checkContractLocation(input.chainId, input.address);
  const { stdJsonInput } = input;
  if (!isObject(stdJsonInput)) {
    throw new InvalidInputError(
      'stdJsonInput',
      'stdJsonInput must be the JSON object given to the compiler, with language, sources and settings.',
    );
  }
  if (typeof stdJsonInput.language !== 'string') {
    throw new InvalidInputError(
      'stdJsonInput',
      'stdJsonInput.language must be the language of the sources, e.g. "Solidity" or "Vyper".',
    );
  }
  if (!isObject(stdJsonInput.sources) || Object.keys(stdJsonInput.sources).length === 0) {
    throw new InvalidInputError(
      'stdJsonInput',
      'stdJsonInput.sources must map each source path to { content }, with at least one source.',
    );
  }
  const extra = Object.keys(stdJsonInput).filter((field) => !STD_JSON_FIELDS.includes(field));
  if (extra.length > 0) {
    throw new InvalidInputError(
      'stdJsonInput',
      `stdJsonInput may only have ${STD_JSON_FIELDS.join(', ')} at its top level (the service keeps nothing else); leave out ${extra
        .slice(0, 5)
        .map((field) => JSON.stringify(field.slice(0, 64)))
        .join(', ')}.`,
    );
  }
  if (!COMPILER_VERSION.test(input.compilerVersion)) {
    throw new InvalidInputError(
      'compilerVersion',
      'compilerVersion must be a full compiler version, e.g. "0.8.24+commit.e11b9ed9" (Solidity) or "0.3.10+commit.91361694" (Vyper).',
    );
  }
  if (!CONTRACT_IDENTIFIER.test(input.contractIdentifier)) {
    throw new InvalidInputError(
      'contractIdentifier',
      'contractIdentifier must be the source path and the contract name, e.g. "contracts/Token.sol:Token".',
    );
  }
  const path = input.contractIdentifier.slice(0, input.contractIdentifier.lastIndexOf(':'));
  if (!Object.hasOwn(stdJsonInput.sources, path)) {
    throw new InvalidInputError(
      'contractIdentifier',
      'contractIdentifier names a source path that stdJsonInput.sources does not have.',
    );
  }
  return { ...input, creationTransactionHash: checkTransactionHash(input.creationTransactionHash) };
}

/** Checks a metadata verification, as `checkSourceInput` does. */
export function checkMetadataInput(
  input: VerifyFromMetadataInput,
  maxBytes: number,
): VerifyFromMetadataInput {
  const [metadataBytes, sourcesBytes] = [jsonBytes(input.metadata), jsonBytes(input.sources)];
  if (metadataBytes + sourcesBytes > maxBytes) {
    throw new InputTooLargeError(sourcesBytes >= metadataBytes ? 'sources' : 'metadata', maxBytes);
  }
  checkContractLocation(input.chainId, input.address);
  if (!isObject(input.metadata)) {
    throw new InvalidInputError(
      'metadata',
      "metadata must be the compiler's metadata.json as a JSON object (not as a string).",
    );
  }
  const { sources } = input;
  if (!isObject(sources) || Object.keys(sources).length === 0) {
    throw new InvalidInputError(
      'sources',
      'sources must map each source path to its content, e.g. { "contracts/Token.sol": "pragma solidity …" }.',
    );
  }
  if (Object.values(sources).some((content) => typeof content !== 'string')) {
    throw new InvalidInputError(
      'sources',
      "sources must map each path to the file's content as a string.",
    );
  }
  return { ...input, creationTransactionHash: checkTransactionHash(input.creationTransactionHash) };
}

/** Checks a verification by similarity, as `checkSourceInput` does: there is nothing large. */
export function checkSimilarityInput(input: VerifyBySimilarityInput): VerifyBySimilarityInput {
  checkContractLocation(input.chainId, input.address);
  return { ...input, creationTransactionHash: checkTransactionHash(input.creationTransactionHash) };
}

function checkTransactionHash(hash: string | null | undefined): string | null {
  if (hash === undefined || hash === null) return null;
  if (!TRANSACTION_HASH.test(hash)) {
    throw new InvalidInputError(
      'creationTransactionHash',
      'creationTransactionHash must be 0x followed by 64 hexadecimal digits.',
    );
  }
  return hash.toLowerCase();
}
