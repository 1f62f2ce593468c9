/**
 * GraphQL Mesh composition of the status feed, for the Mesh contender of `npm run bench`:
 * `STATUS_BASE_URL=http://127.0.0.1:4010/status/api/v2 npx mesh-compose -c <this file> -o <out>`.
 * The bench runs it against its simulator, so the endpoint comes from the environment.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from '@graphql-mesh/compose-cli';
import { loadOpenAPISubgraph } from '@omnigraph/openapi';

const endpoint = process.env.STATUS_BASE_URL ?? 'http://127.0.0.1:4010/status/api/v2';

export const composeConfig = defineConfig({
  subgraphs: [
    {
      sourceHandler: loadOpenAPISubgraph('StatusFeed', {
        source: fileURLToPath(new URL('./status-feed.openapi.yaml', import.meta.url)),
        endpoint,
      }),
    },
  ],
});
