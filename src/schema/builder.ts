import SchemaBuilder from '@pothos/core';
import DirectivePlugin from '@pothos/plugin-directives';
import FederationPlugin from '@pothos/plugin-federation';
import { DateTimeResolver, URLResolver } from 'graphql-scalars';
import type { GatewayContext } from './context.js';

export const builder = new SchemaBuilder<{
  Context: GatewayContext;
  DefaultFieldNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    URL: { Input: URL; Output: URL | string };
  };
}>({
  plugins: [DirectivePlugin, FederationPlugin],
  defaultFieldNullability: false,
});

builder.addScalarType('DateTime', DateTimeResolver, {
  description:
    "A point in time, as an RFC 3339 string in UTC, e.g. `2026-11-20T14:03:11.512Z`. Format it in the reader's time zone (or the page's `timeZone`).",
});
builder.addScalarType('URL', URLResolver, {
  description: 'An absolute URL, e.g. `https://status.example-ledger.com`.',
});

builder.queryType({
  description:
    'Read the status of the ledger network: start at `statusPage` for the whole page, or look up one component, incident or maintenance by id.',
});

builder.mutationType({
  description: "Act on the ledger network's developer services: verify a contract.",
});
