import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestScope } from '../observability/request-scope.js';
import type { Answers } from './answers.js';

/** What is done with a request once its body is read. */
export type WithBody = (
  req: IncomingMessage,
  res: ServerResponse,
  scope: RequestScope,
  body: Buffer,
) => void;

/**
 * Reads a small request body whole (one the routes let in with its length declared: at most
 * 16 KiB), then hands it to `then`; a request aborted mid-body is recorded as its client gone.
 * `then` takes the request's own arguments, so that no closure is made for it on the hit path.
 */
export function readSmallBody(
  req: IncomingMessage,
  res: ServerResponse,
  scope: RequestScope,
  answers: Answers,
  then: WithBody,
): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  // A request aborted mid-body never ends: its client is gone. node:http emits the error only
  // when someone listens; once the body is complete, whoever answers records a client gone.
  req.on('error', () => {
    if (!req.complete) answers.gone(req, scope);
  });
  req.on('end', () => {
    const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    then(req, res, scope, body);
  });
}
