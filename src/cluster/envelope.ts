/*
 * What travels between the primary and its workers over node:cluster's channel: one string, a
 * JSON head (what the message is: a kind, an id, a document's name, tokens, times) and, after a
 * NUL, a body of text passed on as it is (a stored document, a change event, metrics). JSON never
 * holds a raw NUL, so the first one ends the head. The channel carries strings: a message is
 * measured before anything of it is parsed, and a body is never escaped into the head.
 *
 * A worker is the gateway's own code, as is the primary, so each trusts the other's intent; a bug
 * in one must still not take the other down or fill its memory: each side bounds what it sends and
 * checks the size, then the head's shape, of what it receives.
 */

/** The longest head: a kind, an id, a document's name (256), tokens, times, validators. */
export const MAX_HEAD_CHARS = 2_048;

/**
 * The longest message: a head and the largest body any message carries (the replica's metrics,
 * whose series are bounded; a stored document is at most 4 MiB).
 */
export const MAX_MESSAGE_CHARS = 16 * 1024 * 1024;

const SEPARATOR = '\u0000';

export interface Envelope {
  /** The parsed head: its shape is still to be checked. */
  readonly head: unknown;
  readonly body: string | undefined;
}

/**
 * The message of `head` and `body`; `undefined` when it would be over the bounds (the receiver
 * would refuse it: the sender does without).
 */
export function encode(head: object, body?: string): string | undefined {
  const text = JSON.stringify(head);
  if (text.length > MAX_HEAD_CHARS) return undefined;
  if (body === undefined) return text;
  if (text.length + 1 + body.length > MAX_MESSAGE_CHARS) return undefined;
  return `${text}${SEPARATOR}${body}`;
}

/**
 * The head and body of a message, `undefined` when it is not one (not a string: another module's
 * message on the same channel; too long; a head that is not JSON).
 */
export function decode(message: unknown): Envelope | undefined {
  if (typeof message !== 'string' || message.length > MAX_MESSAGE_CHARS) return undefined;
  const end = message.indexOf(SEPARATOR);
  const headText = end === -1 ? message : message.slice(0, end);
  if (headText.length > MAX_HEAD_CHARS) return undefined;
  let head: unknown;
  try {
    head = JSON.parse(headText);
  } catch {
    return undefined;
  }
  return { head, body: end === -1 ? undefined : message.slice(end + 1) };
}
