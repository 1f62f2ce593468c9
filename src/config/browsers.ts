import { z } from 'zod';
import { env, flag, list } from './variable.js';

/** CORS request headers allowed by default: what GraphQL clients, tracing and routers send. */
const DEFAULT_CORS_ALLOWED_HEADERS = [
  'content-type',
  'accept',
  'authorization',
  'x-request-id',
  'traceparent',
  'tracestate',
  'baggage',
  'apollographql-client-name',
  'apollographql-client-version',
  'apollo-require-preflight',
  'x-apollo-operation-name',
  'graphql-client-name',
  'graphql-client-version',
];

export const Browsers = z
  .object({
    graphiql: env('GRAPHIQL', flag, {
      unset: 'on outside production',
      description: 'Serve GraphiQL to browsers at `/graphql`.',
    }),
    statusBoard: env('STATUS_BOARD', flag, {
      default: 'true',
      description:
        'Serve the live status board at `/status`: a small page that lists the configured pages (`pages`), grouped by tag and a screen at a time, and follows the `statusPageChanged` subscription of the pages on screen only.',
    }),
    introspection: env('INTROSPECTION', flag, {
      unset: 'on outside production',
      description: 'Answer introspection; when off, "did you mean" suggestions are off too.',
    }),
    cors: z.object({
      origins: env(
        'CORS_ORIGINS',
        list(
          z.url({
            protocol: /^https?$/,
            error: 'must be a comma-separated list of http(s) origins',
          }),
        ),
        {
          default: '',
          description:
            'Comma-separated origins allowed to call the gateway from a browser, with credentials. Empty: same-origin only.',
        },
      ),
      allowedHeaders: env(
        'CORS_ALLOWED_HEADERS',
        list(
          z
            .string()
            .toLowerCase()
            .regex(/^[!#$%&'*+.^_`|~0-9a-z-]+$/, {
              error: 'must be a comma-separated list of HTTP header names',
            }),
        ),
        {
          default: DEFAULT_CORS_ALLOWED_HEADERS.join(','),
          description:
            'Comma-separated request headers a cross-origin caller may send (answered to CORS preflights).',
        },
      ),
    }),
  })
  // No origin, no CORS: same-origin only.
  .transform(({ cors, ...browsers }) => ({
    ...browsers,
    cors: cors.origins.length > 0 ? cors : undefined,
  }))
  .meta({ title: 'Browsers' });
