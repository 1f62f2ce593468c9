import type { IncomingMessage, ServerResponse } from 'node:http';
import type { YogaServerInstance } from 'graphql-yoga';
import type { GatewayContext } from '../schema/context.js';
import type { CacheabilityContext } from '../schema/plugins/cacheability.js';
import type { Topic } from '../subscriptions/hub.js';
import { fetchRequestOf } from './fetch-request.js';

/** What the front door passes into Yoga with a request. */
export interface GatewayServerContext extends CacheabilityContext {
  /** The node request, for the client's address. */
  readonly req?: IncomingMessage;
  /** The topic whose source this request is (`SubscriptionHub`): its subscription is the topic's. */
  readonly topic?: Topic;
}

/** The gateway's Yoga instance, as the HTTP front door sees it. */
export type GatewayYoga = YogaServerInstance<GatewayServerContext, GatewayContext>;

/**
 * Yoga's answer to a node request. With `body`, read already, the request is made here; without,
 * by Yoga's own adapter, which streams the body from the socket as it is read (or leaves it for
 * node to discard, when the answer needs none of it). Either way, what runs for it is cancelled
 * when the client goes away before its answer is sent.
 */
export function askYoga(
  yoga: GatewayYoga,
  req: IncomingMessage,
  res: ServerResponse,
  body?: Buffer,
  context: Omit<GatewayServerContext, 'req'> = {},
): Promise<Response> {
  if (body === undefined) {
    return Promise.resolve(yoga.handleNodeRequestAndResponse(req, res, { ...context, req }));
  }
  const aborted = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) aborted.abort();
  });
  return Promise.resolve(
    yoga.handleRequest(fetchRequestOf(req, { body, signal: aborted.signal }), { ...context, req }),
  );
}
