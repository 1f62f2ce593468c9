import { parseAddress } from './address.js';
import type { VerifiableContract } from './fixture.js';
import type {
  SourcifyAbiParameter,
  SourcifyChain,
  SourcifyInvalidSource,
  SourcifyMissingSource,
  SourcifyServerVersion,
} from './types.js';

/*
 * Checks for chain lists and contracts handed to the simulator (by tests or the control API):
 * each throws a TypeError saying what is wrong, and returns a copy that later edits of the input
 * cannot reach.
 */

const STATUSES = ['perfect', 'partial', 'error', 'extra-file-input-bug'] as const;
const SERVER_VERSIONS: readonly SourcifyServerVersion[] = [
  'latest',
  '3.12.1',
  '3.9.1',
  'session-only',
];
const CHAIN_ID = /^(0|[1-9][0-9]*)$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown, where: string): string {
  if (typeof value !== 'string') throw new TypeError(`${where} must be a string`);
  return value;
}

function optionalText(value: unknown, where: string): string | undefined {
  return value === undefined ? undefined : text(value, where);
}

function texts(value: unknown, where: string): string[] {
  if (!Array.isArray(value)) throw new TypeError(`${where} must be an array of strings`);
  return value.map((item, index) => text(item, `${where}[${index}]`));
}

function record<T>(
  value: unknown,
  where: string,
  parseEntry: (entry: unknown, where: string) => T,
): Record<string, T> {
  if (value === undefined) return {};
  if (!isRecord(value)) throw new TypeError(`${where} must be an object keyed by path`);
  // Null prototype: a path such as "__proto__" stays an ordinary key.
  const result: Record<string, T> = Object.create(null);
  for (const [key, entry] of Object.entries(value)) {
    result[key] = parseEntry(entry, `${where}["${key}"]`);
  }
  return result;
}

function parseMissing(value: unknown, where: string): SourcifyMissingSource {
  if (!isRecord(value)) throw new TypeError(`${where} must be an object`);
  return {
    keccak256: text(value.keccak256, `${where}.keccak256`),
    urls: texts(value.urls, `${where}.urls`),
  };
}

function parseInvalid(value: unknown, where: string): SourcifyInvalidSource {
  if (!isRecord(value)) throw new TypeError(`${where} must be an object`);
  const invalid: SourcifyInvalidSource = {
    expectedHash: text(value.expectedHash, `${where}.expectedHash`),
    calculatedHash: text(value.calculatedHash, `${where}.calculatedHash`),
  };
  const msg = optionalText(value.msg, `${where}.msg`);
  if (msg !== undefined) invalid.msg = msg;
  return invalid;
}

function parseAbiParameter(value: unknown, where: string): SourcifyAbiParameter {
  if (!isRecord(value)) throw new TypeError(`${where} must be an object`);
  const internalType = optionalText(value.internalType, `${where}.internalType`);
  const parameter: SourcifyAbiParameter = {
    ...(internalType === undefined ? {} : { internalType }),
    name: text(value.name, `${where}.name`),
    type: text(value.type, `${where}.type`),
  };
  if (value.components !== undefined) {
    if (!Array.isArray(value.components)) {
      throw new TypeError(`${where}.components must be an array`);
    }
    parameter.components = value.components.map((item, index) =>
      parseAbiParameter(item, `${where}.components[${index}]`),
    );
  }
  return parameter;
}

/** Checks a server version for the simulator to model; null is a mix of both APIs. */
export function parseServerVersion(value: unknown): SourcifyServerVersion | null {
  if (value === null) return null;
  const version = SERVER_VERSIONS.find((candidate) => candidate === value);
  if (!version) {
    throw new TypeError(`serverVersion must be null or one of ${SERVER_VERSIONS.join(', ')}`);
  }
  return version;
}

/** Checks a chain list; chain ids must be unique non-negative integers. */
export function parseSourcifyChains(value: unknown): SourcifyChain[] {
  if (!Array.isArray(value)) throw new TypeError('chains must be an array');
  const seen = new Set<number>();
  return value.map((item: unknown, index) => {
    const where = `chains[${index}]`;
    if (!isRecord(item)) throw new TypeError(`${where} must be an object`);
    const { chainId, supported, etherscanAPI } = item;
    if (typeof chainId !== 'number' || !Number.isSafeInteger(chainId) || chainId < 0) {
      throw new TypeError(`${where}.chainId must be a non-negative integer`);
    }
    if (seen.has(chainId)) throw new TypeError(`${where}.chainId ${chainId} is listed twice`);
    seen.add(chainId);
    if (typeof supported !== 'boolean') throw new TypeError(`${where}.supported must be a boolean`);
    if (typeof etherscanAPI !== 'boolean' && typeof etherscanAPI !== 'string') {
      throw new TypeError(`${where}.etherscanAPI must be a boolean or a URL string`);
    }
    const title = optionalText(item.title, `${where}.title`);
    const rpc = item.rpc === undefined ? [] : texts(item.rpc, `${where}.rpc`);
    let traceSupportedRPCs: SourcifyChain['traceSupportedRPCs'] = [];
    if (item.traceSupportedRPCs !== undefined) {
      if (!Array.isArray(item.traceSupportedRPCs)) {
        throw new TypeError(`${where}.traceSupportedRPCs must be an array`);
      }
      traceSupportedRPCs = item.traceSupportedRPCs.map((trace: unknown, traceIndex) => {
        const at = `${where}.traceSupportedRPCs[${traceIndex}]`;
        if (!isRecord(trace) || typeof trace.index !== 'number') {
          throw new TypeError(`${at} must be { type: string, index: number }`);
        }
        return { type: text(trace.type, `${at}.type`), index: trace.index };
      });
    }
    // In the order Sourcify's /chains handler writes the fields.
    const chain: SourcifyChain = {
      name: text(item.name, `${where}.name`),
      ...(title === undefined ? {} : { title }),
      chainId,
      rpc,
      traceSupportedRPCs,
      supported,
      etherscanAPI,
    };
    return chain;
  });
}

/** Checks a contract for the fake explorer; its address comes back checksummed. */
export function parseVerifiableContract(value: unknown): VerifiableContract {
  if (!isRecord(value)) throw new TypeError('contract must be an object');
  const chainId = text(value.chainId, 'contract.chainId');
  if (!CHAIN_ID.test(chainId)) {
    throw new TypeError('contract.chainId must be a decimal chain id such as "1"');
  }
  const address = parseAddress(text(value.address, 'contract.address'));
  if (address === null) {
    throw new TypeError('contract.address must be 0x + 40 hex digits (checksummed if mixed case)');
  }
  const status = STATUSES.find((candidate) => candidate === value.status);
  if (!status) throw new TypeError(`contract.status must be one of ${STATUSES.join(', ')}`);
  const storageTimestamp = optionalText(value.storageTimestamp, 'contract.storageTimestamp');
  if (storageTimestamp !== undefined && Number.isNaN(Date.parse(storageTimestamp))) {
    throw new TypeError('contract.storageTimestamp must be an ISO 8601 timestamp');
  }
  const constructorArguments = value.constructorArgumentsArray;
  if (constructorArguments !== undefined && !Array.isArray(constructorArguments)) {
    throw new TypeError('contract.constructorArgumentsArray must be an array');
  }
  const compilerVersion = optionalText(value.compilerVersion, 'contract.compilerVersion');
  const statusMessage = optionalText(value.statusMessage, 'contract.statusMessage');
  return {
    chainId,
    address,
    name: text(value.name, 'contract.name'),
    compiledPath: text(value.compiledPath, 'contract.compiledPath'),
    ...(compilerVersion === undefined ? {} : { compilerVersion }),
    sources: texts(value.sources, 'contract.sources'),
    missing: record(value.missing, 'contract.missing', parseMissing),
    invalid: record(value.invalid, 'contract.invalid', parseInvalid),
    status,
    ...(statusMessage === undefined ? {} : { statusMessage }),
    ...(storageTimestamp === undefined ? {} : { storageTimestamp }),
    ...(constructorArguments === undefined
      ? {}
      : {
          constructorArgumentsArray: constructorArguments.map((item: unknown, index) =>
            parseAbiParameter(item, `contract.constructorArgumentsArray[${index}]`),
          ),
        }),
  };
}
