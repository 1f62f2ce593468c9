import type { YogaServerInstance } from 'graphql-yoga';
import type { GatewayContext } from '../schema/context.js';
import type { CacheabilityContext } from './response-cache/cacheability.js';

/** What the front door passes into Yoga with a request, beside node's `req` and `res`. */
export type GatewayServerContext = CacheabilityContext;

/** The gateway's Yoga instance, as the HTTP front door sees it. */
export type GatewayYoga = YogaServerInstance<GatewayServerContext, GatewayContext>;
