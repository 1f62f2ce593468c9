import SchemaBuilder from '@pothos/core';
import DirectivePlugin from '@pothos/plugin-directives';
import FederationPlugin from '@pothos/plugin-federation';
import { GraphQLScalarType } from 'graphql';
import { DateTimeResolver, JSONResolver, LocalDateResolver, URLResolver } from 'graphql-scalars';
import type { GatewayContext } from './context.js';
import CacheabilityPlugin from './plugins/cacheability.js';
import FieldBudgetPlugin from './plugins/field-budget.js';
import PageBudgetPlugin from './plugins/page-budget.js';

export const builder = new SchemaBuilder<{
  Context: GatewayContext;
  DefaultFieldNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    LocalDate: { Input: string; Output: string };
    URL: { Input: URL; Output: URL | string };
    // Not `unknown`, which includes undefined: Pothos would make a required JSON input optional.
    JSON: { Input: NonNullable<unknown>; Output: unknown };
  };
}>({
  plugins: [
    DirectivePlugin,
    FederationPlugin,
    CacheabilityPlugin,
    FieldBudgetPlugin,
    PageBudgetPlugin,
  ],
  defaultFieldNullability: false,
});

builder.addScalarType('DateTime', DateTimeResolver, {
  description:
    "A point in time, as an RFC 3339 string in UTC, e.g. `2026-11-20T14:03:11.512Z`. Format it in the reader's time zone (or the page's `timeZone`).",
});
builder.addScalarType('LocalDate', LocalDateResolver, {
  description:
    'A calendar date without a time or a zone, as `YYYY-MM-DD`, e.g. `2023-07-11`: the same day wherever it is read.',
});
// A URL goes out as the upstream wrote it: graphql-scalars' serializer would normalize it, e.g.
// add a trailing slash to `https://status.example.com`.
const URLAsWritten = new GraphQLScalarType({
  ...URLResolver.toConfig(),
  serialize: (value) =>
    typeof value === 'string' && URL.canParse(value) ? value : URLResolver.serialize(value),
});
builder.addScalarType('URL', URLAsWritten, {
  description: 'An absolute URL, e.g. `https://status.example-ledger.com`.',
});

builder.addScalarType('JSON', JSONResolver, {
  description:
    'Any JSON value: an object, array, string, number, boolean or null, e.g. a standard JSON input. Send large ones as variables, not in the document.',
});

builder.queryType({
  description:
    'Read the status of the ledger network: start at `statusPage` for the whole page, or look up one component, incident or maintenance by id.',
});

builder.mutationType({
  description: "Act on the ledger network's developer services: verify a contract.",
});

builder.subscriptionType({
  description:
    'Follow the status page as it changes, over SSE or a graphql-ws WebSocket at `/graphql`. Changes are found by reading the feed while anyone subscribes (every `STATUS_POLL_INTERVAL_MS`) and comparing each fresh copy with the last: a feed outage or a stale copy is no change and sends nothing.',
});
