import type { ContentEncoding } from './response-cache/encoded-answer.js';

/** The content codings the gateway answers in, best first when a client likes them equally. */
const SERVER_PREFERENCE: readonly ContentEncoding[] = ['br', 'gzip', 'identity'];

/** Distinct `Accept-Encoding` values remembered; clients send a handful, an attacker many. */
const MOST_REMEMBERED = 64;
const chosen = new Map<string, ContentEncoding>();

/**
 * The coding to answer a request in, from its `Accept-Encoding` (RFC 9110 §12.5.3): the one with
 * the highest q-value among those the client accepts, the server's order (`br`, `gzip`, then
 * `identity`) breaking ties; `*` stands for every coding not named; `identity` is acceptable unless
 * excluded (`identity;q=0`, or `*;q=0` without naming it), unnamed at the lowest weight the client
 * gave (as the `negotiator` package does: `br;q=0.5, gzip;q=0.8` is gzip). When the client excludes everything,
 * the answer goes out uncoded all the same (the RFC's advice), never as an error. No header, or an
 * empty one: `identity`.
 */
export function negotiateEncoding(header: string | undefined): ContentEncoding {
  if (header === undefined || header === '') return 'identity';
  let encoding = chosen.get(header);
  if (encoding === undefined) {
    encoding = parse(header);
    if (chosen.size < MOST_REMEMBERED) chosen.set(header, encoding);
  }
  return encoding;
}

function parse(header: string): ContentEncoding {
  const weights = new Map<string, number>();
  for (const item of header.split(',')) {
    const [name = '', ...parameters] = item.split(';');
    const coding = name.trim().toLowerCase();
    if (coding === '') continue;
    let weight = 1;
    for (const parameter of parameters) {
      const match = /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(parameter);
      if (match) weight = Math.min(1, Number(match[1]));
    }
    // A coding named twice keeps its first weight, as most servers do.
    if (!weights.has(coding)) weights.set(coding, weight);
  }
  const star = weights.get('*');
  // Unnamed, identity is acceptable but no better than what the client did name.
  let lowestNamed = 1;
  for (const weight of weights.values())
    if (weight > 0) lowestNamed = Math.min(lowestNamed, weight);
  const weightOf = (coding: ContentEncoding) =>
    weights.get(coding) ??
    // `x-gzip` is gzip's old name (RFC 9110 §8.4.1.3).
    (coding === 'gzip' ? weights.get('x-gzip') : undefined) ??
    star ??
    (coding === 'identity' ? lowestNamed : 0);
  let best: ContentEncoding = 'identity';
  let bestWeight = 0;
  for (const coding of SERVER_PREFERENCE) {
    const weight = weightOf(coding);
    if (weight > bestWeight) {
      best = coding;
      bestWeight = weight;
    }
  }
  return best;
}
