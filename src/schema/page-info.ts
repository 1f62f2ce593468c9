import { builder } from './builder.js';
import { configurationOnly } from './plugins/page-budget.js';

/** Where a page of a cursor connection is (Relay), for every connection of the graph. */
export interface PageInfo {
  readonly hasNextPage: boolean;
  readonly hasPreviousPage: boolean;
  readonly startCursor: string | null;
  readonly endCursor: string | null;
}

export const PageInfoRef = builder.objectRef<PageInfo>('PageInfo').implement({
  readsStatusSnapshots: true,
  readsPages: configurationOnly,
  description: 'Where a page of a connection is (Relay cursor connections).',
  fields: (t) => ({
    hasNextPage: t.exposeBoolean('hasNextPage', {
      description: 'Whether more items follow: ask again with `after: endCursor`.',
    }),
    hasPreviousPage: t.exposeBoolean('hasPreviousPage', {
      description: 'Whether items come before this page (it was asked for `after` a cursor).',
    }),
    startCursor: t.exposeString('startCursor', { nullable: true }),
    endCursor: t.exposeString('endCursor', {
      nullable: true,
      description: 'The cursor of the last item: pass it as `after` for the next page.',
    }),
  }),
});
