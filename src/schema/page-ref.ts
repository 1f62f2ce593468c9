import type { StatusSummary } from '../core/status/model.js';
import type { Snapshot } from '../upstreams/snapshot-cache.js';
import { builder } from './builder.js';
import type { GatewayContext } from './context.js';

/**
 * A status page in the graph: its slug alone. Its fields read its summary through the operation's
 * loaders, so that a page whose feed fails still answers with its slug (a list of pages keeps the
 * others), and every field reads the same snapshot.
 */
export interface PageSource {
  readonly slug: string;
}

export const PageRef = builder.objectRef<PageSource>('Page');

/** The summary of `page` as this operation reads it. */
export function summaryOf(
  page: PageSource,
  context: Pick<GatewayContext, 'statusPages'>,
): Promise<Snapshot<StatusSummary>> {
  return context.statusPages.of(page.slug).summary();
}
