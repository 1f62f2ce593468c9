import type { ObjectRef } from '@pothos/core';
import { builder } from './builder.js';
import { configurationOnly, type ReadsPages } from './plugins/page-budget.js';

/*
 * Relay cursor connections: a slice of a list, each item with its cursor, where the slice is, and,
 * when the list is counted, how many it has in all. Every connection of the graph is made here.
 */

/** Where a slice of a connection is. */
export interface PageInfo {
  readonly hasNextPage: boolean;
  readonly hasPreviousPage: boolean;
  readonly startCursor: string | null;
  readonly endCursor: string | null;
}

const PageInfoRef = builder.objectRef<PageInfo>('PageInfo').implement({
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

/** An item of a slice, with its cursor. */
export interface Edge<Node> {
  readonly cursor: string;
  readonly node: Node;
}

/** A slice of a list: `totalCount` when the connection counts its list. */
export interface Connection<Node> {
  readonly edges: readonly Edge<Node>[];
  readonly pageInfo: PageInfo;
  readonly totalCount?: number;
}

export interface ConnectionOptions {
  /** The connection's description. */
  readonly description: string;
  /** The edge's description. */
  readonly edge: string;
  /** What passing an edge's cursor as `after` gets, e.g. "the pages after this one". */
  readonly after: string;
  /** The items, for `nodes`' description, e.g. "pages". */
  readonly items: string;
  /** Whether a node may be null (with an error beside it), and what says when. */
  readonly nullNode?: string;
  /** `totalCount`'s description, when the connection counts its list. */
  readonly totalCount?: string;
  /** What its types read: the response cache's declaration and the page budget's. */
  readonly readsStatusSnapshots?: boolean;
  readonly readsPages?: ReadsPages;
}

type Types = typeof builder.$inferSchemaTypes;

/** `<name>Connection` and its `<name>Edge`, over the nodes `nodeRef` makes. */
export function connectionOf<Node>(
  name: string,
  nodeRef: ObjectRef<Types, Node>,
  options: ConnectionOptions,
): ObjectRef<Types, Connection<Node | null>> {
  const { readsStatusSnapshots, readsPages, nullNode } = options;
  const declared = { readsStatusSnapshots, readsPages };
  const EdgeRef = builder.objectRef<Edge<Node | null>>(`${name}Edge`).implement({
    ...declared,
    description: options.edge,
    fields: (t) => ({
      cursor: t.exposeString('cursor', {
        description: `Opaque: pass it as \`after\` to get ${options.after}.`,
      }),
      node: t.field({
        type: nodeRef,
        nullable: nullNode !== undefined,
        ...(nullNode === undefined ? {} : { description: nullNode }),
        // Pothos cannot tell that a generic node is its own ref's shape.
        resolve: (edge) => edge.node as never,
      }),
    }),
  });
  return builder.objectRef<Connection<Node | null>>(`${name}Connection`).implement({
    ...declared,
    description: options.description,
    fields: (t) => ({
      edges: t.expose('edges', { type: [EdgeRef] }),
      nodes: t.field({
        type: [nodeRef],
        nullable: { list: false, items: nullNode !== undefined },
        description: `The ${options.items} of \`edges\`, for when the cursors are not needed${nullNode === undefined ? '' : ' (null as `node` is)'}.`,
        resolve: (connection) => connection.edges.map((edge) => edge.node) as never,
      }),
      ...(options.totalCount === undefined
        ? {}
        : {
            totalCount: t.int({
              description: options.totalCount,
              resolve: (connection) => connection.totalCount ?? connection.edges.length,
            }),
          }),
      pageInfo: t.expose('pageInfo', { type: PageInfoRef }),
    }),
  });
}
