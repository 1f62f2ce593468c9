import type { VerifiableContract } from './fixture.js';
import { missingImportErrors, SOURCIFY_V2_MESSAGES, type V2JobErrorCode } from './v2-errors.js';
import { isRecord } from './v2-shapes.js';

/*
 * Verification from source (`POST /v2/verify/{chainId}/{address}`, standard JSON input) and from
 * metadata (`POST /v2/verify/metadata/{chainId}/{address}`): what the request validator says of a
 * body (apiv2.yaml's request schemas, ajv's wording, the first problem only), and what compiling
 * the sources would give against the contract deployed there. Nothing is compiled: a source
 * matches when it names the contract's path, name and compiler as the fixture has them.
 */

export type SourceMethod = 'std-json' | 'metadata';

/** apiv2.yaml's `CompilerVersion` pattern. */
const COMPILER_VERSION = '^v?\\d+\\.\\d+\\.\\d+.*$';
/** apiv2.yaml's `Keccak256` pattern: lowercase. */
const KECCAK256 = '(\\b0x[a-f0-9]{64}\\b)';

const M = SOURCIFY_V2_MESSAGES;

/** The validator's first complaint about a source verification's body, or null. */
export function sourceBodyIssue(body: unknown, method: SourceMethod): string | null {
  if (!isRecord(body)) return M.mustBeObject('request/body');
  const required =
    method === 'std-json'
      ? ['stdJsonInput', 'compilerVersion', 'contractIdentifier']
      : ['sources', 'metadata'];
  for (const property of required) {
    if (body[property] === undefined) return M.requiredProperty(property);
  }
  if (method === 'std-json') {
    if (!isRecord(body.stdJsonInput)) return M.mustBeObject('request/body/stdJsonInput');
    if (typeof body.compilerVersion !== 'string') {
      return M.mustBeString('request/body/compilerVersion');
    }
    if (!new RegExp(COMPILER_VERSION, 'u').test(body.compilerVersion)) {
      return M.mustMatchPattern('request/body/compilerVersion', COMPILER_VERSION);
    }
    if (typeof body.contractIdentifier !== 'string') {
      return M.mustBeString('request/body/contractIdentifier');
    }
  } else {
    if (!isRecord(body.sources)) return M.mustBeObject('request/body/sources');
    for (const [path, content] of Object.entries(body.sources)) {
      if (typeof content !== 'string') return M.mustBeString(`request/body/sources/${path}`);
    }
    if (!isRecord(body.metadata)) return M.mustBeObject('request/body/metadata');
  }
  const hash = body.creationTransactionHash;
  if (hash !== undefined) {
    if (typeof hash !== 'string') return M.mustBeString('request/body/creationTransactionHash');
    if (!new RegExp(KECCAK256, 'u').test(hash)) {
      return M.mustMatchPattern('request/body/creationTransactionHash', KECCAK256);
    }
  }
  return null;
}

/** What the job will end with: a match (as the contract verifies), or a failure. */
export type SourceVerdict =
  | { readonly matches: true }
  | {
      readonly matches: false;
      readonly code: V2JobErrorCode;
      readonly message: string;
      readonly errorData?: Record<string, unknown>;
    };

const failed = (
  code: V2JobErrorCode,
  message: string,
  errorData?: Record<string, unknown>,
): SourceVerdict => ({
  matches: false,
  code,
  message,
  ...(errorData === undefined ? {} : { errorData }),
});

/**
 * Judges a checked body against the contract deployed at the address (undefined: none). A
 * contract whose own verification fails (missing sources, a bytecode mismatch) fails the same way
 * when its job completes.
 */
export function judgeSources(
  method: SourceMethod,
  body: Record<string, unknown>,
  deployed: VerifiableContract | undefined,
  chainId: string,
  address: string,
): SourceVerdict {
  if (!deployed) return failed('contract_not_deployed', M.contractNotDeployed(chainId, address));
  let path: string;
  let name: string;
  let version: unknown;
  let sources: Record<string, unknown>;
  if (method === 'std-json') {
    const identifier = String(body.contractIdentifier);
    const colon = identifier.lastIndexOf(':');
    [path, name] = [identifier.slice(0, colon), identifier.slice(colon + 1)];
    version = body.compilerVersion;
    const input = body.stdJsonInput as Record<string, unknown>;
    sources = isRecord(input.sources) ? input.sources : {};
    if (colon < 0 || !Object.hasOwn(sources, path)) {
      return failed('contract_not_found_in_compiler_output', M.contractNotFoundInCompilerOutput);
    }
  } else {
    const metadata = body.metadata as Record<string, unknown>;
    const settings = isRecord(metadata.settings) ? metadata.settings : {};
    const targets = isRecord(settings.compilationTarget) ? settings.compilationTarget : {};
    const entries = Object.entries(targets);
    const [target] = entries;
    if (entries.length !== 1 || target === undefined || typeof target[1] !== 'string') {
      return failed(
        'invalid_compilation_target',
        M.invalidCompilationTarget(
          entries.map(([file, contract]) => `${file}:${String(contract)}`),
        ),
      );
    }
    [path, name] = [target[0], target[1]];
    version = isRecord(metadata.compiler) ? metadata.compiler.version : undefined;
    sources = body.sources as Record<string, unknown>;
    const named = isRecord(metadata.sources) ? Object.keys(metadata.sources) : [];
    const missing = named.filter((file) => !Object.hasOwn(sources, file));
    if (missing.length > 0) return failed('missing_source', M.missingSource(missing));
  }
  const withoutImports = Object.keys(deployed.missing ?? {}).filter(
    (file) => !Object.hasOwn(sources, file),
  );
  if (withoutImports.length > 0) {
    const compilerErrors = missingImportErrors(withoutImports);
    return failed('compiler_error', M.compilerError(compilerErrors), { compilerErrors });
  }
  const sameVersion =
    deployed.compilerVersion === undefined ||
    (typeof version === 'string' && version.replace(/^v/, '') === deployed.compilerVersion);
  if (path !== deployed.compiledPath || name !== deployed.name || !sameVersion) {
    return failed('no_match', M.noMatch);
  }
  return { matches: true };
}
