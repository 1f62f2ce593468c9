import type { IncomingMessage } from 'node:http';

/**
 * The address of the client a request comes from, for per-client limits. With no trusted proxy
 * it is the socket's peer: `X-Forwarded-For` is the client's own claim and is ignored. Behind
 * `trustedProxies` proxies, each appending the address it received from, the client is the entry
 * the outermost trusted proxy wrote; a header shorter than that did not come through them, and the
 * socket's peer is used.
 */
export function clientAddressOf(req: IncomingMessage | undefined, trustedProxies: number): string {
  const peer = req?.socket.remoteAddress ?? 'unknown';
  if (trustedProxies === 0 || !req) return peer;
  const header = req.headers['x-forwarded-for'];
  const forwarded = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  return forwarded[forwarded.length - trustedProxies] ?? peer;
}
