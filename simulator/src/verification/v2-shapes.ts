import type {
  SourcifyMatchLevel,
  SourcifyV2Contract,
  SourcifyVerificationStatus,
} from './types.js';

/* What APIv2's routes share: the OpenAPI validator's path formats, and how values are written. */

const UUID_FORMAT = /^(?:urn:uuid:)?[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i;

/** A path parameter's schema in apiv2.yaml. */
export interface ParamSchema {
  readonly minLength: number;
  readonly maxLength: number;
  readonly pattern: string;
  readonly format?: 'uuid';
}

export const CHAIN_ID_SCHEMA: ParamSchema = { minLength: 1, maxLength: 20, pattern: '^\\d+$' };
export const ADDRESS_SCHEMA: ParamSchema = {
  minLength: 42,
  maxLength: 42,
  pattern: '(\\b0x[a-fA-F0-9]{40}\\b)',
};
export const VERIFICATION_ID_SCHEMA: ParamSchema = {
  minLength: 36,
  maxLength: 36,
  pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$',
  format: 'uuid',
};

/** The OpenAPI validator's complaints about one path parameter (ajv's wording), in its order. */
export function paramIssues(name: string, value: string, schema: ParamSchema): string[] {
  const where = `request/params/${name}`;
  const issues: string[] = [];
  if (value.length > schema.maxLength) {
    issues.push(`${where} must NOT have more than ${schema.maxLength} characters`);
  }
  if (value.length < schema.minLength) {
    issues.push(`${where} must NOT have fewer than ${schema.minLength} characters`);
  }
  if (!new RegExp(schema.pattern, 'u').test(value)) {
    issues.push(`${where} must match pattern "${schema.pattern}"`);
  }
  if (schema.format === 'uuid' && !UUID_FORMAT.test(value)) {
    issues.push(`${where} must match format "uuid"`);
  }
  return issues;
}

/** Express decodes path parameters; a bad escape is left as is (and then fails the formats). */
export function decodeParam(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** `2024-07-24T12:00:00Z`: how Sourcify's database formats its timestamps. */
export function wholeSeconds(time: number | string): string {
  const ms = typeof time === 'number' ? time : Date.parse(time);
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function levelOf(status: SourcifyVerificationStatus): SourcifyMatchLevel | null {
  if (status === 'perfect') return 'exact_match';
  return status === 'partial' ? 'match' : null;
}

export function unverified(chainId: string, address: string): SourcifyV2Contract {
  return { match: null, creationMatch: null, runtimeMatch: null, chainId, address };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
