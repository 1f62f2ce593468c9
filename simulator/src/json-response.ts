import type { SimulatorResponse } from './upstream.js';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export function jsonResponse(
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): SimulatorResponse {
  return {
    status,
    headers: { 'content-type': JSON_CONTENT_TYPE, ...headers },
    body: Buffer.from(JSON.stringify(value)),
  };
}
