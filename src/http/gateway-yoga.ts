import type { IncomingMessage } from 'node:http';
import type { YogaServerInstance } from 'graphql-yoga';
import type { GatewayContext } from '../schema/context.js';
import type { Subscriber } from '../subscriptions/subscription-registry.js';
import type { CacheabilityContext } from './response-cache/cacheability.js';

/** What the front door passes into Yoga with a request. */
export interface GatewayServerContext extends CacheabilityContext {
  /** The node request, for the client's address. */
  readonly req?: IncomingMessage;
  /** How the client is connected, when not by a plain HTTP request (a WebSocket). */
  readonly subscriber?: Omit<Subscriber, 'requestId' | 'clientAddress'>;
}

/** The gateway's Yoga instance, as the HTTP front door sees it. */
export type GatewayYoga = YogaServerInstance<GatewayServerContext, GatewayContext>;
