import type { SimulatorResponse, UpstreamRequest } from '../upstream.js';
import { parseAddress } from './address.js';
import {
  type SchemaIssue,
  SOURCIFY_MESSAGES,
  schemaError,
  sourcifyError,
  validatorError,
} from './errors.js';

/*
 * The body of `POST /session/verify/etherscan` as Sourcify's middleware chain sees it, before any
 * session: body-parser (JSON only), then the OpenAPI validator (schema, then the `address` and
 * `supported-chainId` formats). A refusal here never opens a session nor sets a cookie.
 */

/** A request that passed every check. */
export interface VerifyRequest {
  /** Checksummed, as Sourcify's middleware rewrites it. */
  readonly address: string;
  readonly chainId: string;
  readonly apiKey: string | undefined;
}

/** The fields as sent, for the log of received requests. */
export interface SentFields {
  readonly address: string;
  readonly chainId: string;
  readonly apiKey: string | undefined;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; response: SimulatorResponse };

/** JSON whitespace: space, tab, line feed, carriage return. */
const JSON_WHITESPACE = /^[ \t\n\r]*/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The request's media type, lower case, without parameters. */
export function mediaType(request: UpstreamRequest): string | undefined {
  const header = request.headers['content-type'];
  const type = header?.split(';')[0]?.trim().toLowerCase();
  return type || undefined;
}

/**
 * The body as body-parser's `json()` leaves it: parsed for `application/json` (an empty body is
 * `{}`), otherwise untouched and `{}`. Malformed JSON, or JSON that is not an object or array
 * (strict mode), fails with the parser's message.
 */
export async function readJsonRequestBody(
  request: UpstreamRequest,
): Promise<{ ok: true; value: unknown } | { ok: false; message: string }> {
  if (mediaType(request) !== 'application/json') return { ok: true, value: {} };
  const text = (await request.readBody()).toString('utf8');
  if (text.length === 0) return { ok: true, value: {} };
  const start = JSON_WHITESPACE.exec(text)?.[0].length ?? 0;
  const first = text.charAt(start);
  try {
    if (first !== '{' && first !== '[') {
      // body-parser's strict mode: report the error JSON.parse gives at the first character.
      JSON.parse(text.slice(0, start) + '#'.repeat(text.length - start));
    }
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    const raw = error instanceof Error ? error.message : String(error);
    const message = raw.replace(/#+/g, (run) => text.slice(start, start + run.length));
    return { ok: false, message };
  }
}

/** `readJsonRequestBody`, failing with Sourcify's v1 error handler's 400 `{ error, message }`. */
export async function readJsonBody(request: UpstreamRequest): Promise<Checked<unknown>> {
  const body = await readJsonRequestBody(request);
  return body.ok ? body : { ok: false, response: sourcifyError(400, body.message) };
}

/** A body field as sent: a string as is, any other JSON value as its JSON text. */
export function sent(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The fields of a body, as sent. */
export function sentFields(body: unknown): SentFields {
  if (!isRecord(body)) return { address: '', chainId: '', apiKey: undefined };
  return {
    address: sent(body.address) ?? '',
    chainId: sent(body.chainId ?? body.chain) ?? '',
    apiKey: sent(body.apiKey),
  };
}

/** `415` unless the body is JSON (the validator knows only JSON and multipart bodies here). */
export function checkMediaType(request: UpstreamRequest): SimulatorResponse | null {
  const type = mediaType(request);
  if (type === undefined || type === 'application/json') return null;
  const message = `unsupported media type ${type}`;
  return validatorError(415, message, [{ path: `/session/verify/etherscan`, message }]);
}

/**
 * Checks a parsed body against the endpoint's schema (`address` and `chainId` required strings;
 * `chain`, Sourcify's older name, accepted when `chainId` is absent; `apiKey` an optional
 * string), then the address and chain formats. Only the first problem is reported, as the real
 * server does.
 */
export function checkVerifyBody(
  body: unknown,
  isSupportedChain: (chainId: string) => boolean,
): Checked<VerifyRequest> {
  if (!isRecord(body)) {
    return {
      ok: false,
      response: schemaError({
        path: '/body',
        instancePath: '/body',
        message: 'must be object',
        errorCode: 'type.openapi.validation',
      }),
    };
  }
  const chainField = body.chainId === undefined && body.chain !== undefined ? 'chain' : 'chainId';
  const issues: SchemaIssue[] = [];
  for (const field of ['address', chainField, 'apiKey']) {
    const value = body[field];
    if (value === undefined) {
      if (field === 'apiKey') continue;
      issues.push({
        path: `/body/${field}`,
        instancePath: '/body',
        message: `must have required property '${field}'`,
        errorCode: 'required.openapi.validation',
      });
    } else if (typeof value !== 'string') {
      issues.push({
        path: `/body/${field}`,
        instancePath: `/body/${field}`,
        message: 'must be string',
        errorCode: 'type.openapi.validation',
      });
    }
  }
  const [first] = issues;
  if (first) return { ok: false, response: schemaError(first) };

  const rawAddress = body.address as string;
  const chainId = body[chainField] as string;
  const apiKey = body.apiKey as string | undefined;
  const address = parseAddress(rawAddress);
  if (address === null) {
    return {
      ok: false,
      response: sourcifyError(400, SOURCIFY_MESSAGES.invalidAddress(rawAddress)),
    };
  }
  if (!isSupportedChain(chainId)) {
    return {
      ok: false,
      response: sourcifyError(400, SOURCIFY_MESSAGES.chainNotSupported(chainId)),
    };
  }
  return { ok: true, value: { address, chainId, apiKey } };
}
